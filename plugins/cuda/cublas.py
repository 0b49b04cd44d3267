"""cuBLAS for the CUDA backend's ``mm``/``bmm``/``addmm``/``linear`` kernels, through cffi in ABI mode.

Two layers:

- :func:`plan_gemm` is pure: it translates a row-major batched GEMM (``C[i] = alpha * A[i] @ B[i] + beta * C[i]``,
  strides in elements) into the arguments of ``cublasGemmStridedBatchedEx`` (column-major), and picks the data types,
  compute type, scale type and math mode from the dtype and opweave's flags. It needs neither cuBLAS nor a GPU.
- :func:`matmul` runs a plan: one cuBLAS handle per (device, thread), ``cublasSetStream`` onto the caller's stream, a
  workspace per (handle, stream) set with ``cublasSetWorkspace``, the deterministic-mode workspace rule PyTorch
  enforces, and the call. :func:`available` says whether libcublas loads.

Row-major to column-major: a row-major ``X`` (r×c, strides ``(rs, 1)``) is the column-major ``Xᵀ`` with leading
dimension ``rs``. When C is row-major, cuBLAS computes ``Cᵀ = Bᵀ Aᵀ``: its first operand is opweave's B and its
second is opweave's A, with ``m`` and ``n`` exchanged. When C is column-major (strides ``(1, ld)``) cuBLAS computes
``C = A B`` directly. Each operand is passed with ``CUBLAS_OP_N`` when its memory already is the column-major matrix
cuBLAS wants, else with ``CUBLAS_OP_T`` (its memory is the transpose).

Precision (float32 and complex64), from ``opweave.get_float32_matmul_precision()``: "highest" →
``CUBLAS_COMPUTE_32F``; "high" → ``CUBLAS_COMPUTE_32F_FAST_TF32``; "medium" → ``CUBLAS_COMPUTE_32F_FAST_16BF``
(bfloat16 internal arithmetic, as PyTorch documents "medium"; PyTorch's own CUDA build runs "medium" as TF32).
complex64 follows the same setting but uses TF32 for "medium" too, as PyTorch's complex GEMMs do.
float16 and bfloat16 use ``CUBLAS_COMPUTE_32F`` on tensor cores (float16 with ``CUBLAS_COMPUTE_16F`` when
``opweave.backends.cuda.matmul.allow_fp16_accumulation``); the reduced-precision-reduction flags add
``CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION`` when they are False, as PyTorch does.
"""

from __future__ import annotations

import os
import re
import threading
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ._cffi_library import CffiLibrary

__all__ = [
    "CDEF",
    "GemmPlan",
    "available",
    "deterministic_workspace_ok",
    "matmul",
    "plan_gemm",
    "symbols",
    "workspace_size",
]

# -- the real values of cublas_api.h and library_types.h -----------------------------------------------------------

CUBLAS_STATUS_SUCCESS = 0
STATUS_NAMES = {
    0: "CUBLAS_STATUS_SUCCESS",
    1: "CUBLAS_STATUS_NOT_INITIALIZED",
    3: "CUBLAS_STATUS_ALLOC_FAILED",
    7: "CUBLAS_STATUS_INVALID_VALUE",
    8: "CUBLAS_STATUS_ARCH_MISMATCH",
    11: "CUBLAS_STATUS_MAPPING_ERROR",
    13: "CUBLAS_STATUS_EXECUTION_FAILED",
    14: "CUBLAS_STATUS_INTERNAL_ERROR",
    15: "CUBLAS_STATUS_NOT_SUPPORTED",
    16: "CUBLAS_STATUS_LICENSE_ERROR",
}

CUBLAS_OP_N = 0
CUBLAS_OP_T = 1

CUBLAS_POINTER_MODE_HOST = 0
CUBLAS_GEMM_DEFAULT = -1

CUBLAS_DEFAULT_MATH = 0
CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16

CUBLAS_COMPUTE_16F = 64
CUBLAS_COMPUTE_32F = 68
CUBLAS_COMPUTE_32F_FAST_16BF = 75
CUBLAS_COMPUTE_32F_FAST_TF32 = 77
CUBLAS_COMPUTE_64F = 70

