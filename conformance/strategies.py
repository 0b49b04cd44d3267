"""Hypothesis strategies over the op database's samples, and the full profile's search for a failing example.

The quick profile runs each op's seeded samples (replayable from their seed). The
full profile runs more of them and then lets Hypothesis search: :func:`sample_inputs`
draws a seeded sample of the op (which keeps every argument valid: indices in range,
sorted sequences, well-conditioned matrices) and varies what can vary without
changing its meaning:

* the **layout** of every tensor argument (contiguous, transposed, strided; broadcast too for
  pointwise ops, as it repeats values, and never for a tensor the op writes into), except for
  ops that read the storage itself (:data:`STORAGE_DEPENDENT`);
* for pointwise ops, the **shapes** (0-dim, empty and broadcasting shapes; prims get
  one shape for every operand) and the **values**, drawn from the values the seeded
  sample holds (so each argument stays in its domain) plus nan, ±inf and -0.0 for
  floating arguments that already hold special values.

:func:`search` runs the checks on such samples (``max_examples`` per op and dtype,
seeded, no example database) and returns the minimal failing sample Hypothesis
shrinks to; the runner records it in the JSON report like any failing sample, so
``--replay`` reruns it. Samples that are invalid on the reference backend too are
rejected (``assume``), not reported.

The building blocks (:func:`shapes`, :func:`broadcast_shapes`, :func:`dtypes`,
:func:`layouts`, :func:`values`, :func:`arrs`) are public for tests that want
opweave-shaped inputs.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from hypothesis.extra import numpy as hnp

from .opdb._core import ALL, DOMAINS, LAYOUTS, SPECIALS, Arr, OpInfo, SampleInput, make_values, take

#: Layouts a device tensor argument can take (``cpu`` is kept where a sample asks for it).
DEVICE_LAYOUTS = tuple(layout for layout in LAYOUTS if layout != "cpu")
DENSE_LAYOUTS = ("contiguous", "transposed", "strided")  # layouts that keep every value of the sample
_SEEDED = 4  # a drawn sample is one of the first few of a fresh seed (the fixed plans come first)


def shapes(min_dims: int = 0, max_dims: int = 3, max_side: int = 4):
    """Shapes with 0 to ``max_dims`` dims of size 0 to ``max_side`` (0-dim and empty included)."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=max_side)


def broadcast_shapes(n: int, max_dims: int = 3, max_side: int = 4):
    """``n`` mutually broadcastable shapes (a tuple of shapes) around a drawn result shape."""
    return shapes(0, max_dims, max_side).flatmap(
        lambda base: hnp.mutually_broadcastable_shapes(
            num_shapes=n, base_shape=base, min_dims=0, max_dims=len(base), min_side=0, max_side=max_side
        ).map(lambda bs: bs.input_shapes)
    )


def dtypes(allowed=ALL):
    """One of the opweave dtypes ``allowed``."""
    return st.sampled_from(tuple(allowed))


def layouts():
    """A device layout request (see :mod:`.opdb._core`)."""
    return st.sampled_from(DEVICE_LAYOUTS)


def values(shape, dtype, domain: str = "any", specials: bool = True):
    """A NumPy array of ``dtype``'s values in ``domain`` (floating: with nan, ±inf, -0.0 when ``specials``)."""
    shape = tuple(shape)
    if dtype.is_floating_point or dtype.is_complex:
        lo, hi = DOMAINS.get(domain, DOMAINS["any"])
        finite = st.floats(lo, hi, allow_nan=False, width=64)
        element = st.one_of(finite, st.sampled_from(SPECIALS)) if specials else finite
        real = hnp.arrays(np.float64, shape, elements=element)
        if dtype.is_complex:
            return st.tuples(real, hnp.arrays(np.float64, shape, elements=finite)).map(
                lambda ri: (ri[0] + 1j * ri[1]).astype(dtype.numpy)
            )
        return real.map(lambda a: a.astype(dtype.numpy))
    return st.integers(0, 2**32 - 1).map(lambda s: make_values(np.random.default_rng(s), shape, dtype, domain))


def arrs(shape=None, dtype=None, domain: str = "any", specials: bool = True):
    """An :class:`Arr`: drawn shape (unless given), dtype (unless given), values and layout."""

    @st.composite
    def build(draw):
        sh = draw(shapes()) if shape is None else tuple(shape)
        dt = draw(dtypes()) if dtype is None else dtype
        return Arr(draw(values(sh, dt, domain, specials)), dt, draw(layouts()))

    return build()


def _resampled(draw, a: Arr, shape) -> np.ndarray:
    """Values of ``shape`` drawn from ``a``'s own values (its domain), with specials if it has any."""
    pool = np.unique(a.value.reshape(-1))
    n = int(np.prod(shape, dtype=np.int64))
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=n, max_size=n))
    out = pool[np.asarray(picks, dtype=np.int64)] if n else np.zeros(0, a.value.dtype)
    return np.asarray(out, dtype=a.value.dtype).reshape(shape)


