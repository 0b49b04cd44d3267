"""all_reduce bandwidth on 4 ranks: opweave.distributed next to mpi4py's own Allreduce and PyTorch's gloo.

Run: ``python bench/distributed.py [-n 4]``: it launches itself on the ranks with
``opweave run``. Float32 sums from 4 KB to 64 MB; for each size and method the best
of several rounds (interleaved, so the three see the same machine load) of a loop of
all_reduces between barriers, timed on rank 0. Bandwidth is the algorithm bandwidth
(bytes of the tensor / time per all_reduce); the ratio columns are the median over
rounds of mpi4py's time over the method's in the same round, robust to a loaded machine.
Prints figures; asserts nothing.
PyTorch is optional (``pip install torch``): without it the gloo column is left out.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial

import numpy as np

SIZES = [4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
ROUNDS = 7


def _iterations(nbytes: int) -> int:
    return max(3, min(200, (32 << 20) // nbytes))


def _time(fn, iters: int, barrier) -> float:
    """Seconds per call of ``fn`` on this rank, between barriers."""
    barrier()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    barrier()
    return (time.perf_counter() - start) / iters


def job() -> None:
    """What each rank runs."""
    import opweave as ow
    import opweave.distributed as dist
    from mpi4py import MPI

    dist.init_process_group("mpi")
    comm = MPI.COMM_WORLD.Dup()
    rank, size = comm.Get_rank(), comm.Get_size()
    try:
        import torch
        import torch.distributed as tdist

        tdist.init_process_group(
            "gloo",
            init_method=f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
            rank=rank,
            world_size=size,
        )
    except ImportError:
        torch = tdist = None
    if rank == 0:
        print(f"all_reduce (sum) of float32 on {size} ranks, best of {ROUNDS} rounds; bandwidth = bytes / time")
        print("GB/s: the best round; ratios: the median over rounds of mpi4py's time / the method's, same round")
        header = f"{'size':>8} {'mpi4py GB/s':>12} {'opweave GB/s':>13} {'ow/mpi4py':>10}"
        header += f" {'gloo GB/s':>10} {'gloo/mpi4py':>12}" if tdist else "   (PyTorch not installed: no gloo column)"
        print(header, flush=True)
    for nbytes in SIZES:
        n = nbytes // 4
        iters = _iterations(nbytes)
        calls = {"mpi4py": partial(comm.Allreduce, MPI.IN_PLACE, np.ones(n, np.float32))}
        calls["opweave"] = partial(dist.all_reduce, ow.ones(n))
        if tdist:
            calls["gloo"] = partial(tdist.all_reduce, torch.ones(n))
        best = dict.fromkeys(calls, float("inf"))
        paired = {name: [] for name in calls}  # per round: mpi4py's time / this method's (same machine load)
        for _ in range(ROUNDS):
            times = {name: _time(fn, iters, comm.Barrier) for name, fn in calls.items()}
            for name, t in times.items():
                best[name] = min(best[name], t)
                paired[name].append(times["mpi4py"] / t)
        if rank == 0:
            bw = {k: nbytes / v / 1e9 for k, v in best.items()}
            label = f"{nbytes >> 20} MB" if nbytes >= 1 << 20 else f"{nbytes >> 10} KB"
            ratio = float(np.median(paired["opweave"]))
            line = f"{label:>8} {bw['mpi4py']:>12.3f} {bw['opweave']:>13.3f} {ratio:>10.0%}"
            if tdist:
                line += f" {bw['gloo']:>10.3f} {float(np.median(paired['gloo'])):>12.0%}"
            print(line, flush=True)
    if tdist:
        tdist.destroy_process_group()
    dist.destroy_process_group()


def main() -> int:
    """Launch :func:`job` on ``-n`` ranks."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=4, help="number of ranks (default 4)")
    parser.add_argument("--job", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        job()
        return 0
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        print('bench/distributed.py needs mpi4py and an MPI: pip install "opweave[distributed]"')
        return 1
    from opweave.distributed import run

    return run.launch(args.n, [os.path.abspath(__file__), "--job"])


if __name__ == "__main__":
    sys.exit(main())
