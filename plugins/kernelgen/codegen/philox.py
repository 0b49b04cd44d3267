"""The core's counter-based generator (Philox4x32-10, ``opweave._philox``) in a dialect's C.

Every work item computes the block its element's word(s) live in; block ``j``
uses the 128-bit counter ``offset + j`` (``c2`` is the carry out of the low 64
bits). FP contraction is off so that ``low + (high - low) * u`` rounds exactly as
the NumPy specification does.

Values computed in double are rounded to the output dtype as NumPy's ``astype`` does
(bfloat16 through float, so twice). ``normal`` is Box-Muller in double with the
device's ``log``/``sin``/``cos``; ``randperm`` sorts (key, index) pairs with a
bitonic network over a power-of-two padding (keys ``ULONG_MAX``, indices past ``n``),
which is the stable argsort of the keys.
"""

from __future__ import annotations

from .common import header, load, store

PHILOX = """
#pragma OPENCL FP_CONTRACT OFF
inline uint4 ow_philox(ulong offset, ulong j, uint k0, uint k1) {
    ulong low = offset + j;
    uint c0 = (uint)low, c1 = (uint)(low >> 32), c2 = low < offset ? 1u : 0u, c3 = 0u;
    for (int r = 0; r < 10; ++r) {
        if (r) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
        uint hi0 = mul_hi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        uint hi1 = mul_hi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        uint n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
    }
    uint4 r;
    r.x = c0; r.y = c1; r.z = c2; r.w = c3;
    return r;
}
inline uint ow_word(ulong offset, ulong w, uint k0, uint k1) {
    uint4 b = ow_philox(offset, w >> 2, k0, k1);
    uint lane = (uint)(w & 3);
    return lane == 0 ? b.x : lane == 1 ? b.y : lane == 2 ? b.z : b.w;
}
"""

_COMMON = ["ulong offset", "uint k0", "uint k1", "long n"]

UNIT53 = "((double)({a} >> 5) * 67108864.0 + (double)({b} >> 6))"


def _unit(dtype: str) -> str:
    """Statements defining ``double u`` in [0, 1) for element ``g`` (53 bits for float64, else 24)."""
    if dtype == "float64":
        return (
            "    ulong w = 2 * (ulong)g;\n"
            f"    double u = {UNIT53.format(a='ow_word(offset, w, k0, k1)', b='ow_word(offset, w + 1, k0, k1)')}"
            " * 0x1p-53;\n"
        )
    return "    double u = (double)(ow_word(offset, (ulong)g, k0, k1) >> 8) * 0x1p-24;\n"


