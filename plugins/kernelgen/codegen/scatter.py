"""Scatter and advanced-indexing kernels, written against a Dialect.

Every indexing prim of this family is an *update space* ``U`` (a shape, walked in
C order by work item ``g``) plus, per update, a target offset and a source offset:

* ``positions`` turns index tensors into element offsets: ``pos[u]`` (contiguous
  over the index's broadcast shape) is the wrapped index unravelled through a
  target shape and strides (one dim for ``index``/``scatter``, the whole tensor
  for ``take``/``put``). Several index tensors add up into one ``pos``. An index
  out of range sets ``err[0]`` and adds nothing, so later kernels stay in bounds.
* the *move* kernels (per element size, raw bits) are ``copy``, ``gather_pos``
  (``out[g] = a[base(g) + pos[p(g)]]``), and the deterministic "last write wins"
  pair ``claim`` (``atomic_max`` of ``g + 1`` into a per-target winner array) and
  ``apply`` (the winner writes).
* the *accumulate* kernels (per dtype) combine values into the target with a
  compare-and-swap loop on the element's bits (the enclosing 32-bit word for 8- and
  16-bit elements, little-endian), for sum, prod, amax and amin, and counts hits
  for ``mean``. Float results depend on the order of the atomics.

A PoCL program build costs about half a second whatever its size, so each family is
one program holding the kernels of every dtype (names suffixed by dtype), built once.
"""

from __future__ import annotations

from .common import header, store

OPS = {"sum": 0, "prod": 1, "amax": 2, "amin": 3}

_BITS = {"uchar": 8, "char": 8, "ushort": 16, "short": 16, "half": 16, "int": 32, "uint": 32, "float": 32}
_UNSIGNED = {8: "uchar", 16: "ushort", 32: "uint", 64: "ulong"}
_FLOATS = {"float32", "float64", "bfloat16", "float16"}
_COMPLEX = {"complex64": "float", "complex128": "double"}


def unravel(index: str, offsets: list[tuple[str, str, str]], shape: str = "shape", ndim: str = "ndim") -> str:
    """Statements: offsets ``name = init + sum(q_k * strides.v[k])`` of C-order element ``index`` of ``shape``."""
    decl = ", ".join(f"{name} = {init}" for name, _, init in offsets)
    steps = "\n".join(f"        {name} += q * {st}.v[k];" for name, st, _ in offsets)
    return f"""    long {decl};
    {{
        long r = {index};
        for (int k = {ndim} - 1; k >= 0; --k) {{
            long q = r % {shape}.v[k];
            r /= {shape}.v[k];
{steps}
        }}
    }}"""


def positions_kernel(dialect, index: str) -> str:
    """The ``positions_<index>`` kernel, for index tensors of dtype ``index``."""
    it = dialect.type_name(index)
    params = [
        dialect.buffer("long", "pos"),
        dialect.buffer(it, "idx", const=True),
        "long io",
        "dims_t ist",
        "dims_t shape",
        "int ndim",
        "dims_t tshape",
        "dims_t tst",
        "int tndim",
        "long total",
        "int neg",
        "int add",
        dialect.buffer("int", "err"),
        "long n",
    ]
    body = f"""    long g = {dialect.global_id(0)};
    if (g >= n) return;
{unravel("g", [("ii", "ist", "io")])}
    long j = (long)idx[ii];
    if (j < (neg ? -total : 0) || j >= total) {{
        err[0] = 1;
        if (!add) pos[g] = 0;
        return;
    }}
    if (j < 0) j += total;
    long off = 0;
    for (int k = tndim - 1; k >= 0; --k) {{
        off += (j % tshape.v[k]) * tst.v[k];
        j /= tshape.v[k];
    }}
    pos[g] = add ? pos[g] + off : off;"""
    return dialect.kernel(f"positions_{index}", params, body)


def move_program(dialect, raws, indexes=("int32", "int64")) -> str:
    """One program: ``positions_<index>``, ``claim``, and ``copy_<raw>``, ``gather_pos_<raw>``, ``apply_<raw>``."""
    claim = dialect.kernel(
        "claim",
        [
            dialect.buffer("int", "win"),
            dialect.buffer("long", "pos", const=True),
            "dims_t pst",
            "dims_t ost",
            *_TAIL,
        ],
        f"""{_gid(dialect)}
{unravel("g", [("pi", "pst", "0"), ("oi", "ost", "0")])}
    {dialect.atomic_max("win + oi + pos[pi]", "(int)(g + 1)")};""",
    )
    parts = [header(dialect, sorted({*raws, *indexes})), dialect.atomics_header(), claim]
    parts += [positions_kernel(dialect, it) for it in indexes]
    parts += [move_kernels(dialect, raw) for raw in raws]
    return "".join(parts)


