"""Special functions as a library of C helper functions, included only in the programs that call them.

Every function computes in double (the kernel module runs these programs only on
devices with fp64) and follows the standard published methods:

* error function family: the device's ``erf``/``erfc``; ``erfcx`` through an exact
  ``x*x`` split (``fma``) below 26 and its continued fraction above; inverses by
  Halley's iteration on ``erf``/``erfc`` from Winitzki's closed-form estimate;
* gamma family: the device's ``lgamma``; digamma by reflection, recurrence and the
  asymptotic series; Hurwitz zeta by Euler-Maclaurin summation (polygamma through
  it); regularised incomplete gamma by its power series or Lentz's continued
  fraction, with the prefactor ``x^a e^-x / Gamma(a)`` taken from Stirling's series
  for large ``a``;
* Bessel functions: power series near 0; J and Y of orders 0 and 1 by Miller's
  backward recurrence (Neumann series for Y) up to 25 and Hankel's expansion
  above; K by the trapezoidal rule on ``int exp(-x cosh t) cosh(nu t) dt``
  (exponentially convergent) and the large-argument expansion; I by the power
  series and the large-argument expansion;
* Airy ``Ai``: Taylor steps of ``y'' = x y`` from 0 on ``[-10, 2]``, ``K_{1/3}``
  and the asymptotic expansions outside;
* orthogonal polynomials: the CPU kernel's cases (ends, trigonometric forms,
  three-term recurrences).

The text uses only math built-ins that OpenCL C, CUDA and Metal share (C99's and
``sinpi``/``cospi``) and no address-space qualifiers; the fp64 pragma and the helper
functions' qualifiers (``@FN@``) come from the dialect (:func:`program`).
"""

from __future__ import annotations

from . import elementwise as ew

_BASE = """
#define OW_PI 3.14159265358979323846
#define OW_SQRT_PI 1.77245385090551602730
#define OW_SQRT2 1.41421356237309504880
#define OW_EULER 0.57721566490153286061
#define OW_EPS 1.1102230246251565e-16
#define OW_TINY 1e-300

/* exp(x * x) with the rounding error of x * x folded in */
@FN@ double ow_exp_sq(double x) {
    double h = x * x;
    double l = fma(x, x, -h);
    double e = exp(h);
    return isinf(e) ? e : e + e * l;
}
"""

_ERF = """
@FN@ double ow_erfcx_pos(double x) {
    if (x < 26.0) return ow_exp_sq(x) * erfc(x);
    /* continued fraction 1 / (x + (1/2) / (x + 1 / (x + (3/2) / ...))) */
    double f = x;
    for (int k = 24; k >= 1; --k) f = x + 0.5 * k / f;
    return f > 1e300 ? (1.0 / OW_SQRT_PI) / f : 1.0 / (OW_SQRT_PI * f); /* sqrt(pi) f overflows near DBL_MAX */
}

@FN@ double ow_erfcx(double x) {
    if (isnan(x)) return x;
    if (x >= 0.0) return ow_erfcx_pos(x);
    if (x < -26.7) return INFINITY;
    return 2.0 * ow_exp_sq(x) - ow_erfcx_pos(-x);
}

/* x >= 0 with erf(x) = y and erfc(x) = c, given both (the one below 1/2 is the accurate one) */
@FN@ double ow_inv_erf(double y, double c) {
    if (c == 0.0) return INFINITY;
    if (y == 0.0) return 0.0;
    double l = (y < 0.5) ? log1p(-y * y) : log(c) + log1p(y);
    double t = 2.0 / (OW_PI * 0.147) + 0.5 * l;
    double x = sqrt(sqrt(t * t - l / 0.147) - t);
    for (int i = 0; i < 6; ++i) {
        double r = (y < 0.5) ? erf(x) - y : c - erfc(x);
        double dx = r / (2.0 / OW_SQRT_PI * exp(-x * x));
        dx = dx / (1.0 + x * dx);
        x -= dx;
        if (fabs(dx) <= 1e-7 * x) break;  /* Halley converges cubically: the next step would be below 1e-20 x */
    }
    if (c < 1e-280) {
        /* erfc(x) near the underflow: Newton on log erfc(x) = log erfcx(x) - x^2 */
        double lc = log(c);
        for (int i = 0; i < 3; ++i) {
            double e = ow_erfcx_pos(x);
            x += (log(e) - x * x - lc) * e * (0.5 * OW_SQRT_PI);
        }
    }
    return x;
}

@FN@ double ow_erfinv(double y) {
    if (isnan(y) || fabs(y) > 1.0) return NAN;
    if (y == 0.0) return y;
    double a = fabs(y);
    return copysign(ow_inv_erf(a, 1.0 - a), y);
}

@FN@ double ow_ndtr(double x) {
    return 0.5 * erfc(-x / OW_SQRT2);
}

@FN@ double ow_ndtri(double p) {
    if (isnan(p) || p < 0.0 || p > 1.0) return NAN;
    if (p == 0.0) return -INFINITY;
    if (p == 1.0) return INFINITY;
    if (p < 0.5) return -OW_SQRT2 * ow_inv_erf(1.0 - 2.0 * p, 2.0 * p);
    double q = 1.0 - p;
    return OW_SQRT2 * ow_inv_erf(p + p - 1.0, q + q);
}

@FN@ double ow_log_ndtr(double x) {
    if (x > 0.0) return log1p(-ow_ndtr(-x));
    if (x > -1.0) return log(ow_ndtr(x));
    /* ndtr(x) = erfcx(-x / sqrt 2) exp(-x^2 / 2) / 2 */
    return log(0.5 * ow_erfcx(-x / OW_SQRT2)) - 0.5 * x * x;
}
"""

