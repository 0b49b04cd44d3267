"""The op database: one :class:`OpInfo` per operator overload of the catalog.

Hand-written entries come from the family modules (:data:`FAMILIES`), which call
:func:`register` when imported. Every other op gets a generated entry from the
schema-driven sample generator (:mod:`.generated`; no oracle). Generated in-place
and ``out=`` variants share their functional op's entry (``variant`` says which
semantics to check). :func:`coverage` says where each op's entry comes from; an op
with neither a hand-written entry nor a generated sample is "missing", which the
project's coverage test forbids.
"""

from __future__ import annotations

import importlib

import opweave as ow

from . import generated
from ._core import (
    ALL,
    BOOL,
    COMPLEX,
    DEVICE,
    FLOAT,
    FLOATING,
    INT,
    INTEGRAL,
    NUMERIC,
    REAL,
    Arr,
    ErrorInput,
    OpInfo,
    SampleInput,
    arr,
    make_values,
)

__all__ = [
    "ALL",
    "BOOL",
    "COMPLEX",
    "DEVICE",
    "FAMILIES",
    "FLOAT",
    "FLOATING",
    "INT",
    "INTEGRAL",
    "NUMERIC",
    "REAL",
    "Arr",
    "ErrorInput",
    "OpInfo",
    "SampleInput",
    "arr",
    "coverage",
    "family_of",
    "get",
    "hand_written",
    "make_values",
    "names",
    "register",
]

#: Modules with hand-written entries (imported on first use).
FAMILIES = (
    "elementwise",
    "reductions",
    "views",
    "random",
    "indexing",
    "sorting",
    "scans",
    "creation",
    "matrix",
    "nn_layers",
    "nn_misc",
    "linalg",
    "fft",
    "statistics",
    "special",
    "quantized",
    "compat",
)

_hand: dict[str, OpInfo] = {}
_cache: dict[str, OpInfo | None] = {}
_loaded = False


def register(*infos: OpInfo) -> None:
    """Add hand-written entries (an op registered twice is an error)."""
    for info in infos:
        if info.name in _hand:
            raise ValueError(f"opdb: {info.name} registered twice")
        ow.ops.lookup(info.name)  # KeyError for a name that is not in the catalog
        _hand[info.name] = info


def _load() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for family in FAMILIES:
            importlib.import_module(f"{__name__}.{family}")


def family_of(op) -> str:
    """The report family of an op: its defining module (``prims.<module>`` for prims)."""
    op = op.functional or op
    if op.kind == "prim":
        module = getattr(op.meta, "__module__", "") or ""
        return "prims." + module.rsplit(".", 1)[-1]
    module = getattr(op.decomposition, "__module__", "") or ""
    name = module.rsplit(".", 1)[-1].lstrip("_")
    return name.replace("elementwise_", "elementwise.") if name.startswith("elementwise_") else name


def hand_written() -> dict[str, OpInfo]:
    """The hand-written entries by name."""
    _load()
    return dict(_hand)


def get(name: str) -> OpInfo | None:
    """The entry of the op named ``name`` (hand-written, derived for a variant, or generated), or None."""
    _load()
    if name in _cache:
        return _cache[name]
    op = ow.ops.lookup(name)
    info = _hand.get(name)
    if info is None and op.functional is not None:
        base = get(op.functional.name)
        info = None if base is None else _variant(op, base)
    if info is None:
        info = generated.make_info(op)
    if info is not None and not info.family:
        info.family = family_of(op)
    _cache[name] = info
    return info


def _variant(op, base: OpInfo) -> OpInfo:
    return OpInfo(
        name=op.name,
        sample_inputs=base.sample_inputs,
        oracle=base.oracle,
        dtypes=base.dtypes,
        tolerances=base.tolerances,
        known_failure=base.known_failure,
        family=base.family or family_of(op),
        source=base.source,
        variant=op.variant,
        functional=base,
        values_undefined=base.values_undefined,
        random=base.random,
    )


def names() -> list[str]:
    """Every op name of the catalog, sorted; the ``c10d::`` collectives are checked by the multi-process section."""
    return [op.name for op in ow.ops.catalog() if op.schema.namespace != "c10d"]


def coverage() -> dict[str, str]:
    """For every op: ``"opdb"`` (hand-written), ``"generated"``, or ``"missing"`` (variants as their functional)."""
    out = {}
    for name in names():
        info = get(name)
        out[name] = "missing" if info is None else info.source
    return out
