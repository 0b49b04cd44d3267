"""Hand-written C kernels for host memory: row kernels, reductions and elementwise loops, float32 and float64.

The generator's kernels (:mod:`opweave_kernelgen.kernels`) follow the work-item model every C-like
device shares; on the host CPU that model costs a function call per item. These kernels are plain
loops over host pointers instead, written for the compiler's vectoriser (``omp simd``) and split
across the cores with OpenMP above :data:`PARALLEL_MIN` elements of work, so tiny calls never pay
for waking threads, and only while the host has a core free for each thread (a busy host, read from
``/proc/loadavg``, makes them run on one: a parallel region would wait for a core at every fork and
join). Results do not depend on the thread count. Any device whose memory
is host memory can call them on its buffers' addresses (the CPU backend passes NumPy buffers).

Where the C library has vector variants of ``expf``, ``tanhf``, ``erff``... (glibc's ``libmvec``),
the source declares them ``omp declare simd`` so the loops vectorise; elsewhere it is built without
them (scalar calls, same results to the library's accuracy). Compiled like
:class:`~opweave_kernelgen.c_runtime.CRuntime`'s programs (``$CC``, ``-O3 -march=native -fopenmp``)
and cached in the same disk cache, keyed on source, compiler and flags.

Every kernel returns nothing and writes only its output; see :data:`DECLARATIONS` for the C
signatures. Integer codes (``op``) are the indices in :data:`UNARY`, :data:`BINARY`, :data:`REDUCE`.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading

from .c_runtime import FLAGS, compiler
from .runtime import cache_dir, cache_key

#: Elements of work from which a kernel runs on every core.
PARALLEL_MIN = 1 << 15

#: unary kernels, in ``op`` order
UNARY = ("exp", "expm1", "log", "log1p", "tanh", "sigmoid", "erf", "sqrt", "gelu", "gelu_tanh", "silu", "relu")
#: binary kernels, in ``op`` order
BINARY = ("add", "sub", "mul", "div")
#: reductions, in ``op`` order (``sqdev``: sum of squared deviations from a per-output centre)
REDUCE = ("sum", "amax", "amin", "sqdev")

_MVEC = r"""
#ifdef OW_MVEC
#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
float expm1f(float);
#pragma omp declare simd notinbranch
float logf(float);
#pragma omp declare simd notinbranch
float log1pf(float);
#pragma omp declare simd notinbranch
float tanhf(float);
#pragma omp declare simd notinbranch
float erff(float);
#pragma omp declare simd notinbranch
double exp(double);
#pragma omp declare simd notinbranch
double expm1(double);
#pragma omp declare simd notinbranch
double log(double);
#pragma omp declare simd notinbranch
double log1p(double);
#pragma omp declare simd notinbranch
double tanh(double);
#pragma omp declare simd notinbranch
double erf(double);
#endif
"""

_PRELUDE = (
    r"""
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <omp.h>
"""
    + _MVEC
    + rf"""
#define OW_PAR_MIN {PARALLEL_MIN}L
/* Whether other processes keep the cores busy: more threads ready to run than cores + 1 now, or a
   one-minute load average above cores + 1 (the snapshot alone flickers). Then a parallel region would
   wait for a core at every fork and join, so kernels run on one thread. Read from /proc/loadavg at
   most every 100 ms; elsewhere never busy. */
static long ow_busy_at_ms;
static int ow_busy;
static int ow_host_busy(void) {{
#ifdef __linux__
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    long now = ts.tv_sec * 1000L + ts.tv_nsec / 1000000L + 1;
    if (now - __atomic_load_n(&ow_busy_at_ms, __ATOMIC_RELAXED) < 100)
        return __atomic_load_n(&ow_busy, __ATOMIC_RELAXED);
    __atomic_store_n(&ow_busy_at_ms, now, __ATOMIC_RELAXED);
    int busy = 0, running = 0, total = 0;
    double l1, l5, l15;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {{
        if (fscanf(f, "%lf %lf %lf %d/%d", &l1, &l5, &l15, &running, &total) == 5)
            busy = running > omp_get_num_procs() + 1 || l1 > omp_get_num_procs() + 1;
        fclose(f);
    }}
    __atomic_store_n(&ow_busy, busy, __ATOMIC_RELAXED);
    return busy;
#else
    return 0;
#endif
}}
static int ow_threads(long work) {{
    if (work < OW_PAR_MIN) return 1;
    int n = omp_get_max_threads();
    return n > 1 && ow_host_busy() ? 1 : n;
}}
static double ow_combine(int op, double a, double b) {{
    if (op == 0 || op == 3) return a + b;
    if (a != a || b != b) return NAN;
    return op == 1 ? (b > a ? b : a) : (b < a ? b : a);
}}