_TAIL = ["dims_t shape", "int ndim", "long n"]


def _gid(dialect) -> str:
    return f"""    long g = {dialect.global_id(0)};
    if (g >= n) return;"""


def move_kernels(dialect, raw: str) -> str:
    """``copy_<raw>``, ``gather_pos_<raw>`` and ``apply_<raw>`` for elements moved as raw type ``raw``."""
    t = dialect.type_name(raw)
    gid, tail = _gid(dialect), _TAIL
    copy = dialect.kernel(
        f"copy_{raw}",
        [dialect.buffer(t, "out"), dialect.buffer(t, "a", const=True), "long ao", "dims_t ast", *tail],
        f"{gid}\n{unravel('g', [('ai', 'ast', 'ao')])}\n    out[g] = a[ai];",
    )
    gather = dialect.kernel(
        f"gather_pos_{raw}",
        [
            dialect.buffer(t, "out"),
            dialect.buffer(t, "a", const=True),
            "long ao",
            "dims_t ast",
            dialect.buffer("long", "pos", const=True),
            "dims_t pst",
            *tail,
        ],
        f"{gid}\n{unravel('g', [('ai', 'ast', 'ao'), ('pi', 'pst', '0')])}\n    out[g] = a[ai + pos[pi]];",
    )
    apply = dialect.kernel(
        f"apply_{raw}",
        [
            dialect.buffer(t, "out"),
            dialect.buffer("int", "win", const=True),
            "int use_win",
            dialect.buffer("long", "pos", const=True),
            "dims_t pst",
            "dims_t ost",
            dialect.buffer(t, "src", const=True),
            "long so",
            "dims_t sst",
            *tail,
        ],
        f"""{gid}
{unravel("g", [("pi", "pst", "0"), ("oi", "ost", "0"), ("si", "sst", "so")])}
    long tg = oi + pos[pi];
    if (use_win && win[tg] != (int)(g + 1)) return;
    out[tg] = src[si];""",
    )
    return copy + gather + apply


def _update_helper(dialect, dtype: str, name: str, combine: str) -> str:
    """``name(out, t, v, op)``: ``out[t] = combine(out[t], v)`` atomically, by compare-and-swap."""
    t = dialect.type_name(dtype)
    bits = 64 if t in ("long", "ulong", "double") else _BITS[t]
    word = _UNSIGNED[max(bits, 32)]
    if bits >= 32:
        cur = dialect.bitcast(t, "assumed")
        new = dialect.bitcast(word, combine)
        ptr = "out + t"
    else:
        u = _UNSIGNED[bits]
        cur = dialect.bitcast(t, f"(({u})((assumed >> shift) & mask))")
        new = f"(assumed & ~(mask << shift)) | (((uint){dialect.bitcast(u, combine)}) << shift)"
        ptr = f"(({dialect.global_ptr('uint')})out) + (byte >> 2)"
    sub = (
        f"""    long byte = t * {bits // 8};
    int shift = (int)(byte & 3) * 8;
    uint mask = {(1 << bits) - 1}u;
"""
        if bits < 32
        else ""
    )
    return f"""
inline void {name}({dialect.global_ptr(t)} out, long t, {t} v, int op) {{
{sub}    {word} old = *(({dialect.global_ptr(word)})({ptr})), assumed;
    do {{
        assumed = old;
        {t} cur = {cur};
        old = {dialect.atomic_cas(64 if word == "ulong" else 32, ptr, "assumed", new)};
    }} while (old != assumed);
}}
"""


def _real_helpers(dialect, dtype: str) -> str:
    """``ow_max_<d>``, ``ow_min_<d>``, ``ow_combine_<d>`` (by opcode), ``ow_update_<d>`` for real or bool ``d``."""
    t, d = dialect.type_name(dtype), dtype
    if dtype in _FLOATS:
        minmax = f"""
inline {t} ow_max_{d}({t} a, {t} b) {{ return (isnan(a) || isnan(b)) ? a + b : fmax(a, b); }}
inline {t} ow_min_{d}({t} a, {t} b) {{ return (isnan(a) || isnan(b)) ? a + b : fmin(a, b); }}
"""
    else:
        minmax = f"""
inline {t} ow_max_{d}({t} a, {t} b) {{ return a > b ? a : b; }}
inline {t} ow_min_{d}({t} a, {t} b) {{ return a < b ? a : b; }}
"""
    combine = f"""
inline {t} ow_combine_{d}({t} a, {t} b, int op) {{
    switch (op) {{
    case {OPS["sum"]}: return {store(dialect, dtype, "a + b")};
    case {OPS["prod"]}: return {store(dialect, dtype, "a * b")};
    case {OPS["amax"]}: return ow_max_{d}(a, b);
    default: return ow_min_{d}(a, b);
    }}
}}
"""
    return minmax + combine + _update_helper(dialect, dtype, f"ow_update_{d}", f"ow_combine_{d}(cur, v, op)")


