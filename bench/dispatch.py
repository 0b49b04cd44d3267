"""Per-call overhead of opweave's dispatcher on tiny float32 tensors, next to NumPy (and PyTorch if installed).

Prints times; asserts nothing. Run: ``python bench/dispatch.py``.
"""

from __future__ import annotations

import timeit

import numpy as np
import opweave


def per_call(stmt, namespace, number=20000, repeat=7) -> float:
    """Best per-call time in microseconds over ``repeat`` runs of ``number`` calls."""
    timer = timeit.Timer(stmt, globals=namespace)
    return min(timer.repeat(repeat=repeat, number=number)) / number * 1e6


def main() -> None:
    """Measure and print the table."""
    a_np = np.ones((4, 4), np.float32)
    b_np = np.ones((4, 4), np.float32)
    cases = {
        "a + b": ("a + b", "a + b"),
        "add(a, b)": ("ow.add(a, b)", "np.add(a, b)"),
        "a.sum()": ("a.sum()", "a.sum()"),
        "a[0]": ("a[0]", "a[0]"),
        "a @ b": ("a @ b", "a @ b"),
    }
    ow_ns = {"ow": opweave, "a": opweave.tensor(a_np), "b": opweave.tensor(b_np)}
    np_ns = {"np": np, "a": a_np, "b": b_np}
    try:
        import torch

        torch_ns = {"torch": torch, "a": torch.ones(4, 4), "b": torch.ones(4, 4)}
    except ImportError:
        torch_ns = None
    header = f"{'call':<12}{'opweave us':>12}{'numpy us':>10}{'ratio':>8}"
    if torch_ns:
        header += f"{'torch us':>10}{'ow/torch':>10}"
    print(header)
    for name, (ow_stmt, np_stmt) in cases.items():
        t_ow = per_call(ow_stmt, ow_ns)
        t_np = per_call(np_stmt, np_ns)
        line = f"{name:<12}{t_ow:>12.2f}{t_np:>10.2f}{t_ow / t_np:>7.1f}x"
        if torch_ns:
            t_pt = per_call(ow_stmt.replace("ow.", "torch."), torch_ns)
            line += f"{t_pt:>10.2f}{t_ow / t_pt:>9.1f}x"
        print(line)


if __name__ == "__main__":
    main()
