"""Batched matrix multiply: a tiled kernel for any device, a packed register-blocked one for CPU devices.

``program``: a work group of ``TILE x TILE`` items computes a ``TILE*WPT x TILE*WPT`` block of C:
each item accumulates ``WPT x WPT`` outputs in registers while the group
stages ``BK``-wide panels of A and B in local memory. Strides (batch, row,
column) and offsets of A and B are arguments, so transposed and broadcast
operands need no copy. Padding outside the matrices reads zeros at the same ``k``
for A and B, so a padded product is ``0 * 0`` and never ``inf * 0``.

``packed_program``: on a CPU device a work item is a loop iteration and local
memory is ordinary cache, so the fast form is a BLAS-like micro-kernel instead:
A and B are first copied into contiguous panels, then each item keeps a block of
C in vector registers (see :func:`packed_program`).
"""

from __future__ import annotations

from .common import header, load, store

TILE = 8
WPT = 4
BLOCK = TILE * WPT


#: Integer products accumulate in unsigned types, whose overflow wraps (defined in C), as NumPy's does.
_WRAPPING = {"uint8": "uint", "int8": "uint", "int16": "uint", "int32": "uint", "int64": "ulong"}


def program(dialect, dtype: str) -> str:
    """The ``bmm`` kernel for ``dtype`` (accumulating in its compute type; integers wrap)."""
    t, acc = dialect.type_name(dtype), _WRAPPING.get(dtype) or dialect.compute_type(dtype)
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


#: Register blocking of the packed kernel on CPU devices: each work item computes ``rows_for(...)`` rows
#: by ``VECTORS`` vectors of C (one vector register per accumulator).
VECTORS = 2


def rows_for(vector_bytes: int) -> int:
    """Rows of C per work item: the accumulators, two B vectors and a broadcast must fit the register file.

    AVX-512 has 32 vector registers (8 x 2 accumulators); AVX2 has 16, where 8 x 2 spills and 6 x 2 (the
    Haswell micro-kernel of BLIS and OpenBLAS) runs 1.8 times faster on a Zen 4 compiled as ``znver3``.
    """
    return 8 if vector_bytes >= 64 else 6


def packed_program(dialect, dtype: str, lanes: int, rows: int, vectors: int = VECTORS) -> str:
    """``pack_a``, ``pack_b`` and ``bmm_packed``: a register-blocked matmul for CPU devices (float32/float64).

    ``pack_b`` copies B (any strides) into panels of ``vectors * lanes`` columns, ``[batch][panel][k][col]``,
    zero-padded past ``N``; ``pack_a`` copies A into panels of ``rows`` rows, ``[batch][panel][k][row]``
    (rows past ``M`` repeat the last row). Work item ``g`` of ``bmm_packed`` computes a ``rows x panel`` block
    of C in vector registers, reading both panels as contiguous streams through two pointers: for each
    ``k``, the B panel row's vectors and one broadcast element per row of A. Items that share a B panel
    are consecutive, so it stays in cache while they run.
    """
    t, w = dialect.type_name(dtype), lanes
    v = dialect.vector_type(t, w)
    pw = w * vectors
    pack_a = dialect.kernel(
        "pack_a",
        [dialect.buffer(t, "ap"), dialect.buffer(t, "a", const=True)]
        + [f"long {n}" for n in ("ao", "abs", "ars", "acs", "M", "K", "MB", "total")],
        f"""    long g = {dialect.global_id(0)};
    if (g >= total) return;
    long ib = g % MB, bt = g / MB, src = ao + bt * abs;
    {dialect.global_prefix}{t}* dst = ap + g * K * {rows};
    for (int i = 0; i < {rows}; ++i) {{
        long row = src + min(ib * {rows} + i, M - 1) * ars;
        for (long k = 0; k < K; ++k) dst[k * {rows} + i] = a[row + k * acs];
    }}""",
    )
    pack_b = dialect.kernel(
        "pack_b",
        [dialect.buffer(t, "bp"), dialect.buffer(t, "b", const=True)]
        + [f"long {n}" for n in ("bo", "bbs", "brs", "bcs", "N", "K", "NB", "total")],
        f"""    long g = {dialect.global_id(0)};
    if (g >= total) return;
    long jb = g % NB, bt = g / NB, src = bo + bt * bbs;
    {dialect.global_prefix}{t}* dst = bp + g * K * {pw};
    for (long k = 0; k < K; ++k) {{
        for (int j = 0; j < {pw}; ++j) {{
            long col = jb * {pw} + j;
            dst[k * {pw} + j] = col < N ? b[src + k * brs + col * bcs] : ({t})0;
        }}
    }}""",
    )
    params = [dialect.buffer(t, "c"), dialect.buffer(t, "ap", const=True), dialect.buffer(t, "bp", const=True)]
    params += [f"long {n}" for n in ("M", "N", "K", "MB", "NB", "total")]
    accs = "".join(f"    {v} c{i}_{j} = {dialect.splat(v, '0')};\n" for i in range(rows) for j in range(vectors))
    loads = "".join(
        f"        {v} b{j} = {dialect.aligned_load(v, 'pb', f'k * {vectors} + {j}')};\n" for j in range(vectors)
    )
    fmas = "".join(
        f"        {{ {v} x = {dialect.splat(v, f'pa[k * {rows} + {i}]')};"
        + "".join(f" c{i}_{j} += x * b{j};" for j in range(vectors))
        + " }\n"
        for i in range(rows)
    )
    stores = ""
    for i in range(rows):
        stores += f"    if (row0 + {i} < M) {{\n"
        for j in range(vectors):
            stores += f"""        col = jb * {pw} + {j * w};
        if (col + {w} <= N) {dialect.vector_store(w, f"c{i}_{j}", f"c + crow + {i} * N + col", "0")}
        else if (col < N) {{ {dialect.vector_store(w, f"c{i}_{j}", "tail", "0")}
            for (long q = 0; q < N - col; ++q) c[crow + {i} * N + col + q] = tail[q]; }}
"""
        stores += "    }\n"
    body = f"""    long g = {dialect.global_id(0)};
    if (g >= total) return;
    long ib = g % MB, r = g / MB, jb = r % NB, bt = r / NB;
    long row0 = ib * {rows}, col, crow = (bt * M + row0) * N;
    {dialect.global_prefix}const {t}* pa = ap + (bt * MB + ib) * K * {rows};
    {dialect.global_prefix}const {t}* pb = bp + (bt * NB + jb) * K * {pw};
    {t} tail[{w}];
{accs}    for (long k = 0; k < K; ++k) {{
{loads}{fmas}    }}
{stores}"""
    return header(dialect, [dtype]) + pack_a + pack_b + dialect.kernel("bmm_packed", params, body)