def _complex_helpers(dialect, dtype: str) -> str:
    """``ow_cmul_<d>`` and ``ow_update_<d>`` for a complex ``d``: sums only, one atomic add per component."""
    t, r, d = dialect.type_name(dtype), _COMPLEX[dtype], dtype
    part = _update_helper(dialect, "float32" if r == "float" else "float64", f"ow_add_part_{d}", "cur + v")
    return (
        part
        + f"""
inline {t} ow_cmul_{d}({t} a, {t} b) {{
    {t} p;
    p.x = a.x * b.x - a.y * b.y;
    p.y = a.x * b.y + a.y * b.x;
    return p;
}}

inline void ow_update_{d}({dialect.global_ptr(t)} out, long t, {t} v, int op) {{
    {dialect.global_ptr(r)} p = ({dialect.global_ptr(r)})(out + t);
    ow_add_part_{d}(p, 0, v.x, op);
    ow_add_part_{d}(p, 1, v.y, op);
}}
"""
    )


def accumulate_program(dialect, dtypes) -> str:
    """One program: ``accum_<d>`` and ``mean_div_<d>`` for each of ``dtypes``.

    The dtypes have arithmetic in their storage type (no 16-bit floats: those accumulate in float32).
    """
    return "".join(
        [header(dialect, sorted(dtypes)), dialect.atomics_header()] + [accumulate_kernels(dialect, d) for d in dtypes]
    )


def accumulate_kernels(dialect, dtype: str) -> str:
    """``accum_<dtype>`` (atomic combine of strided values into targets) and ``mean_div_<dtype>``."""
    t = dialect.type_name(dtype)
    ct = dialect.compute_type(dtype)
    if dtype in _COMPLEX:
        helpers = _complex_helpers(dialect, dtype)
        scaled = f"ow_cmul_{dtype}(v, alpha[0])"
    else:
        helpers = _real_helpers(dialect, dtype)
        scaled = store(dialect, dtype, f"({ct})v * ({ct})alpha[0]")
    accum = dialect.kernel(
        f"accum_{dtype}",
        [
            dialect.buffer(t, "out"),
            dialect.buffer("long", "pos", const=True),
            "dims_t pst",
            "dims_t ost",
            dialect.buffer(t, "src", const=True),
            "long so",
            "dims_t sst",
            dialect.buffer(t, "alpha", const=True),
            "int use_alpha",
            "int op",
            dialect.buffer("int", "cnt"),
            "int counting",
            "dims_t shape",
            "int ndim",
            "long n",
        ],
        f"""    long g = {dialect.global_id(0)};
    if (g >= n) return;
{unravel("g", [("pi", "pst", "0"), ("oi", "ost", "0"), ("si", "sst", "so")])}
    long tg = oi + pos[pi];
    {t} v = src[si];
    if (use_alpha) v = {scaled};
    ow_update_{dtype}(out, tg, v, op);
    if (counting) {dialect.atomic_add(32, "cnt + tg", "1")};""",
    )
    if dtype in _COMPLEX:
        divide = f"out[g].x = out[g].x / ({_COMPLEX[dtype]})c; out[g].y = out[g].y / ({_COMPLEX[dtype]})c;"
    elif dtype in _FLOATS:
        divide = f"out[g] = out[g] / ({t})c;"  # correctly rounded, as the CPU's float64 division then rounding
    else:
        divide = f"""long x = (long)out[g];
        long q = x / c;
        if (x % c != 0 && x < 0) q -= 1;
        out[g] = {store(dialect, dtype, "q")};"""
    mean = dialect.kernel(
        f"mean_div_{dtype}",
        [dialect.buffer(t, "out"), dialect.buffer("int", "cnt", const=True), "int inc", "long n"],
        f"""    long g = {dialect.global_id(0)};
    if (g >= n || cnt[g] == 0) return;
    long c = (long)cnt[g] + inc;
    {{
        {divide}
    }}""",
    )
    return helpers + accum + mean + (_rounds(dialect, dtype) if dtype in _COMPLEX else "")


