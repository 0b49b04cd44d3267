"""Scan kernels: cumsum, cumprod, cummax, cummin and logcumsumexp along one dim, one work item per row.

The host views a tensor as *rows*: the scanned dim (``n`` elements ``step`` apart)
and the other dims (their shape and strides in ``dims_t`` arguments). A work item
walks one row sequentially, which is exact (the same order as the CPU's
``ufunc.accumulate``) and keeps one kernel per program. The ops share it through
an ``op`` argument (:data:`OPCODES`). ``ROW_BASE`` (the storage index of a row's
first element in every operand) is shared with the sort templates.
"""

from __future__ import annotations

from .common import header, load, store

#: op -> the ``op`` argument of the ``scan`` kernel.
OPCODES = {"cumsum": 0, "cumprod": 1, "cummax": 2, "cummin": 3, "logcumsumexp": 4}

_FLOATS = {"bfloat16", "float32", "float64", "float16"}  # float16: dialects that compute it
_UNSIGNED = {"int32": "uint", "int64": "ulong"}


def row_base(names) -> str:
    """Statements: ``<name>i`` = storage index of row ``row``'s first element, for each operand prefix in ``names``.

    Each operand ``x`` has an offset ``xo`` and other-dim strides ``xst``; ``oshape``/``ondim`` are the other dims.
    """
    init = ", ".join(f"{x}i = {x}o" for x in names)
    steps = "\n".join(f"        {x}i += q * {x}st.v[d];" for x in names)
    return f"""    long {init}, rr = row;
    for (int d = ondim - 1; d >= 0; --d) {{
        long q = rr % oshape.v[d];
        rr /= oshape.v[d];
{steps}
    }}
"""


def _lae(ct: str) -> str:
    """``log(exp(x) + exp(y))`` as NumPy's ``logaddexp`` (equal arguments: ``x + log 2``; NaN propagates)."""
    return f"""
inline {ct} ow_logaddexp({ct} x, {ct} y) {{
    if (x == y) return x + ({ct})M_LN2;
    {ct} t = x - y;
    if (t > 0) return x + log1p(exp(-t));
    if (t <= 0) return y + log1p(exp(t));
    return t;
}}
"""


def program(dialect, in_dtype: str, out_dtype: str, wide: bool) -> str:
    """The ``scan`` kernel reading ``in_dtype`` and writing ``out_dtype``.

    cumsum/cumprod convert each element to ``out_dtype`` and accumulate in its compute type (integers wrap);
    cummax/cummin (``in == out``) also write int64 indices to ``outi``; logcumsumexp (floats) computes in double
    when ``wide``.
    """
    t_in, t_out = dialect.type_name(in_dtype), dialect.type_name(out_dtype)
    acc = dialect.compute_type(out_dtype)
    in_ct = dialect.compute_type(in_dtype)
    conv = f"({acc})({load(in_dtype, 'v')})"
    if out_dtype == "bfloat16" and in_dtype != "bfloat16":
        conv = f"ow_bf16_to_float(ow_float_to_bf16((float)({load(in_dtype, 'v')})))"
    elif out_dtype == "float16" and in_dtype != "float16":  # each element rounded to half first, as torch
        conv = "(float)" + dialect.cast(t_out, load(in_dtype, "v"))
    elif out_dtype == "bool":
        conv = f"({acc})({load(in_dtype, 'v')} != 0)"
    if out_dtype == "bool":
        add, mul = "s | x", "s & x"
    elif out_dtype in _UNSIGNED:
        u = _UNSIGNED[out_dtype]
        add, mul = f"({acc})(({u})s + ({u})x)", f"({acc})(({u})s * ({u})x)"
    else:
        add, mul = f"({acc})(s + x)", f"({acc})(s * x)"
    cases = [
        f"""        case 0: {{
            {acc} s = 0;
            for (long j = 0; j < n; ++j) {{
                {t_in} v = a[ai + j * astep];
                {acc} x = {conv};
                s = {add};
                out[outi + j * ostep] = {store(dialect, out_dtype, "s")};
            }}
            break;
        }}
        case 1: {{
            {acc} s = 1;
            for (long j = 0; j < n; ++j) {{
                {t_in} v = a[ai + j * astep];
                {acc} x = {conv};
                s = {mul};
                out[outi + j * ostep] = {store(dialect, out_dtype, "s")};
            }}
            break;
        }}"""
    ]
    isnan = "isnan(x) || " if in_dtype in _FLOATS else ""
    if in_dtype == out_dtype:
        for code, cmp in ((2, ">="), (3, "<=")):
            cases.append(f"""        case {code}: {{
            {t_in} best = 0;
            {in_ct} bx = 0;
            long bi = 0;
            for (long j = 0; j < n; ++j) {{
                {t_in} v = a[ai + j * astep];
                {in_ct} x = {load(in_dtype, "v")};
                if (j == 0 || {isnan}x {cmp} bx) {{ best = v; bx = x; bi = j; }}
                out[outi + j * ostep] = best;
                outi64[outi + j * ostep] = bi;
            }}
            break;
        }}""")
    helpers = ""
    if in_dtype == out_dtype and in_dtype in _FLOATS:
        wt = "double" if wide else in_ct
        helpers = _lae(wt)
        cases.append(f"""        case 4: {{
            {wt} s = 0;
            for (long j = 0; j < n; ++j) {{
                {t_in} v = a[ai + j * astep];
                {wt} x = ({wt})({load(in_dtype, "v")});
                s = j == 0 ? x : ({wt})(({in_ct})ow_logaddexp(s, x));
                out[outi + j * ostep] = {store(dialect, out_dtype, "s")};
            }}
            break;
        }}""")
    params = [
        dialect.buffer(t_out, "out"),
        dialect.buffer("long", "outi64"),
        "long outo",
        "dims_t outst",
        "long ostep",
        dialect.buffer(t_in, "a", const=True),
        "long ao",
        "dims_t ast",
        "long astep",
        "dims_t oshape",
        "int ondim",
        "long rows",
        "long n",
        "int op",
    ]
    body = f"""    long row = {dialect.global_id(0)};
    if (row >= rows) return;
{row_base(["out", "a"])}    switch (op) {{
{chr(10).join(cases)}
    }}"""
    dtypes = sorted({in_dtype, out_dtype} | ({"float64"} if wide and helpers else set()))
    return header(dialect, dtypes) + helpers + dialect.kernel("scan", params, body)
