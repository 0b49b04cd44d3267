"""Generated log1p, xlog1py and erfcx on special values (subnormals included) on opencl and the C paths.

PoCL's ``log1p`` returns +0 for the smallest subnormals of float32 and float64 (``log1p(x)`` is
``x`` there), which made ``log1p`` and ``xlog1py(inf, tiny)`` (inf * 0 = nan) wrong on the OpenCL
device. The oracle is NumPy's ``log1p`` with PyTorch's ``xlog1py`` rules (nan where ``y`` is nan,
0 where ``x`` is 0). float64 ``erfcx`` returned 0 above about 1e308, where ``sqrt(pi) * x`` overflowed.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import opweave
import pytest

TARGETS = ["opencl", "ccpu", "cpu-c"]


def _specials(dtype) -> np.ndarray:
    tiny = np.finfo(dtype).smallest_subnormal
    big = np.finfo(dtype).max
    vals = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.75, 3.0, 1e-30, -1e-30]
    return np.array(vals + [tiny, -tiny, 2 * tiny, big, -big], dtype=dtype)


def _run(name: str, arrays, target: str) -> np.ndarray:
    op = opweave.ops.lookup(f"prims::{name}")
    if target == "cpu-c":
        opweave.cpu.set_kernel_path("c")
        try:
            return op(*[opweave.tensor(a) for a in arrays]).numpy()
        finally:
            opweave.cpu.set_kernel_path(None)
    if not opweave.backends.is_available(target):
        pytest.skip(f"no {target} device here")
    return op(*[opweave.tensor(a, device=target) for a in arrays]).cpu().numpy()


def _assert_same(actual: np.ndarray, expected: np.ndarray) -> None:
    """nan-ness, and the sign of zeros and infinities, exactly; other values within 4 ulps (subnormals too)."""
    assert actual.dtype == expected.dtype
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
    exact = np.isinf(expected) | (expected == 0)
    np.testing.assert_array_equal(actual[exact], expected[exact])
    np.testing.assert_array_equal(np.signbit(actual[exact]), np.signbit(expected[exact]))
    finite = np.isfinite(expected) & ~exact
    eps = np.finfo(expected.dtype).eps
    np.testing.assert_allclose(actual[finite], expected[finite], rtol=4 * eps, atol=0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("target", TARGETS)
def test_log1p_on_special_values(target, dtype):
    x = _specials(dtype)
    with np.errstate(all="ignore"):
        expected = np.log1p(x)
    _assert_same(_run("log1p", [x], target), expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("target", TARGETS)
def test_xlog1py_on_every_pair_of_special_values(target, dtype):
    v = _specials(dtype)
    pairs = np.array(list(itertools.product(range(v.size), repeat=2)))
    x, y = v[pairs[:, 0]], v[pairs[:, 1]]
    with np.errstate(all="ignore"):
        expected = np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log1p(y))).astype(dtype)
    _assert_same(_run("xlog1py", [x, y], target), expected)


@pytest.mark.parametrize("target", TARGETS)
def test_erfcx_of_huge_float64_arguments_is_subnormal_not_zero(target):
    # erfcx(x) = 1 / (x sqrt(pi)) (1 - 1 / (2 x^2) + ...): past 1e300 the correction is below 1e-600
    x = np.array([1e300, 1e305, np.finfo(np.float64).max, -np.finfo(np.float64).max, np.inf, 30.0])
    expected = np.array([*(1 / math.sqrt(math.pi) / x[:3]), np.inf, 0.0, math.nan])
    actual = _run("erfcx", [x], target)
    np.testing.assert_allclose(actual[:3], expected[:3], rtol=1e-12, atol=0)
    assert actual[3] == np.inf and actual[4] == 0.0 and not np.signbit(actual[4])
    z = 30.0  # continued fraction region, against the asymptotic series
    terms = [math.prod(range(1, 2 * n, 2)) * (-1 / (2 * z * z)) ** n for n in range(10)]  # (2n-1)!! (-1/(2z^2))^n
    series = math.fsum(terms) / (z * math.sqrt(math.pi))
    assert abs(actual[5] - series) <= 1e-12 * series