_GAMMA = """
@FN@ double ow_lgamma(double x) {
    if (x == -INFINITY) return INFINITY;  /* as PyTorch and C99 (PoCL gives -inf) */
    return lgamma(x);
}

@FN@ double ow_digamma(double x) {
    if (isnan(x) || x == -INFINITY) return NAN;
    if (x == 0.0) return signbit(x) ? INFINITY : -INFINITY;
    double r = 0.0;
    if (x < 0.0) {
        if (x == floor(x)) return NAN;
        r = -OW_PI * cospi(x) / sinpi(x);  /* psi(x) = psi(1 - x) - pi cot(pi x) */
        x = 1.0 - x;
    }
    while (x < 10.0) {
        r -= 1.0 / x;
        x += 1.0;
    }
    if (x == INFINITY) return INFINITY;
    double z = 1.0 / (x * x);
    double s = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132
               - z * (691.0 / 32760 - z / 12.0))))));
    return r + log(x) - 0.5 / x - s;
}

/* Hurwitz zeta sum_k (k + q)^-x */
@FN@ double ow_zeta(double x, double q) {
    /* (2k)! / B_2k, k = 1..12: the Euler-Maclaurin correction terms */
    const double A[12] = {
        12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1892437580.3183792, 74724249600.0,
        -2950130727918.164, 116467828143500.67, -4597978722407473.0, 1.8152105401943546e+17, -7.166165256175667e+18
    };
    if (x == 1.0) return INFINITY;
    if (x < 1.0) return NAN;
    if (q <= 0.0) {
        if (q == floor(q)) return INFINITY;
        if (x != floor(x)) return NAN;
    }
    if (q > 1e8) return (1.0 / (x - 1.0) + 0.5 / q) * pow(q, 1.0 - x);
    double s = pow(q, -x), a = q, b = 0.0;
    int i = 0;
    while (i < 9 || a <= 9.0) {
        i += 1;
        a += 1.0;
        b = pow(a, -x);
        s += b;
        if (fabs(b / s) < OW_EPS) return s;
    }
    double w = a, f = 1.0, k = 0.0;
    s += b * w / (x - 1.0) - 0.5 * b;
    for (i = 0; i < 12; ++i) {
        f *= x + k;
        b /= w;
        double t = f * b / A[i];
        s += t;
        if (fabs(t / s) < OW_EPS) break;
        k += 1.0;
        f *= x + k;
        b /= w;
        k += 1.0;
    }
    return s;
}

@FN@ double ow_polygamma(double x, double n) {
    if (n == 0.0) return ow_digamma(x);
    double sign = (fmod(n, 2.0) == 1.0) ? 1.0 : -1.0;
    return sign * tgamma(n + 1.0) * ow_zeta(n + 1.0, x);
}

@FN@ double ow_mvlgamma(double x, double p) {
    if (!(x > 0.5 * (p - 1.0))) return NAN;  /* invalid: the kernel module raises */
    double s = 0.25 * p * (p - 1.0) * log(OW_PI);
    for (double j = 0.0; j < p; j += 1.0) s += lgamma(x - 0.5 * j);
    return s;
}
"""

