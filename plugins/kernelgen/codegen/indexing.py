"""Gathers: ``out[p] = a[p with dim d replaced by index[p]]`` over strided operands.

One template serves ``gather`` (the index has the output's shape) and
``index_select`` (the index is read through strides that are 0 outside ``d``).
Indices must lie in ``[0, size)`` (as PyTorch's ``gather`` and ``index_select``: a
negative index is an error, not wrapped); one outside writes 0 and sets
``err[0]``, which the host reads to hand the call to the CPU kernel (and its
error message naming the index).
"""

from __future__ import annotations

from .common import header


def program(dialect, raw: str, index: str) -> str:
    """The ``take_along`` kernel for elements of raw type ``raw`` and indices of dtype ``index``."""
    t, it = dialect.type_name(raw), dialect.type_name(index)
    params = [
        dialect.buffer(t, "out"),
        dialect.buffer(t, "a", const=True),
        "long ao",
        "dims_t ast",
        dialect.buffer(it, "idx", const=True),
        "long io",
        "dims_t ist",
        "dims_t shape",
        "int ndim",
        "int d",
        "long size",
        dialect.buffer("int", "err"),
        "long n",
    ]
    body = f"""    long g = {dialect.global_id(0)};
    if (g >= n) return;
    long r = g, ai = ao, ii = io, q_d = 0;
    for (int k = ndim - 1; k >= 0; --k) {{
        long q = r % shape.v[k];
        r /= shape.v[k];
        ii += q * ist.v[k];
        if (k != d) ai += q * ast.v[k];
    }}
    long j = (long)idx[ii];
    if (j < 0 || j >= size) {{ err[0] = 1; return; }}
    out[g] = a[ai + j * ast.v[d]];"""
    return header(dialect, [raw, index]) + dialect.kernel("take_along", params, body)