CUDA_R_16F = 2
CUDA_R_16BF = 14
CUDA_R_32F = 0
CUDA_C_32F = 4
CUDA_R_64F = 1
CUDA_C_64F = 5

# libraryPropertyType
_MAJOR_VERSION, _MINOR_VERSION, _PATCH_LEVEL = 0, 1, 2

_DATA_TYPES = {
    "float16": CUDA_R_16F,
    "bfloat16": CUDA_R_16BF,
    "float32": CUDA_R_32F,
    "complex64": CUDA_C_32F,
    "float64": CUDA_R_64F,
    "complex128": CUDA_C_64F,
}
_FLOAT32_COMPUTE = {
    "highest": CUBLAS_COMPUTE_32F,
    "high": CUBLAS_COMPUTE_32F_FAST_TF32,
    "medium": CUBLAS_COMPUTE_32F_FAST_16BF,
}
_INT_MAX = 2**31 - 1

# Device pointers and the stream are declared uintptr_t rather than void*: the same 64-bit register in the ABI, and
# Python ints pass without an ffi.cast per argument. Host scalars (alpha, beta) are real pointers.
CDEF = """
typedef int cublasStatus_t;
typedef struct cublasContext *cublasHandle_t;
cublasStatus_t cublasGetProperty(int type, int *value);
size_t cublasGetCudartVersion(void);
const char *cublasGetStatusName(cublasStatus_t status);
const char *cublasGetStatusString(cublasStatus_t status);
cublasStatus_t cublasCreate_v2(cublasHandle_t *handle);
cublasStatus_t cublasDestroy_v2(cublasHandle_t handle);
cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, uintptr_t streamId);
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, uintptr_t workspace, size_t workspaceSizeInBytes);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, int mode);
cublasStatus_t cublasGetMathMode(cublasHandle_t handle, int *mode);
cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, int mode);
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, int transa, int transb, int m, int n, int k,
    const void *alpha, uintptr_t A, int Atype, int lda, long long strideA,
    uintptr_t B, int Btype, int ldb, long long strideB, const void *beta,
    uintptr_t C, int Ctype, int ldc, long long strideC, int batchCount, int computeType, int algo);
"""


def symbols() -> tuple[str, ...]:
    """The names of the C functions :data:`CDEF` declares (each must resolve in libcublas)."""
    return tuple(re.findall(r"\b(cublas\w+)\s*\(", CDEF))


# -- planning (pure) -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GemmPlan:
    """The arguments of one ``cublasGemmStridedBatchedEx`` call for a row-major batched GEMM.

    ``swapped``: cuBLAS's operand A is opweave's B and its operand B is opweave's A (C row-major, cuBLAS computes
    ``Cᵀ = Bᵀ Aᵀ``); otherwise they are A and B (C column-major). ``m``, ``n``, ``k``, ``lda``... are cuBLAS's.
    ``scale_dtype`` is the NumPy dtype name of ``alpha`` and ``beta`` (cuBLAS's scale type).
    """

    swapped: bool
    transa: int
    transb: int
    m: int
    n: int
    k: int
    lda: int
    stride_a: int
    ldb: int
    stride_b: int
    ldc: int
    stride_c: int
    batch: int
    data_type: int
    compute_type: int
    scale_dtype: str
    math_mode: int

    @property
    def empty(self) -> bool:
        """Nothing to compute: no batch, or an empty C (``k == 0`` is not empty: C becomes ``beta * C``)."""
        return self.batch == 0 or self.m == 0 or self.n == 0