"""
)

# One template, instantiated per dtype: $T the element type, $S the suffix, $F the math-function suffix
# ("f" for float), $A the accumulator (double for both).
_TEMPLATE = r"""
/* ---- $T ---- */

static void ow_softmax_row_$S(const $T *restrict x, $T *restrict y, long n, int log_) {
    $T m = -INFINITY;
    #pragma omp simd reduction(max:m)
    for (long i = 0; i < n; i++) m = x[i] > m ? x[i] : m;
    double s = 0;
    if (log_) {
        #pragma omp simd reduction(+:s)
        for (long i = 0; i < n; i++) s += exp$F(x[i] - m);
        $T lse = ($T)log(s);
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = (x[i] - m) - lse;
    } else {
        #pragma omp simd reduction(+:s)
        for (long i = 0; i < n; i++) { $T e = exp$F(x[i] - m); y[i] = e; s += e; }
        $T d = ($T)s;
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = y[i] / d;
    }
}

/* softmax / log_softmax of x viewed as (outer, n, inner) along n; y may not alias x */
void ow_softmax_$S(const $T *x, $T *y, long outer, long n, long inner, int log_) {
    int nt = ow_threads(outer * n * inner);
    if (inner == 1 && nt == 1) {  /* no parallel region at all: entering one costs more than a tiny softmax */
        for (long o = 0; o < outer; o++) ow_softmax_row_$S(x + o * n, y + o * n, n, log_);
        return;
    }
    if (inner == 1) {
        #pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
        for (long o = 0; o < outer; o++) ow_softmax_row_$S(x + o * n, y + o * n, n, log_);
        return;
    }
    #pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (long o = 0; o < outer; o++) {
        const $T *xo = x + o * n * inner;
        $T *yo = y + o * n * inner;
        $T *m = malloc(inner * sizeof($T));
        double *s = calloc(inner, sizeof(double));
        for (long j = 0; j < inner; j++) m[j] = -INFINITY;
        for (long k = 0; k < n; k++) {
            const $T *r = xo + k * inner;
            #pragma omp simd
            for (long j = 0; j < inner; j++) m[j] = r[j] > m[j] ? r[j] : m[j];
        }
        for (long k = 0; k < n; k++) {
            const $T *r = xo + k * inner;
            $T *w = yo + k * inner;
            #pragma omp simd
            for (long j = 0; j < inner; j++) { $T e = exp$F(r[j] - m[j]); s[j] += e; if (!log_) w[j] = e; }
        }
        for (long k = 0; k < n; k++) {
            const $T *r = xo + k * inner;
            $T *w = yo + k * inner;
            if (log_) {
                #pragma omp simd
                for (long j = 0; j < inner; j++) w[j] = (r[j] - m[j]) - ($T)log(s[j]);
            } else {
                #pragma omp simd
                for (long j = 0; j < inner; j++) w[j] = w[j] / ($T)s[j];
            }
        }
        free(m);
        free(s);
    }
}

/* layer_norm (rms = 0) or rms_norm (rms = 1) of each length-n row; w, b may be NULL */
void ow_norm_$S(const $T *x, const $T *w, const $T *b, $T *y, long rows, long n, double eps, int rms) {
    int nt = ow_threads(rows * n);
    #pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (long o = 0; o < rows; o++) {
        const $T *r = x + o * n;
        $T *out = y + o * n;
        double mean = 0, ss = 0;
        if (!rms) {
            #pragma omp simd reduction(+:mean)
            for (long i = 0; i < n; i++) mean += r[i];
            mean /= n;
        }
        #pragma omp simd reduction(+:ss)
        for (long i = 0; i < n; i++) { double d = r[i] - mean; ss += d * d; }
        double rstd = 1 / sqrt(ss / n + eps);
        if (w && b) {
            #pragma omp simd
            for (long i = 0; i < n; i++) out[i] = ($T)((r[i] - mean) * rstd * w[i] + b[i]);
        } else if (w) {
            #pragma omp simd
            for (long i = 0; i < n; i++) out[i] = ($T)((r[i] - mean) * rstd * w[i]);
        } else if (b) {
            #pragma omp simd
            for (long i = 0; i < n; i++) out[i] = ($T)((r[i] - mean) * rstd + b[i]);
        } else {
            #pragma omp simd
            for (long i = 0; i < n; i++) out[i] = ($T)((r[i] - mean) * rstd);
        }
    }
}

