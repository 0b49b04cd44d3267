"""Factories (ops and prims): arange, linspace, logspace, eye, full/zeros/ones and their ``*_like``/``new_*``
forms, scalar_tensor, tril/triu_indices, iota, and the dtype limits ``maximum_value``/``minimum_value``.

Every sample asks for the dtype under test (``dtype=``) on the device under test
(``device=``), except the ``*_like``/``new_*`` cases that inherit ``self``'s dtype.
Oracles are the NumPy factories; ``linspace`` follows PyTorch's formula
(``start + i * step`` for the first half, ``end - (steps - 1 - i) * step`` for the
second). ``empty*`` outputs are uninitialised: their entries have no oracle
(``values_undefined``) but promise their strides (``strides=True``: the requested
strides, the permuted layout, contiguous, or ``self``'s dense layout for ``empty_like``).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import opweave as ow

from . import register
from ._cases import TA, Dyn, K, S, T, entry
from ._core import ALL, BOOL, DEVICE, FLOAT, INT, REAL

SAME = Dyn(lambda d: d)  # the dtype under test, as a ``dtype=`` argument


def _fill(d, v=3):
    """A Python fill value of ``d``'s category."""
    if d is ow.bool:
        return True
    if d.is_complex:
        return complex(v, -1.5)
    if d.is_floating_point:
        return v - 0.75
    return int(v)


FILL = Dyn(lambda d: _fill(d))
WIDE = Dyn(lambda d: ow.complex128 if d.is_complex else ow.float64)  # a dtype= other than self's


def _arange(*args, dtype=None, layout=None, device=None, pin_memory=None):
    return np.arange(*args, dtype=np.float64)


