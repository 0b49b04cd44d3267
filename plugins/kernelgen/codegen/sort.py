"""Sorting kernels: a bitonic sort of (key, index) pairs, and what is built on sorted rows.

Every row (the sorted dim of a tensor; the other dims enumerate rows) is padded to
``P``, a power of two, in a scratch buffer of keys (compute type) and int64
indices; padding has index -1 and sorts last. The order compares keys (NaN
largest, -0.0 equal to 0.0) and breaks ties by index, so it is a total order and
the bitonic network's result equals a stable sort, as the CPU kernel's:

* ``sort_load``: the strided input -> scratch pairs;
* ``sort_block``: each work group sorts/merges a block of ``2 * local`` pairs in local memory
  (every stage up to ``k_end``, or the ``j < 2 * local`` steps of one stage);
* ``sort_step``: one global compare-exchange step ``(k, j)`` of the stages longer than a block;
* ``sort_store``: ``count`` sorted positions from ``first`` per row -> values (raw copies of the
  input elements) and indices (sort, topk, kthvalue);
* ``mode_rows``: the longest run of equal keys per sorted row;
* ``uniq_flags``, ``uniq_write``, ``uniq_counts``: ``unique`` of one sorted (or unsorted, for
  ``unique_consecutive``) row, with the group numbers an inclusive scan of the flags gives;
* ``searchsorted``: torch's binary search, one work item per value.
"""

from __future__ import annotations

from .common import header, load
from .scan import row_base

_FLOATS = {"bfloat16", "float32", "float64", "float16"}  # float16: dialects that compute it


def _after(kt: str, floating: bool) -> str:
    nan = (
        """    int na = isnan(ka), nb = isnan(kb);
    if (na != nb) return desc ? nb : na;
    if (!na && ka != kb) return desc ? ka < kb : ka > kb;
"""
        if floating
        else """    if (ka != kb) return desc ? ka < kb : ka > kb;
"""
    )
    return f"""
inline int ow_after({kt} ka, long ia, {kt} kb, long ib, int desc) {{
    if (ia < 0) return ib >= 0;
    if (ib < 0) return 0;
{nan}    return ia > ib;
}}
"""


def _exchange(arr_k: str, arr_i: str, i: str, l: str, pos: str) -> str:
    """Statements: order the pairs at ``i`` < ``l`` of a bitonic stage ``k`` (``pos``: global position of ``i``)."""
    return f"""        int asc = ((({pos}) & (P - 1)) & k) == 0;
        KT ki = {arr_k}[{i}], kl = {arr_k}[{l}];
        long ii = {arr_i}[{i}], il = {arr_i}[{l}];
        if (asc ? ow_after(ki, ii, kl, il, desc) : ow_after(kl, il, ki, ii, desc)) {{
            {arr_k}[{i}] = kl; {arr_k}[{l}] = ki;
            {arr_i}[{i}] = il; {arr_i}[{l}] = ii;
        }}
"""


