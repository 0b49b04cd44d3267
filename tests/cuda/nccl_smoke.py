"""A world of one process on one GPU: every collective of ``opweave.distributed`` through the NCCL engine.

Run by ``tests/cuda/test_nccl.py`` (in a child process, since MPI starts here) on a machine with a CUDA
device; prints ``OK`` and the NCCL version, or raises. A world of one is all a single GPU allows: each
collective's result equals its input (AVG too), so this checks that CUDA tensors reach NCCL through the
dispatcher (not host staging), on the current stream, with every dtype, contiguous or not, and that
``async_op`` works are completed by their events.
"""

from __future__ import annotations

import warnings

import numpy as np
import opweave as ow
import opweave.distributed as dist
from opweave.distributed import ReduceOp


def as_numpy(t):
    return t.cpu().numpy()


def main() -> None:
    assert dist.is_nccl_available(), "the NCCL engine is not registered"
    dist.init_process_group("nccl")
    assert dist.get_backend() == "nccl" and dist.get_world_size() == 1 and dist.get_rank() == 0
    cuda = ow.device("cuda", 0)
    why = str(ow.dispatch.explain(ow.ops.c10d.all_reduce_.default, ow.ones(2, device=cuda), "sum", "0"))
    assert "Dense×cuda: kernel" in why, why

    rng = np.random.default_rng(0)
    for dtype in (ow.float32, ow.float16, ow.bfloat16, ow.float64, ow.int64, ow.int32, ow.uint8, ow.complex64):
        base = ow.tensor(rng.standard_normal((4, 6)) * 10).to(dtype)
        for transposed in (False, True):
            x = (base.T.contiguous().T if transposed else base).to(cuda)
            want = as_numpy(base)
            ops = [ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT]
            if dtype.is_complex:
                ops = [ReduceOp.SUM, ReduceOp.AVG]
            elif dtype.is_floating_point:
                ops.append(ReduceOp.AVG)
            for op in ops:
                t = x.clone() if not transposed else x.T.contiguous().T
                dist.all_reduce(t, op=op)
                np.testing.assert_array_equal(as_numpy(t), want, err_msg=f"all_reduce {op} {dtype}")
            t = x.clone()
            dist.broadcast(t, src=0)
            np.testing.assert_array_equal(as_numpy(t), want)
            out = ow.empty((4, 6), dtype=dtype, device=cuda)
            dist.all_gather_into_tensor(out, x)
            np.testing.assert_array_equal(as_numpy(out), want)
            parts = [ow.empty((4, 6), dtype=dtype, device=cuda)]
            dist.all_gather(parts, x)
            np.testing.assert_array_equal(as_numpy(parts[0]), want)
            out = ow.empty((4, 6), dtype=dtype, device=cuda)
            dist.reduce_scatter_tensor(out, x, op=ReduceOp.SUM)
            np.testing.assert_array_equal(as_numpy(out), want)
            out = ow.empty((4, 6), dtype=dtype, device=cuda)
            dist.all_to_all_single(out, x)
            np.testing.assert_array_equal(as_numpy(out), want)
            t = x.clone()
            dist.reduce(t, dst=0, op=ReduceOp.SUM)
            np.testing.assert_array_equal(as_numpy(t), want)
            gathered = [ow.empty((4, 6), dtype=dtype, device=cuda)]
            dist.gather(x, gather_list=gathered, dst=0)
            np.testing.assert_array_equal(as_numpy(gathered[0]), want)
            out = ow.empty((4, 6), dtype=dtype, device=cuda)
            dist.scatter(out, scatter_list=[x], src=0)
            np.testing.assert_array_equal(as_numpy(out), want)

    # bool as logic; bitwise operations NCCL lacks go over MPI on host copies, with a warning
    flags = ow.tensor([True, False, True], device=cuda)
    dist.all_reduce(flags, op=ReduceOp.SUM)
    np.testing.assert_array_equal(as_numpy(flags), [True, False, True])
    bits = ow.tensor([5, 6], dtype=ow.int32, device=cuda)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist.all_reduce(bits, op=ReduceOp.BXOR)
    assert any("NCCL cannot reduce int32" in str(w.message) for w in caught), [str(w.message) for w in caught]
    np.testing.assert_array_equal(as_numpy(bits), [5, 6])

    # async_op on a side stream: the Work completes with the stream's event
    side = ow.cuda.Stream()
    with ow.cuda.stream(side):
        big = ow.ones(1 << 22, device=cuda)
        work = dist.all_reduce(big, op=ReduceOp.SUM, async_op=True)
        work.wait()
        assert work.is_completed()
    side.synchronize()
    assert float(big.sum().item()) == float(1 << 22)
    work = dist.barrier(async_op=True)
    work.wait()
    dist.barrier()

    # empty tensors and 0-dim tensors
    empty = ow.empty(0, device=cuda)
    dist.all_reduce(empty)
    scalar = ow.tensor(3.5, device=cuda)
    dist.all_reduce(scalar, op=ReduceOp.AVG)
    assert float(scalar.item()) == 3.5

    from opweave_cuda import nccl

    dist.destroy_process_group()
    print("OK NCCL", ".".join(map(str, nccl.version())))


if __name__ == "__main__":
    main()
