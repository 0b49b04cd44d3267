"""Reduction kernels: a work-group tree reduction in local memory, over any set of dims.

The host splits the input's dims into *kept* dims (one output element each)
and *reduced* dims (``R`` elements per output). Work group ``g`` handles output
element ``g / chunks`` and the ``g % chunks``-th slice of its ``R`` elements:
each work item accumulates a strided share of the slice, then the group combines
the ``LOCAL`` partial values in local memory. With ``chunks > 1`` the groups write
partial results (in the accumulator dtype) and a second launch of the same
template reduces them; that keeps every core busy when there are few outputs.
"""

from __future__ import annotations

from .common import header, load, store

#: op -> (combine expression over ``a, b``, identity, per-element map over ``x``); ``{min}``/``{max}`` are limits.
COMBINE = {
    "sum": ("a + b", "0", "x"),
    "prod": ("a * b", "1", "x"),
    "amax": ("ow_max(a, b)", "{min}", "x"),
    "amin": ("ow_min(a, b)", "{max}", "x"),
    "any": ("a | b", "0", "(x != 0)"),
    "all": ("a & b", "1", "(x != 0)"),
    "xor_sum": ("a ^ b", "0", "x"),
}

LIMITS = {
    "bool": ("0", "1"),
    "uint8": ("0", "UCHAR_MAX"),
    "int8": ("CHAR_MIN", "CHAR_MAX"),
    "int16": ("SHRT_MIN", "SHRT_MAX"),
    "int32": ("INT_MIN", "INT_MAX"),
    "int64": ("LONG_MIN", "LONG_MAX"),
    "float32": ("-INFINITY", "INFINITY"),
    "float64": ("-INFINITY", "INFINITY"),
    "bfloat16": ("-INFINITY", "INFINITY"),
    "float16": ("-INFINITY", "INFINITY"),
}

_FLOAT_MINMAX = """
inline {t} ow_max({t} a, {t} b) {{ return (isnan(a) || isnan(b)) ? a + b : fmax(a, b); }}
inline {t} ow_min({t} a, {t} b) {{ return (isnan(a) || isnan(b)) ? a + b : fmin(a, b); }}
"""
_INT_MINMAX = """
inline {t} ow_max({t} a, {t} b) {{ return a > b ? a : b; }}
inline {t} ow_min({t} a, {t} b) {{ return a < b ? a : b; }}
"""

_UNSIGNED = {"int32": "uint", "int64": "ulong"}


def reduction_kernel(
    dialect, name: str, op: str, in_dtype: str, acc_dtype: str, out_dtype: str, local: int, blocked: bool = False
) -> str:
    """One reduction kernel: ``in_dtype`` elements, accumulated in ``acc_dtype``, stored as ``out_dtype``.

    ``blocked``: over one reduced dim, each work item takes a contiguous block with eight independent
    accumulators (the fast form on CPU devices, where a work item is a loop iteration); otherwise work items
    interleave (consecutive items read consecutive elements: the fast form on GPUs).
    """
    combine, ident, fmap = COMBINE[op]
    acc = dialect.compute_type(acc_dtype)
    if acc_dtype in _UNSIGNED and op in ("sum", "prod"):
        u = _UNSIGNED[acc_dtype]
        combine = f"({acc})(({u})a {combine[2]} ({u})b)"
    lo, hi = LIMITS.get(acc_dtype, ("0", "0"))
    ident = ident.format(min=lo, max=hi)
    if fmap == "x":
        fmap = "(long)(x)" if in_dtype in _FLOATS and acc_dtype in _INTS else "x"
    in_ct, storage = dialect.compute_type(in_dtype), dialect.type_name(in_dtype)
    helpers = (
        f"inline {acc} {name}_combine({acc} a, {acc} b) {{ return ({acc})({combine}); }}\n"
        f"inline {acc} {name}_map({storage} v) {{ {in_ct} x = {load(in_dtype, 'v')}; return ({acc})({fmap}); }}\n"
    )
    params = [
        dialect.buffer(dialect.type_name(out_dtype), "out"),
        "long oo",
        "dims_t ost",
        "dims_t oshape",
        "int ondim",
        dialect.buffer(storage, "a", const=True),
        "long ao",
        "dims_t akst",
        "dims_t rshape",
        "dims_t rst",
        "int rndim",
        "long R",
        "long chunk",
        "int chunks",
        "long cst",
    ]
    c, m = f"{name}_combine", f"{name}_map"
    if blocked:
        lanes = ", ".join(f"c{i} = acc" for i in range(1, 8))
        steps = " ".join(f"c{i} = {c}(c{i}, {m}(a[ai + (j + {i}) * st]));" for i in range(1, 8))
        one_dim = f"""        long per = (hi - lo + {local - 1}) / {local};
        long j = lo + lid * per, e = min(hi, j + per);
        {acc} {lanes};
        for (; j + 8 <= e; j += 8) {{
            acc = {c}(acc, {m}(a[ai + j * st])); {steps}
        }}
        for (; j < e; ++j) acc = {c}(acc, {m}(a[ai + j * st]));
        acc = {c}({c}({c}(acc, c1), {c}(c2, c3)), {c}({c}(c4, c5), {c}(c6, c7)));"""
    else:
        one_dim = f"""        for (long j = lo + lid; j < hi; j += {local}) acc = {c}(acc, {m}(a[ai + j * st]));"""
    body = f"""    {dialect.local_array(acc, "scratch", local)}
    long grp = {dialect.group_id(0)};
    int lid = (int){dialect.local_id(0)};
    long o = grp / chunks;
    long c = grp % chunks;
    long oi = oo, ai = ao, t = o;
    for (int d = ondim - 1; d >= 0; --d) {{
        long q = t % oshape.v[d];
        t /= oshape.v[d];
        oi += q * ost.v[d];
        ai += q * akst.v[d];
    }}
    oi += c * cst;
    {acc} acc = ({acc})({ident});
    long lo = c * chunk;
    long hi = min(R, lo + chunk);
    if (rndim == 1) {{  // one reduced dim (the host merges contiguous ones): no index arithmetic
        long st = rst.v[0];
{one_dim}
    }} else {{
        for (long j = lo + lid; j < hi; j += {local}) {{
            long idx = ai, s = j;
            for (int d = rndim - 1; d >= 0; --d) {{
                long q = s % rshape.v[d];
                s /= rshape.v[d];
                idx += q * rst.v[d];
            }}
            acc = {c}(acc, {m}(a[idx]));
        }}
    }}
{_finish(dialect, c, acc, ident, local, store(dialect, out_dtype, "scratch[0]"), store(dialect, out_dtype, "acc"))}"""
    return helpers + dialect.kernel(name, params, body)


