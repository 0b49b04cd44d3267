"""Cost of everyday ops on tensors that require grad: opweave with and without grad beside PyTorch.

A basket of elementwise, activation, reduction and matrix ops runs on float32 tensors of
64×64 (``small``: the per-call cost of recording a node dominates) and 512×512 (``medium``:
the kernels start to count). For each op and size it times

- ``fwd``: the op on inputs that require grad (records a node),
- ``fwd+bwd``: the op, a ``sum`` and ``backward`` (every gradient computed),
- ``nograd``: opweave's op on the same tensors detached (no node),

for opweave and PyTorch (if installed), the libraries taking turns round by round so a burst of
load falls on both alike; the best round of each is kept. Prints microseconds per call, the
ratio opweave/PyTorch for both timed columns and opweave's cost with grad over without.
Asserts nothing. Run: ``python bench/autograd_ops.py [--quick] [--small|--medium] [FILTER ...]``.
"""

from __future__ import annotations

import math
import sys
import timeit

import numpy as np
import opweave

# (row name, statement with ``L`` the library, ``F`` its functional module, ``a``/``b`` float32
# tensors of the size, ``r`` a row (broadcast), ``w`` a square weight, ``bias`` a vector)
BASKET = [
    ("a + b", "a + b"),
    ("a + r (broadcast)", "a + r"),
    ("L.add(a, b, alpha=2)", "L.add(a, b, alpha=2)"),
    ("a - b", "a - b"),
    ("a * b", "a * b"),
    ("a * 2.0", "a * 2.0"),
    ("a / b", "a / b"),
    ("a / 3", "a / 3"),
    ("1 - a (rsub)", "1 - a"),
    ("-a", "-a"),
    ("a ** 2", "a ** 2"),
    ("a.pow(b)", "p.pow(b)"),
    ("exp(a)", "L.exp(a)"),
    ("log(p)", "L.log(p)"),
    ("sqrt(p)", "L.sqrt(p)"),
    ("rsqrt(p)", "L.rsqrt(p)"),
    ("sin(a)", "L.sin(a)"),
    ("tanh(a)", "L.tanh(a)"),
    ("sigmoid(a)", "L.sigmoid(a)"),
    ("abs(a)", "L.abs(a)"),
    ("reciprocal(p)", "L.reciprocal(p)"),
    ("F.relu(a)", "F.relu(a)"),
    ("F.gelu(a)", "F.gelu(a)"),
    ("F.silu(a)", "F.silu(a)"),
    ("F.leaky_relu(a)", "F.leaky_relu(a, 0.1)"),
    ("F.softplus(a)", "F.softplus(a)"),
    ("F.elu(a)", "F.elu(a)"),
    ("a.clamp(-0.5, 0.5)", "a.clamp(-0.5, 0.5)"),
    ("where(mask, a, b)", "L.where(mask, a, b)"),
    ("a.sum()", "a.sum()"),
    ("a.sum(1)", "a.sum(1)"),
    ("a.mean()", "a.mean()"),
    ("a.amax(1)", "a.amax(1)"),
    ("a @ w", "a @ w"),
    ("F.linear(a, w, bias)", "F.linear(a, w, bias)"),
    ("L.addmm(bias, a, w)", "L.addmm(bias, a, w)"),
    ("F.softmax(a, 1)", "F.softmax(a, dim=1)"),
    ("F.log_softmax(a, 1)", "F.log_softmax(a, dim=1)"),
]

SIZES = {"small": 64, "medium": 512}


def namespace(lib, functional, n: int, requires_grad: bool) -> dict:
    """The tensors every statement uses (float32, n×n), built with ``lib`` (opweave or torch)."""
    rng = np.random.default_rng(0)
    arrays = {
        "a": rng.standard_normal((n, n)).astype(np.float32),
        "b": rng.standard_normal((n, n)).astype(np.float32) + 3.0,
        "p": rng.uniform(0.5, 2.0, (n, n)).astype(np.float32),
        "r": rng.standard_normal((n,)).astype(np.float32),
        "w": (rng.standard_normal((n, n)) / math.sqrt(n)).astype(np.float32),
        "bias": rng.standard_normal((n,)).astype(np.float32),
    }
    ns = {"L": lib, "F": functional}
    for name, value in arrays.items():
        ns[name] = lib.tensor(value, requires_grad=requires_grad)
    ns["mask"] = lib.tensor(arrays["a"] > 0)
    return ns


