"""The Dispatcher object: per-op cache invalidation, stacked registrations, snapshot/restore, decline."""

from __future__ import annotations

import numpy as np
import opweave
import pytest
from opweave import dispatch, ops
from opweave.dispatch import Decline, Layer


def _cached(op) -> set:
    return set(dispatch.cached_key_sets(op))


def test_registering_for_one_op_keeps_other_ops_caches():
    x = opweave.tensor([1.0, 2.0])
    ops.add.Tensor(x, x)
    ops.mm.default(x.reshape(1, 2), x.reshape(2, 1))
    assert _cached(ops.mm.default)
    with dispatch.registered(ops.add.Tensor, lambda a, b, alpha=1: a, backend="cpu"):
        assert _cached(ops.mm.default), "a registration for add flushed mm's cache"
        assert not _cached(ops.add.Tensor)


def test_fallback_registration_flushes_every_cache():
    x = opweave.tensor([1.0, 2.0])
    ops.mm.default(x.reshape(1, 2), x.reshape(2, 1))
    state = dispatch.snapshot()
    try:
        dispatch.register_fallback(Layer.Dense, "nosuchdevice", lambda op, *a: None, "test")
        assert not _cached(ops.mm.default)
    finally:
        dispatch.restore(state)


def test_registrations_stack_and_removal_restores_the_previous_kernel():
    x = opweave.tensor([1.0, 2.0])
    op = ops.prims.neg.default
    first = dispatch.register_kernel(op, Layer.Dense, "cpu", lambda a: opweave.tensor([7.0, 7.0]), "first")
    second = dispatch.register_kernel(op, Layer.Dense, "cpu", lambda a: opweave.tensor([8.0, 8.0]), "second")
    try:
        assert op(x).tolist() == [8.0, 8.0]
        second.remove()
        assert op(x).tolist() == [7.0, 7.0]
        second.remove()  # idempotent
        assert op(x).tolist() == [7.0, 7.0]
    finally:
        first.remove()
        second.remove()
    assert op(x).tolist() == [-1.0, -2.0]


def test_snapshot_restore_undoes_kernels_fallbacks_ops_and_autocast_rules():
    x = opweave.tensor([1.0, 2.0])
    state = dispatch.snapshot()
    before_kernels = dict(ops.sin.default.kernels())
    dispatch.register_kernel(ops.sin.default, Layer.Dense, "cpu", lambda a: a, "test")
    assert ops.sin.default(x) is x
    from opweave import library

    lib = library.Library("snaptest", "DEF")
    lib.define("twice(Tensor a) -> Tensor")
    assert hasattr(ops.snaptest, "twice")
    dispatch.restore(state)
    assert ops.sin.default.kernels() == before_kernels
    np.testing.assert_allclose(ops.sin.default(x).numpy(), np.sin([1.0, 2.0]).astype(np.float32))
    assert not hasattr(ops, "snaptest") or not hasattr(ops.snaptest, "twice")


def test_a_declining_kernel_hands_the_call_to_the_next_candidate():
    x = opweave.tensor([1.0, -2.0])
    calls = []

    def picky(a, b, alpha=1):
        calls.append(a.dtype)
        if a.dtype is not opweave.float64:
            raise Decline("only float64")
        return opweave.tensor([42.0], dtype=opweave.float64)

    with dispatch.registered(ops.sub.Tensor, picky, backend="cpu", source="picky"):
        assert ops.sub.Tensor(x, x).tolist() == [0.0, 0.0]  # the CPU's decomposition ran
        assert ops.sub.Tensor(x.to(opweave.float64), x.to(opweave.float64)).tolist() == [42.0]
        why = dispatch.explain(ops.sub.Tensor, x, x)
        assert why.reasons[-1] == "Dense×cpu: kernel from picky"
        assert any("CompositeImplicit" in a for a in why.alternatives)
        assert any("declined: only float64" in d for d in why.declines)
    assert calls == [opweave.float32, opweave.float64]


def test_when_every_candidate_declines_the_error_names_op_and_reasons():
    x = opweave.tensor([1.0])

    def no(a):
        raise Decline("never")

    with dispatch.registered(ops.prims.sqrt.default, no, backend="cpu", source="nope"):
        with pytest.raises(NotImplementedError, match=r"prims::sqrt.*declined: never"):
            ops.prims.sqrt(x)


def test_a_declined_call_keeps_no_reference_to_its_arguments():
    import gc
    import weakref

    def no(a):
        raise Decline("never")

    with dispatch.registered(ops.prims.sqrt.default, no, backend="cpu", source="nope"):
        x = opweave.tensor([4.0])
        ref = weakref.ref(x)
        with pytest.raises(NotImplementedError):
            ops.prims.sqrt(x)
        del x
        gc.collect()
        assert ref() is None
