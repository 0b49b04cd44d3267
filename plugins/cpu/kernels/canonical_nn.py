"""Direct CPU kernels for the hot nn canonical ops: softmax, log_softmax, layer_norm, gelu, cross_entropy_loss.

Each handles the common case — float32/float64 inputs, no dtype conversion, the
op's usual arguments — with a few NumPy calls that reuse their buffers, and declines
every other call (16-bit floats, weights, label smoothing, invalid arguments) with
``raise Decline``: the dispatcher then runs the op's reference decomposition, so errors
and edge cases are the decomposition's.
float32 (and, where the CPU has AVX512-BF16, bfloat16) calls of at least ``MIN_ELEMENTS`` run oneDNN
primitives (``_onednn_path``) unless
``OPWEAVE_CPU_KERNELS=numpy``; where oneDNN's result holds a NaN (a NaN input, or erf-gelu at +inf)
the NumPy formula recomputes the call, so special values follow PyTorch.
Results agree with the decomposition to rounding (``tests/refs/test_nn_cpu_direct.py``);
layer_norm's variance is accumulated in the input's dtype (two-pass) where the
decomposition's ``var`` prim accumulates in float64.
"""

from __future__ import annotations

import math

import numpy as np
import opweave
import scipy.special as sp
from opweave import ops
from opweave.backends.kernel import Decline

from . import _onednn_path as dnnl
from ._common import native, wrap
from ._quiet import quiet

_FAST = frozenset({opweave.float32, opweave.float64})


def _softmax_kernel(packet_name: str, log: bool, internal: bool):
    op = getattr(ops, packet_name)
    op = op.default if internal else op.int

    def kernel(self, dim, third=None):
        # third: ``dtype`` (softmax.int) or ``half_to_float`` (_softmax)
        converts = bool(third) if internal else third is not None and third is not self.dtype
        bf16 = self.dtype is opweave.bfloat16
        if converts or not (self.dtype in _FAST or bf16) or self.ndim == 0 or self.numel() == 0:
            raise Decline("not a float32/float64 softmax along a valid dim")
        if not -self.ndim <= dim < self.ndim:
            raise Decline("not a float32/float64 softmax along a valid dim")
        x = native(self)
        if dnnl.supports(x.dtype, x.size):
            y = dnnl.softmax(x, dim % x.ndim, log)
            if y is not None and not np.isnan(y.sum(dtype=np.float32)):  # a NaN row: NumPy's (all-NaN) rows
                return wrap(y, self.dtype)
        if bf16:
            raise Decline("bfloat16 without oneDNN: the decomposition computes in float32")
        return wrap(quiet(_softmax_numpy, x, dim, log), self.dtype)

    kernel.__doc__ = f"{op.name} along one dim of a float32/float64 tensor (else the decomposition)."
    return kernel


def _softmax_numpy(x: np.ndarray, dim: int, log: bool) -> np.ndarray:
    """(log-)softmax of ``x`` along ``dim`` in ``x``'s dtype, max-shifted."""
    shifted = x - np.maximum.reduce(x, axis=dim, keepdims=True)  # np.max and np.sum without their wrappers
    if log:
        e = np.exp(shifted)
        total = np.add.reduce(e, axis=dim, keepdims=True)
        np.subtract(shifted, np.log(total, out=total), out=shifted)
        return shifted
    np.exp(shifted, out=shifted)
    np.divide(shifted, np.add.reduce(shifted, axis=dim, keepdims=True), out=shifted)
    return shifted


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """layer_norm of a float32/float64 tensor with same-dtype (or no) weight and bias (else the decomposition)."""
    dtype = input.dtype
    k = len(normalized_shape)
    bf16 = dtype is opweave.bfloat16
    fast = (
        (dtype in _FAST or bf16)
        and 0 < k <= input.ndim
        and list(input.shape[input.ndim - k :]) == [int(s) for s in normalized_shape]
        and input.numel() > 0
        and all(
            t is None or (t.dtype is dtype and list(t.shape) == list(normalized_shape) and t.device.type == "cpu")
            for t in (weight, bias)
        )
    )
    if not fast:
        raise Decline("not a float32/float64 layer_norm over the last dims")
    x = native(input)
    if dnnl.supports(x.dtype, x.size):
        width = math.prod(x.shape[input.ndim - k :])
        w = None if weight is None else native(weight)
        b = None if bias is None else native(bias)
        y = dnnl.layer_norm(x, width, eps, w, b)
        if y is not None:
            return wrap(y, dtype)
    if bf16:
        raise Decline("bfloat16 without oneDNN: the decomposition computes in float32")
    axes = tuple(range(input.ndim - k, input.ndim))
    with np.errstate(all="ignore"):
        centered = x - np.mean(x, axis=axes, keepdims=True)
        sq = np.square(centered)
        var = np.mean(sq, axis=axes, keepdims=True)
        del sq
        np.add(var, np.dtype(dtype.numpy).type(eps), out=var)
        np.sqrt(var, out=var)
        np.divide(centered, var, out=centered)
        if weight is not None:
            np.multiply(centered, native(weight), out=centered)
        if bias is not None:
            np.add(centered, native(bias), out=centered)
    return wrap(centered, dtype)


_SQRT_HALF = math.sqrt(0.5)
_TANH_BETA = math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5


def _gelu(self, approximate="none"):
    """gelu of a float32/float64 tensor, exact or tanh (else the decomposition)."""
    dtype = self.dtype
    bf16 = dtype is opweave.bfloat16
    if not (dtype in _FAST or bf16) or approximate not in ("none", "tanh"):
        raise Decline("not float32/float64 with approximate 'none' or 'tanh'")
    x = native(self)
    if dnnl.supports(x.dtype, x.size):
        algorithm = dnnl.gelu_algorithm(approximate == "tanh")
        y = dnnl.eltwise(algorithm, x)
        if y is not None and not np.isnan(y.sum(dtype=np.float32)):  # erf gelu is NaN at +inf in oneDNN
            return wrap(y, dtype)
    if bf16:
        raise Decline("bfloat16 without oneDNN: the decomposition computes in float32")
    return wrap(quiet(_gelu_numpy, x, approximate == "tanh"), dtype)


def _gelu_numpy(x: np.ndarray, tanh: bool) -> np.ndarray:
    """gelu of ``x`` in ``x``'s dtype, exact (erf) or the tanh approximation, in one buffer."""
    scalar = x.dtype.type
    if not tanh:
        cdf = np.asarray(np.multiply(x, scalar(_SQRT_HALF)))
        sp.erf(cdf, out=cdf)
    else:
        cdf = np.asarray(np.multiply(x, x))
        np.multiply(cdf, scalar(0.044715), out=cdf)
        np.multiply(cdf, x, out=cdf)
        np.add(cdf, x, out=cdf)
        np.multiply(cdf, scalar(_TANH_BETA), out=cdf)
        np.tanh(cdf, out=cdf)
    np.add(cdf, scalar(1), out=cdf)
    np.multiply(cdf, x, out=cdf)
    np.multiply(cdf, scalar(0.5), out=cdf)
    return cdf


def _nll_of_log_softmax(x: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``-log_softmax(x, 1)[i, classes[i]]`` per row, log_softmax and the pick fused.

    ``logsumexp - x[class]`` without materialising log_softmax: the shifted logits are exponentiated
    in place and summed. (oneDNN's log-softmax primitive was measured slower here: it writes every
    log-probability and a NaN check must read them again.)
    """
    shifted = x - np.max(x, axis=1, keepdims=True)
    picked = np.take_along_axis(shifted, classes[:, None], axis=1)[:, 0]
    np.exp(shifted, out=shifted)
    return np.log(np.sum(shifted, axis=1)) - picked


def _cross_entropy(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    """cross_entropy_loss of (N, C) float32/float64 logits and int64 class indices, no weight or smoothing."""
    r = {"Mean": 1, "Sum": 2, "None": 0}.get(reduction, reduction) if isinstance(reduction, str) else reduction
    dtype = self.dtype
    fast = (
        dtype in _FAST
        and self.ndim == 2
        and self.shape[0] > 0
        and self.shape[1] > 0
        and target.dtype is opweave.int64
        and tuple(target.shape) == (self.shape[0],)
        and target.device.type == "cpu"
        and weight is None
        and label_smoothing == 0
        and r in (0, 1, 2)
        and type(r) is int
    )
    if not fast:
        raise Decline("not (N, C) float32/float64 logits with int64 targets")
    x, t = native(self), native(target)
    classes = x.shape[1]
    ignored = t == ignore_index
    safe = np.where(ignored, 0, t)
    if ((safe < 0) | (safe >= classes)).any():
        raise Decline("a class index is out of range: the decomposition raises")
    with np.errstate(all="ignore"):
        loss = _nll_of_log_softmax(x, safe)
        loss[ignored] = 0
        if r == 0:
            return wrap(loss, dtype)
        total = np.sum(loss)
        if r == 2:
            return wrap(np.asarray(total, dtype.numpy), dtype)
        return wrap(np.asarray(total / np.dtype(dtype.numpy).type(np.count_nonzero(~ignored)), dtype.numpy), dtype)


KERNELS = {
    "softmax.int": _softmax_kernel("softmax", log=False, internal=False),
    "log_softmax.int": _softmax_kernel("log_softmax", log=True, internal=False),
    "_softmax": _softmax_kernel("_softmax", log=False, internal=True),
    "_log_softmax": _softmax_kernel("_log_softmax", log=True, internal=True),
    "layer_norm": _layer_norm,
    "gelu": _gelu,
    "cross_entropy_loss": _cross_entropy,
}
