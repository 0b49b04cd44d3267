"""FFT kernels: a direct DFT and one radix-2 Stockham stage, both along one dim of a batch of lines.

A transform of several dims is a sequence of one-dim passes (``kernels/fft.py``).
A pass reads lines of ``n`` points along one dim of its input and writes ``nout``
points along the same dim of its output; the other dims (the *batch* of lines,
shape ``bshape``) have their own strides in input and output, so views of any
layout are read and written in place. Every scalar travels in one by-value
struct (``fft_args_t``): setting a kernel argument costs as much as a launch.

Buffers are declared as arrays of the real storage type and a complex element
``e`` is read at ``2e, 2e + 1``, so one kernel serves real input (``r2c``),
complex input and the half spectrum of ``c2r`` (``inmode``), and complex or
real output (``outmode``). Arithmetic and twiddles are in the real compute type
(double for float32 when the device has fp64). The ``twiddles`` kernel fills a
table of ``(cos, sin)(2 pi r / n)`` through ``cospi``/``sinpi`` of exact fractions
(no argument-reduction error on long lines); the transforms index it with
``j k mod n``.

* ``dft``: one work item per output point, ``O(n)`` each (any ``n``).
* ``stockham``: one radix-2 stage of the self-sorting (Stockham) FFT, one work
  item per butterfly; ``log2 n`` launches transform a power-of-two line, the
  first reading the input (any ``inmode``), the last writing the output.
* ``stockham_local``: every stage of a power-of-two line of at most ``LOCAL_MAX``
  points in one launch, one work group per line, ping-ponging in local memory.
* ``bs_pre``, ``bs_filter``, ``bs_mul``, ``bs_post``: Bluestein's chirp-z
  transform of a long line of any length ``n`` as a cyclic convolution of
  power-of-two length ``M >= 2n - 1`` (Stockham stages forward and backward).
"""

from __future__ import annotations

from .common import header

#: Work-group size of ``stockham_local`` and the longest line it holds in local memory.
LOCAL = 64
LOCAL_MAX = 1024

#: ``inmode``: complex input; real input; a half spectrum extended by Hermitian symmetry (``c2r``).
IN_COMPLEX, IN_REAL, IN_HALF = 0, 1, 2
#: ``outmode``: complex output; the real part only (``c2r``).
OUT_COMPLEX, OUT_REAL = 0, 1

_STRUCT = """typedef struct {{
    long ioff;
    long ooff;
    dims_t bshape;
    dims_t ist;
    dims_t ost;
    long is;
    long os;
    long n;
    long nin;
    long nout;
    long ns;
    long total;
    {rl} scale;
    int bndim;
    int inmode;
    int outmode;
    int sign;
}} fft_args_t;

typedef struct {{ {rl} re, im; }} cpx;

inline cpx cpx_make({rl} re, {rl} im) {{ cpx z; z.re = re; z.im = im; return z; }}
inline cpx cpx_add(cpx a, cpx b) {{ return cpx_make(a.re + b.re, a.im + b.im); }}
inline cpx cpx_sub(cpx a, cpx b) {{ return cpx_make(a.re - b.re, a.im - b.im); }}
inline cpx cpx_mul(cpx a, cpx b) {{ return cpx_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }}

/* exp(sign * 2 pi i r / n) from the table of (cos, sin)(2 pi r / n), 0 <= r < n. */
inline cpx twiddle({gbuf_tw}, long r, int sign) {{
    return cpx_make(tw[2 * r], ({rl})sign * tw[2 * r + 1]);
}}

/* The storage offsets (in elements) of line ``line`` in the input and the output. */
inline void line_offsets(const fft_args_t* p, long line, long* ib, long* ob) {{
    long i = p->ioff, o = p->ooff, r = line;
    for (int d = p->bndim - 1; d >= 0; --d) {{
        long q = r % p->bshape.v[d];
        r /= p->bshape.v[d];
        i += q * p->ist.v[d];
        o += q * p->ost.v[d];
    }}
    *ib = i;
    *ob = o;
}}

/* Point ``j`` (0 <= j < n) of the line starting at ``ib``; points at or beyond ``nin`` are zero. */
inline cpx load_point({gbuf_c}, const fft_args_t* p, long ib, long j) {{
    if (p->inmode == {IN_REAL}) {{
        return j < p->nin ? cpx_make(({rl})x[ib + j * p->is], 0) : cpx_make(0, 0);
    }}
    long h = j;
    int mirror = 0;
    if (p->inmode == {IN_HALF} && 2 * j > p->n) {{
        h = p->n - j;
        mirror = 1;
    }}
    if (h >= p->nin) return cpx_make(0, 0);
    long e = 2 * (ib + h * p->is);
    cpx v = cpx_make(({rl})x[e], ({rl})x[e + 1]);
    if (p->inmode == {IN_HALF}) {{
        if (h == 0 || 2 * h == p->n) v.im = 0;
        if (mirror) v.im = -v.im;
    }}
    return v;
}}

/* Write point ``k`` of the output line starting at ``ob`` (scaled; only points below ``nout``). */
inline void store_point({gbuf}, const fft_args_t* p, long ob, long k, cpx v) {{
    if (k >= p->nout) return;
    if (p->outmode == {OUT_REAL}) {{
        y[ob + k * p->os] = ({t})(v.re * p->scale);
        return;
    }}
    long e = 2 * (ob + k * p->os);
    y[e] = ({t})(v.re * p->scale);
    y[e + 1] = ({t})(v.im * p->scale);
}}
"""


