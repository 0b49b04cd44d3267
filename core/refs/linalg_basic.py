"""Matrix products and friends: matmul, mm, bmm, mv, dot, vdot, inner, outer, linear, addmm & co, trace,
dist, allclose, equal.

As in PyTorch the matrix products need operands of one dtype (TypeError
otherwise, no promotion) and reject bool; shape mismatches are ValueErrors.
``matmul`` follows ``torch.matmul``'s rank rules: 1-D × 1-D is a dot product,
a 1-D operand gets a dim prepended (left) or appended (right) that is removed
again, and leading (batch) dims broadcast.
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import define, prims
from ._tensor_utils import (
    cast,
    expand,
    fill_like,
    is_floating,
    is_integral,
    is_wrapped_scalar,
    numel,
    reshape,
    squeeze,
    transpose_last,
    unsqueeze,
)
from ._utils import broadcast_shapes, define_with_variants
from .reductions import _vector_norm, reduction_dims

# -- checks ----------------------------------------------------------------


def _check_ndim(op: str, name: str, t, ndims) -> None:
    ndims = (ndims,) if isinstance(ndims, int) else ndims
    if t.ndim not in ndims:
        want = " or ".join(f"{n}-D" for n in ndims)
        raise ValueError(f"{op}: argument '{name}' must be a {want} tensor, got {t.ndim}-D with shape {list(t.shape)}")


def _check_operands(op: str, *named) -> None:
    """Matrix-product operands: one dtype (TypeError), not bool (TypeError)."""
    first_name, first = named[0]
    for name, t in named[1:]:
        if t.dtype is not first.dtype:
            raise TypeError(
                f"{op}: expected '{first_name}' and '{name}' to have the same dtype, but got "
                f"{first.dtype.name} and {t.dtype.name}"
            )
    if first.dtype is _dtype.bool_:
        raise TypeError(f"{op}: bool tensors are not supported")


def _check_product(op: str, first: tuple, second: tuple) -> None:
    """The two operands of a matrix product, each ``(name, tensor, ndim)``: their ndims, then one dtype, not bool."""
    for name, t, ndim in (first, second):
        _check_ndim(op, name, t, ndim)
    _check_operands(op, first[:2], second[:2])


def _check_inner(op: str, k1: int, k2: int, shape1, shape2) -> None:
    if k1 != k2:
        raise ValueError(
            f"{op}: shapes {list(shape1)} and {list(shape2)} cannot be multiplied (inner sizes {k1} and {k2} differ)"
        )


def _check_coefficient(op: str, name: str, value, dtype) -> None:
    """PyTorch's rules for ``alpha``/``beta``: integers for integral tensors, no complex for real ones."""
    if is_integral(dtype) and not isinstance(value, int):
        raise TypeError(f"{op}: for integral input tensors, argument '{name}' must not be a floating point number")
    if not dtype.is_complex and isinstance(value, complex):
        raise TypeError(f"{op}: for non-complex input tensors, argument '{name}' must not be complex")


# -- products --------------------------------------------------------------


def _mm(op: str, a, b):
    _check_inner(op, a.shape[1], b.shape[0], a.shape, b.shape)
    return prims.mm(a, b)


def mm(self, mat2):
    """Matrix product of the 2-D tensors ``self`` (n × k) and ``mat2`` (k × p); same dtype required."""
    _check_product("mm", ("self", self, 2), ("mat2", mat2, 2))
    return _mm("mm", self, mat2)


def bmm(self, mat2):
    """Batched matrix product of the 3-D tensors ``self`` (b × n × k) and ``mat2`` (b × k × p)."""
    op = "bmm"
    _check_product(op, ("self", self, 3), ("mat2", mat2, 3))
    if self.shape[0] != mat2.shape[0]:
        raise ValueError(f"{op}: batch sizes differ: {self.shape[0]} and {mat2.shape[0]}")
    _check_inner(op, self.shape[2], mat2.shape[1], self.shape, mat2.shape)
    return prims.bmm(self, mat2)


def _mv(op: str, mat, vec):
    _check_inner(op, mat.shape[1], vec.shape[0], mat.shape, vec.shape)
    return squeeze(prims.mm(mat, unsqueeze(vec, 1)), 1)


def mv(self, vec):
    """Matrix-vector product of ``self`` (n × k) and ``vec`` (k); same dtype required."""
    _check_product("mv", ("self", self, 2), ("vec", vec, 1))
    return _mv("mv", self, vec)


def _dot(op: str, a, b):
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"{op}: inconsistent tensor size, expected tensors of the same number of elements, got "
            f"{a.shape[0]} and {b.shape[0]}"
        )
    return reshape(prims.mm(unsqueeze(a, 0), unsqueeze(b, 1)), ())


