"""Complex arithmetic for generated kernels: a helper library over two-component vectors, and the complex
reduction and matrix-multiply templates.

complex64 is stored as ``float2`` and complex128 as ``double2`` (``.x`` the real part, ``.y`` the imaginary
part). :func:`library` renders the helpers for one real type; every helper is named ``owc_<op>_<s>`` with
``s`` = ``f`` (float) or ``d`` (double). The algorithms are NumPy's: multiplication is the textbook formula,
division NumPy's scaled (Smith) algorithm, ``abs`` is ``hypot``, ``pow`` squares for small integer exponents
and is ``exp(b log a)`` otherwise, and the inverse functions use Kahan's formulas, whose branch cuts follow the
sign of a zero imaginary part as C99 does. A complex value is built through ``owc_make_<s>`` (component stores),
so the library needs no dialect-specific vector literal.
"""

from __future__ import annotations

from .common import EW_STRUCT, header, load
from .elementwise import contiguous_kernel, strided_kernel

#: Suffix and component type of the helpers for each complex dtype.
SUFFIX = {"complex64": "f", "complex128": "d"}
REAL = {"f": "float", "d": "double"}

_LIBRARY = """
inline @C owc_make_@s(@T re, @T im) { @C r; r.x = re; r.y = im; return r; }
inline @C owc_conj_@s(@C z) { return owc_make_@s(z.x, -z.y); }
inline @C owc_neg_@s(@C z) { return owc_make_@s(-z.x, -z.y); }
inline @C owc_add_@s(@C a, @C b) { return owc_make_@s(a.x + b.x, a.y + b.y); }
inline @C owc_sub_@s(@C a, @C b) { return owc_make_@s(a.x - b.x, a.y - b.y); }
inline @C owc_muli_@s(@C z) { return owc_make_@s(-z.y, z.x); }
inline @C owc_mulmi_@s(@C z) { return owc_make_@s(z.y, -z.x); }
inline @C owc_mul_@s(@C a, @C b) { return owc_make_@s(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
inline @C owc_scale_@s(@C z, @T k) { return owc_make_@s(k * z.x, k * z.y); }
inline @T owc_abs_@s(@C z) { return hypot(z.x, z.y); }
inline @T owc_arg_@s(@C z) { return atan2(z.y, z.x); }
inline int owc_nonzero_@s(@C z) { return z.x != 0 || z.y != 0; }
inline @C owc_div_@s(@C a, @C b) {
    @T ar = fabs(b.x), ai = fabs(b.y);
    if (ar >= ai) {
        if (ar == 0 && ai == 0) return owc_make_@s(a.x / ar, a.y / ar);
        @T rat = b.y / b.x, scl = (@T)1 / (b.x + b.y * rat);
        return owc_make_@s((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
    }
    @T rat = b.x / b.y, scl = (@T)1 / (b.y + b.x * rat);
    return owc_make_@s((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
inline @C owc_exp_@s(@C z) {
    if (isinf(z.x) && isfinite(z.y)) {
        if (z.y == 0) return owc_make_@s(z.x > 0 ? z.x : 0, z.y);
        @T e = z.x > 0 ? z.x : 0;
        return owc_make_@s(e * cos(z.y), e * sin(z.y));
    }
    if (isnan(z.x) && z.y == 0) return z;
    @T e = exp(z.x);
    return owc_make_@s(e * cos(z.y), e * sin(z.y));
}
inline @C owc_sigmoid_@s(@C z) {
    return owc_div_@s(owc_make_@s(1, 0), owc_add_@s(owc_make_@s(1, 0), owc_exp_@s(owc_neg_@s(z))));
}
inline @C owc_log_@s(@C z) { return owc_make_@s(log(hypot(z.x, z.y)), atan2(z.y, z.x)); }
inline @C owc_sqrt_@s(@C z) {
    @T x = z.x, y = z.y;
    if (x == 0 && y == 0) return owc_make_@s(0, y);
    if (isinf(y)) return owc_make_@s((@T)INFINITY, y);
    if (isnan(x)) return owc_make_@s(x, (y - y) / (y - y));
    if (isinf(x)) {
        if (x > 0) return owc_make_@s(x, isnan(y) ? y : copysign((@T)0, y));
        return owc_make_@s(isnan(y) ? y : 0, copysign((@T)INFINITY, y));
    }
    @T t = sqrt((fabs(x) + hypot(x, y)) * (@T)0.5);
    if (x >= 0) return owc_make_@s(t, y / (2 * t));
    return owc_make_@s(fabs(y) / (2 * t), copysign(t, y));
}
inline @C owc_sinh_@s(@C z) { return owc_make_@s(sinh(z.x) * cos(z.y), cosh(z.x) * sin(z.y)); }
inline @C owc_cosh_@s(@C z) { return owc_make_@s(cosh(z.x) * cos(z.y), sinh(z.x) * sin(z.y)); }
inline @C owc_tanh_@s(@C z) {
    @T x = z.x, y = z.y;
    if (isnan(x)) return owc_make_@s(x, y == 0 ? y : x);
    if (fabs(x) >= (@T)22) {
        @T e = exp(-2 * fabs(x));
        return owc_make_@s(copysign((@T)1, x), isfinite(y) ? 4 * sin(y) * cos(y) * e : y - y);
    }
    @T t = tan(y), beta = 1 + t * t, s = sinh(x), rho = sqrt(1 + s * s), den = 1 + beta * s * s;
    return owc_make_@s(beta * rho * s / den, t / den);
}
inline @C owc_sin_@s(@C z) { return owc_mulmi_@s(owc_sinh_@s(owc_muli_@s(z))); }
inline @C owc_cos_@s(@C z) { return owc_cosh_@s(owc_muli_@s(z)); }
inline @C owc_tan_@s(@C z) { return owc_mulmi_@s(owc_tanh_@s(owc_muli_@s(z))); }
inline @C owc_asin_@s(@C z) {
    @C a = owc_sqrt_@s(owc_make_@s(1 - z.x, -z.y)), b = owc_sqrt_@s(owc_make_@s(1 + z.x, z.y));
    return owc_make_@s(atan2(z.x, a.x * b.x - a.y * b.y), asinh(a.x * b.y - a.y * b.x));
}
inline @C owc_acos_@s(@C z) {
    @C a = owc_sqrt_@s(owc_make_@s(1 - z.x, -z.y)), b = owc_sqrt_@s(owc_make_@s(1 + z.x, z.y));
    return owc_make_@s(2 * atan2(a.x, b.x), asinh(b.x * a.y - b.y * a.x));
}
inline @C owc_acosh_@s(@C z) {
    @C a = owc_sqrt_@s(owc_make_@s(z.x - 1, z.y)), b = owc_sqrt_@s(owc_make_@s(z.x + 1, z.y));
    return owc_make_@s(asinh(a.x * b.x + a.y * b.y), 2 * atan2(a.y, b.x));
}
inline @C owc_asinh_@s(@C z) { return owc_mulmi_@s(owc_asin_@s(owc_muli_@s(z))); }
inline @C owc_atanh_@s(@C z) {
    @T x = z.x, y = z.y, d = (1 - x) * (1 - x) + y * y;
    return owc_make_@s((@T)0.25 * log1p(4 * x / d), (@T)0.5 * atan2(2 * y, (1 - x) * (1 + x) - y * y));
}
inline @C owc_atan_@s(@C z) { return owc_mulmi_@s(owc_atanh_@s(owc_muli_@s(z))); }
inline @C owc_expm1_@s(@C z) {
    @T h = sin(z.y / 2);
    return owc_make_@s(expm1(z.x) * cos(z.y) - 2 * h * h, exp(z.x) * sin(z.y));
}
inline @C owc_log1p_@s(@C z) {  /* PyTorch's form: |1 + z|^2 - 1 without the cancellation for small |z| */
    @T x = z.x, y = z.y, theta = atan2(y, x + 1);
    if (hypot(x, y) < (@T)0.5) {
        @T r = x * (2 + x) + y * y;
        return owc_make_@s(r == 0 ? x : (@T)0.5 * log1p(r), theta);
    }
    return owc_make_@s(log(hypot(x + 1, y)), theta);
}
inline @C owc_pow_@s(@C a, @C b) {
    if (b.x == 0 && b.y == 0) return owc_make_@s(1, 0);
    if (a.x == 0 && a.y == 0) return (b.x > 0 && b.y == 0) ? owc_make_@s(0, 0) : owc_make_@s(NAN, NAN);
    if (b.y == 0 && b.x == rint(b.x) && fabs(b.x) < 100) {
        int n = (int)fabs(b.x);
        @C r = owc_make_@s(1, 0), p = a;
        if (n == 1) r = a;
        else if (n == 2) r = owc_mul_@s(a, a);
        else if (n == 3) r = owc_mul_@s(a, owc_mul_@s(a, a));
        else {
            for (int mask = 1;; mask <<= 1) {
                if (n & mask) r = owc_mul_@s(r, p);
                if (n < (mask << 1)) break;
                p = owc_mul_@s(p, p);
            }
        }
        return b.x < 0 ? owc_div_@s(owc_make_@s(1, 0), r) : r;
    }
    return owc_exp_@s(owc_mul_@s(b, owc_log_@s(a)));
}
inline @C owc_sgn_@s(@C z) {
    @T m = hypot(z.x, z.y);
    return m == 0 ? owc_make_@s(0, 0) : owc_div_@s(z, owc_make_@s(m, 0));
}
inline @C owc_sinc_@s(@C z) {
    if (z.x == 0 && z.y == 0) return owc_make_@s(1, 0);
    @C w = owc_scale_@s(z, (@T)3.14159265358979323846);
    return owc_div_@s(owc_sin_@s(w), w);
}
"""

