"""oneDNN's C API through cffi in ABI mode: the few calls the int8 kernels use.

No headers and no compiler are needed: the declarations below are the C API of oneDNN 3.x
(checked against 3.2, the ``onednn-cpu-gomp`` wheel). The library is the file named by
``$OPWEAVE_ONEDNN_LIBRARY`` when that is set; otherwise the one inside an installed
``onednn-cpu-gomp`` distribution, else whatever the system loader finds (``libdnnl.so.3``).

:func:`library` returns the loaded :class:`Library` (one CPU engine, an in-order stream per thread) or
raises :class:`Unavailable` with the reason; :func:`availability` says the same without raising.
Memory descriptors are made from NumPy shapes and element strides (no format tags), primitive
descriptors from those, and :class:`Primitive` runs one with NumPy buffers bound to its arguments.
Every oneDNN object is destroyed when its Python wrapper is collected. A non-zero status
becomes :class:`OneDNNError` (``NotImplementedError`` too for ``dnnl_unimplemented``, so that
callers can fall back to another implementation).
"""

from __future__ import annotations

import ctypes.util
import importlib.metadata
import math
import os
import threading

import numpy as np

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

F32, S32, S8, U8 = 3, 4, 5, 6
DATA_TYPES = {np.dtype(np.float32): F32, np.dtype(np.int32): S32, np.dtype(np.int8): S8, np.dtype(np.uint8): U8}

FORMAT_ANY = 1
ENGINE_CPU = 1
STREAM_IN_ORDER = 1
SCRATCHPAD_USER = 1
FORWARD_INFERENCE = 96
CONVOLUTION_DIRECT = 1
ELTWISE_RELU = 0x20

QUERY_IMPL_INFO = 8
QUERY_SRC_MD, QUERY_WEIGHTS_MD, QUERY_DST_MD, QUERY_SCRATCHPAD_MD = 129, 131, 133, 136

ARG_SRC, ARG_DST, ARG_WEIGHTS, ARG_BIAS, ARG_SCRATCHPAD = 1, 17, 33, 41, 80
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
    """The loaded library; :class:`Unavailable` with the reason when it is missing or the CPU cannot run int8."""
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
        return None, 'oneDNN not found (pip install "opweave[x86quant]" installs onednn-cpu-gomp)'
    errors = []
    for path in candidates:
        try:
            lib = Library(path)
        except ImportError as exc:  # cffi missing
            return None, f'{exc} (pip install "opweave[x86quant]")'
        except (OSError, OneDNNError) as exc:
            errors.append(str(exc).split(".  Additionally")[0])  # cffi appends the loader's second attempt
            continue
        if lib.version[0] < 3:
            errors.append(f"{path}: oneDNN {lib.version} is older than 3.0")
            continue
        if not isa_has_int8_dot(lib.isa):
            return None, f"the CPU lacks AVX512-VNNI, AVX-VNNI and AMX (oneDNN reports ISA {lib.isa_name})"
        return lib, None
    return None, "oneDNN could not be loaded: " + "; ".join(errors)


def availability() -> tuple[bool, str | None]:
    """``(True, None)`` when the int8 kernels can run, else ``(False, reason)``."""
    try:
        library()
    except Unavailable as exc:
        return False, str(exc)
    return True, None


# -- descriptors, attributes, primitives ---------------------------------------------------------------


def data_type(dtype) -> int:
    """oneDNN data type of a NumPy dtype (f32, s32, s8, u8)."""
    return DATA_TYPES[np.dtype(dtype)]


def memory_desc(shape, dtype, strides=None):
    """A plain memory descriptor; ``strides`` in elements (C-contiguous when None)."""
    L = library()
    shape = [int(s) for s in shape]
    if strides is None:
        strides, step = [0] * len(shape), 1
        for i in range(len(shape) - 1, -1, -1):
            strides[i] = step
            step *= max(shape[i], 1)
    md = L.ffi.new("dnnl_memory_desc_t *")
    dims = L.ffi.new("int64_t[]", shape)
    L.check(
        L.lib.dnnl_memory_desc_create_with_strides(
            md, len(shape), dims, data_type(dtype), L.ffi.new("int64_t[]", [int(s) for s in strides])
        ),
        "dnnl_memory_desc_create_with_strides",
    )
    return L.ffi.gc(md[0], L.lib.dnnl_memory_desc_destroy)


def memory_desc_any(shape, dtype):
    """A memory descriptor whose layout the primitive chooses (``format_tag_any``)."""
    L = library()
    md = L.ffi.new("dnnl_memory_desc_t *")
    dims = L.ffi.new("int64_t[]", [int(s) for s in shape])
    L.check(
        L.lib.dnnl_memory_desc_create_with_tag(md, len(shape), dims, data_type(dtype), FORMAT_ANY),
        "dnnl_memory_desc_create_with_tag",
    )
    return L.ffi.gc(md[0], L.lib.dnnl_memory_desc_destroy)