/* per row: -log_softmax(x)[t] (0 where t == ignore); returns how many targets are out of range */
long ow_cross_entropy_$S(const $T *x, const int64_t *t, $T *loss, long rows, long n, long ignore) {
    int nt = ow_threads(rows * n);
    long bad = 0;
    #pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1) reduction(+:bad)
    for (long o = 0; o < rows; o++) {
        int64_t c = t[o];
        if (c == ignore) { loss[o] = 0; continue; }
        if (c < 0 || c >= n) { bad++; loss[o] = NAN; continue; }
        const $T *r = x + o * n;
        $T m = -INFINITY;
        #pragma omp simd reduction(max:m)
        for (long i = 0; i < n; i++) m = r[i] > m ? r[i] : m;
        double s = 0;
        #pragma omp simd reduction(+:s)
        for (long i = 0; i < n; i++) s += exp$F(r[i] - m);
        loss[o] = ($T)(log(s) - (double)(r[c] - m));
    }
    return bad;
}

static double ow_reduce_span_$S(int op, const $T *x, long n, double centre) {
    if (op == 0) {
        double s = 0;
        #pragma omp simd reduction(+:s)
        for (long i = 0; i < n; i++) s += x[i];
        return s;
    }
    if (op == 3) {
        double s = 0;
        #pragma omp simd reduction(+:s)
        for (long i = 0; i < n; i++) { double d = x[i] - centre; s += d * d; }
        return s;
    }
    int nan = 0;
    $T m = op == 1 ? -INFINITY : INFINITY;
    if (op == 1) {
        #pragma omp simd reduction(max:m) reduction(|:nan)
        for (long i = 0; i < n; i++) { m = x[i] > m ? x[i] : m; nan |= x[i] != x[i]; }
    } else {
        #pragma omp simd reduction(min:m) reduction(|:nan)
        for (long i = 0; i < n; i++) { m = x[i] < m ? x[i] : m; nan |= x[i] != x[i]; }
    }
    return nan ? NAN : (double)m;
}

/* reduce x viewed as (outer, r, inner) over r into y (outer, inner), in double; centre: sqdev's per-output mean */
void ow_reduce_$S(int op, const $T *x, double *y, const double *centre, long outer, long r, long inner) {
    int nt = ow_threads(outer * r * inner);
    if (inner == 1) {
        /* chunks of long rows do not depend on the thread count, so neither does the result */
        long chunks = 1;
        if (outer < 16) {
            chunks = (16 + outer - 1) / outer;
            if (chunks > r / 4096) chunks = r / 4096 > 1 ? r / 4096 : 1;
        }
        long step = (r + chunks - 1) / chunks;
        double *part = malloc(outer * chunks * sizeof(double));
        #pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
        for (long task = 0; task < outer * chunks; task++) {
            long o = task / chunks, c = task % chunks;
            long lo = c * step, hi = lo + step < r ? lo + step : r;
            double centre_o = centre ? centre[o] : 0;
            double none = op == 0 || op == 3 ? 0 : op == 1 ? -INFINITY : INFINITY;
            part[task] = lo < hi ? ow_reduce_span_$S(op, x + o * r + lo, hi - lo, centre_o) : none;
        }
        for (long o = 0; o < outer; o++) {
            double acc = part[o * chunks];
            for (long c = 1; c < chunks; c++) acc = ow_combine(op, acc, part[o * chunks + c]);
            y[o] = acc;
        }
        free(part);
        return;
    }
    /* columns in blocks of B: each row's block is read contiguously, the accumulators stay in cache */
    enum { B = 2048 };
    long blocks = (inner + B - 1) / B;
    #pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (long task = 0; task < outer * blocks; task++) {
        long o = task / blocks, j0 = (task % blocks) * B;
        long len = inner - j0 < B ? inner - j0 : B;
        double acc[B];
        const double *cen = centre ? centre + o * inner + j0 : 0;
        const $T *base = x + o * r * inner + j0;
        double start = op == 1 ? -INFINITY : op == 2 ? INFINITY : 0;
        for (long j = 0; j < len; j++) acc[j] = start;
        for (long k = 0; k < r; k++) {
            const $T *row = base + k * inner;
            if (op == 0) {
                #pragma omp simd
                for (long j = 0; j < len; j++) acc[j] += row[j];
            } else if (op == 3) {
                #pragma omp simd
                for (long j = 0; j < len; j++) { double d = row[j] - cen[j]; acc[j] += d * d; }
            } else if (op == 1) {
                #pragma omp simd
                for (long j = 0; j < len; j++) { double v = row[j]; acc[j] = (v > acc[j] || v != v) ? v : acc[j]; }
            } else {
                #pragma omp simd
                for (long j = 0; j < len; j++) { double v = row[j]; acc[j] = (v < acc[j] || v != v) ? v : acc[j]; }
            }
        }
        for (long j = 0; j < len; j++) y[o * inner + j0 + j] = acc[j];
    }
}

