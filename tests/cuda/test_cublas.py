"""cuBLAS binding of the CUDA backend (``opweave_cuda.cublas``).

Without a GPU: the translation of a row-major GEMM into cuBLAS's column-major call is checked by running the
translated arguments through a NumPy model of ``cublasGemmStridedBatchedEx`` (column-major reads with ``lda``/``ldb``/
``ldc`` and batch strides, ``CUBLAS_OP_N``/``CUBLAS_OP_T``) and comparing with NumPy's row-major product; compute and
scale types, math modes, the workspace rules and the library's symbols are checked against cuBLAS's headers and
PyTorch's documented behaviour. With a GPU and driver: the real call is compared with NumPy.
"""

from __future__ import annotations

import gc
import re
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import opweave
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave_cuda import cublas

# cublas_api.h / library_types.h, written out here so that a wrong constant in the module fails
OP_N, OP_T = 0, 1
COMPUTE_16F, COMPUTE_32F, COMPUTE_64F = 64, 68, 70
COMPUTE_32F_FAST_16BF, COMPUTE_32F_FAST_TF32 = 75, 77
DEFAULT_MATH, DISALLOW_REDUCED_PRECISION_REDUCTION = 0, 16
CUDA_R_16F, CUDA_R_16BF, CUDA_R_32F, CUDA_C_32F, CUDA_R_64F, CUDA_C_64F = 2, 14, 0, 4, 1, 5


# -- a NumPy model of cublasGemmStridedBatchedEx -------------------------------------------------------------------


def _read_column_major(memory, offset, rows, cols, ld):
    """The column-major rows×cols matrix at ``memory[offset]`` with leading dimension ``ld`` (BLAS checks ld)."""
    assert ld >= max(1, rows), f"BLAS requires ld >= max(1, rows): ld={ld}, rows={rows}"
    index = offset + np.arange(rows)[:, None] + ld * np.arange(cols)[None, :]
    if index.size:
        assert 0 <= index.min() and index.max() < memory.size, "cuBLAS would read outside the operand"
    return memory[index]


def _operand(memory, offset, trans, rows, cols, ld):
    """op(X) of shape rows×cols: X itself (OP_N) or the transpose of the stored cols×rows matrix (OP_T)."""
    if trans == OP_N:
        return _read_column_major(memory, offset, rows, cols, ld)
    assert trans == OP_T
    return _read_column_major(memory, offset, cols, rows, ld).T


def _run_plan(plan, memory_a, memory_b, memory_c, alpha, beta):
    """Execute ``plan`` on flat memories the way cuBLAS would (opweave's A, B, C memories as given)."""
    first, second = (memory_b, memory_a) if plan.swapped else (memory_a, memory_b)
    out = memory_c.copy()
    for i in range(plan.batch):
        op_a = _operand(first, i * plan.stride_a, plan.transa, plan.m, plan.k, plan.lda)
        op_b = _operand(second, i * plan.stride_b, plan.transb, plan.k, plan.n, plan.ldb)
        current = _read_column_major(out, i * plan.stride_c, plan.m, plan.n, plan.ldc)
        result = alpha * (op_a @ op_b) + (beta * current if beta != 0 else 0)
        index = i * plan.stride_c + np.arange(plan.m)[:, None] + plan.ldc * np.arange(plan.n)[None, :]
        out[index] = result
    return out


# -- random row-major operands in memory ---------------------------------------------------------------------------


