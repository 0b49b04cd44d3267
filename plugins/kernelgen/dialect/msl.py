"""Metal Shading Language (MSL 3.1: macOS 14, iOS 17), the dialect of Apple GPUs.

MSL is C++14 with address spaces and attributes. What differs from OpenCL C:

- a kernel is ``kernel void`` and *every* argument carries a ``[[buffer(i)]]`` index; a by-value argument
  (``long n``, ``dims_t shape``) is read from a small constant buffer, so it is declared
  ``constant long& n_arg [[buffer(i)]]`` (:meth:`MSLDialect.param`) and copied into a thread variable ``n``
  at the kernel's start, which is what OpenCL's by-value arguments are. Work-item ids are arguments too
  (``[[thread_position_in_grid]]``, ``[[thread_position_in_threadgroup]]``,
  ``[[threadgroup_position_in_grid]]``, ``[[threads_per_threadgroup]]``), appended to every kernel;
- buffers are ``device``, shared arrays ``threadgroup``, barriers ``threadgroup_barrier(mem_flags::...)``;
- bit casts are ``as_type<T>(x)``; the OpenCL spellings the shared templates use (``as_float``, ``mul_hi``)
  and the C99 math functions Metal lacks (``erf``, ``expm1``, ``log1p``, ``cbrt``, ``hypot``...) are
  defined in the program header (:data:`PRELUDE`);
- atomics act on ``device atomic_uint``/``atomic_int``; Metal has no 64-bit compare-and-swap, so
  :meth:`MSLDialect.atomic_cas` of 64 bits raises and a 64-bit add is two 32-bit adds with a carry
  (exact for the final sum of add-only updates, which is how the kernels use it);
- no ``double``: float64 and complex128 are not Metal types (:meth:`MSLDialect.type_name` raises).
"""

from __future__ import annotations

from .base import Dialect

#: What the shared templates call that Metal spells otherwise or lacks (float versions; no double in Metal).
PRELUDE = r"""#include <metal_stdlib>
using namespace metal;
#ifndef LONG_MAX
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-9223372036854775807L - 1L)
#endif
#ifndef ULONG_MAX
#define ULONG_MAX 18446744073709551615UL
#endif
#define M_LN2 M_LN2_F
template <typename T> inline float as_float(T v) { return as_type<float>(v); }
template <typename T> inline uint as_uint(T v) { return as_type<uint>(v); }
template <typename T> inline int as_int(T v) { return as_type<int>(v); }
inline uint mul_hi(uint a, uint b) { return mulhi(a, b); }
inline float hypot(float x, float y) {
    float ax = fabs(x), ay = fabs(y), hi = fmax(ax, ay), lo = fmin(ax, ay);
    if (isinf(ax) || isinf(ay)) return INFINITY;
    if (hi == 0.0f || isnan(hi)) return hi + lo;
    float r = lo / hi;
    return hi * sqrt(1.0f + r * r);
}
inline float expm1(float x) {
    if (fabs(x) >= 0.5f) return exp(x) - 1.0f;
    float u = exp(x);
    if (u == 1.0f) return x;
    return (u - 1.0f) * (x / log(u));
}
inline float log1p(float x) {
    float u = 1.0f + x;
    if (u == 1.0f) return x;
    if (isinf(u)) return u;
    return log(u) * (x / (u - 1.0f));
}
inline float cbrt(float x) {
    if (x == 0.0f || isinf(x) || isnan(x)) return x;
    float y = copysign(pow(fabs(x), 1.0f / 3.0f), x);
    return y - (y * y * y - x) / (3.0f * y * y);
}
inline float ow_erfc_tail(float a) {  // erfc(a) for a >= 0.5: Numerical Recipes' erfcc (fractional error < 1.2e-7)
    if (a > 10.1f) return 0.0f;  // below half the least subnormal (and erfc(inf) = 0 without inf - inf)
    float t = 1.0f / (1.0f + 0.5f * a);
    float p = -1.26551223f + t * (1.00002368f + t * (0.37409196f + t * (0.09678418f + t * (-0.18628806f
        + t * (0.27886807f + t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f))))))));
    float s = as_type<float>(as_type<uint>(a) & 0xfffff000u);  // -a*a = -s*s + (s - a)(s + a), s*s exact
    return t * exp(-s * s) * exp(p) * exp((s - a) * (s + a));
}
inline float erf(float x) {
    float a = fabs(x);
    if (a < 0.5f) {
        float z = x * x;
        return x * (1.1283791671f + z * (-0.3761263890f + z * (0.1128379167f + z * (-0.0268661706f
            + z * (0.0052239776f + z * (-0.0008548327f))))));
    }
    return copysign(1.0f - ow_erfc_tail(a), x);
}
inline float erfc(float x) {
    if (fabs(x) < 0.5f) return 1.0f - erf(x);
    float y = ow_erfc_tail(fabs(x));
    return x < 0.0f ? 2.0f - y : y;
}
inline uint ow_atomic_cas32(device uint* p, uint expected, uint desired) {
    uint seen = expected;
    while (!atomic_compare_exchange_weak_explicit((device atomic_uint*)p, &seen, desired, memory_order_relaxed,
                                                  memory_order_relaxed)) {
        if (seen != expected) return seen;  // a real failure: the word held another value
        seen = expected;                    // a spurious one (the weak form may fail): try again
    }
    return expected;
}
inline long ow_atomic_add64(device long* p, long v) {
    device atomic_uint* w = (device atomic_uint*)p;
    ulong u = (ulong)v;
    uint lo = (uint)u, hi = (uint)(u >> 32);
    uint old = atomic_fetch_add_explicit(w, lo, memory_order_relaxed);
    uint carry = (uint)(old + lo < old);
    if (hi + carry != 0u) atomic_fetch_add_explicit(w + 1, hi + carry, memory_order_relaxed);
    return (long)old;
}
"""

