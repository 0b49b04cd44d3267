"""CUDA C++ (NVRTC): the generator's kernels for NVIDIA GPUs.

The generated text uses OpenCL C's scalar names (``uchar``, ``ulong``), its built-ins
(``as_float``, ``mul_hi``, ``select``, ``clamp``, ``mad``) and ``float2``/``double2``
pairs; :data:`PRELUDE` defines them in CUDA terms. CUDA's own ``float2``, ``double2``
and ``uint4`` (built into NVRTC) are the pairs. ``half`` is a 16-bit struct of the
prelude that converts to and from ``float``/``double`` through PTX ``cvt`` with
round-to-nearest-even (the kernels compute 16-bit floats in float, so no half
arithmetic is needed): no CUDA header is included, so NVRTC compiles without a
toolkit or a ``cuda_fp16.h`` on the machine. bfloat16 travels as its raw 16 bits
(``ushort``), as in every dialect.

A kernel is ``extern "C" __global__`` (an unmangled name for ``cuModuleGetFunction``),
helpers are ``__device__ inline``, work-group arrays ``__shared__``. Global ids are
computed in 64 bits (``blockIdx.x * blockDim.x`` overflows 32 bits past 2^32 items).
"""

from __future__ import annotations

from .base import Dialect

#: Definitions every CUDA program starts with (see the module docstring).
PRELUDE = r"""
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define M_PI_F 3.14159265358979323846f
#define FLT_MAX 3.402823466e+38F
#define FLT_MIN 1.175494351e-38F
#define FLT_EPSILON 1.192092896e-07F
#define DBL_MAX 1.7976931348623158e+308
#define DBL_MIN 2.2250738585072014e-308
#define DBL_EPSILON 2.2204460492503131e-16
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 0xffffffffU
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-9223372036854775807L - 1)
#define ULONG_MAX 0xffffffffffffffffUL
#define SHRT_MAX 32767
#define SHRT_MIN (-32768)
#define USHRT_MAX 65535
#define CHAR_MAX 127
#define CHAR_MIN (-128)
#define SCHAR_MAX 127
#define SCHAR_MIN (-128)
#define UCHAR_MAX 255
struct half {
    unsigned short bits;
    half() = default;
    __device__ half(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
    __device__ half(double f) { asm("cvt.rn.f16.f64 %0, %1;" : "=h"(bits) : "d"(f)); }
    __device__ half(int v) : half((float)v) {}
    __device__ half(long v) : half((double)v) {}
    __device__ operator float() const { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits)); return f; }
};
template <class T, class F> __device__ inline T ow_bitcast(F v) {
    static_assert(sizeof(T) == sizeof(F), "a bit cast keeps the size");
    union { F f; T t; } u;
    u.f = v;
    return u.t;
}
#define as_float(v) ow_bitcast<float>(v)
#define as_double(v) ow_bitcast<double>(v)
#define as_uint(v) ow_bitcast<uint>(v)
#define as_int(v) ow_bitcast<int>(v)
#define as_ulong(v) ow_bitcast<ulong>(v)
#define as_long(v) ow_bitcast<long>(v)
#define as_ushort(v) ow_bitcast<ushort>(v)
#define as_short(v) ow_bitcast<short>(v)
#define as_uchar(v) ow_bitcast<uchar>(v)
#define as_char(v) ow_bitcast<char>(v)
#define as_half(v) ow_bitcast<half>(v)
#define clamp(v, lo, hi) (((v) < (lo)) ? (lo) : (((v) > (hi)) ? (hi) : (v)))
#define select(a, b, c) ((c) ? (b) : (a))
#define mad(a, b, c) ((a) * (b) + (c))
__device__ inline uint mul_hi(uint a, uint b) { return __umulhi(a, b); }
__device__ inline ulong mul_hi(ulong a, ulong b) { return (ulong)__umul64hi(a, b); }
__device__ inline long mul_hi(long a, long b) { return (long)__mul64hi(a, b); }
__device__ inline int mul_hi(int a, int b) { return __mulhi(a, b); }
"""