def _finish(dialect, c: str, acc: str, ident: str, local: int, store_tree: str, store_acc: str) -> str:
    """Statements: combine the work group's ``acc`` values and let work item 0 store the result.

    A shared-memory tree, or, where the dialect finishes reductions in subgroups (``reduction_shuffle_width``)
    and ``local`` is a multiple of it, shuffles within each subgroup, then one subgroup over their results.
    """
    width = dialect.reduction_shuffle_width
    if not width or local % width or local < width:
        return f"""    scratch[lid] = acc;
    {dialect.barrier()}
    for (int s = {local // 2}; s > 0; s >>= 1) {{
        if (lid < s) scratch[lid] = {c}(scratch[lid], scratch[lid + s]);
        {dialect.barrier()}
    }}
    if (lid == 0) out[oi] = {store_tree};"""
    lane = dialect.subgroup_shuffle_down("acc", "s")
    shuffle = f"for (int s = {width // 2}; s > 0; s >>= 1) acc = {c}(acc, ({acc}){lane});"
    return f"""    {shuffle}
    if (lid % {width} == 0) scratch[lid / {width}] = acc;
    {dialect.barrier()}
    if (lid < {width}) {{
        acc = lid < {local // width} ? scratch[lid] : ({acc})({ident});
        {shuffle}
        if (lid == 0) out[oi] = {store_acc};
    }}"""


_FLOATS = {"bfloat16", "float32", "float64"}
_INTS = {"uint8", "int8", "int16", "int32", "int64"}


def program(dialect, in_dtype: str, acc_dtype: str, out_dtype: str, local: int, blocked: bool = False) -> str:
    """Every reduction op for one (input, accumulator, output) dtype triple, in one program.

    Per op: ``<op>_main`` (input -> out), ``<op>_first`` (input -> partials) and ``<op>_part``
    (partials -> out). Grouping the ops keeps cold-cache builds few: ``sum`` and ``amax`` of a
    float32 tensor share one build.
    """
    acc = dialect.compute_type(acc_dtype)
    helpers = (_FLOAT_MINMAX if acc_dtype in _FLOATS else _INT_MINMAX).format(t=acc)
    acc_store = "float32" if acc_dtype == "bfloat16" else acc_dtype  # partials keep full accumulator precision
    parts = [header(dialect, sorted({in_dtype, acc_dtype, out_dtype})), helpers]
    for op in COMBINE:
        if op == "xor_sum" and (acc_dtype in _FLOATS or in_dtype in _FLOATS):
            continue
        if op in ("any", "all") and acc_dtype != "bool":
            continue
        for suffix, src, dst in (
            ("main", in_dtype, out_dtype),
            ("first", in_dtype, acc_store),
            ("part", acc_store, out_dtype),
        ):
            parts.append(reduction_kernel(dialect, f"{op}_{suffix}", op, src, acc_dtype, dst, local, blocked))
    return "".join(parts)