@st.composite
def _layout(draw, rows, cols, *, broadcast_ok):
    """Strides (batch, row, col) of a rows×cols matrix with a BLAS layout: row- or column-major, padded or not,
    a size-1 dimension with any stride, and for inputs a batch stride of 0 (broadcast)."""
    order = draw(st.sampled_from(["row", "col"]))
    pad = draw(st.integers(0, 3))
    if order == "row":
        row_stride, col_stride = cols + pad, 1
    else:
        row_stride, col_stride = 1, rows + pad
    if rows == 1 and draw(st.booleans()):
        row_stride = draw(st.integers(0, 9))  # ignored by a 1-row matrix
    if cols == 1 and draw(st.booleans()):
        col_stride = draw(st.integers(0, 9))
    span = (rows - 1) * row_stride + (cols - 1) * col_stride + 1 if rows and cols else 0
    choices = ["dense", "padded"] + (["broadcast"] if broadcast_ok else [])
    kind = draw(st.sampled_from(choices))
    batch_stride = {"dense": span, "padded": span + draw(st.integers(1, 5)), "broadcast": 0}[kind]
    return batch_stride, row_stride, col_stride


def _memory_size(batch, rows, cols, strides):
    if not (batch and rows and cols):
        return 1
    batch_stride, row_stride, col_stride = strides
    return (batch - 1) * batch_stride + (rows - 1) * row_stride + (cols - 1) * col_stride + 1


def _view(memory, batch, rows, cols, strides):
    item = memory.itemsize
    return np.lib.stride_tricks.as_strided(memory, (batch, rows, cols), tuple(s * item for s in strides))


@given(data=st.data())
def test_translated_call_computes_the_row_major_product(data):
    batch = data.draw(st.integers(0, 3), label="batch")
    m, n, k = (data.draw(st.integers(0, 5), label=name) for name in "mnk")
    a_strides = data.draw(_layout(m, k, broadcast_ok=True), label="a_strides")
    b_strides = data.draw(_layout(k, n, broadcast_ok=True), label="b_strides")
    c_strides = data.draw(_layout(m, n, broadcast_ok=False), label="c_strides")
    dtype = data.draw(st.sampled_from(["float64", "complex128"]), label="dtype")
    alpha = data.draw(st.sampled_from([1.0, -0.5, 2.0]), label="alpha")
    beta = data.draw(st.sampled_from([0.0, 1.0, 0.25]), label="beta")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))

    def memory(rows, cols, strides):
        size = _memory_size(batch, rows, cols, strides)
        values = rng.standard_normal(size)
        return values + 1j * rng.standard_normal(size) if dtype == "complex128" else values

    mem_a, mem_b, mem_c = memory(m, k, a_strides), memory(k, n, b_strides), memory(m, n, c_strides)
    a = _view(mem_a, batch, m, k, a_strides)
    b = _view(mem_b, batch, k, n, b_strides)
    c0 = _view(mem_c, batch, m, n, c_strides).copy()
    expected = alpha * (a @ b) + beta * c0

    plan = cublas.plan_gemm(dtype, batch, m, n, k, a_strides, b_strides, c_strides)
    if plan.empty:
        assert batch == 0 or m == 0 or n == 0
        return
    out = _run_plan(plan, mem_a, mem_b, mem_c, alpha, beta)
    got = _view(out, batch, m, n, c_strides)
    # the model and NumPy may sum in different orders: |error| <= (k + 2) * eps * (|alpha| |A| |B| + |beta| |C|)
    bound = abs(alpha) * (np.abs(a) @ np.abs(b)) + abs(beta) * np.abs(c0)
    assert np.all(np.abs(got - expected) <= 4 * (k + 2) * 2.0**-52 * bound)
    # memory of C outside its matrices is left alone
    touched = np.zeros(mem_c.size, bool)
    touched[_indices(batch, m, n, c_strides)] = True
    np.testing.assert_array_equal(out[~touched], mem_c[~touched])


def _indices(batch, rows, cols, strides):
    b, r, c = np.meshgrid(np.arange(batch), np.arange(rows), np.arange(cols), indexing="ij")
    return (b * strides[0] + r * strides[1] + c * strides[2]).ravel()


