"""Finding and loading oneDNN, and the declarations of the C API calls opweave uses (cffi ABI mode).

No headers and no compiler are needed: the declarations below are the C API of oneDNN 3.x
(checked against 3.2, the ``onednn-cpu-gomp`` wheel). The library is the file named by
``$OPWEAVE_ONEDNN_LIBRARY`` when that is set; otherwise the one inside an installed
``onednn-cpu-gomp`` distribution, else whatever the system loader finds (``libdnnl.so.3``).

:func:`library` returns the loaded :class:`Library` (one CPU engine, an in-order stream per thread) or
raises :class:`Unavailable` with the reason; :func:`availability` says the same without raising.
A non-zero status becomes :class:`OneDNNError` (``NotImplementedError`` too for
``dnnl_unimplemented``, so that callers can fall back to another implementation).
"""

from __future__ import annotations

import ctypes.util
import importlib.metadata
import os
import threading

import ml_dtypes
import numpy as np

__all__ = [
    "ARG_ATTR_SCALES",
    "ARG_ATTR_ZERO_POINTS",
    "ARG_BIAS",
    "ARG_DIFF_DST",
    "ARG_DIFF_SRC",
    "ARG_DST",
    "ARG_MEAN",
    "ARG_SCALE",
    "ARG_SCRATCHPAD",
    "ARG_SHIFT",
    "ARG_SRC",
    "ARG_VARIANCE",
    "ARG_WEIGHTS",
    "ARG_WORKSPACE",
    "BF16",
    "CONVOLUTION_DIRECT",
    "DATA_TYPES",
    "DISTRIBUTIONS",
    "ELTWISE_ABS",
    "ELTWISE_CLIP",
    "ELTWISE_ELU",
    "ELTWISE_EXP",
    "ELTWISE_GELU_ERF",
    "ELTWISE_GELU_TANH",
    "ELTWISE_HARDSIGMOID",
    "ELTWISE_HARDSWISH",
    "ELTWISE_LINEAR",
    "ELTWISE_LOG",
    "ELTWISE_LOGISTIC",
    "ELTWISE_MISH",
    "ELTWISE_RELU",
    "ELTWISE_SOFT_RELU",
    "ELTWISE_SQRT",
    "ELTWISE_SQUARE",
    "ELTWISE_SWISH",
    "ELTWISE_TANH",
    "ENGINE_CPU",
    "ENV_LIBRARY",
    "F16",
    "F32",
    "FORMAT_ANY",
    "FORWARD_INFERENCE",
    "FORWARD_TRAINING",
    "ISA_NAMES",
    "Library",
    "OneDNNError",
    "OneDNNUnimplemented",
    "POOLING_AVG_EXCLUDE_PADDING",
    "POOLING_AVG_INCLUDE_PADDING",
    "POOLING_MAX",
    "QUERY_DIFF_DST_MD",
    "QUERY_DIFF_SRC_MD",
    "QUERY_DST_MD",
    "QUERY_IMPL_INFO",
    "QUERY_SCRATCHPAD_MD",
    "QUERY_SRC_MD",
    "QUERY_WEIGHTS_MD",
    "S32",
    "S8",
    "SCRATCHPAD_USER",
    "SOFTMAX_ACCURATE",
    "SOFTMAX_LOG",
    "SONAME",
    "STATUS_NAMES",
    "STREAM_IN_ORDER",
    "U8",
    "UNIMPLEMENTED",
    "USE_SCALE",
    "USE_SHIFT",
    "Unavailable",
    "availability",
    "isa_has_bf16",
    "isa_has_int8_dot",
    "library",
    "library_candidates",
]

ENV_LIBRARY = "OPWEAVE_ONEDNN_LIBRARY"
DISTRIBUTIONS = ("onednn-cpu-gomp",)
SONAME = "libdnnl.so.3"

