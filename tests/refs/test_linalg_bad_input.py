"""Bad input to the square-matrix linalg ops: the error type PyTorch raises (a RuntimeError, here also the
ValueError/TypeError DESIGN.md §8 asks for), a message naming the op and the argument, and inputs left intact."""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest

L = D.linalg

# (entry, op name in messages, argument name, call)
_SQUARE_OPS = [
    ("inv", "linalg_inv", "A", L.inv),
    ("inv_ex", "linalg_inv_ex", "A", L.inv_ex),
    ("det", "linalg_det", "A", L.det),
    ("slogdet", "linalg_slogdet", "A", L.slogdet),
    ("cholesky", "linalg_cholesky", "self", L.cholesky),
    ("cholesky_ex", "linalg_cholesky_ex", "self", L.cholesky_ex),
    ("eigh", "linalg_eigh", "self", L.eigh),
    ("eigvalsh", "linalg_eigvalsh", "self", L.eigvalsh),
    ("eig", "linalg_eig", "self", L.eig),
    ("eigvals", "linalg_eigvals", "self", L.eigvals),
    ("matrix_exp", "linalg_matrix_exp", "self", L.matrix_exp),
    ("solve", "linalg_solve", "A", lambda a: L.solve(a, D.ones(a.shape[:-1] or (1,), dtype=a.dtype))),
]
_ANY_MATRIX_OPS = [
    ("qr", "linalg_qr", "A", L.qr),
    ("svd", "linalg_svd", "A", L.svd),
    ("svdvals", "linalg_svdvals", "A", L.svdvals),
    ("lu", "linalg_lu", "A", L.lu),
    ("lu_factor", "linalg_lu_factor", "A", L.lu_factor),
    ("pinv", "linalg_pinv", "self", L.pinv),
    ("matrix_rank", "linalg_matrix_rank", "input", L.matrix_rank),
]


def _ids(table):
    return [row[0] for row in table]


def _raises_intact(call, x, errors, *words):
    before = (x.numpy().copy(), x.shape, x.dtype, x.stride())
    with pytest.raises(errors[0]) as info:
        call(x)
    assert all(isinstance(info.value, e) for e in errors), type(info.value).__mro__
    message = str(info.value)
    assert all(w in message for w in words), message
    np.testing.assert_array_equal(x.numpy(), before[0])
    assert (x.shape, x.dtype, x.stride()) == before[1:]


@pytest.mark.parametrize(
    ("entry", "op", "arg", "call"), _SQUARE_OPS + _ANY_MATRIX_OPS, ids=_ids(_SQUARE_OPS + _ANY_MATRIX_OPS)
)
@pytest.mark.parametrize("shape", [(), (3,)], ids=["0-D", "1-D"])
def test_fewer_than_two_dims_is_a_value_error_naming_op_and_argument(entry, op, arg, call, shape):
    x = D.tensor(np.arange(1.0, 1.0 + np.prod(shape, dtype=int)).reshape(shape))
    _raises_intact(call, x, (ValueError, RuntimeError), op, f"'{arg}'", "2 dims")


@pytest.mark.parametrize(("entry", "op", "arg", "call"), _SQUARE_OPS, ids=_ids(_SQUARE_OPS))
@pytest.mark.parametrize("shape", [(2, 3), (4, 3, 2)], ids=["2x3", "batched-3x2"])
def test_a_non_square_matrix_is_a_value_error_naming_op_and_argument(entry, op, arg, call, shape):
    x = D.tensor(np.arange(float(np.prod(shape))).reshape(shape))
    _raises_intact(call, x, (ValueError, RuntimeError), op, f"'{arg}'", "square", str(list(shape)))


@pytest.mark.parametrize(
    ("entry", "op", "arg", "call"), _SQUARE_OPS + _ANY_MATRIX_OPS, ids=_ids(_SQUARE_OPS + _ANY_MATRIX_OPS)
)
@pytest.mark.parametrize("dtype", [D.int64, D.int32, D.bool], ids=["int64", "int32", "bool"])
def test_an_integer_or_bool_matrix_is_a_type_error_naming_op_and_argument(entry, op, arg, call, dtype):
    x = D.tensor(np.eye(3)).to(dtype)
    _raises_intact(call, x, (TypeError, RuntimeError), op, f"'{arg}'", dtype.name)


def test_a_transposed_view_stays_intact_too():
    base = D.tensor(np.arange(6.0).reshape(2, 3))
    view = base.t()
    _raises_intact(L.inv, view, (ValueError, RuntimeError), "linalg_inv", "'A'", "square")
    np.testing.assert_array_equal(base.numpy(), np.arange(6.0).reshape(2, 3))


# (op name in messages, call, first argument name and ndim, second argument name and ndim)
_PRODUCTS = [
    ("mm", lambda a, b: D.mm(a, b), ("self", 2), ("mat2", 2)),
    ("bmm", lambda a, b: D.bmm(a, b), ("self", 3), ("mat2", 3)),
    ("mv", lambda a, b: D.mv(a, b), ("self", 2), ("vec", 1)),
    ("dot", lambda a, b: D.dot(a, b), ("self", 1), ("tensor", 1)),
    ("vdot", lambda a, b: D.vdot(a, b), ("self", 1), ("other", 1)),
    ("addmm", lambda a, b: D.addmm(D.zeros(()), a, b), ("mat1", 2), ("mat2", 2)),
    ("addmv", lambda a, b: D.addmv(D.zeros(()), a, b), ("mat", 2), ("vec", 1)),
    ("baddbmm", lambda a, b: D.baddbmm(D.zeros(()), a, b), ("batch1", 3), ("batch2", 3)),
]


def _operand(ndim: int, dtype=np.float32):
    return D.tensor(np.ones((2,) * ndim, dtype=dtype))


def _product_raises_intact(call, a, b, error, *words):
    before = [(t.numpy().copy(), t.shape, t.dtype) for t in (a, b)]
    with pytest.raises(error) as info:
        call(a, b)
    assert all(w in str(info.value) for w in words), str(info.value)
    for t, (values, shape, dtype) in zip((a, b), before):
        np.testing.assert_array_equal(t.numpy(), values)
        assert (t.shape, t.dtype) == (shape, dtype)


@pytest.mark.parametrize(("op", "call", "first", "second"), _PRODUCTS, ids=[row[0] for row in _PRODUCTS])
def test_matrix_product_operands_of_the_wrong_ndim_are_value_errors(op, call, first, second):
    (n1, d1), (n2, d2) = first, second
    _product_raises_intact(call, _operand(d1 + 1), _operand(d2), ValueError, op, f"'{n1}'", f"{d1}-D")
    _product_raises_intact(call, _operand(d1), _operand(max(d2 - 1, 0)), ValueError, op, f"'{n2}'", f"{d2}-D")


@pytest.mark.parametrize(("op", "call", "first", "second"), _PRODUCTS, ids=[row[0] for row in _PRODUCTS])
def test_matrix_product_operands_of_two_dtypes_or_bool_are_type_errors(op, call, first, second):
    (n1, d1), (n2, d2) = first, second
    a, b = _operand(d1), _operand(d2, np.float64)
    _product_raises_intact(call, a, b, TypeError, op, f"'{n1}'", f"'{n2}'", "float32", "float64")
    _product_raises_intact(call, _operand(d1, bool), _operand(d2, bool), TypeError, op, "bool")
