"""Copying shape ops against NumPy/SciPy: joins, flips, rolls, repeats, triangles, diagonals, padding, conversions."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import opweave as ow
import pytest
import scipy.linalg
from _shape_support import (
    ALL_DTYPES,
    assert_same,
    check_meta,
    dtypes,
    layouts,
    make,
    meta_like,
    promote,
    result_type,
    seeds,
    shapes,
    shares,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave import ops

P = ops.prims
SETTINGS = settings(max_examples=20, deadline=None)


def _unchanged(t, a):
    assert_same(t, a)


# -- contiguous, clone, copy_ ----------------------------------------------------------------


@SETTINGS
@given(shapes(), dtypes, layouts, seeds)
def test_contiguous_and_clone(shape, dtype, layout, seed):
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    c = t.contiguous()
    assert_same(c, a)
    assert c.is_contiguous() or not t.numel()
    if t.is_contiguous():
        assert c is t
    elif t.numel():
        assert not shares(c, t)
    k = t.clone()
    assert_same(k, a)
    if t.numel():
        assert not shares(k, t)
    assert_same(ops.clone(t, memory_format="contiguous_format"), a)
    check_meta(lambda x: x.clone(), k, t, strides=True)
    out = ow.empty([0], dtype=dtype)
    assert ops.clone(t, out=out) is out
    assert_same(out, a)


def test_clone_preserves_dense_strides_by_hand():
    t = ow.zeros([3, 4]).mT  # (4, 3) with strides (1, 4)
    assert t.clone().stride() == (1, 4)
    assert ops.clone(t, memory_format="contiguous_format").stride() == (3, 1)
    sliced = ow.zeros([4, 6])[:, ::2]
    assert sliced.clone().stride() == (3, 1)  # not dense: packed
    x = ow.zeros([2, 3, 4, 5])
    assert x.contiguous(memory_format="channels_last").stride() == (60, 1, 15, 3)
    assert ops.clone(x, memory_format="channels_last").stride() == (60, 1, 15, 3)


@st.composite
def copy_args(draw):
    """A destination shape and a source shape that broadcasts to it."""
    dst = draw(shapes(max_side=3))
    src = [draw(st.sampled_from([s, 1])) for s in dst]
    return dst, tuple(src[draw(st.integers(0, len(src))) :])


@SETTINGS
@given(copy_args(), dtypes, dtypes, layouts, seeds)
def test_copy_(shapes_, dst_dtype, src_dtype, layout, seed):
    dst_shape, src_shape = shapes_
    rng = np.random.default_rng(seed)
    t, _ = make(rng, dst_shape, dst_dtype, layout)
    s, b = make(rng, src_shape, src_dtype, "transposed")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert t.copy_(s) is t
    want = np.broadcast_to(b.real if src_dtype.is_complex and not dst_dtype.is_complex else b, dst_shape)
    with np.errstate(invalid="ignore", over="ignore"):
        assert_same(t, want.astype(dst_dtype.numpy))
    if src_dtype.is_complex and not dst_dtype.is_complex:
        assert any("discards the imaginary part" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = ops.copy(ow.zeros(dst_shape, dtype=dst_dtype), s)
    assert_same(f, t.numpy())


def test_copy_across_devices_and_overlaps():
    m = ow.empty([2, 3], device="meta")
    assert m.copy_(ow.ones([3])) is m  # CPU -> meta
    with pytest.raises(RuntimeError):
        ow.zeros([2, 3]).copy_(ow.empty([2, 3], device="meta"))  # a meta tensor has no data
    a = ow.from_numpy(np.arange(5.0))
    a[1:].copy_(a[:-1])  # overlapping source and destination
    np.testing.assert_array_equal(a.numpy(), [0, 0, 1, 2, 3])
    b = ow.from_numpy(np.arange(4.0))
    assert b.copy_(b) is b


def test_copy_errors_leave_self_unchanged():
    t = ow.from_numpy(np.arange(3.0))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        t.copy_(ow.ones([2, 3]))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        t.copy_(ow.ones([4]))
    with pytest.raises(ValueError, match="single memory location"):
        ow.zeros([1]).expand(3).copy_(ow.ones([3]))
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2])


# -- joining --------------------------------------------------------------------------------


@st.composite
def cat_args(draw):
    """Shapes equal except along ``dim`` (with legacy 1-D empty tensors mixed in) and their dtypes."""
    base = draw(shapes(min_dims=1, max_side=3))
    dim = draw(st.integers(-len(base), len(base) - 1))
    n = draw(st.integers(1, 4))
    out = []
    for _ in range(n):
        if draw(st.integers(0, 5)) == 0:
            out.append((0,))
            continue
        s = list(base)
        s[dim] = draw(st.integers(0, 3))
        out.append(tuple(s))
    return out, dim, [draw(dtypes) for _ in out]


@SETTINGS
@given(cat_args(), layouts, seeds)
def test_cat(args, layout, seed):
    shapes_, dim, dts = args
    rng = np.random.default_rng(seed)
    pairs = [make(rng, s, d, layout) for s, d in zip(shapes_, dts)]
    tensors = [p[0] for p in pairs]
    want_dtype = dts[0]
    for d in dts[1:]:
        want_dtype = promote(want_dtype, d)
    kept = [a for (_, a), s in zip(pairs, shapes_) if s != (0,)]
    with np.errstate(invalid="ignore"):
        want = np.concatenate([a.astype(want_dtype.numpy) for a in kept], dim) if kept else np.zeros(0)
    for op in (ops.cat, ops.concat, ops.concatenate):
        got = op(tensors, dim)
        assert_same(got, want, want_dtype)
        assert got.is_contiguous() or not got.numel()
    check_meta(lambda *xs: ops.cat(list(xs), dim), got, *tensors)
    out = ow.empty([1], dtype=want_dtype)
    with pytest.warns(UserWarning, match="resized") if got.shape != (1,) else warnings.catch_warnings():
        ops.cat(tensors, dim, out=out)
    assert_same(out, want, want_dtype)
    for a in pairs:
        _unchanged(*a)


@SETTINGS
@given(shapes(max_side=3), st.integers(1, 3), dtypes, layouts, seeds, st.data())
def test_stack_family(shape, n, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    pairs = [make(rng, shape, dtype, layout) for _ in range(n)]
    ts, arrays = [p[0] for p in pairs], [p[1] for p in pairs]
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    assert_same(ops.stack(ts, dim), np.stack(arrays, dim))
    check_meta(lambda *xs: ops.stack(list(xs), dim), ops.stack(ts, dim), *ts)
    assert_same(ops.hstack(ts), np.hstack(arrays))
    assert_same(ops.vstack(ts), np.vstack(arrays))
    assert_same(ops.row_stack(ts), np.vstack(arrays))
    assert_same(ops.dstack(ts), np.dstack(arrays))
    if len(shape) <= 2:
        assert_same(ops.column_stack(ts), np.column_stack(arrays))


@SETTINGS
@given(st.lists(st.tuples(shapes(max_dims=2, max_side=3), dtypes), min_size=1, max_size=4), seeds)
def test_block_diag(items, seed):
    rng = np.random.default_rng(seed)
    pairs = [make(rng, s, d) for s, d in items]
    want_dtype = result_type([(len(s), d) for s, d in items])
    with np.errstate(invalid="ignore"):
        want = scipy.linalg.block_diag(*[np.atleast_1d(a).astype(want_dtype.numpy) for _, a in pairs])
    got = ops.block_diag([t for t, _ in pairs])
    if got.numel():
        assert_same(got, want.astype(want_dtype.numpy), want_dtype)
    assert got.shape == want.shape


def test_block_diag_empty_and_errors():
    e = ops.block_diag([])
    assert e.shape == (1, 0) and e.dtype is ow.get_default_dtype()
    with pytest.raises(ValueError, match="2 or fewer dimensions"):
        ops.block_diag([ow.zeros([1, 1, 1])])


def test_join_errors():
    with pytest.raises(ValueError, match="non-empty"):
        ops.cat([])
    with pytest.raises(ValueError, match="zero-dimensional tensor"):
        ops.cat([ow.zeros([2]), ow.zeros([])])
    with pytest.raises(ValueError, match="Sizes of tensors must match except in dimension 0"):
        ops.cat([ow.zeros([2, 3]), ow.zeros([2, 4])])
    with pytest.raises(ValueError, match="same number of dimensions"):
        ops.cat([ow.zeros([2, 3]), ow.zeros([2])])
    with pytest.raises(ValueError, match="out of range"):
        ops.cat([ow.zeros([2])], 1)
    with pytest.raises(ValueError, match="equal size"):
        ops.stack([ow.zeros([2]), ow.zeros([3])])
    with pytest.raises(ValueError, match="non-empty"):
        ops.hstack([])
    with pytest.raises(RuntimeError):
        ops.cat([ow.zeros([2]), ow.empty([2], device="meta")])


def test_cat_legacy_empty_skipping():
    x = ow.ones([2, 3], dtype=ow.int32)
    got = ops.cat([ow.zeros([0]), x, ow.zeros([0], dtype=ow.float64)], 1)
    assert got.shape == (2, 3) and got.dtype is ow.float64
    assert ops.cat([ow.zeros([0]), ow.zeros([0])]).shape == (0,)


# -- flip, roll, rot90 --------------------------------------------------------------------------


@SETTINGS
@given(shapes(), dtypes, layouts, seeds, st.data())
def test_flip(shape, dtype, layout, seed, data):
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    nd = max(len(shape), 1)
    dims = data.draw(st.lists(st.integers(0, nd - 1), unique=True, max_size=nd)) if shape else []
    got = t.flip(dims)
    assert_same(got, np.flip(a, dims) if dims else a)
    if t.numel():
        assert not shares(got, t)
    check_meta(lambda x: x.flip(dims), got, t)
    out = ow.empty(shape, dtype=dtype)
    assert ops.flip(t, dims, out=out) is out
    if len(shape) >= 2:
        assert_same(t.fliplr(), np.fliplr(a))
    if len(shape) >= 1:
        assert_same(t.flipud(), np.flipud(a))
    _unchanged(t, a)


@SETTINGS
@given(shapes(max_side=4), dtypes, layouts, seeds, st.data())
def test_roll(shape, dtype, layout, seed, data):
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    shift = data.draw(st.integers(-9, 9))
    assert_same(ops.roll(t, [shift]), np.roll(a, shift))
    if shape:
        k = data.draw(st.integers(1, len(shape)))
        dims = data.draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=k, max_size=k))
        shifts = data.draw(st.lists(st.integers(-9, 9), min_size=k, max_size=k))
        got = ops.roll(t, shifts, dims)
        assert_same(got, np.roll(a, shifts, dims))
        check_meta(lambda x: ops.roll(x, shifts, dims), got, t)
        if t.numel():
            assert not shares(got, t)
    else:  # PyTorch: a 0-dim tensor has no dim to roll over, not even 0 or -1
        dim = data.draw(st.sampled_from([0, -1, 1]))
        with pytest.raises(IndexError, match="roll"):
            ops.roll(t, [shift], [dim])


@SETTINGS
@given(shapes(min_dims=2, max_side=3), dtypes, layouts, seeds, st.data())
def test_rot90(shape, dtype, layout, seed, data):
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    nd = len(shape)
    d0 = data.draw(st.integers(-nd, nd - 1))
    d1 = data.draw(st.integers(-nd, nd - 1).filter(lambda d: d % nd != d0 % nd))
    k = data.draw(st.integers(-5, 5))
    got = ops.rot90(t, k, [d0, d1])
    assert_same(got, np.rot90(a, k, (d0, d1)))
    if t.numel():
        assert not shares(got, t)
    check_meta(lambda x: ops.rot90(x, k, [d0, d1]), got, t)


# -- repeat, tile, repeat_interleave ------------------------------------------------------------


@SETTINGS
@given(shapes(max_side=3), dtypes, layouts, seeds, st.data())
def test_repeat_tile(shape, dtype, layout, seed, data):
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    reps = data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape) + 2))
    got = t.repeat(reps)
    assert_same(got, np.tile(a, reps))
    if got.numel():
        assert not shares(got, t)
    check_meta(lambda x: x.repeat(reps), got, t, strides=True)
    tile = data.draw(st.lists(st.integers(0, 3), max_size=len(shape) + 1))
    assert_same(t.tile(tile), np.tile(a, tile))


@SETTINGS
@given(shapes(max_side=3), dtypes, layouts, seeds, st.data())
def test_repeat_interleave(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    r = data.draw(st.integers(0, 3))
    assert_same(t.repeat_interleave(r), np.repeat(a, r))
    if shape:
        d = data.draw(st.integers(-len(shape), len(shape) - 1))
        got = ops.repeat_interleave.self_int(t, r, d)
        assert_same(got, np.repeat(a, r, axis=d))
        check_meta(lambda x: ops.repeat_interleave.self_int(x, r, d), got, t)
        counts = rng.integers(0, 3, shape[d])
        rt = ow.tensor(counts, dtype=data.draw(st.sampled_from([ow.int64, ow.int32])))
        assert_same(ops.repeat_interleave.self_Tensor(t, rt, d), np.repeat(a, counts, axis=d))
        assert_same(ops.repeat_interleave.Tensor(rt), np.repeat(np.arange(len(counts)), counts))


def test_repeat_interleave_rules():
    t = ow.tensor([[1, 2], [3, 4]])
    assert_same(t.repeat_interleave(ow.tensor([2])), np.repeat(t.numpy(), 2))
    assert_same(ops.repeat_interleave(ow.tensor([1, 0, 2])), [0, 2, 2])
    with pytest.raises(ValueError, match="same size as input along dim"):
        ops.repeat_interleave.self_Tensor(t, ow.tensor([1, 2, 3]), 0)
    with pytest.raises(TypeError, match="Long or Int"):
        ops.repeat_interleave.Tensor(ow.tensor([1.0]))
    with pytest.raises(ValueError, match="can not be negative"):
        ops.repeat_interleave.self_int(t, -1)
    with pytest.raises(ValueError, match="does not match"):
        ops.repeat_interleave.self_int(t, 2, 0, output_size=3)
    with pytest.raises(NotImplementedError):
        ops.repeat_interleave.Tensor(ow.empty([2], dtype=ow.int64, device="meta"))


def test_repeat_errors():
    with pytest.raises(ValueError, match="can not be smaller"):
        ow.zeros([2, 3]).repeat([2])
    with pytest.raises(ValueError, match="negative dimension"):
        ow.zeros([2]).repeat([-1])


# -- triangles and diagonals -----------------------------------------------------------------------


@SETTINGS
@given(shapes(min_dims=2, max_side=4), dtypes, layouts, seeds, st.integers(-5, 5))
def test_tril_triu(shape, dtype, layout, seed, k):
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    for name, np_fn in (("tril", np.tril), ("triu", np.triu)):
        want = np_fn(a, k)
        got = getattr(t, name)(k)
        assert_same(got, want)
        check_meta(lambda x, n=name: getattr(x, n)(k), got, t)
        out = ow.empty([1], dtype=dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(ops, name)(t, k, out=out)
        assert_same(out, want)
        c, _ = make(np.random.default_rng(seed), shape, dtype, layout)
        assert getattr(c, name + "_")(k) is c
        assert_same(c, want)


@SETTINGS
@given(shapes(min_dims=1, max_dims=2, max_side=4), dtypes, seeds, st.integers(-4, 4))
def test_diag_diagflat(shape, dtype, seed, k):
    t, a = make(np.random.default_rng(seed), shape, dtype, "transposed")
    got = t.diag(k)
    assert_same(got, np.diag(a, k))
    check_meta(lambda x: x.diag(k), got, t)
    assert_same(t.diagflat(k), np.diagflat(a, k))


@SETTINGS
@given(shapes(min_dims=1, max_dims=3, max_side=3), dtypes, seeds, st.data())
def test_diag_embed(shape, dtype, seed, data):
    t, a = make(np.random.default_rng(seed), shape, dtype)
    nd = len(shape) + 1
    d1 = data.draw(st.integers(-nd, nd - 1))
    d2 = data.draw(st.integers(-nd, nd - 1).filter(lambda d: d % nd != d1 % nd))
    off = data.draw(st.integers(-3, 3))
    got = ops.diag_embed(t, off, d1, d2)
    n = shape[-1] + abs(off)
    lo, hi = sorted((d1 % nd, d2 % nd))
    out_shape = list(shape[:-1])
    out_shape.insert(lo, n)
    out_shape.insert(hi, n)
    want = np.zeros(out_shape, a.dtype)
    diag = np.diagonal(want, off, d1 % nd, d2 % nd)
    diag.setflags(write=True)
    diag[...] = a
    assert_same(got, want)
    check_meta(lambda x: ops.diag_embed(x, off, d1, d2), got, t)


def test_diag_errors():
    with pytest.raises(ValueError, match="1D or 2D"):
        ow.zeros([2, 2, 2]).diag()
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        ow.zeros([3]).tril()
    with pytest.raises(ValueError, match="cannot be identical"):
        ops.diag_embed(ow.zeros([3]), 0, 0, -2)


# -- atleast_nd, padding -------------------------------------------------------------------------


@SETTINGS
@given(shapes(), dtypes, seeds)
def test_atleast(shape, dtype, seed):
    t, a = make(np.random.default_rng(seed), shape, dtype)
    for n, np_fn in ((1, np.atleast_1d), (2, np.atleast_2d), (3, np.atleast_3d)):
        got = getattr(ops, f"atleast_{n}d").default(t)
        assert_same(got, np_fn(a))
        if t.ndim >= n:
            assert got is t
        elif t.numel():
            assert shares(got, t)
        (seq,) = getattr(ops, f"atleast_{n}d").Sequence([t])
        assert_same(seq, np_fn(a))


@st.composite
def pad_args(draw):
    shape = draw(shapes(min_dims=1, max_side=4))
    k = draw(st.integers(0, len(shape)))
    pads = []
    for i in range(k):
        n = shape[len(shape) - 1 - i]
        lo = draw(st.integers(-n, 3))
        hi = draw(st.integers(-(n + lo) if n + lo > 0 else 0, 3) if lo < 0 else st.integers(-n, 3))
        pads += [lo, hi]
    return shape, pads


def _pad_oracle(a, pads, value):
    out = a
    for i in range(len(pads) // 2):
        d = a.ndim - 1 - i
        lo, hi = pads[2 * i], pads[2 * i + 1]
        n = out.shape[d]
        idx = [slice(None)] * a.ndim
        idx[d] = slice(max(-lo, 0), n - max(-hi, 0) if n - max(-hi, 0) > max(-lo, 0) else max(-lo, 0))
        out = out[tuple(idx)]
        widths = [(0, 0)] * a.ndim
        widths[d] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=np.asarray(value).astype(a.dtype))
    return out


@SETTINGS
@given(pad_args(), dtypes, layouts, seeds, st.sampled_from([0, 1, True]))
def test_constant_pad_nd(args, dtype, layout, seed, value):
    shape, pads = args
    t, a = make(np.random.default_rng(seed), shape, dtype, layout)
    if any(shape[len(shape) - 1 - i] + pads[2 * i] + pads[2 * i + 1] < 0 for i in range(len(pads) // 2)):
        with pytest.raises(ValueError, match="negative output size"):
            ops.constant_pad_nd(t, pads, value)
        return
    want = _pad_oracle(a, pads, value)
    got = ops.constant_pad_nd(t, pads, value)
    assert_same(got, want)
    assert_same(ops.pad(t, pads, value=float(value)), want)
    check_meta(lambda x: ops.constant_pad_nd(x, pads, value), got, t)


def test_pad_errors():
    t = ow.zeros([2, 3])
    with pytest.raises(ValueError, match="must be even"):
        ops.constant_pad_nd(t, [1])
    with pytest.raises(ValueError, match="no more than twice"):
        ops.constant_pad_nd(t, [1, 1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="reflect"):
        ops.pad(t, [3, 0], "reflect")  # reflection padding must be smaller than the dim
    with pytest.raises(ValueError, match="Unrecognised"):
        ops.pad(t, [1, 1], "bogus")
    with pytest.raises(ValueError, match="overflow"):
        ops.constant_pad_nd(ow.zeros([2], dtype=ow.uint8), [1, 1], 300)


# -- meshgrid, cartesian_prod --------------------------------------------------------------------


@SETTINGS
@given(st.lists(shapes(max_dims=1, max_side=3), min_size=1, max_size=3), dtypes, seeds, st.sampled_from(["ij", "xy"]))
def test_meshgrid_cartesian(shapes_, dtype, seed, indexing):
    rng = np.random.default_rng(seed)
    pairs = [make(rng, s, dtype) for s in shapes_]
    ts, arrays = [p[0] for p in pairs], [p[1] for p in pairs]
    grids = ops.meshgrid.indexing(ts, indexing=indexing)
    for g, w, t in zip(grids, np.meshgrid(*arrays, indexing=indexing), ts):
        assert_same(g, w)
        if g.numel():
            assert shares(g, t)
    if indexing == "ij":
        for g, w in zip(ops.meshgrid.default(ts), np.meshgrid(*arrays, indexing="ij")):
            assert_same(g, w)
    if all(len(s) == 1 for s in shapes_):
        got = ops.cartesian_prod(ts)
        want = np.array(list(itertools.product(*arrays)), dtype=dtype.numpy).reshape(-1, len(ts))
        if len(ts) == 1:
            assert got is ts[0]
        else:
            assert_same(got, want)


def test_meshgrid_errors():
    with pytest.raises(ValueError, match="non-empty"):
        ops.meshgrid([])
    with pytest.raises(ValueError, match="0D or 1D"):
        ops.meshgrid([ow.zeros([2, 2])])
    with pytest.raises(TypeError, match="same dtype"):
        ops.meshgrid([ow.zeros([2]), ow.zeros([2], dtype=ow.int64)])
    with pytest.raises(ValueError, match="indexing must be one of"):
        ops.meshgrid.indexing([ow.zeros([2])], indexing="ji")
    with pytest.raises(ValueError, match="1D vector"):
        ops.cartesian_prod([ow.zeros([2, 2])])


# -- scatters into views, narrow_copy -------------------------------------------------------------


@SETTINGS
@given(shapes(min_dims=1, max_side=4), dtypes, layouts, seeds, st.data())
def test_view_scatters(shape, dtype, layout, seed, data):
    rng = np.random.default_rng(seed)
    t, a = make(rng, shape, dtype, layout)
    d = data.draw(st.integers(-len(shape), len(shape) - 1))
    lo, hi, step = data.draw(st.none() | st.integers(-5, 5)), data.draw(st.none() | st.integers(-5, 5)), 2
    lead = (slice(None),) * (d % len(shape))
    want = a.copy()
    region = want[lead + (slice(lo, hi, step),)]
    src, s = make(rng, region.shape, dtype, "transposed")
    want[lead + (slice(lo, hi, step),)] = s
    got = ops.slice_scatter(t, src, d, lo, hi, step)
    assert_same(got, want)
    _unchanged(t, a)
    if shape[d]:
        i = data.draw(st.integers(-shape[d], shape[d] - 1))
        want = a.copy()
        src, s = make(rng, want[lead + (i,)].shape, dtype)
        want[lead + (i,)] = s
        assert_same(ops.select_scatter(t, src, d, i), want)
        start = data.draw(st.integers(0, shape[d]))
        n = data.draw(st.integers(0, shape[d] - start))
        assert_same(ops.narrow_copy(t, d, start, n), a[lead + (slice(start, start + n),)])
    if len(shape) >= 2:
        want = a.copy()
        diag = np.diagonal(want, 1, 0, -1)
        src, s = make(rng, diag.shape, dtype)
        diag.setflags(write=True)
        diag[...] = s
        assert_same(ops.diagonal_scatter(t, src, 1, 0, -1), want)


def test_as_strided_scatter_by_hand():
    t = ow.from_numpy(np.zeros(6))
    got = ops.as_strided_scatter(t, ow.tensor([1.0, 2.0]), [2], [3], 1)
    np.testing.assert_array_equal(got.numpy(), [0, 1, 0, 0, 2, 0])
    with pytest.raises(ValueError, match="size equal to the slice"):
        ops.slice_scatter(t, ow.ones([2]), 0, 0, 3)


# -- conversions ----------------------------------------------------------------------------------


@SETTINGS
@given(shapes(), dtypes, dtypes, layouts, seeds)
def test_to_copy_and_to(shape, src, dst, layout, seed):
    t, a = make(np.random.default_rng(seed), shape, src, layout)
    with np.errstate(invalid="ignore", over="ignore"):
        want = (a.real if src.is_complex and not dst.is_complex else a).astype(dst.numpy)
    got = ops._to_copy(t, dtype=dst)
    assert_same(got, want)
    if t.numel():
        assert not shares(got, t)
    assert_same(ops.to.dtype(t, dst), want)
    assert (ops.to.dtype(t, src) is t) and (ops.to.dtype(t, src, copy=True) is not t)
    assert_same(ops.type_as(t, ow.empty([1], dtype=dst)), want)
    assert_same(ops.to.other(t, ow.empty([1], dtype=dst)), want)
    m = ops._to_copy(t, device="meta")
    assert m.device.type == "meta" and m.shape == t.shape and m.dtype is src
    assert ops.to.device(t, "meta", dst).dtype is dst
    check_meta(lambda x: ops._to_copy(x, dtype=dst), got, t)


def test_to_copy_errors():
    with pytest.raises(NotImplementedError, match="layout"):
        ops._to_copy(ow.zeros([2]), layout="sparse_coo")
    with pytest.raises(RuntimeError):
        ops._to_copy(ow.empty([2], device="meta"), device="cpu")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_every_copy_op_runs_on_meta(dtype):
    m = meta_like(ow.empty([2, 3], dtype=dtype))
    assert ops.cat([m, m], 1).shape == (2, 6)
    assert ops.flip(m, [0, 1]).shape == (2, 3)
    assert ops.tril(m, 1).dtype is dtype
    assert ops.diag_embed(m).shape == (2, 3, 3)
    assert ops.constant_pad_nd(m, [1, 2]).shape == (2, 6)
    assert ops.repeat(m, [2, 1, 1]).shape == (2, 2, 3)
    assert ops.block_diag([m, m]).shape == (4, 6)
