"""The CPU's direct kernels for training steps (relu, in-place updates, tiling max pooling) agree with the references.

``relu`` and the in-place ops are checked bit for bit against the ops' decompositions (both
compute in the inputs' dtype); tiling max pooling against a NumPy formula of the windows.
"""

from __future__ import annotations

import numpy as np
import opweave
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave import ops

FLOATS = [np.float32, np.float64]


def values(dtype, shape):
    """Arrays with NaN, ±inf and -0.0 among the values."""
    return hnp.arrays(dtype, shape, elements=st.floats(allow_nan=True, allow_infinity=True, width=32))


def same(a, b):
    """Bitwise equality (NaN-aware) with equal dtype and shape."""
    assert a.dtype is b.dtype and tuple(a.shape) == tuple(b.shape)
    assert np.ascontiguousarray(a.numpy()).tobytes() == np.ascontiguousarray(b.numpy()).tobytes()


SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)


@given(st.sampled_from(FLOATS + [np.int32]), SHAPES, st.data())
def test_relu_matches_decomposition(dtype, shape, data):
    if dtype is np.int32:
        a = opweave.tensor(data.draw(hnp.arrays(dtype, shape, elements=st.integers(-9, 9))))
    else:
        a = opweave.tensor(data.draw(values(dtype, shape)))
    if data.draw(st.booleans()) and a.ndim >= 2:
        a = a.mT  # a transposed view
    same(ops.relu.default(a), ops.relu.default.decomposition(a))


INPLACE = [  # (in-place op, its out-of-place op, takes alpha)
    (ops.add_.Tensor, ops.add.Tensor, True),
    (ops.sub_.Tensor, ops.sub.Tensor, True),
    (ops.mul_.Tensor, ops.mul.Tensor, False),
    (ops.div_.Tensor, ops.div.Tensor, False),
]


@given(
    st.sampled_from(FLOATS),
    hnp.mutually_broadcastable_shapes(num_shapes=1, base_shape=(), max_dims=3, max_side=4),
    st.sampled_from(INPLACE),
    st.sampled_from([None, 1, -0.01, 2.5]),
    st.data(),
)
def test_inplace_updates_match_out_of_place(dtype, shapes, case, alpha, data):
    op, functional, takes_alpha = case
    full = shapes.result_shape
    other_shape = data.draw(st.sampled_from([shapes.input_shapes[0], full, ()]))
    if np.broadcast_shapes(full, other_shape) != full:
        other_shape = full
    self_values = data.draw(values(dtype, full))
    kind = data.draw(st.sampled_from(["tensor", "number", "other dtype"]))
    if kind == "tensor":
        other = opweave.tensor(data.draw(values(dtype, other_shape)))
    elif kind == "number":
        other = data.draw(st.sampled_from([2, -0.5, 3.25, True]))
    else:
        other = opweave.tensor(data.draw(values(np.float64 if dtype is np.float32 else np.float32, other_shape)))
    kwargs = {"alpha": alpha} if takes_alpha and alpha is not None and kind != "number" else {}
    a, b = opweave.tensor(self_values), opweave.tensor(self_values)
    version = a._storage.version
    with np.errstate(all="ignore"):
        returned = op(a, other, **kwargs)
        expected = functional(b, other, **kwargs).to(b.dtype)
    assert returned is a and a._storage.version > version  # autograd sees the write
    same(a, expected)


@given(st.sampled_from(FLOATS), st.integers(1, 3), st.data())
def test_tiling_max_pool_first_maximum_and_flat_index(dtype, channels, data):
    kernel = data.draw(st.sampled_from([(2, 2), (2, 3), (1, 2)]))
    oh, ow = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    shape = (2, channels, oh * kernel[0], ow * kernel[1])
    x = data.draw(hnp.arrays(dtype, shape, elements=st.integers(-2, 2).map(float)))  # ties are common
    values_, indices = ops.max_pool2d_with_indices.default(opweave.tensor(x), list(kernel), list(kernel))
    windows = x.reshape(2, channels, oh, kernel[0], ow, kernel[1]).transpose(0, 1, 2, 4, 3, 5)
    windows = windows.reshape(2, channels, oh, ow, -1)
    local = windows.argmax(-1)
    rows = np.arange(oh)[:, None] * kernel[0] + local // kernel[1]
    cols = np.arange(ow)[None, :] * kernel[1] + local % kernel[1]
    np.testing.assert_array_equal(values_.numpy(), windows.max(-1))
    np.testing.assert_array_equal(indices.numpy(), rows * shape[3] + cols)


def test_tiling_max_pool_nan_takes_last_nan_of_window():
    x = np.zeros((1, 1, 2, 2), np.float32)
    x[0, 0, 0, 1] = x[0, 0, 1, 0] = np.nan
    values_, indices = ops.max_pool2d_with_indices.default(opweave.tensor(x), [2, 2], [2, 2])
    assert np.isnan(values_.numpy()).all() and indices.numpy().item() == 2


