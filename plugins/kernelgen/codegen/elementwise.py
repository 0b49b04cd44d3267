"""Elementwise kernels: one program per (table of ops, input dtype).

``<op>_c`` handles operands that are all contiguous with the output (after
coalescing dims): ``out[oo + g] = f(a[ao + g], ...)``, each work item over a block
of ``per`` consecutive elements (the launcher picks ``per``: a block per work item
on CPU devices, where work items are loop iterations; 1 on GPUs). ``s_<out dtype>`` handles
any strides (0 for broadcast dims, negative ones too) and offsets, decomposing
the element number over the shape passed as an argument; it serves every op of
the program with that output dtype through an ``opcode`` argument.

An op is a C expression over ``x0, x1, ...`` (the inputs in their compute type,
see ``dialect.base.COMPUTE_TYPES``); the result is converted to the output dtype
by :func:`.common.store`.
"""

from __future__ import annotations

from .common import EW_STRUCT, MAX_RANK, header, load, store


def _params(dialect, in_dtypes, out_dtype: str, strided: bool) -> list:
    out = [dialect.buffer(dialect.type_name(out_dtype), "out")] + ([] if strided else ["long oo"])
    for i, d in enumerate(in_dtypes):
        out += [dialect.buffer(dialect.type_name(d), f"a{i}", const=True)] + ([] if strided else [f"long ao{i}"])
    return out + (["ew_args_t p"] if strided else ["long n", "long per"])


def _reads(dialect, in_dtypes, index) -> str:
    return "".join(
        f"    {dialect.compute_type(d)} x{i} = {load(d, f'a{i}[{index(i)}]')};\n" for i, d in enumerate(in_dtypes)
    )


def contiguous_kernel(dialect, name: str, in_dtypes, out_dtype: str, expr: str) -> str:
    """``<name>_c``: every operand contiguous, ``out[oo + g] = f(a0[ao0 + g], ...)`` for ``per`` elements an item."""
    reads = _reads(dialect, in_dtypes, lambda i: f"ao{i} + g").replace("\n    ", "\n        ")
    if dialect.grid_stride:  # consecutive items take consecutive elements, stepping by the grid (``per`` unused)
        first = dialect.global_id(0)
        loop = f"    long step = {dialect.global_size(0)};\n    for (long g = {first}; g < n; g += step) {{\n    "
    else:
        loop = (
            f"    long g0 = {dialect.global_id(0)} * per;\n    if (g0 >= n) return;\n"
            f"    long e = min(n, g0 + per);\n    for (long g = g0; g < e; ++g) {{\n    "
        )
    body = loop + reads + f"        out[oo + g] = {store(dialect, out_dtype, expr)};\n    }}"
    return dialect.kernel(f"{name}_c", _params(dialect, in_dtypes, out_dtype, False), body)


def strided_kernel(dialect, in_dtypes, out_dtype: str, exprs: list) -> str:
    """``s_<out dtype>``: any strides; ``p.opcode`` picks the expression (one kernel for a whole table).

    Work item ``g`` takes elements ``[g * per, (g + 1) * per)`` in row-major order: it splits its first
    element's number over the shape once, then steps through the others like an odometer (add the
    innermost strides, carry into the next dim at its end), so a block costs one set of divisions.
    """
    operands = ["oo"] + [f"ao{i}" for i in range(len(in_dtypes))]
    strides = ["p.ost"] + [f"p.ast[{i}]" for i in range(len(in_dtypes))]
    start = "".join(f"        {o} += q[d] * {st}.v[d];\n" for o, st in zip(operands, strides))
    step = "".join(f" {o} += {st}.v[d];" for o, st in zip(operands, strides))
    back = "".join(f" {o} -= {st}.v[d] * p.shape.v[d];" for o, st in zip(operands, strides))
    cases = "".join(
        f"            case {code}: out[oo] = {store(dialect, out_dtype, expr)}; break;\n"
        for code, expr in enumerate(exprs)
    )
    offsets = "".join(f"    long ao{i} = p.ao[{i}];\n" for i in range(len(in_dtypes)))
    reads = _reads(dialect, in_dtypes, lambda i: f"ao{i}").replace("\n    ", "\n        ")
    body = f"""    long g0 = {dialect.global_id(0)} * p.per;
    if (g0 >= p.n) return;
    long e = min(p.n, g0 + p.per), oo = p.oo, r = g0, q[{MAX_RANK}];
{offsets}    for (int d = p.ndim - 1; d >= 0; --d) {{
        q[d] = r % p.shape.v[d];
        r /= p.shape.v[d];
{start}    }}
    for (long g = g0; g < e; ++g) {{
    {reads}        switch (p.opcode) {{
{cases}        }}
        for (int d = p.ndim - 1; d >= 0; --d) {{
           {step}
            if (++q[d] < p.shape.v[d]) break;
           {back}
            q[d] = 0;
        }}
    }}"""
    return dialect.kernel(f"s_{out_dtype}", _params(dialect, in_dtypes, out_dtype, True), body)


def opcodes(ops: dict) -> dict:
    """name -> (strided kernel name, opcode) for ``ops`` (name -> (out dtype, expression))."""
    out, counters = {}, {}
    for name, (out_dtype, _) in sorted(ops.items()):
        code = counters.get(out_dtype, 0)
        counters[out_dtype] = code + 1
        out[name] = (f"s_{out_dtype}", code)
    return out


def program(dialect, ops: dict, in_dtypes, contiguous: bool = False, helpers: str = "") -> str:
    """The kernels of ``ops`` (name -> (out dtype, expression)) over inputs of ``in_dtypes``.

    ``contiguous=False``: the strided kernels, one per output dtype, switching on an opcode (what small
    calls use, so a cold cache builds and compiles little); ``contiguous=True``: one ``<op>_c`` kernel per
    op, the fast path of large contiguous calls, built only when such a call comes. ``helpers``: source
    placed before the kernels (functions their expressions call).
    """
    dtypes = set(in_dtypes) | {out for out, _ in ops.values()}
    parts = [header(dialect, sorted(dtypes)) + ("" if contiguous else EW_STRUCT) + helpers]
    by_out: dict = {}
    for name, (out_dtype, expr) in sorted(ops.items()):
        if contiguous:
            parts.append(contiguous_kernel(dialect, name, in_dtypes, out_dtype, expr))
        by_out.setdefault(out_dtype, []).append(expr)
    if not contiguous:
        for out_dtype, exprs in sorted(by_out.items()):
            parts.append(strided_kernel(dialect, in_dtypes, out_dtype, exprs))
    return "\n".join(parts)
