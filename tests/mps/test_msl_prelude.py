"""The MSL prelude's replacements for C99 functions Metal lacks (``erf``, ``erfc``, ``expm1``, ``log1p``,
``cbrt``, ``hypot``), run on the CPU and compared with NumPy/SciPy in float64.

The prelude is compiled as C++ against ``hostmath/metal_stdlib``, which maps Metal's ``exp``/``log``/``pow``...
to the host's float libm (correctly rounded or nearly); Metal's own are within 4 ulp (its precise math),
so these bounds hold on a Mac up to that difference. This measures the algorithms, not the device.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from opweave_kernelgen.dialect.msl import PRELUDE
from scipy import special

CXX = shutil.which("g++") or shutil.which("clang++")
pytestmark = pytest.mark.skipif(CXX is None, reason="no C++ compiler (g++ or clang++)")

_MAIN = r"""
#include <cstdio>
#include <vector>
int main() {
    long n;
    if (std::fread(&n, sizeof n, 1, stdin) != 1) return 1;
    std::vector<float> x(n), y(n), out(7 * n);
    if (std::fread(x.data(), 4, n, stdin) != (size_t)n || std::fread(y.data(), 4, n, stdin) != (size_t)n) return 1;
    for (long i = 0; i < n; ++i) {
        float v = x[i];
        float r[7] = {prelude::erf(v), prelude::erfc(v), prelude::expm1(v), prelude::log1p(v), prelude::cbrt(v),
                      prelude::hypot(v, y[i]), prelude::as_float(prelude::as_uint(v))};
        for (int j = 0; j < 7; ++j) out[j * n + i] = r[j];
    }
    std::fwrite(out.data(), 4, out.size(), stdout);
    return 0;
}
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """``run(x, y) -> results (7, n)``: the prelude's functions of float32 ``x`` (and ``y`` for hypot)."""
    folder = tmp_path_factory.mktemp("prelude")
    body = PRELUDE.split("using namespace metal;", 1)[1]
    source = "#include <metal_stdlib>\nnamespace prelude {\nusing namespace metal;\n" + body + "}\n" + _MAIN
    (folder / "prelude.cpp").write_text(source)
    shim = Path(__file__).parent / "hostmath"
    cmd = [CXX, "-std=c++17", "-O1", "-ffp-contract=off", "-w", f"-I{shim}", "prelude.cpp", "-o", "prelude"]
    built = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, check=False)
    assert built.returncode == 0, built.stderr

    def call(x, y):
        x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
        data = np.int64(x.size).tobytes() + x.tobytes() + y.tobytes()
        done = subprocess.run([str(folder / "prelude")], input=data, capture_output=True, check=True)
        return np.frombuffer(done.stdout, np.float32).reshape(7, x.size)

    return call


def _ulps(got, want):
    """Distance from ``want`` (float64) to float32 ``got`` in float32 ulps at ``want``."""
    want32 = np.abs(want).astype(np.float32)
    spacing = np.spacing(np.maximum(want32, np.finfo(np.float32).tiny)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing


def _inputs(rng, n=20000):
    mags = np.exp(rng.uniform(np.log(1e-30), np.log(1e30), n))
    small = rng.uniform(-2, 2, n)
    return np.concatenate([mags, -mags, small, [0.0, -0.0, 0.5, -0.5, 1e-38, 3e38]]).astype(np.float32)


def test_accuracy_against_float64_references(run):
    rng = np.random.default_rng(0)
    x = _inputs(rng)
    y = _inputs(np.random.default_rng(1))
    erf, erfc, expm1, log1p, cbrt, hypot, bits = run(x, y)
    xd, yd = x.astype(np.float64), y.astype(np.float64)
    np.testing.assert_array_equal(bits.view(np.uint32), x.view(np.uint32))
    # measured here: erf 2.8 ulp, erfc 5.1, expm1 2.1, log1p 2.0, cbrt 0.9, hypot 1.8
    assert np.max(_ulps(erf, special.erf(xd))) <= 4
    big = special.erfc(xd) > 1e-30
    assert np.max(_ulps(erfc[big], special.erfc(xd[big]))) <= 8
    finite = np.abs(xd) < 80
    assert np.max(_ulps(expm1[finite], np.expm1(xd[finite]))) <= 3
    ok = xd > -1
    assert np.max(_ulps(log1p[ok], np.log1p(xd[ok]))) <= 3
    assert np.max(_ulps(cbrt, np.cbrt(xd))) <= 2
    want = np.hypot(xd, yd)
    fits = want < np.finfo(np.float32).max
    assert np.max(_ulps(hypot[fits], want[fits])) <= 2
    assert np.all(np.isinf(hypot[~fits]))


def test_special_values(run):
    inf, nan = np.inf, np.nan
    x = np.array([inf, -inf, nan, 0.0, -0.0, -1.0, -2.0], np.float32)
    erf, erfc, expm1, log1p, cbrt, hypot, _ = run(x, np.array([nan, 3, inf, 0, -0.0, 0, 0], np.float32))
    np.testing.assert_array_equal(erf[:2], [1, -1])
    np.testing.assert_array_equal(erfc[:2], [0, 2])
    np.testing.assert_array_equal(expm1[:2], [inf, -1])
    np.testing.assert_array_equal(log1p[[0, 5]], [inf, -inf])
    assert np.isnan(log1p[6]) and np.isnan(erf[2]) and np.isnan(expm1[2]) and np.isnan(cbrt[2])
    np.testing.assert_array_equal(cbrt[:2], [inf, -inf])
    np.testing.assert_array_equal(hypot[:3], [inf, inf, inf])  # C99: hypot(+-inf, anything) is +inf
    for got in (erf, expm1, log1p, cbrt):  # signed zeros are kept
        np.testing.assert_array_equal(np.signbit(got[3:5]), [False, True])