_IGAMMA = """
/* log(1 + t) - t without cancellation for small t */
@FN@ double ow_log1pmx(double t) {
    if (fabs(t) > 0.5) return log1p(t) - t;
    double term = t, s = 0.0;
    for (int k = 2; k < 200; ++k) {
        term *= -t;
        double d = term / k;
        s += d;
        if (fabs(d) < 1e-17 * fabs(s)) break;
    }
    return s;
}

/* log(x^a e^-x / Gamma(a)) */
@FN@ double ow_igam_logfac(double a, double x) {
    if (a < 10.0) return a * log(x) - x - lgamma(a);
    double z = 1.0 / (a * a);
    double stirling = (1.0 / 12 - z * (1.0 / 360 - z * (1.0 / 1260 - z * (1.0 / 1680 - z / 1188.0)))) / a;
    return a * ow_log1pmx((x - a) / a) + 0.5 * log(a / (2.0 * OW_PI)) - stirling;
}

/* P(a, x) by its power series (x <= 1 or x <= a) */
@FN@ double ow_igam_series(double a, double x) {
    double term = 1.0, sum = 1.0, ap = a;
    for (int n = 0; n < 100000; ++n) {
        ap += 1.0;
        term *= x / ap;
        sum += term;
        if (term <= sum * OW_EPS) break;
    }
    return sum * exp(ow_igam_logfac(a, x)) / a;
}

/* Q(a, x) by its own series for x <= 1.1 where P is near 1 (Cephes' igamc_series): 1 - P would cancel */
@FN@ double ow_igamc_series(double a, double x) {
    double fac = 1.0, sum = 0.0;
    for (int n = 1; n < 1000; ++n) {
        fac *= -x / n;
        double term = fac / (a + n);
        sum += term;
        if (fabs(term) <= OW_EPS * fabs(sum)) break;
    }
    double l = log(x);
    if (a < 1e-20) return a * (-(l + OW_EULER) - sum);  /* a E1(x) + O(a^2): one rounding keeps subnormal digits */
    /* lgamma(1 + a) = -euler a + zeta(2)/2 a^2 - zeta(3)/3 a^3 + ...; x^a / Gamma(a) = a x^a / Gamma(1 + a) */
    double lg1p = (a < 1e-5) ? a * (-OW_EULER + a * (0.82246703342411321824 - a * 0.40068563438653142847))
                             : lgamma(1.0 + a);
    double y = a * l - lg1p;
    return -expm1(y) - a * exp(y) * sum;
}

/* Q(a, x) by Lentz's continued fraction (x > 1 and x > a) */
@FN@ double ow_igamc_fraction(double a, double x) {
    double b = x + 1.0 - a, c = 1.0 / OW_TINY, d = 1.0 / b, h = d;
    for (int i = 1; i < 100000; ++i) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (fabs(d) < OW_TINY) d = OW_TINY;
        c = b + an / c;
        if (fabs(c) < OW_TINY) c = OW_TINY;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < OW_EPS) break;
    }
    return exp(ow_igam_logfac(a, x)) * h;
}

/* the regularised incomplete gamma P (upper = 0) or Q (upper = 1), with the CPU kernel's special cases */
@FN@ double ow_igamma(double a, double x, int upper) {
    if (x < 0.0 || a < 0.0) return NAN;
    if (a == 0.0) return (x > 0.0) ? (upper ? 0.0 : 1.0) : NAN;
    if (x == 0.0) return upper ? 1.0 : 0.0;
    if (isinf(a)) return isinf(x) ? NAN : (upper ? 1.0 : 0.0);
    if (isinf(x)) return upper ? 0.0 : 1.0;
    if (isnan(a) || isnan(x)) return NAN;
    if (a > 1e7) {
        /* Temme's uniform expansion, first term: Q = erfc(eta sqrt(a/2)) / 2 + exp(-a eta^2 / 2) c0 / sqrt(2 pi a) */
        double t = (x - a) / a, eta = copysign(sqrt(-2.0 * ow_log1pmx(t)), t);
        double c0 = (fabs(eta) < 1e-3) ? -1.0 / 3 + eta / 12.0 : 1.0 / t - 1.0 / eta;
        double r = exp(-0.5 * a * eta * eta) * c0 / sqrt(2.0 * OW_PI * a);
        double z = eta * sqrt(0.5 * a);
        return upper ? 0.5 * erfc(z) + r : 0.5 * erfc(-z) - r;
    }
    if (x <= 1.1 && a < ((x <= 0.5) ? -0.4 / log(x) : 1.1 * x)) {
        double q = ow_igamc_series(a, x);
        return upper ? q : 1.0 - q;
    }
    if (x <= 1.0 || x <= a) {
        double p = ow_igam_series(a, x);
        return upper ? 1.0 - p : p;
    }
    double q = ow_igamc_fraction(a, x);
    return upper ? q : 1.0 - q;
}
"""