def test_contiguous_row_major_is_the_swapped_untransposed_call():
    """The common case: row-major A, B, C become cuBLAS's Cᵀ = Bᵀ Aᵀ with OP_N on both and no copies."""
    m, n, k = 3, 5, 7
    plan = cublas.plan_gemm("float32", 4, m, n, k, (m * k, k, 1), (k * n, n, 1), (m * n, n, 1))
    assert plan.swapped
    assert (plan.transa, plan.transb) == (OP_N, OP_N)
    assert (plan.m, plan.n, plan.k) == (n, m, k)
    assert (plan.lda, plan.ldb, plan.ldc) == (n, k, n)
    assert (plan.stride_a, plan.stride_b, plan.stride_c, plan.batch) == (k * n, m * k, m * n, 4)


def test_transposed_views_become_op_t():
    """``a.mT`` and ``b.mT`` (column-major memory) are read through CUBLAS_OP_T, with their row... column strides."""
    m, n, k = 3, 5, 7
    plan = cublas.plan_gemm("float32", 1, m, n, k, (0, 1, m), (0, 1, k), (0, n, 1))
    assert (plan.transa, plan.transb) == (OP_T, OP_T)
    assert (plan.lda, plan.ldb) == (k, m)
    assert plan.stride_a == plan.stride_b == plan.stride_c == 0


def test_column_major_output_uses_the_direct_call():
    m, n, k = 3, 5, 7
    plan = cublas.plan_gemm("float64", 1, m, n, k, (0, k, 1), (0, n, 1), (0, 1, m + 2))
    assert not plan.swapped
    assert (plan.m, plan.n, plan.ldc) == (m, n, m + 2)
    assert (plan.transa, plan.transb) == (OP_T, OP_T)


# -- types, compute types, math modes ------------------------------------------------------------------------------


ROW_2X2 = (0, 2, 1)  # (batch, row, col) strides of one row-major 2x2 matrix


@pytest.fixture
def square():
    """``plan_gemm``'s arguments after the dtype for one row-major 2x2 @ 2x2 product."""
    return (1, 2, 2, 2, ROW_2X2, ROW_2X2, ROW_2X2)


def _square_matmul(dtype: str, pointer: int = 0, a_strides=ROW_2X2) -> None:
    """``cublas.matmul`` of one row-major 2x2 @ 2x2 product at ``pointer`` (A's strides as given)."""
    cublas.matmul(0, dtype, 1, 2, 2, 2, pointer, a_strides, pointer, ROW_2X2, pointer, ROW_2X2)


@pytest.mark.parametrize(
    ("dtype", "precision", "data_type", "compute", "scale"),
    [
        ("float32", "highest", CUDA_R_32F, COMPUTE_32F, "float32"),
        ("float32", "high", CUDA_R_32F, COMPUTE_32F_FAST_TF32, "float32"),
        ("float32", "medium", CUDA_R_32F, COMPUTE_32F_FAST_16BF, "float32"),
        ("complex64", "highest", CUDA_C_32F, COMPUTE_32F, "complex64"),
        ("complex64", "high", CUDA_C_32F, COMPUTE_32F_FAST_TF32, "complex64"),
        ("complex64", "medium", CUDA_C_32F, COMPUTE_32F_FAST_TF32, "complex64"),
        ("float64", "high", CUDA_R_64F, COMPUTE_64F, "float64"),
        ("float64", "medium", CUDA_R_64F, COMPUTE_64F, "float64"),
        ("complex128", "medium", CUDA_C_64F, COMPUTE_64F, "complex128"),
        ("float16", "highest", CUDA_R_16F, COMPUTE_32F, "float32"),
        ("float16", "medium", CUDA_R_16F, COMPUTE_32F, "float32"),
        ("bfloat16", "highest", CUDA_R_16BF, COMPUTE_32F, "float32"),
        ("bfloat16", "high", CUDA_R_16BF, COMPUTE_32F, "float32"),
    ],
)
def test_types_follow_dtype_and_precision(square, dtype, precision, data_type, compute, scale):
    """float32 precision: "highest" full FP32, "high" TF32, "medium" bfloat16 internal arithmetic (complex64: TF32,
    as PyTorch's complex GEMMs); float64 is never reduced; float16/bfloat16 multiply on tensor cores and accumulate
    (and scale) in float32."""
    plan = cublas.plan_gemm(dtype, *square, precision)
    assert (plan.data_type, plan.compute_type, plan.scale_dtype) == (data_type, compute, scale)
    assert plan.math_mode == DEFAULT_MATH


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("fp16_reduction", [True, False])
@pytest.mark.parametrize("bf16_reduction", [True, False])
def test_reduced_precision_reduction_flags_set_the_math_mode(square, dtype, fp16_reduction, bf16_reduction):
    """PyTorch: a False flag adds CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION to that dtype's GEMMs only."""
    plan = cublas.plan_gemm(dtype, *square, "highest", fp16_reduction, bf16_reduction)
    disallow = (dtype == "float16" and not fp16_reduction) or (dtype == "bfloat16" and not bf16_reduction)
    assert plan.math_mode == (DEFAULT_MATH | DISALLOW_REDUCED_PRECISION_REDUCTION if disallow else DEFAULT_MATH)


