"""Where the CPU backend's compiled C kernels beat the kernels they replace: the ``auto`` thresholds.

For each op with a C kernel, times the call on ``OPWEAVE_CPU_KERNELS=onednn`` (NumPy, or oneDNN
where it has the op) and on ``c`` over float32 tensors of 2^10 to 2^22 elements (rows of 256),
prints µs per call and the ratio, and the least size from which C wins at every larger size (the
value for ``AUTO_MIN`` in ``plugins/cpu/kernels/_c_path.py``). Asserts nothing.
Run: ``python bench/cpu_kernels.py [op ...]`` (``--repeat N``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import opweave as ow

F = ow.nn.functional

OPS = {
    "prims::exp": lambda x: ow.exp(x),
    "prims::expm1": lambda x: ow.expm1(x),
    "prims::log": lambda x: ow.log(x),
    "prims::log1p": lambda x: ow.log1p(x),
    "prims::tanh": lambda x: ow.tanh(x),
    "prims::sigmoid": lambda x: ow.sigmoid(x),
    "prims::erf": lambda x: ow.erf(x),
    "prims::sqrt": lambda x: ow.sqrt(x),
    "prims::add": lambda x: x + x,
    "prims::mul": lambda x: x * 2.0,
    "prims::sum": lambda x: x.sum(-1),
    "prims::amax": lambda x: x.amax(-1),
    "prims::var": lambda x: x.var(-1),
    "softmax": lambda x: F.softmax(x, -1),
    "log_softmax": lambda x: F.log_softmax(x, -1),
    "layer_norm": lambda x: F.layer_norm(x, [x.shape[-1]]),
    "rms_norm": lambda x: F.rms_norm(x, [x.shape[-1]]),
    "cross_entropy_loss": lambda x: F.cross_entropy(x, ow.zeros(x.shape[0], dtype=ow.int64)),
    "gelu": lambda x: F.gelu(x),
    "silu": lambda x: F.silu(x),
}
SIZES = tuple(1 << k for k in range(10, 23, 2))


def best(fn, repeat: int) -> float:
    """Best wall time of ``fn()`` in µs over ``repeat`` calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e6


def main(argv=None) -> None:
    """Measure and print one block per op."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("ops", nargs="*", help="op names (default: all)")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'op':<20}" + "".join(f"{n:>16}" for n in SIZES) + "   C from")
    for name in args.ops or OPS:
        fn = OPS[name]
        cells, wins = [], []
        for n in SIZES:
            x = ow.tensor(np.abs(rng.standard_normal((n // 256, 256))).astype(np.float32) + 0.5)
            t = {}
            for path in ("onednn", "c"):
                ow.cpu.set_kernel_path(path)
                t[path] = best(lambda fn=fn, x=x: fn(x), args.repeat)
            ow.cpu.set_kernel_path(None)
            wins.append(t["c"] < t["onednn"])
            cells.append(f"{t['onednn']:.0f}/{t['c']:.0f}")
        start = next((SIZES[i] for i in range(len(SIZES)) if all(wins[i:])), None)
        print(f"{name:<20}" + "".join(f"{c:>16}" for c in cells) + f"   {start if start else 'never'}", flush=True)


if __name__ == "__main__":
    main()