def _extra(dialect, dtype: str) -> str:
    """The ``normal``, ``bernoulli`` and ``randperm`` kernels writing ``dtype``."""
    t = dialect.type_name(dtype)
    gid = f"    long g = {dialect.global_id(0)};\n    if (g >= n) return;\n"
    normal = dialect.kernel(
        "normal",
        [dialect.buffer(t, "out"), "double mean", "double std", *_COMMON],
        gid + "    uint4 b = ow_philox(offset, (ulong)(g >> 1), k0, k1);\n"
        f"    double u1 = ({UNIT53.format(a='b.x', b='b.y')} + 1.0) * 0x1p-53;\n"
        f"    double u2 = {UNIT53.format(a='b.z', b='b.w')} * 0x1p-53;\n"
        "    double r = sqrt(-2.0 * log(u1));\n"
        "    double theta = 6.283185307179586 * u2;\n"
        "    double z = (g & 1) ? r * sin(theta) : r * cos(theta);\n"
        f"    out[g] = {store(dialect, dtype, 'mean + std * z')};",
    )
    bernoulli = dialect.kernel(
        "bernoulli",
        [
            dialect.buffer(t, "out"),
            dialect.buffer(t, "p", const=True),
            "long po",
            "dims_t pst",
            "dims_t shape",
            "int ndim",
            dialect.buffer("int", "err"),
            *_COMMON,
        ],
        gid + "    long r = g, pi = po;\n"
        "    for (int d = ndim - 1; d >= 0; --d) { pi += (r % shape.v[d]) * pst.v[d]; r /= shape.v[d]; }\n"
        f"    double pv = (double){load(dtype, 'p[pi]')};\n"
        "    if (!(pv >= 0.0 && pv <= 1.0)) err[0] = 1;\n"
        + _unit(dtype)
        + f"    out[g] = {store(dialect, dtype, '(u < pv) ? 1.0f : 0.0f')};",
    )
    keys = dialect.kernel(
        "perm_keys",
        [dialect.buffer("ulong", "key"), dialect.buffer("long", "idx"), *_COMMON, "long m"],
        f"    long g = {dialect.global_id(0)};\n    if (g >= m) return;\n"
        "    ulong w = 2 * (ulong)g;\n"
        "    key[g] = g < n ? ((ulong)ow_word(offset, w, k0, k1) | ((ulong)ow_word(offset, w + 1, k0, k1) << 32))"
        " : 0xffffffffffffffffUL;\n"
        "    idx[g] = g;",
    )
    step = dialect.kernel(
        "bitonic_step",
        [dialect.buffer("ulong", "key"), dialect.buffer("long", "idx"), "long j", "long k", "long m"],
        f"    long g = {dialect.global_id(0)};\n    if (g >= m) return;\n"
        "    long l = g ^ j;\n"
        "    if (l <= g) return;\n"
        "    ulong ka = key[g], kb = key[l];\n"
        "    long ia = idx[g], ib = idx[l];\n"
        "    int greater = ka > kb || (ka == kb && ia > ib);\n"
        "    if (((g & k) == 0) == greater) { key[g] = kb; key[l] = ka; idx[g] = ib; idx[l] = ia; }",
    )
    perm = dialect.kernel(
        "perm_store",
        [dialect.buffer(t, "out"), dialect.buffer("long", "idx", const=True), "long n"],
        gid + f"    out[g] = {store(dialect, dtype, 'idx[g]')};",
    )
    return normal + bernoulli + keys + step + perm


def program(dialect, dtype: str) -> str:
    """``random_bits`` (int64 out), ``uniform``, ``randint``, ``normal``, ``bernoulli`` and ``randperm`` kernels."""
    t = dialect.type_name(dtype)
    gid = f"    long g = {dialect.global_id(0)};\n    if (g >= n) return;\n"
    bits = dialect.kernel(
        "random_bits",
        [dialect.buffer("long", "out"), *_COMMON],
        gid + "    out[g] = (long)ow_word(offset, (ulong)g, k0, k1);",
    )
    if dtype == "float64":
        unit = (
            "    ulong w = 2 * (ulong)g;\n"
            "    double u = ((double)(ow_word(offset, w, k0, k1) >> 5) * 67108864.0"
            " + (double)(ow_word(offset, w + 1, k0, k1) >> 6)) * 0x1p-53;\n"
        )
    else:
        unit = "    double u = (double)(ow_word(offset, (ulong)g, k0, k1) >> 8) * 0x1p-24;\n"
    uniform = dialect.kernel(
        "uniform",
        [dialect.buffer(t, "out"), "double low", "double span", "double limit", "int clamp", *_COMMON],
        gid + unit + f"    {t} r = {store(dialect, dtype, 'low + span * u')};\n"
        f"    if (clamp && (double){load(dtype, 'r')} > limit) r = {store(dialect, dtype, 'limit')};\n"
        "    out[g] = r;",
    )
    randint = dialect.kernel(
        "randint",
        [dialect.buffer(t, "out"), "ulong range", "ulong low", "int full", *_COMMON],
        gid + "    ulong w = 2 * (ulong)g;\n"
        "    ulong v = (ulong)ow_word(offset, w, k0, k1) | ((ulong)ow_word(offset, w + 1, k0, k1) << 32);\n"
        "    if (!full) v = v % range;\n"
        f"    out[g] = {store(dialect, dtype, '(long)(v + low)')};",
    )
    return header(dialect, [dtype, "float64"]) + PHILOX + bits + uniform + randint + _extra(dialect, dtype)
