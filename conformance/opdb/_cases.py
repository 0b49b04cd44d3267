"""Case-list entries: an op's samples as a fixed list of calls, with argument specs built per dtype.

Used by the indexing, sorting, scans, creation and matrix families. A case is
``K(*args, **kwargs)``; each argument is a plain value or a spec:

:class:`TA`   a tensor of random values (shape, layout, dtype: the dtype under test by default, domain);
:class:`Val`  a tensor holding exactly the given values (index tensors, masks, sorted sequences);
:class:`Idx`  a tensor of random integer indices in ``[low, high)`` (``unique``: without repeats);
:class:`Dyn`  ``fn(dtype)``, built again as a spec (arguments that depend on the dtype under test);
:class:`Gen`  ``fn(rng, dtype)``, the value itself (anything the specs above cannot say).

:func:`entry` turns a case list into an :class:`~._core.OpInfo`, taking the flags the
op's tags imply (views, data-dependent shapes, nondeterministic kernels); prims
promise their meta function's strides unless the line passes ``strides=False``. Cases
come first, in order (the quick profile runs the first five); ``more`` is a
generator of further random samples for the full profile.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import opweave as ow

from ._core import Arr, OpInfo, SampleInput, arr

C, T, S, B, CPU = "contiguous", "transposed", "strided", "broadcast", "cpu"


@dataclass(frozen=True)
class TA:
    """A tensor of random values: shape, layout, dtype (None: the dtype under test), domain, special values."""

    shape: tuple
    layout: str = C
    dtype: object = None
    domain: str = "any"
    specials: bool = False

    def make(self, rng, dtype) -> Arr:
        dt = self.dtype or dtype
        return arr(rng, self.shape, dt, self.layout, self.domain, self.specials and dt.is_floating_point)


@dataclass(frozen=True)
class Val:
    """A tensor holding exactly ``values`` (dtype None: the dtype under test)."""

    values: object
    dtype: object = None
    layout: str = C

    def make(self, rng, dtype) -> Arr:
        dt = self.dtype or dtype
        with np.errstate(all="ignore"):
            return Arr(np.asarray(self.values).astype(dt.numpy), dt, self.layout)


@dataclass(frozen=True)
class Idx:
    """Random integer indices in ``[low, high)`` of ``shape`` (``unique``: distinct values)."""

    shape: tuple
    high: int
    low: int = 0
    dtype: object = ow.int64
    layout: str = C
    unique: bool = False

    def make(self, rng, dtype) -> Arr:
        n = int(np.prod(self.shape, dtype=np.int64))
        if self.unique:
            values = rng.permutation(np.arange(self.low, self.high))[:n].reshape(self.shape)
        else:
            values = rng.integers(self.low, self.high, self.shape) if self.high > self.low else np.zeros(self.shape)
        return Arr(np.asarray(values).astype(self.dtype.numpy), self.dtype, self.layout)


@dataclass(frozen=True)
class Dyn:
    """An argument computed from the dtype under test: ``fn(dtype)`` (then built like any spec)."""

    fn: object


@dataclass(frozen=True)
class Gen:
    """An argument computed by ``fn(rng, dtype)`` (returned as it is)."""

    fn: object


def K(*args, **kwargs):
    """One case: positional and keyword arguments."""
    return args, kwargs


def make(v, rng, dtype):
    """The value of spec ``v`` for ``dtype`` (lists and tuples element by element)."""
    if isinstance(v, (TA, Val, Idx)):
        return v.make(rng, dtype)
    if isinstance(v, Dyn):
        return make(v.fn(dtype), rng, dtype)
    if isinstance(v, Gen):
        return v.fn(rng, dtype)
    if isinstance(v, list):
        return [make(x, rng, dtype) for x in v]
    if isinstance(v, tuple):
        return tuple(make(x, rng, dtype) for x in v)
    return v


def sample(args, kwargs, rng, dtype) -> SampleInput:
    """One :class:`SampleInput` of a case."""
    made = tuple(make(a, rng, dtype) for a in args)
    kw = {k: make(v, rng, dtype) for k, v in kwargs.items()}
    desc = ", ".join(f"{list(a.shape)} {a.layout}" for a in SampleInput(made, kw).arrs())
    return SampleInput(made, kw, desc)


def case_samples(cases, more=None):
    """A generator yielding ``cases`` in order, then ``more(rng, dtype)``'s cases (for the full profile)."""

    def gen(rng, dtype, device):
        for args, kwargs in cases:
            yield sample(args, kwargs, rng, dtype)
        if more is not None:
            while True:
                args, kwargs = more(rng, dtype)
                yield sample(args, kwargs, rng, dtype)

    return gen


def entry(name, oracle, cases, dtypes, *, more=None, upcast=True, **kw) -> OpInfo:
    """An OpInfo for ``name`` from a case list, with the flags its tags imply."""
    op = ow.ops.lookup(name)
    flags = {
        "returns_view": "view" in op.tags,
        "data_dependent": bool(op.tags & {"dynamic_output_shape", "data_dependent_output"}),
        "nondeterministic": "nondeterministic_bitwise" in op.tags,
        "strides": op.kind == "prim",  # a prim's meta layout is a promise unless the line says otherwise
    }
    flags.update(kw)
    return OpInfo(
        name=name,
        sample_inputs=case_samples(cases, more),
        oracle=oracle,
        dtypes=tuple(dtypes),
        upcast=upcast,
        **flags,
    )