def _column_major_operand(rows: int, cols: int, row_stride: int, col_stride: int) -> tuple[int, int] | None:
    """``(op, ld)`` for a matrix (rows×cols, strides in elements) as a cuBLAS operand, or None if it has no BLAS layout.

    ``CUBLAS_OP_N`` when it is column-major (row stride 1, ``ld`` = column stride), ``CUBLAS_OP_T`` when it is
    row-major (its memory is the column-major transpose, ``ld`` = row stride). A dimension of size 1 ignores its stride.
    BLAS requires ``ld >= max(1, stored rows)``. An empty matrix takes any strides.
    """
    if rows == 0 or cols == 0:  # nothing is read or written
        return CUBLAS_OP_N, max(1, rows)
    if row_stride == 1 or rows <= 1:
        ld = col_stride if cols > 1 else max(1, rows)
        if ld >= max(1, rows):
            return CUBLAS_OP_N, ld
    if col_stride == 1 or cols <= 1:
        ld = row_stride if rows > 1 else max(1, cols)
        if ld >= max(1, cols):
            return CUBLAS_OP_T, ld
    return None


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"cublas.matmul(): {name} must be an int, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"cublas.matmul(): {name} must be non-negative, got {value}")
    if value > _INT_MAX:
        raise ValueError(f"cublas.matmul(): {name}={value} exceeds cuBLAS's 32-bit limit {_INT_MAX}")
    return value


def _check_strides(name: str, strides: Any) -> tuple[int, int, int]:
    if (
        not isinstance(strides, tuple)
        or len(strides) != 3
        or any(isinstance(s, bool) or not isinstance(s, int) for s in strides)
    ):
        raise TypeError(f"cublas.matmul(): {name} must be a tuple of 3 ints (batch, row, col), got {strides!r}")
    if any(s < 0 for s in strides):
        raise ValueError(f"cublas.matmul(): {name}={strides} has a negative stride")
    return strides


def _span(rows: int, cols: int, row_stride: int, col_stride: int) -> int:
    return (rows - 1) * row_stride + (cols - 1) * col_stride + 1


def _compute(dtype: str, precision: str, allow_fp16_accumulation: bool) -> tuple[int, str]:
    if dtype in ("float32", "complex64"):
        if precision not in _FLOAT32_COMPUTE:
            raise ValueError(f"cublas.matmul(): unknown float32 matmul precision {precision!r}")
        if dtype == "complex64" and precision == "medium":  # as PyTorch: complex GEMMs get TF32 at most
            return CUBLAS_COMPUTE_32F_FAST_TF32, dtype
        return _FLOAT32_COMPUTE[precision], dtype
    if dtype in ("float64", "complex128"):
        return CUBLAS_COMPUTE_64F, dtype
    if dtype == "float16" and allow_fp16_accumulation:
        return CUBLAS_COMPUTE_16F, "float16"
    return CUBLAS_COMPUTE_32F, "float32"  # float16, bfloat16: float32 accumulation on tensor cores


def _math_mode(dtype: str, allow_fp16_reduction: bool, allow_bf16_reduction: bool) -> int:
    if (dtype == "float16" and not allow_fp16_reduction) or (dtype == "bfloat16" and not allow_bf16_reduction):
        return CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION
    return CUBLAS_DEFAULT_MATH


