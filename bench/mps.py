"""The Metal backend beside PyTorch's MPS backend and NumPy, in one run on one Mac: prints times, asserts nothing.

Kernel-only times start and end with the data on the device (the op, then a synchronisation);
end-to-end times include the copy in and the copy back. Off macOS, or without a Metal GPU, it
says why and exits 0. Run: ``python bench/mps.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import opweave as ow


def best(fn, repeat: int = 10, number: int = 1) -> float:
    """Best time of ``number`` calls of ``fn``, in seconds per call, over ``repeat`` rounds (after a warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - start) / number)
    return min(times)


def softmax_np(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def torch_mps():
    """PyTorch with a usable MPS backend, or None (and why)."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed (pip install torch)"
    if not torch.backends.mps.is_available():
        return None, "torch.backends.mps.is_available() is False"
    return torch, None


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (for a smoke run)")
    args = parser.parse_args()
    if not ow.mps.is_available():
        print(f"the mps backend is not available: {ow.mps.unavailable_reason()}")
        return
    torch, why = torch_mps()
    if torch is None:
        print(f"PyTorch's MPS column is left out: {why}")
    scale = 16 if args.quick else 1
    rng = np.random.default_rng(0)
    rows = []

    def case(label, np_fn, fn, arrays, flops=None, dtype=np.float32):
        arrays = [a.astype(dtype) for a in arrays]
        dev = [ow.tensor(a).to("mps") for a in arrays]
        t_k = best(lambda: (fn(*dev), ow.mps.synchronize()))
        t_e = best(lambda: fn(*[ow.tensor(a).to("mps") for a in arrays]).numpy(force=True))
        t_np = best(lambda: np_fn(*arrays))
        t_pt = None
        if torch is not None:
            tdev = [torch.from_numpy(a).to("mps") for a in arrays]
            t_pt = best(lambda: (fn(*tdev), torch.mps.synchronize()))
        rows.append((label, t_k, t_e, t_np, t_pt, flops))

    n1, n16 = (1 << 20) // scale, (16 << 20) // scale
    a1, b1 = rng.random(n1), rng.random(n1)
    a16, b16 = rng.random(n16), rng.random(n16)
    case(f"add {n1} f32", np.add, lambda a, b: a + b, [a1, b1])
    case(f"add {n16} f32", np.add, lambda a, b: a + b, [a16, b16])
    case(f"sum {n16} f32", np.sum, lambda a: a.sum(), [a16])
    sm = rng.standard_normal((4096 // scale, 1024))
    case(f"softmax {sm.shape[0]}x1024", softmax_np, lambda x: x.softmax(1), [sm])
    m = 2048 // (4 if args.quick else 1)
    mat = rng.random((m, m))
    case(f"matmul {m}^2 f32", np.matmul, lambda a, b: a @ b, [mat, mat], flops=2 * m**3)
    case(f"matmul {m}^2 f16", np.matmul, lambda a, b: a @ b, [mat, mat], flops=2 * m**3, dtype=np.float16)

    header = f"{'case':<22}{'kernel ms':>11}{'end-to-end':>12}{'numpy ms':>10}{'torch mps':>11}"
    print(f"\n{header}{'/numpy':>8}{'/torch':>8}")
    for label, t_k, t_e, t_np, t_pt, flops in rows:
        pt = f"{t_pt * 1e3:>11.3f}" if t_pt else f"{'-':>11}"
        ratio = f"{t_k / t_pt:>8.2f}" if t_pt else f"{'-':>8}"
        print(f"{label:<22}{t_k * 1e3:>11.3f}{t_e * 1e3:>12.3f}{t_np * 1e3:>10.3f}{pt}{t_k / t_np:>8.2f}{ratio}")
        if flops:
            line = f"{'':<22}{flops / t_k / 1e9:>11.1f} GFLOP/s (mps)  {flops / t_np / 1e9:.1f} (numpy)"
            print(line + (f"  {flops / t_pt / 1e9:.1f} (torch)" if t_pt else ""))
    one = ow.ones(1, device="mps")
    queued = best(lambda: one + one, number=2000) * 1e6
    synced = best(lambda: (one + one, ow.mps.synchronize()), number=200) * 1e6
    print(f"\nper-call overhead, 1-element add: {queued:.1f} us encoded, {synced:.1f} us with synchronize")
    print(f"allocator: {ow.mps.memory_stats()}, driver: {ow.mps.driver_allocated_memory()} bytes")


if __name__ == "__main__":
    main()
