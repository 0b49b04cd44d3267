"""Helper functions of the extra elementwise prims, and their programs.

The ops of ``kernels.elementwise_extra`` are C expressions over ``x0, x1, x2``
like those of ``codegen.elementwise``; where an op needs statements (a loop, an
early return), the expression calls one of the ``ow_*`` helpers below. Float
helpers are written over the compute type ``T`` of the program (float, or
double for float64); integer helpers compute in 64 bits (``long``/``ulong``),
which every integer dtype converts to exactly, and the store truncates back,
so wrapping on overflow is the two's complement one NumPy gives.

Integer divisions never divide by 0 or -1 (a trap on CPUs): the divisor is
replaced by 1 first and those cases are selected afterwards.
"""

from __future__ import annotations

from string import Template

from .common import header, load, store
from .elementwise import program as ew_program

#: Suffix of the kernels whose inputs after the first are scalars (0-dim operands read at their offset).
SCALARS = "_cs"

_FLOAT_HELPERS = Template(
    """
inline $T ow_sign($T x) { return x > 0 ? ($T)1 : x < 0 ? ($T)-1 : x == 0 ? ($T)0 : x; }
inline $T ow_max($T a, $T b) { return (isnan(a) || isnan(b)) ? a + b : (a > b ? a : b); }
inline $T ow_min($T a, $T b) { return (isnan(a) || isnan(b)) ? a + b : (a < b ? a : b); }
inline $T ow_clamp($T x, $T lo, $T hi) { return ow_min(ow_max(x, lo), hi); }
inline $T ow_lerp($T s, $T e, $T w) {
    $T d = e - s;
    /* the product in its own statement: C contracts a * b + c into fma only within one expression */
    $T p = fabs(w) < ($T)0.5 ? w * d : d * (($T)1 - w);
    return fabs(w) < ($T)0.5 ? s + p : e - p;
}
inline $T ow_sinc($T x) {
    if (x == 0) return ($T)1;
    $T y = $PI * x;
    return sin(y) / y;
}
inline $T ow_entr($T x) {
    if (isnan(x)) return x;
    if (x > 0) return -x * log(x);
    return x == 0 ? ($T)0 : ($T)(-INFINITY);
}
inline $T ow_xlogy($T x, $T y) { return isnan(y) ? ($T)NAN : x == 0 ? ($T)0 : x * log(y); }
inline $T ow_xlog1py($T x, $T y) {
    return isnan(y) ? ($T)NAN : x == 0 ? ($T)0 : x * (fabs(y) < 1e-20f ? y : log1p(y));
}
inline $T ow_floor_divide($T a, $T b) {
    if (b == 0) return a / b;
    $T mod = fmod(a, b);
    $T div = (a - mod) / b;
    if (mod != 0 && (b < 0) != (mod < 0)) div -= ($T)1;
    if (div == 0) return copysign(($T)0, a / b);
    $T fl = floor(div);
    return div - fl > ($T)0.5 ? fl + ($T)1 : fl;
}
inline $T ow_logaddexp($T x, $T y) {
    if (x == y) return x + $LN2;
    $T d = x - y;
    if (d > 0) return x + log1p(exp(-d));
    if (d <= 0) return y + log1p(exp(d));
    return d;
}
inline $T ow_logaddexp2($T x, $T y) {
    if (x == y) return x + ($T)1;
    $T d = x - y;
    if (d > 0) return x + log1p(exp2(-d)) * $LOG2E;
    if (d <= 0) return y + log1p(exp2(d)) * $LOG2E;
    return d;
}
inline $T ow_logit_eps($T x, $T lo, $T hi) {
    $T c = x < lo ? lo : x;
    c = c > hi ? hi : c;
    return log(c / (($T)1 - c));
}
inline $T ow_round_decimals($T x, $T scale, $T sign) {
    return sign >= 0 ? rint(x * scale) / scale : rint(x / scale) * scale;
}
inline $T ow_nan_to_num($T x, $T nan_value, $T posinf, $T neginf) {
    if (isnan(x)) return nan_value;
    if (isinf(x)) return x > 0 ? posinf : neginf;
    return x;
}
"""
)

#: nextafter for bfloat16 values held in float: step the upper 16 bits (the bfloat16 pattern) by one.
_NEXTAFTER_BF16 = Template(
    """
inline float ow_nextafter_bf16(float x, float y) {
    if (isnan(x) || isnan(y)) return x + y;
    if (x == y) return y;
    uint sign = ${as_uint_y} & 0x80000000u;
    if (x == 0) return ${as_float_tiny};
    uint b = ${as_uint_x} >> 16;
    b = ((x < y) == (x > 0)) ? b + 1u : b - 1u;
    return ${as_float_b};
}
"""
)