def test_fp16_accumulation_uses_half_compute_and_half_scale(square):
    args = (*square, "highest", True, True, True)
    half = cublas.plan_gemm("float16", *args)
    assert (half.compute_type, half.scale_dtype) == (COMPUTE_16F, "float16")
    bf16 = cublas.plan_gemm("bfloat16", *args)
    assert (bf16.compute_type, bf16.scale_dtype) == (COMPUTE_32F, "float32"), "only float16 accumulates in half"


# -- rejected inputs -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (("int32", 1, 2, 2, 2, (0, 2, 1), (0, 2, 1), (0, 2, 1)), ValueError, "unsupported dtype 'int32'"),
        (("float32", 1, -1, 2, 2, (0, 2, 1), (0, 2, 1), (0, 2, 1)), ValueError, "m must be non-negative"),
        (("float32", 1, 2.0, 2, 2, (0, 2, 1), (0, 2, 1), (0, 2, 1)), TypeError, "m must be an int"),
        (("float32", 1, 2**31, 2, 2, (0, 2, 1), (0, 2, 1), (0, 2, 1)), ValueError, "32-bit limit"),
        (("float32", 1, 2, 2, 2, (0, 2, 1), (0, 2), (0, 2, 1)), TypeError, "b_strides must be a tuple of 3 ints"),
        (("float32", 1, 2, 2, 2, (0, 2, 1), (0, 2, -1), (0, 2, 1)), ValueError, "negative stride"),
        (("float32", 1, 3, 3, 3, (0, 6, 2), (0, 3, 1), (0, 3, 1)), ValueError, r"A \(strides \(0, 6, 2\)\)"),
        (("float32", 1, 3, 3, 3, (0, 3, 1), (0, 1, 2), (0, 3, 1)), ValueError, "B .*no BLAS layout"),
        (("float32", 1, 3, 3, 3, (0, 3, 1), (0, 3, 1), (0, 6, 2)), ValueError, "C .*row- or column-contiguous"),
        (("float32", 1, 3, 3, 3, (0, 3, 1), (0, 3, 1), (0, 2, 1)), ValueError, "C .*row- or column-contiguous"),
        (("float32", 2, 3, 3, 3, (9, 3, 1), (9, 3, 1), (4, 3, 1)), ValueError, "batch stride 4 makes its 2 matrices"),
    ],
)
def test_layouts_cublas_cannot_take_raise(args, error, match):
    with pytest.raises(error, match=match):
        cublas.plan_gemm(*args)


def test_matmul_checks_before_touching_the_library():
    """A bad call fails in planning, even where cuBLAS or a GPU is missing."""
    with pytest.raises(ValueError, match="unsupported dtype"):
        _square_matmul("int64")
    with pytest.raises(TypeError, match="a_strides"):
        _square_matmul("float32", a_strides=[0, 2, 1])