def program(dialect, dtype: str, local: int) -> str:
    """Every sorting kernel for elements of ``dtype`` (blocks of ``2 * local`` pairs)."""
    t, kt = dialect.type_name(dtype), dialect.compute_type(dtype)
    block = 2 * local
    gid = dialect.global_id(0)
    ks = [
        dialect.kernel(
            "sort_load",
            [
                dialect.buffer(kt, "keys"),
                dialect.buffer("long", "idxs"),
                dialect.buffer(t, "a", const=True),
                "long ao",
                "dims_t ast",
                "long astep",
                "dims_t oshape",
                "int ondim",
                "long rows",
                "long n",
                "long P",
                "long total",
            ],
            f"""    long g = {gid};
    if (g >= total) return;
    long row = g / P, j = g % P;
    if (row < rows && j < n) {{
{row_base(["a"])}        {t} v = a[ai + j * astep];
        keys[g] = {load(dtype, "v")};
        idxs[g] = j;
    }} else {{
        keys[g] = 0;
        idxs[g] = -1;
    }}""",
        ),
        dialect.kernel(
            "sort_block",
            [
                dialect.buffer(kt, "keys"),
                dialect.buffer("long", "idxs"),
                "long P",
                "long k_start",
                "long k_end",
                "int desc",
            ],
            f"""    {dialect.local_array(kt, "sk", block)}
    {dialect.local_array("long", "si", block)}
    int lid = (int){dialect.local_id(0)};
    long base = {dialect.group_id(0)} * {block};
    sk[lid] = keys[base + lid];
    sk[lid + {local}] = keys[base + lid + {local}];
    si[lid] = idxs[base + lid];
    si[lid + {local}] = idxs[base + lid + {local}];
    {dialect.barrier()}
    for (long k = k_start; k <= k_end; k <<= 1) {{
        for (int j = (int)min(k >> 1, (long){local}); j > 0; j >>= 1) {{
            int i = 2 * j * (lid / j) + lid % j, l = i + j;
{_exchange("sk", "si", "i", "l", "base + i")}            {dialect.barrier()}
        }}
    }}
    keys[base + lid] = sk[lid];
    keys[base + lid + {local}] = sk[lid + {local}];
    idxs[base + lid] = si[lid];
    idxs[base + lid + {local}] = si[lid + {local}];""",
        ),
        dialect.kernel(
            "sort_step",
            [
                dialect.buffer(kt, "keys"),
                dialect.buffer("long", "idxs"),
                "long P",
                "long k",
                "long j",
                "int desc",
                "long pairs",
            ],
            f"""    long g = {gid};
    if (g >= pairs) return;
    long i = 2 * j * (g / j) + g % j, l = i + j;
{_exchange("keys", "idxs", "i", "l", "i")}""",
        ),
        dialect.kernel(
            "sort_store",
            [
                dialect.buffer(t, "out"),
                dialect.buffer("long", "outi64"),
                "long outo",
                "dims_t outst",
                "long ostep",
                dialect.buffer(t, "a", const=True),
                "long ao",
                "dims_t ast",
                "long astep",
                "dims_t oshape",
                "int ondim",
                dialect.buffer("long", "idxs", const=True),
                "long P",
                "long count",
                "long first",
                "long total",
            ],
            f"""    long g = {gid};
    if (g >= total) return;
    long row = g / count, t = g % count;
{row_base(["out", "a"])}    long src = idxs[row * P + first + t];
    out[outi + t * ostep] = a[ai + src * astep];
    outi64[outi + t * ostep] = src;""",
        ),
        dialect.kernel(
            "mode_rows",
            [
                dialect.buffer(t, "out"),
                dialect.buffer("long", "outi64"),
                "long outo",
                "dims_t outst",
                dialect.buffer(t, "a", const=True),
                "long ao",
                "dims_t ast",
                "long astep",
                "dims_t oshape",
                "int ondim",
                dialect.buffer(kt, "keys", const=True),
                dialect.buffer("long", "idxs", const=True),
                "long P",
                "long rows",
                "long n",
            ],
            f"""    long row = {gid};
    if (row >= rows) return;
{row_base(["out", "a"])}    long start = 0, best = 0, blen = 0, b = row * P;
    for (long i = 0; i < n; ++i) {{
        if (i > 0 && !(keys[b + i] == keys[b + i - 1])) start = i;
        if (i == n - 1 || !(keys[b + i + 1] == keys[b + i])) {{
            if (i - start + 1 > blen) {{ blen = i - start + 1; best = i; }}
        }}
    }}
    long src = idxs[row * P + best];
    out[outi] = a[ai + src * astep];
    outi64[outi] = src;""",
        ),
        dialect.kernel(
            "uniq_flags",
            [dialect.buffer("long", "flags"), dialect.buffer(kt, "keys", const=True), "long n"],
            f"""    long g = {gid};
    if (g >= n) return;
    flags[g] = (g == 0 || !(keys[g] == keys[g - 1])) ? 1 : 0;""",
        ),
        dialect.kernel(
            "uniq_write",
            [
                dialect.buffer(t, "out"),
                dialect.buffer("long", "inverse"),
                dialect.buffer("long", "firsts"),
                dialect.buffer(t, "a", const=True),
                "long ao",
                "long astep",
                dialect.buffer("long", "idxs", const=True),
                dialect.buffer("long", "flags", const=True),
                dialect.buffer("long", "groups", const=True),
                "long n",
                "int with_inverse",
            ],
            f"""    long g = {gid};
    if (g >= n) return;
    long grp = groups[g] - 1, src = idxs[g];
    if (flags[g]) {{
        out[grp] = a[ao + src * astep];
        firsts[grp] = g;
    }}
    if (with_inverse) inverse[src] = grp;""",
        ),
        dialect.kernel(
            "uniq_counts",
            [dialect.buffer("long", "counts"), dialect.buffer("long", "firsts", const=True), "long u", "long n"],
            f"""    long g = {gid};
    if (g >= u) return;
    counts[g] = (g + 1 < u ? firsts[g + 1] : n) - firsts[g];""",
        ),
        dialect.kernel(
            "searchsorted",
            [
                dialect.buffer("long", "out"),
                dialect.buffer(t, "seq", const=True),
                "long so",
                "dims_t sst",
                "long sstep",
                "long n",
                dialect.buffer(t, "v", const=True),
                "long vo",
                "dims_t vst",
                "dims_t vshape",
                "int vndim",
                "long total",
                "int right",
            ],
            f"""    long g = {gid};
    if (g >= total) return;
    long si = so, vi = vo, r = g;
    for (int d = vndim - 1; d >= 0; --d) {{
        long q = r % vshape.v[d];
        r /= vshape.v[d];
        si += q * sst.v[d];
        vi += q * vst.v[d];
    }}
    {t} vv = v[vi];
    KT x = {load(dtype, "vv")};
    long lo = 0, hi = n;
    while (lo < hi) {{
        long mid = min((lo + hi) >> 1, n - 1);
        {t} mv = seq[si + mid * sstep];
        KT m = {load(dtype, "mv")};
        int go = right ? !(m > x) : !(m >= x);
        if (go) lo = mid + 1; else hi = mid;
    }}
    out[g] = lo;""",
        ),
    ]
    return header(dialect, [dtype]) + f"#define KT {kt}\n" + _after(kt, dtype in _FLOATS) + "".join(ks)
