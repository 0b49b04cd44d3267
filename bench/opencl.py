"""The OpenCL backend next to NumPy, in one run on one machine: prints times, asserts nothing.

Kernel-only times start and end with the data on the device (the op, then a
queue ``finish``); end-to-end times include the copy in and the copy back.
Per-call overhead is the time of one 1-element ``add`` (dispatch + argument
packing + enqueue), with one ``finish`` after many calls, and with a ``finish``
after each call. Run: ``python bench/opencl.py [--quick]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import opweave as ow


def best(fn, repeat: int = 5, number: int = 1) -> float:
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


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (for a smoke run)")
    args = parser.parse_args()
    import opweave_opencl as ocl

    if not ocl.is_available():
        print(f"OpenCL is not available: {ocl.unavailable_reason()}")
        return
    from opweave_opencl import _runtime

    rt = _runtime.runtime(0)
    print(f"device: {rt.device.name} ({rt.device.platform.name}), {rt.device.max_compute_units} compute units")
    sync = ocl.synchronize
    scale = 16 if args.quick else 1
    rng = np.random.default_rng(0)
    rows = []

    def case(label, np_fn, ow_fn, arrays, flops=None):
        dev = [ow.tensor(a).to("opencl") for a in arrays]

        def kernel_only():
            ow_fn(*dev)
            sync()

        def end_to_end():
            ow_fn(*[ow.tensor(a).to("opencl") for a in arrays]).numpy(force=True)

        t_np = best(lambda: np_fn(*arrays), repeat=20)
        t_k, t_e = best(kernel_only, repeat=20), best(end_to_end)
        rows.append((label, t_k, t_e, t_np, flops))

    n1, n16 = (1 << 20) // scale, (16 << 20) // scale
    a1, b1 = rng.random(n1, np.float32), rng.random(n1, np.float32)
    a16, b16 = rng.random(n16, np.float32), rng.random(n16, np.float32)
    case(f"add {n1} f32", np.add, lambda a, b: a + b, [a1, b1])
    case(f"add {n16} f32", np.add, lambda a, b: a + b, [a16, b16])
    case(f"sum {n16} f32", np.sum, lambda a: a.sum(), [a16])
    sm = rng.standard_normal((4096 // scale, 1024), np.float32)
    case(f"softmax {sm.shape[0]}x1024", softmax_np, lambda x: ow.softmax(x, 1), [sm])
    m = 1024 // (4 if args.quick else 1)
    mat = rng.random((m, m), np.float32)
    case(f"matmul {m}^2 f32", np.matmul, lambda a, b: a @ b, [mat, mat], flops=2 * m**3)

    print(f"\n{'case':<22}{'kernel ms':>11}{'end-to-end ms':>15}{'numpy ms':>10}{'kernel/numpy':>14}")
    for label, t_k, t_e, t_np, flops in rows:
        print(f"{label:<22}{t_k * 1e3:>11.3f}{t_e * 1e3:>15.3f}{t_np * 1e3:>10.3f}{t_k / t_np:>14.2f}")
        if flops:
            print(f"{'':<22}{flops / t_k / 1e9:>11.2f} GFLOP/s (opencl)  {flops / t_np / 1e9:.2f} GFLOP/s (numpy)")

    one_a, one_b = ow.ones(1, device="opencl"), ow.ones(1, device="opencl")
    np_a, np_b = np.ones(1, np.float32), np.ones(1, np.float32)
    queued = best(lambda: one_a + one_b, number=2000) * 1e6
    synced = best(lambda: (one_a + one_b, sync()), number=500) * 1e6
    raw = best(lambda: np.add(np_a, np_b), number=20000) * 1e6
    print(f"\nper-call overhead, 1-element add: {queued:.1f} us queued, {synced:.1f} us with finish "
          f"(numpy {raw:.2f} us)")  # fmt: skip
    print(f"allocator: {ocl.memory_stats()}")


if __name__ == "__main__":
    main()
