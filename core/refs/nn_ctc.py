"""The connectionist temporal classification loss (``ctc_loss``, ATen's two overloads).

``-log p(target | log_probs)`` summed over every alignment of the target (with blanks between and
around its labels, repeated labels separated by a blank) by the forward algorithm in log space:
one step per time frame, batched over the sequences, on canonical ops only. Lengths are read as
Python ints (the ``Tensor`` overload moves them to the host, as PyTorch does).
"""

from __future__ import annotations

from .. import _dtype
from .._factories import tensor
from .._ops import canonical as ops
from ._nn_utils import reduction_enum
from ._utils import define_with_variants

_INDEX = (_dtype.int32, _dtype.int64, _dtype.int16, _dtype.int8, _dtype.uint8)
_NEG_INF = float("-inf")


def _lengths(op: str, name: str, lengths, count: int) -> list[int]:
    if hasattr(lengths, "dtype"):
        if lengths.dtype not in _INDEX:
            raise RuntimeError(f"{op}: '{name}' must be an integer tensor, got {lengths.dtype.name}")
        values = lengths.reshape(-1).tolist()
    else:
        values = [int(v) for v in lengths]
    if len(values) != count:
        raise RuntimeError(f"{op}: '{name}' must have {count} entries (the batch size), got {len(values)}")
    for v in values:
        if v < 0:
            raise RuntimeError(f"{op}: '{name}' must be non-negative, got {v}")
    return values


def _padded_targets(op: str, targets, target_lengths: list[int], batched: bool):
    """``targets`` as an (N, S) int64 tensor, from the padded (N, S) or the concatenated 1-D layout."""
    n = len(target_lengths)
    if targets.dtype not in _INDEX:
        raise RuntimeError(f"{op}: 'targets' must be an integer tensor, got {targets.dtype.name}")
    targets = ops.to(targets, dtype=_dtype.int64)
    width = max(target_lengths, default=0)
    if batched and targets.ndim == 2:
        if targets.shape[0] != n:
            raise RuntimeError(f"{op}: 'targets' has {targets.shape[0]} rows for a batch of {n}")
        if width > targets.shape[1]:
            raise RuntimeError(
                f"{op}: a target length ({width}) exceeds the targets' second dimension ({targets.shape[1]})"
            )
        return ops.narrow(targets, 1, 0, width) if width < targets.shape[1] else targets
    if targets.ndim != 1:
        raise RuntimeError(f"{op}: 'targets' must be 1-D (concatenated) or 2-D (padded), got {targets.ndim} dims")
    if not batched:
        if width > targets.shape[0]:
            raise RuntimeError(f"{op}: the target length ({width}) exceeds the targets' size ({targets.shape[0]})")
        return ops.unsqueeze(ops.narrow(targets, 0, 0, width), 0)
    if sum(target_lengths) > targets.shape[0]:
        raise RuntimeError(f"{op}: the target lengths sum to more than the {targets.shape[0]} targets given")
    rows, start = [], 0
    for length in target_lengths:
        row = ops.narrow(targets, 0, start, length)
        rows.append(ops.constant_pad_nd(row, [0, width - length], 0))
        start += length
    return ops.stack(rows) if rows else ops.zeros((0, width), dtype=_dtype.int64, device=targets.device)


