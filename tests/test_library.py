"""``opweave.library``: define, impl at every kind of dispatch key, fallback, and deregistration on close."""

from __future__ import annotations

import numpy as np
import opweave
import pytest
from opweave import dispatch, library, ops
from opweave.dispatch import Layer


def _scale_cpu(x, factor):
    return opweave.tensor(x.numpy() * factor)


def test_define_impl_and_close_remove_everything():
    with library.Library("libtest", "DEF") as lib:
        op = lib.define("scale(Tensor self, float factor) -> Tensor")
        assert op.name == "libtest::scale"
        lib.impl("scale", _scale_cpu, "CPU")
        lib.impl("scale", lambda x, factor: opweave.empty(x.shape, dtype=x.dtype, device="meta"), "Meta")
        x = opweave.tensor([1.0, 2.0])
        np.testing.assert_array_equal(ops.libtest.scale(x, 3.0).numpy(), np.array([3.0, 6.0], np.float32))
        m = opweave.empty((4,), device="meta")
        assert ops.libtest.scale(m, 2.0).shape == (4,)
        assert "kernel from libtest" in dispatch.explain(op, x, 2.0).reasons[-1]
    assert "libtest::scale" not in {o.name for o in ops.catalog()}
    with pytest.raises(KeyError):
        ops.lookup("libtest::scale")


def test_second_def_library_for_a_namespace_is_refused_until_the_first_closes():
    lib = library.Library("libtest2", "DEF")
    try:
        with pytest.raises(RuntimeError, match="already defined"):
            library.Library("libtest2", "DEF")
        frag = library.Library("libtest2", "FRAGMENT")
        frag.define("one(Tensor a) -> Tensor", decomposition=lambda a: a)
        frag.close()
    finally:
        lib.close()
    library.Library("libtest2", "DEF").close()
    with pytest.raises(RuntimeError, match="cannot define"):
        library.Library("aten", "IMPL").define("nope(Tensor a) -> Tensor")
    with pytest.raises(RuntimeError, match="already defined by opweave"):
        library.Library("aten", "DEF")


def test_impl_on_an_aten_op_is_undone_by_close_and_the_previous_kernel_returns():
    x = opweave.tensor([1.0, 4.0])
    lib = library.Library("aten", "IMPL")
    lib.impl("sqrt", lambda a: opweave.tensor([-5.0]), "cpu")
    assert ops.sqrt(x).tolist() == [-5.0]
    lib.close()
    assert ops.sqrt(x).tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError, match="closed"):
        lib.impl("sqrt", lambda a: a, "cpu")


@pytest.mark.parametrize(
    ("key", "parsed"),
    [
        ("CPU", ("kernel", Layer.Dense, "cpu")),
        ("cpu", ("kernel", Layer.Dense, "cpu")),
        ("Meta", ("kernel", Layer.Dense, "meta")),
        ("vnpu", ("kernel", Layer.Dense, "vnpu")),
        ("Autocast", ("kernel", Layer.Autocast, None)),
        ("AutocastCPU", ("kernel", Layer.Autocast, "cpu")),
        ("QuantizedCPU", ("kernel", Layer.Quantized, "cpu")),
        ("Quantized", ("kernel", Layer.Quantized, None)),
        ("Python", ("kernel", Layer.Python, None)),
        ("CompositeImplicitAutograd", ("implicit", None, None)),
        ("CompositeExplicitAutograd", ("explicit", None, None)),
        ((Layer.Dense, "cpu"), ("kernel", Layer.Dense, "cpu")),
    ],
)
def test_dispatch_keys(key, parsed):
    assert library.dispatch_key(key) == parsed


@pytest.mark.parametrize("key", ["", "not a key!", (1, "cpu"), 3])
def test_bad_dispatch_keys_raise_value_error(key):
    with pytest.raises(ValueError, match="dispatch key"):
        library.dispatch_key(key)


def test_composite_implicit_and_explicit_kernels():
    with library.Library("libtest3", "DEF") as lib:
        lib.define("twice(Tensor a) -> Tensor")
        x = opweave.tensor([1.0, 2.0])
        with pytest.raises(NotImplementedError, match="libtest3::twice"):
            ops.libtest3.twice(x)
        lib.impl("twice", lambda a: ops.add(a, a), "CompositeImplicitAutograd")
        assert ops.libtest3.twice(x).tolist() == [2.0, 4.0]
        explicit = lib.impl("twice", lambda a: ops.mul(a, 2.0), "CompositeExplicitAutograd")
        assert "CompositeExplicit kernel from libtest3" in dispatch.explain(ops.libtest3.twice.default, x).reasons[-1]
        explicit.remove()
        assert "CompositeImplicit kernel" in dispatch.explain(ops.libtest3.twice.default, x).reasons[-1]


def test_layer_impl_without_keyset_runs_below_its_layer():
    seen = []

    def python_layer(a):
        seen.append("python")
        return ops.neg(a)  # reaches the layers below: the Python layer is excluded while this runs

    x = opweave.tensor([1.0])
    with library.Library("aten", "IMPL") as lib:
        lib.impl("neg", python_layer, "Python")
        with dispatch.keys_included(dispatch.layer_bit(Layer.Python)):
            assert ops.neg(x).tolist() == [-1.0]
    assert seen == ["python"]


def test_fallback_registration_and_removal():
    calls = []

    def boxed(op, keyset, *args):
        calls.append(op.name)
        return op.redispatch(keyset & ~dispatch.layers_at_and_above(Layer.Python), *args)

    x = opweave.tensor([1.0])
    with library.Library("aten", "FRAGMENT") as lib:
        lib.fallback(boxed, "Python")
        with dispatch.keys_included(dispatch.layer_bit(Layer.Python)):
            ops.exp(x)
    with dispatch.keys_included(dispatch.layer_bit(Layer.Python)):
        ops.exp(x)
    assert calls and calls.count("exp") == 1


def test_decorator_form():
    with library.Library("libtest4", "DEF") as lib:
        lib.define("plus1(Tensor a) -> Tensor")

        @library.impl("libtest4::plus1", "cpu", lib=lib)
        def plus1(a):
            return opweave.tensor(a.numpy() + 1)

        assert ops.libtest4.plus1(opweave.tensor([1.0])).tolist() == [2.0]