def plan_gemm(
    dtype: str,
    batch: int,
    m: int,
    n: int,
    k: int,
    a_strides: tuple[int, int, int],
    b_strides: tuple[int, int, int],
    c_strides: tuple[int, int, int],
    precision: str = "highest",
    allow_fp16_reduced_precision_reduction: bool = True,
    allow_bf16_reduced_precision_reduction: bool = True,
    allow_fp16_accumulation: bool = False,
) -> GemmPlan:
    """Translate the row-major ``C[i] = alpha * A[i] @ B[i] + beta * C[i]`` into a column-major cuBLAS call.

    A is m×k, B is k×n, C is m×n, each with strides in elements ``(batch, row, col)``. A and B must each have a unit
    stride in one of their two dimensions (or a size-1 dimension) with a leading dimension that does not overlap
    rows; C must be row- or column-contiguous in the same sense; C's matrices must not overlap across the batch
    (A's and B's may: a batch stride of 0 broadcasts them). Otherwise ``ValueError`` (the caller copies first).
    ``precision`` is ``opweave.get_float32_matmul_precision()``; the flags are those of
    ``opweave.backends.cuda.matmul``.
    """
    if dtype not in _DATA_TYPES:
        raise ValueError(f"cublas.matmul(): unsupported dtype {dtype!r}; cuBLAS GEMM takes {', '.join(_DATA_TYPES)}")
    batch, m, n, k = (_check_count(name, v) for name, v in (("batch", batch), ("m", m), ("n", n), ("k", k)))
    a_bs, a_rs, a_cs = _check_strides("a_strides", a_strides)
    b_bs, b_rs, b_cs = _check_strides("b_strides", b_strides)
    c_bs, c_rs, c_cs = _check_strides("c_strides", c_strides)

    # cuBLAS's C is column-major with OP_N: Cᵀ (n×m, strides (c_cs, c_rs)) when C is row-major, else C itself.
    c_row_major = _column_major_operand(n, m, c_cs, c_rs)
    if c_row_major is not None and c_row_major[0] == CUBLAS_OP_N:
        swapped, ldc = True, c_row_major[1]
    else:
        c_col_major = _column_major_operand(m, n, c_rs, c_cs)
        if c_col_major is None or c_col_major[0] != CUBLAS_OP_N:
            raise ValueError(
                f"cublas.matmul(): C ({m}×{n}, strides {c_strides}) must be row- or column-contiguous "
                "(one unit stride, the other at least the matrix's width)"
            )
        swapped, ldc = False, c_col_major[1]

    if swapped:  # cuBLAS: Cᵀ (n×m) = Bᵀ (n×k) · Aᵀ (k×m)
        first = ("B", n, k, b_cs, b_rs, b_bs, b_strides)
        second = ("A", k, m, a_cs, a_rs, a_bs, a_strides)
        cm, cn = n, m
    else:  # cuBLAS: C (m×n) = A (m×k) · B (k×n)
        first = ("A", m, k, a_rs, a_cs, a_bs, a_strides)
        second = ("B", k, n, b_rs, b_cs, b_bs, b_strides)
        cm, cn = m, n
    operands = []
    for name, rows, cols, rs, cs, bs, given in (first, second):
        layout = _column_major_operand(rows, cols, rs, cs)
        if layout is None:
            raise ValueError(
                f"cublas.matmul(): {name} (strides {given}) has no BLAS layout: one of its row and column strides must "
                "be 1 and the other at least the matrix's extent in that direction; pass a contiguous copy"
            )
        operands.append((*layout, bs if batch > 1 else 0))
    (transa, lda, stride_a), (transb, ldb, stride_b) = operands
    for name, ld in (("lda", lda), ("ldb", ldb), ("ldc", ldc)):
        if ld > _INT_MAX:
            raise ValueError(f"cublas.matmul(): {name}={ld} exceeds cuBLAS's 32-bit limit {_INT_MAX}")

    if batch > 1 and m > 0 and n > 0 and c_bs < _span(m, n, c_rs, c_cs):
        raise ValueError(
            f"cublas.matmul(): C's batch stride {c_bs} makes its {batch} matrices overlap (each spans "
            f"{_span(m, n, c_rs, c_cs)} elements)"
        )
    compute_type, scale_dtype = _compute(dtype, precision, allow_fp16_accumulation)
    return GemmPlan(
        swapped=swapped,
        transa=transa,
        transb=transb,
        m=cm,
        n=cn,
        k=k,
        lda=lda,
        stride_a=stride_a,
        ldb=ldb,
        stride_b=stride_b,
        ldc=ldc,
        stride_c=c_bs if batch > 1 else 0,
        batch=batch,
        data_type=_DATA_TYPES[dtype],
        compute_type=compute_type,
        scale_dtype=scale_dtype,
        math_mode=_math_mode(dtype, allow_fp16_reduced_precision_reduction, allow_bf16_reduced_precision_reduction),
    )


_cached_plan = lru_cache(maxsize=1024)(plan_gemm)


def _plan(*args: Any) -> GemmPlan:
    try:
        return _cached_plan(*args)
    except TypeError:  # unhashable arguments: let plan_gemm name what is wrong
        return plan_gemm(*args)


# -- workspace and deterministic mode (pure) -----------------------------------------------------------------------

DETERMINISTIC_WORKSPACE_CONFIGS = (":4096:8", ":16:8")


