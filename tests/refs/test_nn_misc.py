"""Activations with parameters or noise, dropout, embeddings, one-hot and distances against NumPy formulas;
random ops by seeded reproducibility and statistics; the F wrappers' ``inplace=`` and ``dim=None`` rules."""

from __future__ import annotations

import math
import warnings

import _ew_support as S
import numpy as np
import opweave as ow
import pytest
import scipy.spatial.distance as ssd
from hypothesis import given, settings
from hypothesis import strategies as st

F = ow.nn.functional
C = ow.ops.canonical
LAYOUTS = ("contiguous", "transposed", "sliced", "broadcast")
TOL = {ow.float16: 5e-3, ow.bfloat16: 3e-2, ow.float32: 3e-5, ow.float64: 1e-10}


def _vals(t):
    return S.wide(np.array(t.numpy()))


def _close(actual, expected, dtype=None, tol=None):
    dtype = dtype or actual.dtype
    assert actual.dtype is dtype, (actual.dtype, dtype)
    tol = TOL[dtype] if tol is None else tol
    np.testing.assert_allclose(_vals(actual), np.asarray(expected, dtype=np.float64), rtol=tol, atol=tol)


# -- activations -----------------------------------------------------------------------------------


@settings(max_examples=20)
@given(
    shape=st.sampled_from([(4, 6), (2, 4, 3), (6,), (0, 2)]),
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from([ow.float16, ow.bfloat16, ow.float32, ow.float64]),
    seed=st.integers(0, 2**16),
)
def test_glu(shape, layout, dtype, seed):
    rng = np.random.default_rng(seed)
    dim = next(d for d in range(len(shape) - 1, -1, -1) if shape[d] % 2 == 0)
    x = S.make(rng.standard_normal(shape), dtype, layout)
    a, b = np.split(_vals(x), 2, axis=dim)
    _close(F.glu(x, dim), a / (1 + np.exp(-b)), dtype)
    out = ow.empty(0, dtype=dtype)
    C.glu(x, dim, out=out)
    _close(out, a / (1 + np.exp(-b)), dtype)


def test_glu_errors():
    with pytest.raises(ValueError, match="glu.*even"):
        F.glu(ow.randn(3, 5))
    with pytest.raises(ValueError, match="glu"):
        F.glu(ow.tensor(1.0))
    with pytest.raises(TypeError, match="glu"):
        F.glu(ow.ones(4, dtype=ow.int64))


@pytest.mark.parametrize(
    "shape,wshape", [((4, 3), (3,)), ((2, 3, 4), (1,)), ((5,), (1,)), ((), (1,)), ((2, 3, 2, 2), (3,))]
)
def test_prelu(shape, wshape):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(shape), rng.uniform(0, 1, wshape)
    wb = np.reshape(w, [1, -1] + [1] * (len(shape) - 2)) if w.size > 1 else w.reshape(())
    _close(F.prelu(ow.tensor(x), ow.tensor(w)), np.where(x > 0, x, wb * x))
    if w.size == 1:
        _close(C._prelu_kernel(ow.tensor(x), ow.tensor(w)), np.where(x > 0, x, w * x))


def test_prelu_errors():
    with pytest.raises(ValueError, match="prelu.*channels"):
        F.prelu(ow.randn(4, 3), ow.ones(4))
    with pytest.raises(ValueError, match="prelu"):
        F.prelu(ow.randn(4, 3), ow.ones(3, 1))


def test_rrelu_eval_and_training():
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((200, 50))
    x = ow.tensor(xv)
    _close(F.rrelu(x, 0.1, 0.3), np.where(xv >= 0, xv, xv * 0.2))
    ow.manual_seed(3)
    a = F.rrelu(x, 0.1, 0.3, training=True)
    ow.manual_seed(3)
    b = F.rrelu(x, 0.1, 0.3, training=True)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    av = _vals(a)
    np.testing.assert_array_equal(av[xv >= 0], xv[xv >= 0])
    slopes = av[xv < 0] / xv[xv < 0]
    assert slopes.min() >= 0.1 - 1e-12 and slopes.max() <= 0.3 + 1e-12
    assert abs(slopes.mean() - 0.2) < 0.01  # U(0.1, 0.3) has mean 0.2
    noise = ow.zeros(200, 50, dtype=ow.float64)
    ow.manual_seed(3)
    c = C.rrelu_with_noise(x, noise, 0.1, 0.3, True)
    np.testing.assert_array_equal(c.numpy(), a.numpy())
    nv = _vals(noise)
    np.testing.assert_allclose(nv[xv < 0], slopes)
    assert (nv[xv >= 0] == 1).all()
    y = ow.tensor(xv.copy())
    assert F.rrelu(y, 0.1, 0.3, inplace=True) is y
    _close(y, np.where(xv >= 0, xv, xv * 0.2))
    with pytest.raises(ValueError, match="rrelu"):
        F.rrelu(x, 0.5, 0.1)


