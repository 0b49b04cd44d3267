"""Schema-driven OpInfos for ops without a hand-written entry.

Samples come from the schema-driven generator :mod:`.schema_samples`
(``build(op, rng) -> (args, kwargs)`` with CPU tensors, ``DEVICE`` placeholders and
``Pinned`` host tensors), converted to :class:`SampleInput`. Such an op has no
oracle: it gets the "runs, matches the meta device, keeps its inputs, aliases
correctly" checks, and on a backend other than the CPU its values are compared
with the CPU reference backend's. The report says "no oracle" for it.
"""

from __future__ import annotations

import opweave as ow

from ._core import DEVICE, Arr, OpInfo, SampleInput

DATA_DEPENDENT = frozenset({"dynamic_output_shape", "data_dependent_output"})
RANDOM = frozenset({"nondeterministic_seeded", "random"})
#: Factories whose outputs are uninitialised memory (values are not compared).
UNINITIALISED = frozenset(
    {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"}
    | {"prims::empty_strided", "prims::empty_permuted"}
)


def catalog_samples():
    """The schema-driven sample generator module (``schema_samples``)."""
    from . import schema_samples

    return schema_samples


def _convert(value, cs):
    if isinstance(value, ow.Tensor):
        return Arr(value.numpy().copy(), value.dtype)
    if isinstance(value, cs.Pinned):
        t = value.tensor
        return Arr(t.numpy().copy(), t.dtype, "cpu")
    if value is cs.DEVICE:
        return DEVICE
    if isinstance(value, list):
        return [_convert(v, cs) for v in value]
    if isinstance(value, tuple):
        return tuple(_convert(v, cs) for v in value)
    return value


def schema_sample(op, rng) -> SampleInput:
    """One sample of ``op`` from the schema-driven generator (LookupError if it cannot make one)."""
    cs = catalog_samples()
    args, kwargs = cs.build(op, rng)
    return SampleInput(
        tuple(_convert(a, cs) for a in args), {k: _convert(v, cs) for k, v in kwargs.items()}, "schema-driven sample"
    )


def flags(op) -> dict:
    """The OpInfo flags an op's tags and schema imply."""
    return {
        "returns_view": "view" in op.tags,
        "nondeterministic": "nondeterministic_bitwise" in op.tags,
        "random": bool(op.tags & RANDOM),
        "data_dependent": bool(op.tags & DATA_DEPENDENT),
        "values_undefined": (op.functional or op).name.split(".")[0] in UNINITIALISED,
    }


def make_info(op) -> OpInfo | None:
    """A generated OpInfo for ``op``, or None if the generator has no sample for it."""
    try:
        cs = catalog_samples()
    except ImportError:
        return None
    try:
        cs.build(op, None)
    except LookupError:
        return None

    def sample_inputs(rng, dtype, device):
        for _ in range(3):  # the same structure, new values each time
            yield schema_sample(op, rng)

    return OpInfo(name=op.name, sample_inputs=sample_inputs, source="generated", **flags(op))