_CDEF = """
typedef struct { int major; int minor; int patch; const char *hash; unsigned cpu_runtime; unsigned gpu_runtime; }
    dnnl_version_t;
typedef struct dnnl_engine *dnnl_engine_t;
typedef struct dnnl_stream *dnnl_stream_t;
typedef struct dnnl_memory_desc *dnnl_memory_desc_t;
typedef const struct dnnl_memory_desc *const_dnnl_memory_desc_t;
typedef struct dnnl_memory *dnnl_memory_t;
typedef struct dnnl_primitive_desc *dnnl_primitive_desc_t;
typedef struct dnnl_primitive *dnnl_primitive_t;
typedef struct dnnl_primitive_attr *dnnl_primitive_attr_t;
typedef struct dnnl_post_ops *dnnl_post_ops_t;
typedef struct { int arg; dnnl_memory_t memory; } dnnl_exec_arg_t;

const dnnl_version_t *dnnl_version(void);
int dnnl_get_effective_cpu_isa(void);
int dnnl_engine_create(dnnl_engine_t *engine, int kind, size_t index);
int dnnl_engine_destroy(dnnl_engine_t engine);
int dnnl_stream_create(dnnl_stream_t *stream, dnnl_engine_t engine, unsigned flags);
int dnnl_stream_wait(dnnl_stream_t stream);
int dnnl_stream_destroy(dnnl_stream_t stream);

int dnnl_memory_desc_create_with_strides(dnnl_memory_desc_t *md, int ndims, const int64_t *dims, int data_type,
    const int64_t *strides);
int dnnl_memory_desc_create_with_tag(dnnl_memory_desc_t *md, int ndims, const int64_t *dims, int data_type, int tag);
int dnnl_memory_desc_clone(dnnl_memory_desc_t *md, const_dnnl_memory_desc_t existing);
int dnnl_memory_desc_destroy(dnnl_memory_desc_t md);
int dnnl_memory_desc_equal(const_dnnl_memory_desc_t lhs, const_dnnl_memory_desc_t rhs);
size_t dnnl_memory_desc_get_size(const_dnnl_memory_desc_t md);

int dnnl_memory_create(dnnl_memory_t *memory, const_dnnl_memory_desc_t md, dnnl_engine_t engine, void *handle);
int dnnl_memory_set_data_handle(dnnl_memory_t memory, void *handle);
int dnnl_memory_destroy(dnnl_memory_t memory);

int dnnl_primitive_attr_create(dnnl_primitive_attr_t *attr);
int dnnl_primitive_attr_destroy(dnnl_primitive_attr_t attr);
int dnnl_primitive_attr_set_scratchpad_mode(dnnl_primitive_attr_t attr, int mode);
int dnnl_primitive_attr_set_scales_mask(dnnl_primitive_attr_t attr, int arg, int mask);
int dnnl_primitive_attr_set_zero_points_mask(dnnl_primitive_attr_t attr, int arg, int mask);
int dnnl_primitive_attr_set_post_ops(dnnl_primitive_attr_t attr, dnnl_post_ops_t post_ops);
int dnnl_post_ops_create(dnnl_post_ops_t *post_ops);
int dnnl_post_ops_destroy(dnnl_post_ops_t post_ops);
int dnnl_post_ops_append_eltwise(dnnl_post_ops_t post_ops, int alg_kind, float alpha, float beta);

int dnnl_matmul_primitive_desc_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
    const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t weights, const_dnnl_memory_desc_t bias,
    const_dnnl_memory_desc_t dst, dnnl_primitive_attr_t attr);
int dnnl_convolution_forward_primitive_desc_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
    int prop_kind, int alg_kind, const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t weights,
    const_dnnl_memory_desc_t bias, const_dnnl_memory_desc_t dst, const int64_t *strides, const int64_t *dilates,
    const int64_t *padding_l, const int64_t *padding_r, dnnl_primitive_attr_t attr);
int dnnl_convolution_backward_data_primitive_desc_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
    int alg_kind, const_dnnl_memory_desc_t diff_src, const_dnnl_memory_desc_t weights,
    const_dnnl_memory_desc_t diff_dst, const int64_t *strides, const int64_t *dilates,
    const int64_t *padding_l, const int64_t *padding_r, dnnl_primitive_desc_t hint_fwd_pd,
    dnnl_primitive_attr_t attr);
int dnnl_eltwise_forward_primitive_desc_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
    int prop_kind, int alg_kind, const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t dst,
    float alpha, float beta, dnnl_primitive_attr_t attr);
int dnnl_softmax_forward_primitive_desc_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
    int prop_kind, int alg_kind, const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t dst,
    int softmax_axis, dnnl_primitive_attr_t attr);
int dnnl_layer_normalization_forward_primitive_desc_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
    int prop_kind, const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t dst,
    const_dnnl_memory_desc_t stat, float epsilon, unsigned flags, dnnl_primitive_attr_t attr);
int dnnl_pooling_forward_primitive_desc_create(dnnl_primitive_desc_t *pd, dnnl_engine_t engine,
    int prop_kind, int alg_kind, const_dnnl_memory_desc_t src, const_dnnl_memory_desc_t dst,
    const int64_t *strides, const int64_t *kernel, const int64_t *dilation,
    const int64_t *padding_l, const int64_t *padding_r, dnnl_primitive_attr_t attr);
int dnnl_reorder_primitive_desc_create(dnnl_primitive_desc_t *pd, const_dnnl_memory_desc_t src,
    dnnl_engine_t src_engine, const_dnnl_memory_desc_t dst, dnnl_engine_t dst_engine, dnnl_primitive_attr_t attr);
int dnnl_primitive_desc_query(dnnl_primitive_desc_t pd, int what, int index, void *result);
const_dnnl_memory_desc_t dnnl_primitive_desc_query_md(dnnl_primitive_desc_t pd, int what, int index);
int dnnl_primitive_desc_destroy(dnnl_primitive_desc_t pd);

int dnnl_primitive_create(dnnl_primitive_t *primitive, dnnl_primitive_desc_t pd);
int dnnl_primitive_execute(dnnl_primitive_t primitive, dnnl_stream_t stream, int nargs, const dnnl_exec_arg_t *args);
int dnnl_primitive_destroy(dnnl_primitive_t primitive);
"""

