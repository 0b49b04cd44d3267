"""The standard's ``fft`` extension (``opweave.array_api.fft``): ``axis=``/``axes=`` for PyTorch's ``dim=``,
``fftfreq``/``rfftfreq`` with ``dtype=``/``device=``."""

from __future__ import annotations

import builtins

import opweave as ow

from .._tensor import Tensor
from ._dtypes import DEFAULT_FLOAT

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]


def _one(name):
    op = getattr(ow.fft, name)

    def f(x: Tensor, /, *, n: builtins.int | None = None, axis: builtins.int = -1, norm: str = "backward"):
        return op(x, n=n, dim=axis, norm=norm)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's one-dimensional ``{name}`` along ``axis`` (``n`` points, ``norm`` scaling)."
    return f


def _many(name):
    op = getattr(ow.fft, name)

    def f(x: Tensor, /, *, s=None, axes=None, norm: str = "backward"):
        if axes is None and s is not None:
            axes = tuple(range(-len(s), 0))
        return op(x, s=None if s is None else tuple(s), dim=None if axes is None else tuple(axes), norm=norm)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"The standard's ``{name}`` over ``axes`` (sizes ``s``, ``norm`` scaling)."
    return f


fft = _one("fft")
ifft = _one("ifft")
rfft = _one("rfft")
irfft = _one("irfft")
hfft = _one("hfft")
ihfft = _one("ihfft")
fftn = _many("fftn")
ifftn = _many("ifftn")
rfftn = _many("rfftn")
irfftn = _many("irfftn")


def fftfreq(n: builtins.int, /, *, d: builtins.float = 1.0, dtype=None, device=None) -> Tensor:
    """The sample frequencies of an ``n``-point DFT with spacing ``d``."""
    return ow.fft.fftfreq(n, d, dtype=dtype or DEFAULT_FLOAT, device=device)


def rfftfreq(n: builtins.int, /, *, d: builtins.float = 1.0, dtype=None, device=None) -> Tensor:
    """The non-negative sample frequencies of an ``n``-point real DFT with spacing ``d``."""
    return ow.fft.rfftfreq(n, d, dtype=dtype or DEFAULT_FLOAT, device=device)


def fftshift(x: Tensor, /, *, axes=None) -> Tensor:
    """``x`` with the zero frequency moved to the centre of ``axes``."""
    return ow.fft.fftshift(x, dim=axes)


def ifftshift(x: Tensor, /, *, axes=None) -> Tensor:
    """The inverse of ``fftshift``."""
    return ow.fft.ifftshift(x, dim=axes)
