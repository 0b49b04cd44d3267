"""The CPU backend's direct kernels for hot canonical ops agree with the ops' decompositions.

The direct kernel is what a call dispatches to on the CPU; ``op.decomposition`` is
the reference written in prims. Both run on the same inputs and must match bit for
bit (both compute in the inputs' dtype), including on broadcast, transposed and
special-valued inputs where the direct kernel hands over to the decomposition.
"""

from __future__ import annotations

import numpy as np
import opweave
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave import ops

DTYPES = [np.float32, np.float64, np.int32, np.float16]


def values(dtype, shape):
    """Arrays with special values for floating dtypes."""
    if np.issubdtype(dtype, np.floating):
        elements = st.floats(allow_nan=True, allow_infinity=True, width=16 if dtype == np.float16 else 32)
    else:
        elements = st.integers(-1000, 1000)
    return hnp.arrays(dtype, shape, elements=elements)


def same(a, b):
    """Bitwise equality of two tensors (NaN-aware), with equal dtype and shape."""
    assert a.dtype is b.dtype and a.shape == b.shape
    assert np.ascontiguousarray(a.numpy()).tobytes() == np.ascontiguousarray(b.numpy()).tobytes()


@given(st.sampled_from(DTYPES), hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4), st.data())
def test_binary_direct_kernels_match_decomposition(dtype, shapes, data):
    left = data.draw(values(dtype, shapes.input_shapes[0]))
    right = data.draw(values(dtype, shapes.input_shapes[1]))
    a, b = opweave.tensor(left), opweave.tensor(right)
    if data.draw(st.booleans()) and a.ndim >= 2:
        a = a.mT.contiguous().mT  # same values, transposed layout
    with np.errstate(all="ignore"):
        for op, rest in ((ops.add.Tensor, (1,)), (ops.sub.Tensor, (1,)), (ops.mul.Tensor, ())):
            same(op(a, b), op.decomposition(a, b, *rest))


@given(st.sampled_from(DTYPES[:2]), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5), st.data())
def test_sum_and_max_direct_kernels_match_decomposition(dtype, shape, data):
    a = opweave.tensor(data.draw(values(dtype, shape)))
    with np.errstate(all="ignore"):
        same(ops.sum.default(a), ops.sum.default.decomposition(a, None))
        if a.numel():  # an empty max raises (the decomposition's error)
            same(ops.max.default(a), ops.max.default.decomposition(a))


@given(st.sampled_from(DTYPES[:2]), st.integers(0, 4), st.integers(0, 4), st.integers(0, 4), st.data())
def test_matmul_direct_kernel_matches_decomposition(dtype, m, k, n, data):
    a = opweave.tensor(data.draw(hnp.arrays(dtype, (m, k), elements=st.floats(-8, 8, width=32))))
    b = opweave.tensor(data.draw(hnp.arrays(dtype, (k, n), elements=st.floats(-8, 8, width=32))))
    np.testing.assert_allclose(
        ops.matmul.default(a, b).numpy(), ops.matmul.default.decomposition(a, b).numpy(), rtol=1e-6, atol=1e-6
    )


def test_direct_kernels_are_what_the_cpu_dispatches_to():
    a = opweave.tensor([1.0])
    for op in (ops.add.Tensor, ops.sub.Tensor, ops.mul.Tensor):
        assert opweave.dispatch.explain(op, a, a).reasons[-1] == "Dense×cpu: kernel from cpu"


REAL_DTYPES = [np.float32, np.float64, np.int64, np.int32, np.bool_, np.float16]


def real_values(dtype, shape):
    """Arrays of any real dtype, with special values for the floating ones."""
    if dtype == np.bool_:
        return hnp.arrays(dtype, shape)
    return values(dtype, shape)


@given(st.sampled_from(REAL_DTYPES), st.sampled_from(REAL_DTYPES), hnp.array_shapes(min_dims=0, max_dims=3), st.data())
def test_mixed_dtype_binary_direct_kernels_match_decomposition(left, right, shape, data):
    a = opweave.tensor(data.draw(real_values(left, shape)))
    b = opweave.tensor(data.draw(real_values(right, shape)))
    with np.errstate(all="ignore"):
        for op, rest in (
            (ops.add.Tensor, (1,)),
            (ops.sub.Tensor, (1,)) if left != np.bool_ and right != np.bool_ else (ops.mul.Tensor, ()),
            (ops.mul.Tensor, ()),
            (ops.div.Tensor, ()),
            (ops.lt.Tensor, ()),
            (ops.eq.Tensor, ()),
        ):
            same(op(a, b), op.decomposition(a, b, *rest))