_WIDEN = """
inline @D owc_widen(@F z) { return owc_make_d((double)z.x, (double)z.y); }
inline @F owc_narrow(@D z) { return owc_make_f((float)z.x, (float)z.y); }
"""


def library(dialect, suffix: str) -> str:
    """The helpers for the component type of ``suffix`` (``f``: float2, ``d``: double2)."""
    t = REAL[suffix]
    c = dialect.type_name("complex64" if suffix == "f" else "complex128")
    return _LIBRARY.replace("@T", t).replace("@C", c).replace("@s", suffix)


def libraries(dialect, dtypes, wide: bool) -> str:
    """The helpers the complex ``dtypes`` need; ``wide``: complex64 also gets double helpers and converters."""
    suffixes = {SUFFIX[d] for d in dtypes if d in SUFFIX}
    if wide and "f" in suffixes:
        suffixes.add("d")
    text = "".join(library(dialect, s) for s in sorted(suffixes, reverse=True))
    if wide and "f" in suffixes:
        text += _WIDEN.replace("@F", dialect.type_name("complex64")).replace("@D", dialect.type_name("complex128"))
    return text


def prelude(dialect, dtypes, wide: bool) -> str:
    """Pragmas, the dims struct and the complex helpers a program over ``dtypes`` needs."""
    needed = set(dtypes) | ({"float64"} if wide else set())
    return header(dialect, sorted(needed)) + libraries(dialect, dtypes, wide)


