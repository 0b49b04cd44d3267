"""The CPU backend's direct kernels for softmax, log_softmax, layer_norm, gelu and cross_entropy_loss agree
with the ops' decompositions (to rounding), on fast-path and fallback inputs, and are what the CPU runs."""

from __future__ import annotations

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

C = ow.ops.canonical
LAYOUTS = ("contiguous", "transposed", "sliced", "broadcast")
DTYPES = (ow.float32, ow.float64, ow.float16)
RTOL = {ow.float32: 2e-6, ow.float64: 1e-13, ow.float16: 0.0}


def _agree(direct, reference, dtype, rtol=None):
    assert direct.dtype is reference.dtype is dtype and direct.shape == reference.shape
    tol = RTOL[dtype] if rtol is None else rtol
    np.testing.assert_allclose(
        S.wide(np.array(direct.numpy())), S.wide(np.array(reference.numpy())), rtol=tol, atol=tol, equal_nan=True
    )


def _input(rng, shape, dtype, layout, specials):
    return S.make(S.values(rng, shape, dtype, "any", specials), dtype, layout)


common = dict(
    dtype=st.sampled_from(DTYPES),
    layout=st.sampled_from(LAYOUTS),
    specials=st.booleans(),
    seed=st.integers(0, 2**16),
)


@settings(max_examples=30)
@given(shape=st.sampled_from([(3, 5), (2, 3, 4), (7,), (0, 3), ()]), dim=st.integers(-1, 0), **common)
def test_softmax_kernels(shape, dim, dtype, layout, specials, seed):
    x = _input(np.random.default_rng(seed), shape, dtype, layout, specials)
    _agree(C.softmax.int(x, dim), C.softmax.int.decomposition(x, dim, None), dtype)
    _agree(C.log_softmax.int(x, dim), C.log_softmax.int.decomposition(x, dim, None), dtype)
    _agree(C._softmax(x, dim, False), C._softmax.default.decomposition(x, dim, False), dtype)
    _agree(C._log_softmax(x, dim, False), C._log_softmax.default.decomposition(x, dim, False), dtype)
    wide = C.softmax.int(x, dim, dtype=ow.float64)
    _agree(wide, C.softmax.int.decomposition(x, dim, ow.float64), ow.float64)


@settings(max_examples=30)
@given(
    shape=st.sampled_from([(3, 5), (2, 3, 4), (7,), (0, 3)]),
    k=st.integers(1, 2),
    affine=st.sampled_from(["none", "weight", "both", "other-dtype"]),
    **common,
)
def test_layer_norm_kernel(shape, k, affine, dtype, layout, specials, seed):
    rng = np.random.default_rng(seed)
    k = min(k, len(shape))
    x = _input(rng, shape, dtype, layout, specials)
    ns = list(shape[len(shape) - k :])
    pdtype = ow.float64 if affine == "other-dtype" else dtype
    w = ow.tensor(rng.standard_normal(ns), dtype=pdtype) if affine != "none" else None
    b = ow.tensor(rng.standard_normal(ns), dtype=pdtype) if affine in ("both", "other-dtype") else None
    direct = C.layer_norm(x, ns, w, b, 1e-5)
    reference = C.layer_norm.default.decomposition(x, ns, w, b, 1e-5, True)
    _agree(direct, reference, dtype, rtol=1e-4 if dtype is ow.float32 else None)


@settings(max_examples=30)
@given(
    shape=st.sampled_from([(3, 5), (2, 3, 4), (7,), (0,), ()]), approximate=st.sampled_from(["none", "tanh"]), **common
)
def test_gelu_kernel(shape, approximate, dtype, layout, specials, seed):
    x = _input(np.random.default_rng(seed), shape, dtype, layout, specials)
    _agree(C.gelu(x, approximate=approximate), C.gelu.default.decomposition(x, approximate), dtype)


@settings(max_examples=30)
@given(
    n=st.integers(1, 6),
    classes=st.integers(1, 5),
    reduction=st.sampled_from([0, 1, 2]),
    ignore=st.booleans(),
    fallback=st.sampled_from(["none", "weight", "smoothing", "3d"]),
    **common,
)
def test_cross_entropy_kernel(n, classes, reduction, ignore, fallback, dtype, layout, specials, seed):
    rng = np.random.default_rng(seed)
    shape = (n, classes, 2) if fallback == "3d" else (n, classes)
    x = _input(rng, shape, dtype, layout, specials)
    t = rng.integers(0, classes, (n, 2) if fallback == "3d" else (n,))
    if ignore:
        t.flat[0] = -100
    w = ow.tensor(rng.uniform(0.5, 2, classes), dtype=dtype) if fallback == "weight" else None
    ls = 0.1 if fallback == "smoothing" else 0.0
    args = (x, ow.tensor(t), w, reduction, -100, ls)
    _agree(
        C.cross_entropy_loss(*args),
        C.cross_entropy_loss.default.decomposition(*args),
        dtype,
        rtol=1e-5 if dtype is ow.float32 else None,
    )


def test_direct_kernels_are_dispatched_and_fall_back_with_the_decomposition_errors():
    x = ow.randn(3, 4)
    for op, args in (
        (C.softmax.int, (x, 1)),
        (C.layer_norm.default, (x, [4])),
        (C.gelu.default, (x,)),
        (C.cross_entropy_loss.default, (x, ow.tensor([0, 1, 2]))),
    ):
        assert ow.dispatch.explain(op, *args).reasons[-1] == "Dense×cpu: kernel from cpu", op.name
    with pytest.raises(ValueError, match="cross_entropy_loss.*out of bounds"):
        C.cross_entropy_loss(x, ow.tensor([0, 1, 4]))
    with pytest.raises(ValueError, match="softmax"):
        C.softmax.int(x, 2)
    with pytest.raises(ValueError, match="layer_norm"):
        C.layer_norm(x, [3])
    with pytest.raises(ValueError, match="gelu"):
        C.gelu(x, approximate="fast")
