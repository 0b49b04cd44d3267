"""Per-call overhead of opweave on tiny tensors: a basket of everyday ops beside PyTorch and NumPy.

Every op runs on 16-element tensors (float32 unless the row says otherwise), so the
figures measure the cost of one call (binding, dispatch, allocation), not arithmetic.
PyTorch (if installed) and NumPy (where the op has a direct NumPy spelling) run in the
same process; opweave and PyTorch take turns (rounds of 200 calls each, the best round
kept), so the ratios compare like with like on a busy machine. Prints microseconds per
call, the ratio to PyTorch, the geometric mean and the largest ratio; asserts nothing.
Run: ``python bench/dispatch.py [--quick] [FILTER ...]``.
"""

from __future__ import annotations

import math
import sys
import timeit

import numpy as np
import opweave

# (row name, opweave/PyTorch statement with ``L`` the library, NumPy statement or None)
BASKET = [
    ("a + b", "a + b", "an + bn"),
    ("a * 2.0", "a * 2.0", "an * np.float32(2.0)"),
    ("a + 1", "a + 1", "an + np.float32(1)"),
    ("a + i (f32 + i64)", "a + i", "an + iN"),
    ("a - b * c", "a - b * a", "an - bn * an"),
    ("L.add(a, b, alpha=2)", "L.add(a, b, alpha=2)", None),
    ("a / 3", "a / 3", "an / np.float32(3)"),
    ("exp(a)", "L.exp(a)", "np.exp(an)"),
    ("a.sqrt()", "a.sqrt()", "np.sqrt(an)"),
    ("a.abs()", "a.abs()", "np.abs(an)"),
    ("F.relu(a)", "F.relu(a)", "np.maximum(an, 0)"),
    ("F.gelu(a)", "F.gelu(a)", None),
    ("sigmoid(a)", "L.sigmoid(a)", None),
    ("tanh(a)", "L.tanh(a)", "np.tanh(an)"),
    ("F.softmax(m, 1)", "F.softmax(m, dim=1)", None),
    ("a.view(2, 8)", "a.view(2, 8)", "an.reshape(2, 8)"),
    ("a.reshape(4, 4)", "a.reshape(4, 4)", "an.reshape(4, 4)"),
    ("m.t()", "m.t()", "mn.T"),
    ("m.transpose(0, 1)", "m.transpose(0, 1)", "mn.swapaxes(0, 1)"),
    ("m.permute(1, 0)", "m.permute(1, 0)", "mn.transpose(1, 0)"),
    ("a.unsqueeze(0)", "a.unsqueeze(0)", "an[None]"),
    ("a.expand(2, 16)", "a.expand(2, 16)", "np.broadcast_to(an, (2, 16))"),
    ("m[0]", "m[0]", "mn[0]"),
    ("a[2:10]", "a[2:10]", "an[2:10]"),
    ("a[idx]", "a[idx]", "an[idxn]"),
    ("a[mask]", "a[mask]", "an[maskn]"),
    ("a.sum()", "a.sum()", "an.sum()"),
    ("m.mean(0)", "m.mean(0)", "mn.mean(0)"),
    ("a.max()", "a.max()", "an.max()"),
    ("m.argmax(1)", "m.argmax(1)", "mn.argmax(1)"),
    ("m @ m", "m @ m", "mn @ mn"),
    ("F.linear(m, m)", "F.linear(m, m)", None),
    ("cat([a, b])", "L.cat([a, b])", "np.concatenate([an, bn])"),
    ("stack([a, b])", "L.stack([a, b])", "np.stack([an, bn])"),
    ("where(mask, a, b)", "L.where(mask, a, b)", "np.where(maskn, an, bn)"),
    ("a > 0.5", "a > 0.5", "an > 0.5"),
    ("a == b", "a == b", "an == bn"),
    ("L.zeros(4, 4)", "L.zeros(4, 4)", "np.zeros((4, 4), np.float32)"),
    ("L.ones_like(a)", "L.ones_like(a)", "np.ones_like(an)"),
    ("L.arange(16)", "L.arange(16)", "np.arange(16)"),
    ("a.clone()", "a.clone()", "an.copy()"),
    ("a.to(float64)", "a.to(L.float64)", "an.astype(np.float64)"),
    ("a.add_(1)", "a.add_(1)", None),
    ("L.add(a, b, out=o)", "L.add(a, b, out=o)", "np.add(an, bn, out=on)"),
    ("F.mse_loss(a, b)", "F.mse_loss(a, b)", None),
    ("a.clamp(0, 1)", "a.clamp(0, 1)", "np.clip(an, 0, 1)"),
]