_BESSEL = """
/* Hankel's expansion of J_nu and Y_nu (nu = 0 or 1) for large x */
@FN@ void ow_bessel_hankel(double nu, double x, double *j, double *y) {
    double mu = 4.0 * nu * nu, term = 1.0, p = 1.0, q = 0.0;
    for (int k = 1; k < 60; ++k) {
        double f = (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * x);
        if (fabs(f) >= 1.0) break;
        term *= f;
        double t = ((k / 2) % 2 == 0) ? term : -term;
        if (k % 2 == 0) p += t; else q += t;
        if (fabs(term) < 1e-17) break;
    }
    double s = sin(x), c = cos(x);
    double cs, sn;  /* cos and sin of x - (nu / 2 + 1 / 4) pi */
    if (nu == 0.0) { cs = (c + s) / OW_SQRT2; sn = (s - c) / OW_SQRT2; }
    else { cs = (s - c) / OW_SQRT2; sn = -(s + c) / OW_SQRT2; }
    double r = sqrt(2.0 / OW_PI) / sqrt(x);  /* pi x overflows at DBL_MAX */
    *j = r * (p * cs - q * sn);
    *y = r * (p * sn + q * cs);
}

/* J0, J1, Y0, Y1 at 0 < x < 2 by their power series */
@FN@ void ow_bessel_jy_series(double x, double *j0, double *j1, double *y0, double *y1) {
    double z = -0.25 * x * x, t0 = 1.0, t1 = 1.0, h = 0.0;
    double sj0 = 1.0, sj1 = 1.0, sy0 = 0.0, sy1 = 2.0 * (1.0 - OW_EULER) - 1.0;
    for (int k = 1; k < 40; ++k) {
        t0 *= z / ((double)k * k);
        t1 *= z / ((double)k * (k + 1));
        h += 1.0 / k;
        sj0 += t0;
        sj1 += t1;
        sy0 += h * t0;
        sy1 += (2.0 * (h - OW_EULER) + 1.0 / (k + 1)) * t1;
        if (fabs(t0) < 1e-18) break;
    }
    double l = log(x) - 0.69314718055994530942;  /* log(0.5 * x) is -inf at 5e-324 */
    *j0 = sj0;
    *j1 = 0.5 * x * sj1;
    *y0 = 2.0 / OW_PI * ((l + OW_EULER) * sj0 - sy0);
    *y1 = -2.0 / (OW_PI * x) + 2.0 / OW_PI * l * (*j1) - x / (2.0 * OW_PI) * sy1;
}

/* J0, J1, Y0, Y1 at 2 <= x <= 25: Miller's backward recurrence normalised by J0 + 2 sum J_2k = 1 */
@FN@ void ow_bessel_jy_miller(double x, double *j0, double *j1, double *y0, double *y1) {
    int m = 2 * (((int)x + 32) / 2);
    double rx = 2.0 / x;
    double jn1 = 0.0, jn = 1e-30, norm = 0.0, s0 = 0.0, s1 = 0.0;
    /* jn = J_n and jn1 = J_{n+1}, up to a common factor */
    for (int n = m; n >= 1; --n) {
        double jm = n * rx * jn - jn1;  /* J_{n-1} */
        if (n % 2 == 0) {
            int k = n / 2;
            double sg = (k % 2 == 0) ? 1.0 : -1.0;
            norm += 2.0 * jn;
            s0 += sg * jn / k;
            s1 += sg * (jm - jn1) / k;
        }
        jn1 = jn;
        jn = jm;
        if (fabs(jn) > 1e250) {
            jn *= 1e-250; jn1 *= 1e-250; norm *= 1e-250; s0 *= 1e-250; s1 *= 1e-250;
        }
    }
    norm += jn;
    double scale = 1.0 / norm, l = log(0.5 * x) + OW_EULER;
    *j0 = jn * scale;
    *j1 = jn1 * scale;
    *y0 = 2.0 / OW_PI * (l * (*j0)) - 4.0 / OW_PI * s0 * scale;
    *y1 = 2.0 / OW_PI * (l * (*j1) - (*j0) / x) + 2.0 / OW_PI * s1 * scale;
}

/* which: 0 J0, 1 J1, 2 Y0, 3 Y1 */
@FN@ double ow_bessel_jy(double x, int which) {
    if (isnan(x) || isinf(x)) return NAN;
    if (which >= 2) {
        if (x < 0.0) return NAN;
        if (x == 0.0) return -INFINITY;
    }
    double sign = (which == 1 && x < 0.0) ? -1.0 : 1.0;
    double a = fabs(x), j0, j1, y0, y1;
    if (a == 0.0) return which == 0 ? 1.0 : x * 0.5;
    if (a < 2.0) ow_bessel_jy_series(a, &j0, &j1, &y0, &y1);
    else if (a <= 25.0) ow_bessel_jy_miller(a, &j0, &j1, &y0, &y1);
    else {
        ow_bessel_hankel(0.0, a, &j0, &y0);
        ow_bessel_hankel(1.0, a, &j1, &y1);
    }
    double v = which == 0 ? j0 : which == 1 ? j1 : which == 2 ? y0 : y1;
    return sign * v;
}

/* sum_k (-1)^k a_k(nu) / x^k (alternate = 1, the I expansion) or sum_k a_k(nu) / x^k (the K expansion) */
@FN@ double ow_bessel_large(double nu, double x, int alternate) {
    double mu = 4.0 * nu * nu, term = 1.0, s = 1.0;
    for (int k = 1; k < 60; ++k) {
        double f = (mu - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * x);
        if (fabs(f) >= 1.0) break;
        term *= alternate ? -f : f;
        s += term;
        if (fabs(term) < 1e-17 * fabs(s)) break;
    }
    return s;
}

/* exp(-x) I_nu(x), nu = 0 or 1, x >= 0 */
@FN@ double ow_bessel_ie(double nu, double x) {
    if (x > 30.0) return ow_bessel_large(nu, x, 1) / (sqrt(2.0 * OW_PI) * sqrt(x));  /* 2 pi x overflows at DBL_MAX */
    double z = 0.25 * x * x, t = (nu == 0.0) ? 1.0 : 0.5 * x, s = t;
    for (int k = 1; k < 200; ++k) {
        t *= z / (k * (k + nu));
        s += t;
        if (t < 1e-17 * s) break;
    }
    return s * exp(-x);
}

/* kind: 0 I0, 1 I0e, 2 I1, 3 I1e */
@FN@ double ow_bessel_i(double x, int kind) {
    if (isnan(x)) return x;
    int scaled = kind & 1;
    double nu = (kind >= 2) ? 1.0 : 0.0;
    if (isinf(x)) return scaled ? copysign(0.0, nu == 0.0 ? 1.0 : x) : NAN;
    double a = fabs(x), v = ow_bessel_ie(nu, a);
    if (nu == 1.0 && !scaled && a < 0x1p-126) {
        /* I1(x) = x/2 (1 + x^2/8 + ...) is just above x/2: x/2 rounded up (by at most 2 ulps of double), so that a
           float32 or float64-subnormal result that is a tie of x/2 rounds away from zero as the exact value does */
        v = a * (0.5 + 0x1p-53);
    }
    if (!scaled) {
        double e = exp(0.5 * a);
        v = (v * e) * e;
    }
    return (nu == 1.0 && x < 0.0) ? -v : v;
}

/* exp(x) K_nu(x) for x > 1 by the trapezoidal rule on int_0^inf exp(-x (cosh t - 1)) cosh(nu t) dt. The integrand
   is analytic for |Im t| < pi/2, where it grows at most like exp(x): a step h = pi^2 / (x + 42) keeps the error
   near exp(-42). cosh(kh) - 1 and cosh(nu kh) come from their three-term recurrences (one exp a point). */
@FN@ double ow_bessel_ke_integral(double nu, double x) {
    if (x > 30.0) return ow_bessel_large(nu, x, 0) * (sqrt(0.5 * OW_PI) / sqrt(x));  /* 2 x overflows at DBL_MAX */
    double h = OW_PI * OW_PI / (x + 42.0);
    double sh = sinh(0.5 * h), cm1 = 2.0 * sh * sh;  /* cosh(h) - 1 */
    double shn = sinh(0.5 * nu * h), cn = 1.0 + 2.0 * shn * shn;  /* cosh(nu h) */
    double u0 = 0.0, u1 = cm1, c0 = 1.0, c1 = cn, s = 0.5;
    for (int k = 1; k < 2000; ++k) {
        double f = exp(-x * u1) * c1;
        s += f;
        if (f < 1e-18 * s) break;
        double u2 = 2.0 * (cm1 + 1.0) * u1 - u0 + 2.0 * cm1;
        double c2 = 2.0 * cn * c1 - c0;
        u0 = u1; u1 = u2; c0 = c1; c1 = c2;
    }
    return h * s;
}

/* K_nu(x) for 0 < x <= 2 by its power series (nu = 0 or 1) */
@FN@ double ow_bessel_k_series(double nu, double x) {
    double z = 0.25 * x * x, l = log(x) - 0.69314718055994530942;  /* log(0.5 * x) is -inf at 5e-324 */
    if (nu == 0.0) {
        double t = 1.0, i0 = 1.0, s = 0.0, h = 0.0;
        for (int k = 1; k < 60; ++k) {
            t *= z / ((double)k * k);
            h += 1.0 / k;
            i0 += t;
            s += h * t;
            if (t < 1e-18) break;
        }
        return -(l + OW_EULER) * i0 + s;
    }
    double t = 1.0, i1 = 1.0, h = 0.0, s = 1.0 - 2.0 * OW_EULER;  /* psi(1) + psi(2) */
    for (int k = 1; k < 60; ++k) {
        t *= z / ((double)k * (k + 1));
        h += 1.0 / k;
        i1 += t;
        s += (2.0 * (h - OW_EULER) + 1.0 / (k + 1)) * t;
        if (t < 1e-18) break;
    }
    return 1.0 / x + l * 0.5 * x * i1 - 0.25 * x * s;
}

/* kind: 0 K0, 1 K1, 2 K0e, 3 K1e */
@FN@ double ow_bessel_k(double x, int kind) {
    if (isnan(x)) return x;
    if (x < 0.0) return NAN;
    if (x == 0.0) return INFINITY;
    if (isinf(x)) return 0.0;
    double nu = (kind & 1) ? 1.0 : 0.0;
    int scaled = kind >= 2;
    if (x <= 2.0) {
        double v = ow_bessel_k_series(nu, x);
        return scaled ? v * exp(x) : v;
    }
    double v = ow_bessel_ke_integral(nu, x);
    return scaled ? v : v * exp(-x);
}

@FN@ double ow_spherical_j0(double x) {
    if (isinf(x)) return 0.0;
    if (x == 0.0) return 1.0;
    return sin(x) / x;
}
"""

