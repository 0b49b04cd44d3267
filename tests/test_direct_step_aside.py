"""A backend's direct kernels of canonical ops step aside while a prim kernel is re-registered.

The CPU computes ``exp``, ``a + b``, ``softmax``, ``relu``... in one NumPy (or C) call instead of
their decompositions. A kernel registered for a prim by anyone but the core or the CPU plugin
(``opweave.dispatch.registered``, a ``Library``) must see every call that would reach that prim
through a decomposition: the dispatcher then resolves those canonical ops to their decompositions
(``Dispatcher._steps_aside``), and back to the direct kernels once the registration is removed.
Results are checked against NumPy formulas in both states.
"""

from __future__ import annotations

import numpy as np
import opweave
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave.dispatch import explain, registered

F = opweave.nn.functional
Dense = opweave._keys.Layer.Dense


def cpu_kernel(op):
    return opweave._dispatcher.DISPATCHER.kernel(op, Dense, "cpu").fn


def spying(prim):
    """A kernel for ``prim`` that counts its calls and computes what the CPU's kernel computes."""
    calls = []
    original = cpu_kernel(prim)

    def spy(*args):
        calls.append(args)
        return original(*args)

    return spy, calls


FLOATS = st.floats(-30, 30, width=32) | st.sampled_from([np.nan, np.inf, -np.inf, -0.0])


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4), elements=FLOATS))
def test_reregistered_exp_sees_exp_softmax_and_sigmoid(x):
    t = opweave.tensor(x)
    spy, calls = spying(opweave.ops.prims.exp.default)
    with np.errstate(all="ignore"):
        want_exp = np.exp(x)
        shifted = x - x.max(axis=-1, keepdims=True)
        want_softmax = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    with registered(opweave.ops.prims.exp.default, spy, backend="cpu"):
        assert "decomposition" in str(explain(opweave.ops.exp.default, t))
        for _ in range(2):  # the second call replays a plan: it still calls the spy
            before = len(calls)
            np.testing.assert_array_equal(opweave.exp(t).numpy(), want_exp)
            assert len(calls) == before + 1
        before = len(calls)
        np.testing.assert_allclose(F.softmax(t, -1).numpy(), want_softmax, rtol=1e-5, atol=1e-6)
        assert len(calls) > before
    count = len(calls)
    np.testing.assert_array_equal(opweave.exp(t).numpy(), want_exp)  # removed: the direct kernel again
    assert len(calls) == count
    assert "kernel from cpu" in str(explain(opweave.ops.exp.default, t))


@given(hnp.arrays(np.float64, st.integers(0, 6), elements=FLOATS), st.data())
def test_reregistered_add_sees_add_and_add_out(x, data):
    y = data.draw(hnp.arrays(np.float64, x.shape, elements=FLOATS))
    a, b = opweave.tensor(x), opweave.tensor(y)
    spy, calls = spying(opweave.ops.prims.add.default)
    with np.errstate(all="ignore"):
        want = x + y
    with registered(opweave.ops.prims.add.default, spy, backend="cpu"):
        np.testing.assert_array_equal((a + b).numpy(), want)
        out = opweave.empty(x.shape, dtype=opweave.float64)
        opweave.add(a, b, out=out)
        np.testing.assert_array_equal(out.numpy(), want)
        assert len(calls) == 2
    with np.errstate(all="ignore"):  # the direct kernel again (inf - inf warns in NumPy)
        np.testing.assert_array_equal((a + b).numpy(), want)
    assert len(calls) == 2


def test_the_backends_own_prim_kernels_change_nothing():
    t = opweave.ones(3)
    spy, calls = spying(opweave.ops.prims.exp.default)
    with registered(opweave.ops.prims.exp.default, spy, backend="cpu", source="cpu"):
        assert "kernel from cpu" in str(explain(opweave.ops.exp.default, t))
        opweave.exp(t)
    assert not calls
