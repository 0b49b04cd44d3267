"""Pooling kernels: one work item per output element, looping over its window.

Every call is seen as 3 spatial dims (1-d and 2-d calls get leading spatial dims
of size 1, kernel 1, stride 1) behind up to ``MAX_RANK`` coalesced batch dims.
The window of output ``o`` along a dim of size ``n`` starts at ``o * s - p`` and
holds ``k`` taps ``dl`` apart, or, adaptive, covers
``[floor(o n / out), ceil((o + 1) n / out))``; taps outside ``[0, n)`` are skipped.
All sizes travel in one by-value ``pool_args_t`` struct (see ``ARGS_FIELDS``).

``max_pool`` follows the CPU kernel: the first maximum wins, a NaN beats any
number and a later NaN beats an earlier one; a window without any input element
gives the lowest value and the first tap moved into the input by whole
dilations. ``avg_pool`` divides the window sum by ``divisor`` if nonzero, else by
the window clipped to ``[-p, n + p)`` (``cip``) or by the count of input elements;
an empty window gives 0.
"""

from __future__ import annotations

from .common import MAX_RANK, header, load, store
from .reduction import LIMITS

#: The fields of ``pool_args_t``, all longs, in order: (name, count).
ARGS_FIELDS = (
    ("in", 3), ("out", 3), ("k", 3), ("s", 3), ("p", 3), ("dl", 3), ("ist", 3),
    ("bshape", MAX_RANK), ("bst", MAX_RANK),
    ("xo", 1), ("nb", 1), ("cip", 1), ("divisor", 1), ("adaptive", 1), ("n", 1),
)  # fmt: skip

_STRUCT = (
    "typedef struct {\n"
    + "".join(f"    long {name}[{count}];\n" if count > 1 else f"    long {name};\n" for name, count in ARGS_FIELDS)
    + "} pool_args_t;\n"
)

# Output coordinates ``o[3]``, the batch part of the input offset ``base``, window starts/lengths/steps.
_PROLOGUE = """    long g = {gid};
    if (g >= a.n) return;
    long o[3], st[3], len[3], stp[3];
    long r = g;
    for (int d = 2; d >= 0; --d) {{ o[d] = r % a.out[d]; r /= a.out[d]; }}
    long base = a.xo;
    for (int d = (int)a.nb - 1; d >= 0; --d) {{ base += (r % a.bshape[d]) * a.bst[d]; r /= a.bshape[d]; }}
    for (int d = 0; d < 3; ++d) {{
        if (a.adaptive) {{
            st[d] = (o[d] * a.in[d]) / a.out[d];
            len[d] = ((o[d] + 1) * a.in[d] + a.out[d] - 1) / a.out[d] - st[d];
            stp[d] = 1;
        }} else {{
            st[d] = o[d] * a.s[d] - a.p[d];
            len[d] = a.k[d];
            stp[d] = a.dl[d];
        }}
    }}
"""

_LOOP = """    for (long i0 = 0; i0 < len[0]; ++i0) {
        long c0 = st[0] + i0 * stp[0];
        if (c0 < 0 || c0 >= a.in[0]) continue;
        for (long i1 = 0; i1 < len[1]; ++i1) {
            long c1 = st[1] + i1 * stp[1];
            if (c1 < 0 || c1 >= a.in[1]) continue;
            for (long i2 = 0; i2 < len[2]; ++i2) {
                long c2 = st[2] + i2 * stp[2];
                if (c2 < 0 || c2 >= a.in[2]) continue;
                long at = base + c0 * a.ist[0] + c1 * a.ist[1] + c2 * a.ist[2];
"""

_LOOP_END = "            }\n        }\n    }\n"


def program(dialect, dtype: str) -> str:
    """``max_pool`` (values and int64 flat indices) for ``dtype``, and ``avg_pool`` when it is floating."""
    t, ct = dialect.type_name(dtype), dialect.compute_type(dtype)
    floating = dtype in ("bfloat16", "float16", "float32", "float64")
    prologue = _PROLOGUE.format(gid=dialect.global_id(0))
    nan_test = "isnan(v)" if floating else "0"
    max_body = (
        prologue
        + f"    {ct} best = {LIMITS[dtype][0]};\n    long bi = -1;\n    int seen_nan = 0;\n"
        + _LOOP
        + f"""                {ct} v = {load(dtype, "x[at]")};
                long flat = (c0 * a.in[1] + c1) * a.in[2] + c2;
                if ({nan_test}) {{ best = v; bi = flat; seen_nan = 1; }}
                else if (!seen_nan && (bi < 0 || v > best)) {{ best = v; bi = flat; }}
"""
        + _LOOP_END
        + """    if (bi < 0) {
        long f[3];
        for (int d = 0; d < 3; ++d) {
            f[d] = st[d];
            if (f[d] < 0) f[d] += (-f[d] + stp[d] - 1) / stp[d] * stp[d];
        }
        bi = (f[0] * a.in[1] + f[1]) * a.in[2] + f[2];
    }
"""
        + f"    out[g] = {store(dialect, dtype, 'best')};\n    idx[g] = bi;"
    )
    params = [dialect.buffer(t, "out"), dialect.buffer(t, "x", const=True)]
    src = dialect.kernel("max_pool", [*params[:1], dialect.buffer("long", "idx"), params[1], "pool_args_t a"], max_body)
    if floating:
        avg_body = (
            prologue
            + f"    {ct} sum = 0;\n    long count = 0;\n"
            + _LOOP
            + f"                sum += {load(dtype, 'x[at]')};\n                ++count;\n"
            + _LOOP_END
            + f"""    {ct} div;
    if (a.divisor) div = ({ct})a.divisor;
    else if (a.cip) {{
        long c = 1;
        for (int d = 0; d < 3; ++d) c *= min(st[d] + a.k[d], a.in[d] + a.p[d]) - st[d];
        div = ({ct})c;
    }} else div = ({ct})count;
    out[g] = {store(dialect, dtype, "count ? sum / div : 0")};"""
        )
        src += dialect.kernel("avg_pool", [*params, "pool_args_t a"], avg_body)
    return header(dialect, [dtype]) + _STRUCT + src