@given(st.sampled_from(FLOATS), st.integers(0, 4), st.integers(1, 4), st.integers(1, 4), st.data())
def test_linear_matches_decomposition(dtype, batch, k, n, data):
    finite = st.floats(-8, 8, width=32)
    x = opweave.tensor(data.draw(hnp.arrays(dtype, (batch, k), elements=finite)))
    w = opweave.tensor(data.draw(hnp.arrays(dtype, (n, k), elements=finite)))
    if data.draw(st.booleans()):
        w = w.mT.contiguous().mT  # same values, transposed layout
    bias = data.draw(st.sampled_from(["none", "vector", "other shape"]))
    b = None
    if bias == "vector":
        b = opweave.tensor(data.draw(hnp.arrays(dtype, (n,), elements=finite)))
    elif bias == "other shape":  # broadcasts: the decomposition's case
        b = opweave.tensor(data.draw(hnp.arrays(dtype, (1,), elements=finite)))
    same(ops.linear.default(x, w, b), ops.linear.default.decomposition(x, w, b))


@given(
    st.sampled_from(FLOATS),
    st.tuples(st.integers(0, 2), st.integers(1, 2), st.integers(1, 6), st.integers(1, 6)),
    st.tuples(st.integers(1, 3), st.integers(1, 3)),
    st.tuples(st.integers(1, 2), st.integers(1, 2)),
    st.tuples(st.integers(0, 1), st.integers(0, 1)),
    st.tuples(st.integers(1, 3), st.integers(1, 3)),
    st.booleans(),
    st.data(),
)
def test_im2col_columns(dtype, shape, kernel, dilation, padding, stride, transposed, data):
    n, c, h, w = shape
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
    blocks = [(s + 2 * p - sp) // st_ + 1 for s, p, sp, st_ in zip((h, w), padding, span, stride)]
    x = data.draw(values(dtype, shape))
    t = opweave.tensor(x)
    if transposed:  # a non-contiguous view with the same values
        t = opweave.tensor(np.ascontiguousarray(x.transpose(0, 1, 3, 2))).transpose(2, 3)
    args = (t, list(kernel), list(dilation), list(padding), list(stride))
    if min(blocks) < 1:
        try:
            ops.im2col.default(*args)
        except ValueError:
            return
        raise AssertionError("im2col accepted a geometry without sliding blocks")
    xp = np.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    expected = np.empty((n, c, kernel[0], kernel[1], blocks[0], blocks[1]), dtype)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            r0, c0 = i * dilation[0], j * dilation[1]
            rows = slice(r0, r0 + (blocks[0] - 1) * stride[0] + 1, stride[0])
            cols = slice(c0, c0 + (blocks[1] - 1) * stride[1] + 1, stride[1])
            expected[:, :, i, j] = xp[:, :, rows, cols]
    got = ops.im2col.default(*args)
    assert got.dtype is t.dtype
    assert tuple(got.shape) == (n, c * kernel[0] * kernel[1], blocks[0] * blocks[1])
    assert got.numpy().tobytes() == expected.tobytes()


@given(st.sampled_from(FLOATS), st.integers(0, 2), st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.data())
def test_max_unpool2d_places_values_at_indices(dtype, batch, channels, oh, ow, data):
    size = (oh * 2, ow * 2)
    plane = size[0] * size[1]
    x = data.draw(values(dtype, (batch, channels, oh, ow)))
    # distinct positions per plane, as max pooling's indices are
    idx = (
        np.stack(
            [
                np.array(data.draw(st.permutations(range(plane)))[: oh * ow]).reshape(oh, ow)
                for _ in range(batch * channels)
            ]
        ).reshape(batch, channels, oh, ow)
        if batch
        else np.zeros((0, channels, oh, ow), np.int64)
    )
    got = ops.max_unpool2d.default(opweave.tensor(x), opweave.tensor(idx.astype(np.int64)), list(size))
    expected = np.zeros((batch, channels, plane), dtype)
    for b in range(batch):
        for ch in range(channels):
            expected[b, ch, idx[b, ch].reshape(-1)] = x[b, ch].reshape(-1)
    assert got.dtype is opweave.tensor(x).dtype
    assert got.numpy().tobytes() == expected.reshape(batch, channels, *size).tobytes()


def test_max_unpool2d_index_outside_plane_raises():
    x = opweave.tensor(np.ones((1, 1, 1, 1), np.float32))
    for bad in (4, -1):
        try:
            ops.max_unpool2d.default(x, opweave.tensor(np.array([[[[bad]]]])), [2, 2])
        except IndexError as exc:
            assert "max_unpool2d" in str(exc)
        else:
            raise AssertionError(f"index {bad} accepted")
