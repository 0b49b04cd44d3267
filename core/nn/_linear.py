"""nn.functional: ``linear`` and ``bilinear`` (the canonical ops, with F's argument names)."""

from __future__ import annotations

from .._ops import canonical

__all__ = ["linear", "bilinear", "linear_cross_entropy"]

linear = canonical.linear
bilinear = canonical.bilinear


def linear_cross_entropy(
    input,  # noqa: A002
    linear_weight,
    target,
    *,
    linear_bias=None,
    weight=None,
    reduction: str = "mean",
    ignore_index=None,
    label_smoothing: float = 0.0,
    options=None,
):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)`` (PyTorch's fused loss).

    ``linear_weight`` is (classes, *out_features, in_features) for a K-dimensional loss. PyTorch's
    ``options`` choose a memory-saving chunked evaluation; opweave computes the same values
    directly, so ``options`` is accepted and does not change the result.
    """
    from .._ops import canonical as ops
    from ..errors import ValueRuntimeError
    from ._misc import cross_entropy

    if input.ndim not in (1, 2):
        raise ValueRuntimeError(f"expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise ValueRuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise ValueRuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {linear_weight.shape[-1]}, respectively"
        )
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise ValueRuntimeError(
            f"expected linear_bias shape {(classes, *out_features)}, got {tuple(linear_bias.shape)}"
        )
    if out_features and not batches:
        raise ValueRuntimeError(f"K-dimensional loss needs batched input (N, {in_features}), got {tuple(input.shape)}")
    logits_shape = (*batches, classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise ValueRuntimeError("ignore_index cannot be specified when target contains probabilities")
    n_out = classes
    for f in out_features:
        n_out *= f
    w = ops.reshape(linear_weight, (n_out, in_features))
    b = None if linear_bias is None else ops.reshape(linear_bias, (n_out,))
    logits = ops.reshape(linear(input, w, b), logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )
