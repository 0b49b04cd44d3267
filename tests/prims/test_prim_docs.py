"""Every prim documents itself: ``help(opweave.ops.prims.NAME)`` shows its docstring, and the special values its
docstring lists are the ones the CPU backend (PyTorch's semantics) returns."""

from __future__ import annotations

import math
import pydoc

import numpy as np
import opweave as ow
import pytest
from opweave.prims._special_values import SPECIAL_VALUES

PRIMS = ow.ops.catalog("prim")


def test_every_prim_has_a_docstring_that_help_shows():
    missing = [op.name for op in PRIMS if not op.__doc__ or op.__doc__.strip().startswith("prims::")]
    assert not missing, f"prims without a docstring: {missing}"
    for op in PRIMS:
        packet = getattr(ow.ops.prims, op.schema.name)
        text = pydoc.render_doc(packet, renderer=pydoc.plaintext)
        first = op.__doc__.strip().splitlines()[0]
        assert first in text, f"help(opweave.ops.prims.{op.schema.name}) does not show its docstring"
        assert str(op.schema) in text


def test_special_values_are_documented():
    assert "lgamma(-inf) = +inf" in ow.ops.prims.lgamma.default.__doc__
    assert "hypot(nan, +inf) = +inf" in ow.ops.prims.hypot.default.__doc__


@pytest.mark.parametrize("name", sorted(SPECIAL_VALUES))
@pytest.mark.parametrize("dtype", [ow.float32, ow.float64])
def test_the_documented_special_values_are_what_the_cpu_returns(name, dtype):
    op = getattr(ow.ops.prims, name)
    for args, want in SPECIAL_VALUES[name]:
        tensors = [ow.tensor([a], dtype=dtype) for a in args]
        got = float(op(*tensors).numpy()[0])
        where = f"prims::{name}{args} on {dtype}: got {got}, documented {want}"
        if math.isnan(want):
            assert math.isnan(got), where
        elif want == 0:
            assert got == 0 and math.copysign(1, got) == math.copysign(1, want), where
        else:
            assert np.isclose(got, want, rtol=1e-6, atol=0), where