#: Ops whose result depends on the storage behind the argument (its layout is part of the sample's meaning).
STORAGE_DEPENDENT = ("as_strided", "resize", "view_of_dtype", "view.dtype")


def _layout_free(info: OpInfo) -> bool:
    return not any(part in info.name for part in STORAGE_DEPENDENT)


def _written_arrs(info: OpInfo, sample: SampleInput) -> set:
    """The ids of the sample's tensors that the op writes into (``Tensor(a!)`` arguments)."""
    names = [a.name for a in info.op.schema.arguments]
    mutated = set(info.op.schema.mutated_arguments)
    given = list(zip(names, sample.args)) + list(sample.kwargs.items())
    return {id(a) for name, v in given if name in mutated for a in SampleInput((v,)).arrs()}


def _pointwise(info: OpInfo) -> bool:
    return "pointwise" in info.op.tags


@st.composite
def sample_inputs(draw, info: OpInfo, dtype, device: str = "cpu"):
    """A :class:`SampleInput` of ``info``'s op in ``dtype``: a seeded sample with drawn layouts (and, for
    pointwise ops, drawn shapes and values from the sample's own value sets)."""
    seed = draw(st.integers(0, 2**31 - 1))
    index = draw(st.integers(0, _SEEDED - 1))
    found = take(info.sample_inputs(np.random.default_rng(seed), dtype, device), index + 1)
    base = found[-1] if found else SampleInput()
    arrays = [a for a in base.arrs() if a.layout != "cpu"]
    new_shapes = {}
    if _pointwise(info) and arrays and all(a.value.size for a in arrays):
        if info.op.kind == "prim":
            shape = draw(shapes(max_dims=3))
            new_shapes = {id(a): shape for a in arrays}
        else:
            new_shapes = dict(zip((id(a) for a in arrays), draw(broadcast_shapes(len(arrays)))))
    # a broadcast layout repeats dim 0's first entry: it keeps the meaning of pointwise samples only, and never
    # suits a tensor the op writes into
    written = _written_arrs(info, base)
    free = _pointwise(info)
    replaced = {}
    for a in arrays:
        shape = new_shapes.get(id(a), a.shape)
        value = _resampled(draw, a, shape) if id(a) in new_shapes else a.value
        layout = a.layout
        if _layout_free(info):
            layout = draw(layouts() if free and id(a) not in written else st.sampled_from(DENSE_LAYOUTS))
        replaced[id(a)] = dataclasses.replace(a, value=value, layout=layout)  # keeps Arr subclasses
    return _substitute(base, replaced)


def _substitute(sample: SampleInput, replaced: dict) -> SampleInput:
    def sub(v):
        if isinstance(v, Arr):
            return replaced.get(id(v), v)
        if isinstance(v, list):
            return [sub(x) for x in v]
        if isinstance(v, tuple):
            return tuple(sub(x) for x in v)
        return v

    args = tuple(sub(v) for v in sample.args)
    kwargs = {k: sub(v) for k, v in sample.kwargs.items()}
    desc = ", ".join(f"{list(a.shape)} {a.layout}" for a in SampleInput(args, kwargs).arrs())
    return SampleInput(args, kwargs, f"hypothesis: {desc}", sample.oracle_kwargs)


def search(run_sample, info: OpInfo, dtype, device: str, max_examples: int, seed: int):
    """Search for a failing sample: ``run_sample(sample)`` returns None (pass) or the failure.

    Returns ``(sample, failure)`` for the minimal failing sample found, or None. Samples the
    reference backend rejects too (check ``sample``) and missing kernels are not failures here.
    """
    from .checks import CheckFailure, NotImplementedKernel

    failures: list = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=max_examples,
        database=None,
        deadline=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @given(sample_inputs(info, dtype, device))
    def probe(sample):
        outcome = run_sample(sample)
        if outcome is None:
            return
        if isinstance(outcome, NotImplementedKernel):
            assume(False)
        if isinstance(outcome, CheckFailure) and outcome.check in ("sample", "harness"):
            assume(False)  # invalid here and on the reference backend, or an oracle outside its domain
        failures.append((sample, outcome))
        raise AssertionError(str(outcome))

    try:
        probe()
    except Unsatisfiable:  # every drawn sample was invalid: nothing found
        pass
    except Exception:  # the failure (or a flaky one: failing once, not when run again) is in ``failures``
        if not failures:
            raise
    return failures[-1] if failures else None


__all__ = [
    "arrs",
    "broadcast_shapes",
    "dtypes",
    "layouts",
    "sample_inputs",
    "search",
    "shapes",
    "values",
]
