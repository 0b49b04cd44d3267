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
