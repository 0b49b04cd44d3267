"""Scatter-like and advanced-indexing prims as generated kernels (``codegen.scatter``).

``scatter``, ``scatter_add``, ``scatter_reduce``, ``index_add``, ``index_copy``,
``index_fill``, ``index``, ``index_put``, ``put``, ``take`` and ``bincount``. Index
tensors first become element offsets on the device (``positions``); writes then go
to a contiguous copy of ``a``. Where duplicate targets keep the last write (scatter,
index_copy, index_put and put without accumulation) a winner array picks it
deterministically. Accumulation uses compare-and-swap atomics (complex: one per
component); 16-bit floats accumulate in float32, as on the CPU.

Float sums depend on the order of the atomics, so ``scatter_add``,
``scatter_reduce`` and ``index_add`` are registered nondeterministic (deterministic
mode raises, as for PyTorch's CUDA ``scatter_reduce``); ``index_put``/``put`` with
``accumulate`` and ``bincount`` with weights keep their deterministic registration
and, in deterministic mode, run those float cases through the CPU kernel.

An out-of-range index sets a device flag; the host then reads the index tensors
back and raises the prim's ``opweave.IndexOutOfBoundsError`` (a negative ``bincount`` input its ``ValueError``).
Complex ``scatter_reduce`` with ``prod`` has no wide enough atomic: it runs in
rounds, one per update of the most duplicated target (exact CPU order). On the CPU
fallback: ranks above ``MAX_RANK``, and scatters of 2**31 or more updates that need
a winner array.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import Decline

from ..codegen import scatter as gen
from ..codegen.common import MAX_RANK
from ._common import NONDETERMINISTIC, buf, dims, empty, from_host, i64, kernel, launch, program_kernels, runtime_on

RAW = {1: "uint8", 2: "int16", 4: "int32", 8: "int64", 16: "complex128"}
_WIDE = (opweave.bfloat16, opweave.float16)  # accumulate in float32, as the CPU backend does
_MAX_UPDATES = 2**31 - 1
_ACCUMULATE = ("bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64", "complex64", "complex128")
_BINCOUNT = ("uint8", "int8", "int16", "int32", "int64")


def contiguous_strides(shape) -> tuple:
    """The C-contiguous strides of ``shape``."""
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def sizes(t) -> tuple:
    """The shape, a 0-dim tensor seen as one element."""
    return tuple(t.shape) or (1,)


def strides(t) -> tuple:
    """The strides, a 0-dim tensor seen as one element."""
    return tuple(t.stride()) or (0,)


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _fits(*shapes) -> bool:
    return all(len(s) <= MAX_RANK for s in shapes)


def raw_types(rt) -> tuple:
    """The raw element types the device can move (16-byte elements need fp64)."""
    return tuple(r for size, r in RAW.items() if size < 16 or rt.has_fp64)


def _program(rt) -> dict:
    raws = raw_types(rt)
    return program_kernels(rt, ("scatter_move", raws), lambda: gen.move_program(rt.dialect, raws))


def moves(rt, itemsize: int) -> dict:
    """The move kernels for elements of ``itemsize`` bytes, by unsuffixed name."""
    raw, ks = RAW[itemsize], _program(rt)
    return {name: ks[f"{name}_{raw}"] for name in ("copy", "gather_pos", "apply")} | {"claim": ks["claim"]}


def _accumulators(rt, dtype: str) -> dict:
    dts = tuple(
        d
        for d in _ACCUMULATE
        if (rt.has_fp64 or d not in ("float64", "complex128")) and (rt.dialect.atomics64 or d != "int64")
    )
    if dtype not in dts:  # Metal: no 64-bit compare-and-swap for the int64 update
        raise Decline(f"kernelgen: {rt.device_name} has no atomic update of {dtype} elements")
    ks = program_kernels(rt, ("scatter_acc", dts), lambda: gen.accumulate_program(rt.dialect, dts))
    return {
        name: ks[f"{name}_{dtype}"]
        for name in ("accum", "mean_div", "round_claim", "round_apply")
        if f"{name}_{dtype}" in ks
    }


def contiguous(t):
    """``t`` itself when C-contiguous at offset 0, else a contiguous copy (same dtype)."""
    if t.is_contiguous() and t.storage_offset() == 0:
        return t
    return copy_of(t)


def copy_of(t):
    """A new C-contiguous copy of ``t``."""
    out = empty(tuple(t.shape), t.dtype, t.device)
    n = out.numel()
    if n:
        rt = runtime_on(t.device)
        k = moves(rt, t.dtype.itemsize)["copy"]
        launch(rt, k, n, buf(out), buf(t), i64(t.storage_offset()), dims(strides(t)), dims(sizes(t)),
               np.int32(len(sizes(t))), i64(n))  # fmt: skip
    return out


def zeros(shape, dtype, device):
    """A new zero-filled contiguous tensor."""
    out = empty(shape, dtype, device)
    if out.numel():
        rt = runtime_on(device)
        rt.fill_zero(buf(out), out.numel() * dtype.itemsize)
    return out


def scalar(value, dtype, device):
    """A one-element device tensor holding ``value`` cast to ``dtype`` (NumPy's cast)."""
    with np.errstate(all="ignore"):
        host = np.array(value).astype(dtype.numpy).reshape(1)
    return from_host(host, device)


class Errors:
    """A device flag the kernels set on an out-of-range index, read back once."""

    def __init__(self, device):
        self.host = np.zeros(1, np.int32)
        self.flag = zeros((1,), opweave.int32, device)
        self.buffer = buf(self.flag)

    def raised(self, rt) -> bool:
        """Whether a kernel set the flag (waits for them)."""
        rt.copy_to_host(self.host, self.buffer)
        return bool(self.host[0])

    def check(self, rt, op: str, checks) -> None:
        """Raise the prim's ``IndexOutOfBoundsError`` if a kernel set the flag (``checks``: see :func:`index_error`)."""
        if self.raised(rt):
            index_error(op, checks)


def index_error(op: str, checks) -> None:
    """Raise ``op``'s ``opweave.IndexOutOfBoundsError`` for the first out-of-range index, as the CPU kernel words it.

    ``checks`` lists ``(index tensor, dim, size, wraps negative)`` in the order the CPU kernel checks them;
    the index values are read back only on this error path.
    """
    for t, dim, size, wrap in checks:
        i = t.numpy(force=True).astype(np.int64)
        bad = (i < (-size if wrap else 0)) | (i >= size)
        if bad.any():
            raise opweave.IndexOutOfBoundsError(
                f"{op}: index {int(i[bad].flat[0])} is out of bounds for dim {dim} with size {size}"
            )
    raise RuntimeError(f"{op}: the device flagged an out-of-range index that the host cannot find")


def positions(rt, err, pos, index, bshape, ist, tshape, tst, neg: bool, add: bool) -> None:
    """``pos[u] (+)= offset of wrapped index[u]`` over the broadcast index shape ``bshape``."""
    n = _numel(bshape)
    if n == 0:
        return
    k = _program(rt)[f"positions_{index.dtype.name}"]
    launch(rt, k, n, buf(pos), buf(index), i64(index.storage_offset()), dims(ist), dims(bshape or (1,)),
           np.int32(len(bshape) or 1), dims(tshape), dims(tst), np.int32(len(tshape)), i64(_numel(tshape)),
           np.int32(neg), np.int32(add), err.buffer, i64(n))  # fmt: skip


def store(rt, out, pos, pst, ost, src, so, sst, shape, last_wins: bool) -> bool:
    """``out[ost . u + pos[pst . u]] = src[so + sst . u]`` over ``shape``; False if too many updates."""
    n = _numel(shape)
    if n == 0 or out.numel() == 0:  # nothing to write; an index into an empty dim has set the error flag
        return True
    ks = moves(rt, out.dtype.itemsize)
    tail = (dims(shape), np.int32(len(shape)), i64(n))
    win = buf(out)
    if last_wins:
        if n > _MAX_UPDATES:
            return False
        w = zeros((out.numel(),), opweave.int32, out.device)
        win = buf(w)
        launch(rt, ks["claim"], n, win, buf(pos), dims(pst), dims(ost), *tail)
    launch(rt, ks["apply"], n, buf(out), win, np.int32(last_wins), buf(pos), dims(pst), dims(ost), buf(src),
           i64(so), dims(sst), *tail)  # fmt: skip
    return True


def accumulate(rt, out, pos, pst, ost, src, so, sst, shape, op: str, alpha=None, count=None) -> None:
    """``out[target(u)] = op(out[target(u)], alpha * src[u])`` atomically; ``count[target] += 1`` if given."""
    n = _numel(shape)
    if n == 0 or out.numel() == 0:
        return
    k = _accumulators(rt, out.dtype.name)["accum"]
    launch(rt, k, n, buf(out), buf(pos), dims(pst), dims(ost), buf(src), i64(so), dims(sst),
           buf(alpha if alpha is not None else src), np.int32(alpha is not None), np.int32(gen.OPS[op]),
           buf(count if count is not None else out), np.int32(count is not None), dims(shape),
           np.int32(len(shape)), i64(n))  # fmt: skip


def complex_product(rt, out, pos, pst, ost, src, so, sst, shape) -> bool:
    """``out[target(u)] *= src[u]`` for a complex ``out``, in rounds (see ``codegen.scatter``); False if too big."""
    n = _numel(shape)
    if n == 0 or out.numel() == 0:
        return True
    if n > _MAX_UPDATES:
        return False
    ks = _accumulators(rt, out.dtype.name)
    win = zeros((out.numel(),), opweave.int32, out.device)
    done = zeros((n,), opweave.uint8, out.device)
    pending = np.ones(1, np.int32)
    counter = zeros((1,), opweave.int32, out.device)
    tail = (dims(shape), np.int32(len(shape)), i64(n))
    where = (buf(pos), dims(pst), dims(ost))
    while pending[0]:
        rt.fill_zero(buf(counter), 4)
        launch(rt, ks["round_claim"], n, buf(win), buf(done), *where, *tail)
        launch(rt, ks["round_apply"], n, buf(out), buf(win), buf(done), buf(counter), *where, buf(src), i64(so),
               dims(sst), *tail)  # fmt: skip
        rt.copy_to_host(pending, buf(counter))
    return True


def mean_divide(rt, out, count, include_self: bool) -> None:
    """``out /= count (+1 with include_self)`` where ``count > 0`` (floor division for integers)."""
    k = _accumulators(rt, out.dtype.name)["mean_div"]
    launch(rt, k, out.numel(), buf(out), buf(count), np.int32(include_self), i64(out.numel()))


def _widened(t):
    return opweave.ops.prims.convert_element_type(t, opweave.float32) if t.dtype in _WIDE else t


def _converted(t, dtype):
    return opweave.ops.prims.convert_element_type(t, dtype) if t.dtype is not dtype else t


def _float_accumulation_in_deterministic_mode(dtype, accumulate_: bool) -> bool:
    return accumulate_ and (dtype.is_floating_point or dtype.is_complex) and _deterministic()


def _deterministic() -> bool:
    return opweave.are_deterministic_algorithms_enabled()


# -- scatter along a dim ---------------------------------------------------------------------------


def _along_dim(a, dim, index):
    """(rt, errors, out copy of a, d, pos over index's shape, its strides, ost with d zeroed) for a scatter."""
    rt = runtime_on(a.device)
    err = Errors(a.device)
    shape = sizes(a)
    d = dim % len(shape)
    ostr = contiguous_strides(shape)
    pos = empty(sizes(index), opweave.int64, a.device)
    positions(rt, err, pos, index, sizes(index), strides(index), (shape[d],), (ostr[d],), False, False)
    ost = tuple(0 if k == d else s for k, s in enumerate(ostr))
    return rt, err, d, pos, ost


def _scatter(op, a, dim, index, src, reduce, include_self=True):
    if not _fits(sizes(a), sizes(index)):
        return NotImplemented
    wide = reduce is not None and a.dtype in _WIDE
    work, source = (_widened(a), _widened(src)) if wide else (a, src)
    out = copy_of(work)
    if index.numel() == 0:
        return _converted(out, a.dtype)
    rt, err, d, pos, ost = _along_dim(a, dim, index)
    U, pst = sizes(index), contiguous_strides(sizes(index))
    args = (pos, pst, ost, source, source.storage_offset(), strides(source), U)
    if reduce is None:
        if not store(rt, out, *args, last_wins=True):
            return NotImplemented
    else:
        if not include_self:
            ident = scalar(_identity(reduce, work.dtype), work.dtype, a.device)
            store(rt, out, pos, pst, ost, ident, 0, (0,) * len(U), U, last_wins=False)
        count = zeros((out.numel(),), opweave.int32, a.device) if reduce == "mean" else None
        if reduce == "prod" and a.dtype.is_complex:
            if not complex_product(rt, out, *args):
                return NotImplemented
        else:
            accumulate(rt, out, *args, "sum" if reduce == "mean" else reduce, count=count)
        if count is not None:
            mean_divide(rt, out, count, include_self)
    err.check(rt, op, [(index, d, sizes(a)[d], False)])
    return _converted(out, a.dtype)


def _identity(reduce: str, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    high = reduce == "amin"
    if dtype.is_floating_point:
        return np.inf if high else -np.inf
    if dtype is opweave.bool:
        return high
    info = np.iinfo(dtype.numpy)
    return info.max if high else info.min


@kernel("scatter")
def scatter(a, dim, index, src):
    """A copy of ``a`` with ``src`` scattered along ``dim`` at ``index``; the last duplicate wins."""
    return _scatter("prims::scatter", a, dim, index, src, None)


@kernel("scatter_add")
def scatter_add(a, dim, index, src):
    """A copy of ``a`` with ``src`` added along ``dim`` at ``index`` (atomic adds)."""
    return _scatter("prims::scatter_add", a, dim, index, src, "sum")


@kernel("scatter_reduce")
def scatter_reduce(a, dim, index, src, reduce, include_self):
    """A copy of ``a`` where targeted elements become the ``reduce`` of the values scattered to them."""
    return _scatter("prims::scatter_reduce", a, dim, index, src, reduce, include_self)


# -- index_* along a dim ---------------------------------------------------------------------------


def _dim_check(a, dim, index, wrap: bool) -> list:
    d = dim % len(sizes(a))
    return [(index, d, sizes(a)[d], wrap)]


def _index_dim(a, dim, index, U, neg: bool):
    """(rt, errors, pos over the 0/1-dim index, pst in ``U``, ost with d zeroed) for an ``index_*`` op."""
    rt = runtime_on(a.device)
    err = Errors(a.device)
    shape = sizes(a)
    d = dim % len(shape)
    ostr = contiguous_strides(shape)
    m = index.numel()
    pos = empty((m,), opweave.int64, a.device)
    ist = (index.stride()[0] if index.ndim else 0,)
    positions(rt, err, pos, index, (m,), ist, (shape[d],), (ostr[d],), neg, False)
    pst = tuple(1 if k == d else 0 for k in range(len(U)))
    ost = tuple(0 if k == d else s for k, s in enumerate(ostr))
    return rt, err, pos, pst, ost


@kernel("index_add")
def index_add(a, dim, index, source, alpha):
    """A copy of ``a`` with ``alpha * source`` added at ``index`` along ``dim`` (atomic adds)."""
    if not _fits(sizes(a)):
        return NotImplemented
    work, src = _widened(a), _widened(source)
    out = copy_of(work)
    U = sizes(source)
    rt, err, pos, pst, ost = _index_dim(a, dim, index, U, False)
    accumulate(rt, out, pos, pst, ost, src, src.storage_offset(), strides(src), U, "sum",
               alpha=scalar(alpha, work.dtype, a.device))  # fmt: skip
    err.check(rt, "prims::index_add", _dim_check(a, dim, index, False))
    return _converted(out, a.dtype)


@kernel("index_copy")
def index_copy(a, dim, index, source):
    """A copy of ``a`` with ``source``'s slices copied to ``index`` along ``dim``; the last duplicate wins."""
    if not _fits(sizes(a)):
        return NotImplemented
    out = copy_of(a)
    U = sizes(source)
    rt, err, pos, pst, ost = _index_dim(a, dim, index, U, False)
    if not store(rt, out, pos, pst, ost, source, source.storage_offset(), strides(source), U, last_wins=True):
        return NotImplemented
    err.check(rt, "prims::index_copy", _dim_check(a, dim, index, False))
    return out


@kernel("index_fill")
def index_fill(a, dim, index, value):
    """A copy of ``a`` with the slices at ``index`` (negative wraps) along ``dim`` set to ``value``."""
    if not _fits(sizes(a)):
        return NotImplemented
    out = copy_of(a)
    shape = list(sizes(a))
    shape[dim % len(shape)] = index.numel()
    U = tuple(shape)
    rt, err, pos, pst, ost = _index_dim(a, dim, index, U, True)
    store(rt, out, pos, pst, ost, scalar(value, a.dtype, a.device), 0, (0,) * len(U), U, last_wins=False)
    err.check(rt, "prims::index_fill", _dim_check(a, dim, index, True))
    return out


# -- advanced indexing -----------------------------------------------------------------------------


def _broadcast_strides(t, bshape) -> tuple:
    """``t``'s strides seen from ``bshape`` (right-aligned, 0 where broadcast)."""
    lead = len(bshape) - t.ndim
    st = [0] * lead
    for n, s, b in zip(t.shape, t.stride(), bshape[lead:]):
        st.append(s if n == b else 0)
    return tuple(st)


def _plan(a, indices):
    """(indexed dims, their broadcast shape B, the result shape R, B's first dim in R) of ``a[indices]``."""
    picked = [k for k, t in enumerate(indices) if t is not None]
    if not picked:
        return picked, (), tuple(a.shape), 0
    shapes = [tuple(indices[k].shape) for k in picked]
    ndim = max(len(s) for s in shapes)
    b = [1] * ndim
    for s in shapes:
        for i, n in enumerate(s, ndim - len(s)):
            if b[i] == 1:
                b[i] = n
    b = tuple(b)
    if picked == list(range(picked[0], picked[-1] + 1)):
        at = picked[0]
        return picked, b, tuple(a.shape[:at]) + b + tuple(a.shape[picked[-1] + 1 :]), at
    return picked, b, b + tuple(n for k, n in enumerate(a.shape) if k not in picked), 0


def _advanced(a, indices, tensor_strides):
    """(rt, errors, pos over B, B, R, pst in R, the strides of the un-indexed dims in R) for ``a``."""
    picked, b, r, at = _plan(a, indices)
    rt = runtime_on(a.device)
    err = Errors(a.device)
    if picked:
        pos = empty(b, opweave.int64, a.device)
        for i, k in enumerate(picked):
            t = indices[k]
            positions(rt, err, pos, t, b, _broadcast_strides(t, b), (a.shape[k],), (tensor_strides[k],), True, i > 0)
    else:
        pos = zeros((1,), opweave.int64, a.device)
    rest = [tensor_strides[k] for k in range(a.ndim) if k not in picked]
    pst_b = contiguous_strides(b)
    pst = (0,) * at + pst_b + (0,) * (len(r) - at - len(b))
    rst = tuple(rest[:at]) + (0,) * len(b) + tuple(rest[at:])
    return rt, err, pos, b, r, pst, rst


def _advanced_checks(a, indices) -> list:
    return [(t, k, a.shape[k], True) for k, t in enumerate(indices) if t is not None]


def _indices_usable(a, indices) -> bool:
    return _fits(tuple(a.shape)) and all(t is None or t.ndim <= MAX_RANK for t in indices)


@kernel("index")
def index(a, indices):
    """``a[indices]`` (advanced indexing with int64/int32 index tensors, ``None`` for whole dims)."""
    if not _indices_usable(a, indices):
        return NotImplemented
    rt, err, pos, b, r, pst, rst = _advanced(a, indices, tuple(a.stride()))
    if not _fits(r):
        return NotImplemented
    out = empty(r, a.dtype, a.device)
    n = out.numel()
    if n and a.numel():  # reading an empty ``a`` means an index was out of range: the flag is set
        k = moves(rt, a.dtype.itemsize)["gather_pos"]
        launch(rt, k, n, buf(out), buf(a), i64(a.storage_offset()), dims(rst), buf(pos), dims(pst),
               dims(r or (1,)), np.int32(len(r) or 1), i64(n))  # fmt: skip
    err.check(rt, "prims::index", _advanced_checks(a, indices))
    return out


def _values_strides(values, r) -> tuple:
    """``values``' strides broadcast to the indexed shape ``r`` (leading size-1 dims dropped)."""
    shape, st = list(values.shape), list(values.stride())
    while shape and shape[0] == 1:
        shape.pop(0)
        st.pop(0)
    lead = len(r) - len(shape)
    return (0,) * lead + tuple(s if n == m else 0 for n, s, m in zip(shape, st, r[lead:]))


@kernel("index_put")
def index_put(a, indices, values, accumulate_):
    """A copy of ``a`` with ``values`` written (or added, with ``accumulate``) at ``indices``."""
    if not _indices_usable(a, indices):
        return NotImplemented
    if _float_accumulation_in_deterministic_mode(a.dtype, accumulate_):
        return NotImplemented
    wide = accumulate_ and a.dtype in _WIDE
    work, vals = (_widened(a), _widened(values)) if wide else (a, values)
    out = copy_of(work)
    rt, err, pos, b, r, pst, rst = _advanced(a, indices, contiguous_strides(tuple(a.shape)))
    if not _fits(r):
        return NotImplemented
    vst = _values_strides(vals, r)
    u = r or (1,)
    args = (pos, pst or (0,), rst or (0,), vals, vals.storage_offset(), vst or (0,), u)
    if _numel(r):
        if accumulate_:
            accumulate(rt, out, *args, "sum")
        elif not store(rt, out, *args, last_wins=True):
            return NotImplemented
    err.check(rt, "prims::index_put", _advanced_checks(a, indices))
    return _converted(out, a.dtype)


# -- flat take / put -------------------------------------------------------------------------------


@kernel("take")
def take(a, index):
    """``a`` flattened in C order, read at ``index`` (negative wraps); ``index``'s shape."""
    if not _fits(sizes(a), sizes(index)):
        return NotImplemented
    rt = runtime_on(a.device)
    err = Errors(a.device)
    out = empty(tuple(index.shape), a.dtype, a.device)
    n = out.numel()
    if n == 0:
        return out
    U = sizes(index)
    pos = empty(U, opweave.int64, a.device)
    positions(rt, err, pos, index, U, strides(index), sizes(a), strides(a), True, False)
    k = moves(rt, a.dtype.itemsize)["gather_pos"]
    if a.numel():
        launch(rt, k, n, buf(out), buf(a), i64(a.storage_offset()), dims((0,) * len(U)), buf(pos),
           dims(contiguous_strides(U)), dims(U), np.int32(len(U)), i64(n))  # fmt: skip
    err.check(rt, "prims::take", [(index, 0, _numel(sizes(a)), True)])
    return out


@kernel("put")
def put(a, index, source, accumulate_):
    """A copy of ``a`` with flat positions ``index`` set to (or, with ``accumulate``, added) ``source``."""
    if not _fits(sizes(index)):
        return NotImplemented
    if _float_accumulation_in_deterministic_mode(a.dtype, accumulate_):
        return NotImplemented
    wide = accumulate_ and a.dtype in _WIDE
    work, src = (_widened(a), _widened(source)) if wide else (a, source)
    out = copy_of(work)
    m = index.numel()
    if m == 0:
        return _converted(out, a.dtype)
    rt = runtime_on(a.device)
    err = Errors(a.device)
    pos = empty(sizes(index), opweave.int64, a.device)
    positions(rt, err, pos, index, sizes(index), strides(index), (out.numel(),), (1,), True, False)
    src = contiguous(src)
    args = (pos, (1,), (0,), src, 0, (1,), (m,))
    if accumulate_:
        accumulate(rt, out, *args, "sum")
    elif not store(rt, out, *args, last_wins=True):
        return NotImplemented
    err.check(rt, "prims::put", [(index, 0, out.numel(), True)])
    return _converted(out, a.dtype)


# -- bincount --------------------------------------------------------------------------------------


def _value_range(rt, ks, x) -> tuple:
    """(min, max) of the non-empty 1-D integer tensor ``x``: chunk ranges, one combining work item, one read."""
    n = x.numel()
    chunks = -(-n // gen.RANGE_CHUNK)
    mm = empty((2 * chunks,), opweave.int64, x.device)
    launch(rt, ks[f"range_{x.dtype.name}"], chunks, buf(mm), buf(x), i64(x.storage_offset()), i64(x.stride()[0]),
           i64(n), i64(chunks))  # fmt: skip
    launch(rt, ks["range_final"], 1, buf(mm), i64(chunks))
    host = np.zeros(2, np.int64)
    rt.copy_to_host(host, buf(mm))
    return int(host[0]), int(host[1])


@kernel("bincount")
def bincount(self, weights, minlength):
    """Counts (int64) or weight sums (float64; float32 for float32 weights) of each value of ``self``."""
    rt = runtime_on(self.device)
    if weights is not None and (_deterministic() or not rt.has_fp64):
        return NotImplemented
    n = self.numel()
    weighted = rt.has_fp64
    ks = program_kernels(rt, ("bincount", weighted), lambda: gen.bincount_program(rt.dialect, _BINCOUNT, weighted))
    length = minlength
    if n:
        lo, hi = _value_range(rt, ks, self)
        if lo < 0:
            x = self.numpy(force=True)
            raise ValueError(f"prims::bincount: 'self' must be non-negative, found {int(x[x < 0][0])}")
        length = max(hi + 1, minlength)
    out = zeros((length,), opweave.int64 if weights is None else opweave.float64, self.device)
    if n:
        args = [buf(out), buf(self), i64(self.storage_offset()), i64(self.stride()[0])]
        if weights is None:
            k = ks[f"bincount_{self.dtype.name}"]
        else:
            k = ks[f"bincount_w_{self.dtype.name}"]
            w = _converted(weights, opweave.float64)
            args += [buf(w), i64(w.storage_offset()), i64(w.stride()[0])]
        launch(rt, k, n, *args, i64(n))
    if weights is not None and weights.dtype is opweave.float32:
        return _converted(out, opweave.float32)
    return out


NONDETERMINISTIC.update({"prims::scatter_add", "prims::scatter_reduce", "prims::index_add"})
