"""Direct convolution: one work item per output element, looping over its receptive field.

Every call is seen as 3 spatial dims (1-d and 2-d calls get leading spatial dims
of size 1, kernel 1, stride 1). Input, weight and bias are read through their
strides and offsets; the output is contiguous ``(N, C_out, *O)``. All sizes
travel in one by-value ``conv_args_t`` struct (see ``ARGS_FIELDS``).

Forward: ``out[n, co, o] = bias[co] + sum_{ci, k} x[n, g cpg + ci, o s - p + k dl] w[co, ci, k]``
with ``g = co / (C_out / groups)`` and ``cpg = C_in / groups``. Transposed (weight
``(C_in, C_out / groups, *k)``): input position ``i`` feeds output ``i s - p + k dl``,
so output ``o`` sums the taps with ``(o + p - k dl) % s == 0`` and the quotient in range.
Sums run in the compute type (float for bfloat16; complex as float2/double2 pairs), in (channel, tap)
order.
"""

from __future__ import annotations

from .common import header, load, store

#: The fields of ``conv_args_t``, all longs, in order: (name, count).
ARGS_FIELDS = (
    ("in", 3), ("out", 3), ("k", 3), ("s", 3), ("p", 3), ("dl", 3),
    ("xst", 5), ("wst", 5),
    ("xo", 1), ("wo", 1), ("bo", 1), ("bst", 1),
    ("batch", 1), ("cin", 1), ("cout", 1), ("groups", 1), ("has_bias", 1), ("transposed", 1), ("n", 1),
)  # fmt: skip

_STRUCT = (
    "typedef struct {\n"
    + "".join(f"    long {name}[{count}];\n" if count > 1 else f"    long {name};\n" for name, count in ARGS_FIELDS)
    + "} conv_args_t;\n"
)

_BODY = """    long g = {gid};
    if (g >= a.n) return;
    long o[3], r = g;
    for (int d = 2; d >= 0; --d) {{ o[d] = r % a.out[d]; r /= a.out[d]; }}
    long co = r % a.cout, b = r / a.cout;
    long cpg = a.cin / a.groups, opg = a.cout / a.groups, grp = co / opg;
    {ct} acc = {zero};
    for (long ci = 0; ci < cpg; ++ci) {{
        long c = grp * cpg + ci;
        long xb = a.xo + b * a.xst[0] + c * a.xst[1];
        long wb = a.transposed ? a.wo + c * a.wst[0] + (co - grp * opg) * a.wst[1]
                               : a.wo + co * a.wst[0] + ci * a.wst[1];
        for (long k0 = 0; k0 < a.k[0]; ++k0) {{
            long i0 = IN_POS(0, k0);
            if (i0 < 0) continue;
            for (long k1 = 0; k1 < a.k[1]; ++k1) {{
                long i1 = IN_POS(1, k1);
                if (i1 < 0) continue;
                for (long k2 = 0; k2 < a.k[2]; ++k2) {{
                    long i2 = IN_POS(2, k2);
                    if (i2 < 0) continue;
                    {ct} xv = {xv};
                    {ct} wv = {wv};
                    acc = {add_mul};
                }}
            }}
        }}
    }}
    if (a.has_bias) acc = {add_bias};
    out[g] = {out};"""

# The input position tap ``k`` of output ``o[d]`` reads, or -1 when it is outside the input (or, transposed,
# when no input position maps there).
_IN_POS = """
inline long ow_in_pos(long o, long k, long s, long p, long dl, long n, long transposed) {
    long i;
    if (transposed) {
        long t = o + p - k * dl;
        if (t < 0 || t % s) return -1;
        i = t / s;
    } else {
        i = o * s - p + k * dl;
    }
    return (i >= 0 && i < n) ? i : -1;
}
#define IN_POS(d, k) ow_in_pos(o[d], k, a.s[d], a.p[d], a.dl[d], a.in[d], a.transposed)
"""