_AIRY = """
#define OW_AI0 0.3550280538878172
#define OW_AIP0 (-0.2588194037928068)

/* u_k of the asymptotic expansions (DLMF 9.7.2) from u_{k-1}: (6k-5)(6k-3)(6k-1) / ((2k-1) 216 k) */
@FN@ double ow_airy_u(int k, double u) {
    return u * (6.0 * k - 5.0) * (6.0 * k - 3.0) * (6.0 * k - 1.0) / ((2.0 * k - 1.0) * 216.0 * k);
}

@FN@ double ow_airy_ai(double x) {
    if (isnan(x)) return x;
    if (fabs(x) > 1048575.9996744783) return NAN;  /* (2^30)^(2/3): where the CPU kernel's (AMOS) range ends */
    if (x > 2.0) {
        double zeta = 2.0 / 3.0 * x * sqrt(x);
        if (zeta > 30.0) {
            double u = 1.0, s = 1.0, r = 1.0;
            for (int k = 1; k < 40; ++k) {
                u = ow_airy_u(k, u);
                r /= -zeta;
                s += u * r;
                if (fabs(u * r) < 1e-17) break;
            }
            return exp(-zeta) * s / (2.0 * OW_SQRT_PI * sqrt(sqrt(x)));
        }
        /* Ai(x) = sqrt(x / 3) K_{1/3}(zeta) / pi */
        return sqrt(x / 3.0) / OW_PI * ow_bessel_ke_integral(1.0 / 3.0, zeta) * exp(-zeta);
    }
    if (x < -10.0) {
        double z = -x, zeta = 2.0 / 3.0 * z * sqrt(z);
        double u = 1.0, r = 1.0, p = 1.0, q = 0.0;
        for (int k = 1; k < 40; ++k) {
            u = ow_airy_u(k, u);
            r /= zeta;
            double t = ((k / 2) % 2 == 0) ? u * r : -u * r;
            if (k % 2 == 0) p += t; else q += t;
            if (fabs(u * r) < 1e-17) break;
        }
        double s = sin(zeta), c = cos(zeta);
        double cs = (c + s) / OW_SQRT2, sn = (s - c) / OW_SQRT2;  /* cos, sin of zeta - pi/4 */
        return (cs * p + sn * q) / (OW_SQRT_PI * sqrt(sqrt(z)));
    }
    /* Taylor steps of y'' = x y from (Ai(0), Ai'(0)), |step| <= 1 */
    int steps = (int)ceil(fabs(x));
    if (steps < 1) steps = 1;
    double h = x / steps, x0 = 0.0, y = OW_AI0, dy = OW_AIP0;
    for (int i = 0; i < steps; ++i) {
        /* c_{n+2} (n+2)(n+1) = x0 c_n + c_{n-1} */
        double cm1 = 0.0, c0 = y, c1 = dy, hp = h;
        double ny = c0 + c1 * h, ndy = c1;
        for (int n = 0; n < 80; ++n) {
            double c2 = (x0 * c0 + cm1) / ((n + 2.0) * (n + 1.0));
            ndy += (n + 2.0) * c2 * hp;
            hp *= h;
            ny += c2 * hp;
            cm1 = c0; c0 = c1; c1 = c2;
            if (n > 4 && fabs(c2 * hp) < 1e-18 && fabs(c0 * hp) < 1e-18) break;
        }
        y = ny; dy = ndy; x0 += h;
    }
    return y;
}
"""

