"""View ops against NumPy: values, aliasing (writes through the view reach the base), strides, meta, errors."""

from __future__ import annotations

import math

import numpy as np
import opweave as ow
import pytest
from _shape_support import ALL_DTYPES, assert_same, check_meta, dtypes, layouts, make, meta_like, seeds, shapes, shares
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from opweave import ops

P = ops.prims
SETTINGS = settings(max_examples=20, deadline=None)


def check_alias(view, base, np_view_of_base):
    """Writing new values through ``view`` changes exactly ``np_view_of_base`` in the base's NumPy view.

    The old values are written back afterwards, so the caller's oracle stays valid.
    """
    if view.numel() == 0:
        return
    assert shares(view, base)
    v = view.numpy()
    old = v.copy()
    fresh = (np.arange(v.size).reshape(v.shape) % 7).astype(v.dtype)
    v[...] = fresh
    np.testing.assert_array_equal(np_view_of_base(base.numpy()), fresh)
    v[...] = old


def _factor(n_shape, rng):
    """A random shape with the same number of elements (maybe with a -1)."""
    n = math.prod(n_shape)
    if n == 0:
        return [0, 2] if rng.random() < 0.5 else [3, 0, 1]
    dims = []
    while n > 1:
        d = next(d for d in (2, 3, 5, 7, n) if n % d == 0)
        dims.append(d)
        n //= d
    rng.shuffle(dims)
    groups = []
    for d in dims:
        if groups and rng.random() < 0.5:
            groups[-1] *= d
        else:
            groups.append(d)
    if rng.random() < 0.3:
        groups.insert(int(rng.integers(0, len(groups) + 1)), 1)
    if groups and rng.random() < 0.4:
        groups[int(rng.integers(0, len(groups)))] = -1
    return groups


def _numpy_view(a, shape):
    """NumPy's no-copy reshape (None when it needs a copy): the same feasibility rule as torch's computeStride."""
    v = a.view()
    try:
        v.shape = shape
    except AttributeError:
        return None
    return v


# -- view / reshape ------------------------------------------------------------------


