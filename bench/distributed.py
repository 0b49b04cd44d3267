"""all_reduce bandwidth on 4 ranks (opweave.distributed next to mpi4py's own Allreduce and PyTorch's gloo),
and DistributedDataParallel's training step time on 1, 2 and 4 ranks (next to PyTorch's DDP on gloo).

Run: ``python bench/distributed.py [-n 4]`` (all_reduce) or ``python bench/distributed.py --ddp``
(step times): it launches itself on the ranks with ``opweave run``.

all_reduce: float32 sums from 4 KB to 64 MB; for each size and method the best of several
rounds (interleaved, so the three see the same machine load) of a loop of all_reduces between
barriers, timed on rank 0. Bandwidth is the algorithm bandwidth (bytes of the tensor / time per
all_reduce); the ratio columns are the median over rounds of mpi4py's time over the method's in
the same round, robust to a loaded machine.
Prints figures; asserts nothing.

``--ddp``: one SGD step (zero_grad, forward, cross-entropy, backward with DDP's bucketed
all-reduce, step) of the digits CNN and of an MLP 784-512-512-10, a global batch of 64 split
over 1, 2 and 4 ranks, every library single-threaded; the median step over rounds on rank 0.
The 1-rank row also gives the step without DDP. PyTorch's DDP (gloo) runs in the same processes.
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


GLOBAL_BATCH = 64
DDP_STEPS, DDP_ROUNDS = 10, 5


def _models(nn):
    """The digits CNN (examples/train_digits.py) and an MLP 784-512-512-10, in ``nn`` (opweave.nn or torch.nn)."""
    cnn = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(256, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )
    mlp = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    return {"digits CNN": (cnn, (1, 8, 8)), "MLP 784-512-512-10": (mlp, (784,))}


def _step(lib, model, x, y):
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()

    return step


def _median_step(step, barrier) -> float:
    """Median over rounds of the mean step time (seconds), between barriers."""
    step()
    return float(np.median([_time(step, DDP_STEPS, barrier) for _ in range(DDP_ROUNDS)]))


def ddp_job() -> None:
    """What each rank of a ``--ddp`` job runs: one line per model from rank 0."""
    import opweave as ow
    import opweave.distributed as dist
    from mpi4py import MPI
    from opweave.nn.parallel import DistributedDataParallel

    dist.init_process_group("mpi")
    comm = MPI.COMM_WORLD.Dup()
    rank, size = comm.Get_rank(), comm.Get_size()
    try:
        import torch
        import torch.distributed as tdist
        from torch.nn.parallel import DistributedDataParallel as TorchDDP

        torch.set_num_threads(1)
        tdist.init_process_group(
            "gloo",
            init_method=f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
            rank=rank,
            world_size=size,
        )
    except ImportError:
        torch = tdist = None
    per_rank = GLOBAL_BATCH // size
    rng = np.random.default_rng(rank)
    for name, (model, shape) in _models(ow.nn).items():
        x = rng.standard_normal((per_rank, *shape)).astype(np.float32)
        y = rng.integers(0, 10, per_rank)
        xo, yo = ow.tensor(x), ow.tensor(y)
        plain = _median_step(_step(ow, model, xo, yo), comm.Barrier) if size == 1 else None
        ddp = _median_step(_step(ow, DistributedDataParallel(model), xo, yo), comm.Barrier)
        line = f"{name:>20} {size:>5} {per_rank:>9} {ddp * 1e3:>13.2f}"
        line += f" {plain * 1e3:>14.2f}" if plain is not None else f" {'':>14}"
        if tdist:
            tmodel = _models(torch.nn)[name][0]
            xt, yt = torch.from_numpy(x), torch.from_numpy(y)
            tstep = _median_step(_step(torch, TorchDDP(tmodel), xt, yt), comm.Barrier)
            line += f" {tstep * 1e3:>13.2f} {ddp / tstep:>8.1f}x"
        if rank == 0:
            print(line, flush=True)
    if tdist:
        tdist.destroy_process_group()
    dist.destroy_process_group()


def ddp_table() -> int:
    """Launch :func:`ddp_job` on 1, 2 and 4 ranks and print the step times."""
    from opweave.distributed import run

    print(f"one SGD step, global batch {GLOBAL_BATCH} split over the ranks; median of {DDP_ROUNDS} rounds")
    print(f"of {DDP_STEPS} steps, single-threaded ranks; ms per step on rank 0")
    print(f"{'model':>20} {'ranks':>5} {'per rank':>9} {'opweave DDP':>13} {'opweave alone':>14}", end="")
    try:
        import torch  # noqa: F401

        print(f" {'PyTorch DDP':>13} {'ow/torch':>9}", flush=True)
    except ImportError:
        print("   (PyTorch not installed: no PyTorch column)", flush=True)
    status = 0
    for ranks in (1, 2, 4):
        status |= run.launch(ranks, [os.path.abspath(__file__), "--ddp-job"])
    return status


def main() -> int:
    """Launch :func:`job` on ``-n`` ranks, or (``--ddp``) the DDP step times."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=4, help="number of ranks (default 4)")
    parser.add_argument("--ddp", action="store_true", help="DistributedDataParallel step times on 1, 2 and 4 ranks")
    parser.add_argument("--job", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--ddp-job", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")  # the ranks inherit it: one thread each, as in bench/train.py
    if args.job:
        job()
        return 0
    if args.ddp_job:
        ddp_job()
        return 0
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        print('bench/distributed.py needs mpi4py and an MPI: pip install "opweave[distributed]"')
        return 1
    if args.ddp:
        return ddp_table()
    from opweave.distributed import run

    return run.launch(args.n, [os.path.abspath(__file__), "--job"])


if __name__ == "__main__":
    sys.exit(main())