def deterministic_workspace_ok(config: str | None) -> bool:
    """Whether ``CUBLAS_WORKSPACE_CONFIG`` makes cuBLAS deterministic: ``":4096:8"`` or ``":16:8"`` (PyTorch's rule)."""
    return config in DETERMINISTIC_WORKSPACE_CONFIGS


def workspace_size(config: str | None, capability_major: int) -> int:
    """The workspace bytes per (handle, stream), from ``CUBLAS_WORKSPACE_CONFIG`` as PyTorch reads it.

    The variable is a list of ``:SIZE:COUNT`` pairs (SIZE in KiB); the workspace is the sum of SIZE × COUNT.
    Unset or unparsable: 32 MiB on Hopper and later (compute capability 9+), else 4096 KiB × 2 + 16 KiB × 8.
    """
    default = 4096 * 8 * 1024 if capability_major >= 9 else (4096 * 2 + 16 * 8) * 1024
    if not config:
        return default
    pairs = re.findall(r":([0-9]+):([0-9]+)", config)
    total = sum(int(size) * 1024 * int(count) for size, count in pairs)
    return total if pairs else default


_CONFIG_MESSAGE = (
    "Deterministic behavior was enabled with opweave.use_deterministic_algorithms(True), but this operation is not "
    "deterministic because it uses cuBLAS. To enable deterministic behavior in this case, you must set an environment "
    "variable before running your program: CUBLAS_WORKSPACE_CONFIG=:4096:8 or CUBLAS_WORKSPACE_CONFIG=:16:8. For more "
    "information, go to https://docs.nvidia.com/cuda/cublas/index.html#results-reproducibility"
)


def check_deterministic_workspace(deterministic: bool, warn_only: bool, config: str | None) -> None:
    """PyTorch's cuBLAS rule: in deterministic mode, ``RuntimeError`` (``UserWarning`` with ``warn_only``) unless
    ``CUBLAS_WORKSPACE_CONFIG`` is ``":4096:8"`` or ``":16:8"``."""
    if not deterministic or deterministic_workspace_ok(config):
        return
    if warn_only:
        warnings.warn(_CONFIG_MESSAGE, UserWarning, stacklevel=3)
    else:
        raise RuntimeError(_CONFIG_MESSAGE)


# -- the library ---------------------------------------------------------------------------------------------------

_LIBRARY = CffiLibrary("cuBLAS", "cublas", CDEF, symbols)


def _load() -> tuple[Any, Any, str]:
    """Load libcublas once: ``(ffi, lib, path)`` (``RuntimeError`` naming why it cannot be loaded)."""
    return _LIBRARY.load()


def available() -> tuple[bool, str]:
    """``(True, "cuBLAS <version> (<path>)")`` if libcublas loads and resolves every function used, else
    ``(False, why)``. Never raises. It checks the library only: a GPU and its driver are the backend's business."""
    try:
        ffi, lib, path = _load()
        version = ffi.new("int *")
        parts = []
        for prop in (_MAJOR_VERSION, _MINOR_VERSION, _PATCH_LEVEL):
            if lib.cublasGetProperty(prop, version) != CUBLAS_STATUS_SUCCESS:
                return False, "cuBLAS loaded but cublasGetProperty failed"
            parts.append(str(version[0]))
        return True, f"cuBLAS {'.'.join(parts)} ({path})"
    except Exception as exc:
        return False, str(exc)


def _status_error(function: str, status: int) -> RuntimeError:
    name = STATUS_NAMES.get(status, f"cuBLAS status {status}")
    detail = ""
    if _LIBRARY.loaded is not None:
        ffi, lib, _ = _LIBRARY.loaded
        text = lib.cublasGetStatusString(status)
        detail = f": {ffi.string(text).decode()}" if text != ffi.NULL else ""
    return RuntimeError(f"cuBLAS {function} failed with {name}{detail}")


def _check(function: str, status: int) -> None:
    if status != CUBLAS_STATUS_SUCCESS:
        raise _status_error(function, status)


# -- handles, streams and workspaces -------------------------------------------------------------------------------