def _rounds(dialect, dtype: str) -> str:
    """``round_claim_<d>``/``round_apply_<d>``: complex products without a wide enough atomic, in rounds.

    Each round, every pending update ``g`` bids ``n - g`` for its target (``atomic_max``), so the smallest
    pending ``g`` wins; the winners multiply and are done, the others count themselves in ``pending[0]``.
    The host repeats until nothing is pending: as many rounds as the most duplicated target has updates,
    and the products come out in the CPU's order, bit for bit.
    """
    t = dialect.type_name(dtype)
    where = [dialect.buffer("long", "pos", const=True), "dims_t pst", "dims_t ost"]
    claim = dialect.kernel(
        f"round_claim_{dtype}",
        [dialect.buffer("int", "win"), dialect.buffer("uchar", "done", const=True), *where, *_TAIL],
        f"""{_gid(dialect)}
    if (done[g]) return;
{unravel("g", [("pi", "pst", "0"), ("oi", "ost", "0")])}
    {dialect.atomic_max("win + oi + pos[pi]", "(int)(n - g)")};""",
    )
    apply = dialect.kernel(
        f"round_apply_{dtype}",
        [
            dialect.buffer(t, "out"),
            dialect.buffer("int", "win"),
            dialect.buffer("uchar", "done"),
            dialect.buffer("int", "pending"),
            *where,
            dialect.buffer(t, "src", const=True),
            "long so",
            "dims_t sst",
            *_TAIL,
        ],
        f"""{_gid(dialect)}
    if (done[g]) return;
{unravel("g", [("pi", "pst", "0"), ("oi", "ost", "0"), ("si", "sst", "so")])}
    long tg = oi + pos[pi];
    if (win[tg] != (int)(n - g)) {{
        {dialect.atomic_add(32, "pending", "1")};
        return;
    }}
    out[tg] = ow_cmul_{dtype}(out[tg], src[si]);
    done[g] = 1;
    win[tg] = 0;""",
    )
    return claim + apply


RANGE_CHUNK = 256


def bincount_program(dialect, xdtypes, weighted: bool) -> str:
    """One program, per x dtype in ``xdtypes``: ``range_<x>`` (the min and max of each chunk of ``RANGE_CHUNK``
    values), ``bincount_<x>`` (``out[x[i]] += 1``, int64 counts) and with ``weighted`` ``bincount_w_<x>``
    (``out[x[i]] += w[i]``, float64 weights and sums, by compare-and-swap); and ``range_final``, which
    reduces the chunk ranges into ``mm[0], mm[1]`` (one work item)."""
    final = dialect.kernel(
        "range_final",
        [dialect.buffer("long", "mm"), "long nchunks"],
        f"""    if ({dialect.global_id(0)} != 0) return;
    long lo = mm[0], hi = mm[1];
    for (long c = 1; c < nchunks; ++c) {{
        lo = min(lo, mm[2 * c]);
        hi = max(hi, mm[2 * c + 1]);
    }}
    mm[0] = lo;
    mm[1] = hi;""",
    )
    parts = [header(dialect, sorted({*xdtypes, *(["float64"] if weighted else [])})), dialect.atomics_header(), final]
    for xd in xdtypes:
        x = [dialect.buffer(dialect.type_name(xd), "x", const=True), "long xo", "long xs"]
        parts.append(
            dialect.kernel(
                f"range_{xd}",
                [dialect.buffer("long", "mm"), *x, "long n", "long nchunks"],
                f"""    long c = {dialect.global_id(0)};
    if (c >= nchunks) return;
    long i = c * {RANGE_CHUNK}, end = min(n, i + {RANGE_CHUNK});
    long lo = (long)x[xo + i * xs], hi = lo;
    for (++i; i < end; ++i) {{
        long v = (long)x[xo + i * xs];
        lo = min(lo, v);
        hi = max(hi, v);
    }}
    mm[2 * c] = lo;
    mm[2 * c + 1] = hi;""",
            )
        )
        body = f"""    long g = {dialect.global_id(0)};
    if (g >= n) return;
    long b = (long)x[xo + g * xs];"""
        parts.append(
            dialect.kernel(
                f"bincount_{xd}",
                [dialect.buffer("long", "out"), *x, "long n"],
                f"{body}\n    {dialect.atomic_add(64, 'out + b', '1L')};",
            )
        )
        if not weighted:
            continue
        new = dialect.bitcast("ulong", f"{dialect.bitcast('double', 'assumed')} + w[wo + g * ws]")
        parts.append(
            dialect.kernel(
                f"bincount_w_{xd}",
                [
                    dialect.buffer("double", "out"),
                    *x,
                    dialect.buffer("double", "w", const=True),
                    "long wo",
                    "long ws",
                    "long n",
                ],
                f"""{body}
    ulong old = *(({dialect.global_ptr("ulong")})(out + b)), assumed;
    do {{
        assumed = old;
        old = {dialect.atomic_cas(64, "out + b", "assumed", new)};
    }} while (old != assumed);""",
            )
        )
    return "".join(parts)
