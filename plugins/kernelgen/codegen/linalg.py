"""Dense factorisations and solvers: one work group per matrix of the batch.

Each kernel but ``lu_det`` runs one work group (``LOCAL`` items) per matrix:
the algorithm walks the columns in order, the group shares the rows (or, for
the substitutions, the right-hand-side columns) and synchronises through
global memory between steps. Factors are written into the contiguous output
(or a workspace) and refined there in place. The inputs are read with their
batch strides (``dims_t``) and row/column strides, so transposed, strided and
broadcast operands need no copy; a transposed operand (``X A = B`` solved as
``Aᵀ Xᵀ = Bᵀ``) is just swapped strides. Sums accumulate in double for
float32 when the device has fp64.

Data-dependent failures (a matrix that is not positive definite, a zero
pivot) are recorded per matrix in ``info`` (the first failing column, 1-based,
as LAPACK's ``info``); the host reads it and hands the call to the CPU kernel,
which raises the backend's error.

* ``chol``: right-looking Cholesky of the lower triangle (``L``, or ``Lᴴ`` through swapped output strides).
* ``lu``: right-looking LU with partial pivoting (the first row of largest magnitude, as LAPACK's
  ``i?amax``) or none; 1-based LAPACK pivots.
* ``lu_unpack``: ``P``, ``L`` and ``U`` of ``A = P L U`` from the compact LU and pivots.
* ``lu_solve``: ``X = A⁻¹ B`` from the compact LU (``mode`` 1: ``B`` is the identity, the inverse).
* ``trsv``: triangular solve by substitution, one right-hand side per work item.
* ``lu_det``: one work item per matrix, the determinant (``mode`` 0) or sign and log-magnitude (1).
* ``geqrf``: Householder QR as LAPACK's ``?geqr2``/``?larfg`` (``beta = -sign(alpha) ||x||``, so the
  reflectors and the signs of ``R``'s diagonal are LAPACK's), reflectors below the diagonal.
* ``orgqr``: the first columns of ``H_1 ... H_k`` (one column per work item, reflectors applied backwards).
* ``triu``: the upper triangle of the first ``m`` rows (``R`` of ``qr``).
"""

from __future__ import annotations

from .common import header

LOCAL = 64

_STRUCT = """typedef struct {
    dims_t bshape;
    dims_t ast;
    dims_t bst;
    long aoff;
    long ars;
    long acs;
    long boff;
    long brs;
    long bcs;
    long m;
    long n;
    long k;
    long xrs;
    long xcs;
    long batch;
    int bndim;
    int upper;
    int unit;
    int pivot;
    int mode;
    int pad;
} la_args_t;

/* The storage offsets of matrix ``g`` of the batch in A and B. */
inline void batch_offsets(const la_args_t* p, long g, long* ab, long* bb) {
    long a = p->aoff, b = p->boff, r = g;
    for (int d = p->bndim - 1; d >= 0; --d) {
        long q = r % p->bshape.v[d];
        r /= p->bshape.v[d];
        a += q * p->ast.v[d];
        b += q * p->bst.v[d];
    }
    *ab = a;
    *bb = b;
}
"""


_REAL_HELPERS = """
inline @K la_ld(@S v) { return (@K)v; }
inline @S la_st(@K v) { return (@S)v; }
inline @K la_mk(@R re) { return re; }
inline @K la_mk2(@R re, @R im) { return re; }
inline @K la_add(@K a, @K b) { return a + b; }
inline @K la_sub(@K a, @K b) { return a - b; }
inline @K la_mul(@K a, @K b) { return a * b; }
inline @K la_div(@K a, @K b) { return a / b; }
inline @K la_cj(@K a) { return a; }
inline @K la_scale(@K a, @R s) { return a * s; }
inline @R la_re(@K a) { return a; }
inline @R la_im(@K a) { return 0; }
inline @R la_abs(@K a) { return fabs(a); }
inline @R la_abs1(@K a) { return fabs(a); }
inline int la_nz(@K a) { return a != 0; }
inline @K la_unit(@K a, @R mag) { return a < 0 ? -1 : 1; }
"""