# Complex arithmetic through component stores, so that a dialect without vector arithmetic on pairs (C) reads it.
_CMUL = (
    "inline {t} ow_cmul({t} a, {t} b) {{\n"
    "    {t} r; r.x = a.x * b.x - a.y * b.y; r.y = a.x * b.y + a.y * b.x; return r; }}\n"
    "inline {t} ow_cadd({t} a, {t} b) {{ {t} r; r.x = a.x + b.x; r.y = a.y + b.y; return r; }}\n"
    "inline {t} ow_czero(void) {{ {t} r; r.x = 0; r.y = 0; return r; }}\n"
)


def program(dialect, dtype: str) -> str:
    """The ``conv`` kernel for ``dtype`` (accumulating in its compute type)."""
    t, ct = dialect.type_name(dtype), dialect.compute_type(dtype)
    cplx = dtype.startswith("complex")
    bv = load(dtype, "bias[a.bo + co * a.bst]")
    body = _BODY.format(
        gid=dialect.global_id(0),
        ct=ct,
        xv=load(dtype, "x[xb + i0 * a.xst[2] + i1 * a.xst[3] + i2 * a.xst[4]]"),
        wv=load(dtype, "w[wb + k0 * a.wst[2] + k1 * a.wst[3] + k2 * a.wst[4]]"),
        out=store(dialect, dtype, "acc"),
        zero="ow_czero()" if cplx else "0",
        add_mul="ow_cadd(acc, ow_cmul(xv, wv))" if cplx else "acc + xv * wv",
        add_bias=f"ow_cadd(acc, {bv})" if cplx else f"acc + {bv}",
    )
    params = [
        dialect.buffer(t, "out"),
        dialect.buffer(t, "x", const=True),
        dialect.buffer(t, "w", const=True),
        dialect.buffer(t, "bias", const=True),
        "conv_args_t a",
    ]
    helpers = _CMUL.format(t=ct) if dtype.startswith("complex") else ""
    return header(dialect, [dtype]) + _STRUCT + _IN_POS + helpers + dialect.kernel("conv", params, body)


_IM2COL = """    long g = {gid};
    if (g >= rows) return;
    long o[3], r = g;
    for (int d = 2; d >= 0; --d) {{ o[d] = r % a.out[d]; r /= a.out[d]; }}
    {g_}{t}* dst = cols + g * a.cin * a.k[0] * a.k[1] * a.k[2];
    for (long c = 0; c < a.cin; ++c) {{
        long xb = a.xo + r * a.xst[0] + c * a.xst[1];
        for (long k0 = 0; k0 < a.k[0]; ++k0) {{
            long i0 = IN_POS(0, k0);
            for (long k1 = 0; k1 < a.k[1]; ++k1) {{
                long i1 = IN_POS(1, k1);
                for (long k2 = 0; k2 < a.k[2]; ++k2) {{
                    long i2 = IN_POS(2, k2);
                    long at = xb + i0 * a.xst[2] + i1 * a.xst[3] + i2 * a.xst[4];
                    *dst++ = (i0 < 0 || i1 < 0 || i2 < 0) ? ({t})0 : x[at];
                }}
            }}
        }}
    }}"""


def im2col_program(dialect, dtype: str) -> str:
    """``im2col``: row ``(n, o)`` of the column matrix holds the input values tap ``(c, k)`` of output ``o`` reads.

    With it a forward, ungrouped convolution is one matrix product, ``cols @ weight.T`` (``kernels.conv``).
    """
    t = dialect.type_name(dtype)
    body = _IM2COL.format(gid=dialect.global_id(0), t=t, g_=dialect.global_prefix)
    params = [dialect.buffer(t, "cols"), dialect.buffer(t, "x", const=True), "conv_args_t a", "long rows"]
    return header(dialect, [dtype]) + _STRUCT + _IN_POS + dialect.kernel("im2col", params, body)