@given(
    st.sampled_from(DTYPES[:2]),
    hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
    st.one_of(st.integers(-5, 5), st.floats(-4, 4, width=32), st.sampled_from([1e30, -0.0])),
    st.data(),
)
def test_alpha_and_out_direct_kernels_match_decomposition(dtype, shape, alpha, data):
    a = opweave.tensor(data.draw(values(dtype, shape)))
    b = opweave.tensor(data.draw(values(dtype, shape)))
    with np.errstate(all="ignore"):
        for op in (ops.add.Tensor, ops.sub.Tensor):
            same(op(a, b, alpha=alpha), op.decomposition(a, b, alpha))
        out = opweave.empty(shape, dtype=a.dtype)
        assert ops.add.out(a, b, alpha=alpha, out=out) is out
        same(out, ops.add.Tensor.decomposition(a, b, alpha))
        expected = ops.mul.Tensor.decomposition(a, b)
        ops.mul.out(a, b, out=a)  # out= is an operand: the decomposition's path
        same(a, expected)


@given(st.sampled_from(DTYPES), st.integers(1, 3), st.integers(0, 3), st.integers(1, 3), st.data())
def test_cat_and_stack_direct_kernels_match_decomposition(dtype, ndim, dim, count, data):
    shape = data.draw(hnp.array_shapes(min_dims=ndim, max_dims=ndim, min_side=0, max_side=3))
    dim = dim % ndim
    tensors = []
    for _ in range(count):
        own = list(shape)
        own[dim] = data.draw(st.integers(0, 3))
        t = opweave.tensor(data.draw(values(dtype, tuple(own))))
        if data.draw(st.booleans()) and t.ndim >= 2:
            t = t.mT.contiguous().mT  # a transposed layout: the decomposition's path
        tensors.append(t)
    same(ops.cat.default(tensors, dim), ops.cat.default.decomposition(tensors, dim))
    equal = [opweave.tensor(data.draw(values(dtype, shape))) for _ in range(count)]
    for d in (dim, -1, ndim, 0):
        same(ops.stack.default(equal, d), ops.stack.default.decomposition(equal, d))
    np.testing.assert_array_equal(ops.stack.default(equal, 0).numpy(), np.stack([t.numpy() for t in equal]))
    scalars = [opweave.tensor(data.draw(values(dtype, ()))) for _ in range(count)]  # 0-dim: stacked, not joined
    for d in (0, -1):
        same(ops.stack.default(scalars, d), ops.stack.default.decomposition(scalars, d))


@given(st.sampled_from(DTYPES), hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4), st.data())
def test_mean_clamp_relu_mse_direct_kernels_match_decomposition(dtype, shape, data):
    a = opweave.tensor(data.draw(values(dtype, shape)))
    ndim = len(shape)
    dims = data.draw(st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=ndim, unique_by=lambda d: d % ndim))
    keepdim = data.draw(st.booleans())
    bound = st.one_of(st.none(), st.integers(-3, 3), st.floats(-2, 2, width=32))
    lo, hi = data.draw(bound), data.draw(bound)
    with np.errstate(all="ignore"):
        if a.dtype.is_floating_point:  # an integer mean raises (the decomposition's error)
            same(ops.mean.dim(a, dims, keepdim), ops.mean.dim.decomposition(a, dims, keepdim))
        if lo is not None or hi is not None:
            same(ops.clamp.default(a, lo, hi), ops.clamp.default.decomposition(a, lo, hi))
        same(ops.relu.default(a), ops.relu.default.decomposition(a))
        condition = opweave.tensor(data.draw(hnp.arrays(np.bool_, shape)))
        other = opweave.tensor(data.draw(values(dtype, shape)))
        same(ops.where.self(condition, a, other), ops.where.self.decomposition(condition, a, other))
        if a.dtype.is_floating_point:
            b = opweave.tensor(data.draw(values(dtype, shape)))
            for reduction in (0, 1, 2):
                expected = ops.mse_loss.default.decomposition(a, b, reduction)
                same(ops.mse_loss.default(a, b, reduction), expected)


def test_everyday_direct_kernels_are_what_the_cpu_dispatches_to():
    a, m = opweave.tensor([1.0, -2.0]), opweave.ones(2, 2)
    calls = [(ops.cat.default, ([a, a],)), (ops.stack.default, ([a, a],)), (ops.mean.dim, (m, [0]))]
    calls += [(ops.clamp.default, (a, 0, 1)), (ops.relu.default, (a,)), (ops.add.Tensor, (a, opweave.arange(2)))]
    calls += [(ops.where.self, (a > 0, a, a)), (ops.exp.default, (a,)), (ops.mse_loss.default, (a, a))]
    calls += [(ops.zeros.default, ((2, 2),)), (ops.max.default, (a,))]
    for op, args in calls:
        assert opweave.dispatch.explain(op, *args).reasons[-1] == "Dense×cpu: kernel from cpu"
    assert opweave.dispatch.explain(ops.add.out, a, a, out=opweave.empty(2)).reasons[-1] == "Dense×cpu: kernel from cpu"


FACTORY_DTYPES = [None, opweave.float32, opweave.float64, opweave.int32, opweave.int64, opweave.bool, opweave.complex64]


@given(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), st.sampled_from(FACTORY_DTYPES), st.data())
def test_factory_direct_kernels_match_decomposition(shape, dtype, data):
    for op in (ops.zeros.default, ops.ones.default):
        same(op(shape, dtype=dtype), op.decomposition(shape, dtype))
    like = opweave.tensor(data.draw(values(np.float32, shape)))
    if data.draw(st.booleans()) and like.ndim >= 2:
        like = like.mT  # not C-contiguous: the decomposition's path keeps the layout
    for op in (ops.zeros_like.default, ops.ones_like.default):
        got, expected = op(like, dtype=dtype), op.decomposition(like, dtype)
        same(got, expected)
        assert got.stride() == expected.stride()
    n = data.draw(st.integers(0, 20))
    same(ops.arange.default(n), ops.arange.default.decomposition(n))


UNARY_NAMES = [
    "exp", "expm1", "exp2", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal",
    "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "sigmoid", "erf", "erfc", "abs", "neg", "floor", "ceil", "trunc", "round",
]  # fmt: skip


@given(st.sampled_from(DTYPES), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4), st.data())
def test_unary_direct_kernels_match_decomposition(dtype, shape, data):
    a = opweave.tensor(data.draw(values(dtype, shape)))
    if data.draw(st.booleans()) and a.ndim >= 2:
        a = a.mT  # a transposed view
    with np.errstate(all="ignore"):
        for name in UNARY_NAMES:
            op = getattr(ops, name).default
            got, expected = op(a), op.decomposition(a)
            same(got, expected)
            assert got.stride() == expected.stride() or got.numel() <= 1, name


@given(st.sampled_from(DTYPES[:2]), st.integers(0, 4), st.integers(1, 4), st.integers(1, 4), st.booleans(), st.data())
def test_linear_direct_kernel_matches_decomposition(dtype, n, k, m, with_bias, data):
    x = opweave.tensor(data.draw(hnp.arrays(dtype, (n, k), elements=st.floats(-8, 8, width=32))))
    w = opweave.tensor(data.draw(hnp.arrays(dtype, (m, k), elements=st.floats(-8, 8, width=32))))
    bias = opweave.tensor(data.draw(values(dtype, (m,)))) if with_bias else None
    if data.draw(st.booleans()):
        w = w.mT.contiguous().mT  # a transposed layout: same values
    with np.errstate(all="ignore"):
        same(ops.linear.default(x, w, bias), ops.linear.default.decomposition(x, w, bias))


@given(
    st.sampled_from([np.float32, np.float64, np.float16]),  # integer tensors take the decomposition (float raises)
    hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
    st.sampled_from(["add", "sub", "mul", "div"]),
    st.one_of(st.integers(-5, 5), st.floats(width=32), st.just("tensor"), st.just("self")),
    st.data(),
)
def test_inplace_direct_kernels_match_decomposition(dtype, shape, name, other, data):
    start = data.draw(values(dtype, shape))
    a, b = opweave.tensor(start), opweave.tensor(start.copy())
    if other == "tensor":
        other = opweave.tensor(data.draw(values(dtype, shape)))
    overload = "Scalar" if isinstance(other, (int, float)) else "Tensor"
    op = getattr(getattr(ops, name + "_"), overload)
    alpha = (1,) if name in ("add", "sub") else ()
    version = a._version
    with np.errstate(all="ignore"):
        assert op(a, a if other == "self" else other) is a
        op.decomposition(b, b if other == "self" else other, *alpha)
    same(a, b)
    assert a._version > version  # the write is seen by autograd's saved-tensor check