def elementwise_program(dialect, ops: dict, in_dtypes, contiguous: bool = False, wide: bool = False) -> str:
    """``codegen.elementwise.program`` with the complex helpers: the same kernels, names and opcodes.

    ``ops`` maps a name to (output dtype, expression over ``x0, x1``); ``wide``: complex64 expressions may
    call the double helpers and ``owc_widen``/``owc_narrow``.
    """
    dtypes = set(in_dtypes) | {out for out, _ in ops.values()}
    parts = [prelude(dialect, dtypes, wide) + ("" if contiguous else EW_STRUCT)]
    by_out: dict = {}
    for name, (out_dtype, expr) in sorted(ops.items()):
        if contiguous:
            parts.append(contiguous_kernel(dialect, name, in_dtypes, out_dtype, expr))
        by_out.setdefault(out_dtype, []).append(expr)
    if not contiguous:
        for out_dtype, exprs in sorted(by_out.items()):
            parts.append(strided_kernel(dialect, in_dtypes, out_dtype, exprs))
    return "\n".join(parts)


# -- reductions ----------------------------------------------------------------------------------------------

#: op -> (combine expression over the helper suffix ``{s}`` and ``a, b``, identity as (re, im)).
COMBINE = {"sum": ("owc_add_{s}(a, b)", ("0", "0")), "prod": ("owc_mul_{s}(a, b)", ("1", "0"))}


