"""Stream compaction kernels (data-dependent output sizes), written against a Dialect.

Work item ``c`` owns chunk ``c`` of ``CHUNK`` consecutive elements (C order over a
strided operand) and walks it sequentially, which keeps the output order and needs
no local memory:

1. ``count``: the weight of each chunk, the number of nonzero elements (mode 0)
   or the sum of the values (mode 1, ``repeat_interleave``; a negative value sets
   ``err[0]``);
2. ``scan``: one work item turns the chunk weights into exclusive offsets and
   writes the total after them (the host reads that one number back);
3. an *emit* kernel walks its chunk again and writes from its offset:
   ``nonzero_emit`` (coordinates), ``repeat_emit`` (``i`` repeated), and in the
   per-element-size move program ``select_emit`` (``masked_select``) and
   ``scatter_emit`` (``masked_scatter``).
"""

from __future__ import annotations

from .common import header
from .scatter import unravel

CHUNK = 256


def _nonzero(dialect, dtype: str, x: str) -> str:
    if dtype == "complex128":
        return f"(({x}).x != 0 || ({x}).y != 0)"
    return f"(((long)({x}) & zmask) != 0)"


def _chunk(dialect) -> str:
    return f"""    long c = {dialect.global_id(0)};
    if (c >= nchunks) return;
    long lo = c * {CHUNK};
    long hi = min(n, lo + {CHUNK});"""


def program(dialect, raws) -> str:
    """One program: ``scan``, and per raw type ``count_<raw>``, ``nonzero_emit_<raw>``, ``select_emit_<raw>``,
    ``scatter_emit_<raw>`` (plus ``repeat_emit_<raw>`` for int32/int64)."""
    scan = dialect.kernel(
        "scan",
        [dialect.buffer("long", "cnt"), "long nchunks"],
        f"""    if ({dialect.global_id(0)} != 0) return;
    long s = 0;
    for (long c = 0; c < nchunks; ++c) {{
        long w = cnt[c];
        cnt[c] = s;
        s += w;
    }}
    cnt[nchunks] = s;""",
    )
    parts = [header(dialect, sorted(raws)), scan]
    parts += [compact_kernels(dialect, raw) + move_kernels(dialect, raw) for raw in raws]
    return "".join(parts)


def compact_kernels(dialect, dtype: str) -> str:
    """``count_<dtype>``, ``nonzero_emit_<dtype>`` and ``repeat_emit_<dtype>`` over elements of ``dtype``.

    ``dtype`` is a raw integer type (``uint8``, ``int16``, ``int32``, ``int64``: any dtype of that size is
    tested as ``(bits & zmask) != 0``, the mask clearing float sign bits so that -0.0 counts as zero) or
    ``complex128``; ``repeat_emit`` reads ``int32``/``int64`` counts.
    """
    t = dialect.type_name(dtype)
    walk = ["dims_t shape", "int ndim", "long n", "long nchunks"]
    src = [dialect.buffer(t, "a", const=True), "long ao", "dims_t ast"]
    weight = _nonzero(dialect, dtype, "x")
    if dtype in ("int32", "int64"):
        weight = f"mode ? (long)x : (long)({weight})"
    src.append("long zmask")
    count = dialect.kernel(
        f"count_{dtype}",
        [dialect.buffer("long", "cnt"), *src, "int mode", dialect.buffer("int", "err"), *walk],
        f"""{_chunk(dialect)}
    long s = 0;
    for (long i = lo; i < hi; ++i) {{
{unravel("i", [("ai", "ast", "ao")])}
        {t} x = a[ai];
        long w = {weight};
        if (w < 0) {{ err[0] = 1; w = 0; }}
        s += w;
    }}
    cnt[c] = s;""",
    )
    nonzero = dialect.kernel(
        f"nonzero_emit_{dtype}",
        [dialect.buffer("long", "out"), *src, dialect.buffer("long", "cnt", const=True), *walk],
        f"""{_chunk(dialect)}
    long o = cnt[c];
    for (long i = lo; i < hi; ++i) {{
{unravel("i", [("ai", "ast", "ao")])}
        {t} x = a[ai];
        if (!({_nonzero(dialect, dtype, "x")})) continue;
        long r = i;
        for (int k = ndim - 1; k >= 0; --k) {{
            out[o * ndim + k] = r % shape.v[k];
            r /= shape.v[k];
        }}
        ++o;
    }}""",
    )
    parts = [count, nonzero]
    if dtype in ("int32", "int64"):
        parts.append(
            dialect.kernel(
                f"repeat_emit_{dtype}",
                [dialect.buffer(t, "out"), *src, dialect.buffer("long", "cnt", const=True), *walk],
                f"""{_chunk(dialect)}
    long o = cnt[c];
    for (long i = lo; i < hi; ++i) {{
{unravel("i", [("ai", "ast", "ao")])}
        long w = (long)a[ai];
        for (long j = 0; j < w; ++j) out[o + j] = ({t})i;
        if (w > 0) o += w;
    }}""",
            )
        )
    return "".join(parts)


def move_kernels(dialect, raw: str) -> str:
    """``select_emit_<raw>`` and ``scatter_emit_<raw>`` for elements moved as raw type ``raw`` (bool mask)."""
    t = dialect.type_name(raw)
    walk = ["dims_t shape", "int ndim", "long n", "long nchunks"]
    mask = [dialect.buffer("uchar", "m", const=True), "long mo", "dims_t mst"]
    select = dialect.kernel(
        f"select_emit_{raw}",
        [
            dialect.buffer(t, "out"),
            dialect.buffer(t, "a", const=True),
            "long ao",
            "dims_t ast",
            *mask,
            dialect.buffer("long", "cnt", const=True),
            *walk,
        ],
        f"""{_chunk(dialect)}
    long o = cnt[c];
    for (long i = lo; i < hi; ++i) {{
{unravel("i", [("ai", "ast", "ao"), ("mi", "mst", "mo")])}
        if (m[mi]) out[o++] = a[ai];
    }}""",
    )
    scatter = dialect.kernel(
        f"scatter_emit_{raw}",
        [
            dialect.buffer(t, "out"),
            *mask,
            dialect.buffer(t, "src", const=True),
            "long so",
            "dims_t sst",
            "dims_t sshape",
            "int sndim",
            dialect.buffer("long", "cnt", const=True),
            *walk,
        ],
        f"""{_chunk(dialect)}
    long o = cnt[c];
    for (long i = lo; i < hi; ++i) {{
{unravel("i", [("mi", "mst", "mo")])}
        if (!m[mi]) continue;
{unravel("o", [("si", "sst", "so")], "sshape", "sndim")}
        out[i] = src[si];
        ++o;
    }}""",
    )
    return select + scatter
