"""View, shape and data-movement ops (canonical and prims): hand-written cases and NumPy oracles.

Each line lists its cases: the arguments of one call, with :class:`TA` for a
tensor (shape, layout, optionally dtype and domain; the dtype under test by
default) and :class:`Dyn` for an argument computed from the dtype under test.
The first cases use a non-contiguous base where the op allows one, so views are
checked on transposed and strided storage. View ops (tag ``view``) are also
checked for aliasing by the suite; in-place view ops (``squeeze_``...) must
return ``self``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import opweave as ow
import scipy.linalg

from . import register
from ._core import ALL, COMPLEX, DEVICE, FLOAT, Arr, OpInfo, SampleInput, arr

C, T, S, B = "contiguous", "transposed", "strided", "broadcast"


@dataclass(frozen=True)
class TA:
    """A tensor argument: shape, layout, dtype (None: the dtype under test), value domain."""

    shape: tuple
    layout: str = C
    dtype: object = None
    domain: str = "any"

    def make(self, rng, dtype) -> Arr:
        return arr(rng, self.shape, self.dtype or dtype, self.layout, self.domain)


@dataclass(frozen=True)
class Dyn:
    """An argument computed from the dtype under test: ``fn(dtype)``."""

    fn: object


def K(*args, **kwargs):
    """One case: positional and keyword arguments."""
    return args, kwargs


def _make(v, rng, dtype):
    if isinstance(v, TA):
        return v.make(rng, dtype)
    if isinstance(v, Dyn):
        return _make(v.fn(dtype), rng, dtype)
    if isinstance(v, list):
        return [_make(x, rng, dtype) for x in v]
    if isinstance(v, tuple):
        return tuple(_make(x, rng, dtype) for x in v)
    return v


def case_samples(cases):
    """A generator yielding ``cases`` in order (as many as the profile takes)."""

    def gen(rng, dtype, device):
        for args, kwargs in cases:
            made = tuple(_make(a, rng, dtype) for a in args)
            desc = ", ".join(f"{list(a.shape)} {a.layout}" for a in SampleInput(made).arrs())
            yield SampleInput(made, {k: _make(v, rng, dtype) for k, v in kwargs.items()}, desc)

    return gen


#: Ops that return views of their inputs although their (ATen) schema does not say so.
MAY_ALIAS = frozenset(
    {"atleast_1d", "atleast_2d", "atleast_3d", "atleast_1d.Sequence", "atleast_2d.Sequence", "atleast_3d.Sequence"}
    | {"meshgrid", "meshgrid.indexing", "cartesian_prod"}
)
_CONJ_COPY = "a copy for complex inputs: opweave has no lazy conjugate bit (PyTorch returns a view)"
CONJ_COPY = {"complex64": _CONJ_COPY, "complex128": _CONJ_COPY}


def V(name, oracle, cases, dtypes=ALL, **kw):
    """One OpInfo from a list of cases."""
    op = ow.ops.lookup(name)
    return OpInfo(
        name=name,
        sample_inputs=case_samples(cases),
        oracle=oracle,
        dtypes=tuple(dtypes),
        returns_view="view" in op.tags,
        may_alias=name in MAY_ALIAS,
        data_dependent=bool(op.tags & {"dynamic_output_shape", "data_dependent_output"}),
        upcast=False,
        **kw,
    )


# -- oracles ---------------------------------------------------------------------------------------


def _swap(x, a=-2, b=-1):
    return np.swapaxes(x, a, b) if x.ndim >= 2 else x


def _t(x):
    return x.T if x.ndim == 2 else x


def _strided(x, size, stride, storage_offset=None):
    flat = np.ascontiguousarray(x).reshape(-1)
    idx = np.full(tuple(size), storage_offset or 0, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n) * s).reshape(shape)
    return flat[idx]


def _strided_scatter(x, src, size, stride, storage_offset=None):
    out = np.ascontiguousarray(x).copy().reshape(-1)
    idx = _strided(np.arange(out.size), size, stride, storage_offset)
    out[idx] = src
    return out.reshape(x.shape)


def _chunk(x, chunks, dim=0):
    n = x.shape[dim]
    size = -(-n // chunks) if n else 1
    return [np.take(x, range(i, min(i + size, n)), axis=dim) for i in range(0, n, size)] or [x]


def _split(x, split_size, dim=0):
    if isinstance(split_size, (list, tuple)):
        bounds = list(itertools.accumulate(split_size))[:-1]
        return np.split(x, bounds, axis=dim)
    n = x.shape[dim]
    return [np.take(x, range(i, min(i + split_size, n)), axis=dim) for i in range(0, n, split_size)] or [x]


def _squeeze(x, dim=None):
    if dim is None:
        return np.squeeze(x)
    dims = [dim] if isinstance(dim, int) else list(dim)
    dims = tuple(d % max(x.ndim, 1) for d in dims if x.ndim and x.shape[d] == 1)
    return np.squeeze(x, dims) if dims else x


def _pad(x, pad, value=0):
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return np.pad(x, widths, constant_values=value)


def _slice(x, dim=0, start=None, end=None, step=1):
    index = [slice(None)] * x.ndim
    index[dim] = slice(start, end, step)
    return x[tuple(index)]


def _slice_scatter(x, src, dim=0, start=None, end=None, step=1):
    out = x.copy()
    index = [slice(None)] * x.ndim
    index[dim] = slice(start, end, step)
    out[tuple(index)] = src
    return out


def _select_scatter(x, src, dim, index):
    out = x.copy()
    ix = [slice(None)] * x.ndim
    ix[dim] = index
    out[tuple(ix)] = src
    return out


def _diagonal_scatter(x, src, offset=0, dim1=0, dim2=1):
    out = x.copy()
    view = np.diagonal(out, offset, dim1, dim2)  # read-only; write through an index instead
    rows = np.arange(view.shape[-1]) + max(-offset, 0)
    cols = np.arange(view.shape[-1]) + max(offset, 0)
    moved = np.moveaxis(out, (dim1, dim2), (-2, -1))
    moved[..., rows, cols] = src
    return out


def _diag_embed(x, offset=0, dim1=-2, dim2=-1):
    n = x.shape[-1] + abs(offset)
    out = np.zeros(x.shape[:-1] + (n, n), dtype=x.dtype)
    i = np.arange(x.shape[-1])
    out[..., i + max(-offset, 0), i + max(offset, 0)] = x
    return out


def _unfold(x, dimension, size, step):
    if x.ndim == 0:
        return x.reshape(1)
    w = np.lib.stride_tricks.sliding_window_view(x, size, axis=dimension)
    return _slice(w, dimension, None, None, step)


def _tensor_split(x, indices_or_sections, dim=0):
    return np.array_split(x, indices_or_sections, axis=dim)


def _expand(x, size, implicit=False):
    size = list(size)
    lead = len(size) - x.ndim
    shape = [x.shape[i - lead] if s == -1 else s for i, s in enumerate(size)]
    return np.broadcast_to(x, shape)


def _cartesian(tensors):
    if len(tensors) == 1:
        return tensors[0]
    return np.array(list(itertools.product(*tensors)), dtype=tensors[0].dtype).reshape(-1, len(tensors))


def _view_dtype(d):
    return {
        ow.bool: ow.uint8,
        ow.uint8: ow.int8,
        ow.int8: ow.uint8,
        ow.int16: ow.float16,
        ow.int32: ow.float32,
        ow.int64: ow.float64,
        ow.float16: ow.int16,
        ow.bfloat16: ow.int16,
        ow.float32: ow.int32,
        ow.float64: ow.int64,
        ow.complex64: ow.float64,
        ow.complex128: ow.complex128,
    }[d]


def _reinterpret(x, dtype):
    return np.ascontiguousarray(x).view(dtype.numpy)


def _next_dtype(d):
    return ALL[(ALL.index(d) + 5) % len(ALL)]


def _convert(x, dtype):
    with np.errstate(all="ignore"):
        return x.astype(np.asarray(x).dtype if dtype is None else dtype.numpy)


def _to(x, *args, **kwargs):
    dtype = next((a for a in args if isinstance(a, ow.dtype)), kwargs.get("dtype"))
    other = next((a for a in args if isinstance(a, np.ndarray)), None)
    if other is not None:
        return x.astype(other.dtype)
    return _convert(x, dtype)


def _copy(x, src, non_blocking=False):
    with np.errstate(all="ignore"):
        return np.broadcast_to(src, x.shape).astype(x.dtype)


def _repeat_interleave(x, repeats, dim=None, output_size=None):
    return np.repeat(x.reshape(-1) if dim is None else x, repeats, axis=0 if dim is None else dim)


# -- cases -------------------------------------------------------------------------------------------

M34, M34T, M234T, M234S, V5S = TA((3, 4)), TA((3, 4), T), TA((2, 3, 4), T), TA((2, 3, 4), S), TA((5,), S)
M234, M0 = TA((2, 3, 4)), TA((0, 3))


def _view_lines():
    same = [K(M234T), K(M34), K(TA((5,), S)), K(TA(()))]
    mats = [K(M234T), K(M34T), K(TA((0, 2, 3)))]
    return [
        V("alias", lambda x: x, same),
        V("detach", lambda x: x, same),
        V("mT", _swap, mats),
        V("mH", lambda x: np.conj(_swap(x)), mats, known_failure=CONJ_COPY),
        V("adjoint", lambda x: np.conj(_swap(x)), mats, known_failure=CONJ_COPY),
        V("matrix_H", lambda x: np.conj(_swap(x)), [K(M34T), K(M34), K(TA((0, 3)))], known_failure=CONJ_COPY),
        V("numpy_T", lambda x: x.T, [K(M234T), K(M34), K(V5S), K(TA(()))]),
        V("t", _t, [K(M34T), K(M34), K(V5S), K(TA(()))]),
        V("permute", lambda x, dims: np.transpose(x, dims), [K(M234T, [2, 0, 1]), K(M34, [1, 0]), K(TA(()), [])]),
        V("transpose.int", lambda x, a, b: np.swapaxes(x, a, b), [K(M234S, 0, 2), K(M34, -1, 0), K(TA((0, 3)), 0, 1)]),
        V("swapaxes", lambda x, a, b: np.swapaxes(x, a, b), [K(M234T, 0, 2), K(M34, 1, 0)]),
        V("swapdims", lambda x, a, b: np.swapaxes(x, a, b), [K(M234T, 1, 2), K(M34, 0, 1)]),
        V("moveaxis.int", np.moveaxis, [K(M234T, 0, 2), K(M34, 1, 0)]),
        V("moveaxis.intlist", np.moveaxis, [K(M234T, [0, 1], [2, 0]), K(M34, [1], [0])]),
        V("movedim.int", np.moveaxis, [K(M234S, 2, 0), K(M34, 0, 1)]),
        V("movedim.intlist", np.moveaxis, [K(M234T, [0, 2], [1, 0]), K(M34, [0], [1])]),
        V("diagonal", np.diagonal, [K(M234T, 0, 1, 2), K(M34, 1), K(TA((4, 3), S), -1, 1, 0), K(TA((0, 3)))]),
        V("select.int", lambda x, d, i: np.take(x, i, axis=d), [K(M234T, 1, 2), K(M34, 0, -1), K(V5S, 0, 3)]),
        V("narrow", lambda x, d, s, n: _slice(x, d, s, s + n), [K(M234T, 2, 1, 2), K(M34, 0, 0, 2), K(V5S, 0, 4, 1)]),
        V("slice.Tensor", _slice, [K(M234T, 2, 1, 4, 2), K(M34, 0, 1), K(V5S, 0, -3, None, 2), K(M34, 1, 5, 9)]),
        V("unsqueeze", np.expand_dims, [K(M234T, 1), K(M34, -1), K(TA(()), 0)]),
        V("squeeze", _squeeze, [K(TA((3, 1, 4), T)), K(TA((1, 1))), K(M34)]),
        V("squeeze.dim", _squeeze, [K(TA((3, 1, 4), T), 1), K(M34, 0), K(TA(()), 0)]),
        V("squeeze.dims", _squeeze, [K(TA((1, 3, 1), S), [0, 2]), K(M34, [0, 1])]),
        V("expand", _expand, [K(TA((3, 1), T), [2, 3, 4]), K(TA((4,), S), [3, -1]), K(TA(()), [2, 2])]),
        V("expand_as", lambda x, o: np.broadcast_to(x, o.shape), [K(TA((3, 1), T), M234), K(TA((4,)), M34)]),
        V("broadcast_to", lambda x, s: np.broadcast_to(x, s), [K(TA((3, 1), T), [2, 3, 4]), K(TA(()), [3])]),
        V("broadcast_tensors", lambda ts: np.broadcast_arrays(*ts), [K([TA((3, 1), T), TA((4,))]), K([M34, TA(())])]),
        V("view", lambda x, s: x.reshape(s), [K(M234, [6, 4]), K(M34, [-1]), K(TA(()), [1, 1])]),
        V("view_as", lambda x, o: x.reshape(o.shape), [K(M234, TA((4, 6))), K(M34, TA((12,)))]),
        V(
            "unflatten.int",
            lambda x, d, s: x.reshape(x.shape[:d] + tuple(s) + x.shape[d + 1 :]),
            [K(M234, 2, [2, 2]), K(M34, 0, [3, 1])],
        ),
        V(
            "view.dtype",
            lambda x, d: _reinterpret(x, d),
            [K(M34, Dyn(_view_dtype)), K(TA((2, 3, 4)), Dyn(_view_dtype))],
        ),
        V(
            "view_as_real",
            lambda x: np.stack([x.real, x.imag], -1),
            [K(M34), K(TA((5,), S)), K(TA(()))],
            dtypes=COMPLEX,
        ),
        V(
            "view_as_complex",
            lambda x: x[..., 0] + 1j * x[..., 1],
            [K(TA((3, 2))), K(TA((2, 3, 2)))],
            dtypes=(ow.float32, ow.float64),
        ),
        V("unfold", _unfold, [K(M234T, 2, 2, 1), K(M34, 0, 2, 2), K(V5S, 0, 3, 2)]),
        V("as_strided", _strided, [K(M34, [3, 3], [1, 3], 1), K(M234, [2, 2], [12, 1]), K(TA((6,)), [2, 2], [1, 1])]),
        V("chunk", _chunk, [K(M234T, 2, 2), K(M34, 3), K(TA((5, 2), S), 2, 0)]),
        V("split.Tensor", _split, [K(M234T, 2, 2), K(M34, 2), K(TA((5, 2), S), 2, 0)]),
        V("split.sizes", _split, [K(M234T, [1, 3], 2), K(M34, [1, 2])]),
        V("split_with_sizes", _split, [K(M234T, [1, 3], 2), K(M34, [2, 1])]),
        V(
            "unbind.int",
            lambda x, d=0: [np.take(x, i, axis=d) for i in range(x.shape[d])],
            [K(M234T, 2), K(M34), K(TA((2, 3), S), 1)],
        ),
        V("tensor_split.sections", _tensor_split, [K(M234T, 3, 2), K(M34, 2), K(TA((5, 2), S), 3, 0)]),
        V("tensor_split.indices", _tensor_split, [K(M234T, [1, 3], 2), K(M34, [1])]),
        V("hsplit.int", lambda x, n: np.hsplit(x, n), [K(M234T, 3), K(TA((4,)), 2)]),
        V("hsplit.array", lambda x, i: np.hsplit(x, i), [K(M234T, [1]), K(M34, [1, 3])]),
        V("vsplit.int", lambda x, n: np.vsplit(x, n), [K(TA((4, 3), T), 2), K(TA((2, 3, 4)), 2)]),
        V("vsplit.array", lambda x, i: np.vsplit(x, i), [K(M234T, [1]), K(TA((4, 3)), [1, 3])]),
        V("dsplit.int", lambda x, n: np.dsplit(x, n), [K(M234T, 2), K(M234, 4)]),
        V("dsplit.array", lambda x, i: np.dsplit(x, i), [K(M234T, [1]), K(M234, [1, 3])]),
    ]


def _inplace_view_lines():
    return [
        V("squeeze_", _squeeze, [K(TA((3, 1, 4), T)), K(TA((1, 1)))]),
        V("squeeze_.dim", _squeeze, [K(TA((3, 1, 4), T), 1), K(M34, 0)]),
        V("squeeze_.dims", _squeeze, [K(TA((1, 3, 1), S), [0, 2]), K(M34, [0])]),
        V("unsqueeze_", np.expand_dims, [K(M234T, 1), K(M34, -1)]),
        V("t_", _t, [K(M34T), K(V5S)]),
        V("transpose_", lambda x, a, b: np.swapaxes(x, a, b), [K(M234S, 0, 2), K(M34, 1, 0)]),
        V("swapaxes_", lambda x, a, b: np.swapaxes(x, a, b), [K(M234T, 0, 2), K(M34, 1, 0)]),
        V("swapdims_", lambda x, a, b: np.swapaxes(x, a, b), [K(M234T, 1, 2), K(M34, 0, 1)]),
        V("as_strided_", _strided, [K(M34, [3, 3], [1, 3], 1), K(TA((6,)), [2, 2], [1, 1])]),
        V(
            "copy_",
            _copy,
            [
                K(M34T, TA((3, 4), S)),
                K(M234, TA((4,))),
                K(M34, Dyn(lambda d: TA((3, 4), dtype=_next_dtype(d), domain="nonneg"))),
            ],
        ),
    ]


def _shape_lines():
    lists = [K([M34T, TA((3, 4), S)]), K([TA((2, 3)), TA((2, 3))], 1), K([TA((0, 3)), TA((2, 3))])]
    return [
        V("clone", lambda x: x.copy(), [K(M234T), K(V5S), K(TA((4, 3), B)), K(TA(())), K(M0)]),
        V("contiguous", lambda x: x, [K(M234T), K(V5S), K(M34)]),
        V("_to_copy", lambda x, dtype=None: _convert(x, dtype), [K(M234T), K(M34, dtype=Dyn(_next_dtype))]),
        V("to.dtype", _to, [K(M234T, Dyn(_next_dtype)), K(M34, Dyn(lambda d: d))]),
        V("to.device", _to, [K(M234T, DEVICE, Dyn(_next_dtype)), K(M34, DEVICE, Dyn(lambda d: d))]),
        V("to.other", _to, [K(M234T, Dyn(lambda d: TA((2,), dtype=_next_dtype(d)))), K(M34, TA((1,)))]),
        V("type_as", lambda x, o: x.astype(o.dtype), [K(M234T, Dyn(lambda d: TA((2,), dtype=_next_dtype(d))))]),
        V(
            "copy",
            _copy,
            [
                K(M34T, TA((3, 4), S)),
                K(M234, TA((4,))),
                K(M34, Dyn(lambda d: TA((3, 4), dtype=_next_dtype(d), domain="nonneg"))),
            ],
        ),
        V("cat", lambda ts, dim=0: np.concatenate(ts, dim), lists),
        V("concat", lambda ts, dim=0: np.concatenate(ts, dim), lists),
        V("concatenate", lambda ts, dim=0: np.concatenate(ts, dim), lists),
        V(
            "stack",
            lambda ts, dim=0: np.stack(ts, dim),
            [K([M34T, TA((3, 4), S)]), K([TA((2, 3)), TA((2, 3))], 2), K([TA(())])],
        ),
        V("hstack", lambda ts: np.hstack(ts), [K([M34T, TA((3, 2), S)]), K([TA((3,)), TA((2,))])]),
        V("vstack", lambda ts: np.vstack(ts), [K([M34T, TA((2, 4), S)]), K([TA((3,)), TA((3,))])]),
        V("row_stack", lambda ts: np.vstack(ts), [K([M34T, TA((2, 4), S)]), K([TA((3,)), TA((3,))])]),
        V("dstack", lambda ts: np.dstack(ts), [K([M34T, TA((3, 4), S)]), K([TA((3,)), TA((3,))])]),
        V("column_stack", lambda ts: np.column_stack(ts), [K([M34T, TA((3,), S)]), K([TA((3,)), TA((3,))])]),
        V("atleast_1d", np.atleast_1d, [K(TA(())), K(M34T)]),
        V("atleast_2d", np.atleast_2d, [K(TA((3,), S)), K(TA(())), K(M234T)]),
        V("atleast_3d", np.atleast_3d, [K(M34T), K(TA((3,))), K(TA(()))]),
        V("atleast_1d.Sequence", lambda ts: [np.atleast_1d(t) for t in ts], [K([TA(()), M34T])]),
        V("atleast_2d.Sequence", lambda ts: [np.atleast_2d(t) for t in ts], [K([TA((3,)), M234T])]),
        V("atleast_3d.Sequence", lambda ts: [np.atleast_3d(t) for t in ts], [K([TA((3,)), M34T])]),
        V("block_diag", lambda ts: scipy.linalg.block_diag(*ts), [K([M34T, TA((2, 2))]), K([TA((1, 3)), TA((2, 1))])]),
        V("cartesian_prod", _cartesian, [K([TA((3,), S), TA((2,))]), K([TA((3,))])]),
        V("meshgrid", lambda ts: np.meshgrid(*ts, indexing="ij"), [K([TA((3,), S), TA((2,))])]),
        V(
            "meshgrid.indexing",
            lambda ts, indexing: np.meshgrid(*ts, indexing=indexing),
            [K([TA((3,), S), TA((2,))], indexing="xy"), K([TA((3,)), TA((2,))], indexing="ij")],
        ),
        V(
            "flatten.using_ints",
            lambda x, s=0, e=-1: x.reshape(x.shape[:s] + (-1,) + x.shape[e % x.ndim + 1 :]) if x.ndim else x.reshape(1),
            [K(M234T, 1), K(M34), K(TA(()))],
        ),
        V("ravel", lambda x: x.reshape(-1), [K(M234T), K(M34)]),
        V("reshape", lambda x, s: x.reshape(s), [K(M234T, [6, -1]), K(M34, [2, 6]), K(TA(()), [1])]),
        V("reshape_as", lambda x, o: x.reshape(o.shape), [K(M234T, TA((4, 6)))]),
        V("flip", lambda x, d: np.flip(x, d), [K(M234T, [0, 2]), K(M34, [1]), K(TA(()), [])]),
        V("fliplr", np.fliplr, [K(M34T), K(M234)]),
        V("flipud", np.flipud, [K(M34T), K(V5S)]),
        V(
            "roll",
            lambda x, s, d=(): np.roll(x, s, tuple(d) or None),
            [K(M234T, [1, -2], [0, 2]), K(M34, 3), K(V5S, [2], [0])],
        ),
        V(
            "rot90",
            lambda x, k=1, dims=(0, 1): np.rot90(x, k, dims),
            [K(M234T, 1, [1, 2]), K(M34), K(M34, 2), K(M34, -1, [1, 0])],
        ),
        V("repeat", lambda x, r: np.tile(x, r), [K(M34T, [2, 1, 2]), K(V5S, [2]), K(TA(()), [3])]),
        V("tile", lambda x, r: np.tile(x, r), [K(M34T, [2, 1]), K(V5S, [2, 2])]),
        V("repeat_interleave.self_int", _repeat_interleave, [K(M34T, 2, 1), K(M34, 3), K(TA(()), 2)]),
        V("tril", lambda x, k=0: np.tril(x, k), [K(M234T, 1), K(M34), K(M34, -1)]),
        V("triu", lambda x, k=0: np.triu(x, k), [K(M234T, 1), K(M34), K(M34, -1)]),
        V("diag", lambda x, k=0: np.diag(x, k), [K(M34T, 1), K(V5S), K(TA((4,)), -1)]),
        V("diagflat", lambda x, k=0: np.diagflat(x, k), [K(M34T), K(V5S, 1)]),
        V("diag_embed", _diag_embed, [K(M34T), K(TA((2, 3), S), 1)]),
        V("narrow_copy", lambda x, d, s, n: _slice(x, d, s, s + n), [K(M234T, 2, 1, 2), K(M34, 0, 0, 2)]),
        V("constant_pad_nd", _pad, [K(M34T, [1, 2]), K(M234, [0, 1, 2, 0], 3)]),
        V(
            "pad",
            lambda x, p, mode="constant", value=None: _pad(x, p, value or 0),
            [K(M34T, [1, 2]), K(M234, [0, 1, 2, 0], value=2.0)],
            dtypes=FLOAT,
        ),
        V("select_scatter", _select_scatter, [K(M234T, TA((2, 4)), 1, 2), K(M34, TA((4,)), 0, -1)]),
        V("slice_scatter", _slice_scatter, [K(M234T, TA((2, 3, 2)), 2, 1, 4, 2), K(M34, TA((2, 4)), 0, 1)]),
        V("diagonal_scatter", _diagonal_scatter, [K(M34T, TA((3,))), K(M34, TA((3,)), 1)]),
        V(
            "as_strided_scatter",
            _strided_scatter,
            [K(M34, TA((3, 3)), [3, 3], [1, 3], 1), K(TA((6,)), TA((2, 2)), [2, 2], [2, 1])],
        ),
    ]


def _prim_lines():
    def bid(x, shape, dims):
        expanded = np.expand_dims(x, [d for d in range(len(shape)) if d not in dims]) if x.ndim < len(shape) else x
        return np.broadcast_to(expanded, shape)

    def copy_to(a, b):
        with np.errstate(all="ignore"):
            return b.astype(a.dtype)

    def resize(a, shape):
        n = int(np.prod(shape))
        return np.ascontiguousarray(a).reshape(-1)[:n].reshape(shape)

    convert_targets = Dyn(lambda d: ALL[(ALL.index(d) + 3) % len(ALL)])
    return [
        V("prims::as_strided", _strided, [K(M34, [3, 3], [1, 3], 1), K(M234, [2, 2], [12, 1], 0)]),
        V(
            "prims::broadcast_in_dim",
            bid,
            [K(TA((3, 1), T), [2, 3, 4], [1, 2]), K(TA((4,), S), [3, 4], [1]), K(TA(()), [2], [])],
        ),
        V(
            "prims::collapse_view",
            lambda x, s, e: x.reshape(x.shape[:s] + (-1,) + x.shape[e:]),
            [K(M234, 0, 2), K(M234, 1, 3)],
        ),
        V("prims::diagonal", np.diagonal, [K(M234T, 0, 1, 2), K(M34, 1)]),
        V("prims::expand_dims", lambda x, d, n=None: np.expand_dims(x, d), [K(M234T, [0, 2]), K(M34, [1])]),
        V(
            "prims::slice",
            lambda x, s, e, st=None: x[tuple(slice(a, b, c) for a, b, c in zip(s, e, st or [1] * len(s)))],
            [K(M234T, [0, 1, 0], [2, 3, 4], [1, 1, 2]), K(M34, [1, 0], [3, 2])],
        ),
        V(
            "prims::slice_in_dim",
            lambda x, s, e, st=1, axis=0: _slice(x, axis, s, e, st),
            [K(M234T, 1, 4, 2, 2), K(M34, 1, 3)],
        ),
        V(
            "prims::split_dim",
            lambda x, d, o: x.reshape(x.shape[:d] + (o, -1) + x.shape[d + 1 :]),
            [K(M234, 2, 2), K(M34, 0, 3)],
        ),
        V("prims::squeeze", _squeeze, [K(TA((3, 1, 4), T), [1]), K(TA((1, 3, 1)), [0, 2])]),
        V("prims::transpose", lambda x, p: np.transpose(x, p), [K(M234S, [2, 0, 1]), K(M34, [1, 0])]),
        V("prims::unfold", _unfold, [K(M234T, 2, 2, 1), K(M34, 0, 2, 2)]),
        V("prims::view_as_real", lambda x: np.stack([x.real, x.imag], -1), [K(M34), K(TA((5,), S))], dtypes=COMPLEX),
        V(
            "prims::view_as_complex",
            lambda x: x[..., 0] + 1j * x[..., 1],
            [K(TA((3, 2)))],
            dtypes=(ow.float32, ow.float64),
        ),
        V("prims::view_of", lambda x: x, [K(M234T), K(M34)]),
        V("prims::view_of_dtype", _reinterpret, [K(M34, Dyn(_view_dtype))]),
        V("prims::clone", lambda x: x.copy(), [K(M234T), K(V5S), K(TA(())), K(M0)]),
        V("prims::copy_strided", lambda x, s: x.copy(), [K(M34T, [1, 3]), K(M234, [1, 2, 6])]),
        V(
            "prims::convert_element_type",
            _convert,
            [
                K(TA((3, 4), T, domain="nonneg"), convert_targets),
                K(TA((5,), S, domain="nonneg"), Dyn(lambda d: ALL[(ALL.index(d) + 7) % len(ALL)])),
                K(TA((2, 3), domain="nonneg"), Dyn(lambda d: ALL[(ALL.index(d) + 1) % len(ALL)])),
            ],
        ),
        V(
            "prims::copy_to",
            copy_to,
            [K(M34T, TA((3, 4), S)), K(M234, Dyn(lambda d: TA((2, 3, 4), dtype=_next_dtype(d), domain="nonneg")))],
        ),
        V("prims::resize", resize, [K(TA((3, 4)), [2, 5]), K(TA((6,)), [2, 2])]),
        V("prims::device_put", lambda x, d, nb=False: x, [K(M234T, DEVICE), K(M34, DEVICE)]),
        V("prims::item", lambda x: x.item(), [K(TA(())), K(TA((1, 1)))]),
    ]


register(*_view_lines(), *_inplace_view_lines(), *_shape_lines(), *_prim_lines())
