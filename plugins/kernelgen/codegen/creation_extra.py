"""Factories computed from the element number alone: ``eye`` and the triangle coordinates.

``eye``: element ``g`` of an ``n x m`` matrix is 1 where ``g / m == g % m``, written as
the bits of 1 in the dtype (an argument), so programs specialise on the element size
only; a complex element is two values of its real dtype.
``tri_indices``: element ``k`` of the row-major list of the coordinates of a
triangle finds its row by a binary search over the closed-form count of the
entries in the rows above it (``tril_count`` of ``core.prims.creation``), so
each work item is independent; ``upper`` selects ``triu`` (``j - i >= offset``)
over ``tril`` (``j - i <= offset``).
"""

from __future__ import annotations

from .common import header, store

_TRIL_COUNT = """
inline long ow_tril_count(long row, long col, long offset) {
    long c = offset + 1;
    long a = min(max(-c, (long)0), row);
    long b = min(max(col - c, a), row);
    return (b - a) * c + (a + b - 1) * (b - a) / 2 + (row - b) * col;
}
inline long ow_rows_before(long i, long col, long offset, int upper) {
    return upper ? i * col - ow_tril_count(i, col, offset - 1) : ow_tril_count(i, col, offset);
}
"""


def eye_program(dialect, raw: str) -> str:
    """The ``eye`` kernel over ``n`` values of the integer type ``raw``, ``parts`` per matrix element.

    Value ``e`` is part ``e % parts`` of element ``g = e / parts``: the bits ``one`` (of 1 in the dtype)
    for part 0 where ``g / m == g % m``, else 0. So one program serves every dtype of ``raw``'s size.
    """
    t = dialect.type_name(raw)
    body = (
        f"    long e = {dialect.global_id(0)};\n    if (e >= n) return;\n    long g = e / parts;\n"
        f"    out[e] = (e % parts == 0 && g / m == g % m) ? {dialect.cast(t, 'one')} : {dialect.cast(t, '0')};"
    )
    params = [dialect.buffer(t, "out"), "long one", "long m", "int parts", "long n"]
    return header(dialect, [raw]) + dialect.kernel("eye", params, body)


def tri_indices_program(dialect, dtype: str) -> str:
    """The ``tri_indices`` kernel: rows to ``out[k]``, columns to ``out[count + k]`` (``dtype`` integers)."""
    body = f"""    long k = {dialect.global_id(0)};
    if (k >= count) return;
    long lo = 0, hi = row - 1;
    while (lo < hi) {{
        long mid = (lo + hi + 1) / 2;
        if (ow_rows_before(mid, col, offset, upper) <= k) lo = mid; else hi = mid - 1;
    }}
    long first = upper ? max(lo + offset, (long)0) : 0;
    out[k] = {store(dialect, dtype, "lo")};
    out[count + k] = {store(dialect, dtype, "first + k - ow_rows_before(lo, col, offset, upper)")};"""
    params = [
        dialect.buffer(dialect.type_name(dtype), "out"),
        "long row",
        "long col",
        "long offset",
        "int upper",
        "long count",
    ]
    return header(dialect, [dtype]) + _TRIL_COUNT + dialect.kernel("tri_indices", params, body)
