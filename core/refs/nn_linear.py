"""``bilinear``: ``y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o]`` (PyTorch's ``F.bilinear``).

Decomposed into one matrix product (``x1`` against ``W`` with ``in1`` as the inner dim) and a
multiply-sum over ``in2``; the operands share one dtype, as ``matmul`` requires.
"""

from __future__ import annotations

from .._ops import canonical as ops
from ._utils import define_with_variants


def bilinear(input1, input2, weight, bias=None):
    """``input1ᵀ W input2 + b`` over the last dim; ``weight`` is (out, in1, in2), ``bias`` (out,)."""
    op = "bilinear"
    if input1.ndim != input2.ndim:
        raise ValueError(
            f"{op}: input1 and input2 must have the same number of dims, got {input1.ndim} and {input2.ndim}"
        )
    if input1.ndim == 0:
        raise ValueError(f"{op}: input1 and input2 must be at least 1-D")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ValueError(
            f"{op}: input1 and input2 must have the same batch dims, got {list(input1.shape)} and {list(input2.shape)}"
        )
    if weight.ndim != 3:
        raise ValueError(f"{op}: argument 'weight' must be 3-D (out, in1, in2), got {weight.ndim}-D")
    n_out, in1, in2 = weight.shape
    if input1.shape[-1] != in1 or input2.shape[-1] != in2:
        raise ValueError(
            f"{op}: input sizes {input1.shape[-1]} and {input2.shape[-1]} do not match weight's {in1} and {in2}"
        )
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != n_out):
        raise ValueError(f"{op}: argument 'bias' must have shape [{n_out}], got {list(bias.shape)}")
    for name, t in (("input2", input2), ("weight", weight)) + ((("bias", bias),) if bias is not None else ()):
        if t.dtype is not input1.dtype:
            raise TypeError(f"{op}: expected '{name}' to have dtype {input1.dtype.name}, but got {t.dtype.name}")
    batch = input1.shape[:-1]
    x1 = ops.reshape(input1, (-1, in1))
    x2 = ops.reshape(input2, (-1, in2))
    w = ops.reshape(ops.permute(weight, (1, 0, 2)), (in1, n_out * in2))
    inner = ops.reshape(ops.matmul(x1, w), (-1, n_out, in2))
    out = ops.sum(ops.mul(inner, ops.unsqueeze(x2, 1)), -1)
    if bias is not None:
        out = ops.add(out, bias)
    return ops.reshape(out, tuple(batch) + (n_out,))


define_with_variants(
    "bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor",
    bilinear,
    tags=("linalg",),
    inplace=False,
    out=False,
)
