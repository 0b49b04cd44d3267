"""Non-constant padding (reflect, replicate, circular) as canonical ops.

``padding``/``pad`` lists are ``(left, right)`` pairs starting from the last dim, as in
``torch.nn.functional.pad``; negative entries crop. Each padded dim is one
``prims.index_select`` with a source index computed from an ``iota``:

- reflect: ``i -> (n - 1) - |(n - 1) - |i||`` (the edge is not repeated; padding < n);
- replicate: ``i -> clamp(i, 0, n - 1)``;
- circular: ``i -> i mod m`` over the ``m`` elements the negative pads keep (padding <= m: it may not
  wrap around more than once), as PyTorch, which crops before it wraps.

``_pad_enum`` (mode 0 constant, 1 reflect, 2 replicate, 3 circular) is what ``pad``
calls. These ops accept every dtype (PyTorch's kernels refuse bool for some modes;
copying elements is well defined for all dtypes).
"""

from __future__ import annotations

from .. import _dtype
from .._ops import canonical as ops
from .._ops import prims
from ._elementwise import scalar_like
from ._utils import define_with_variants

MODES = ("constant", "reflect", "replicate", "circular")


def _source_index(mode: str, n: int, lo: int, hi: int, device):
    """int64 source positions of the padded dim's elements (length ``n + lo + hi``)."""
    i = prims.iota(n + lo + hi, start=-lo, step=1, dtype=_dtype.int64, device=device)
    last = scalar_like(n - 1, i)
    if mode == "reflect":
        return prims.sub(last, prims.abs(prims.sub(last, prims.abs(i))))
    if mode == "replicate":
        return prims.minimum(prims.maximum(i, scalar_like(0, i)), last)
    # circular wraps within what the negative pads leave (PyTorch crops first, then wraps)
    cut_lo, cut_hi = max(-lo, 0), max(-hi, 0)
    kept = n - cut_lo - cut_hi
    i = prims.iota(kept + max(lo, 0) + max(hi, 0), start=-max(lo, 0), step=1, dtype=_dtype.int64, device=device)
    return prims.add(prims.remainder(i, scalar_like(kept, i)), scalar_like(cut_lo, i))


def _pad_dims(op: str, self, pad, mode: str):
    """Pad the trailing ``len(pad) // 2`` dims of ``self`` with ``mode``."""
    out = self
    for k in range(len(pad) // 2):
        dim = self.ndim - 1 - k
        n, lo, hi = self.shape[dim], pad[2 * k], pad[2 * k + 1]
        if n + lo + hi < 1:
            raise ValueError(
                f"{op}: input size {n} at dim {dim} is too small for padding ({lo}, {hi}): output size {n + lo + hi}"
            )
        if mode == "reflect" and (lo >= n or hi >= n):
            raise ValueError(
                f"{op}: padding ({lo}, {hi}) at dim {dim} should be less than the input size {n} for reflection"
            )
        kept = n - max(-lo, 0) - max(-hi, 0)
        if mode == "circular" and (kept < 1 or lo > kept or hi > kept):
            raise ValueError(f"{op}: padding ({lo}, {hi}) at dim {dim} would wrap around more than once (size {n})")
        if lo == 0 and hi == 0:
            continue
        out = prims.index_select(out, dim, _source_index(mode, n, lo, hi, self.device))
    return out if out is not self else prims.clone(self, memory_format="contiguous_format")


def _pad_nd(op: str, d: int, mode: str):
    def pad_nd(self, padding):
        padding = tuple(padding)
        if len(padding) != 2 * d:
            raise ValueError(f"{op}: argument 'padding' must have {2 * d} elements, got {list(padding)}")
        if self.ndim not in (d + 1, d + 2) or any(s == 0 for s in self.shape[self.ndim - d - 1 :]):
            raise ValueError(
                f"{op}: expected a {d + 1}-D or {d + 2}-D (batch mode) tensor with non-empty non-batch dims "
                f"for argument 'self', got shape {list(self.shape)}"
            )
        return _pad_dims(op, self, padding, mode)

    pad_nd.__name__ = op
    pad_nd.__doc__ = (
        f"{mode.capitalize()} padding of the last {d} dim(s); ``padding`` = (left, right) per dim, last first."
    )
    return pad_nd


def _pad_circular(self, pad):
    """Circular padding of the trailing ``len(pad) // 2`` dims; 1 or 2 leading dims stay unpadded."""
    op = "_pad_circular"
    pad = tuple(pad)
    if len(pad) % 2:
        raise ValueError(f"{op}: argument 'pad' must have an even length, got {len(pad)}")
    if self.ndim - len(pad) // 2 not in (1, 2):
        raise ValueError(
            f"{op}: invalid padding size {len(pad)} for a {self.ndim}-D input: expected 1 or 2 non-padded dims"
        )
    return _pad_dims(op, self, pad, "circular")


def _pad_enum(self, pad, mode, value=None):
    """``pad`` with ``mode`` as an int: 0 constant (``value``, default 0), 1 reflect, 2 replicate, 3 circular."""
    op = "_pad_enum"
    pad = tuple(pad)
    if not 0 <= mode < len(MODES):
        raise ValueError(f"{op}: argument 'mode' must be 0-3 (constant, reflect, replicate, circular), got {mode}")
    if len(pad) % 2:
        raise ValueError(f"{op}: Padding length must be divisible by 2, got {len(pad)}")
    if len(pad) > 2 * self.ndim:
        raise ValueError(
            f"{op}: Padding length should be at most twice the input dimension, got {len(pad)} for {self.ndim} dims"
        )
    name = MODES[mode]
    if name == "constant":
        return ops.constant_pad_nd(self, list(pad), 0 if value is None else value)
    if value is not None and value != 0:
        raise ValueError(f'{op}: padding mode "{name}" doesn\'t take in value argument')
    d = len(pad) // 2
    if name == "circular":
        return _pad_circular(self, pad)
    if d not in (1, 2, 3) or self.ndim not in (d + 1, d + 2):
        raise ValueError(
            f"{op}: only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now "
            f"(pad of length {len(pad)} for a {self.ndim}-D input)"
        )
    prefix = "reflection" if name == "reflect" else "replication"
    return getattr(ops, f"{prefix}_pad{d}d")(self, list(pad))


def _define():
    for d in (1, 2, 3):
        for prefix, mode in (("reflection", "reflect"), ("replication", "replicate")):
            name = f"{prefix}_pad{d}d"
            core = d > 1 or prefix == "reflection"
            define_with_variants(
                f"{name}(Tensor self, SymInt[{2 * d}] padding) -> Tensor",
                _pad_nd(name, d, mode),
                tags=("core",) if core else (),
                inplace=False,
            )
    define_with_variants("_pad_circular(Tensor self, SymInt[] pad) -> Tensor", _pad_circular, inplace=False, out=False)
    define_with_variants(
        "_pad_enum(Tensor self, SymInt[] pad, int mode, float? value=None) -> Tensor",
        _pad_enum,
        inplace=False,
        out=False,
    )


_define()