#: The kernel arguments that carry the work-item ids (appended to every kernel's parameters).
ID_PARAMS = (
    "uint3 ow_gid [[thread_position_in_grid]]",
    "uint3 ow_lid [[thread_position_in_threadgroup]]",
    "uint3 ow_grp [[threadgroup_position_in_grid]]",
    "uint3 ow_lsz [[threads_per_threadgroup]]",
)

#: Metal has no 64-bit floating point type.
NO_METAL_TYPE = {"float64": "double", "complex128": "double2"}


class MSLDialect(Dialect):
    """Metal Shading Language: ``kernel void``, ``device``/``constant``/``threadgroup``, ``[[...]]`` attributes."""

    name = "msl"
    kernel_prefix = "kernel void"
    global_prefix = "device "
    local_prefix = "threadgroup "
    math_names = {"abs": "fabs", "round": "rint", "maximum": "fmax", "minimum": "fmin", "remainder": "fmod"}
    atomics64 = False

    def header(self, dtypes) -> str:
        """``metal_stdlib`` and :data:`PRELUDE`; ``TypeError`` for float64/complex128 (Metal has no double)."""
        for d in dtypes:
            self.type_name(d)
        return PRELUDE

    def type_name(self, dtype: str) -> str:
        """The storage type of ``dtype``; ``TypeError`` naming the device for float64 and complex128."""
        if dtype in NO_METAL_TYPE:
            raise TypeError(f"the mps device has no {dtype}: Metal has no {NO_METAL_TYPE[dtype]} type")
        return super().type_name(dtype)

    def kernel(self, name: str, params: list[str], body: str) -> str:
        """The kernel; each by-value argument is first copied from its constant buffer into a thread variable.

        OpenCL C's by-value arguments are private copies: the templates take their address (``&p``) and may
        assign them. In Metal they arrive as ``constant`` references, so the copy keeps both legal.
        """
        copies = "".join(f"    {ctype} {arg} = {arg}_arg;\n" for ctype, arg in map(_by_value, params) if ctype)
        return super().kernel(name, params, copies + body)

    def param(self, decl: str, index: int) -> str:
        """``[[buffer(index)]]`` on every argument; a by-value one arrives as ``constant T& name_arg``."""
        ctype, arg = _by_value(decl)
        if ctype:
            decl = f"constant {ctype}& {arg}_arg"
        return f"{decl} [[buffer({index})]]"

    def builtin_params(self) -> list[str]:
        """The work-item id arguments (:data:`ID_PARAMS`)."""
        return list(ID_PARAMS)

    def global_id(self, axis: int = 0) -> str:
        """``(long)ow_gid.x`` (``[[thread_position_in_grid]]``)."""
        return f"((long)ow_gid.{'xyz'[axis]})"

    def local_id(self, axis: int = 0) -> str:
        """``(long)ow_lid.x`` (``[[thread_position_in_threadgroup]]``)."""
        return f"((long)ow_lid.{'xyz'[axis]})"

    def group_id(self, axis: int = 0) -> str:
        """``(long)ow_grp.x`` (``[[threadgroup_position_in_grid]]``)."""
        return f"((long)ow_grp.{'xyz'[axis]})"

    def local_size(self, axis: int = 0) -> str:
        """``(long)ow_lsz.x`` (``[[threads_per_threadgroup]]``)."""
        return f"((long)ow_lsz.{'xyz'[axis]})"

    def barrier(self) -> str:
        """``threadgroup_barrier(mem_flags::mem_threadgroup);``."""
        return "threadgroup_barrier(mem_flags::mem_threadgroup);"

    def global_barrier(self) -> str:
        """A threadgroup barrier that also orders device memory."""
        return "threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);"

    def bitcast(self, ctype: str, expr: str) -> str:
        """``as_type<T>(expr)``."""
        return f"as_type<{ctype}>({expr})"

    def cast(self, ctype: str, expr: str) -> str:
        """``static_cast``-like C cast (``(T)(expr)``)."""
        return f"(({ctype})({expr}))"

    def vector_type(self, ctype: str, width: int) -> str:
        """``float4``... (Metal's vectors have 2 to 4 lanes)."""
        if width not in (2, 3, 4):
            raise NotImplementedError(f"Metal has no {width}-lane vectors")
        return f"{ctype}{width}"

    def aligned_load(self, vtype: str, ptr: str, index: str) -> str:
        """``((device const float4*)(ptr))[index]``."""
        return f"((device const {vtype}*)({ptr}))[{index}]"

    def vector_store(self, width: int, value: str, ptr: str, index: str) -> str:
        """Lane by lane (Metal has no ``vstoreN``)."""
        return " ".join(f"({ptr})[({index}) * {width} + {i}] = ({value})[{i}];" for i in range(width))

    def aligned_store(self, vtype: str, value: str, ptr: str, index: str) -> str:
        """``((device float4*)(ptr))[index] = value;``."""
        return f"((device {vtype}*)({ptr}))[{index}] = {value};"

    def lane(self, expr: str, index: int) -> str:
        """``expr[i]``."""
        return f"({expr})[{index}]"

    def splat(self, vtype: str, expr: str) -> str:
        """``float4(expr)``."""
        return f"{vtype}({expr})"

    def global_ptr(self, ctype: str) -> str:
        """``device T*``."""
        return f"device {ctype}*"

    def atomic_cas(self, bits: int, ptr: str, expected: str, value: str) -> str:
        """A strong 32-bit compare-and-swap (``ow_atomic_cas32``); Metal has no 64-bit one."""
        if bits == 64:
            raise NotImplementedError("Metal has no 64-bit atomic compare-and-swap")
        return f"ow_atomic_cas32((device uint*)({ptr}), {expected}, {value})"

    def atomic_max(self, ptr: str, value: str) -> str:
        """``atomic_fetch_max_explicit`` on a ``device atomic_int``."""
        return f"atomic_fetch_max_explicit((device atomic_int*)({ptr}), {value}, memory_order_relaxed)"

    def atomic_add(self, bits: int, ptr: str, value: str) -> str:
        """``atomic_fetch_add_explicit`` (32-bit); 64-bit: ``ow_atomic_add64`` (two words and a carry)."""
        if bits == 64:
            return f"ow_atomic_add64((device long*)({ptr}), (long)({value}))"
        return f"atomic_fetch_add_explicit((device atomic_int*)({ptr}), {value}, memory_order_relaxed)"

    def subgroup_sum(self, expr: str) -> str:
        """``simd_sum(expr)``: the sum over the SIMD group (32 lanes on Apple GPUs)."""
        return f"simd_sum({expr})"

    def subgroup_shuffle_down(self, expr: str, delta: str) -> str:
        """``simd_shuffle_down(expr, delta)``."""
        return f"simd_shuffle_down({expr}, (ushort)({delta}))"


def _by_value(decl: str) -> tuple:
    """``(type, name)`` of a by-value parameter declaration (``const long n``, ``dims_t shape``); ``("", "")``
    for a buffer (a pointer)."""
    if "*" in decl:
        return "", ""
    words = decl.split()
    if words[0] == "const":
        words = words[1:]
    return " ".join(words[:-1]), words[-1]


MSL = MSLDialect()
