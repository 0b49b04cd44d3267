"""``linalg.ldl_factor``/``ldl_factor_ex``/``ldl_solve`` against LAPACK's ``?sytrf``/``?hetrf`` through SciPy.

LAPACK's raw output is PyTorch's convention: the lower triangle holds ``L`` and the blocks of ``D``,
``pivots`` are 1-based, negative (and repeated) for a 2×2 block.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
import scipy.linalg
from hypothesis import given
from hypothesis import strategies as st

DTYPES = {"float32": np.float32, "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128}


def lapack_ldl(a: np.ndarray, hermitian: bool):
    """``(LD, pivots, info)`` of one matrix by LAPACK (lower), the upper triangle zeroed."""
    name = "hetrf" if hermitian and np.iscomplexobj(a) else "sytrf"
    (fn,) = scipy.linalg.get_lapack_funcs((name,), (a,))
    ld, piv, info = fn(a, lower=1)
    return np.tril(ld), piv.astype(np.int32), info


def symmetric(rng, batch, n, dtype, hermitian, rank=None):
    m = rng.normal(size=(*batch, n, n))
    if np.iscomplexobj(np.zeros((), dtype)):
        m = m + 1j * rng.normal(size=(*batch, n, n))
    if rank is not None:  # a singular matrix: its last rows and columns are zero
        m[..., rank:, :] = 0
        m[..., :, rank:] = 0
    mt = np.swapaxes(m, -1, -2)
    return (m + (np.conj(mt) if hermitian else mt)).astype(dtype)


@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([(), (2,), (2, 1)]),
    st.integers(0, 6),
    st.sampled_from(sorted(DTYPES)),
    st.booleans(),
    st.booleans(),
)
def test_ldl_factor_and_solve_match_lapack(seed, batch, n, dtype_name, hermitian, singular):
    rng = np.random.default_rng(seed)
    dtype = DTYPES[dtype_name]
    a = symmetric(rng, batch, n, dtype, hermitian, rank=n // 2 if singular else None)
    t = ow.tensor(a)
    ld, piv, info = ow.linalg.ldl_factor_ex(t, hermitian=hermitian)
    assert ld.dtype == t.dtype and piv.dtype == ow.int32 and info.dtype == ow.int32
    assert tuple(ld.shape) == a.shape and tuple(piv.shape) == a.shape[:-1] and tuple(info.shape) == batch
    assert ow.equal(t, ow.tensor(a))  # the input is left intact
    count = int(np.prod(batch))
    flat = a.reshape(count, n, n)
    got_ld, got_piv, got_info = (x.numpy().reshape(count, *x.shape[len(batch) :]) for x in (ld, piv, info))
    exact = dtype in (np.float64, np.complex128)  # float32 pivot choices may differ on LAPACK's rounding
    scale = max(1.0, float(np.abs(a).max(initial=0)))
    tol = (1e-9 if exact else 1e-3) * scale
    for i, m in enumerate(flat):
        want_ld, want_piv, want_info = lapack_ldl(m.copy(), hermitian)
        if exact:
            np.testing.assert_array_equal(got_piv[i], want_piv)
            assert got_info[i] == want_info
            np.testing.assert_allclose(got_ld[i], want_ld, rtol=1e-9, atol=tol)
    if singular or n == 0:
        return
    b = rng.normal(size=(*batch, n, 3)).astype(dtype)
    x = ow.linalg.ldl_solve(ld, piv, ow.tensor(b), hermitian=hermitian)
    want = np.linalg.solve(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64), b)
    cond = np.linalg.cond(a.reshape(int(np.prod(batch)), n, n)).max()
    rel = (1e-10 if exact else 1e-4) * max(1.0, cond)
    np.testing.assert_allclose(x.numpy(), want, rtol=rel, atol=rel * float(np.abs(want).max(initial=1)))


def test_ldl_factor_raises_on_a_singular_matrix_and_ex_reports_it():
    z = ow.zeros(2, 2, dtype=ow.float64)
    with pytest.raises(RuntimeError, match="singular"):
        ow.linalg.ldl_factor(z)
    ld, piv, info = ow.linalg.ldl_factor_ex(z)
    assert info.item() == 1 and piv.tolist() == [1, 2]
    with pytest.raises(RuntimeError):
        ow.linalg.ldl_factor_ex(z, check_errors=True)


def test_two_by_two_pivot_convention():
    # a zero diagonal forces a 2x2 block with an interchange: pivots are negative and repeated
    a = np.array([[1.0, 2, 3], [2, 1, 5], [3, 5, 0.5]])
    ld, piv = ow.linalg.ldl_factor(ow.tensor(a))
    want_ld, want_piv, _ = lapack_ldl(a.copy(), False)
    assert piv.tolist() == want_piv.tolist() == [-3, -3, 3]
    np.testing.assert_allclose(ld.numpy(), want_ld, rtol=1e-12)


def test_bad_arguments_raise():
    with pytest.raises(TypeError):
        ow.linalg.ldl_factor(ow.ones(2, 2, dtype=ow.int64))
    with pytest.raises(ValueError, match="square"):
        ow.linalg.ldl_factor(ow.ones(2, 3))
    ld, piv = ow.linalg.ldl_factor(ow.eye(3, dtype=ow.float64))
    with pytest.raises(TypeError):
        ow.linalg.ldl_solve(ld, piv, ow.ones(3, 1))  # float32 B for a float64 LD
    with pytest.raises(TypeError):
        ow.linalg.ldl_solve(ld, piv.to(ow.int64), ow.ones(3, 1, dtype=ow.float64))
    with pytest.raises(ValueError):
        ow.linalg.ldl_solve(ld, piv, ow.ones(2, 1, dtype=ow.float64))
