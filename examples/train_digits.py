"""Train a small CNN on scikit-learn's bundled digits (1,797 8×8 images, no download) with opweave.

    python examples/train_digits.py [--device cpu] [--epochs 8] [--seed 0]

Prints a progress line per epoch and the final test accuracy. The pieces (data split, model,
one training step) are functions so that a test can replay them against a NumPy reference.
"""

from __future__ import annotations

import argparse
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
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    opweave.manual_seed(args.seed)
    device = opweave.device(args.device)
    x_train, y_train, x_test, y_test = load_data(args.seed)
    model = build_model().to(device)
    optimizer = make_optimizer(model)
    scheduler = opweave.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loss_fn = nn.CrossEntropyLoss()
    xtr = opweave.tensor(x_train, device=device)
    ytr = opweave.tensor(y_train, device=device)
    xte = opweave.tensor(x_test, device=device)
    yte = opweave.tensor(y_test, device=device)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        steps = batches(len(y_train), args.batch_size, rng)
        total = 0.0
        for i, idx in enumerate(steps, 1):
            index = opweave.tensor(idx, device=device)
            total += train_step(model, optimizer, loss_fn, xtr[index], ytr[index])
            done = int(20 * i / len(steps))
            sys.stdout.write(f"\repoch {epoch:2d}/{args.epochs} [{'#' * done}{'.' * (20 - done)}] loss {total / i:.4f}")
            sys.stdout.flush()
        scheduler.step()
        sys.stdout.write(f"  test acc {accuracy(model, xte, yte):.4f}  {time.perf_counter() - start:5.1f}s\n")
    acc = accuracy(model, xte, yte)
    print(f"final test accuracy: {acc:.4f} ({len(y_test)} images, device {device}, {time.perf_counter() - start:.1f}s)")
    return acc


if __name__ == "__main__":
    main()