def test_empty_problems_call_nothing():
    """m, n or batch of 0: nothing to do (no library, no GPU needed); k = 0 is not empty (C = beta * C)."""
    for batch, m, n in ((0, 2, 2), (1, 0, 2), (3, 2, 0)):
        cublas.matmul(0, "float32", batch, m, n, 4, 0, (0, 4, 1), 0, (0, n, 1), 0, (0, n, 1))
    assert not cublas.plan_gemm("float32", 1, 2, 2, 0, (0, 0, 1), (0, 2, 1), (0, 2, 1)).empty


# -- workspace and deterministic mode ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "major", "expected"),
    [
        (None, 9, 4096 * 8 * 1024),
        (None, 8, (4096 * 2 + 16 * 8) * 1024),
        ("", 10, 4096 * 8 * 1024),
        (":4096:8", 8, 4096 * 8 * 1024),
        (":16:8", 9, 16 * 8 * 1024),
        (":4096:2:16:8", 9, (4096 * 2 + 16 * 8) * 1024),
        ("garbage", 8, (4096 * 2 + 16 * 8) * 1024),
    ],
)
def test_workspace_size_reads_cublas_workspace_config_as_pytorch(config, major, expected):
    assert cublas.workspace_size(config, major) == expected


@pytest.mark.parametrize(
    ("config", "ok"),
    [(":4096:8", True), (":16:8", True), (None, False), ("", False), (":4096:2", False), (":4096:8 ", False)],
)
def test_deterministic_mode_requires_a_deterministic_workspace_config(config, ok):
    """PyTorch: in deterministic mode cuBLAS calls raise unless CUBLAS_WORKSPACE_CONFIG is :4096:8 or :16:8."""
    assert cublas.deterministic_workspace_ok(config) is ok
    cublas.check_deterministic_workspace(False, False, config)  # mode off: never
    if ok:
        cublas.check_deterministic_workspace(True, False, config)
        return
    with pytest.raises(RuntimeError, match="CUBLAS_WORKSPACE_CONFIG=:4096:8 or CUBLAS_WORKSPACE_CONFIG=:16:8"):
        cublas.check_deterministic_workspace(True, False, config)
    with pytest.warns(UserWarning, match="uses cuBLAS"):
        cublas.check_deterministic_workspace(True, True, config)


# -- the library ---------------------------------------------------------------------------------------------------


def test_cdef_declares_the_functions_used():
    assert set(cublas.symbols()) == {
        "cublasGetProperty",
        "cublasGetCudartVersion",
        "cublasGetStatusName",
        "cublasGetStatusString",
        "cublasCreate_v2",
        "cublasDestroy_v2",
        "cublasSetStream_v2",
        "cublasSetWorkspace_v2",
        "cublasSetMathMode",
        "cublasGetMathMode",
        "cublasSetPointerMode_v2",
        "cublasGemmStridedBatchedEx",
    }


def _driver_present() -> bool:
    try:
        from cuda.bindings import driver

        return int(driver.cuInit(0)[0]) == 0
    except Exception:
        return False


def _library_present() -> bool:
    try:
        import cffi  # noqa: F401
        from cuda.pathfinder import load_nvidia_dynamic_lib

        load_nvidia_dynamic_lib("cublas")
    except Exception:
        return False
    return True


@pytest.mark.skipif(not _library_present(), reason="libcublas (the nvidia-cublas wheel) or cffi is not installed")
def test_library_loads_and_every_declared_symbol_resolves():
    ok, reason = cublas.available()
    assert ok, reason
    assert reason.startswith("cuBLAS 1"), reason  # cuBLAS 11, 12 or 13 have cublasComputeType_t
    ffi, lib, _path = cublas._load()
    for name in cublas.symbols():
        assert getattr(lib, name) is not None
    assert ffi.string(lib.cublasGetStatusName(7)).decode() == "CUBLAS_STATUS_INVALID_VALUE"
    assert ffi.string(lib.cublasGetStatusName(0)).decode() == "CUBLAS_STATUS_SUCCESS"
    for status, name in cublas.STATUS_NAMES.items():
        assert ffi.string(lib.cublasGetStatusName(status)).decode() == name