def interleaved(stmts: list, namespaces: list, number: int, repeat: int) -> list[float]:
    """Best per-call microseconds of ``stmts[i]`` in ``namespaces[i]``, the runs taking turns round by round."""
    timers = [timeit.Timer(s, globals=ns) for s, ns in zip(stmts, namespaces)]
    for timer in timers:
        timer.timeit(number=max(1, number // 5))  # warm up (first call of a signature, caches)
    best = [math.inf] * len(timers)
    for _ in range(repeat):
        for i, timer in enumerate(timers):
            best[i] = min(best[i], timer.timeit(number=number))
    return [t / number * 1e6 for t in best]


def main(argv: list[str]) -> None:
    """Measure and print the table."""
    quick = "--quick" in argv
    sizes = [s for s in SIZES if f"--{s}" in argv] or list(SIZES)
    filters = [a for a in argv if not a.startswith("--")]
    import opweave.nn.functional as owf

    opweave.set_num_threads(1) if hasattr(opweave, "set_num_threads") else None
    try:
        import torch
        import torch.nn.functional as tf

        torch.set_num_threads(1)
    except ImportError:
        print("PyTorch is not installed: the PyTorch columns are left out (pip install torch)")
        torch = tf = None
    for size in sizes:
        n = SIZES[size]
        # small tensors: many short rounds (a scheduler slice cuts few of them); medium: fewer calls
        number, repeat = (50, 30) if n <= 64 else (5, 12)
        if quick:
            repeat = max(3, repeat // 3)
        ow_g = namespace(opweave, owf, n, True)
        ow_n = namespace(opweave, owf, n, False)
        pt_g = namespace(torch, tf, n, True) if torch is not None else None
        print(f"\n{size} ({n}×{n} float32), µs per call; bwd = fwd, sum() and backward()")
        head = f"{'op':<24}{'ow nograd':>10}{'ow fwd':>9}{'pt fwd':>9}{'ow/pt':>7}{'grad/no':>8}"
        head += f"{'ow f+b':>9}{'pt f+b':>9}{'ow/pt':>7}"
        print(head)
        fwd_ratios, bwd_ratios = [], []
        for name, stmt in BASKET:
            if filters and not any(f in name for f in filters):
                continue
            bwd = f"({stmt}).sum().backward()"
            stmts = [stmt, stmt, bwd]
            spaces = [ow_n, ow_g, ow_g]
            if pt_g is not None:
                stmts += [stmt, bwd]
                spaces += [pt_g, pt_g]
            times = interleaved(stmts, spaces, number, repeat)
            line = f"{name:<24}{times[0]:>10.1f}{times[1]:>9.1f}"
            if pt_g is not None:
                fwd_ratios.append(times[1] / times[3])
                bwd_ratios.append(times[2] / times[4])
                line += f"{times[3]:>9.1f}{times[1] / times[3]:>6.2f}x{times[1] / times[0]:>7.1f}x"
                line += f"{times[2]:>9.1f}{times[4]:>9.1f}{times[2] / times[4]:>6.2f}x"
            else:
                line += f"{'':>9}{'':>7}{times[1] / times[0]:>7.1f}x{times[2]:>9.1f}"
            print(line, flush=True)
        if fwd_ratios:

            def geo(rs):
                return math.exp(sum(math.log(r) for r in rs) / len(rs))

            print(
                f"{len(fwd_ratios)} ops: geometric mean opweave/PyTorch {geo(fwd_ratios):.2f}x forward with grad, "
                f"{geo(bwd_ratios):.2f}x forward+backward"
            )


if __name__ == "__main__":
    main(sys.argv[1:])
