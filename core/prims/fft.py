"""FFT prims (tag ``fft``), as ATen's ``_fft_c2c`` / ``_fft_r2c`` / ``_fft_c2r``.

``normalization``: 0 = none, 1 = multiply by ``1/sqrt(n)``, 2 = multiply by ``1/n``,
where ``n`` is the product of the signal sizes of the transformed dims (for
``fft_c2r``, ``last_dim_size`` along the last transformed dim). The scale is the
same for forward and backward transforms. Complex dtypes are complex64 (float32
inputs) and complex128 (float64 inputs); float16/bfloat16 raise TypeError. A
transformed dim of size 0 raises ValueError.
"""

from __future__ import annotations

from .. import _dtype
from .._meta import empty as meta_empty
from .._ops import define_prim
from ..errors import DimIndexError
from ._utils import COMPLEX, check_dtype, check_tensor, wrap_dims

_REAL = frozenset({_dtype.float32, _dtype.float64})


def _check(op: str, x, dim, normalization, allowed, need_dims: bool) -> tuple:
    """Validate input, dims and normalization; returns the normalised dims."""
    check_tensor(op, "self", x)
    check_dtype(op, "self", x, allowed)
    if x.ndim == 0:
        raise DimIndexError(f"{op}: argument 'self' must have at least one dim")
    dims = wrap_dims(op, dim, x.ndim, "dim")
    if need_dims and not dims:
        raise ValueError(f"{op}: argument 'dim' must not be empty")
    if normalization not in (0, 1, 2):
        raise ValueError(f"{op}: argument 'normalization' must be 0, 1 or 2, got {normalization}")
    return dims


def _nonempty(op: str, x, dims) -> None:
    for d in dims:
        if x.shape[d] == 0:
            raise ValueError(f"{op}: invalid number of data points (0) in dim {d}")


def fft_c2c_meta(self, dim, normalization, forward):
    """Complex-to-complex FFT over ``dim`` (forward: ``exp(-2 pi i jk/n)``; backward: ``exp(+...)``, unscaled)."""
    op = "prims::fft_c2c"
    dims = _check(op, self, dim, normalization, COMPLEX, False)
    _nonempty(op, self, dims)
    return meta_empty(self.shape, self.dtype)


def fft_r2c_meta(self, dim, normalization, onesided):
    """Real-to-complex forward FFT over ``dim``; ``onesided`` keeps ``n // 2 + 1`` entries on its last dim."""
    op = "prims::fft_r2c"
    dims = _check(op, self, dim, normalization, _REAL, True)
    _nonempty(op, self, dims)
    shape = list(self.shape)
    if onesided:
        shape[dims[-1]] = shape[dims[-1]] // 2 + 1
    return meta_empty(shape, self.dtype.to_complex())


def fft_c2r_meta(self, dim, normalization, last_dim_size):
    """Complex-to-real backward FFT of a Hermitian half-spectrum over ``dim`` (unscaled inverse of r2c).

    The output's last transformed dim has ``last_dim_size`` entries; the input's is read up
    to ``last_dim_size // 2 + 1`` entries (zero-padded if shorter, as ``torch.fft.irfftn``);
    the imaginary parts that Hermitian symmetry makes redundant are ignored.
    """
    op = "prims::fft_c2r"
    dims = _check(op, self, dim, normalization, COMPLEX, True)
    _nonempty(op, self, dims)
    if last_dim_size < 1:
        raise ValueError(f"{op}: argument 'last_dim_size' must be positive, got {last_dim_size}")
    shape = list(self.shape)
    shape[dims[-1]] = last_dim_size
    return meta_empty(shape, self.dtype.to_real())


def _define():
    define_prim(
        "fft_c2c(Tensor self, int[] dim, int normalization, bool forward) -> Tensor", fft_c2c_meta, tags=("fft",)
    )
    define_prim(
        "fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor", fft_r2c_meta, tags=("fft",)
    )
    define_prim(
        "fft_c2r(Tensor self, int[] dim, int normalization, SymInt last_dim_size) -> Tensor",
        fft_c2r_meta,
        tags=("fft",),
    )


_define()
