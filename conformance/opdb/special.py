"""Op database entries: the ``torch.special`` aliases defined by ``opweave.refs.special``.

Oracles are ``scipy.special.softmax``, ``log_softmax`` and ``logsumexp``.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import scipy.special as sp

from . import register
from ._core import ErrorInput, OpInfo, SampleInput, arr

FLOATS = (ow.float32, ow.float64, ow.float16, ow.bfloat16)
TOL = {"float16": (4e-3, 1e-3), "bfloat16": (3e-2, 1e-2)}


def _samples(kind):
    plans = [((3, 4), 1, "contiguous"), ((2, 3, 4), 0, "transposed"), ((5,), -1, "strided"), ((), 0, "contiguous")]
    plans += [((2, 0), 1, "contiguous"), ((3, 4), -2, "broadcast")]

    def gen(rng, dtype, device):
        for i, (shape, dim, layout) in enumerate(plans):
            if kind == "logsumexp" and 0 in shape:
                continue
            x = arr(rng, shape, dtype, layout, "any", specials=(i == 1 and dtype.is_floating_point))
            if kind == "logsumexp":
                yield SampleInput((x, [dim]), {"keepdim": i % 2 == 1}, f"{list(shape)} dim {dim}")
            elif kind == "softmax" and i == 2 and dtype is ow.float32:
                yield SampleInput((x, dim, ow.float64), {}, f"{list(shape)} dim {dim} dtype float64")
            else:
                yield SampleInput((x, dim), {}, f"{list(shape)} dim {dim}")

    return gen


def _shifted(x, dim):
    """``x - max(x)`` along ``dim`` (torch's formula: an infinite maximum gives nan, as in torch)."""
    return x - np.max(x, axis=dim, keepdims=True)


def _softmax(x, dim, dtype=None):
    if x.ndim == 0 or x.size == 0:
        return np.exp(x - x)
    e = np.exp(_shifted(x, dim))
    return e / np.sum(e, axis=dim, keepdims=True)


def _log_softmax(x, dim, dtype=None):
    if x.ndim == 0 or x.size == 0:
        return x - x
    s = _shifted(x, dim)
    return s - np.log(np.sum(np.exp(s), axis=dim, keepdims=True))


def _logsumexp(x, dim, keepdim=False):
    if x.ndim == 0:
        return np.asarray(x)
    axis = tuple(d % x.ndim for d in dim)
    return np.asarray(sp.logsumexp(x, axis=axis, keepdims=keepdim))


def _errors(rng, dtype):
    yield ErrorInput(SampleInput((arr(rng, (3, 4), dtype), 2)), ValueError)


def _lines():
    return [
        OpInfo("special_softmax", _samples("softmax"), _softmax, FLOATS, TOL, _errors, upcast="opmath"),
        OpInfo("special_log_softmax", _samples("log_softmax"), _log_softmax, FLOATS, TOL, _errors, upcast="opmath"),
        OpInfo("special_logsumexp", _samples("logsumexp"), _logsumexp, FLOATS, TOL, upcast="opmath"),
    ]


register(*_lines())