def _driver_call(function: str, result: tuple) -> Any:
    error, *values = result
    if int(error) != 0:
        raise RuntimeError(f"cuBLAS setup: {function} failed with {getattr(error, 'name', error)}")
    return values[0] if len(values) == 1 else values


def _current_device() -> int:
    """The device of the calling thread's current CUDA context (the backend makes its context current)."""
    try:
        from cuda.bindings import driver

        error, device = driver.cuCtxGetDevice()
    except (ImportError, RuntimeError) as exc:  # no cuda-bindings, or no driver (libcuda does not load)
        raise RuntimeError(f"cublas.matmul(): the CUDA driver is not usable: {type(exc).__name__}: {exc}") from exc
    if int(error) != 0:
        raise RuntimeError(
            f"cublas.matmul(): no current CUDA context on this thread ({getattr(error, 'name', error)}); "
            "the CUDA backend makes a device's context current before calling cuBLAS"
        )
    return int(device)


class _Handle:
    """A cuBLAS handle of one device, with its workspaces (one per stream) and the stream and math mode it has now."""

    __slots__ = ("device", "handle", "math_mode", "stream", "workspace_bytes", "workspaces")

    def __init__(self, device: int):
        ffi, lib, _ = _load()
        out = ffi.new("cublasHandle_t *")
        _check("cublasCreate_v2", lib.cublasCreate_v2(out))
        self.handle = out[0]
        self.device = device
        _check("cublasSetPointerMode_v2", lib.cublasSetPointerMode_v2(self.handle, CUBLAS_POINTER_MODE_HOST))
        self.math_mode = CUBLAS_DEFAULT_MATH
        _check("cublasSetMathMode", lib.cublasSetMathMode(self.handle, self.math_mode))
        self.stream: int | None = None
        self.workspaces: dict[int, int] = {}
        from cuda.bindings import driver

        major = _driver_call(
            "cuDeviceGetAttribute",
            driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device),
        )
        self.workspace_bytes = workspace_size(os.environ.get("CUBLAS_WORKSPACE_CONFIG"), int(major))

    def use_stream(self, stream: int) -> None:
        """``cublasSetStream`` and then ``cublasSetWorkspace`` (setting the stream resets cuBLAS's workspace)."""
        if stream == self.stream:
            return
        _, lib, _ = _load()
        workspace = self.workspaces.get(stream)
        if workspace is None:
            from cuda.bindings import driver

            workspace = int(_driver_call("cuMemAlloc", driver.cuMemAlloc(self.workspace_bytes)))
            self.workspaces[stream] = workspace
        _check("cublasSetStream_v2", lib.cublasSetStream_v2(self.handle, stream))
        _check("cublasSetWorkspace_v2", lib.cublasSetWorkspace_v2(self.handle, workspace, self.workspace_bytes))
        self.stream = stream

    def use_math_mode(self, mode: int) -> None:
        """``cublasSetMathMode`` when it differs from the handle's mode now."""
        if mode != self.math_mode:
            _, lib, _ = _load()
            _check("cublasSetMathMode", lib.cublasSetMathMode(self.handle, mode))
            self.math_mode = mode


_pool_lock = threading.Lock()
_pool: dict[int, list[_Handle]] = {}  # handles of finished threads, by device, for the next thread to reuse


class _ThreadHandles(dict):
    """This thread's handles by device; when the thread ends they go back to the pool (not destroyed)."""

    def __del__(self):
        try:
            with _pool_lock:
                for handle in self.values():
                    _pool.setdefault(handle.device, []).append(handle)
        except Exception:  # interpreter shutdown: the process's end frees them
            pass


_local = threading.local()


def _handle(device: int) -> _Handle:
    handles = getattr(_local, "handles", None)
    if handles is None:
        handles = _local.handles = _ThreadHandles()
    handle = handles.get(device)
    if handle is None:
        with _pool_lock:
            spare = _pool.get(device)
            handle = spare.pop() if spare else None
        handles[device] = handle = handle or _Handle(device)
    return handle


# -- the call ------------------------------------------------------------------------------------------------------