def _linspace(start, end, steps, *, dtype=None, base=None, **_):
    if steps == 1:
        out = np.array([start], dtype=np.complex128 if isinstance(start, complex) else np.float64)
    else:
        step = (end - start) / (steps - 1)
        i = np.arange(steps)
        out = np.where(i < steps // 2, start + i * step, end - (steps - 1 - i) * step)
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        out = np.trunc(out.real)
    return out


def _logspace(start, end, steps, base=10.0, *, dtype=None, **_):
    return np.power(base, _linspace(start, end, steps))


def _eye(n, m=None, *, dtype=None, **_):
    return np.eye(n, n if m is None else m)


def _full(size, fill_value, *, dtype=None, **_):
    return np.full(size, fill_value)


def _const(value):
    def oracle(first, size=None, **_):
        shape = first.shape if size is None and isinstance(first, np.ndarray) else (first if size is None else size)
        return np.full(tuple(shape), value)

    return oracle


def _full_like(x, fill_value, *, dtype=None, **_):
    return np.full(x.shape, fill_value)


def _new_full(x, size, fill_value, *, dtype=None, **_):
    return np.full(tuple(size), fill_value)


def _tri_indices(lower):
    def oracle(row, col, offset=0, *, dtype=None, **_):
        rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
        return np.stack([rows, cols]).astype(np.int64).reshape(2, -1)

    return oracle


def _limit(maximum):
    def oracle(dtype):
        if dtype is ow.bool:
            return maximum
        info = ml_dtypes.finfo(dtype.numpy) if dtype.is_floating_point else np.iinfo(dtype.numpy)
        return info.max if maximum else info.min

    return oracle


# -- cases ---------------------------------------------------------------------------------------


def _dev(*args, **kw):
    """A factory case on the device under test in the dtype under test (unless ``dtype`` is given)."""
    kw.setdefault("dtype", SAME)
    return K(*args, device=DEVICE, **kw)


def _lines():
    sizes = [[3, 4], [2, 0, 3], [], [5]]
    like = [K(TA((3, 4), T)), K(TA((2, 3), S), dtype=WIDE, device=DEVICE), K(TA(())), K(TA((0, 3)))]
    new = [K(TA((3, 4), T), [2, 5]), K(TA((2,), S), [0, 3], dtype=WIDE, device=DEVICE), K(TA(()), [])]
    arange_real = [_dev(5), _dev(0), _dev(7, dtype=None), _dev(2.5, dtype=None)]
    return [
        entry("arange", _arange, arange_real, REAL),
        entry("arange.start", _arange, [_dev(2, 9), _dev(3, 9), _dev(1, 1), _dev(-2, 2.5, dtype=None)], REAL),
        entry(
            "arange.start_step",
            _arange,
            [_dev(1, 10, 3), _dev(8, -1, -2), _dev(0, 3, 0.5, dtype=None), _dev(5, 5, 1), _dev(4, 12, 2)],
            REAL,
        ),
        entry("linspace", _linspace, [_dev(0, 10, 6), _dev(-1, 1, 5), _dev(2, 2, 1), _dev(3, -3, 0)], FLOAT),
        entry("logspace", _logspace, [_dev(0, 2, 5), _dev(-1, 1, 3, 2.0), _dev(1, 1, 1), _dev(0, 1, 0)], FLOAT),
        entry("eye", _eye, [_dev(3), _dev(0), _dev(1)], ALL),
        entry("eye.m", _eye, [_dev(3, 5), _dev(4, 2), _dev(0, 3)], ALL),
        entry("prims::eye", _eye, [_dev(3, 5), _dev(4, 2), _dev(0, 3)], ALL),
        entry("full", _full, [_dev(s, FILL) for s in sizes] + [K([2, 2], 1.5, device=DEVICE)], ALL),
        entry("prims::full", _full, [_dev(s, FILL) for s in sizes], ALL),
        entry("zeros", _const(0), [_dev(s) for s in sizes], ALL),
        entry("ones", _const(1), [_dev(s) for s in sizes], ALL),
        entry("full_like", _full_like, [K(*a, FILL, **kw) for a, kw in like], ALL),
        entry("zeros_like", _const(0), like, ALL),
        entry("ones_like", _const(1), like, ALL),
        entry("new_zeros", _const(0), new, ALL),
        entry("new_ones", _const(1), new, ALL),
        entry("new_full", _new_full, [K(*a, FILL, **kw) for a, kw in new], ALL),
        entry("scalar_tensor", lambda s, **_: np.asarray(s), [_dev(FILL), _dev(Dyn(lambda d: _fill(d, 5)))], ALL),
        entry("prims::scalar_tensor", lambda s, **_: np.asarray(s), [_dev(FILL)], ALL),
        entry(
            "tril_indices",
            _tri_indices(True),
            [K(4, 3, device=DEVICE), K(3, 5, 1, device=DEVICE), K(4, 4, -2, dtype=ow.int32, device=DEVICE)],
            (None,),
        ),
        entry(
            "triu_indices",
            _tri_indices(False),
            [
                K(4, 3, device=DEVICE),
                K(3, 5, 1, device=DEVICE),
                K(4, 4, -2, dtype=ow.int32, device=DEVICE),
                K(0, 3, device=DEVICE),
            ],
            (None,),
        ),
        entry("prims::tril_indices", _tri_indices(True), [_dev(4, 3, 0), _dev(3, 5, 1), _dev(4, 4, -2)], INT),
        entry("prims::triu_indices", _tri_indices(False), [_dev(4, 3, 0), _dev(3, 5, 1), _dev(4, 4, -2)], INT),
        entry(
            "prims::iota",
            lambda n, *, start, step, **_: start + step * np.arange(n),
            [_dev(5, start=0, step=1), _dev(4, start=9, step=-2), _dev(0, start=1, step=1)],
            INT,
        ),
        entry("prims::maximum_value", _limit(True), [K(SAME)], BOOL + REAL),
        entry("prims::minimum_value", _limit(False), [K(SAME)], BOOL + REAL),
    ]


def _empty_lines():
    """Uninitialised factories: values undefined; shape, dtype and the requested strides are checked."""

    def empty(name, cases, dtypes=ALL):
        return entry(name, None, cases, dtypes, values_undefined=True, strides=True)

    like = [K(TA((3, 4), T)), K(TA((2, 3, 4), S)), K(TA(())), K(TA((0, 3)))]
    return [
        empty("empty.memory_format", [_dev([3, 4]), _dev([2, 0, 3]), _dev([])]),
        empty("empty_strided", [_dev([3, 4], [1, 3]), _dev([2, 3], [1, 4]), _dev([4], [2]), _dev([0, 2], [1, 1])]),
        empty("empty_permuted", [_dev([2, 3, 4], [2, 0, 1]), _dev([3, 4], [1, 0]), _dev([5], [0])]),
        empty("prims::empty_strided", [_dev([3, 4], [1, 3]), _dev([2, 3], [1, 4]), _dev([4], [2])]),
        empty("prims::empty_permuted", [_dev([2, 3, 4], [2, 0, 1]), _dev([3, 4], [1, 0])]),
        empty("empty_like", like),
        empty("new_empty", [K(TA((3, 4), T), [2, 5]), K(TA((2,), S), [0, 3]), K(TA(()), [])]),
        empty("new_empty_strided", [K(TA((3, 4), T), [3, 4], [1, 3]), K(TA((2,), S), [2, 3], [1, 2])]),
    ]


register(*_lines(), *_empty_lines())