@pytest.mark.skipif(not _library_present(), reason="libcublas (the nvidia-cublas wheel) or cffi is not installed")
@pytest.mark.skipif(_driver_present(), reason="needs a machine without a CUDA driver")
def test_matmul_without_a_driver_raises_runtimeerror():
    with pytest.raises(RuntimeError, match="CUDA"):
        _square_matmul("float32", pointer=8)


def _header() -> str | None:
    try:
        from cuda.pathfinder import find_nvidia_header_directory

        folder = find_nvidia_header_directory("cublas")
        return (Path(folder) / "cublas_api.h").read_text() if folder else None
    except Exception:
        return None


# bytes of each C parameter type of cublas_api.h's prototypes (enums are int-sized)
_C_SIZES = {
    "int": 4,
    "cublasOperation_t": 4,
    "cudaDataType": 4,
    "cublasComputeType_t": 4,
    "cublasGemmAlgo_t": 4,
    "cublasMath_t": 4,
    "cublasPointerMode_t": 4,
    "libraryPropertyType": 4,
    "cublasStatus_t": 4,
    "long long int": 8,
    "int64_t": 8,
    "size_t": 8,
    "cublasHandle_t": 8,
    "cudaStream_t": 8,
}


def _c_size(declaration: str) -> int:
    """Bytes of a parameter declaration such as ``const void* alpha`` or ``long long int strideA``."""
    text = declaration.replace("const ", "").strip()
    if "*" in text:
        return 8
    type_name = text.rsplit(" ", 1)[0].strip() if " " in text else text
    return _C_SIZES[type_name]


@pytest.mark.skipif(not _library_present() or _header() is None, reason="cuBLAS's library or header is not installed")
def test_every_declaration_matches_the_header_abi():
    """Each cdef'd function has the header's parameter count, and each parameter the header's size and kind
    (pointer or integer), so the ABI-mode calls pass the arguments cuBLAS expects."""
    header = _header()
    ffi, lib, _path = cublas._load()
    for name in cublas.symbols():
        match = re.search(rf"\b{name}\s*\(([^)]*)\)\s*;", header)
        assert match, f"{name} is not declared in cublas_api.h"
        params = [p.strip() for p in match.group(1).split(",") if p.strip() not in ("", "void")]
        ours = ffi.typeof(getattr(lib, name)).args
        assert len(ours) == len(params), f"{name}: {len(ours)} parameters, the header has {len(params)}"
        for param, ctype in zip(params, ours):
            assert ffi.sizeof(ctype) == _c_size(param), f"{name}: {ctype.cname} vs {param!r}"
            header_pointer = "*" in param or param.split()[0] in ("cublasHandle_t", "cudaStream_t")
            if ctype.kind == "pointer":
                assert header_pointer, f"{name}: {ctype.cname} vs {param!r}"
            elif header_pointer:  # device pointers and the stream are passed as uintptr_t (same register class)
                assert ctype.cname == "uintptr_t", f"{name}: {ctype.cname} vs {param!r}"
            else:
                assert ctype.kind == "primitive" and ctype.cname != "uintptr_t", f"{name}: {ctype.cname} vs {param!r}"


