"""int8 linear layers on the CPU: the x86 engine (oneDNN), the reference kernels, and float32 matmul.

Two shapes: a square ``M = N = K = 1024`` layer and a batch-1 ``1 x 4096 x 4096`` layer
(``quantized::linear``: quint8 activations, per-channel qint8 weights, float bias, requantized
quint8 output). Each is timed through the x86 engine and through the reference kernels
(``opweave.backends.quantized.engine = "reference"``), next to a float32 ``matmul`` of the same
shape on the CPU backend and in NumPy. The row ``oneDNN primitive alone`` runs the x86 engine's
primitive on buffers bound once, so the plugin's per-call work is the difference between it and
the x86 row; the implementation oneDNN chose is printed per shape (``brg:avx512_core_amx`` on AMX,
``brg:avx512_core_vnni`` on AVX512-VNNI: the ceiling of int8 over float32 differs by ISA, see
docs/x86quant.md). Times are the best of several runs (the median is
printed too: on a shared machine the best is the figure that reflects the code); ``TOPS`` counts
``2 * M * N * K`` operations. Prints a table; asserts nothing. Run: ``python bench/quant.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import opweave as ow
from opweave.ops import quantized

SHAPES = ((1024, 1024, 1024), (1, 4096, 4096))


def timed(fn, repeat: int, budget: float = 3.0, warmup: float = 0.5) -> tuple[float, float]:
    """``(best, median)`` seconds of ``fn()`` over up to ``repeat`` runs (fewer when a run is slow).

    Runs ``fn`` for ``warmup`` seconds first (at least once): the first calls of a oneDNN primitive and the
    AMX units' power-up are slower than the steady state, and a pause first lets the thread pools of the
    previous case (OpenBLAS spins its threads after a call) go idle.
    """
    return timed_together({"": fn}, repeat, budget, warmup)[""]


def timed_together(fns: dict, repeat: int, budget: float = 3.0, warmup: float = 0.5) -> dict:
    """``{name: (best, median)}`` seconds, the functions' runs interleaved round by round.

    Interleaving lets cases that are compared with each other (the plugin's call and its primitive
    alone) see the same state of a shared machine. Warm-up and pause as :func:`timed` says.
    """
    time.sleep(0.2)
    start = time.perf_counter()
    while True:
        for fn in fns.values():
            fn()
        if time.perf_counter() - start >= warmup:
            break
    times = {name: [] for name in fns}
    start = time.perf_counter()
    for done in range(repeat):
        if done >= 3 and time.perf_counter() - start >= budget:
            break
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return {name: (min(ts), statistics.median(ts)) for name, ts in times.items()}


def layer(m: int, k: int, n: int, rng):
    """A quantized linear layer's inputs: quint8 ``X [m, k]``, the packed per-channel qint8 weight, output qparams."""
    x = rng.standard_normal((m, k)).astype(np.float32)
    w = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
    scales = np.abs(w).max(axis=1) / 127
    qx = ow.quantize_per_tensor(ow.tensor(x), float(np.abs(x).max() / 127), 128, ow.quint8)
    qw = ow.quantize_per_channel(
        ow.tensor(w), ow.tensor(scales.astype(np.float64)), ow.zeros(n, dtype=ow.int64), 0, ow.qint8
    )
    packed = quantized.linear_prepack(qw, ow.tensor(rng.standard_normal(n).astype(np.float32)))
    return qx, packed, x, w


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=100, help="timed runs per case (best and median printed)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    flags = ow.backends.quantized
    print(f"quantized engines: {flags.supported_engines}; default {flags.engine!r}")
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"cpus {os.cpu_count()}, OMP_NUM_THREADS {threads}, load average {load} (best times are the fair figure)")
    if "x86" in flags.supported_engines:
        import opweave_x86quant

        print(f"x86 engine: {opweave_x86quant.describe()}")
    else:
        print(f"x86 engine unavailable: {flags.status().get('x86', (False, 'plugin not installed'))[1]}")
    print(
        f"{'shape M x K x N':<20}{'path':<26}{'best ms':>10}{'median ms':>11}{'TOPS':>8}{'vs f32':>9}{'vs numpy':>10}"
    )
    for m, k, n in SHAPES:
        rows = measure(m, k, n, rng, args.repeat)
        f32, numpy_f32 = rows["float32 matmul (cpu)"][0], rows["float32 numpy"][0]
        for name, (best, median) in rows.items():
            label = f"{m} x {k} x {n}"
            print(
                f"{label:<20}{name:<26}{best * 1e3:>10.3f}{median * 1e3:>11.3f}{2.0 * m * n * k / best / 1e12:>8.3f}"
                f"{f32 / best:>8.2f}x{numpy_f32 / best:>9.2f}x"
            )


def measure(m: int, k: int, n: int, rng, repeat: int) -> dict:
    """``{path: (best, median) seconds}`` for one shape: float32 matmul (opweave, NumPy), int8 linear per engine."""
    flags = ow.backends.quantized
    qx, packed, x, w = layer(m, k, n, rng)
    wt = np.ascontiguousarray(w.T)
    a, b = ow.tensor(x), ow.tensor(wt)
    rows = {}
    default = flags.engine
    for engine in flags.supported_engines[::-1]:
        flags.engine = engine
        cases = {f"int8 linear ({engine})": lambda: quantized.linear(qx, packed, 0.05, 64)}
        if engine == "x86":
            import opweave_x86quant

            cases["oneDNN primitive alone"], impl = opweave_x86quant.linear_primitive(qx, packed, 0.05, 64)
            print(f"{m} x {k} x {n}: oneDNN runs {impl}")
        rows.update(timed_together(cases, repeat if engine != "reference" else max(3, repeat // 5)))
    flags.engine = default
    rows["float32 matmul (cpu)"] = timed(lambda: ow.matmul(a, b), repeat)
    rows["float32 numpy"] = timed(lambda: x @ wt, repeat)
    return rows


if __name__ == "__main__":
    main()
