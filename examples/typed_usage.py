"""A small typed program over opweave's public API; ``mypy`` checks it against the shipped stubs."""

from __future__ import annotations

from collections.abc import Sequence

import opweave as ow
import opweave.nn.functional as F


def normalize(x: ow.Tensor, dims: Sequence[int]) -> ow.Tensor:
    """Zero mean, unit variance over ``dims``."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    return centered / ow.sqrt(centered.pow(2).mean(dims, keepdim=True) + 1e-5)


def main() -> None:
    """Build a few tensors, run ops, methods, operators and the namespaces."""
    a: ow.Tensor = ow.ones(2, 3, dtype=ow.float32)
    b = ow.zeros((2, 3))
    c = ow.add(a, b, alpha=2)
    d = (a * 2 + c).relu().view(3, 2).t()
    e = ow.matmul(d, a.transpose(0, 1))
    shape: ow.Size = e.shape
    n: int = e.ndim
    kind: ow.dtype = e.dtype
    values, indices = ow.max(a, 1)
    pieces = ow.split(a, 1)
    y = F.relu(normalize(a, [1]))
    z = ow.linalg.norm(y) + ow.fft.fft(a).abs().sum() + ow.special.erf(a).sum()
    flag: bool = ow.is_floating_point(a)
    rows: int = a.size(0)
    whole: ow.Size = a.size()
    gen = ow.Generator("cpu").manual_seed(0)
    ow.set_printoptions(precision=4)
    print(shape, n, kind, values.shape, indices.dtype, len(pieces), z.item(), flag, rows, whole, gen.initial_seed())


if __name__ == "__main__":
    main()