@pytest.mark.skipif(not _library_present() or _header() is None, reason="cuBLAS's library or header is not installed")
def test_enum_values_match_the_header():
    header = _header()
    constants = {
        "CUBLAS_OP_N": cublas.CUBLAS_OP_N,
        "CUBLAS_OP_T": cublas.CUBLAS_OP_T,
        "CUBLAS_POINTER_MODE_HOST": cublas.CUBLAS_POINTER_MODE_HOST,
        "CUBLAS_GEMM_DEFAULT": cublas.CUBLAS_GEMM_DEFAULT,
        "CUBLAS_DEFAULT_MATH": cublas.CUBLAS_DEFAULT_MATH,
        "CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION": cublas.CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
        "CUBLAS_COMPUTE_16F": cublas.CUBLAS_COMPUTE_16F,
        "CUBLAS_COMPUTE_32F": cublas.CUBLAS_COMPUTE_32F,
        "CUBLAS_COMPUTE_32F_FAST_16BF": cublas.CUBLAS_COMPUTE_32F_FAST_16BF,
        "CUBLAS_COMPUTE_32F_FAST_TF32": cublas.CUBLAS_COMPUTE_32F_FAST_TF32,
        "CUBLAS_COMPUTE_64F": cublas.CUBLAS_COMPUTE_64F,
        **{name: value for value, name in cublas.STATUS_NAMES.items()},
    }
    for name, value in constants.items():
        match = re.search(rf"\b{name}\s*=\s*(-?\d+)", header)
        assert match and int(match.group(1)) == value, f"{name}: header {match and match.group(1)}, module {value}"


@pytest.mark.skipif(not _library_present(), reason="libcublas (the nvidia-cublas wheel) or cffi is not installed")
def test_failures_name_the_cublas_status():
    cublas._load()
    error = cublas._status_error("cublasGemmStridedBatchedEx", 7)
    assert isinstance(error, RuntimeError)
    assert str(error).startswith("cuBLAS cublasGemmStridedBatchedEx failed with CUBLAS_STATUS_INVALID_VALUE: ")
    assert "status 99" in str(cublas._status_error("cublasCreate_v2", 99))


def test_one_handle_per_device_and_thread_and_finished_threads_give_theirs_back(monkeypatch):
    made = []

    class FakeHandle:
        def __init__(self, device):
            self.device = device
            made.append(self)

    monkeypatch.setattr(cublas, "_Handle", FakeHandle)
    monkeypatch.setattr(cublas, "_local", threading.local())
    monkeypatch.setattr(cublas, "_pool", {})
    main = cublas._handle(0)
    assert cublas._handle(0) is main, "the same handle for the same device and thread"
    other_device = cublas._handle(1)
    assert other_device is not main and other_device.device == 1
    seen = []

    def worker():
        seen.append(cublas._handle(0))

    first = threading.Thread(target=worker)
    first.start()
    first.join()
    assert seen[0] is not main, "another thread gets its own handle"
    gc.collect()
    second = threading.Thread(target=worker)
    second.start()
    second.join()
    assert seen[1] is seen[0], "a finished thread's handle is reused, not a new one made"
    assert len(made) == 3


def test_available_reports_a_missing_library_without_raising(monkeypatch):
    from opweave_cuda._cffi_library import CffiLibrary

    monkeypatch.setattr(cublas, "_LIBRARY", CffiLibrary("cuBLAS", "cublas", cublas.CDEF, cublas.symbols))
    monkeypatch.setitem(sys.modules, "cuda.pathfinder", None)
    ok, reason = cublas.available()
    assert not ok
    assert reason.startswith("cuBLAS could not be loaded: ")
    assert cublas.available() == (ok, reason), "the failure is remembered"


# -- on a GPU ------------------------------------------------------------------------------------------------------


def _driver():
    try:
        from cuda.bindings import driver

        (error,) = driver.cuInit(0)
        if int(error) != 0:
            return None
        error, count = driver.cuDeviceGetCount()
        return driver if int(error) == 0 and count > 0 else None
    except Exception:
        return None


_DRIVER = _driver()


