"""Post-training quantization of a small MLP with opweave.

1. "Train" a float MLP in NumPy: random hidden layers (a random-feature network) and a
   last layer fitted by least squares to a smooth target function.
2. Calibrate: run batches through the float model with observers (PyTorch's x86
   defaults: histogram observers with ``reduce_range`` for activations, per-channel
   symmetric qint8 weights).
3. Convert: quantize and prepack the weights, then run the quantized model
   (``quantized::linear_relu`` / ``linear``) on the current engine
   (``opweave.backends.quantized.engine``: ``x86`` when its plugin is available).
4. Compare with the float model on held-out data.

Tolerance: the largest deviation from the float model over the held-out points must
stay below ``TOLERANCE`` (8 %) of the float outputs' range. Each layer adds up to half
a quantization step of rounding per activation (7-bit activations with
``reduce_range``, so a step is 1/127 of an activation's range) plus the weights'
rounding, and the errors add up through three layers: the mean deviation is below
1 % of the range, the worst point over a few hundred lands around 4 %.

Run: ``python examples/quantize_mlp.py [--hidden 64] [--samples 2048] [--engine reference]``.
"""

from __future__ import annotations

import argparse

import numpy as np
import opweave as ow
from opweave import quantization as Q

TOLERANCE = 0.08


def target(x: np.ndarray) -> np.ndarray:
    """The function the MLP learns: a few smooth outputs of the inputs."""
    return np.stack([np.sin(x[:, 0] + x[:, 1]), np.cos(x[:, 2]) * x[:, 3], np.tanh(x.sum(1) / 4)], 1)


def train(x: np.ndarray, y: np.ndarray, hidden: int, rng) -> list:
    """Random ReLU features (two hidden layers) and a least-squares output layer."""
    d = x.shape[1]
    w1 = rng.normal(0, 1, (hidden, d)).astype(np.float32)
    b1 = rng.normal(0, 0.5, hidden).astype(np.float32)
    w2 = rng.normal(0, 1 / np.sqrt(hidden), (hidden, hidden)).astype(np.float32)
    b2 = rng.normal(0, 0.5, hidden).astype(np.float32)
    h = np.maximum(np.maximum(x @ w1.T + b1, 0) @ w2.T + b2, 0)
    design = np.concatenate([h, np.ones((len(h), 1))], 1)
    ridge = 1e-3 * len(h) * np.eye(design.shape[1])  # small weights keep quantization noise small
    coef = np.linalg.solve(design.T @ design + ridge, design.T @ y)
    w3, b3 = coef[:-1].T.astype(np.float32), coef[-1].astype(np.float32)
    return [
        ("linear", ow.tensor(w1), ow.tensor(b1)),
        ("relu",),
        ("linear", ow.tensor(w2), ow.tensor(b2)),
        ("relu",),
        ("linear", ow.tensor(w3), ow.tensor(b3)),
    ]


def float_model(layers, x):
    """The float forward pass."""
    for layer in layers:
        x = ow.relu(x) if layer[0] == "relu" else ow.linear(x, layer[1], layer[2])
    return x


def main(hidden: int = 64, samples: int = 2048, batch: int = 256, engine: str | None = None, seed: int = 0) -> float:
    """Train, calibrate, convert and compare; returns the deviation relative to the outputs' range."""
    rng = np.random.default_rng(seed)
    if engine:
        ow.backends.quantized.engine = engine
    x = rng.uniform(-2, 2, (samples, 4)).astype(np.float32)
    layers = train(x, target(x), hidden, rng)
    prepared = Q.prepare(layers)
    Q.calibrate(prepared, (ow.tensor(x[i : i + batch]) for i in range(0, samples, batch)))
    quantized = Q.convert(prepared)
    test = ow.tensor(rng.uniform(-2, 2, (max(samples // 4, 8), 4)).astype(np.float32))
    expected = float_model(layers, test).numpy()
    got = quantized(test).numpy()
    deviation = float(np.abs(got - expected).max())
    spread = float(expected.max() - expected.min())
    relative = deviation / spread
    print(f"engine: {ow.backends.quantized.engine}")
    print(f"float model fit error (max): {np.abs(expected - target(test.numpy())).max():.4f}")
    mean = float(np.abs(got - expected).mean())
    print(f"mean deviation quantized vs float: {mean:.5f} ({100 * mean / spread:.2f} % of the output range)")
    print(
        f"max deviation quantized vs float: {deviation:.5f} ({100 * relative:.2f} % of the output range, "
        f"tolerance {100 * TOLERANCE:.0f} %)"
    )
    return relative


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--samples", type=int, default=2048)
    parser.add_argument("--engine", default=None, help="quantized engine (default: the current one)")
    args = parser.parse_args()
    relative = main(args.hidden, args.samples, engine=args.engine)
    raise SystemExit(0 if relative <= TOLERANCE else 1)
