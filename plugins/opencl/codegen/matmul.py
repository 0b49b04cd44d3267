"""Batched matrix multiply tiled in local memory.

A work group of ``TILE x TILE`` items computes a ``TILE*WPT x TILE*WPT`` block of C:
each item accumulates ``WPT x WPT`` outputs in registers while the group
stages ``BK``-wide panels of A and B in local memory. Strides (batch, row,
column) and offsets of A and B are arguments, so transposed and broadcast
operands need no copy. Padding outside the matrices reads zeros at the same ``k``
for A and B, so a padded product is ``0 * 0`` and never ``inf * 0``.
"""

from __future__ import annotations

from .common import header, load, store

TILE = 8
WPT = 4
BLOCK = TILE * WPT


def program(dialect, dtype: str) -> str:
    """The ``bmm`` kernel for ``dtype`` (accumulating in its compute type)."""
    t, acc = dialect.type_name(dtype), dialect.compute_type(dtype)
    params = [
        dialect.buffer(t, "c"),
        dialect.buffer(t, "a", const=True),
        "long ao",
        "long abs",
        "long ars",
        "long acs",
        dialect.buffer(t, "b", const=True),
        "long bo",
        "long bbs",
        "long brs",
        "long bcs",
        "long M",
        "long N",
        "long K",
    ]
    load_a = f"({acc}){load(dtype, 'a[abase + row * ars + ka * acs]')}"
    load_b = f"({acc}){load(dtype, 'b[bbase + kb * brs + col * bcs]')}"
    body = f"""    {dialect.local_array(acc, "As", BLOCK * (BLOCK + 1))}
    {dialect.local_array(acc, "Bs", BLOCK * (BLOCK + 1))}
    int lx = (int){dialect.local_id(0)}, ly = (int){dialect.local_id(1)};
    long col0 = (long){dialect.group_id(0)} * {BLOCK}, row0 = (long){dialect.group_id(1)} * {BLOCK};
    long bt = (long){dialect.group_id(2)};
    long abase = ao + bt * abs, bbase = bo + bt * bbs;
    {acc} r[{WPT}][{WPT}];
    for (int i = 0; i < {WPT}; ++i) for (int j = 0; j < {WPT}; ++j) r[i][j] = 0;
    for (long k0 = 0; k0 < K; k0 += {BLOCK}) {{
        for (int i = ly; i < {BLOCK}; i += {TILE}) {{
            for (int j = lx; j < {BLOCK}; j += {TILE}) {{
                long row = row0 + i, ka = k0 + j;
                As[i * {BLOCK + 1} + j] = (row < M && ka < K) ? {load_a} : 0;
                long kb = k0 + i, col = col0 + j;
                Bs[i * {BLOCK + 1} + j] = (kb < K && col < N) ? {load_b} : 0;
            }}
        }}
        {dialect.barrier()}
        for (int k = 0; k < {BLOCK}; ++k) {{
            {acc} bv[{WPT}];
            for (int j = 0; j < {WPT}; ++j) bv[j] = Bs[k * {BLOCK + 1} + lx + j * {TILE}];
            for (int i = 0; i < {WPT}; ++i) {{
                {acc} av = As[(ly + i * {TILE}) * {BLOCK + 1} + k];
                for (int j = 0; j < {WPT}; ++j) r[i][j] += av * bv[j];
            }}
        }}
        {dialect.barrier()}
    }}
    for (int i = 0; i < {WPT}; ++i) {{
        long row = row0 + ly + i * {TILE};
        for (int j = 0; j < {WPT}; ++j) {{
            long col = col0 + lx + j * {TILE};
            if (row < M && col < N) c[(bt * M + row) * N + col] = {store(dialect, dtype, "r[i][j]")};
        }}
    }}"""
    return header(dialect, [dtype]) + dialect.kernel("bmm", params, body)
