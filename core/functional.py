"""``opweave.functional``: PyTorch's Python-level functions (``torch.functional``) over the canonical ops.

PyTorch writes a few of its ``torch.*`` functions in Python on top of ATen ops, with
signatures that differ from the ATen schemas: ``norm`` (string ``p``, ``dim=``),
``tensordot`` (``dims=`` as an int, a pair of lists or a tensor), ``cdist`` (string
``compute_mode``), ``nonzero`` (``as_tuple=``), ``lu``, ``broadcast_shapes`` and
``unravel_index``. These are those functions; ``opweave.<name>`` and the Tensor methods
of the same names are them, while ``opweave.ops.<name>`` stays the canonical op.
Errors follow PyTorch's types (:mod:`opweave.errors`).
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from typing import Any

from . import _dtype
from ._factories import tensor
from ._ops import canonical
from ._tensor import Size, Tensor
from .errors import ValueRuntimeError

__all__ = ["norm", "tensordot", "cdist", "nonzero", "lu", "broadcast_shapes", "unravel_index", "stft"]


def norm(
    input: Tensor,  # noqa: A002
    p: float | str | None = "fro",
    dim: int | Sequence[int] | None = None,
    keepdim: bool = False,
    out: Tensor | None = None,
    dtype: _dtype.dtype | None = None,
) -> Tensor:
    """PyTorch's ``torch.norm``: a vector norm, or for ``p="fro"``/``"nuc"`` over two dims a matrix norm.

    ``p`` a number (or None: 2) is the vector norm over ``dim`` (all dims when None);
    ``"fro"`` over at most two dims is the 2-norm of the flattened dims; ``"nuc"`` (or
    ``"fro"`` over more dims) is ``linalg.matrix_norm`` over ``dim`` (the last two when None).
    """
    dims = [dim] if isinstance(dim, int) else (None if dim is None else list(dim))
    kwargs = {} if out is None else {"out": out}
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return canonical.linalg_vector_norm(input, 2, dims, keepdim, dtype=dtype, **kwargs)
        if dims is None:
            dims = list(range(input.ndim))
        return canonical.linalg_matrix_norm(input, p, dims, keepdim, dtype=dtype, **kwargs)
    return canonical.linalg_vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype, **kwargs)


def _as_dims(value) -> list:
    if isinstance(value, Tensor):
        value = value.tolist()
    return [value] if isinstance(value, int) else list(value)


def tensordot(
    a: Tensor, b: Tensor, dims: int | Sequence[int] | Sequence[Sequence[int]] = 2, out: Tensor | None = None, *args: Any
) -> Tensor:
    """Contract ``dims`` of ``a`` with ``dims`` of ``b`` (PyTorch's ``torch.tensordot``).

    ``dims`` is an int ``d`` (the last ``d`` dims of ``a`` with the first ``d`` of ``b``), a
    pair of dim lists, or a tensor of either. ATen's form ``tensordot(a, b, dims_a, dims_b)``
    (a list in place of ``out``) is accepted too.
    """
    if out is not None and not isinstance(out, Tensor):  # ATen's positional dims_self, dims_other
        return canonical.tensordot(a, b, _as_dims(dims), _as_dims(out), *args)
    if isinstance(dims, Tensor):
        dims = dims.tolist() if dims.numel() > 1 else int(dims.item())
    if isinstance(dims, (list, tuple)):
        if len(dims) != 2:
            raise ValueRuntimeError(f"tensordot: 'dims' must be an int or a pair of dim lists, got {dims!r}")
        dims_a, dims_b = _as_dims(dims[0]), _as_dims(dims[1])
    elif isinstance(dims, int) and not isinstance(dims, bool):
        if dims < 0:
            raise ValueRuntimeError(f"tensordot: expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise ValueRuntimeError(f"tensordot: expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    else:
        raise TypeError(
            f"tensordot: argument 'dims' must be int, a pair of lists or a Tensor, not {type(dims).__name__}"
        )
    kwargs = {} if out is None else {"out": out}
    return canonical.tensordot(a, b, dims_a, dims_b, **kwargs)


_CDIST_MODES = {
    "use_mm_for_euclid_dist_if_necessary": None,
    "use_mm_for_euclid_dist": 1,
    "donot_use_mm_for_euclid_dist": 2,
}


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """The ``p``-norm distance between each row of ``x1`` and each row of ``x2`` (batched).

    ``compute_mode`` is PyTorch's string (or ATen's int / None); every mode computes the
    distances directly, so results never carry the matrix-product shortcut's cancellation.
    """
    if isinstance(compute_mode, str):
        if compute_mode not in _CDIST_MODES:
            raise ValueError(f"cdist: {compute_mode!r} is not a valid value for compute_mode")
        compute_mode = _CDIST_MODES[compute_mode]
    return canonical.cdist(x1, x2, p, compute_mode)


def nonzero(input: Tensor, *, out: Tensor | None = None, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:  # noqa: A002
    """Indices of the non-zero elements: an (n, ndim) int64 tensor, or with ``as_tuple`` one 1-D tensor per dim.

    A 0-dim input with ``as_tuple=True`` is treated as 1-D, as in PyTorch.
    """
    if not as_tuple:
        return canonical.nonzero(input) if out is None else canonical.nonzero(input, out=out)
    if out is not None:
        raise ValueRuntimeError("nonzero: out= is not supported with as_tuple=True")
    x = canonical.reshape(input, (1,)) if input.ndim == 0 else input
    return tuple(canonical.unbind(canonical.nonzero(x), 1))


def lu(
    A: Tensor, pivot: bool = True, get_infos: bool = False, out: tuple[Tensor, ...] | None = None
) -> tuple[Tensor, ...]:
    """PyTorch's deprecated ``torch.lu``: ``(LU, pivots)``, plus ``infos`` with ``get_infos=True``.

    Without ``get_infos`` a failed factorisation raises, as ``linalg.lu_factor`` does.
    """
    if get_infos:
        result = canonical.linalg_lu_factor_ex(A, pivot=pivot)
    else:
        result = canonical.linalg_lu_factor(A, pivot=pivot)
    if out is not None:
        for target, value in zip(out, result):
            canonical.resize_(target, value.shape)
            target.copy_(value)
        return tuple(out)
    return tuple(result)


def broadcast_shapes(*shapes: int | Sequence[int]) -> Size:
    """The shape that tensors of ``shapes`` broadcast to (ints are 1-D shapes), without building tensors."""
    dims = []
    for shape in shapes:
        if isinstance(shape, int) and not isinstance(shape, bool):
            shape = (shape,)
        if not isinstance(shape, Sequence) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
            raise TypeError(f"broadcast_shapes: expected shapes as ints or sequences of ints, got {shape!r}")
        if any(s < 0 for s in shape):
            raise ValueRuntimeError(f"broadcast_shapes: shape {list(shape)} has a negative size")
        dims.append(tuple(shape))
    ndim = max((len(s) for s in dims), default=0)
    out = [1] * ndim
    for shape in dims:
        for i, size in enumerate(shape, ndim - len(shape)):
            if size != out[i] and size != 1:
                if out[i] != 1:
                    raise ValueRuntimeError(
                        f"broadcast_shapes: shape mismatch: objects cannot be broadcast to a single shape "
                        f"({[list(s) for s in dims]}; {size} against {out[i]} at dim {i})"
                    )
                out[i] = size
    return Size(out)


def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates of flat ``indices`` in a tensor of ``shape``: one int64 tensor per dim.

    Indices outside ``[0, numel)`` wrap around (each coordinate is taken modulo its size), as in PyTorch.
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"unravel_index: expected 'indices' to be a Tensor, got {type(indices).__name__}")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is _dtype.bool_:
        raise TypeError(f"unravel_index: expected 'indices' to be integer dtype, but got {indices.dtype.name}")
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, Sequence) or not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise TypeError(f"unravel_index: expected 'shape' to be an int or a sequence of ints, got {shape!r}")
    if any(s < 0 for s in shape):
        raise ValueError(f"unravel_index: 'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = list(reversed(list(itertools.accumulate(reversed(tuple(shape[1:]) + (1,)), operator.mul))))
    device = indices.device
    flat = canonical.unsqueeze(indices.to(_dtype.int64), -1)
    coefs_t = tensor(coefs, dtype=_dtype.int64, device=device)
    sizes_t = tensor(list(shape), dtype=_dtype.int64, device=device)
    coords = canonical.remainder(canonical.floor_divide(flat, coefs_t), sizes_t)
    return tuple(canonical.unbind(coords, -1))


# Tensor methods that PyTorch defines through these functions.
def stft(
    input: Tensor,  # noqa: A002 - PyTorch's name
    n_fft: int,
    hop_length: int | None = None,
    win_length: int | None = None,
    window: Tensor | None = None,
    center: bool = True,
    pad_mode: str = "reflect",
    normalized: bool = False,
    onesided: bool | None = None,
    return_complex: bool | None = None,
    align_to_window: bool | None = None,
) -> Tensor:
    """PyTorch's ``torch.stft``: frames centred by default (``center=True`` pads ``n_fft // 2`` on both
    ends with ``pad_mode``), unlike the ATen overload ``opweave.ops.stft`` without ``center``."""
    return canonical.stft.center(
        input,
        n_fft,
        hop_length,
        win_length,
        window,
        center,
        pad_mode,
        normalized,
        onesided,
        return_complex,
        align_to_window,
    )


METHODS = {"norm": norm, "nonzero": nonzero, "lu": lu, "stft": stft}


def install(namespace: dict, tensor_cls: type = Tensor) -> None:
    """Put the functions in ``namespace`` (``opweave``) and the methods on Tensor."""
    for name in __all__:
        namespace[name] = globals()[name]
    for name, fn in METHODS.items():
        setattr(tensor_cls, name, fn)