# -- constants of the C API (oneDNN 3.x) ------------------------------------------------------------

STATUS_NAMES = {
    1: "out_of_memory",
    2: "invalid_arguments",
    3: "unimplemented",
    4: "last_impl_reached",
    5: "runtime_error",
    6: "not_required",
}
UNIMPLEMENTED = 3

F16, BF16, F32, S32, S8, U8 = 1, 2, 3, 4, 5, 6
DATA_TYPES = {
    np.dtype(np.float16): F16,
    np.dtype(ml_dtypes.bfloat16): BF16,
    np.dtype(np.float32): F32,
    np.dtype(np.int32): S32,
    np.dtype(np.int8): S8,
    np.dtype(np.uint8): U8,
}

FORMAT_ANY = 1
ENGINE_CPU = 1
STREAM_IN_ORDER = 1
SCRATCHPAD_USER = 1
FORWARD_TRAINING, FORWARD_INFERENCE = 64, 96
CONVOLUTION_DIRECT = 1

#: eltwise algorithm kinds (``dnnl_alg_kind_t`` of oneDNN 3.x)
ELTWISE_RELU, ELTWISE_TANH, ELTWISE_ELU, ELTWISE_SQUARE, ELTWISE_ABS, ELTWISE_SQRT = 0x20, 0x21, 0x22, 0x23, 0x24, 0x25
ELTWISE_LINEAR, ELTWISE_SOFT_RELU, ELTWISE_HARDSIGMOID, ELTWISE_LOGISTIC, ELTWISE_EXP = 0x26, 0x27, 0x28, 0x29, 0x2A
ELTWISE_GELU_TANH, ELTWISE_SWISH, ELTWISE_LOG, ELTWISE_CLIP = 0x2B, 0x2C, 0x2D, 0x2E
ELTWISE_GELU_ERF, ELTWISE_MISH, ELTWISE_HARDSWISH = 0x31, 0x33, 0x34
POOLING_MAX, POOLING_AVG_INCLUDE_PADDING, POOLING_AVG_EXCLUDE_PADDING = 0x1FF, 0x2FF, 0x3FF
SOFTMAX_ACCURATE, SOFTMAX_LOG = 0x30000, 0x30001
#: layer normalization flags
USE_SCALE, USE_SHIFT = 0x2, 0x4

QUERY_IMPL_INFO = 8
QUERY_SRC_MD, QUERY_WEIGHTS_MD, QUERY_DST_MD, QUERY_SCRATCHPAD_MD = 129, 131, 133, 136
QUERY_DIFF_SRC_MD, QUERY_DIFF_DST_MD = 130, 134

ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_BIAS, ARG_SCRATCHPAD = 1, 17, 33, 41, 80
ARG_MEAN, ARG_VARIANCE, ARG_SCALE, ARG_SHIFT = 49, 50, 51, 52
ARG_DIFF_SRC, ARG_DIFF_DST = 129, 145
ARG_WORKSPACE = 64
ARG_ATTR_SCALES, ARG_ATTR_ZERO_POINTS = 4096, 8192

#: ``dnnl_get_effective_cpu_isa()`` values; the int8 kernels need VNNI (AVX512 or AVX2) or AMX.
ISA_NAMES = {
    0x1: "sse41",
    0x3: "avx",
    0x7: "avx2",
    0x407: "avx2_vnni",
    0xC07: "avx2_vnni_2",
    0x27: "avx512_core",
    0x67: "avx512_core_vnni",
    0xE7: "avx512_core_bf16",
    0x1EF: "avx512_core_fp16",
    0xFEF: "avx512_core_amx",
    0x1FEF: "avx512_core_amx_fp16",
}
_VNNI_BITS = (0x67, 0x407)  # avx512_core_vnni, avx2_vnni: an ISA containing either bit set has int8 dot products


def isa_has_bf16(isa: int) -> bool:
    """Whether an effective ISA value includes AVX512-BF16 (or AMX): bfloat16 primitives run natively."""
    return isa & 0xE7 == 0xE7


def isa_has_int8_dot(isa: int) -> bool:
    """Whether an effective ISA value includes VNNI or AMX int8 instructions."""
    return any(isa & bits == bits for bits in _VNNI_BITS)


class Unavailable(RuntimeError):
    """oneDNN cannot be used here (the message says why)."""


class OneDNNError(RuntimeError):
    """A oneDNN call returned a non-zero status."""

    def __init__(self, call: str, status: int):
        self.call, self.status = call, status
        super().__init__(f"oneDNN {call} failed: dnnl_{STATUS_NAMES.get(status, status)}")


class OneDNNUnimplemented(OneDNNError, NotImplementedError):
    """oneDNN has no implementation for the requested primitive (callers fall back)."""


# -- finding and loading the library ------------------------------------------------------------------


def library_candidates() -> list[str]:
    """Paths (or loader names) to try for ``libdnnl.so.3``, most specific first.

    Only ``$OPWEAVE_ONEDNN_LIBRARY`` when it is set.
    """
    override = os.environ.get(ENV_LIBRARY)
    if override:
        return [override]
    found = []
    for name in DISTRIBUTIONS:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for f in dist.files or ():
            if f.name == SONAME:
                found.append(os.path.normpath(str(dist.locate_file(f))))
    system = ctypes.util.find_library("dnnl")
    if system:
        found.append(system)
    return found


class Library:
    """The loaded library with one CPU engine and an in-order stream per thread (:attr:`stream`)."""

    def __init__(self, path: str):
        import cffi

        self.path = path
        self.ffi = ffi = cffi.FFI()
        ffi.cdef(_CDEF)
        self.lib = lib = ffi.dlopen(path)
        v = lib.dnnl_version()
        self.version = (v.major, v.minor, v.patch)
        self.isa = int(lib.dnnl_get_effective_cpu_isa())
        self.isa_name = ISA_NAMES.get(self.isa, hex(self.isa))
        engine = ffi.new("dnnl_engine_t *")
        self.check(lib.dnnl_engine_create(engine, ENGINE_CPU, 0), "dnnl_engine_create")
        self.engine = ffi.gc(engine[0], lib.dnnl_engine_destroy)
        self._local = threading.local()

    @property
    def stream(self):
        """This thread's in-order stream on the engine (made on first use)."""
        stream = getattr(self._local, "stream", None)
        if stream is None:
            out = self.ffi.new("dnnl_stream_t *")
            self.check(self.lib.dnnl_stream_create(out, self.engine, STREAM_IN_ORDER), "dnnl_stream_create")
            stream = self._local.stream = self.ffi.gc(out[0], self.lib.dnnl_stream_destroy)
        return stream

    @staticmethod
    def check(status: int, call: str) -> None:
        """Raise :class:`OneDNNError` (or :class:`OneDNNUnimplemented`) for a non-zero status."""
        if status:
            raise (OneDNNUnimplemented if status == UNIMPLEMENTED else OneDNNError)(call, status)

    def describe(self) -> str:
        """One line: version, ISA and path."""
        return f"oneDNN {'.'.join(map(str, self.version))} ({self.isa_name}) at {self.path}"


_library: Library | None = None
_failure: str | None = None
_lock = threading.Lock()


def library() -> Library:
    """The loaded library (loaded on first use); :class:`Unavailable` with the reason when it is missing."""
    global _library, _failure
    if _library is not None:
        return _library
    with _lock:
        if _library is None and _failure is None:
            _library, _failure = _load()
    if _library is None:
        raise Unavailable(_failure)
    return _library


def _load() -> tuple[Library | None, str | None]:
    candidates = library_candidates()
    if not candidates:
        return None, 'oneDNN not found (pip install "opweave[onednn]" installs onednn-cpu-gomp)'
    errors = []
    for path in candidates:
        try:
            lib = Library(path)
        except ImportError as exc:  # cffi missing
            return None, f'{exc} (pip install "opweave[onednn]")'
        except (OSError, OneDNNError) as exc:
            errors.append(str(exc).split(".  Additionally")[0])  # cffi appends the loader's second attempt
            continue
        if lib.version[0] < 3:
            errors.append(f"{path}: oneDNN {lib.version} is older than 3.0")
            continue
        return lib, None
    return None, "oneDNN could not be loaded: " + "; ".join(errors)


def availability() -> tuple[bool, str | None]:
    """``(True, None)`` when the library loads, else ``(False, reason)``."""
    try:
        library()
    except Unavailable as exc:
        return False, str(exc)
    return True, None