def per_call(stmt: str, namespace: dict, number: int, repeat: int) -> float:
    """Best per-call time in microseconds over ``repeat`` runs of ``number`` calls."""
    return interleaved(stmt, [namespace], number, repeat)[0]


def interleaved(stmt: str, namespaces: list, number: int, repeat: int) -> list[float]:
    """Best per-call time in microseconds of ``stmt`` in each namespace, the runs taking turns.

    Each of ``repeat`` rounds runs ``number`` calls in every namespace in turn, so a burst of load
    from other processes falls on all of them alike; the best round of each is kept."""
    timers = [timeit.Timer(stmt, globals=ns) for ns in namespaces]
    for timer in timers:
        timer.timeit(number=max(1, number // 10))  # warm up (first call of a signature)
    best = [math.inf] * len(timers)
    for _ in range(repeat):
        for i, timer in enumerate(timers):
            best[i] = min(best[i], timer.timeit(number=number))
    return [t / number * 1e6 for t in best]


def namespace(lib, functional) -> dict:
    """The tensors every statement uses, built with ``lib`` (opweave or torch)."""
    data = np.linspace(-1.0, 1.0, 16, dtype=np.float32)
    a = lib.tensor(data)
    return {
        "L": lib,
        "F": functional,
        "a": a,
        "b": lib.tensor(data[::-1].copy()),
        "m": lib.tensor(data.reshape(4, 4)),
        "i": lib.tensor(np.arange(16, dtype=np.int64)),
        "idx": lib.tensor(np.array([0, 3, 5, 15], dtype=np.int64)),
        "mask": lib.tensor(data > 0),
        "o": lib.empty(16),
    }


def numpy_namespace() -> dict:
    """The NumPy arrays of the NumPy statements."""
    data = np.linspace(-1.0, 1.0, 16, dtype=np.float32)
    return {
        "np": np,
        "an": data.copy(),
        "bn": data[::-1].copy(),
        "mn": data.reshape(4, 4).copy(),
        "iN": np.arange(16, dtype=np.int64),
        "idxn": np.array([0, 3, 5, 15], dtype=np.int64),
        "maskn": data > 0,
        "on": np.empty(16, np.float32),
    }


def main(argv: list[str]) -> None:
    """Measure and print the table."""
    quick = "--quick" in argv
    filters = [a for a in argv if not a.startswith("--")]
    # short rounds: on a shared machine a round of a few ms is often cut by a 4 ms scheduler slice,
    # which adds 4 ms / number to its per-call figure; many rounds of 0.2-2 ms leave some uncut
    number, repeat = (200, 40) if quick else (200, 200)
    import opweave.nn.functional as owf

    ow_ns = namespace(opweave, owf)
    np_ns = numpy_namespace()
    try:
        import torch
        import torch.nn.functional as tf

        torch.set_num_threads(1)
        pt_ns = namespace(torch, tf)
    except ImportError:
        print("PyTorch is not installed: ratios to PyTorch are left out (pip install torch)")
        pt_ns = None
    print(f"{'op':<22}{'opweave µs':>11}{'torch µs':>10}{'ow/torch':>10}{'numpy µs':>10}")
    ratios = []
    for name, stmt, np_stmt in BASKET:
        if filters and not any(f in name for f in filters):
            continue
        if pt_ns is not None:
            t_ow, t_pt = interleaved(stmt, [ow_ns, pt_ns], number, repeat)
        else:
            t_ow = per_call(stmt, ow_ns, number, repeat)
        line = f"{name:<22}{t_ow:>11.2f}"
        if pt_ns is not None:
            ratios.append((t_ow / t_pt, name))
            line += f"{t_pt:>10.2f}{t_ow / t_pt:>9.2f}x"
        else:
            line += f"{'':>10}{'':>10}"
        if np_stmt is not None:
            line += f"{per_call(np_stmt, np_ns, number, repeat):>10.2f}"
        print(line, flush=True)
    if ratios:
        geomean = math.exp(sum(math.log(r) for r, _ in ratios) / len(ratios))
        worst, worst_name = max(ratios)
        print(f"\n{len(ratios)} ops: geometric mean {geomean:.2f}x PyTorch, max {worst:.2f}x ({worst_name})")


if __name__ == "__main__":
    main(sys.argv[1:])
