"""The generator's GPU row softmax (``codegen.softmax.group_program``, CUDA's ``"group_softmax"`` override): compiled
by NVRTC to cubins for sm_80 and sm_90 here, and against NumPy on a GPU (NaN and -inf rows, float64, log_softmax,
the cases that decline to the decomposition)."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest

_nvrtc = pytest.importorskip("opweave_cuda._nvrtc")
from opweave_cuda._runtime import CudaRuntime  # noqa: E402
from opweave_kernelgen.codegen import softmax as softmax_gen  # noqa: E402
from opweave_kernelgen.dialect.c import C  # noqa: E402
from opweave_kernelgen.dialect.cuda import CUDA  # noqa: E402

NVRTC, REASON = _nvrtc.nvrtc()


@pytest.mark.skipif(NVRTC is None, reason=f"NVRTC is not available: {REASON}")
@pytest.mark.parametrize("arch", [80, 90])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernels_compile_to_cubins(arch, dtype):
    src = softmax_gen.group_program(CUDA, dtype, 32)
    assert src.count("__shfl_down_sync") == 2 * 2 * 2 * 5, "kernels x reductions x trees (in and over warps) x steps"
    cubin = _nvrtc.compile_cubin(src, arch, name=f"softmax_{dtype}.cu")
    assert cubin[:4] == b"\x7fELF"
    assert set(_nvrtc.kernel_names(src)) == {"softmax_rows", "log_softmax_rows"}
    for name in _nvrtc.kernel_names(src):
        assert name.encode() in cubin


def test_cuda_selects_the_group_softmax_and_dialects_without_shuffles_cannot_render_it():
    assert "group_softmax" in CudaRuntime.overrides
    with pytest.raises(NotImplementedError, match="no subgroup shuffles"):
        softmax_gen.group_program(C, "float32", 32)


on_gpu = pytest.mark.skipif(not ow.cuda.is_available(), reason="no CUDA device")


@on_gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 31, 256, 1000, 8192])
def test_row_softmax_matches_numpy(dtype, n):
    a = (np.random.default_rng(n).standard_normal((5, n)) * 4).astype(dtype)
    if n > 2:
        a[1, 2] = np.nan
        a[2, :] = -np.inf
        a[3, 1] = np.inf
    x = ow.tensor(a, device="cuda")
    with np.errstate(invalid="ignore", over="ignore"):
        wide = a.astype(np.float64)
        shifted = wide - wide.max(1, keepdims=True)
        e = np.exp(shifted)
        want = e / e.sum(1, keepdims=True)
        want_log = shifted - np.log(e.sum(1, keepdims=True))
    eps = np.finfo(dtype).eps
    got = ow.softmax(x, dim=-1).cpu().numpy()
    np.testing.assert_allclose(got, want, rtol=8 * eps * np.log2(n + 1) + 4 * eps, atol=4 * eps)
    got_log = ow.log_softmax(x, dim=1).cpu().numpy()
    np.testing.assert_allclose(got_log, want_log, rtol=8 * eps * np.log2(n + 1) + 4 * eps, atol=8 * eps * n)


@on_gpu
def test_other_layouts_decline_to_the_generator():
    a = np.random.default_rng(0).standard_normal((6, 7)).astype(np.float32)
    x = ow.tensor(a, device="cuda")
    e = np.exp(a - a.max(0, keepdims=True))
    np.testing.assert_allclose(ow.softmax(x, dim=0).cpu().numpy(), e / e.sum(0, keepdims=True), rtol=1e-5)
    e = np.exp(a.T - a.T.max(1, keepdims=True))
    np.testing.assert_allclose(ow.softmax(x.T, dim=1).cpu().numpy(), e / e.sum(1, keepdims=True), rtol=1e-5)