_COMPLEX_HELPERS = """
inline @K la_mk2(@R re, @R im) { @K z; z.x = re; z.y = im; return z; }
inline @K la_ld(@S v) { return la_mk2((@R)v.x, (@R)v.y); }
inline @S la_st(@K v) { @S z; z.x = (@P)v.x; z.y = (@P)v.y; return z; }
inline @K la_mk(@R re) { return la_mk2(re, 0); }
inline @K la_add(@K a, @K b) { return la_mk2(a.x + b.x, a.y + b.y); }
inline @K la_sub(@K a, @K b) { return la_mk2(a.x - b.x, a.y - b.y); }
inline @K la_mul(@K a, @K b) { return la_mk2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
inline @K la_div(@K a, @K b) {
    @R ar = fabs(b.x), ai = fabs(b.y);
    if (ar >= ai) {
        if (ar == 0 && ai == 0) return la_mk2(a.x / ar, a.y / ar);
        @R rat = b.y / b.x, scl = (@R)1 / (b.x + b.y * rat);
        return la_mk2((a.x + a.y * rat) * scl, (a.y - a.x * rat) * scl);
    }
    @R rat = b.x / b.y, scl = (@R)1 / (b.y + b.x * rat);
    return la_mk2((a.x * rat + a.y) * scl, (a.y * rat - a.x) * scl);
}
inline @K la_cj(@K a) { return la_mk2(a.x, -a.y); }
inline @K la_scale(@K a, @R s) { return la_mk2(a.x * s, a.y * s); }
inline @R la_re(@K a) { return a.x; }
inline @R la_im(@K a) { return a.y; }
inline @R la_abs(@K a) { return hypot(a.x, a.y); }
inline @R la_abs1(@K a) { return fabs(a.x) + fabs(a.y); }
inline int la_nz(@K a) { return a.x != 0 || a.y != 0; }
inline @K la_unit(@K a, @R mag) { return la_mk2(a.x / mag, a.y / mag); }
"""

#: The real part's dtype of each complex dtype.
_PART = {"complex64": "float32", "complex128": "float64"}


def _types(dialect, dtype: str, fp64: bool):
    """Storage, compute and real compute type of ``dtype``, and the helper library (sums in double with fp64)."""
    wide = fp64 or dtype in ("float64", "complex128")
    if dtype in _PART:
        part = dialect.type_name(_PART[dtype])
        real = "double" if wide else part
        k = dialect.type_name("complex128") if wide else dialect.type_name(dtype)
        lib = _COMPLEX_HELPERS.replace("@P", part)
    else:
        real = k = "double" if wide else dialect.compute_type(dtype)
        lib = _REAL_HELPERS
    s = dialect.type_name(dtype)
    lib = lib.replace("@S", s).replace("@K", k).replace("@R", real)
    return s, k, real, lib


