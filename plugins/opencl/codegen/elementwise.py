"""Elementwise kernels: one program per (table of ops, input dtype), two kernels per op.

``<op>_c`` handles operands that are all contiguous with the output (after
coalescing dims): ``out[oo + g] = f(a[ao + g], ...)``. ``<op>_s`` handles any
strides (0 for broadcast dims, negative ones too) and offsets, decomposing the
element number over the shape passed as an argument.

An op is a C expression over ``x0, x1, ...`` (the inputs in their compute type,
see ``dialect.base.COMPUTE_TYPES``); the result is converted to the output dtype
by :func:`.common.store`.
"""

from __future__ import annotations

from .common import STRIDED_INDEX, header, load, store


def kernel_pair(dialect, name: str, in_dtypes, out_dtype: str, expr: str) -> str:
    """The contiguous and strided kernels of one op."""
    n_in = len(in_dtypes)
    out_t = dialect.type_name(out_dtype)
    ins = [(dialect.type_name(d), dialect.compute_type(d), d) for d in in_dtypes]

    def reads(index):
        return "".join(f"    {ct} x{i} = {load(d, f'a{i}[{index(i)}]')};\n" for i, (_, ct, d) in enumerate(ins))

    params_c = [dialect.buffer(out_t, "out"), "long oo"]
    for i, (t, _, _) in enumerate(ins):
        params_c += [dialect.buffer(t, f"a{i}", const=True), f"long ao{i}"]
    params_c.append("long n")
    body_c = (
        f"    long g = {dialect.global_id(0)};\n    if (g >= n) return;\n"
        + reads(lambda i: f"ao{i} + g")
        + f"    out[oo + g] = {store(dialect, out_dtype, expr)};"
    )
    params_s = [dialect.buffer(out_t, "out"), "long oo", "dims_t ost"]
    for i, (t, _, _) in enumerate(ins):
        params_s += [dialect.buffer(t, f"a{i}", const=True), f"long ao{i}", f"dims_t ast{i}"]
    params_s += ["dims_t shape", "int ndim", "long n"]
    steps = "        oo += q * ost.v[d];\n" + "".join(f"        ao{i} += q * ast{i}.v[d];\n" for i in range(n_in))
    body_s = (
        f"    long g = {dialect.global_id(0)};\n    if (g >= n) return;\n"
        + STRIDED_INDEX.replace("@STEPS@", steps.rstrip("\n"))
        + reads(lambda i: f"ao{i}")
        + f"    out[oo] = {store(dialect, out_dtype, expr)};"
    )
    return dialect.kernel(f"{name}_c", params_c, body_c) + dialect.kernel(f"{name}_s", params_s, body_s)


def program(dialect, ops: dict, in_dtypes) -> str:
    """One program holding the kernel pairs of ``ops`` (name -> (out dtype, expression)) for ``in_dtypes``."""
    dtypes = set(in_dtypes) | {out for out, _ in ops.values()}
    parts = [header(dialect, sorted(dtypes))]
    for name, (out_dtype, expr) in sorted(ops.items()):
        parts.append(kernel_pair(dialect, name, in_dtypes, out_dtype, expr))
    return "\n".join(parts)
