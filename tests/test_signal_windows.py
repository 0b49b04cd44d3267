"""``opweave.signal.windows`` against SciPy's window definitions (``scipy.signal.windows``)."""

from __future__ import annotations

import numpy as np
import opweave as ow
import opweave.signal.windows as W
import pytest
import scipy.signal.windows as sw
from hypothesis import given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=20, deadline=None)
NUTTALL = [0.3635819, 0.4891775, 0.1365995, 0.0106411]

# name -> (opweave kwargs, SciPy call)
CASES = {
    "bartlett": ({}, lambda M, sym: sw.bartlett(M, sym=sym)),
    "blackman": ({}, lambda M, sym: sw.blackman(M, sym=sym)),
    "cosine": ({}, lambda M, sym: sw.cosine(M, sym=sym)),
    "hann": ({}, lambda M, sym: sw.hann(M, sym=sym)),
    "hamming": ({}, lambda M, sym: sw.hamming(M, sym=sym)),
    "nuttall": ({}, lambda M, sym: sw.general_cosine(M, NUTTALL, sym=sym)),
    "kaiser": ({"beta": 3.5}, lambda M, sym: sw.kaiser(M, 3.5, sym=sym)),
    "gaussian": ({"std": 1.7}, lambda M, sym: sw.gaussian(M, 1.7, sym=sym)),
    "exponential": ({"tau": 2.5}, lambda M, sym: sw.exponential(M, tau=2.5, sym=sym)),
    "general_cosine": ({"a": [0.5, 0.3, 0.2]}, lambda M, sym: sw.general_cosine(M, [0.5, 0.3, 0.2], sym=sym)),
    "general_hamming": ({"alpha": 0.6}, lambda M, sym: sw.general_hamming(M, 0.6, sym=sym)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@SETTINGS
@given(M=st.integers(0, 40), sym=st.booleans(), dtype=st.sampled_from([ow.float32, ow.float64]))
def test_windows_match_scipy(name, M, sym, dtype):
    kwargs, oracle = CASES[name]
    got = getattr(W, name)(M, sym=sym, dtype=dtype, **kwargs)
    assert got.dtype is dtype and got.shape == (M,)
    tol = 1e-5 if dtype is ow.float32 else 1e-12
    np.testing.assert_allclose(got.numpy(), oracle(M, sym), rtol=tol, atol=tol)


def test_exponential_center_and_defaults(restore_default_dtype):
    got = W.exponential(7, center=1.0, tau=2.0, sym=False, dtype=ow.float64)
    np.testing.assert_allclose(got.numpy(), np.exp(-np.abs(np.arange(7) - 1.0) / 2.0))
    ow.set_default_dtype(ow.float64)
    assert W.hann(4).dtype is ow.float64
    assert W.hann(3, requires_grad=True).requires_grad


@pytest.mark.parametrize(
    "call,error",
    [
        (lambda: W.hann(-1), ValueError),
        (lambda: W.hann(3, dtype=ow.int64), ValueError),
        (lambda: W.hann(3, layout="sparse_coo"), ValueError),
        (lambda: W.gaussian(3, std=0.0), ValueError),
        (lambda: W.exponential(3, tau=-1.0), ValueError),
        (lambda: W.exponential(3, center=1.0, sym=True), ValueError),
        (lambda: W.kaiser(3, beta=-1.0), ValueError),
        (lambda: W.general_cosine(3, a=None), TypeError),
        (lambda: W.general_cosine(3, a=1.0), TypeError),
        (lambda: W.general_cosine(3, a=[]), ValueError),
    ],
)
def test_bad_arguments_raise_as_pytorch(call, error):
    with pytest.raises(error):
        call()