def array_desc(a: np.ndarray):
    """The memory descriptor of a NumPy array as it lies in memory (its own strides)."""
    item = a.itemsize
    return memory_desc(a.shape, a.dtype, [s // item for s in a.strides])


def clone_desc(md):
    """An owned copy of a descriptor (queried descriptors live only as long as their primitive descriptor)."""
    L = library()
    out = L.ffi.new("dnnl_memory_desc_t *")
    L.check(L.lib.dnnl_memory_desc_clone(out, md), "dnnl_memory_desc_clone")
    return L.ffi.gc(out[0], L.lib.dnnl_memory_desc_destroy)


def desc_equal(a, b) -> bool:
    """Whether two memory descriptors describe the same layout."""
    return bool(library().lib.dnnl_memory_desc_equal(a, b))


def desc_size(md) -> int:
    """Bytes a memory of this descriptor needs."""
    return int(library().lib.dnnl_memory_desc_get_size(md))


def attributes(scales=(), zero_points=(), relu=False):
    """Primitive attributes: user scratchpad, runtime ``scales``/``zero_points`` as ``(arg, mask)`` pairs, a ReLU."""
    L = library()
    ffi, lib = L.ffi, L.lib
    attr = ffi.new("dnnl_primitive_attr_t *")
    L.check(lib.dnnl_primitive_attr_create(attr), "dnnl_primitive_attr_create")
    attr = ffi.gc(attr[0], lib.dnnl_primitive_attr_destroy)
    L.check(lib.dnnl_primitive_attr_set_scratchpad_mode(attr, SCRATCHPAD_USER), "set_scratchpad_mode")
    for arg, mask in scales:
        L.check(lib.dnnl_primitive_attr_set_scales_mask(attr, arg, mask), "dnnl_primitive_attr_set_scales_mask")
    for arg, mask in zero_points:
        L.check(
            lib.dnnl_primitive_attr_set_zero_points_mask(attr, arg, mask), "dnnl_primitive_attr_set_zero_points_mask"
        )
    if relu:
        post_ops = ffi.new("dnnl_post_ops_t *")
        L.check(lib.dnnl_post_ops_create(post_ops), "dnnl_post_ops_create")
        post_ops = ffi.gc(post_ops[0], lib.dnnl_post_ops_destroy)
        L.check(lib.dnnl_post_ops_append_eltwise(post_ops, ELTWISE_RELU, 0.0, 0.0), "dnnl_post_ops_append_eltwise")
        L.check(lib.dnnl_primitive_attr_set_post_ops(attr, post_ops), "dnnl_primitive_attr_set_post_ops")
    return attr


def _pd_out(L):
    return L.ffi.new("dnnl_primitive_desc_t *")


def matmul_desc(src, weights, bias, dst, attr):
    """A matmul primitive descriptor (``bias`` may be None)."""
    L = library()
    pd = _pd_out(L)
    bias = bias if bias is not None else L.ffi.NULL
    L.check(
        L.lib.dnnl_matmul_primitive_desc_create(pd, L.engine, src, weights, bias, dst, attr),
        "dnnl_matmul_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def convolution_desc(src, weights, bias, dst, strides, dilates, padding_l, padding_r, attr):
    """A forward-inference direct convolution primitive descriptor (``dilates`` 0-based, as oneDNN counts)."""
    L = library()
    pd = _pd_out(L)
    bias = bias if bias is not None else L.ffi.NULL

    def dims(values):
        return L.ffi.new("int64_t[]", [int(v) for v in values])

    L.check(
        L.lib.dnnl_convolution_forward_primitive_desc_create(
            pd,
            L.engine,
            FORWARD_INFERENCE,
            CONVOLUTION_DIRECT,
            src,
            weights,
            bias,
            dst,
            dims(strides),
            dims(dilates),
            dims(padding_l),
            dims(padding_r),
            attr,
        ),
        "dnnl_convolution_forward_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def reorder_desc(src, dst):
    """A reorder primitive descriptor from layout ``src`` to layout ``dst``."""
    L = library()
    pd = _pd_out(L)
    L.check(
        L.lib.dnnl_reorder_primitive_desc_create(pd, src, L.engine, dst, L.engine, L.ffi.NULL),
        "dnnl_reorder_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def query_md(pd, what: int):
    """An owned copy of the memory descriptor ``what`` (``QUERY_*_MD``) of a primitive descriptor."""
    return clone_desc(library().lib.dnnl_primitive_desc_query_md(pd, what, 0))


def impl_info(pd) -> str:
    """The implementation oneDNN chose, e.g. ``brg:avx512_core_amx``."""
    L = library()
    out = L.ffi.new("char **")
    L.check(L.lib.dnnl_primitive_desc_query(pd, QUERY_IMPL_INFO, 0, out), "dnnl_primitive_desc_query")
    return L.ffi.string(out[0]).decode()


class Primitive:
    """A created primitive with its argument layouts; :meth:`run` binds NumPy buffers and executes.

    ``descs`` maps argument ids to the memory descriptors the buffers passed to :meth:`run`
    must have; every argument is passed at every call. The memory objects are made once and
    re-pointed at each call's buffers. The scratchpad is user-managed (one buffer per primitive,
    not the library's per-thread one), so a primitive may run from any thread; its calls are
    serialised by a lock.
    """

    def __init__(self, pd, descs: dict):
        L = library()
        ffi, lib = L.ffi, L.lib
        self.pd = pd
        self.impl = impl_info(pd)
        out = ffi.new("dnnl_primitive_t *")
        L.check(lib.dnnl_primitive_create(out, pd), "dnnl_primitive_create")
        self.handle = ffi.gc(out[0], lib.dnnl_primitive_destroy)
        self.descs = dict(descs)
        scratch = query_md(pd, QUERY_SCRATCHPAD_MD)
        self.scratch_bytes = desc_size(scratch)
        self._scratch = None
        if self.scratch_bytes:
            self.descs[ARG_SCRATCHPAD] = scratch
            self._scratch = aligned_empty(self.scratch_bytes)
        self._memories = {}
        for arg, md in self.descs.items():
            mem = ffi.new("dnnl_memory_t *")
            L.check(lib.dnnl_memory_create(mem, md, L.engine, ffi.NULL), "dnnl_memory_create")
            self._memories[arg] = ffi.gc(mem[0], lib.dnnl_memory_destroy)
        self._args = ffi.new("dnnl_exec_arg_t[]", list(self._memories.items()))
        self._inputs = frozenset(self.descs) - {ARG_SCRATCHPAD}
        self._lock = threading.Lock()

    def run(self, buffers: dict) -> None:
        """Execute with ``buffers`` (argument id -> NumPy array laid out as ``descs`` says) and wait."""
        if buffers.keys() != self._inputs:
            raise ValueError(
                f"oneDNN primitive {self.impl}: arguments {sorted(buffers)}, expected {sorted(self._inputs)}"
            )
        L = library()
        ffi, lib = L.ffi, L.lib
        with self._lock:  # memory objects and scratchpad are shared: one execution at a time
            if self._scratch is not None:
                buffers = {**buffers, ARG_SCRATCHPAD: self._scratch}
            for arg, array in buffers.items():
                handle = ffi.cast("void *", array.__array_interface__["data"][0])
                L.check(lib.dnnl_memory_set_data_handle(self._memories[arg], handle), "dnnl_memory_set_data_handle")
            stream = L.stream
            L.check(
                lib.dnnl_primitive_execute(self.handle, stream, len(self._memories), self._args),
                "dnnl_primitive_execute",
            )
            L.check(lib.dnnl_stream_wait(stream), "dnnl_stream_wait")


def reorder(src: np.ndarray, src_md, dst_md) -> np.ndarray:
    """``src`` (laid out as ``src_md``) copied into a new 64-byte aligned buffer laid out as ``dst_md``."""
    out = aligned_empty(desc_size(dst_md))
    Primitive(reorder_desc(src_md, dst_md), {ARG_SRC: src_md, ARG_DST: dst_md}).run({ARG_SRC: src, ARG_DST: out})
    return out


def aligned_array(shape, dtype, alignment: int = 64) -> np.ndarray:
    """An uninitialised C-contiguous array whose first element is ``alignment``-aligned."""
    dtype = np.dtype(dtype)
    return aligned_empty(math.prod(shape) * dtype.itemsize, alignment).view(dtype).reshape(shape)


def aligned(array: np.ndarray, alignment: int = 64) -> np.ndarray:
    """``array`` itself when C-contiguous and aligned, else an aligned copy (oneDNN runs faster on aligned rows)."""
    if array.flags.c_contiguous and array.__array_interface__["data"][0] % alignment == 0:
        return array
    out = aligned_array(array.shape, array.dtype, alignment)
    out[...] = array
    return out


def aligned_empty(nbytes: int, alignment: int = 64) -> np.ndarray:
    """An uninitialised byte buffer whose first byte is ``alignment``-aligned."""
    raw = np.empty(nbytes + alignment, np.uint8)
    start = -raw.__array_interface__["data"][0] % alignment
    return raw[start : start + nbytes]