@pytest.fixture(scope="module")
def gpu():
    """The primary context of device 0 made current; yields (driver, alloc, upload, download)."""
    driver = _DRIVER

    def call(result):
        error, *values = result
        assert int(error) == 0, f"CUDA driver error {error}"
        return values[0] if len(values) == 1 else values

    device = call(driver.cuDeviceGet(0))
    context = call(driver.cuDevicePrimaryCtxRetain(device))
    call(driver.cuCtxSetCurrent(context))
    allocations = []

    def upload(array):
        array = np.ascontiguousarray(array)
        pointer = int(call(driver.cuMemAlloc(max(array.nbytes, 1))))
        allocations.append(pointer)
        call(driver.cuMemcpyHtoD(pointer, array.ctypes.data, array.nbytes))
        return pointer

    def download(pointer, like):
        out = np.empty_like(like)
        call(driver.cuCtxSynchronize())
        call(driver.cuMemcpyDtoH(out.ctypes.data, pointer, out.nbytes))
        return out

    yield upload, download
    for pointer in allocations:
        driver.cuMemFree(pointer)
    driver.cuDevicePrimaryCtxRelease(device)


@pytest.mark.skipif(_DRIVER is None, reason="no CUDA driver or GPU")
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "float16", "bfloat16"])
@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_gpu_matmul_matches_numpy(gpu, dtype, precision):
    import ml_dtypes

    upload, download = gpu
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(0)
    batch, m, n, k = 3, 33, 17, 65

    def rand(*shape):
        x = rng.standard_normal(shape)
        if np_dtype.kind == "c":
            x = x + 1j * rng.standard_normal(shape)
        return x.astype(np_dtype)

    a, b, c = rand(batch, m, k), rand(batch, n, k).transpose(0, 2, 1), rand(batch, m, n)
    pa, pb, pc = upload(a), upload(np.ascontiguousarray(b.transpose(0, 2, 1))), upload(c)
    saved = opweave.get_float32_matmul_precision()
    opweave.set_float32_matmul_precision(precision)
    try:
        cublas.matmul(0, dtype, batch, m, n, k, pa, (m * k, k, 1), pb, (n * k, 1, k), pc, (m * n, n, 1), 0.5, 2.0)
    finally:
        opweave.set_float32_matmul_precision(saved)
    got = download(pc, c).astype(np.complex128 if np_dtype.kind == "c" else np.float64)
    a64, b64, c64 = (x.astype(got.dtype) for x in (a, b, c))
    expected = 0.5 * (a64 @ b64) + 2.0 * c64
    bound = np.abs(a64) @ np.abs(b64) + np.abs(c64)  # |error| <= k * unit roundoff * this, per element
    unit = {
        "float64": 2.0**-53,
        "complex128": 2.0**-53,
        "float16": 2.0**-11,
        "bfloat16": 2.0**-8,
        "float32": {"highest": 2.0**-24, "high": 2.0**-11, "medium": 2.0**-8}[precision],
        "complex64": {"highest": 2.0**-24, "high": 2.0**-11, "medium": 2.0**-11}[precision],
    }[dtype]
    output_rounding = np.abs(expected) * float(ml_dtypes.finfo(np_dtype).eps)
    assert np.all(np.abs(got - expected) <= 4 * k * unit * bound + output_rounding)


@pytest.mark.skipif(_DRIVER is None, reason="no CUDA driver or GPU")
def test_gpu_beta_zero_does_not_read_c_and_deterministic_rule_applies(gpu, monkeypatch):
    upload, download = gpu
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones((3, 2), np.float32)
    c = np.full((2, 2), np.nan, np.float32)
    pa, pb, pc = upload(a), upload(b), upload(c)
    cublas.matmul(0, "float32", 1, 2, 2, 3, pa, (0, 3, 1), pb, (0, 2, 1), pc, (0, 2, 1))
    np.testing.assert_array_equal(download(pc, c), a.astype(np.float64) @ b)
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    opweave.use_deterministic_algorithms(True)
    try:
        with pytest.raises(RuntimeError, match="CUBLAS_WORKSPACE_CONFIG"):
            cublas.matmul(0, "float32", 1, 2, 2, 3, pa, (0, 3, 1), pb, (0, 2, 1), pc, (0, 2, 1))
        monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            cublas.matmul(0, "float32", 1, 2, 2, 3, pa, (0, 3, 1), pb, (0, 2, 1), pc, (0, 2, 1))
    finally:
        opweave.use_deterministic_algorithms(False)
