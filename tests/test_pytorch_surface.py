"""PyTorch's API surface around the ops: return_types, error types, requires_grad, dtype conversion
methods, memory formats, Tensor varargs, ``opweave.functional`` and ``bilinear``, against NumPy."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
import scipy.linalg as sla
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=15, deadline=None)
seeds = st.integers(0, 2**32 - 1)


def _rand(seed, shape, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- return types ------------------------------------------------------------------------------------


def test_multi_output_ops_return_named_tuples():
    x = np.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    r = ow.max(ow.tensor(x), 1)
    assert type(r) is ow.return_types.max and r._fields == ("values", "indices")
    np.testing.assert_array_equal(r.values.numpy(), x.max(1))
    np.testing.assert_array_equal(r.indices.numpy(), x.argmax(1))
    values, indices = ow.sort(ow.tensor(x), 1)
    np.testing.assert_array_equal(values.numpy(), np.sort(x, 1))
    svd = ow.linalg.svd(ow.tensor(x), full_matrices=False)
    assert svd._fields == ("U", "S", "Vh")
    np.testing.assert_allclose(svd.S.numpy(), np.linalg.svd(x, compute_uv=False))
    out = (ow.empty(0), ow.empty(0, dtype=ow.int64))
    r = ow.min(ow.tensor(x), 0, out=out)
    assert r._fields == ("values", "indices") and r.values is out[0]
    assert isinstance(ow.native_layer_norm(ow.tensor(x), [3], None, None, 1e-5), tuple)


# -- error types -------------------------------------------------------------------------------------


def test_errors_inside_ops_are_also_pytorchs_types():
    a = ow.ones(2, 3)
    with pytest.raises(ValueError) as info:
        ow.mm(a, a)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ow.errors.ValueRuntimeError)
    with pytest.raises(TypeError) as info:
        ow.dot(ow.ones(2), ow.ones(2, dtype=ow.float64))
    assert isinstance(info.value, RuntimeError)
    for call in (lambda: a.sum(2), lambda: ow.transpose(a, 0, 5), lambda: ow.ops.prims.sum(a, [7])):
        with pytest.raises(IndexError) as info:
            call()
        assert isinstance(info.value, ValueError)
    with pytest.raises(TypeError) as info:  # argument binding stays a plain TypeError, as in PyTorch
        ow.add(a, "x")
    assert not isinstance(info.value, RuntimeError)
    np.testing.assert_array_equal(a.numpy(), np.ones((2, 3)))  # a failing call leaves its inputs intact


# -- requires_grad -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda **k: ow.zeros(2, 3, **k),
        lambda **k: ow.ones((2,), **k),
        lambda **k: ow.full((2,), 1.5, **k),
        lambda **k: ow.arange(3.0, **k),
        lambda **k: ow.linspace(0, 1, 5, **k),
        lambda **k: ow.eye(3, **k),
        lambda **k: ow.randn(2, **k),
        lambda **k: ow.zeros_like(ow.ones(2), **k),
        lambda **k: ow.tensor([1.0, 2.0], **k),
        lambda **k: ow.ones(2).new_zeros((3,), **k),
    ],
)
def test_factories_accept_and_store_requires_grad(make):
    t = make(requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.grad is None
    assert not make().requires_grad and not make(requires_grad=False).requires_grad
    out = ow.mul(t, 2)
    assert out.requires_grad and not out.is_leaf  # results of ops on it are recorded


def test_requires_grad_flag_rules():
    t = ow.ones(2)
    assert t.requires_grad_() is t and t.requires_grad
    t.requires_grad = False
    assert not t.requires_grad
    with pytest.raises(RuntimeError):
        ow.zeros(2, dtype=ow.int64, requires_grad=True)
    with pytest.raises(RuntimeError):
        ow.ones(2, dtype=ow.int32).requires_grad_()


# -- dtype conversions and memory formats -------------------------------------------------------------

CONVERSIONS = {
    "float": ow.float32,
    "double": ow.float64,
    "half": ow.float16,
    "bfloat16": ow.bfloat16,
    "int": ow.int32,
    "long": ow.int64,
    "short": ow.int16,
    "char": ow.int8,
    "byte": ow.uint8,
    "bool": ow.bool,
    "cfloat": ow.complex64,
    "cdouble": ow.complex128,
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
@SETTINGS
@given(seed=seeds, shape=st.lists(st.integers(0, 3), max_size=3))
def test_conversion_methods_are_to_dtype(name, seed, shape):
    x = (_rand(seed, shape) * 50).round()
    target = CONVERSIONS[name]
    got = getattr(ow.tensor(x), name)()
    assert got.dtype is target and got.shape == tuple(shape)
    expected = x.astype(np.int64).astype(target.numpy) if target.kind in ("int", "uint") else x.astype(target.numpy)
    np.testing.assert_array_equal(np.asarray(got.numpy()).astype(np.complex128), expected.astype(np.complex128))
    same = ow.tensor(x).to(target)
    assert getattr(same, name)() is same


def test_chalf_is_refused_and_memory_formats():
    with pytest.raises(TypeError, match="complex32"):
        ow.ones(2).chalf()
    assert repr(ow.channels_last) == "opweave.channels_last" and ow.contiguous_format == "contiguous_format"
    x = np.arange(24.0).reshape(1, 2, 3, 4)
    t = ow.tensor(x)
    cl = t.to(memory_format=ow.channels_last)
    assert cl.stride() == (24, 1, 8, 2)
    np.testing.assert_array_equal(cl.numpy(), x)
    assert t.to(memory_format=ow.contiguous_format) is t
    assert t.float(memory_format=ow.channels_last).stride() == (24, 1, 8, 2)
    assert t.to(ow.float32, False, True) is not t  # positional non_blocking, copy


# -- varargs -----------------------------------------------------------------------------------------


@SETTINGS
@given(seed=seeds, sizes=st.lists(st.integers(0, 4), min_size=1, max_size=3))
def test_tensor_varargs(seed, sizes):
    arrays = [_rand(seed + i, (n,)) for i, n in enumerate(sizes)]
    ts = [ow.tensor(a) for a in arrays]
    for got, expected in zip(ow.meshgrid(*ts, indexing="ij"), np.meshgrid(*arrays, indexing="ij")):
        np.testing.assert_array_equal(got.numpy(), expected)
    blocks = [a[None, :] for a in arrays]
    np.testing.assert_array_equal(ow.block_diag(*[ow.tensor(b) for b in blocks]).numpy(), sla.block_diag(*blocks))
    product = np.array(np.meshgrid(*arrays, indexing="ij")).reshape(len(arrays), -1).T
    got = ow.cartesian_prod(*ts)
    np.testing.assert_array_equal(got.numpy(), product if len(arrays) > 1 else arrays[0])
    column, rows = arrays[0][:, None], [a[None, :] for a in arrays[1:2]]
    got = ow.broadcast_tensors(ow.tensor(column), *[ow.tensor(r) for r in rows])
    for g, expected in zip(got, np.broadcast_arrays(column, *rows)):
        np.testing.assert_array_equal(g.numpy(), expected)
    a, b = _rand(seed, (2, 3)), _rand(seed + 1, (3, 4))
    np.testing.assert_allclose(ow.einsum("ij,jk", ow.tensor(a), ow.tensor(b)).numpy(), a @ b)
    with pytest.raises(TypeError):
        ow.cat(ow.ones(2), ow.ones(2))  # ATen ops keep taking one list


# -- opweave.functional -------------------------------------------------------------------------------


@SETTINGS
@given(seed=seeds, shape=st.lists(st.integers(1, 4), min_size=2, max_size=3))
def test_norm_with_string_p_and_dim(seed, shape):
    x = _rand(seed, shape)
    t = ow.tensor(x)
    np.testing.assert_allclose(ow.norm(t).numpy(), np.sqrt((x * x).sum()))
    np.testing.assert_allclose(ow.norm(t, "fro", dim=1).numpy(), np.sqrt((x * x).sum(1)))
    np.testing.assert_allclose(
        t.norm(p=3, dim=(0, 1), keepdim=True).numpy(), (np.abs(x) ** 3).sum((0, 1), keepdims=True) ** (1 / 3)
    )
    nuc = np.linalg.svd(x, compute_uv=False).sum(-1)
    np.testing.assert_allclose(ow.norm(t, "nuc", dim=(-2, -1)).numpy(), nuc)
    np.testing.assert_allclose(ow.norm(t, p=None, dim=0).numpy(), np.sqrt((x * x).sum(0)))


@SETTINGS
@given(seed=seeds, d=st.integers(0, 2))
def test_tensordot_dims_forms(seed, d):
    a, b = _rand(seed, (2, 3, 4)), _rand(seed + 1, (3, 4, 2))
    ta, tb = ow.tensor(a), ow.tensor(b)
    np.testing.assert_allclose(
        ow.tensordot(ta, tb, dims=([1, 2], [0, 1])).numpy(), np.tensordot(a, b, ([1, 2], [0, 1]))
    )
    np.testing.assert_allclose(ow.tensordot(ta, tb, dims=ow.tensor([[2], [1]])).numpy(), np.tensordot(a, b, ([2], [1])))
    c = _rand(seed + 3, (3, 4)[2 - d :] + (5,)) if d else _rand(seed + 3, (5,))
    np.testing.assert_allclose(ow.tensordot(ta, ow.tensor(c), dims=d).numpy(), np.tensordot(a, c, d))
    np.testing.assert_allclose(ow.tensordot(ta, tb, [1, 2], [0, 1]).numpy(), np.tensordot(a, b, ([1, 2], [0, 1])))
    with pytest.raises(RuntimeError):
        ow.tensordot(ta, tb, dims=-1)


@SETTINGS
@given(seed=seeds, p=st.sampled_from([0.0, 1.0, 2.0, 3.5]))
def test_cdist_compute_mode_strings(seed, p):
    a, b = _rand(seed, (4, 3)), _rand(seed + 1, (5, 3))
    diff = np.abs(a[:, None, :] - b[None, :, :])
    expected = (diff != 0).sum(-1).astype(float) if p == 0 else (diff**p).sum(-1) ** (1 / p)
    for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        got = ow.cdist(ow.tensor(a), ow.tensor(b), p=p, compute_mode=mode)
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError):
        ow.cdist(ow.tensor(a), ow.tensor(b), compute_mode="fast")


@SETTINGS
@given(seed=seeds, shape=st.lists(st.integers(0, 4), max_size=3))
def test_nonzero_as_tuple(seed, shape):
    x = np.random.default_rng(seed).integers(0, 2, shape)
    got = ow.nonzero(ow.tensor(x), as_tuple=True)
    expected = np.nonzero(np.atleast_1d(x))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g.numpy(), e)
    np.testing.assert_array_equal(ow.tensor(x).nonzero().numpy(), np.argwhere(x))


@SETTINGS
@given(seed=seeds, n=st.integers(1, 4))
def test_lu_matches_scipy(seed, n):
    a = _rand(seed, (n, n)) + n * np.eye(n)
    LU, piv = ow.lu(ow.tensor(a))
    lu, piv_sp = sla.lu_factor(a)
    np.testing.assert_allclose(LU.numpy(), lu, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(piv.numpy(), piv_sp + 1)
    LU2, piv2, info = ow.tensor(a).lu(get_infos=True)
    assert int(info) == 0


def test_broadcast_shapes_and_unravel_index():
    assert ow.broadcast_shapes((3, 1), (4,), 1) == np.broadcast_shapes((3, 1), (4,), (1,))
    assert ow.broadcast_shapes() == ()
    with pytest.raises(RuntimeError):
        ow.broadcast_shapes((2,), (3,))
    idx = np.array([[0, 5], [11, 23]])
    for shape in ((2, 3, 4), (24,), 24):
        got = ow.unravel_index(ow.tensor(idx), shape)
        expected = np.unravel_index(idx, shape if isinstance(shape, tuple) else (shape,))
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(g.numpy(), e)
            assert g.dtype is ow.int64
    with pytest.raises(TypeError):
        ow.unravel_index(ow.tensor([1.0]), (2,))
    with pytest.raises(ValueError):
        ow.unravel_index(ow.tensor([1]), (-2,))


# -- bilinear and F.linear ----------------------------------------------------------------------------


@SETTINGS
@given(seed=seeds, batch=st.lists(st.integers(0, 3), max_size=2), bias=st.booleans())
def test_bilinear_and_linear(seed, batch, bias):
    x1, x2 = _rand(seed, tuple(batch) + (3,)), _rand(seed + 1, tuple(batch) + (4,))
    w, b = _rand(seed + 2, (2, 3, 4)), _rand(seed + 3, (2,))
    F = ow.nn.functional
    got = F.bilinear(ow.tensor(x1), ow.tensor(x2), ow.tensor(w), ow.tensor(b) if bias else None)
    expected = np.einsum("...i,oij,...j->...o", x1, w, x2) + (b if bias else 0)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    lw = _rand(seed + 4, (5, 3))
    np.testing.assert_allclose(F.linear(ow.tensor(x1), ow.tensor(lw)).numpy(), x1 @ lw.T, rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError):
        F.bilinear(ow.tensor(x1), ow.tensor(x1), ow.tensor(w))


# -- low-rank SVD/PCA, linear_cross_entropy, integer polynomial arguments --------------------------------


@SETTINGS
@given(seed=seeds, m=st.integers(2, 7), n=st.integers(2, 7), rank=st.integers(1, 3))
def test_svd_and_pca_lowrank_are_exact_on_low_rank_matrices(seed, m, n, rank):
    a = _rand(seed, (m, rank)) @ _rand(seed + 1, (rank, n))
    q = min(rank + 1, m, n)
    U, S, V = ow.svd_lowrank(ow.tensor(a), q=q)
    assert U.shape == (m, q) and S.shape == (q,) and V.shape == (n, q)
    np.testing.assert_allclose((U.numpy() * S.numpy()) @ V.numpy().T, a, atol=1e-9 * max(1, np.abs(a).max()))
    np.testing.assert_allclose(U.numpy().T @ U.numpy(), np.eye(q), atol=1e-9)
    np.testing.assert_allclose(S.numpy()[:rank], np.linalg.svd(a, compute_uv=False)[:rank], rtol=1e-9)
    centred = a - a.mean(0)
    _, S, _ = ow.pca_lowrank(ow.tensor(a), q=q)
    np.testing.assert_allclose(S.numpy()[:rank], np.linalg.svd(centred, compute_uv=False)[:rank], rtol=1e-8, atol=1e-12)
    with pytest.raises(ValueError):
        ow.pca_lowrank(ow.tensor(a), q=min(m, n) + 1)


@SETTINGS
@given(seed=seeds, batch=st.integers(1, 4), smoothing=st.sampled_from([0.0, 0.1]))
def test_linear_cross_entropy(seed, batch, smoothing):
    x, w, b = _rand(seed, (batch, 3)), _rand(seed + 1, (5, 3)), _rand(seed + 2, (5,))
    target = np.random.default_rng(seed).integers(0, 5, batch)
    logits = x @ w.T + b
    logp = logits - logits.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    expected = np.mean(-(1 - smoothing) * logp[np.arange(batch), target] - smoothing * logp.mean(1))
    got = ow.nn.functional.linear_cross_entropy(
        ow.tensor(x), ow.tensor(w), ow.tensor(target), linear_bias=ow.tensor(b), label_smoothing=smoothing
    )
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10)
    with pytest.raises(RuntimeError):
        ow.nn.functional.linear_cross_entropy(ow.tensor(x), ow.tensor(w[:, :2]), ow.tensor(target))


def test_orthogonal_polynomials_take_integer_arguments():
    import scipy.special as sp

    x, n = np.array([-2, 0, 1, 3]), np.array([0, 1, 2, 3])
    got = ow.special.chebyshev_polynomial_t(ow.tensor(x), ow.tensor(n))
    assert got.dtype is ow.float32
    np.testing.assert_allclose(got.numpy(), sp.eval_chebyt(n, x), rtol=1e-6)
    np.testing.assert_allclose(
        ow.special.hermite_polynomial_h(ow.tensor(x), 2).numpy(), sp.eval_hermite(2, x), rtol=1e-6
    )


# -- PyTorch's argument and out= checks, and semantics ------------------------------------------------


@pytest.mark.parametrize("name", ["maximum", "minimum", "atan2", "fmax", "logical_and", "gcd", "isclose"])
def test_numbers_are_refused_where_pytorch_requires_a_tensor(name):
    t = ow.tensor([1, 2, 3])
    fn = getattr(ow, name)
    for call in (lambda: fn(t, 2), lambda: fn(2, t), lambda: getattr(t, name)(2)):
        with pytest.raises(TypeError, match="must be Tensor"):
            call()
    assert fn(t, t).shape == (3,)
    np.testing.assert_array_equal(ow.add(t, 2).numpy(), [3, 4, 5])  # add/mul/sub/div take numbers, as PyTorch


def test_out_partially_overlapping_an_input_raises():
    a = ow.arange(6.0)
    with pytest.raises(RuntimeError, match="single memory location"):
        ow.gather(a, 0, ow.tensor([0, 1, 2]), out=a[1:4])
    with pytest.raises(RuntimeError, match="single memory location"):
        ow.cat([a[:2], a[2:4]], out=a[1:5])
    np.testing.assert_array_equal(a.numpy(), np.arange(6.0))  # inputs intact
    b = ow.tensor([1.0, 2.0])
    assert ow.add(b, 1, out=b) is b  # exactly the input is allowed (elementwise in place)
    np.testing.assert_array_equal(b.numpy(), [2.0, 3.0])


@SETTINGS
@given(seed=seeds)
def test_pytorch_semantics_sign_pow_logsumexp(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(6)
    x[rng.integers(0, 6)] = np.nan
    np.testing.assert_array_equal(ow.sign(ow.tensor(x)).numpy(), np.where(np.isnan(x), 0, np.sign(x)))
    base, exp = rng.integers(-3, 4, 8), rng.integers(-4, 4, 8)
    expected = np.where(
        exp >= 0,
        np.power(base, np.maximum(exp, 0)),
        np.where(base == 1, 1, np.where(base == -1, np.where(exp % 2 != 0, -1, 1), 0)),
    )
    np.testing.assert_array_equal((ow.tensor(base) ** ow.tensor(exp)).numpy(), expected)
    v = float(rng.uniform(500, 2000))
    np.testing.assert_allclose(ow.logsumexp(ow.tensor(v), 0).numpy(), v)
    z = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    # complex logarithms are compared through exp (the imaginary part is defined modulo 2 pi)
    np.testing.assert_allclose(np.exp(ow.logsumexp(ow.tensor(z), 0).numpy()), np.exp(z).sum(), rtol=1e-12)
    w = rng.standard_normal(4) + 1j * rng.standard_normal(4)
    got = ow.logaddexp(ow.tensor(z), ow.tensor(w)).numpy()
    np.testing.assert_allclose(np.exp(got), np.exp(z) + np.exp(w), rtol=1e-12, atol=1e-12)
    assert ow.bernoulli(ow.tensor(0.5)).shape == ()
