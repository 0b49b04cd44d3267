"""Reductions and scans: one generic wrapper per shape of computation, NumPy reductions inside.

float16/bfloat16 inputs arrive widened to float32, so they accumulate in
float32, as PyTorch's CPU kernels do; the result is rounded once.
"""

from __future__ import annotations

import numpy as np

from .._backend import kernel


def axes(x: np.ndarray, dims) -> tuple:
    """NumPy axes of a prim's ``dims`` (None: all; a 0-dim array has none)."""
    if x.ndim == 0:
        return ()
    return tuple(range(x.ndim)) if dims is None else tuple(sorted(d % x.ndim for d in dims))


def in_dtype(x: np.ndarray, dtype) -> np.ndarray:
    """``x`` cast to ``dtype`` (None: unchanged) as torch's ``self.to(dtype)``, then widened if 16-bit."""
    if dtype is None:
        return x
    x = x.astype(dtype.numpy) if x.dtype != dtype.numpy else x
    return x.astype(np.float32) if dtype.itemsize == 2 and dtype.is_floating_point else x


def _reduction(name, fn):
    kernel(name)(lambda inp, dims: fn(inp, axis=axes(inp, dims)))


def _accumulating(name, ufunc):
    def reduce(inp, dims, output_dtype=None):
        x = in_dtype(inp, output_dtype)
        return ufunc.reduce(x, axis=axes(inp, dims), dtype=x.dtype) if inp.ndim else x

    kernel(name)(reduce)


for _name, _fn in {"amax": np.max, "amin": np.min}.items():
    _reduction(_name, _fn)
for _name, _fn in {"any": np.any, "all": np.all}.items():
    _reduction(_name, lambda x, axis, _fn=_fn: _fn(x != 0, axis=axis))
_reduction("xor_sum", lambda x, axis: np.bitwise_xor.reduce(x, axis=axis) if x.ndim else x)
_accumulating("sum", np.add)
_accumulating("prod", np.multiply)


@kernel("var")
def var(inp, dims, correction, output_dtype=None):
    """``sum(|x - mean|^2) / max(N - correction, 0)``, computed in float64 (complex128)."""
    x = inp.astype(np.complex128 if inp.dtype.kind == "c" else np.float64)
    ax = axes(inp, dims)
    n = int(np.prod([inp.shape[d] for d in ax]))
    dev = x - np.sum(x, axis=ax, keepdims=True) / n
    return np.sum(dev.real**2 + dev.imag**2, axis=ax) / max(n - correction, 0.0)


def _arg(name, fn):
    def arg(inp, dim):
        """First extreme wins; NaN counts as the extreme (NumPy's rule, as torch)."""
        return fn(inp.reshape(-1)) if dim is None or inp.ndim == 0 else fn(inp, axis=dim % inp.ndim)

    kernel(name)(arg)


_arg("argmax", np.argmax)
_arg("argmin", np.argmin)


# -- scans: the scanned dim is moved first; a 0-dim input is a 1-element vector ------------------------


def scan(fn):
    """Run ``fn(x)`` (scanning axis 0) on ``a`` with ``dim`` moved first, and move it back."""

    def run(a, dim, *rest):
        x = a.reshape(1) if a.ndim == 0 else np.moveaxis(a, dim % a.ndim, 0)
        out = fn(x, *rest)
        back = (lambda r: r.reshape(a.shape)) if a.ndim == 0 else (lambda r: np.moveaxis(r, 0, dim % a.ndim))
        return tuple(map(back, out)) if isinstance(out, tuple) else back(out)

    return run


for _name, _ufunc in {"cumsum": np.add, "cumprod": np.multiply}.items():
    kernel(_name)(scan(lambda x, dtype=None, _u=_ufunc: _u.accumulate(in_dtype(x, dtype), axis=0)))


def _cum_extremum(ufunc):
    def fn(x):
        """torch takes element i when ``isnan(x) or x >= running`` (``<=`` for cummin): ties take the last index."""
        nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
        take = nan | (x == ufunc.accumulate(x, axis=0))
        steps = np.arange(x.shape[0]).reshape((-1,) + (1,) * (x.ndim - 1))
        idx = np.maximum.accumulate(np.where(take, steps, 0), axis=0) if x.size else np.zeros(x.shape, np.int64)
        return np.take_along_axis(x, idx, axis=0), idx

    return scan(fn)


kernel("cummax")(_cum_extremum(np.maximum))
kernel("cummin")(_cum_extremum(np.minimum))


def _log_add_exp_complex(x, y):
    """``log(exp(x) + exp(y))`` for complex arrays, with torch's handling of infinities and NaN."""
    x_nan, y_nan = np.isnan(x), np.isnan(y)
    swap = x.real < y.real
    lo = np.where(y_nan, y, np.where(x_nan, x, np.where(swap, x, y)))
    hi = np.where(y_nan, y, np.where(x_nan, x, np.where(swap, y, x)))
    out = np.where(
        ~np.isfinite(lo.real) & (lo.real == hi.real),
        np.where(lo.real < 0, lo, np.log(np.exp(lo) + np.exp(hi))),
        np.log1p(np.exp(lo - hi)) + hi,
    )
    return np.where(np.isnan(lo), complex(np.nan, np.nan), out)


@kernel("logcumsumexp")
@scan
def logcumsumexp(x):
    """Running log-sum-exp (a sequential complex step, as torch's)."""
    if x.dtype.kind != "c":
        return np.logaddexp.accumulate(x, axis=0)
    out = x.copy()
    for i in range(1, x.shape[0]):
        out[i] = _log_add_exp_complex(out[i - 1], x[i])
    return out