static void ow_unary_span_$S(int op, const $T *restrict x, $T *restrict y, long n) {
    const $T half = 0.5, one = 1, zero = 0;
    switch (op) {
    case 0:
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = exp$F(x[i]);
        break;
    case 1:
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = expm1$F(x[i]);
        break;
    case 2:
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = log$F(x[i]);
        break;
    case 3:
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = log1p$F(x[i]);
        break;
    case 4:
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = tanh$F(x[i]);
        break;
    case 5: /* sigmoid: exp of -|x| only, so no overflow and tiny results keep their digits */
        #pragma omp simd
        for (long i = 0; i < n; i++) {
            $T e = exp$F(-fabs$F(x[i])), r = one / (one + e);
            y[i] = x[i] >= zero ? r : (x[i] < zero ? e * r : x[i]);
        }
        break;
    case 6:
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = erf$F(x[i]);
        break;
    case 7:
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = sqrt$F(x[i]);
        break;
    case 8: /* gelu, erf form: x * 0.5 * (1 + erf(x / sqrt(2))), in the CPU backend's order of operations */
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = ((erf$F(x[i] * ($T)M_SQRT1_2) + one) * x[i]) * half;
        break;
    case 9: /* gelu, tanh form */
        #pragma omp simd
        for (long i = 0; i < n; i++) {
            $T v = x[i], u = ((v * v) * ($T)0.044715 * v + v) * ($T)(M_SQRT2 * M_2_SQRTPI * 0.5);
            y[i] = ((tanh$F(u) + one) * v) * half;
        }
        break;
    case 10: /* silu: x * sigmoid(x) */
        #pragma omp simd
        for (long i = 0; i < n; i++) {
            $T v = x[i], e = exp$F(-fabs$F(v)), r = one / (one + e);
            y[i] = v * (v >= zero ? r : (v < zero ? e * r : v));
        }
        break;
    case 11: /* relu: NaN stays NaN */
        #pragma omp simd
        for (long i = 0; i < n; i++) y[i] = x[i] > zero ? x[i] : (x[i] != x[i] ? x[i] : zero);
        break;
    }
}

/* y = op(x) over n contiguous elements; y may be x */
void ow_unary_$S(int op, const $T *x, $T *y, long n) {
    int nt = ow_threads(n);
    if (nt == 1) { ow_unary_span_$S(op, x, y, n); return; }
    long step = ((n + nt - 1) / nt + 15) & ~15L;
    #pragma omp parallel for schedule(static) num_threads(nt)
    for (long t = 0; t < nt; t++) {
        long lo = t * step, hi = lo + step < n ? lo + step : n;
        if (lo < hi) ow_unary_span_$S(op, x + lo, y + lo, hi - lo);
    }
}

#define OW_BIN(EXPR) \
    if (ja && jb) { _Pragma("omp simd") for (long j = 0; j < len; j++) { $T u = pa[j], v = pb[j]; w[j] = EXPR; } } \
    else if (ja) { $T v = pb[0]; _Pragma("omp simd") for (long j = 0; j < len; j++) { $T u = pa[j]; w[j] = EXPR; } } \
    else if (jb) { $T u = pa[0]; _Pragma("omp simd") for (long j = 0; j < len; j++) { $T v = pb[j]; w[j] = EXPR; } } \
    else { $T u = pa[0], v = pb[0]; for (long j = 0; j < len; j++) w[j] = EXPR; }

