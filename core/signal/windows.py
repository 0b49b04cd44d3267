"""``opweave.signal.windows``: window functions (PyTorch's ``torch.signal.windows``, SciPy's definitions).

Each returns a 1-D float32 or float64 tensor of length ``M`` (the default dtype unless
``dtype`` says otherwise), built from ``linspace`` and elementwise ops, on ``device``.
``sym=True`` gives the symmetric window (filter design); ``sym=False`` the periodic one
(spectral analysis: the symmetric window of ``M + 1`` points without its last). ``M = 0``
gives an empty tensor and ``M = 1`` a single one. Bad arguments raise ``ValueError``
(``TypeError`` for missing ``general_cosine`` coefficients), as PyTorch does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .. import _dtype
from .._ops import canonical

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]


def _checks(name: str, M: int, dtype, layout) -> object:
    if dtype is None:
        dtype = _dtype.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) != "strided":
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dtype.float32, _dtype.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M: int, dtype, device, requires_grad):
    """The window for M = 0 (empty) or M = 1 (one), else None."""
    if M == 0:
        return canonical.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return canonical.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _finish(t, requires_grad: bool):
    return t.requires_grad_() if requires_grad else t


def _linspace(start: float, step: float, M: int, dtype, device):
    return canonical.linspace(start, start + (M - 1) * step, M, dtype=dtype, device=device)


def exponential(M: int, *, center=None, tau: float = 1.0, sym: bool = True, dtype=None, layout=None, device=None,
                requires_grad: bool = False):  # fmt: skip
    """``exp(-|n - center| / tau)``; ``center`` defaults to the middle and must be None when ``sym``."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if (out := _trivial(M, dtype, device, requires_grad)) is not None:
        return out
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _linspace(-center / tau, 1 / tau, M, dtype, device)
    return _finish(canonical.exp(canonical.neg(canonical.abs(k))), requires_grad)


def cosine(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The sine (cosine) window ``sin(pi (n + 0.5) / M)``."""
    dtype = _checks("cosine", M, dtype, layout)
    if (out := _trivial(M, dtype, device, requires_grad)) is not None:
        return out
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _linspace(0.5 * constant, constant, M, dtype, device)
    return _finish(canonical.sin(k), requires_grad)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False):  # fmt: skip
    """``exp(-(n - (M - 1) / 2)^2 / (2 std^2))``."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if (out := _trivial(M, dtype, device, requires_grad)) is not None:
        return out
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _linspace(start * constant, constant, M, dtype, device)
    return _finish(canonical.exp(canonical.neg(canonical.mul(k, k))), requires_grad)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=None, device=None,
           requires_grad: bool = False):  # fmt: skip
    """``I0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / I0(beta)``."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if (out := _trivial(M, dtype, device, requires_grad)) is not None:
        return out
    beta = float(beta)
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = min(beta, -beta + (M - 1) * constant)
    k = canonical.linspace(-beta, end, M, dtype=dtype, device=device)
    b = canonical.full((), beta, dtype=dtype, device=device)
    inner = canonical.sqrt(canonical.sub(canonical.mul(b, b), canonical.mul(k, k)))
    return _finish(canonical.div(canonical.i0(inner), canonical.i0(b)), requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The triangular window ``1 - |2n / (M - 1) - 1|``."""
    dtype = _checks("bartlett", M, dtype, layout)
    if (out := _trivial(M, dtype, device, requires_grad)) is not None:
        return out
    constant = 2 / (M if not sym else M - 1)
    k = _linspace(-1.0, constant, M, dtype, device)
    return _finish(canonical.rsub(canonical.abs(k), 1), requires_grad)


def general_cosine(M: int, *, a: Iterable, sym: bool = True, dtype=None, layout=None, device=None,
                   requires_grad: bool = False):  # fmt: skip
    """``sum_i (-1)^i a[i] cos(2 pi i n / (M - 1))``."""
    dtype = _checks("general_cosine", M, dtype, layout)
    if a is None:
        raise TypeError("Coefficients are required")
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    a = list(a)
    if not a:
        raise ValueError("Coefficients cannot be empty")
    if (out := _trivial(M, dtype, device, requires_grad)) is not None:
        return out
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _linspace(0.0, constant, M, dtype, device)
    out = None
    for i, w in enumerate(a):
        term = canonical.mul(canonical.cos(canonical.mul(k, float(i))), (-1) ** i * float(w))
        out = term if out is None else canonical.add(out, term)
    return _finish(out, requires_grad)


def general_hamming(M: int, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=None, device=None,
                    requires_grad: bool = False):  # fmt: skip
    """``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)  # fmt: skip


def hamming(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The Hamming window: ``general_hamming`` with ``alpha = 0.54``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The Hann window: ``general_hamming`` with ``alpha = 0.5``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)  # fmt: skip


def blackman(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The Blackman window: ``general_cosine`` with ``a = [0.42, 0.5, 0.08]``."""
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)  # fmt: skip


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The minimum 4-term Blackman-Harris window of Nuttall (SciPy's coefficients)."""
    a = [0.3635819, 0.4891775, 0.1365995, 0.0106411]
    return general_cosine(M, a=a, sym=sym, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