@SETTINGS
@given(shapes(), dtypes, layouts, seeds)
def test_view_and_reshape(shape, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    new = _factor(shape, rng)
    expected = a.reshape(new)
    reshaped = t.reshape(new)
    assert_same(reshaped, expected)
    npview = _numpy_view(t.numpy(), new)
    if npview is None and t.numel():
        with pytest.raises(ValueError, match="view size is not compatible"):
            t.view(new)
        assert not shares(reshaped, t)
        assert reshaped.is_contiguous()
    else:
        v = t.view(new)
        assert_same(v, expected)
        check_alias(v, t, lambda b: b.reshape(new))
        check_alias(reshaped, t, lambda b: b.reshape(new))
    check_meta(lambda x: x.reshape(new), reshaped, t, strides=True)


@pytest.mark.parametrize(
    ("shape", "strides", "new", "want"),
    [
        ((2, 3, 4), None, (4, 6), (6, 1)),
        ((2, 3, 4), None, (24,), (1,)),
        ((4, 3), (1, 4), (4, 3, 1), (1, 4, 4)),  # t() of a (3, 4) tensor, with a trailing size-1 dim
        ((4, 3), (1, 4), (1, 4, 3), (4, 1, 4)),  # a leading size-1 dim takes the chunk's outer stride
        ((2, 3, 4), (12, 1, 3), (2, 12), None),  # transposed inner dims: no view
        ((2, 6), (12, 2), (2, 2, 3), (12, 6, 2)),  # strided rows split
        ((0, 3), (3, 1), (3, 0), (1, 1)),  # empty: contiguous strides
    ],
)
def test_view_strides_by_hand(shape, strides, new, want):
    base = ow.zeros([64])
    t = P.as_strided(base, list(shape), list(strides or ow.empty(shape).stride()), 0)
    if want is None:
        with pytest.raises(ValueError, match="view size is not compatible"):
            t.view(new)
        assert t.reshape(new).is_contiguous()
    else:
        assert t.view(new).stride() == want


@pytest.mark.parametrize(
    ("make_view", "shape", "stride", "offset"),
    [
        (lambda t: t.unsqueeze(0), (1, 2, 3), (6, 3, 1), 0),
        (lambda t: t.unsqueeze(1), (2, 1, 3), (3, 3, 1), 0),
        (lambda t: t.unsqueeze(-1), (2, 3, 1), (3, 1, 1), 0),
        (lambda t: t.t(), (3, 2), (1, 3), 0),
        (lambda t: t.T, (3, 2), (1, 3), 0),
        (lambda t: ops.expand(t[0], [4, 3]), (4, 3), (0, 1), 0),
        (lambda t: ops.select.int(t, 1, 2), (2,), (3,), 2),
        (lambda t: ops.narrow(t, 1, 1, 2), (2, 2), (3, 1), 1),
        (lambda t: ops.slice.Tensor(t, 1, -2, None, 1), (2, 2), (3, 1), 1),
        (lambda t: ops.diagonal(t, 1), (2,), (4,), 1),
        (lambda t: ops.diagonal(t, -1), (1,), (4,), 3),
        (lambda t: ops.unfold(t, 1, 2, 1), (2, 2, 2), (3, 1, 1), 0),
        (lambda t: ops.movedim.int(t, 0, 1), (3, 2), (1, 3), 0),
        (lambda t: ops.view_as_real(ow.zeros([2, 3], dtype=ow.complex64)), (2, 3, 2), (6, 2, 1), 0),
        (lambda t: ops.squeeze.default(ow.zeros([1, 3, 1])), (3,), (1,), 0),
        (lambda t: ops.as_strided(t, [2, 2], [1, 2], 1), (2, 2), (1, 2), 1),
    ],
)
def test_view_metadata_by_hand(make_view, shape, stride, offset):
    t = ow.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    v = make_view(t)
    assert v.shape == shape and v.stride() == stride and v.storage_offset() == offset


def test_permute_and_T_strides_by_hand():
    t = ow.zeros([2, 3, 4])
    assert t.permute(2, 0, 1).stride() == (1, 12, 4)
    assert t.T.stride() == (1, 4, 12)
    assert t.mT.stride() == (12, 1, 4)
    assert ops.movedim.intlist(t, [0, 1], [2, 0]).shape == (3, 4, 2)


@SETTINGS
@given(shapes(), dtypes, layouts, seeds, st.data())
def test_flatten_unflatten_ravel(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    nd = max(t.ndim, 1)
    start = data.draw(st.integers(-nd, nd - 1))
    end = data.draw(st.integers(-nd, nd - 1))
    if t.ndim and start % nd > end % nd:
        with pytest.raises(ValueError, match="start_dim cannot come after end_dim"):
            t.flatten(start, end)
    else:
        s, e = start % nd, end % nd
        want = a.reshape(a.shape[:s] + (-1,) + a.shape[e + 1 :]) if a.ndim and a.size else a.reshape(-1)
        if a.ndim and a.size == 0:
            want = a.reshape(a.shape[:s] + (math.prod(a.shape[s : e + 1]),) + a.shape[e + 1 :])
        got = t.flatten(start, end)
        assert_same(got, want)
        if a.ndim and s == e:
            assert got is t
    assert_same(t.ravel(), a.reshape(-1))
    if t.ndim and t.shape[0] % 2 == 0 and t.shape[0]:
        u = ops.unflatten.int(t, 0, [2, -1])
        split = (2, a.shape[0] // 2) + a.shape[1:]
        assert_same(u, a.reshape(split))
        check_alias(u, t, lambda b: b.reshape(split))


@SETTINGS
@given(shapes(), dtypes, layouts, seeds)
def test_view_as_reshape_as(shape, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    other = ow.empty([a.size])
    assert_same(t.reshape_as(other), a.reshape(-1))
    if t.is_contiguous():
        v = t.view_as(other)
        check_alias(v, t, lambda b: b.reshape(-1))


@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_view_dtype(src, dst):
    rng = np.random.default_rng(0)
    t, a = make(rng, (3, 16), src)
    got = ops.view.dtype(t, dst)
    assert_same(got, a.view(dst.numpy))
    check_alias(got, t, lambda b: b.view(dst.numpy))
    check_meta(lambda x: ops.view.dtype(x, dst), got, t, strides=True)


def test_view_dtype_errors():
    t = ow.zeros([3, 4], dtype=ow.float32)
    with pytest.raises(ValueError, match="stride 1"):
        ops.view.dtype(t.mT, ow.float16)
    with pytest.raises(ValueError, match="at least 1 dimension"):
        ops.view.dtype(ow.zeros([], dtype=ow.float32), ow.int8)
    with pytest.raises(ValueError):
        ops.view.dtype(ow.zeros([3], dtype=ow.float32), ow.float64)


# -- adding, removing and reordering dims ---------------------------------------------------


@SETTINGS
@given(shapes(max_side=2), dtypes, layouts, seeds, st.data())
def test_squeeze_unsqueeze(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    got = ops.squeeze.default(t)
    assert_same(got, np.squeeze(a))
    check_alias(got, t, np.squeeze)
    nd = max(a.ndim, 1)
    d = data.draw(st.integers(-nd, nd - 1))
    want = np.squeeze(a, d) if a.ndim and a.shape[d] == 1 else a
    assert_same(ops.squeeze.dim(t, d), want)
    dims = data.draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd)) if a.ndim else []
    want = np.squeeze(a, tuple(i for i in dims if a.shape[i] == 1))
    assert_same(ops.squeeze.dims(t, dims), want)
    u = data.draw(st.integers(-a.ndim - 1, a.ndim))
    got = t.unsqueeze(u)
    assert_same(got, np.expand_dims(a, u))
    check_alias(got, t, lambda b: np.expand_dims(b, u))
    check_meta(lambda x: x.unsqueeze(u), got, t, strides=True)
    check_meta(lambda x: ops.squeeze.default(x), ops.squeeze.default(t), t, strides=True)


@SETTINGS
@given(shapes(), dtypes, layouts, seeds, st.data())
def test_transpose_permute_movedim(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    nd = max(a.ndim, 1)
    d0, d1 = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
    want = np.swapaxes(a, d0, d1) if a.ndim else a
    for fn in (ops.transpose.int, ops.swapaxes, ops.swapdims):
        got = fn(t, d0, d1)
        assert_same(got, want)
        check_alias(got, t, lambda b: np.swapaxes(b, d0, d1) if b.ndim else b)
    perm = list(rng.permutation(a.ndim))
    got = t.permute(perm)
    assert_same(got, np.transpose(a, perm))
    check_meta(lambda x: x.permute(perm), got, t, strides=True)
    k = data.draw(st.integers(0, a.ndim))
    src = [int(i) for i in rng.choice(a.ndim, k, replace=False)] if a.ndim else []
    dst = [int(i) for i in rng.choice(a.ndim, k, replace=False)] if a.ndim else []
    for op in (ops.movedim.intlist, ops.moveaxis.intlist):
        assert_same(op(t, src, dst), np.moveaxis(a, src, dst))
    if a.ndim:
        assert_same(ops.movedim.int(t, d0, d1), np.moveaxis(a, d0, d1))
        assert_same(ops.moveaxis.int(t, d0, d1), np.moveaxis(a, d0, d1))
    assert_same(t.T, np.transpose(a))
    assert_same(ops.numpy_T(t), a.T)


@SETTINGS
@given(shapes(max_dims=2), dtypes, layouts, seeds)
def test_t(shape, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    got = t.t()
    assert_same(got, a.T)
    check_alias(got, t, lambda b: b.T)


@SETTINGS
@given(shapes(min_dims=2), dtypes, layouts, seeds)
def test_matrix_transposes(shape, dtype, layout, seed):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    mt = np.swapaxes(a, -1, -2)
    assert_same(t.mT, mt)
    check_alias(t.mT, t, lambda b: np.swapaxes(b, -1, -2))
    assert_same(t.mH, mt.conj())
    assert_same(ops.adjoint(t), mt.conj())
    if a.ndim == 2:
        assert_same(t.H, mt.conj())
    if not dtype.is_complex and t.numel():
        assert shares(t.mH, t)
    check_meta(lambda x: x.mH, t.mH, t)


# -- broadcasting ----------------------------------------------------------------------------


@st.composite
def expand_args(draw):
    """A shape and a target it broadcasts to (with -1 for kept dims)."""
    shape = draw(shapes(max_side=3))
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    target = list(lead)
    for s in shape:
        if s == 1:
            target.append(draw(st.sampled_from([1, 3, 0, -1])))
        else:
            target.append(draw(st.sampled_from([s, -1])))
    return shape, target


@SETTINGS
@given(expand_args(), dtypes, layouts, seeds)
def test_expand_broadcast(args, dtype, layout, seed):
    shape, target = args
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    concrete = [s if s != -1 else shape[i - (len(target) - len(shape))] for i, s in enumerate(target)]
    want = np.broadcast_to(a, concrete)
    got = t.expand(target)
    assert_same(got, want)
    assert_same(ops.broadcast_to(t, target), want)
    assert_same(t.expand_as(ow.empty(concrete)), want)
    if got.numel():
        assert shares(got, t)
    for i, (n, s) in enumerate(zip(concrete, got.stride())):
        if i < len(concrete) - len(shape) or (shape[i - len(concrete) + len(shape)] == 1 and n != 1):
            assert s == 0
    check_meta(lambda x: x.expand(target), got, t, strides=True)
    other = ow.empty(concrete)
    x, y = ops.broadcast_tensors([t, other])
    assert x.shape == y.shape == tuple(concrete)
    assert_same(x, want)


def test_expand_errors():
    t = ow.zeros([3])
    with pytest.raises(ValueError, match="must match the existing size"):
        t.expand(2, 4)
    with pytest.raises(ValueError, match="leading, non-existing dimension"):
        t.expand(-1, 3)
    with pytest.raises(ValueError, match="greater or equal to the number of dimensions"):
        ow.zeros([2, 3]).expand([3])
    with pytest.raises(ValueError, match="cannot be broadcast"):
        ops.broadcast_tensors([ow.zeros([2]), ow.zeros([3])])


# -- selecting parts -----------------------------------------------------------------------------


@SETTINGS
@given(shapes(min_dims=1, max_side=5), dtypes, layouts, seeds, st.data())
def test_narrow_select_slice(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    d = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[d]
    lead = (slice(None),) * (d % a.ndim)
    start = data.draw(st.integers(-n, n))
    s0 = start + n if start < 0 else start
    length = data.draw(st.integers(0, n - s0))
    got = t.narrow(d, start, length)
    assert_same(got, a[lead + (slice(s0, s0 + length),)])
    check_alias(got, t, lambda b: b[lead + (slice(s0, s0 + length),)])
    if n:
        i = data.draw(st.integers(-n, n - 1))
        got = ops.select.int(t, d, i)
        assert_same(got, a[lead + (i,)])
        check_alias(got, t, lambda b: b[lead + (i,)])
        check_meta(lambda x: ops.select.int(x, d, i), got, t, strides=True)
    lo = data.draw(st.none() | st.integers(-2 * n - 2, 2 * n + 2))
    hi = data.draw(st.none() | st.integers(-2 * n - 2, 2 * n + 2))
    step = data.draw(st.integers(1, 3))
    got = ops.slice.Tensor(t, d, lo, hi, step)
    assert_same(got, a[lead + (slice(lo, hi, step),)])
    check_alias(got, t, lambda b: b[lead + (slice(lo, hi, step),)])
    check_meta(lambda x: ops.slice.Tensor(x, d, lo, hi, step), got, t, strides=True)


def test_narrow_tensor_start():
    t = ow.from_numpy(np.arange(10.0))
    assert_same(ops.narrow.Tensor(t, 0, ow.tensor(-3), 2), np.arange(10.0)[7:9])
    with pytest.raises(TypeError):
        ops.narrow.Tensor(t, 0, ow.tensor(1.0), 2)


@SETTINGS
@given(shapes(min_dims=1, max_side=4), dtypes, seeds, st.data())
def test_as_strided(shape, dtype, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype)
    n = a.size
    assume(n > 0)
    k = data.draw(st.integers(0, 3))
    size = data.draw(st.lists(st.integers(1, 3), min_size=k, max_size=k))
    stride = data.draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
    span = sum((s - 1) * st_ for s, st_ in zip(size, stride))
    assume(span < n)
    offset = data.draw(st.integers(0, n - 1 - span))
    flat = a.reshape(-1)
    item = flat.itemsize
    want = np.lib.stride_tricks.as_strided(flat[offset:], size, [s * item for s in stride])
    got = t.as_strided(size, stride, offset)
    assert_same(got, want)
    assert got.stride() == tuple(stride) and got.storage_offset() == offset
    if got.numel():
        assert shares(got, t)
    check_meta(lambda x: x.as_strided(size, stride, offset), got, t, strides=True)


@SETTINGS
@given(shapes(min_dims=2, max_side=4), dtypes, layouts, seeds, st.data())
def test_diagonal(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    nd = a.ndim
    d1 = data.draw(st.integers(-nd, nd - 1))
    d2 = data.draw(st.integers(-nd, nd - 1).filter(lambda x: x % nd != d1 % nd))
    off = data.draw(st.integers(-5, 5))
    got = t.diagonal(off, d1, d2)
    assert_same(got, np.diagonal(a, off, d1, d2))
    check_alias(got, t, lambda b: np.diagonal(b, off, d1, d2))
    check_meta(lambda x: x.diagonal(off, d1, d2), got, t, strides=True)


@SETTINGS
@given(shapes(max_side=5), dtypes, layouts, seeds, st.data())
def test_unfold(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    nd = max(a.ndim, 1)
    d = data.draw(st.integers(-nd, nd - 1))
    n = a.shape[d] if a.ndim else 1
    size = data.draw(st.integers(0, n))
    step = data.draw(st.integers(1, 3))
    got = t.unfold(d, size, step)
    if a.ndim == 0:
        want = a.reshape(1)[:size]
    else:
        win = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
        want = win[(slice(None),) * (d % a.ndim) + (slice(None, None, step),)]
    assert_same(got, want)
    if got.numel():
        assert shares(got, t)
    check_meta(lambda x: x.unfold(d, size, step), got, t, strides=True)


# -- splitting ----------------------------------------------------------------------------------


def _assert_parts(parts, wants, base):
    assert len(parts) == len(wants)
    for p, w in zip(parts, wants):
        assert_same(p, w)
        if p.numel():
            assert shares(p, base)


def _slices(a, d, bounds):
    lead = (slice(None),) * (d % a.ndim)
    return [a[lead + (slice(lo, hi),)] for lo, hi in zip(bounds[:-1], bounds[1:])]


@SETTINGS
@given(shapes(min_dims=1, max_side=7), dtypes, layouts, seeds, st.data())
def test_split_family(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    d = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[d]
    size = data.draw(st.integers(1 if n else 0, max(n, 1) + 1))
    bounds = list(range(0, n, size)) + [n] if size else [0, 0]
    if len(bounds) == 1:
        bounds = [0, 0]
    _assert_parts(t.split(size, d), _slices(a, d, bounds), t)
    cuts = sorted(data.draw(st.lists(st.integers(0, n), max_size=3)))
    sizes = [hi - lo for lo, hi in zip([0, *cuts], [*cuts, n])]
    for op in (ops.split_with_sizes, ops.split.sizes):
        _assert_parts(op(t, sizes, d), _slices(a, d, [0, *cuts, n]), t)
    sections = data.draw(st.integers(1, 5))
    _assert_parts(ops.tensor_split.sections(t, sections, d), np.array_split(a, sections, axis=d), t)
    indices = data.draw(st.lists(st.integers(-n - 2, n + 2), max_size=3))
    _assert_parts(ops.tensor_split.indices(t, indices, d), np.split(a, indices, axis=d), t)
    arg = ow.tensor(indices, dtype=ow.int64) if indices else ow.tensor(sections)
    want = np.split(a, indices, axis=d) if indices else np.array_split(a, sections, axis=d)
    _assert_parts(ops.tensor_split.tensor_indices_or_sections(t, arg, d), want, t)
    chunks = data.draw(st.integers(1, 5))
    per = -(-n // chunks)
    bounds = (list(range(0, n, per)) + [n]) if per else [0] * (chunks + 1)
    _assert_parts(t.chunk(chunks, d), _slices(a, d, bounds), t)
    _assert_parts(t.unbind(d), [np.take(a, i, axis=d) for i in range(n)], t)
    check_meta(lambda x: x.unbind(d), t.unbind(d), t, strides=True)


@pytest.mark.parametrize(
    ("name", "np_fn", "shape"),
    [
        ("hsplit", np.hsplit, (6,)),
        ("hsplit", np.hsplit, (2, 6)),
        ("vsplit", np.vsplit, (6, 2)),
        ("dsplit", np.dsplit, (2, 2, 6)),
    ],
)
def test_directional_splits(name, np_fn, shape):
    t, a = make(np.random.default_rng(1), shape, ow.float32)
    packet = getattr(ops, name)
    _assert_parts(packet.int(t, 3), np_fn(a, 3), t)
    _assert_parts(packet.array(t, [1, 4]), np_fn(a, [1, 4]), t)
    with pytest.raises(ValueError, match="not divisible"):
        packet.int(t, 4)


def test_split_errors():
    t = ow.zeros([4, 3])
    with pytest.raises(ValueError, match="non-negative"):
        t.split(-1)
    with pytest.raises(ValueError, match="only be 0 if dimension size is 0"):
        t.split(0)
    with pytest.raises(ValueError, match="sum exactly to 4"):
        ops.split_with_sizes(t, [1, 2])
    with pytest.raises(ValueError, match="larger than 0"):
        ops.tensor_split.sections(t, 0)
    with pytest.raises(ValueError, match="greater than 0"):
        t.chunk(0)
    with pytest.raises(ValueError):
        ops.vsplit.int(ow.zeros([4]), 2)
    with pytest.raises(ValueError):
        ops.unbind(ow.zeros([]))


# -- aliases and complex views ---------------------------------------------------------------------


@SETTINGS
@given(shapes(), dtypes, layouts, seeds)
def test_alias_detach(shape, dtype, layout, seed):
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    for fn in (ops.alias, ops.detach):
        v = fn(t)
        assert v is not t and v.stride() == t.stride() and v.storage_offset() == t.storage_offset()
        assert_same(v, a)
        check_alias(v, t, lambda b: b)


@SETTINGS
@given(shapes(), st.sampled_from([ow.complex64, ow.complex128]), layouts, seeds)
def test_view_as_real_and_back(shape, dtype, layout, seed):
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    r = ops.view_as_real(t)
    assert_same(r, np.stack([a.real, a.imag], -1))
    if t.is_contiguous():
        check_alias(r, t, lambda b: b[..., None].view(b.real.dtype))
    back = ops.view_as_complex(r)
    assert_same(back, a)
    assert back.stride() == t.stride() and back.storage_offset() == t.storage_offset()
    check_meta(ops.view_as_real, r, t, strides=True)


def test_complex_view_errors():
    with pytest.raises(TypeError, match="complex"):
        ops.view_as_real(ow.zeros([2]))
    with pytest.raises(TypeError):
        ops.view_as_complex(ow.zeros([2], dtype=ow.float16))
    with pytest.raises(ValueError, match="size 2"):
        ops.view_as_complex(ow.zeros([3]))
    with pytest.raises(ValueError, match="stride 1"):
        ops.view_as_complex(ow.zeros([2, 2]).mT)
    with pytest.raises(ValueError, match="one or more dimensions"):
        ops.view_as_complex(ow.zeros([]))


# -- in-place views ------------------------------------------------------------------------------------


def test_inplace_views_change_metadata():
    base = ow.from_numpy(np.arange(6.0).reshape(2, 3))
    t = ops.alias(base)
    assert t.t_() is t and t.shape == (3, 2) and t.stride() == (1, 3)
    assert t.unsqueeze_(0) is t and t.shape == (1, 3, 2)
    assert t.squeeze_() is t and t.shape == (3, 2)
    assert ops.transpose_(t, 0, 1) is t and t.shape == (2, 3)
    np.testing.assert_array_equal(t.numpy(), np.arange(6.0).reshape(2, 3))
    ops.as_strided_(t, [3], [2], 0)
    np.testing.assert_array_equal(t.numpy(), [0.0, 2.0, 4.0])
    assert base.shape == (2, 3)


# -- errors -----------------------------------------------------------------------------------------


ERRORS = [
    (lambda: ow.zeros([2, 3]).view(4), ValueError, "invalid for input of size 6"),
    (lambda: ow.zeros([2, 3]).view(-1, -1), ValueError, "only one dimension can be inferred"),
    (lambda: ow.zeros([0, 3]).reshape(0, -1), ValueError, "ambiguous"),
    (lambda: ow.zeros([2, 3]).reshape(-2, 3), ValueError, "invalid shape dimension"),
    (lambda: ow.zeros([2, 3]).squeeze(2), ValueError, "out of range"),
    (lambda: ops.squeeze.dims(ow.zeros([1, 1]), [0, 0]), ValueError, "multiple times"),
    (lambda: ow.zeros([2, 3]).unsqueeze(3), ValueError, "out of range"),
    (lambda: ow.zeros([2, 3]).permute(0), ValueError, "number of dims don't match"),
    (lambda: ow.zeros([2, 3]).permute(0, 0), ValueError, "multiple times"),
    (lambda: ow.zeros([2, 3, 4]).t(), ValueError, "<= 2 dimensions"),
    (lambda: ops.movedim.intlist(ow.zeros([2, 3]), [0], [0, 1]), ValueError, "same number of dims"),
    (lambda: ops.movedim.intlist(ow.zeros([2, 3]), [0, 0], [0, 1]), ValueError, "multiple times"),
    (lambda: ow.zeros([]).narrow(0, 0, 1), ValueError, "0-dim"),
    (lambda: ow.zeros([3]).narrow(0, 2, 2), ValueError, "exceeds dimension size"),
    (lambda: ow.zeros([3]).narrow(0, 4, 0), ValueError, "start out of range"),
    (lambda: ow.zeros([3]).narrow(0, 0, -1), ValueError, "non-negative"),
    (lambda: ops.select.int(ow.zeros([3]), 0, 3), ValueError, "out of range"),
    (lambda: ops.select.int(ow.zeros([]), 0, 0), ValueError, "0-dim"),
    (lambda: ops.slice.Tensor(ow.zeros([3]), 0, 0, 2, 0), ValueError, "step must be positive"),
    (lambda: ow.zeros([3]).as_strided([2], [-1]), ValueError, "negative strides"),
    (lambda: ow.zeros([3]).as_strided([2, 2], [1]), ValueError, "mismatch in length"),
    (lambda: ow.zeros([3]).as_strided([4], [1]), ValueError, "reach past the storage"),
    (lambda: ow.zeros([3]).diagonal(), ValueError, "at least 2 dimensions"),
    (lambda: ow.zeros([3, 3]).diagonal(0, 1, -1), ValueError, "cannot be identical"),
    (lambda: ow.zeros([3]).unfold(0, 4, 1), ValueError, "maximum size"),
    (lambda: ow.zeros([3]).unfold(0, 2, 0), ValueError, "step is 0"),
    (lambda: ow.zeros([3]).mT, ValueError, "matrices"),
    (lambda: ow.zeros([2, 2, 2]).H, ValueError, "2-D"),
    (lambda: ops.unflatten.int(ow.zeros([4]), 0, []), ValueError, "non-empty"),
    (lambda: ops.unflatten.int(ow.zeros([4]), 0, [3, -1]), ValueError, "invalid for input of size 4"),
]


@pytest.mark.parametrize("dims", [(), []])
def test_permute_of_a_0dim_tensor_is_a_0dim_view(dims):
    # PyTorch: ``torch.tensor(1.).permute(())`` and ``torch.permute(t, [])`` are 0-dim views of ``t``
    t = ow.tensor(2.5)
    for got in (t.permute(dims), ow.permute(t, dims), ops.permute.default(t, dims)):
        assert got.shape == () and got.stride() == ()
        assert got._base is t and got.data_ptr() == t.data_ptr()
        assert got.item() == 2.5


def test_permute_validates_dims_as_pytorch_does():
    # PyTorch 2.x: ``t.permute()`` is a TypeError (``dims`` is required, also for a 0-dim tensor); a wrong
    # count or a repeated dim is a RuntimeError; a dim out of range is an IndexError
    with pytest.raises(TypeError, match="dims"):
        ow.tensor(1.0).permute()
    with pytest.raises(RuntimeError, match="number of dims"):
        ow.zeros([2, 3]).permute(0)
    with pytest.raises(RuntimeError, match="number of dims"):
        ow.tensor(1.0).permute(0)
    with pytest.raises(RuntimeError, match="multiple times"):
        ow.zeros([2, 3]).permute(1, 1)
    with pytest.raises(IndexError, match="out of range"):
        ow.zeros([2, 3]).permute(0, 2)
    with pytest.raises(IndexError, match="out of range"):
        ow.zeros([2, 3]).permute(-3, 0)
    assert ow.zeros([2, 3]).permute(-1, -2).shape == (3, 2)


@pytest.mark.parametrize(("fn", "exc", "match"), ERRORS)
def test_errors(fn, exc, match):
    with pytest.raises(exc, match=match):
        fn()


def test_views_on_meta_keep_the_meta_device():
    m = ow.empty([2, 3, 4], device="meta")
    assert m.view(6, 4).device.type == "meta"
    assert ops.split_with_sizes(m, [1, 3], 2)[1].shape == (2, 3, 3)
    assert m.mT.reshape(-1).shape == (24,)
    assert meta_like(m).shape == (2, 3, 4)


def test_packet_picks_the_overload_by_argument_type():
    t = ow.zeros([2, 3, 4])
    assert t.view(ow.int32).dtype is ow.int32
    assert [p.shape[1] for p in t.split([1, 2], 1)] == [1, 2]
    assert ow.zeros([1, 2, 1]).squeeze((0, 2)).shape == (2,)
    assert len(t.tensor_split([1, 2], 2)) == 3