/* y (outer, m) = a op b, each operand read at [o * oa + j * ja] (ja is 0 or 1) */
void ow_binary_$S(int op, const $T *a, long oa, long ja, const $T *b, long ob, long jb, $T *y, long outer, long m) {
    int nt = ow_threads(outer * m);
    long split = 1;
    if (nt > 1 && outer < nt) split = nt;  /* few long rows: split each row */
    long step = (m + split - 1) / split;
    #pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (long task = 0; task < outer * split; task++) {
        long o = task / split, lo = (task % split) * step;
        long len = m - lo < step ? m - lo : step;
        if (len <= 0) continue;
        const $T *pa = a + o * oa + lo * ja, *pb = b + o * ob + lo * jb;
        $T *w = y + o * m + lo;
        switch (op) {
        case 0: { OW_BIN(u + v) break; }
        case 1: { OW_BIN(u - v) break; }
        case 2: { OW_BIN(u * v) break; }
        case 3: { OW_BIN(u / v) break; }
        }
    }
}
#undef OW_BIN
"""

_TYPES = (("float", "f32", "f"), ("double", "f64", ""))


def source() -> str:
    """The whole C file (both dtypes)."""
    parts = [_PRELUDE]
    for ctype, suffix, fn in _TYPES:
        parts.append(_TEMPLATE.replace("$T", ctype).replace("$S", suffix).replace("$F", fn))
    return "".join(parts)


#: The cffi declarations of the exported kernels. Every pointer is passed as its address (``intptr_t``, the
#: same register as a pointer in every C calling convention cffi's ABI mode supports), so a caller hands over
#: NumPy buffer addresses as Python ints with no cdata made per call.
DECLARATIONS = "".join(
    f"""
void ow_softmax_{s}(intptr_t x, intptr_t y, long outer, long n, long inner, int log_);
void ow_norm_{s}(intptr_t x, intptr_t w, intptr_t b, intptr_t y, long rows, long n, double eps, int rms);
long ow_cross_entropy_{s}(intptr_t x, intptr_t t, intptr_t loss, long rows, long n, long ignore);
void ow_reduce_{s}(int op, intptr_t x, intptr_t y, intptr_t centre, long outer, long r, long inner);
void ow_unary_{s}(int op, intptr_t x, intptr_t y, long n);
void ow_binary_{s}(int op, intptr_t a, long oa, long ja, intptr_t b, long ob, long jb, intptr_t y, long outer, long m);
"""
    for _t, s, _ in _TYPES
)

_lock = threading.Lock()
_loaded: dict = {}


def _compile(cc: str, ident: str, text: str, flags: tuple, libs: tuple) -> str:
    folder = os.path.join(cache_dir(), "c")
    path = os.path.join(folder, cache_key(text, ident, " ".join(flags + libs)) + ".so")
    if os.path.exists(path):
        return path
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        src, out = os.path.join(tmp, "k.c"), os.path.join(tmp, "k.so")
        with open(src, "w") as f:
            f.write(text)
        done = subprocess.run([cc, *flags, "-o", out, src, *libs], capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"the C compiler failed on the host kernels:\n{done.stderr[-4000:]}")
        os.replace(out, path)  # atomic: another process may be writing the same object
    return path


def load():
    """``(ffi, lib)``: the compiled host kernels, built once per process (and once per cache for all processes).

    Raises ``RuntimeError`` with the reason when there is no usable C compiler (see
    :func:`opweave_kernelgen.c_runtime.compiler`) or the build fails."""
    with _lock:
        if "lib" in _loaded:
            return _loaded["ffi"], _loaded["lib"]
        if "error" in _loaded:
            raise RuntimeError(_loaded["error"])
        try:
            cc, ident = compiler()
            if cc is None:
                raise RuntimeError(ident)
            import cffi

            text = source()
            flags = (*FLAGS, "-fno-math-errno")
            try:
                path = _compile(cc, ident, text, (*flags, "-DOW_MVEC"), ("-lmvec", "-lm"))
            except RuntimeError:  # no libmvec (not glibc): scalar math calls
                path = _compile(cc, ident, text, flags, ("-lm",))
            ffi = cffi.FFI()
            ffi.cdef(DECLARATIONS)
            lib = ffi.dlopen(path)
        except (RuntimeError, OSError) as exc:
            _loaded["error"] = str(exc)
            raise RuntimeError(str(exc)) from None
        _loaded.update(ffi=ffi, lib=lib)
        return ffi, lib
