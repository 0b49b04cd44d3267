"""Every op of the catalog is covered by the conformance suite's op database.

An op needs a hand-written OpInfo (``conformance/opdb/<family>.py``) or a sample
from the schema-driven generator (``tests/catalog_samples.py``); a new op with
neither fails here. Hand-written entries must name real ops, generate samples in
every dtype they declare, and the families this suite owns must have oracles.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from opweave_conformance import opdb
from opweave_conformance.opdb._core import take

CATALOG = ow.ops.catalog()


def test_every_op_has_an_opinfo_or_a_generated_sample():
    missing = [name for name, source in opdb.coverage().items() if source == "missing"]
    assert not missing, f"ops without an OpInfo or a schema-driven sample: {missing}"


def test_variants_share_their_functional_entry():
    for op in CATALOG:
        if op.functional is not None:
            info = opdb.get(op.name)
            assert info.variant == op.variant, op.name
            assert info.functional is opdb.get(op.functional.name), op.name


HAND = sorted(opdb.hand_written().items())


@pytest.mark.parametrize("name,info", HAND, ids=[name for name, _ in HAND])
def test_hand_written_entry_generates_samples(name, info):
    """The first sample of every declared dtype builds; flags agree with the op's tags."""
    op = ow._ops.lookup(name)
    assert info.dtypes, name
    for dtype in info.dtypes:
        samples = take(info.sample_inputs(np.random.default_rng(0), dtype, "cpu"), 2)
        assert samples, f"{name}: no sample for {dtype}"
    assert info.returns_view == ("view" in op.tags), name


def test_owned_families_have_oracles():
    """Every hand-written entry has an oracle; random prims and uninitialised factories (``empty*``) excepted."""
    without = [
        n for n, i in opdb.hand_written().items() if i.oracle is None and not i.random and not i.values_undefined
    ]
    assert not without, without
    families = {opdb.family_of(ow._ops.lookup(n)) for n in opdb.hand_written()}
    owned = ("elementwise", "elementwise.unary", "reductions", "views", "shape", "prims.elementwise_unary")
    owned += ("indexing", "sorting", "scans", "creation", "linalg_basic", "prims.indexing", "prims.linalg")
    owned += ("prims.conv", "prims.fft", "prims.sorting", "prims.scans", "prims.creation")
    for family in owned:
        assert family in families, family


def test_oracle_coverage_counts():
    """The functional ops with an independent oracle (a floor, raised as families are added)."""
    functional = [op for op in CATALOG if op.functional is None]
    with_oracle = [op for op in functional if (opdb.get(op.name) or None) and opdb.get(op.name).oracle is not None]
    assert len(with_oracle) >= 769, len(with_oracle)


def test_stride_promises():
    """Views, the explicit-layout factories and the non-elementwise prims of the hand-written families promise
    their meta strides; the elementwise and reduction prims' meta layouts are advisory."""
    assert opdb.get("transpose.int").promises_strides and opdb.get("empty_strided").promises_strides
    assert opdb.get("prims::mm").promises_strides and opdb.get("prims::sort").promises_strides
    assert not opdb.get("prims::add").promises_strides and not opdb.get("mm").promises_strides