INPLACE = {
    "relu": ((), lambda x: np.maximum(x, 0)),
    "relu6": ((), lambda x: np.clip(x, 0, 6)),
    "elu": ((0.5,), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    "selu": ((), lambda x: 1.0507009873554805 * np.where(x > 0, x, 1.6732632423543772 * np.expm1(x))),
    "celu": ((2.0,), lambda x: np.where(x > 0, x, 2 * np.expm1(x / 2))),
    "leaky_relu": ((0.2,), lambda x: np.where(x > 0, x, 0.2 * x)),
    "hardtanh": ((-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5)),
    "hardsigmoid": ((), lambda x: np.clip(x + 3, 0, 6) / 6),
    "hardswish": ((), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "silu": ((), lambda x: x / (1 + np.exp(-x))),
    "mish": ((), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    "threshold": ((0.5, -1.0), lambda x: np.where(x <= 0.5, -1.0, x)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_functional_activations_inplace(name):
    rng = np.random.default_rng(2)
    xv = rng.standard_normal((3, 4)) * 4
    args, ref = INPLACE[name]
    fn = getattr(F, name)
    x = ow.tensor(xv)
    out = fn(x, *args)
    _close(out, ref(xv))
    _close(x, xv)  # untouched
    assert fn(x, *args, inplace=True) is x
    _close(x, ref(xv))
    if hasattr(F, name + "_"):
        y = ow.tensor(xv)
        assert getattr(F, name + "_")(y, *args) is y
        _close(y, ref(xv))


def test_softmax_family_and_implicit_dim():
    rng = np.random.default_rng(3)
    xv = rng.standard_normal((2, 3, 4))
    x = ow.tensor(xv)
    e = np.exp(xv - xv.max(0, keepdims=True))
    with pytest.warns(UserWarning, match="Implicit dimension"):
        out = F.softmax(x)  # 3-D: dim 0
    _close(out, e / e.sum(0, keepdims=True))
    with pytest.warns(UserWarning):
        assert F.log_softmax(ow.tensor(xv[0])).shape == (3, 4)  # 2-D: dim 1
    e = np.exp(-xv - (-xv).max(2, keepdims=True))
    _close(F.softmin(x, 2), e / e.sum(2, keepdims=True))
    assert F.softmax(x, -1, dtype=ow.float32).dtype is ow.float32
    _close(F.softsign(x), xv / (1 + np.abs(xv)))
    _close(F.tanhshrink(x), xv - np.tanh(xv))
    _close(F.logsigmoid(x), -np.logaddexp(0, -xv))
    _close(F.gelu(x, approximate="tanh"), 0.5 * xv * (1 + np.tanh(math.sqrt(2 / math.pi) * (xv + 0.044715 * xv**3))))


def test_gumbel_softmax():
    ow.manual_seed(0)
    logits = ow.tensor(np.log(np.array([[0.1, 0.2, 0.7]] * 4000)))
    soft = F.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(_vals(soft).sum(1), 1.0, rtol=1e-10)
    hard = F.gumbel_softmax(logits, hard=True)
    hv = _vals(hard)
    assert set(np.unique(hv)) <= {0.0, 1.0} and (hv.sum(1) == 1).all()
    np.testing.assert_allclose(hv.mean(0), [0.1, 0.2, 0.7], atol=0.03)  # Gumbel-max samples the categorical


# -- dropout -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["feature_dropout", "feature_alpha_dropout"])
def test_feature_dropout_reproducible_and_per_channel(name):
    op = getattr(C, name)
    x = ow.ones(64, 32, 3, 3, dtype=ow.float64)
    ow.manual_seed(7)
    a = _vals(op(x, 0.3, True))
    ow.manual_seed(7)
    b = _vals(op(x, 0.3, True))
    np.testing.assert_array_equal(a, b)
    ow.manual_seed(8)
    assert not np.array_equal(a, _vals(op(x, 0.3, True)))
    # one draw per (sample, channel): constant over the spatial dims
    assert (a == a[..., :1, :1]).all()
    per_channel = a[:, :, 0, 0]
    if name == "feature_dropout":
        assert set(np.unique(per_channel)) <= {0.0, 1 / 0.7}
        assert abs((per_channel == 0).mean() - 0.3) < 0.05
    else:  # kept: a (1 + alpha' p); dropped: -a alpha' (1 - p), a = ((alpha'^2 p + 1)(1 - p))^-1/2
        alpha = 1.7580993408473766
        scale = 1 / math.sqrt((alpha**2 * 0.3 + 1) * 0.7)
        kept, dropped = scale * (1 + alpha * 0.3), -scale * alpha * 0.7
        np.testing.assert_allclose(np.unique(per_channel), sorted([kept, dropped]))
        assert abs(np.isclose(per_channel, dropped).mean() - 0.3) < 0.05
    np.testing.assert_array_equal(_vals(op(x, 0.3, False)), 1.0)
    np.testing.assert_array_equal(_vals(op(x, 1.0, True)), 0.0)
    with pytest.raises(ValueError, match=name):
        op(x, 1.5, True)
    with pytest.raises(ValueError, match=name):
        op(ow.ones(5), 0.5, True)


def test_dropout_wrappers():
    x = ow.ones(8, 6, 4, 4)
    ow.manual_seed(1)
    out = F.dropout2d(x, 0.5)
    v = _vals(out)
    assert (v == v[..., :1, :1]).all() and set(np.unique(v)) <= {0.0, 2.0}
    unbatched = F.dropout2d(ow.ones(6, 4, 4), 0.5)
    assert unbatched.shape == (6, 4, 4)
    assert F.dropout1d(ow.ones(6, 4), 0.5).shape == (6, 4)
    assert F.dropout3d(ow.ones(2, 3, 2, 2, 2), 0.5, training=False).numpy().sum() == 48
    y = ow.ones(100, 100)
    assert F.dropout(y, 0.5, inplace=True) is y
    assert abs((_vals(y) == 0).mean() - 0.5) < 0.05
    with pytest.raises(ValueError, match="dropout"):
        F.dropout(y, 2.0)
    with pytest.raises(ValueError, match="dropout2d"):
        F.dropout2d(ow.ones(4, 4), 0.5)
    assert F.alpha_dropout(ow.ones(3), 0.5).shape == (3,)


# -- embeddings -------------------------------------------------------------------------------------------


@settings(max_examples=15)
@given(
    ishape=st.sampled_from([(4,), (2, 3), (), (0,)]),
    layout=st.sampled_from(LAYOUTS),
    itype=st.sampled_from([ow.int64, ow.int32]),
    seed=st.integers(0, 2**16),
)
def test_embedding(ishape, layout, itype, seed):
    rng = np.random.default_rng(seed)
    w = S.make(rng.standard_normal((6, 3)), ow.float32, layout)
    idx = rng.integers(0, 6, ishape)
    _close(F.embedding(ow.tensor(idx, dtype=itype), w), _vals(w)[idx])


def test_embedding_max_norm_and_errors():
    rng = np.random.default_rng(4)
    wv = rng.standard_normal((5, 3)) * 3
    w = ow.tensor(wv)
    out = F.embedding(ow.tensor([[0, 2], [2, 4]]), w, padding_idx=-1, max_norm=1.0)
    ref = wv.copy()
    for r in (0, 2, 4):
        n = np.linalg.norm(wv[r])
        if n > 1:
            ref[r] = wv[r] / (n + 1e-7)
    _close(w, ref)  # rows renormalized in place
    _close(out, ref[[[0, 2], [2, 4]]])
    with pytest.raises(IndexError, match="embedding.*out of range"):
        F.embedding(ow.tensor([0, 5]), w)
    with pytest.raises(TypeError, match="embedding"):
        F.embedding(ow.tensor([0.0, 1.0]), w)
    with pytest.raises(ValueError, match="padding_idx"):
        F.embedding(ow.tensor([0]), w, padding_idx=7)
    x = ow.tensor(wv)
    r = C.embedding_renorm(x, ow.tensor([1]), 0.5, 1.0)
    _close(x, wv)
    _close(r[1], wv[1] * 0.5 / (np.abs(wv[1]).sum() + 1e-7))


def _bag_ref(w, idx, offsets, mode, psw=None, include_last=False, pad=None):
    bags = len(offsets) - 1 if include_last else len(offsets)
    ends = list(offsets[1:bags]) + [offsets[bags] if include_last else len(idx)]
    out = np.zeros((bags, w.shape[1]))
    for b in range(bags):
        members = [i for i in range(offsets[b], ends[b]) if idx[i] != pad]
        if not members:
            continue
        rows = w[idx[members]]
        if mode == "sum":
            out[b] = (rows * (1 if psw is None else psw[members][:, None])).sum(0)
        elif mode == "mean":
            out[b] = rows.mean(0)
        else:
            out[b] = rows.max(0)
    return out


@settings(max_examples=20)
@given(
    mode=st.sampled_from(["sum", "mean", "max"]),
    n=st.integers(0, 8),
    bags=st.integers(1, 4),
    include_last=st.booleans(),
    pad=st.sampled_from([None, 1]),
    weighted=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_embedding_bag(mode, n, bags, include_last, pad, weighted, seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((5, 3))
    idx = rng.integers(0, 5, n)
    offsets = np.sort(np.concatenate([[0], rng.integers(0, n + 1, bags - 1)]))
    if include_last:
        offsets = np.concatenate([offsets, [n]])
    psw = rng.standard_normal(n) if weighted and mode == "sum" else None
    out = F.embedding_bag(
        ow.tensor(idx),
        ow.tensor(w),
        ow.tensor(offsets),
        mode=mode,
        per_sample_weights=None if psw is None else ow.tensor(psw),
        include_last_offset=include_last,
        padding_idx=pad,
    )
    _close(out, _bag_ref(w, idx, offsets, mode, psw, include_last, pad))


def test_embedding_bag_2d_input_and_aux_outputs():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((6, 2))
    idx = np.array([[0, 3, 5], [2, 2, 1]])
    _close(F.embedding_bag(ow.tensor(idx), ow.tensor(w), mode="max"), w[idx].max(1))
    out, offset2bag, bag_size, max_idx = C._embedding_bag(
        ow.tensor(w), ow.tensor([0, 3, 5, 2]), ow.tensor([0, 1, 1]), False, 2
    )
    assert offset2bag.numpy().tolist() == [0, 2, 2, 2]
    assert bag_size.numpy().tolist() == [1, 0, 3]
    rows = np.array([0, 3, 5, 2])
    assert (max_idx.numpy()[2] == rows[1:][np.argmax(w[rows[1:]], 0)]).all()
    assert (max_idx.numpy()[1] == -1).all()
    with pytest.raises(ValueError, match="offsets"):
        F.embedding_bag(ow.tensor(idx), ow.tensor(w), ow.tensor([0, 1]))
    with pytest.raises(ValueError, match="per_sample_weights"):
        F.embedding_bag(ow.tensor(idx), ow.tensor(w), mode="mean", per_sample_weights=ow.ones(2, 3))
    with pytest.raises(ValueError, match="offsets"):
        C.embedding_bag(ow.tensor(w), ow.tensor([0, 1]), ow.tensor([1]))


def test_one_hot():
    t = np.array([[0, 3], [2, 1]])
    np.testing.assert_array_equal(F.one_hot(ow.tensor(t)).numpy(), np.eye(4, dtype=np.int64)[t])
    out = F.one_hot(ow.tensor(t), 6)
    assert out.dtype is ow.int64 and out.shape == (2, 2, 6)
    with pytest.raises(ValueError, match="one_hot"):
        F.one_hot(ow.tensor([0, 4]), 3)
    with pytest.raises(TypeError, match="one_hot"):
        F.one_hot(ow.tensor([0.0]))
    with pytest.raises(NotImplementedError, match="one_hot"):
        F.one_hot(ow.empty(3, dtype=ow.int64, device="meta"))
    assert F.one_hot(ow.empty(3, dtype=ow.int64, device="meta"), 5).shape == (3, 5)


# -- distances ----------------------------------------------------------------------------------------------

P_VALUES = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, math.inf])


@settings(max_examples=20)
@given(
    shapes=st.sampled_from([((4, 5), (4, 5)), ((3, 4), (1, 4)), ((2, 3, 4), (3, 4)), ((5,), (5,))]),
    p=P_VALUES,
    keepdim=st.booleans(),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_pairwise_distance(shapes, p, keepdim, layout, seed):
    rng = np.random.default_rng(seed)
    a = S.make(rng.standard_normal(shapes[0]), ow.float64, layout)
    b = ow.tensor(rng.standard_normal(shapes[1]))
    ref = np.linalg.norm(_vals(a) - _vals(b) + 1e-6, ord=p, axis=-1, keepdims=keepdim)
    _close(F.pairwise_distance(a, b, p, keepdim=keepdim), ref)


@settings(max_examples=15)
@given(
    shapes=st.sampled_from([((4, 5), (4, 5)), ((3, 4), (1, 4)), ((2, 3, 4), (3, 4))]),
    dim=st.sampled_from([0, -1]),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_cosine_similarity(shapes, dim, layout, seed):
    rng = np.random.default_rng(seed)
    a = S.make(rng.standard_normal(shapes[0]), ow.float64, layout)
    bv = rng.standard_normal(shapes[1])
    av, bv = np.broadcast_arrays(_vals(a), bv)
    na = np.maximum(np.linalg.norm(av, axis=dim, keepdims=True), 1e-8)
    nb = np.maximum(np.linalg.norm(bv, axis=dim, keepdims=True), 1e-8)
    _close(F.cosine_similarity(a, ow.tensor(np.ascontiguousarray(bv)), dim), ((av / na) * (bv / nb)).sum(dim))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, math.inf, 0.0])
def test_pdist_and_cdist(p):
    rng = np.random.default_rng(6)
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    metric = {1.0: "cityblock", 2.0: "euclidean", math.inf: "chebyshev"}.get(p)
    if metric:
        ref_p, ref_c = ssd.pdist(x, metric), ssd.cdist(x, y, metric)
    elif p == 0:
        ref_p = ssd.pdist(x, lambda u, v: np.count_nonzero(u - v))
        ref_c = ssd.cdist(x, y, lambda u, v: np.count_nonzero(u - v))
    else:
        ref_p, ref_c = ssd.pdist(x, "minkowski", p=p), ssd.cdist(x, y, "minkowski", p=p)
    _close(F.pdist(ow.tensor(x), p), ref_p)
    _close(C._pdist_forward(ow.tensor(x), p), ref_p)
    _close(F.cdist(ow.tensor(x), ow.tensor(y), p), ref_c)
    batched = F.cdist(ow.tensor(np.stack([x, 2 * x])), ow.tensor(y), p)
    _close(batched[1], ssd.cdist(2 * x, y, metric) if metric else _vals(F.cdist(ow.tensor(2 * x), ow.tensor(y), p)))


def test_distance_errors_and_edge_cases():
    assert F.pdist(ow.randn(1, 3)).shape == (0,)
    assert F.cdist(ow.randn(0, 3), ow.randn(2, 3)).shape == (0, 2)
    with pytest.raises(ValueError, match="pdist"):
        F.pdist(ow.randn(4))
    with pytest.raises(ValueError, match="pdist.*p"):
        F.pdist(ow.randn(4, 3), -1)
    with pytest.raises(ValueError, match="cdist"):
        F.cdist(ow.randn(4, 3), ow.randn(4, 2))
    with pytest.raises(ValueError, match="compute_mode"):
        F.cdist(ow.randn(4, 3), ow.randn(4, 3), compute_mode="fast")
    with pytest.raises(TypeError, match="cosine_similarity"):
        F.cosine_similarity(ow.ones(3, dtype=ow.int64), ow.ones(3, dtype=ow.int64), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert F.cosine_similarity(ow.zeros(2, 3), ow.ones(2, 3)).numpy().tolist() == [0.0, 0.0]


def test_euclidean_dist_and_embedding_bag_forward_only():
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    _close(C._euclidean_dist(ow.tensor(x), ow.tensor(y)), ssd.cdist(x, y))
    w = rng.standard_normal((6, 2))
    idx, offsets = np.array([0, 2, 4, 1, 5]), np.array([0, 2])
    out = C._embedding_bag_forward_only(ow.tensor(w), ow.tensor(idx), ow.tensor(offsets), False, 1)
    _close(out[0], _bag_ref(w, idx, offsets, "mean"))
