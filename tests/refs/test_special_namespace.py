"""``opweave.special``: the namespace holds what ``torch.special`` has, and the aliases added for it
(softmax, log_softmax, logsumexp) match ``scipy.special``."""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

#: torch.special's functions (PyTorch 2.x).
TORCH_SPECIAL = """airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t chebyshev_polynomial_u
chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc erfcx erfinv exp2 expit expm1 gammainc gammaincc
gammaln hermite_polynomial_h hermite_polynomial_he i0 i0e i1 i1e laguerre_polynomial_l legendre_polynomial_p log1p
log_ndtr log_softmax logit logsumexp modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1
multigammaln ndtr ndtri polygamma psi round scaled_modified_bessel_k0 scaled_modified_bessel_k1
shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w sinc softmax spherical_bessel_j0 xlog1py xlogy zeta""".split()


def test_namespace_is_complete():
    missing = [name for name in TORCH_SPECIAL if not hasattr(D.special, name)]
    assert not missing, missing


@settings(max_examples=20)
@given(
    st.lists(st.integers(1, 4), min_size=1, max_size=3),
    st.sampled_from([D.float32, D.float64]),
    st.integers(0, 2**31),
    st.data(),
)
def test_softmax_family(shape, dtype, seed, data):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-5, 5, shape).astype(dtype.numpy)
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    tol = 1e-5 if dtype is D.float32 else 1e-12
    t = D.tensor(x)
    assert np.allclose(D.special.softmax(t, dim).numpy(), sp.softmax(x.astype(np.float64), axis=dim), atol=tol)
    assert np.allclose(D.special.log_softmax(t, dim).numpy(), sp.log_softmax(x.astype(np.float64), axis=dim), atol=tol)
    keep = data.draw(st.booleans())
    want = sp.logsumexp(x.astype(np.float64), axis=dim, keepdims=keep)
    assert np.allclose(D.special.logsumexp(t, [dim], keep).numpy(), want, atol=tol)


def test_dtype_argument_and_out():
    x = D.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert D.special.softmax(x, 1, D.float64).dtype is D.float64
    assert D.special.log_softmax(x, 0, dtype=D.float64).dtype is D.float64
    out = D.empty((2,), dtype=D.float32)
    assert D.ops.special_logsumexp.out(x, [1], out=out) is out
    assert np.allclose(out.numpy(), sp.logsumexp(np.arange(6.0).reshape(2, 3), axis=1))


def test_errors():
    x = D.tensor(np.ones((2, 3)))
    with pytest.raises(ValueError, match="softmax"):
        D.special.softmax(x, 2)
    with pytest.raises(TypeError):
        D.special.softmax(D.tensor(np.arange(3)), 0)