def dot(self, tensor):
    """Dot product of two 1-D tensors of the same size and dtype (no promotion, as torch)."""
    _check_product("dot", ("self", self, 1), ("tensor", tensor, 1))
    return _dot("dot", self, tensor)


def vdot(self, other):
    """Dot product of two 1-D tensors conjugating the first (``sum(conj(self) * other)``)."""
    _check_product("vdot", ("self", self, 1), ("other", other, 1))
    a = prims.conj_physical(self) if self.dtype.is_complex else self
    return _dot("vdot", a, other)


def matmul(self, other):
    """``torch.matmul``: dot, matrix-vector, vector-matrix, matrix or broadcast batched product by rank."""
    op = "matmul"
    if self.ndim == 0 or other.ndim == 0:
        raise ValueError(f"{op}: both arguments need to be at least 1-D, but they are {self.ndim}-D and {other.ndim}-D")
    _check_operands(op, ("self", self), ("other", other))
    if self.ndim == 1 and other.ndim == 1:
        return _dot(op, self, other)
    if self.ndim == 2 and other.ndim == 1:
        return _mv(op, self, other)
    if self.ndim == 1 and other.ndim == 2:
        return squeeze(_mm(op, unsqueeze(self, 0), other), 0)
    if self.ndim == 2 and other.ndim == 2:
        return _mm(op, self, other)
    return _batched_matmul(op, self, other)


def _batched_matmul(op: str, a, b):
    """matmul with an operand of 3+ dims: fold the batch into the rows (2-D ``b``) or broadcast and bmm."""
    a_vector, b_vector = a.ndim == 1, b.ndim == 1
    a = unsqueeze(a, 0) if a_vector else a
    b = unsqueeze(b, 1) if b_vector else b
    (n, k), (k2, p) = a.shape[-2:], b.shape[-2:]
    _check_inner(op, k, k2, a.shape, b.shape)
    if b.ndim == 2:
        rows = reshape(a, (numel(a.shape[:-1]), k))
        out = reshape(prims.mm(rows, b), a.shape[:-1] + (p,))
    else:
        batch = broadcast_shapes(op, a.shape[:-2], b.shape[:-2])
        count = numel(batch)
        a3 = reshape(expand(a, batch + (n, k)), (count, n, k))
        b3 = reshape(expand(b, batch + (k, p)), (count, k, p))
        out = reshape(prims.bmm(a3, b3), batch + (n, p))
    if b_vector:
        return squeeze(out, out.ndim - 1)
    if a_vector:
        return squeeze(out, out.ndim - 2)
    return out


def inner(self, other):
    """Sum-product over the last dims: shape ``self.shape[:-1] + other.shape[:-1]``; 0-dim operands multiply."""
    op = "inner"
    if self.ndim == 0 or other.ndim == 0:
        return ops.mul.Tensor(self, other)
    _check_operands(op, ("self", self), ("other", other))
    k = self.shape[-1]
    _check_inner(op, k, other.shape[-1], self.shape, other.shape)
    a = reshape(self, (numel(self.shape[:-1]), k))
    b = reshape(other, (numel(other.shape[:-1]), k))
    return reshape(prims.mm(a, transpose_last(b)), self.shape[:-1] + other.shape[:-1])


def outer(self, vec2):
    """Outer product of two 1-D tensors (with type promotion, as torch)."""
    _check_ndim("outer", "self", self, 1)
    _check_ndim("outer", "vec2", vec2, 1)
    return ops.mul.Tensor(unsqueeze(self, 1), unsqueeze(vec2, 0))


def ger(self, vec2):
    """Alias of ``outer``."""
    return outer(self, vec2)


def linear(input, weight, bias=None):  # noqa: A002 - PyTorch's argument name
    """``input @ weight.T + bias``; ``weight`` is 2-D (out × in) or 1-D (in)."""
    op = "linear"
    _check_ndim(op, "weight", weight, (1, 2))
    if input.ndim == 0:
        raise ValueError(f"{op}: argument 'input' must be at least 1-D")
    w = transpose_last(weight) if weight.ndim == 2 else weight
    out = matmul(input, w)
    if bias is None:
        return out
    if bias.dtype is not input.dtype and not is_wrapped_scalar(bias):
        raise TypeError(f"{op}: expected 'bias' to have dtype {input.dtype.name}, but got {bias.dtype.name}")
    return ops.add.Tensor(out, cast(bias, input.dtype))


# -- add*-products: beta * self + alpha * product ----------------------------


def _scaled_sum(op: str, self, product, beta, alpha):
    """``beta * self + alpha * product`` with ``self`` broadcast to the product's shape (beta = 0 ignores self)."""
    if self.dtype is not product.dtype and not is_wrapped_scalar(self):
        raise TypeError(f"{op}: expected 'self' to have dtype {product.dtype.name}, but got {self.dtype.name}")
    _check_coefficient(op, "beta", beta, product.dtype)
    _check_coefficient(op, "alpha", alpha, product.dtype)
    shape = product.shape
    if broadcast_shapes(op, self.shape, shape) != tuple(shape):
        raise ValueError(f"{op}: 'self' of shape {list(self.shape)} cannot be broadcast to {list(shape)}")
    compute = _dtype.opmath_dtype(product.dtype)
    result = cast(product, compute)
    if alpha != 1:
        result = prims.mul(result, fill_like(alpha, result))
    if beta != 0:
        bias = expand(cast(self, compute), shape)
        if beta != 1:
            bias = prims.mul(bias, fill_like(beta, bias))
        result = prims.add(result, bias)
    return cast(result, product.dtype)


def addmm(self, mat1, mat2, beta=1, alpha=1):
    """``beta * self + alpha * (mat1 @ mat2)``; ``self`` broadcasts to n × p; beta = 0 ignores ``self`` (nan too)."""
    _check_product("addmm", ("mat1", mat1, 2), ("mat2", mat2, 2))
    return _scaled_sum("addmm", self, _mm("addmm", mat1, mat2), beta, alpha)


def addmv(self, mat, vec, beta=1, alpha=1):
    """``beta * self + alpha * (mat @ vec)``; ``self`` broadcasts to n."""
    _check_product("addmv", ("mat", mat, 2), ("vec", vec, 1))
    return _scaled_sum("addmv", self, _mv("addmv", mat, vec), beta, alpha)


def addr(self, vec1, vec2, beta=1, alpha=1):
    """``beta * self + alpha * outer(vec1, vec2)``; ``self`` broadcasts to n × m. For bool tensors (as PyTorch)
    ``(beta and self) or (alpha and outer(vec1, vec2))``."""
    _check_ndim("addr", "vec1", vec1, 1)
    _check_ndim("addr", "vec2", vec2, 1)
    shape = (vec1.shape[0], vec2.shape[0])
    if vec1.dtype is _dtype.bool_ and vec2.dtype is _dtype.bool_ and self.dtype is _dtype.bool_:
        if broadcast_shapes("addr", self.shape, shape) != shape:
            raise ValueError(f"addr: 'self' of shape {list(self.shape)} cannot be broadcast to {list(shape)}")
        product = prims.bitwise_and(expand(unsqueeze(vec1, 1), shape), expand(unsqueeze(vec2, 0), shape))
        product = product if alpha else prims.bitwise_and(product, fill_like(False, product))
        return prims.bitwise_or(product, expand(self, shape)) if beta else product
    _check_operands("addr", ("vec1", vec1), ("vec2", vec2))
    product = prims.mul(expand(unsqueeze(vec1, 1), shape), expand(unsqueeze(vec2, 0), shape))
    return _scaled_sum("addr", self, product, beta, alpha)


def _bmm_checked(op: str, batch1, batch2):
    _check_product(op, ("batch1", batch1, 3), ("batch2", batch2, 3))
    if batch1.shape[0] != batch2.shape[0]:
        raise ValueError(f"{op}: batch sizes differ: {batch1.shape[0]} and {batch2.shape[0]}")
    _check_inner(op, batch1.shape[2], batch2.shape[1], batch1.shape, batch2.shape)
    return prims.bmm(batch1, batch2)


def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    """``beta * self + alpha * bmm(batch1, batch2)``; ``self`` broadcasts to b × n × p."""
    return _scaled_sum("baddbmm", self, _bmm_checked("baddbmm", batch1, batch2), beta, alpha)


def addbmm(self, batch1, batch2, beta=1, alpha=1):
    """``beta * self + alpha * sum_b(batch1[b] @ batch2[b])``; ``self`` broadcasts to n × p."""
    product = _bmm_checked("addbmm", batch1, batch2)
    compute = _dtype.opmath_dtype(product.dtype)
    total = cast(prims.sum(product, [0], output_dtype=compute), product.dtype)
    return _scaled_sum("addbmm", self, total, beta, alpha)


# -- trace, dist, allclose, equal -------------------------------------------


def trace(self):
    """Sum of the main diagonal of a 2-D tensor; integral inputs give int64."""
    _check_ndim("trace", "self", self, 2)
    out = _dtype.int64 if is_integral(self.dtype) else self.dtype
    diagonal = prims.diagonal(self, 0, 0, 1)
    return cast(prims.sum(diagonal, [0], output_dtype=_dtype.opmath_dtype(out)), out)


