"""The core's counter-based generator (Philox4x32-10, ``opweave._philox``) in a dialect's C.

Every work item computes the block its element's word(s) live in; block ``j``
uses the 128-bit counter ``offset + j`` (``c2`` is the carry out of the low 64
bits). FP contraction is off so that ``low + (high - low) * u`` rounds exactly as
the NumPy specification does.
"""

from __future__ import annotations

from .common import header, store

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
    return (uint4)(c0, c1, c2, c3);
}
inline uint ow_word(ulong offset, ulong w, uint k0, uint k1) {
    uint4 b = ow_philox(offset, w >> 2, k0, k1);
    uint lane = (uint)(w & 3);
    return lane == 0 ? b.x : lane == 1 ? b.y : lane == 2 ? b.z : b.w;
}
"""

_COMMON = ["ulong offset", "uint k0", "uint k1", "long n"]


def program(dialect, dtype: str) -> str:
    """``random_bits`` (int64 out), ``uniform`` and ``randint`` kernels writing ``dtype``."""
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
        gid + unit + f"    {t} r = ({t})(low + span * u);\n"
        f"    if (clamp && (double)r > limit) r = ({t})limit;\n    out[g] = r;",
    )
    randint = dialect.kernel(
        "randint",
        [dialect.buffer(t, "out"), "ulong range", "ulong low", "int full", *_COMMON],
        gid + "    ulong w = 2 * (ulong)g;\n"
        "    ulong v = (ulong)ow_word(offset, w, k0, k1) | ((ulong)ow_word(offset, w + 1, k0, k1) << 32);\n"
        "    if (!full) v = v % range;\n"
        f"    out[g] = {store(dialect, dtype, '(long)(v + low)')};",
    )
    return header(dialect, [dtype, "float64"]) + PHILOX + bits + uniform + randint
