"""The reductions that are not a fold of one value: ``var`` (two passes) and ``argmax``/``argmin`` (value, index).

The launch is ``codegen.reduction``'s: one work group per output element, the
host splitting the input into kept dims (``oshape``, strides ``akst``) and reduced
dims (``rshape``, strides ``rst``, ``R`` elements per output, enumerated in
row-major order). Each work item folds a strided share of the ``R`` elements, the
group combines the shares in local memory.
"""

from __future__ import annotations

from .common import header, load, store

_FLOATS = {"bfloat16", "float32", "float64", "float16"}  # float16: dialects that compute it

_PARAMS = [
    "long oo",
    "dims_t ost",
    "dims_t oshape",
    "int ondim",
    "long ao",
    "dims_t akst",
    "dims_t rshape",
    "dims_t rst",
    "int rndim",
    "long R",
]

_PROLOGUE = """    int lid = (int){lid};
    long oi = oo, ai = ao, t = {gid};
    for (int d = ondim - 1; d >= 0; --d) {{
        long q = t % oshape.v[d];
        t /= oshape.v[d];
        oi += q * ost.v[d];
        ai += q * akst.v[d];
    }}
"""

#: Statements: ``idx`` = the storage index of reduced element ``j`` of this output.
_INDEX = """        long idx = ai, s = j;
        for (int d = rndim - 1; d >= 0; --d) {
            long q = s % rshape.v[d];
            s /= rshape.v[d];
            idx += q * rst.v[d];
        }
"""


def _params(dialect, out_type: str, in_type: str, extra=()) -> list:
    return [dialect.buffer(out_type, "out"), dialect.buffer(in_type, "a", const=True), *_PARAMS, *extra]


def arg_program(dialect, dtype: str, local: int) -> str:
    """``argext``: the index of the first largest (``op`` 0) or smallest (``op`` 1) element; NaN beats all."""
    ct = dialect.compute_type(dtype)
    nan = (
        """    int na = isnan(xa), nb = isnan(xb);
    if (na || nb) return na && nb ? ia < ib : na;
"""
        if dtype in _FLOATS
        else ""
    )
    helper = f"""
inline int ow_beats({ct} xa, long ia, {ct} xb, long ib, int op) {{
    if (ib < 0) return ia >= 0;
    if (ia < 0) return 0;
{nan}    if (xa != xb) return op == 0 ? xa > xb : xa < xb;
    return ia < ib;
}}
"""
    body = (
        _PROLOGUE.format(lid=dialect.local_id(0), gid=dialect.group_id(0))
        + f"""    {dialect.local_array(ct, "sx", local)}
    {dialect.local_array("long", "si", local)}
    {ct} bx = 0;
    long bi = -1;
    for (long j = lid; j < R; j += {local}) {{
{_INDEX}        {dialect.type_name(dtype)} v = a[idx];
        {ct} x = {load(dtype, "v")};
        if (ow_beats(x, j, bx, bi, op)) {{ bx = x; bi = j; }}
    }}
    sx[lid] = bx;
    si[lid] = bi;
    {dialect.barrier()}
    for (int h = {local // 2}; h > 0; h >>= 1) {{
        if (lid < h && ow_beats(sx[lid + h], si[lid + h], sx[lid], si[lid], op)) {{
            sx[lid] = sx[lid + h];
            si[lid] = si[lid + h];
        }}
        {dialect.barrier()}
    }}
    if (lid == 0) out[oi] = si[0];"""
    )
    kern = dialect.kernel("argext", _params(dialect, "long", dialect.type_name(dtype), ["int op"]), body)
    return header(dialect, [dtype]) + helper + kern


def var_program(dialect, in_dtype: str, out_dtype: str, wide: bool, local: int) -> str:
    """``var``: ``sum((x - mean)^2) / max(R - correction, 0)``, accumulated in double when ``wide``."""
    acc = "double" if wide else "float"
    in_t = dialect.type_name(in_dtype)

    def fold(expr: str) -> str:
        return f"""    acc = 0;
    for (long j = lid; j < R; j += {local}) {{
{_INDEX}        {in_t} v = a[idx];
        {acc} x = ({acc})({load(in_dtype, "v")});
        acc += {expr};
    }}
    sx[lid] = acc;
    {dialect.barrier()}
    for (int h = {local // 2}; h > 0; h >>= 1) {{
        if (lid < h) sx[lid] += sx[lid + h];
        {dialect.barrier()}
    }}
"""

    body = (
        _PROLOGUE.format(lid=dialect.local_id(0), gid=dialect.group_id(0))
        + f"""    {dialect.local_array(acc, "sx", local)}
    {acc} acc;
{fold("x")}    {acc} mean = sx[0] / ({acc})R;
    {dialect.barrier()}
{fold("(x - mean) * (x - mean)")}    if (lid == 0) {{
        {acc} r = sx[0] / fmax(({acc})R - ({acc})correction, ({acc})0);
        out[oi] = {store(dialect, out_dtype, "r")};
    }}"""
    )
    params = _params(dialect, dialect.type_name(out_dtype), in_t, ["double correction" if wide else "float correction"])
    dtypes = sorted({in_dtype, out_dtype} | ({"float64"} if wide else set()))
    return header(dialect, dtypes) + dialect.kernel("var", params, body)
