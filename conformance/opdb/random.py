"""Random prims: samples with non-degenerate arguments; checked by seeded reproducibility, not values.

A random prim is a pure function of its ``(seed, offset)`` arguments (Philox, the
same stream on every backend), so the suite checks that the same arguments give
the same bits twice, that they give the CPU's values, and that another seed gives
other values (a kernel that ignores its seed fails). Shapes have at least 16
elements so that a changed seed visibly changes the output.
"""

from __future__ import annotations

import opweave as ow

from . import register
from ._core import DEVICE, FLOAT, OpInfo, SampleInput, arr


def _samples(build):
    def gen(rng, dtype, device):
        for index in range(4):
            args, kwargs = build(rng, dtype, index)
            yield SampleInput(tuple(args), kwargs, f"random sample {index}")

    return gen


def _shape(index):
    return [(4, 5), (33,), (2, 3, 4), (0, 3)][index]


def _seed(rng):
    return int(rng.integers(0, 2**31)), int(rng.integers(0, 1000))


def _uniform(rng, dtype, index):
    seed, offset = _seed(rng)
    return [list(_shape(index)), -1.5, 2.0, seed, offset], {"dtype": dtype, "device": DEVICE}


def _normal(rng, dtype, index):
    seed, offset = _seed(rng)
    return [list(_shape(index)), 0.5, 2.0, seed, offset], {"dtype": dtype, "device": DEVICE}


def _bits(rng, dtype, index):
    seed, offset = _seed(rng)
    return [list(_shape(index)), seed, offset], {"device": DEVICE}


def _randint(rng, dtype, index):
    seed, offset = _seed(rng)
    return [list(_shape(index)), 0, 10, seed, offset], {"dtype": dtype, "device": DEVICE}


def _randperm(rng, dtype, index):
    seed, offset = _seed(rng)
    return [[20, 33, 1, 0][index], seed, offset], {"dtype": dtype, "device": DEVICE}


def _bernoulli(rng, dtype, index):
    seed, offset = _seed(rng)
    p = arr(rng, _shape(index), dtype, ["contiguous", "transposed", "strided", "contiguous"][index], "prob")
    return [p, seed, offset], {}


def rnd(name, build, dtypes):
    """One random-prim OpInfo (no oracle: ``random`` checks instead)."""
    return OpInfo(name=name, sample_inputs=_samples(build), dtypes=tuple(dtypes), random=True)


register(
    rnd("prims::uniform", _uniform, FLOAT),
    rnd("prims::normal", _normal, FLOAT),
    rnd("prims::random_bits", _bits, (None,)),
    rnd("prims::randint", _randint, (ow.int64, ow.int32, ow.uint8, ow.float32)),
    rnd("prims::randperm", _randperm, (ow.int64, ow.int32)),
    rnd("prims::bernoulli", _bernoulli, FLOAT),
)