def reduction_kernel(dialect, name: str, op: str, in_dtype: str, out_dtype: str, local: int) -> str:
    """A complex ``sum``/``prod`` over a set of dims, with the parameters of ``codegen.reduction``'s kernels.

    ``in_dtype`` may be real (its values enter with a zero imaginary part); the accumulator is the
    complex ``out_dtype``'s type.
    """
    s = SUFFIX[out_dtype]
    acc = dialect.type_name(out_dtype)
    combine = COMBINE[op][0].format(s=s)
    ident = f"owc_make_{s}({', '.join(COMBINE[op][1])})"
    if in_dtype in SUFFIX:
        value = f"owc_make_{s}(v.x, v.y)"
    else:
        value = f"owc_make_{s}({load(in_dtype, 'v')}, 0)"
    params = [
        dialect.buffer(acc, "out"),
        "long oo",
        "dims_t ost",
        "dims_t oshape",
        "int ondim",
        dialect.buffer(dialect.type_name(in_dtype), "a", const=True),
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
    {acc} acc = {ident};
    long lo = c * chunk;
    long hi = min(R, lo + chunk);
    for (long j = lo + lid; j < hi; j += {local}) {{
        long idx = ai, s = j;
        for (int d = rndim - 1; d >= 0; --d) {{
            long q = s % rshape.v[d];
            s /= rshape.v[d];
            idx += q * rst.v[d];
        }}
        {dialect.type_name(in_dtype)} v = a[idx];
        {acc} a = acc, b = {value};
        acc = {combine};
    }}
    scratch[lid] = acc;
    {dialect.barrier()}
    for (int s = {local // 2}; s > 0; s >>= 1) {{
        if (lid < s) {{
            {acc} a = scratch[lid], b = scratch[lid + s];
            scratch[lid] = {combine};
        }}
        {dialect.barrier()}
    }}
    if (lid == 0) out[oi] = scratch[0];"""
    return dialect.kernel(name, params, body)


def reduction_program(dialect, in_dtype: str, out_dtype: str, local: int) -> str:
    """``sum``/``prod`` kernels (``<op>_main``, ``<op>_first``, ``<op>_part``) into the complex ``out_dtype``."""
    parts = [prelude(dialect, [in_dtype, out_dtype], False)]
    for op in COMBINE:
        parts.append(reduction_kernel(dialect, f"{op}_main", op, in_dtype, out_dtype, local))
        parts.append(reduction_kernel(dialect, f"{op}_first", op, in_dtype, out_dtype, local))
        parts.append(reduction_kernel(dialect, f"{op}_part", op, out_dtype, out_dtype, local))
    return "".join(parts)


# -- matrix multiply -----------------------------------------------------------------------------------------


def matmul_program(dialect, dtype: str) -> str:
    """``bmm``: one work item per output element of a batch of complex products (any operand strides).

    The parameters are ``codegen.matmul``'s; the launch is 1-D over ``batch * M * N`` items.
    """
    s, t = SUFFIX[dtype], dialect.type_name(dtype)
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
        "long total",
    ]
    body = f"""    long g = {dialect.global_id(0)};
    if (g >= total) return;
    long col = g % N, row = (g / N) % M, bt = g / (M * N);
    long ai = ao + bt * abs + row * ars, bi = bo + bt * bbs + col * bcs;
    {t} acc = owc_make_{s}(0, 0);
    for (long k = 0; k < K; ++k) {{
        {t} p = owc_mul_{s}(a[ai + k * acs], b[bi + k * brs]);
        acc.x += p.x;
        acc.y += p.y;
    }}
    c[g] = acc;"""
    return prelude(dialect, [dtype], False) + dialect.kernel("bmm", params, body)