def program(dialect, dtype: str, fp64: bool) -> str:
    """The kernels of this module for ``dtype`` (real or complex; sums in double when ``fp64``)."""
    t, K, R, lib = _types(dialect, dtype, fp64)
    rt_store = dialect.type_name(_PART.get(dtype, dtype))
    gb = dialect.global_barrier()
    lb = dialect.barrier()
    gid = dialect.group_id(0)
    lid = f"(long){dialect.local_id(0)}"
    a_in = dialect.buffer(t, "a", const=True)
    args = "la_args_t p"
    X = "x[xb + (I) * p.xrs + (C) * p.xcs]"
    zero, one = "la_st(la_mk(0))", "la_st(la_mk(1))"

    def at(expr: str, i: str, c: str) -> str:
        return expr.replace("(I)", f"({i})").replace("(C)", f"({c})")

    def ld(expr: str, i: str, c: str) -> str:
        return f"la_ld({at(expr, i, c)})"

    chol = f"""    long g = {gid}, lid = {lid}, n = p.n, ab, bb;
    batch_offsets(&p, g, &ab, &bb);
    long xb = g * n * n;
    for (long e = lid; e < n * n; e += {LOCAL}) {{
        long i = e / n, c = e % n;
        {at(X, "i", "c")} = c <= i ? a[ab + i * p.ars + c * p.acs] : {zero};
    }}
    {gb}
    int bad = 0;
    for (long j = 0; j < n; ++j) {{
        {R} d = la_re({ld(X, "j", "j")});
        {gb}
        if (d <= 0) {{
            bad = (int)j + 1;
            break;
        }}
        {R} s = sqrt(d);
        if (lid == 0) {at(X, "j", "j")} = la_st(la_mk(s));
        for (long i = j + 1 + lid; i < n; i += {LOCAL}) {at(X, "i", "j")} = la_st(la_scale({ld(X, "i", "j")}, 1 / s));
        {gb}
        for (long i = j + 1 + lid; i < n; i += {LOCAL}) {{
            {K} l = {ld(X, "i", "j")};
            for (long c = j + 1; c <= i; ++c)
                {at(X, "i", "c")} = la_st(la_sub({ld(X, "i", "c")}, la_mul(l, la_cj({ld(X, "c", "j")}))));
        }}
        {gb}
    }}
    if (p.upper && !bad) {{
        for (long e = lid; e < n * n; e += {LOCAL}) x[xb + e] = la_st(la_cj(la_ld(x[xb + e])));
    }}
    if (lid == 0) info[g] = bad;"""

    LU = "lu[xb + (I) * n + (C)]"
    lu = f"""    {dialect.local_array(R, "sv", LOCAL)}
    {dialect.local_array("long", "si", LOCAL)}
    long g = {gid}, lid = {lid}, m = p.m, n = p.n, kmin = min(m, n), ab, bb;
    batch_offsets(&p, g, &ab, &bb);
    long xb = g * m * n;
    for (long e = lid; e < m * n; e += {LOCAL}) {{
        long i = e / n, c = e % n;
        lu[xb + e] = a[ab + i * p.ars + c * p.acs];
    }}
    {gb}
    int bad = 0;
    for (long j = 0; j < kmin; ++j) {{
        {R} best = -1;
        long bi = j;
        if (p.pivot) {{
            for (long i = j + lid; i < m; i += {LOCAL}) {{
                {R} v = la_abs1({ld(LU, "i", "j")});
                if (v > best) {{
                    best = v;
                    bi = i;
                }}
            }}
        }}
        sv[lid] = best;
        si[lid] = bi;
        {lb}
        for (int s = {LOCAL // 2}; s > 0; s >>= 1) {{
            if (lid < s && (sv[lid + s] > sv[lid] || (sv[lid + s] == sv[lid] && si[lid + s] < si[lid]))) {{
                sv[lid] = sv[lid + s];
                si[lid] = si[lid + s];
            }}
            {lb}
        }}
        long pr = si[0];
        {gb}
        if (lid == 0) piv[g * kmin + j] = (int)(pr + 1);
        if (pr != j) {{
            for (long c = lid; c < n; c += {LOCAL}) {{
                {t} tmp = {at(LU, "j", "c")};
                {at(LU, "j", "c")} = {at(LU, "pr", "c")};
                {at(LU, "pr", "c")} = tmp;
            }}
        }}
        {gb}
        {K} d = {ld(LU, "j", "j")};
        if (!la_nz(d)) {{
            if (!bad) bad = (int)j + 1;
        }} else {{
            for (long i = j + 1 + lid; i < m; i += {LOCAL}) {{
                {K} l = la_div({ld(LU, "i", "j")}, d);
                {at(LU, "i", "j")} = la_st(l);
                for (long c = j + 1; c < n; ++c)
                    {at(LU, "i", "c")} = la_st(la_sub({ld(LU, "i", "c")}, la_mul(l, {ld(LU, "j", "c")})));
            }}
        }}
        {gb}
    }}
    if (lid == 0) info[g] = bad;"""

    unpack = f"""    long g = {gid}, lid = {lid}, m = p.m, n = p.n, kmin = min(m, n);
    long xb = g * m * n;
    long pb = g * m;
    if (lid == 0) {{
        for (long i = 0; i < m; ++i) perm[pb + i] = (int)i;
        for (long i = 0; i < kmin; ++i) {{
            long q = pb + piv[g * kmin + i] - 1;
            int tmp = perm[pb + i];
            perm[pb + i] = perm[q];
            perm[q] = tmp;
        }}
    }}
    {gb}
    for (long c = lid; c < m; c += {LOCAL}) {{
        for (long r = 0; r < m; ++r) pmat[g * m * m + r * m + c] = r == perm[pb + c] ? {one} : {zero};
    }}
    for (long i = lid; i < m; i += {LOCAL}) {{
        for (long c = 0; c < kmin; ++c)
            lmat[g * m * kmin + i * kmin + c] = i > c ? {at(LU, "i", "c")} : (i == c ? {one} : {zero});
    }}
    for (long i = lid; i < kmin; i += {LOCAL}) {{
        for (long c = 0; c < n; ++c) umat[g * kmin * n + i * n + c] = i <= c ? {at(LU, "i", "c")} : {zero};
    }}"""

    LUn = "lu[lb + (I) * n + (C)]"
    solve = f"""    long g = {gid}, lid = {lid}, n = p.n, k = p.k, ab, bb;
    batch_offsets(&p, g, &ab, &bb);
    long lb = g * n * n, xb = g * n * k;
    for (long c = lid; c < k; c += {LOCAL}) {{
        for (long i = 0; i < n; ++i)
            {at(X, "i", "c")} = p.mode == 1 ? (i == c ? {one} : {zero}) : b[bb + i * p.brs + c * p.bcs];
        for (long i = 0; i < n; ++i) {{
            long q = piv[g * n + i] - 1;
            if (q != i) {{
                {t} tmp = {at(X, "i", "c")};
                {at(X, "i", "c")} = {at(X, "q", "c")};
                {at(X, "q", "c")} = tmp;
            }}
        }}
        for (long i = 0; i < n; ++i) {{
            {K} s = {ld(X, "i", "c")};
            for (long r = 0; r < i; ++r) s = la_sub(s, la_mul({ld(LUn, "i", "r")}, {ld(X, "r", "c")}));
            {at(X, "i", "c")} = la_st(s);
        }}
        for (long i = n - 1; i >= 0; --i) {{
            {K} s = {ld(X, "i", "c")};
            for (long r = i + 1; r < n; ++r) s = la_sub(s, la_mul({ld(LUn, "i", "r")}, {ld(X, "r", "c")}));
            {at(X, "i", "c")} = la_st(la_div(s, {ld(LUn, "i", "i")}));
        }}
    }}"""

    A = "a[ab + (I) * p.ars + (C) * p.acs]"
    trsv = f"""    long g = {gid}, lid = {lid}, n = p.n, k = p.k, ab, bb;
    batch_offsets(&p, g, &ab, &bb);
    long xb = g * n * k;
    if (lid == 0) {{
        int bad = 0;
        if (!p.unit) {{
            for (long i = 0; i < n; ++i) {{
                if (!la_nz({ld(A, "i", "i")})) {{
                    bad = (int)i + 1;
                    break;
                }}
            }}
        }}
        info[g] = bad;
    }}
    for (long c = lid; c < k; c += {LOCAL}) {{
        for (long step = 0; step < n; ++step) {{
            long i = p.upper ? n - 1 - step : step;
            {K} s = la_ld(b[bb + i * p.brs + c * p.bcs]);
            long lo = p.upper ? i + 1 : 0, hi = p.upper ? n : i;
            for (long r = lo; r < hi; ++r) s = la_sub(s, la_mul({ld(A, "i", "r")}, {ld(X, "r", "c")}));
            {at(X, "i", "c")} = la_st(p.unit ? s : la_div(s, {ld(A, "i", "i")}));
        }}
    }}"""

    det = f"""    long g = {dialect.global_id(0)};
    if (g >= p.batch) return;
    long n = p.n, xb = g * n * n;
    {K} prod = la_mk(1), sign = la_mk(1);
    {R} logabs = 0;
    int singular = 0;
    for (long i = 0; i < n; ++i) {{
        {K} d = {ld(LU, "i", "i")};
        if (piv[g * n + i] != i + 1) {{
            prod = la_scale(prod, -1);
            sign = la_scale(sign, -1);
        }}
        prod = la_mul(prod, d);
        if (!la_nz(d)) {{
            singular = 1;
        }} else {{
            {R} mag = la_abs(d);
            sign = la_mul(sign, la_unit(d, mag));
            logabs += log(mag);
        }}
    }}
    if (singular) {{
        sign = la_mk(0);
        logabs = -INFINITY;
    }}
    if (isnan(logabs)) sign = la_mk(logabs);
    if (p.mode == 0) {{
        out0[g] = la_st(prod);
    }} else {{
        out0[g] = la_st(sign);
        out1[g] = ({rt_store})logabs;
    }}"""

    QA = "qa[xb + (I) * n + (C)]"
    geqrf = f"""    {dialect.local_array(R, "sv", LOCAL)}
    long g = {gid}, lid = {lid}, m = p.m, n = p.n, kmin = min(m, n), ab, bb;
    batch_offsets(&p, g, &ab, &bb);
    long xb = g * m * n;
    for (long e = lid; e < m * n; e += {LOCAL}) {{
        long i = e / n, c = e % n;
        qa[xb + e] = a[ab + i * p.ars + c * p.acs];
    }}
    {gb}
    for (long j = 0; j < kmin; ++j) {{
        {R} ss = 0;
        for (long i = j + 1 + lid; i < m; i += {LOCAL}) {{
            {K} v = {ld(QA, "i", "j")};
            ss += la_re(v) * la_re(v) + la_im(v) * la_im(v);
        }}
        sv[lid] = ss;
        {lb}
        for (int s = {LOCAL // 2}; s > 0; s >>= 1) {{
            if (lid < s) sv[lid] += sv[lid + s];
            {lb}
        }}
        {R} xnorm = sqrt(sv[0]);
        {K} alpha = {ld(QA, "j", "j")}, tau = la_mk(0);
        {R} ar = la_re(alpha), ai = la_im(alpha);
        {gb}
        if (xnorm != 0 || ai != 0) {{
            {R} beta = -copysign(hypot(hypot(ar, ai), xnorm), ar);
            tau = la_mk2((beta - ar) / beta, -ai / beta);
            {K} scale = la_div(la_mk(1), la_sub(alpha, la_mk(beta)));
            for (long i = j + 1 + lid; i < m; i += {LOCAL})
                {at(QA, "i", "j")} = la_st(la_mul({ld(QA, "i", "j")}, scale));
            if (lid == 0) {at(QA, "j", "j")} = la_st(la_mk(beta));
        }}
        if (lid == 0) tq[g * kmin + j] = la_st(tau);
        {gb}
        if (la_nz(tau)) {{
            {K} ct = la_cj(tau);
            for (long c = j + 1 + lid; c < n; c += {LOCAL}) {{
                {K} w = {ld(QA, "j", "c")};
                for (long i = j + 1; i < m; ++i) w = la_add(w, la_mul(la_cj({ld(QA, "i", "j")}), {ld(QA, "i", "c")}));
                w = la_mul(ct, w);
                {at(QA, "j", "c")} = la_st(la_sub({ld(QA, "j", "c")}, w));
                for (long i = j + 1; i < m; ++i)
                    {at(QA, "i", "c")} = la_st(la_sub({ld(QA, "i", "c")}, la_mul(w, {ld(QA, "i", "j")})));
            }}
        }}
        {gb}
    }}"""

    orgqr = f"""    long g = {gid}, lid = {lid}, m = p.m, qc = p.n, k = p.k, ab, bb;
    batch_offsets(&p, g, &ab, &bb);
    long xb = g * m * qc;
    for (long c = lid; c < qc; c += {LOCAL}) {{
        for (long r = 0; r < m; ++r) {at(X, "r", "c")} = r == c ? {one} : {zero};
        for (long i = k - 1; i >= 0; --i) {{
            {K} tau = la_ld(tv[bb + i * p.bcs]);
            if (!la_nz(tau)) continue;
            {K} w = {ld(X, "i", "c")};
            for (long r = i + 1; r < m; ++r) w = la_add(w, la_mul(la_cj({ld(A, "r", "i")}), {ld(X, "r", "c")}));
            w = la_mul(tau, w);
            {at(X, "i", "c")} = la_st(la_sub({ld(X, "i", "c")}, w));
            for (long r = i + 1; r < m; ++r)
                {at(X, "r", "c")} = la_st(la_sub({ld(X, "r", "c")}, la_mul(w, {ld(A, "r", "i")})));
        }}
    }}"""

    triu = f"""    long g = {gid}, lid = {lid}, rows = p.m, n = p.n, ab, bb;
    batch_offsets(&p, g, &ab, &bb);
    long xb = g * rows * n;
    for (long e = lid; e < rows * n; e += {LOCAL}) {{
        long i = e / n, c = e % n;
        x[xb + e] = i <= c ? {at(A, "i", "c")} : {zero};
    }}"""

    info_buf = dialect.buffer("int", "info")
    piv_buf = dialect.buffer("int", "piv")
    piv_in = dialect.buffer("int", "piv", const=True)
    b_in = dialect.buffer(t, "b", const=True)
    lu_in = dialect.buffer(t, "lu", const=True)
    kernels = [
        ("chol", [dialect.buffer(t, "x"), info_buf, a_in, args], chol),
        ("lu", [dialect.buffer(t, "lu"), piv_buf, info_buf, a_in, args], lu),
        (
            "lu_unpack",
            [
                dialect.buffer(t, "pmat"),
                dialect.buffer(t, "lmat"),
                dialect.buffer(t, "umat"),
                dialect.buffer("int", "perm"),
                lu_in,
                piv_in,
                args,
            ],
            unpack,
        ),
        ("lu_solve", [dialect.buffer(t, "x"), lu_in, piv_in, b_in, args], solve),
        ("trsv", [dialect.buffer(t, "x"), info_buf, a_in, b_in, args], trsv),
        ("lu_det", [dialect.buffer(t, "out0"), dialect.buffer(rt_store, "out1"), lu_in, piv_in, args], det),
        ("geqrf", [dialect.buffer(t, "qa"), dialect.buffer(t, "tq"), a_in, args], geqrf),
        ("orgqr", [dialect.buffer(t, "x"), a_in, dialect.buffer(t, "tv", const=True), args], orgqr),
        ("triu", [dialect.buffer(t, "x"), a_in, args], triu),
    ]
    dtypes = [dtype] + (["float64"] if R == "double" else [])
    source = "".join(dialect.kernel(name, ps, body) for name, ps, body in kernels)
    return header(dialect, dtypes) + _STRUCT + lib + source