_INT_HELPERS = """
inline ulong ow_mag(long x) { return x < 0 ? (ulong)0 - (ulong)x : (ulong)x; }
inline ulong ow_gcdu(ulong a, ulong b) {
    while (b != 0) { ulong t = a % b; a = b; b = t; }
    return a;
}
inline ulong ow_lcmu(ulong a, ulong b) {
    ulong g = ow_gcdu(a, b);
    return g == 0 ? (ulong)0 : a / g * b;
}
inline long ow_floor_divide_i(long a, long b) {
    long d = (b == 0 || b == -1) ? 1 : b;
    long q = a / d, r = a % d;
    q -= (r != 0 && (r < 0) != (d < 0)) ? 1 : 0;
    return b == 0 ? 0 : b == -1 ? (long)((ulong)0 - (ulong)a) : q;
}
inline long ow_trunc_divide_i(long a, long b) {
    long d = (b == 0 || b == -1) ? 1 : b;
    return b == 0 ? 0 : b == -1 ? (long)((ulong)0 - (ulong)a) : a / d;
}
inline long ow_clamp_i(long x, long lo, long hi) {
    long c = x < lo ? lo : x;
    return c > hi ? hi : c;
}
inline ulong ow_divide_u(ulong a, ulong b) { return b == 0 ? 0 : a / (b == 0 ? 1 : b); }
inline long ow_shift_left(long a, long b, int bits) { return (b >= 0 && b < bits) ? (long)((ulong)a << (b & 63)) : 0; }
inline long ow_shift_right_i(long a, long b, int bits) {
    return (b >= 0 && b < bits - 1) ? a >> (b & 63) : a >> (bits - 1);
}
inline ulong ow_shift_right_u(ulong a, long b, int bits) { return (b >= 0 && b < bits) ? a >> (b & 63) : 0; }
inline long ow_fmod_i(long a, long b) { return (b == 0 || b == -1) ? 0 : a % b; }
inline long ow_remainder_i(long a, long b) {
    long r = ow_fmod_i(a, b);
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}
inline ulong ow_mod_u(ulong a, ulong b) { return b == 0 ? 0 : a % (b == 0 ? 1 : b); }
inline ulong ow_pow_u(ulong a, ulong b) {
    ulong r = 1;
    for (; b != 0; b >>= 1, a *= a) if (b & 1) r *= a;
    return r;
}
inline long ow_pow_i(long a, long b) { return (long)ow_pow_u((ulong)a, (ulong)b); }
"""

_CONSTANTS = {"PI": "3.14159265358979323846", "LN2": "0.69314718055994530942", "LOG2E": "1.44269504088896340736"}


def helpers(dialect, dtype: str, floating: bool) -> str:
    """The ``ow_*`` helper functions of a program whose inputs have dtype ``dtype``."""
    if not floating:
        return _INT_HELPERS
    t = dialect.compute_type(dtype)
    suffix = "f" if t == "float" else ""
    constants = {name: f"(({t}){value}{suffix})" for name, value in _CONSTANTS.items()}
    src = _FLOAT_HELPERS.substitute(T=t, **constants)
    if dtype == "bfloat16":
        src += _NEXTAFTER_BF16.substitute(
            as_uint_x=dialect.bitcast("uint", "x"),
            as_uint_y=dialect.bitcast("uint", "y"),
            as_float_tiny=dialect.bitcast("float", "sign | 0x10000u"),
            as_float_b=dialect.bitcast("float", "b << 16"),
        )
    return src


def scalars_kernel(dialect, name: str, in_dtypes, out_dtype: str, expr: str) -> str:
    """``<name>_cs``: ``out[oo + g] = f(a0[ao0 + g], a1[ao1], ...)``: the first input contiguous, the others
    scalars read once per work item; ``per`` elements a work item, as :func:`.elementwise.contiguous_kernel`."""
    scalars = "".join(
        f"    {dialect.compute_type(d)} x{i} = {load(d, f'a{i}[ao{i}]')};\n" for i, d in enumerate(in_dtypes) if i
    )
    body = (
        f"    long g0 = {dialect.global_id(0)} * per;\n    if (g0 >= n) return;\n"
        f"    long e = min(n, g0 + per);\n{scalars}    for (long g = g0; g < e; ++g) {{\n"
        f"        {dialect.compute_type(in_dtypes[0])} x0 = {load(in_dtypes[0], 'a0[ao0 + g]')};\n"
        f"        out[oo + g] = {store(dialect, out_dtype, expr)};\n    }}"
    )
    params = [dialect.buffer(dialect.type_name(out_dtype), "out"), "long oo"]
    for i, d in enumerate(in_dtypes):
        params += [dialect.buffer(dialect.type_name(d), f"a{i}", const=True), f"long ao{i}"]
    return dialect.kernel(f"{name}{SCALARS}", params + ["long n", "long per"], body)


def program(dialect, ops: dict, in_dtypes, helper_source: str, contiguous: bool = False, scalars: bool = False):
    """The kernels of ``ops`` (name -> (out dtype, expression)), with ``helper_source`` before them.

    :func:`.elementwise.program`, except that ``contiguous`` with ``scalars`` gives one ``<op>_cs`` kernel
    per op, whose inputs after the first are scalars.
    """
    if not (contiguous and scalars):
        return ew_program(dialect, ops, in_dtypes, contiguous, helpers=helper_source)
    dtypes = set(in_dtypes) | {out for out, _ in ops.values()}
    parts = [header(dialect, sorted(dtypes)) + helper_source]
    parts += [scalars_kernel(dialect, name, in_dtypes, out, expr) for name, (out, expr) in sorted(ops.items())]
    return "\n".join(parts)