_POLY = """
@FN@ double ow_sign_pow(double y, long d) { return (y > 0.0 || d % 2 == 0) ? 1.0 : -1.0; }

/* kind: 0-3 Chebyshev T U V W, 4-7 shifted Chebyshev T U V W, 8 Hermite H, 9 Hermite He, 10 Laguerre L,
   11 Legendre P; limit: the degree above which Hermite polynomials are nan */
@FN@ double ow_polynomial(int kind, double x, double n, long limit) {
    long d = isfinite(n) ? (long)fmin(fmax(trunc(n), -1.0), 4611686018427387904.0) : -1;
    if (d < 0) return 0.0;
    double dd = (double)d;
    int cheb = kind < 8, k = kind & 3;
    double y = (kind >= 4 && kind < 8) ? x + x - 1.0 : x;
    if ((cheb || kind == 11) && fabs(y) == 1.0) {
        double sp = ow_sign_pow(y, d);
        if (!cheb || k == 0) return sp;
        if (k == 1) return sp * (dd + 1.0);
        if (k == 2) return y > 0.0 ? 1.0 : sp * (2.0 * dd + 1.0);
        return y > 0.0 ? 2.0 * dd + 1.0 : sp;
    }
    if (kind == 10 && y == 0.0) return 1.0;
    if (cheb && fabs(y) < 1.0) {
        int threshold = (kind == 0) ? 6 : (kind < 4) ? 8 : (kind == 7) ? 4 : 6;
        if (d > threshold) {
            double th = acos(y);
            if (k == 0) return cos(dd * th);
            if (k == 1) {
                double s = sin(th);
                return s != 0.0 ? sin((dd + 1.0) * th) / s : (dd + 1.0) * cos((dd + 1.0) * th) / y;
            }
            if (k == 2) {
                if (sin(0.5 * th) != 1.0) return cos((dd + 0.5) * th) / cos(0.5 * th);
                return ow_sign_pow(-1.0, d) * (2.0 * dd + 1.0);
            }
            if (cos(0.5 * th) != 1.0) return sin((dd + 0.5) * th) / sin(0.5 * th);
            return y > 0.0 ? 2.0 * dd + 1.0 : ow_sign_pow(-1.0, d);
        }
    }
    if ((kind == 8 || kind == 9) && d > limit) return NAN;
    if (d == 0) return 1.0;
    double p = 1.0, q;
    if (cheb) q = (k == 0) ? y : (k == 1) ? y + y : (k == 2) ? y + y - 1.0 : y + y + 1.0;
    else q = (kind == 8) ? x + x : (kind == 10) ? 1.0 - x : x;
    for (long m = 1; m < d; ++m) {
        double mm = (double)m, r;
        if (cheb) r = (y + y) * q - p;
        else if (kind == 8) r = (x + x) * q - 2.0 * mm * p;
        else if (kind == 9) r = x * q - mm * p;
        else if (kind == 10) r = ((2.0 * mm + (1.0 - x)) * q - mm * p) / (mm + 1.0);
        else r = ((2.0 * mm + 1.0) * x * q - mm * p) / (mm + 1.0);
        if (isnan(r) && isnan(q)) return r;
        p = q;
        q = r;
    }
    return q;
}
"""

#: section -> (sections it needs, C text)
SECTIONS = {
    "base": ((), _BASE),
    "erf": (("base",), _ERF),
    "gamma": (("base",), _GAMMA),
    "igamma": (("base",), _IGAMMA),
    "bessel": (("base",), _BESSEL),
    "airy": (("bessel",), _AIRY),
    "poly": (("base",), _POLY),
}


def library(dialect, sections) -> str:
    """The C text of ``sections`` and of the sections they need, each once, dependencies first."""
    order: list = []

    def add(name):
        if name in order:
            return
        for dep in SECTIONS[name][0]:
            add(dep)
        order.append(name)

    for name in sections:
        add(name)
    return "".join(SECTIONS[name][1] for name in order).replace("@FN@", dialect.function_prefix())


def program(dialect, ops: dict, in_dtypes, sections, contiguous: bool = False) -> str:
    """The elementwise program of ``ops`` (see :func:`.elementwise.program`) with the library ``sections``.

    The library computes in double, so the dialect's fp64 pragma comes first whatever the dtypes.
    """
    return dialect.header(["float64"]) + ew.program(dialect, ops, in_dtypes, contiguous, library(dialect, sections))