def program(dialect, dtype: str, fp64: bool) -> str:
    """The ``dft`` and ``stockham`` kernels for real dtype ``dtype`` (float32 computes in double when ``fp64``)."""
    t = dialect.type_name(dtype)
    rl = "double" if fp64 or dtype == "float64" else dialect.compute_type(dtype)
    helpers = _STRUCT.format(
        rl=rl,
        t=t,
        gbuf=dialect.buffer(t, "y"),
        gbuf_c=dialect.buffer(t, "x", const=True),
        gbuf_tw=dialect.buffer(rl, "tw", const=True),
        cospi=dialect.math("cospi"),
        sinpi=dialect.math("sinpi"),
        IN_REAL=IN_REAL,
        IN_HALF=IN_HALF,
        OUT_REAL=OUT_REAL,
    )
    params = [
        dialect.buffer(t, "y"),
        dialect.buffer(t, "x", const=True),
        dialect.buffer(rl, "tw", const=True),
        "fft_args_t p",
    ]
    table = f"""    long r = {dialect.global_id(0)};
    if (r >= n) return;
    {rl} f = ({rl})(2 * r) / ({rl})n;
    tw[2 * r] = {dialect.math("cospi")}(f);
    tw[2 * r + 1] = {dialect.math("sinpi")}(f);"""
    dft = f"""    long g = {dialect.global_id(0)};
    if (g >= p.total) return;
    long k = g % p.nout, line = g / p.nout, ib, ob;
    line_offsets(&p, line, &ib, &ob);
    cpx acc = cpx_make(0, 0);
    long last = p.inmode == {IN_HALF} ? p.n : min(p.n, p.nin);
    long r = 0;
    for (long j = 0; j < last; ++j) {{
        acc = cpx_add(acc, cpx_mul(load_point(x, &p, ib, j), twiddle(tw, r, p.sign)));
        r += k;
        if (r >= p.n) r -= p.n;
    }}
    store_point(y, &p, ob, k, acc);"""
    stage = f"""    long g = {dialect.global_id(0)};
    if (g >= p.total) return;
    long hn = p.n / 2;
    long j = g % hn, line = g / hn, ib, ob;
    line_offsets(&p, line, &ib, &ob);
    long k = j % p.ns;
    cpx v0 = load_point(x, &p, ib, j);
    cpx v1 = cpx_mul(load_point(x, &p, ib, j + hn), twiddle(tw, k * (p.n / (2 * p.ns)), p.sign));
    long d = (j / p.ns) * p.ns * 2 + k;
    store_point(y, &p, ob, d, cpx_add(v0, v1));
    store_point(y, &p, ob, d + p.ns, cpx_sub(v0, v1));"""
    ping = 2 * LOCAL_MAX
    local_fft = f"""    {dialect.local_array(rl, "sre", ping)}
    {dialect.local_array(rl, "sim", ping)}
    long line = {dialect.group_id(0)}, lid = {dialect.local_id(0)}, ib, ob;
    line_offsets(&p, line, &ib, &ob);
    long n = p.n, hn = n / 2, cur = 0;
    for (long j = lid; j < n; j += {LOCAL}) {{
        cpx v = load_point(x, &p, ib, j);
        sre[j] = v.re;
        sim[j] = v.im;
    }}
    {dialect.barrier()}
    for (long ns = 1; ns < n; ns *= 2) {{
        long nxt = {LOCAL_MAX} - cur;
        for (long j = lid; j < hn; j += {LOCAL}) {{
            long k = j % ns, d = (j / ns) * ns * 2 + k;
            cpx v0 = cpx_make(sre[cur + j], sim[cur + j]);
            cpx v1 = cpx_mul(cpx_make(sre[cur + j + hn], sim[cur + j + hn]), twiddle(tw, k * (n / (2 * ns)), p.sign));
            sre[nxt + d] = v0.re + v1.re;
            sim[nxt + d] = v0.im + v1.im;
            sre[nxt + d + ns] = v0.re - v1.re;
            sim[nxt + d + ns] = v0.im - v1.im;
        }}
        {dialect.barrier()}
        cur = nxt;
    }}
    for (long k = lid; k < p.nout; k += {LOCAL}) store_point(y, &p, ob, k, cpx_make(sre[cur + k], sim[cur + k]));"""
    # Bluestein: X_k = c_k sum_j (x_j c_j) conj(c_(k-j)), c_j = exp(sign i pi j^2 / n) (``tw`` has 2n roots),
    # the sum a cyclic convolution of length M = p.ns (a power of two >= 2n - 1) done with the stages above.
    bs_pre = f"""    long g = {dialect.global_id(0)};
    if (g >= p.total) return;
    long M = p.ns, j = g % M, line = g / M, ib, ob;
    line_offsets(&p, line, &ib, &ob);
    cpx v = cpx_make(0, 0);
    if (j < p.n) v = cpx_mul(load_point(x, &p, ib, j), twiddle(tw, (j * j) % (2 * p.n), p.sign));
    y[2 * g] = ({t})v.re;
    y[2 * g + 1] = ({t})v.im;"""
    bs_filter = f"""    long j = {dialect.global_id(0)}, M = p.ns;
    if (j >= M) return;
    long m = j < p.n ? j : (j > M - p.n ? M - j : -1);
    cpx v = m >= 0 ? twiddle(tw, (m * m) % (2 * p.n), -p.sign) : cpx_make(0, 0);
    y[2 * j] = ({t})v.re;
    y[2 * j + 1] = ({t})v.im;"""
    bs_mul = f"""    long g = {dialect.global_id(0)};
    if (g >= p.total) return;
    long j = g % p.ns;
    cpx v = cpx_mul(cpx_make(y[2 * g], y[2 * g + 1]), cpx_make(x[2 * j], x[2 * j + 1]));
    y[2 * g] = ({t})v.re;
    y[2 * g + 1] = ({t})v.im;"""
    bs_post = f"""    long g = {dialect.global_id(0)};
    if (g >= p.total) return;
    long M = p.ns, k = g % p.nout, line = g / p.nout, ib, ob;
    line_offsets(&p, line, &ib, &ob);
    long e = 2 * (line * M + k);
    {rl} inv = ({rl})1 / ({rl})M;
    cpx v = cpx_mul(cpx_make(x[e] * inv, x[e + 1] * inv), twiddle(tw, (k * k) % (2 * p.n), p.sign));
    store_point(y, &p, ob, k, v);"""
    dtypes = [dtype] + (["float64"] if rl == "double" else [])
    return (
        header(dialect, dtypes)
        + helpers
        + dialect.kernel("dft", params, dft)
        + dialect.kernel("stockham", params, stage)
        + dialect.kernel("stockham_local", params, local_fft)
        + dialect.kernel("twiddles", [dialect.buffer(rl, "tw"), "long n"], table)
        + dialect.kernel("bs_pre", params, bs_pre)
        + dialect.kernel("bs_filter", params, bs_filter)
        + dialect.kernel("bs_mul", params, bs_mul)
        + dialect.kernel("bs_post", params, bs_post)
    )