def _ctc(op, log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity):
    r = reduction_enum(op, reduction)
    if any(
        getattr(a, "device", None) is not None and a.device.type == "meta" for a in (log_probs, targets, input_lengths)
    ):
        raise NotImplementedError(f"{op}: the loss reads the target labels and lengths, which meta tensors do not hold")
    if log_probs.dtype not in (_dtype.float32, _dtype.float64, _dtype.float16, _dtype.bfloat16):
        raise RuntimeError(f"{op}: 'log_probs' must be a floating point tensor, got {log_probs.dtype.name}")
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(f"{op}: 'log_probs' must be (T, N, C) or (T, C), got {log_probs.ndim} dims")
    batched = log_probs.ndim == 3
    lp = log_probs if batched else ops.unsqueeze(log_probs, 1)
    steps, n, classes = lp.shape
    if not 0 <= blank < classes:
        raise RuntimeError(f"{op}: blank ({blank}) must be in [0, {classes})")
    in_len = _lengths(op, "input_lengths", input_lengths, n)
    tg_len = _lengths(op, "target_lengths", target_lengths, n)
    for v in in_len:
        if v > steps:
            raise RuntimeError(f"{op}: an input length ({v}) exceeds the number of time steps ({steps})")
    tg = _padded_targets(op, targets, tg_len, batched)
    if tg.numel() and (bool(ops.any(ops.lt(tg, 0))) or bool(ops.any(ops.ge(tg, classes)))):
        raise RuntimeError(f"{op}: a target label is outside [0, {classes})")
    compute = _dtype.opmath_dtype(lp.dtype)
    lp = ops.to(lp, dtype=compute)
    dev = lp.device
    width = tg.shape[1]
    ext = 2 * width + 1
    # extended labels: blank, l1, blank, l2, ..., blank
    blanks = ops.full((n, width + 1), blank, dtype=_dtype.int64, device=dev)
    labels = ops.reshape(ops.stack([ops.narrow(blanks, 1, 0, width), tg], 2), (n, 2 * width))
    labels = ops.cat([labels, ops.narrow(blanks, 1, 0, 1)], 1)
    # a skip from s-2 to s is allowed onto a label that differs from the label two places back
    skip = ops.zeros((n, ext), dtype=_dtype.bool, device=dev)
    if width > 1:
        differs = ops.ne(ops.narrow(tg, 1, 1, width - 1), ops.narrow(tg, 1, 0, width - 1))
        mask = ops.cat([ops.zeros((n, 1), dtype=_dtype.bool, device=dev), differs], 1)
        skip = ops.reshape(ops.stack([ops.zeros((n, width), dtype=_dtype.bool, device=dev), mask], 2), (n, 2 * width))
        skip = ops.cat([skip, ops.zeros((n, 1), dtype=_dtype.bool, device=dev)], 1)
    neg_inf = ops.full((n, ext), _NEG_INF, dtype=compute, device=dev)
    pad1 = ops.full((n, 1), _NEG_INF, dtype=compute, device=dev)
    pad2 = ops.full((n, 2), _NEG_INF, dtype=compute, device=dev)
    positions = ops.arange(ext, device=dev)
    in_len_t = tensor(in_len, dtype=_dtype.int64, device=dev)
    tg_len_t = tensor(tg_len, dtype=_dtype.int64, device=dev)
    alpha = neg_inf
    if steps:
        emit = ops.gather(ops.select(lp, 0, 0), 1, labels)
        start = ops.lt(positions, ops.unsqueeze(ops.clamp(ops.add(ops.mul(tg_len_t, 2), 1), max=2), 1))
        alpha = ops.where(start, emit, neg_inf)
    for t in range(1, steps):
        emit = ops.gather(ops.select(lp, 0, t), 1, labels)
        prev1 = ops.cat([pad1, ops.narrow(alpha, 1, 0, ext - 1)], 1)
        prev2 = ops.cat([pad2, ops.narrow(alpha, 1, 0, ext - 2)], 1) if ext > 2 else neg_inf
        prev2 = ops.where(skip, prev2, neg_inf)
        total = ops.logsumexp(ops.stack([alpha, prev1, prev2], 2), 2)
        stepped = ops.add(total, emit)
        alpha = ops.where(ops.unsqueeze(ops.gt(in_len_t, t), 1), stepped, alpha)
    last = ops.mul(tg_len_t, 2)
    end_blank = ops.squeeze(ops.gather(alpha, 1, ops.unsqueeze(last, 1)), 1)
    end_label = ops.squeeze(ops.gather(alpha, 1, ops.unsqueeze(ops.clamp(ops.sub(last, 1), min=0), 1)), 1)
    end_label = ops.where(ops.gt(tg_len_t, 0), end_label, ops.full_like(end_label, _NEG_INF))
    loss = ops.neg(ops.logsumexp(ops.stack([end_blank, end_label], 1), 1))
    empty_input = ops.eq(in_len_t, 0)  # no frame: probability 1 for an empty target, else 0
    loss = ops.where(
        empty_input, ops.where(ops.eq(tg_len_t, 0), ops.zeros_like(loss), ops.full_like(loss, float("inf"))), loss
    )
    if zero_infinity:
        loss = ops.where(ops.isinf(loss), ops.zeros_like(loss), loss)
    if r == 1:
        loss = ops.mean(ops.div(loss, ops.to(ops.clamp(tg_len_t, min=1), dtype=compute)))
    elif r == 2:
        loss = ops.sum(loss)
    elif not batched:
        loss = ops.squeeze(loss, 0)
    return ops.to(loss, dtype=log_probs.dtype)


def ctc_loss_IntList(  # noqa: N802 - ATen's overload name
    log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False
):
    """CTC loss with the lengths as int lists; reduction 1 (mean) divides each loss by its target length."""
    return _ctc("ctc_loss", log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)


def ctc_loss_Tensor(  # noqa: N802 - ATen's overload name
    log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1, zero_infinity=False
):
    """CTC loss with the lengths as integer tensors (read on the host)."""
    return _ctc("ctc_loss", log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)


define_with_variants(
    "ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, "
    "int reduction=Mean, bool zero_infinity=False) -> Tensor",
    ctc_loss_IntList,
    tags=("data_dependent_output",),  # the target labels are range-checked on the host
    inplace=False,
    out=False,
)
define_with_variants(
    "ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank=0, "
    "int reduction=Mean, bool zero_infinity=False) -> Tensor",
    ctc_loss_Tensor,
    tags=("data_dependent_output",),  # the target labels are range-checked on the host
    inplace=False,
    out=False,
)