def dist(self, other, p=2):
    """The ``p``-norm of ``self - other`` (broadcast, promoted); floating and complex inputs only."""
    op = "dist"
    for name, t in (("self", self), ("other", other)):
        if not is_floating(t.dtype) and not is_wrapped_scalar(t):
            raise TypeError(f"{op}: expected a floating point or complex '{name}', got {t.dtype.name}")
    diff = ops.sub.Tensor(self, other)
    return _vector_norm(op, diff, p, reduction_dims(op, None, diff.ndim), False)


def _isclose(op: str, a, b, rtol, atol, equal_nan):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (equal values, infinities included, are close)."""
    if a.dtype is not b.dtype:
        raise TypeError(f"{op}: self and other must have the same dtype, but got {a.dtype.name} and {b.dtype.name}")
    if rtol < 0 or atol < 0:
        raise ValueError(f"{op}: rtol and atol must be non-negative, got rtol={rtol} and atol={atol}")
    shape = broadcast_shapes(op, a.shape, b.shape)
    a, b = expand(a, shape), expand(b, shape)
    close = prims.eq(a, b)
    if equal_nan and is_floating(a.dtype):
        close = prims.logical_or(close, prims.logical_and(prims.isnan(a), prims.isnan(b)))
    if rtol == 0 and atol == 0:
        return close
    if not is_floating(a.dtype):
        a, b = cast(a, _dtype.float64), cast(b, _dtype.float64)
    compute = _dtype.opmath_dtype(a.dtype)
    a, b = cast(a, compute), cast(b, compute)
    actual = prims.abs(prims.sub(a, b))
    allowed = prims.abs(prims.mul(b, fill_like(rtol, b)))
    allowed = prims.add(allowed, fill_like(atol, allowed))
    within = prims.logical_and(prims.isfinite(actual), prims.le(actual, allowed))
    return prims.logical_or(close, within)


def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element pair (broadcast) satisfies ``|self - other| <= atol + rtol * |other|`` (a bool)."""
    close = _isclose("allclose", self, other, rtol, atol, equal_nan)
    return bool(prims.item(prims.all(close, None)))


def equal(self, other):
    """Whether both tensors have the same shape and elements (a bool; NaN is unequal); same dtype required."""
    if self.dtype is not other.dtype:
        raise TypeError(
            f"equal: expected both tensors to have the same dtype, got {self.dtype.name} and {other.dtype.name}"
        )
    if self.shape != other.shape:
        return False
    if self.numel() == 0:
        return True
    return bool(prims.item(prims.all(prims.eq(self, other), None)))


# -- definitions -----------------------------------------------------------

L = ("linalg",)
LC = ("linalg", "core")

# (schema, decomposition, tags, in-place variant?, out variant?)
LINALG = [
    ("matmul(Tensor self, Tensor other) -> Tensor", matmul, L, False, True),
    ("mm(Tensor self, Tensor mat2) -> Tensor", mm, LC, False, True),
    ("bmm(Tensor self, Tensor mat2) -> Tensor", bmm, LC, False, True),
    ("mv(Tensor self, Tensor vec) -> Tensor", mv, L, False, True),
    ("dot(Tensor self, Tensor tensor) -> Tensor", dot, L, False, True),
    ("vdot(Tensor self, Tensor other) -> Tensor", vdot, L, False, True),
    ("inner(Tensor self, Tensor other) -> Tensor", inner, L, False, True),
    ("outer(Tensor self, Tensor vec2) -> Tensor", outer, L, False, True),
    ("ger(Tensor self, Tensor vec2) -> Tensor", ger, L, False, True),
    ("linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", linear, L, False, True),
    ("addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", addmm, LC, True, True),
    ("addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor", addmv, L, True, True),
    ("addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", addr, L, True, True),
    (
        "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
        baddbmm,
        L,
        True,
        True,
    ),
    (
        "addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
        addbmm,
        L,
        True,
        True,
    ),
    ("trace(Tensor self) -> Tensor", trace, ("reduction",), False, True),
    ("dist(Tensor self, Tensor other, Scalar p=2) -> Tensor", dist, ("reduction",), False, True),
]


def _define():
    for schema, decomposition, tags, inplace, out in LINALG:
        define_with_variants(schema, decomposition, tags=tags, inplace=inplace, out=out)
    define(
        "allclose(Tensor self, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False) -> bool",
        allclose,
        tags=("data_dependent_output",),
    )
    define("equal(Tensor self, Tensor other) -> bool", equal, tags=("data_dependent_output",))


_define()
