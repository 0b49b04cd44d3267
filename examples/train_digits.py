"""Train a small CNN on scikit-learn's bundled digits (1,797 8×8 images, no download) with opweave.

    python examples/train_digits.py [--device cpu] [--epochs 8] [--seed 0]
    opweave run --nproc-per-node 4 examples/train_digits.py      # DistributedDataParallel on 4 ranks

Prints a progress line per epoch and the final test accuracy. The pieces (data split, model,
one training step) are functions so that a test can replay them against a NumPy reference.

Started by ``opweave run`` (or with ``--distributed``), every rank wraps the model in
``DistributedDataParallel`` and takes its share of each batch (``DistributedSampler``,
``--batch-size`` / ranks samples per rank). The sampler's shuffle is the same for any number of
ranks, and rank r's share of step i is every N-th sample of the one process's batch i, so 1, 2
and 4 ranks take the same steps (up to rounding), with the same batch size and learning rate.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
import opweave
from opweave import nn


def load_data(seed: int = 0, test_fraction: float = 0.2):
    """The digits as float32 (N, 1, 8, 8) images and int64 labels, split by a seeded shuffle; pixels are
    standardized with the training set's mean and standard deviation."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None]
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(len(y) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    mean, std = x[train].mean(), x[train].std()
    x = (x - mean) / std
    return x[train], y[train], x[test], y[test]


def build_model() -> nn.Module:
    """conv 3×3 (1→16) → ReLU → max-pool 2 → flatten → linear 256→64 → ReLU → linear 64→10."""
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 4 * 4, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


def batches(n: int, batch_size: int, rng: np.random.Generator):
    """Index arrays of one shuffled epoch."""
    order = rng.permutation(n)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def shard_batches(n: int, batch_size: int, epoch: int, seed: int, rank: int = 0, world: int = 1) -> list:
    """This rank's index arrays of one epoch: its ``DistributedSampler`` share, ``batch_size // world`` per step.

    Together the ranks' arrays of step i are the ``batch_size`` samples of step i with one rank.
    """
    from opweave.utils.data import DistributedSampler

    sampler = DistributedSampler(range(n), num_replicas=world, rank=rank, shuffle=True, seed=seed)
    sampler.set_epoch(epoch)
    order = np.fromiter(sampler, dtype=np.int64)
    per_rank = batch_size // world
    return [order[i : i + per_rank] for i in range(0, len(order), per_rank)]


def train_step(model: nn.Module, optimizer, loss_fn, xb, yb) -> float:
    """Forward, backward and one optimizer step; returns the batch loss."""
    optimizer.zero_grad()
    loss = loss_fn(model(xb), yb)
    loss.backward()
    optimizer.step()
    return loss.item()


def accuracy(model: nn.Module, x, y) -> float:
    """Fraction of ``x`` classified as ``y``."""
    model.eval()
    with opweave.no_grad():
        pred = model(x).argmax(1)
    model.train()
    return float((pred == y).sum().item()) / len(y)


def make_optimizer(model: nn.Module):
    """SGD with momentum, the example's optimizer."""
    return opweave.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)


def main(argv=None) -> float:
    """Train and return the test accuracy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=64, help="the global batch (split over the ranks)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--distributed",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="DistributedDataParallel over the ranks (default: when started by opweave run on several ranks)",
    )
    args = parser.parse_args(argv)

    distributed = args.distributed if args.distributed is not None else int(os.environ.get("WORLD_SIZE", "1")) > 1
    rank, world = 0, 1
    if distributed:
        import opweave.distributed as dist

        dist.init_process_group("mpi")
        rank, world = dist.get_rank(), dist.get_world_size()
        if args.batch_size % world:
            parser.error(f"--batch-size {args.batch_size} is not a multiple of the {world} ranks")
    opweave.manual_seed(args.seed)
    device = opweave.device(args.device)
    x_train, y_train, x_test, y_test = load_data(args.seed)
    net = build_model().to(device)
    model = nn.parallel.DistributedDataParallel(net) if distributed else net
    optimizer = make_optimizer(model)
    scheduler = opweave.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    xtr = opweave.tensor(x_train, device=device)
    ytr = opweave.tensor(y_train, device=device)
    xte = opweave.tensor(x_test, device=device)
    yte = opweave.tensor(y_test, device=device)
    say = sys.stdout.write if rank == 0 else (lambda text: None)
    start = time.perf_counter()
    train_time, step_count = 0.0, 0
    for epoch in range(1, args.epochs + 1):
        steps = shard_batches(len(y_train), args.batch_size, epoch, args.seed, rank, world)
        total = 0.0
        began = time.perf_counter()
        for i, idx in enumerate(steps, 1):
            index = opweave.tensor(idx, device=device)
            total += train_step(model, optimizer, loss_fn, xtr[index], ytr[index])
            done = int(20 * i / len(steps))
            say(f"\repoch {epoch:2d}/{args.epochs} [{'#' * done}{'.' * (20 - done)}] loss {total / i:.4f}")
            sys.stdout.flush()
        train_time += time.perf_counter() - began
        step_count += len(steps)
        scheduler.step()
        say(f"  test acc {accuracy(net, xte, yte):.4f}  {time.perf_counter() - start:5.1f}s\n")
    acc = accuracy(net, xte, yte)
    where = f"{world} ranks, DistributedDataParallel" if distributed else "1 process"
    say(
        f"final test accuracy: {acc:.4f} ({len(y_test)} images, device {device}, {where}, "
        f"{1e3 * train_time / step_count:.1f} ms/step, {time.perf_counter() - start:.1f}s)\n"
    )
    if distributed:
        dist.destroy_process_group()
    return acc


if __name__ == "__main__":
    main()