_scalar_cache: dict[tuple[str, Any], Any] = {}


def _scalar(scale_dtype: str, value: float | complex) -> Any:
    """A host buffer holding ``value`` as cuBLAS's scale type (cached: the buffers are only read)."""
    key = (scale_dtype, value)
    buffer = _scalar_cache.get(key)
    if buffer is not None:
        return buffer
    ffi = _load()[0]
    if scale_dtype == "float32":
        buffer = ffi.new("float *", float(value.real) if isinstance(value, complex) else float(value))
    elif scale_dtype == "float64":
        buffer = ffi.new("double *", float(value.real) if isinstance(value, complex) else float(value))
    elif scale_dtype == "complex64":
        buffer = ffi.new("float[2]", [complex(value).real, complex(value).imag])
    elif scale_dtype == "complex128":
        buffer = ffi.new("double[2]", [complex(value).real, complex(value).imag])
    else:  # float16
        import numpy as np

        buffer = ffi.new("uint16_t *", int(np.array(float(value), dtype=np.float16).view(np.uint16)))
    if len(_scalar_cache) < 256 and value == value:  # NaN keys never hit
        _scalar_cache[key] = buffer
    return buffer


def _flags() -> tuple[str, bool, bool, bool]:
    import opweave

    matmul_flags = opweave.backends.cuda.matmul
    return (
        opweave.get_float32_matmul_precision(),
        matmul_flags.allow_fp16_reduced_precision_reduction,
        matmul_flags.allow_bf16_reduced_precision_reduction,
        matmul_flags.allow_fp16_accumulation,
    )


def matmul(
    stream: int,
    dtype: str,
    batch: int,
    m: int,
    n: int,
    k: int,
    a: int,
    a_strides: tuple[int, int, int],
    b: int,
    b_strides: tuple[int, int, int],
    c: int,
    c_strides: tuple[int, int, int],
    alpha: float | complex = 1.0,
    beta: float | complex = 0.0,
) -> None:
    """Row-major ``C[i] = alpha * A[i] @ B[i] + beta * C[i]`` for ``i < batch`` on ``stream`` (a raw CUstream as int).

    ``a``, ``b``, ``c`` are device pointers (ints, already offset); strides are in elements as (batch, row, col);
    A is m×k, B is k×n, C is m×n (layout rules: :func:`plan_gemm`). ``beta == 0`` does not read C (NaN in C is
    overwritten). Precision, math mode and workspace follow opweave's flags. Runs asynchronously on ``stream`` in the
    current CUDA context's device. ``ValueError`` for layouts cuBLAS cannot take; ``RuntimeError`` naming the cuBLAS
    status on failure, or when deterministic mode is on and ``CUBLAS_WORKSPACE_CONFIG`` is not deterministic.
    """
    plan = _plan(dtype, batch, m, n, k, a_strides, b_strides, c_strides, *_flags())
    if plan.empty:
        return
    import opweave

    if opweave.are_deterministic_algorithms_enabled():
        check_deterministic_workspace(
            True,
            opweave.is_deterministic_algorithms_warn_only_enabled(),
            os.environ.get("CUBLAS_WORKSPACE_CONFIG"),
        )
    _, lib, _ = _load()
    handle = _handle(_current_device())
    handle.use_stream(int(stream))
    handle.use_math_mode(plan.math_mode)
    first, second = (b, a) if plan.swapped else (a, b)
    status = lib.cublasGemmStridedBatchedEx(
        handle.handle,
        plan.transa,
        plan.transb,
        plan.m,
        plan.n,
        plan.k,
        _scalar(plan.scale_dtype, alpha),
        first,
        plan.data_type,
        plan.lda,
        plan.stride_a,
        second,
        plan.data_type,
        plan.ldb,
        plan.stride_b,
        _scalar(plan.scale_dtype, beta),
        c,
        plan.data_type,
        plan.ldc,
        plan.stride_c,
        plan.batch,
        plan.compute_type,
        CUBLAS_GEMM_DEFAULT,
    )
    _check("cublasGemmStridedBatchedEx", status)