class CudaDialect(Dialect):
    """CUDA C++ for NVRTC: ``extern "C" __global__`` kernels, ``__shared__`` arrays, ``threadIdx``/``blockIdx``."""

    name = "cuda"
    kernel_prefix = 'extern "C" __global__ void'
    local_prefix = "__shared__ "
    restrict = " __restrict__"
    math_names = {"abs": "fabs", "round": "rint", "maximum": "fmax", "minimum": "fmin", "remainder": "fmod"}
    computes_float16 = True  # the prelude's half converts to and from float; kernels compute in float
    grid_stride = True  # contiguous elementwise kernels loop over the grid (a few blocks per SM, coalesced)
    reduction_shuffle_width = 32  # reductions finish with warp shuffles (__shfl_down_sync), not a shared-memory tree

    def header(self, dtypes) -> str:
        """Nothing per dtype: the prelude (:data:`PRELUDE`) is prepended once by :func:`program`."""
        return ""

    def global_id(self, axis: int = 0) -> str:
        """``blockIdx * blockDim + threadIdx`` in 64 bits."""
        a = "xyz"[axis]
        return f"((long)blockIdx.{a} * blockDim.{a} + threadIdx.{a})"

    def local_id(self, axis: int = 0) -> str:
        """``threadIdx``."""
        return f"(long)threadIdx.{'xyz'[axis]}"

    def group_id(self, axis: int = 0) -> str:
        """``blockIdx``."""
        return f"(long)blockIdx.{'xyz'[axis]}"

    def local_size(self, axis: int = 0) -> str:
        """``blockDim``."""
        return f"(long)blockDim.{'xyz'[axis]}"

    def global_size(self, axis: int = 0) -> str:
        """``gridDim * blockDim`` in 64 bits."""
        a = "xyz"[axis]
        return f"((long)gridDim.{a} * blockDim.{a})"

    def barrier(self) -> str:
        """``__syncthreads();``."""
        return "__syncthreads();"

    def global_barrier(self) -> str:
        """``__threadfence_block(); __syncthreads();``: global writes of the block are visible after it."""
        return "__threadfence_block(); __syncthreads();"

    def bitcast(self, ctype: str, expr: str) -> str:
        """``as_<type>(expr)`` (the prelude's overloads over CUDA's bit-cast intrinsics)."""
        return f"as_{ctype}({expr})"

    def function_prefix(self) -> str:
        """``__device__ inline``."""
        return "__device__ inline"

    def atomic_cas(self, bits: int, ptr: str, expected: str, value: str) -> str:
        """``atomicCAS`` on an ``unsigned int`` or ``unsigned long long``."""
        word = "unsigned long long" if bits == 64 else "unsigned int"
        return f"atomicCAS(({word}*)({ptr}), ({word})({expected}), ({word})({value}))"

    def atomic_max(self, ptr: str, value: str) -> str:
        """``atomicMax`` on an ``int``."""
        return f"atomicMax((int*)({ptr}), (int)({value}))"

    def atomic_add(self, bits: int, ptr: str, value: str) -> str:
        """``atomicAdd`` on an ``int``, or on an ``unsigned long long`` (two's complement: a signed add)."""
        if bits == 64:
            return f"(long)atomicAdd((unsigned long long*)({ptr}), (unsigned long long)({value}))"
        return f"atomicAdd((int*)({ptr}), (int)({value}))"

    def subgroup_shuffle_down(self, expr: str, delta: str) -> str:
        """``__shfl_down_sync`` over the whole warp."""
        return f"__shfl_down_sync(0xffffffffu, {expr}, (unsigned)({delta}))"


CUDA = CudaDialect()


def program(source: str) -> str:
    """A whole CUDA translation unit: the prelude, then the generated ``source``."""
    return PRELUDE + source
