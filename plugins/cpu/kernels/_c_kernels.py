"""The CPU backend's compiled C kernels (:mod:`opweave_kernelgen.host_kernels`) over its tensors' NumPy buffers.

Each function here takes the arguments of the kernel it stands in front of and returns a tensor, or
None when it does not take the call (a dtype other than float32/float64, a layout it has no loop for,
an empty tensor, a size below the ``auto`` threshold): the NumPy (or oneDNN) kernel then runs.
:func:`with_c` builds the registered kernel from the two. Results are written into fresh
C-contiguous arrays; inputs are read through their buffers' addresses and never written.
"""

from __future__ import annotations

import math

import numpy as np
import opweave
from opweave.backends.kernel import Decline, is_wrapped_number

from .._backend import wrap_same
from . import _c_path
from ._common import native, wrap

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_CTYPE = {_F32: ("float", "f32"), _F64: ("double", "f64")}
_FLOATS = frozenset({opweave.float32, opweave.float64})
_UNARY = ("exp", "expm1", "log", "log1p", "tanh", "sigmoid", "erf", "sqrt", "gelu", "gelu_tanh", "silu")
_BINARY = ("add", "sub", "mul", "div")


def _taken(name: str, numel: int) -> bool:
    """Whether the C kernel of ``name`` takes a call over ``numel`` elements on the current path."""
    lv = _c_path.level()
    if lv == _c_path.OFF:
        return False
    if lv == _c_path.AUTO:
        least = _c_path.AUTO_MIN.get(name)
        if least is None or numel < least:
            return False
    return _c_path.library() is not None


def _addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _contiguous(t) -> np.ndarray | None:
    """The tensor's float32/float64 C-contiguous NumPy view, or None."""
    if t.dtype not in _FLOATS:
        return None
    a = native(t)
    return a if a.flags.c_contiguous and a.size else None


# -- elementwise ----------------------------------------------------------------------------------------------


def _unary(name: str, op: str):
    code = _UNARY.index(op)

    def kernel(self, *rest):
        if rest and name != "gelu":
            return None
        x = _contiguous(self)
        if x is None or not _taken(name, x.size):
            return None
        lib = _c_path.library()
        y = np.empty_like(x)
        getattr(lib, "ow_unary_" + _CTYPE[x.dtype][1])(code, _addr(x), _addr(y), x.size)
        return wrap(y, self.dtype)

    kernel.__name__ = f"c_{op}"
    kernel.auto_name = name  # the AUTO_MIN entry that lets ``auto`` take it
    kernel.__doc__ = f"{op} of a float32/float64 tensor in C (None: another kernel's call)."
    return kernel


def _operand(a: np.ndarray, split: int):
    """``(outer stride, inner stride)`` of an operand of the result's shape read as (outer, inner) at ``split``.

    Inner dims (from ``split``) must be C-contiguous or all broadcast; outer dims likewise, with the
    outer stride counted in rows of the inner block (or 0). None when neither fits."""
    item = a.itemsize
    shape, strides = a.shape, tuple(s // item for s in a.strides)
    inner = math.prod(shape[split:])

    def contiguous(dims, unit):
        expect = unit
        for d in reversed(dims):
            if shape[d] != 1 and strides[d] != expect:
                return False
            expect *= shape[d]
        return True

    def broadcast(dims):
        return all(shape[d] == 1 or strides[d] == 0 for d in dims)

    inner_dims, outer_dims = range(split, a.ndim), range(split)
    if contiguous(inner_dims, 1):
        ji, unit = 1, inner
    elif broadcast(inner_dims):
        ji, unit = 0, 1
    else:
        return None
    if contiguous(outer_dims, unit):
        return unit, ji
    if broadcast(outer_dims):
        return 0, ji
    return None


def _flat(a: np.ndarray) -> int | None:
    """1 for a C-contiguous array, 0 for a broadcast scalar, None otherwise."""
    if a.flags.c_contiguous:
        return 1
    return 0 if not any(a.strides) else None


def _binary_arrays(code: int, x: np.ndarray, y: np.ndarray):
    """``x op y`` of two same-dtype arrays of one shape (either may be a broadcast view) in C; None without a loop."""
    fa, fb = _flat(x), _flat(y)
    if fa is not None and fb is not None:  # contiguous or a scalar, each: one block
        pa, pb, outer, m = (0, fa), (0, fb), 1, x.size
    else:
        for split in range(x.ndim + 1):  # the widest inner block both operands read in order
            pa, pb = _operand(x, split), _operand(y, split)
            if pa is not None and pb is not None and (pa[1] or pb[1] or split == x.ndim):
                break
        else:
            return None
        outer, m = math.prod(x.shape[:split]), math.prod(x.shape[split:])
    lib = _c_path.library()
    out = np.empty(x.shape, x.dtype)
    getattr(lib, "ow_binary_" + _CTYPE[x.dtype][1])(
        code, _addr(x), pa[0], pa[1], _addr(y), pb[0], pb[1], _addr(out), outer, m
    )
    return out


def _binary(name: str, op: str):
    code = _BINARY.index(op)

    def kernel(a, b):
        if not (isinstance(a, opweave.Tensor) and isinstance(b, opweave.Tensor)):
            return None
        if a.dtype is not b.dtype or a.dtype not in _FLOATS or tuple(a.shape) != tuple(b.shape):
            return None
        x, y = native(a), native(b)
        if x.size == 0 or x.ndim == 0 or not _taken(name, x.size):
            return None
        out = _binary_arrays(code, x, y)
        return None if out is None else wrap(out, a.dtype)

    kernel.__name__ = f"c_{op}"
    kernel.auto_name = name  # the AUTO_MIN entry that lets ``auto`` take it
    kernel.__doc__ = f"prims::{op} of same-dtype float32/float64 tensors in C (None: another kernel's call)."
    return kernel


def _scalar_operand(t, dtype, shape):
    """A wrapped Python number as a broadcast array of ``dtype``; None when it is not one or does not fit."""
    if not is_wrapped_number(t) or t.dtype.is_complex:
        return None
    value = native(t).item()
    if not -np.finfo(dtype).max <= value <= np.finfo(dtype).max:
        return None
    return np.broadcast_to(np.asarray(value, dtype), shape)


def _binary_op(op: str):
    code = _BINARY.index(op)
    name = f"prims::{op}"

    def kernel(a, b, *rest):
        if rest and not (type(rest[0]) is int and rest[0] == 1):
            return None
        if a.dtype is b.dtype and tuple(a.shape) == tuple(b.shape):
            if a.dtype not in _FLOATS:
                return None
            x, y, dtype = native(a), native(b), a.dtype
        elif a.dtype in _FLOATS and not is_wrapped_number(a):
            x, dtype = native(a), a.dtype
            y = _scalar_operand(b, x.dtype, x.shape)
        elif b.dtype in _FLOATS and not is_wrapped_number(b):
            y, dtype = native(b), b.dtype
            x = _scalar_operand(a, y.dtype, y.shape)
        else:
            return None
        if x is None or y is None or x.size == 0 or x.ndim == 0 or not _taken(name, x.size):
            return None
        out = _binary_arrays(code, x, y)
        return None if out is None else wrap(out, dtype)

    kernel.__name__ = f"c_{op}_tensor"
    kernel.auto_name = name
    kernel.__doc__ = f"{op}.Tensor of same-shape float32/float64 tensors, or one and a Python number, in C."
    return kernel


# -- reductions -----------------------------------------------------------------------------------------------


def _span(t, dims):
    """``(x, outer, r, inner, out_shape)`` when the reduced dims are one run of a C-contiguous tensor; else None."""
    x = _contiguous(t)
    if x is None or x.ndim == 0:
        return None
    axes = tuple(range(x.ndim)) if dims is None else tuple(sorted({d % x.ndim for d in dims}))
    if not axes or axes != tuple(range(axes[0], axes[-1] + 1)):
        return None
    lo, hi = axes[0], axes[-1] + 1
    out_shape = x.shape[:lo] + x.shape[hi:]
    return x, math.prod(x.shape[:lo]), math.prod(x.shape[lo:hi]), math.prod(x.shape[hi:]), out_shape


def _reduce(lib, code: int, x, outer, r, inner, centre=None) -> np.ndarray:
    y = np.empty(outer * inner, np.float64)
    c = 0 if centre is None else _addr(centre)
    getattr(lib, "ow_reduce_" + _CTYPE[x.dtype][1])(code, _addr(x), _addr(y), c, outer, r, inner)
    return y


def _reduction(name: str, code: int):
    def kernel(inp, dims, output_dtype=None):
        if output_dtype is not None and output_dtype is not inp.dtype:
            return None
        span = _span(inp, dims)
        if span is None or not _taken(name, span[0].size):
            return None
        x, outer, r, inner, shape = span
        if inner > 1 and _c_path.level() == _c_path.AUTO:
            return None  # over leading dims NumPy's row-by-row update was measured faster (docs/cpu-kernels.md)
        lib = _c_path.library()
        y = _reduce(lib, code, x, outer, r, inner)
        return wrap(y.astype(x.dtype).reshape(shape), inp.dtype)

    kernel.__name__ = "c_" + name.removeprefix("prims::")
    kernel.__doc__ = f"{name} over one run of dims of a float32/float64 tensor in C, in double."
    return kernel


def _sum_all(self, dtype=None):
    """sum.default of a float32/float64 tensor without a dtype argument, in C (double accumulation)."""
    if _c_path._level == _c_path.AUTO and native(self).size < _c_path.AUTO_MIN.get("prims::sum", math.inf):
        return None  # the everyday small sum: no more tests
    if dtype is not None and dtype is not self.dtype:
        return None
    x = _contiguous(self)
    if x is None or not _taken("prims::sum", x.size):
        return None
    y = _reduce(_c_path.library(), 0, x, 1, x.size, 1)
    return wrap(y.astype(x.dtype).reshape(()), self.dtype)


def _var(inp, dims, correction, output_dtype=None):
    """prims::var over one run of dims of a float32/float64 tensor in C: two passes in double."""
    if output_dtype is not None and output_dtype is not inp.dtype:
        return None
    span = _span(inp, dims)
    if span is None or not _taken("prims::var", span[0].size):
        return None
    x, outer, r, inner, shape = span
    lib = _c_path.library()
    mean = _reduce(lib, 0, x, outer, r, inner) / r
    dev = _reduce(lib, 3, x, outer, r, inner, mean)
    with np.errstate(all="ignore"):
        y = dev / max(r - correction, 0.0)
    return wrap(y.astype(x.dtype).reshape(shape), inp.dtype)


# -- row kernels (canonical ops) --------------------------------------------------------------------------------


def _softmax(name: str, log: bool, internal: bool):
    suffix = {_F32: "ow_softmax_f32", _F64: "ow_softmax_f64"}
    found = {}  # NumPy dtype -> the library's function (looked up once)

    def in_front_of(fallback):
        """The C kernel, running ``fallback`` (None: returning None) where it does not take the call."""

        def kernel(self, dim, third=None):
            # a tiny softmax is mostly this function's own cost (one C call does the maths): one frame, few tests
            x = native(self)
            fn = suffix.get(x.dtype)
            nd = x.ndim
            level = _c_path._level
            if level is None:
                level = _c_path.level()
            least = _c_path.AUTO_MIN.get(name)
            run = found.get(x.dtype)
            if run is None and fn is not None and level != _c_path.OFF:
                lib = _c_path._library or _c_path.library()
                if lib is not None:
                    run = found[x.dtype] = getattr(lib, fn)
            if (
                run is None
                or (third is not None and (bool(third) if internal else third is not self.dtype))
                or type(dim) is not int
                or not nd
                or not -nd <= dim < nd
                or not x.size
                or not x.flags.c_contiguous
                or level == _c_path.OFF
                or (level == _c_path.AUTO and (least is None or x.size < least))
            ):
                return None if fallback is None else fallback(self, dim, third)
            shape = x.shape
            d = dim % nd
            y = np.empty_like(x)
            pointer = _c_path.pointer
            n = shape[d]
            if d == nd - 1:
                run(pointer(x), pointer(y), x.size // n, n, 1, log)
            else:
                run(pointer(x), pointer(y), math.prod(shape[:d]), n, math.prod(shape[d + 1 :]), log)
            return wrap_same(y, self.dtype)

        if fallback is None:
            kernel.__name__ = f"c_{name}"
            kernel.__doc__ = f"{name} along one dim of a float32/float64 tensor in C (one row per pass)."
        else:
            kernel.__name__, kernel.__doc__, kernel.__wrapped__ = fallback.__name__, fallback.__doc__, fallback
        return kernel

    kernel = in_front_of(None)
    kernel.in_front_of = in_front_of
    return kernel


def _params(ts, dtype, shape):
    """Contiguous arrays of the weight/bias tensors (None stays None); False when one does not fit."""
    out = []
    for t in ts:
        if t is None:
            out.append(None)
            continue
        if t.dtype is not dtype or list(t.shape) != shape or t.device.type != "cpu":
            return False
        out.append(np.ascontiguousarray(native(t)))
    return out


def _norm(name: str, input, normalized_shape, weight, bias, eps, rms: bool):
    k = len(normalized_shape)
    shape = [int(s) for s in normalized_shape]
    if not (0 < k <= input.ndim and list(input.shape[input.ndim - k :]) == shape):
        return None
    x = _contiguous(input)
    if x is None or not _taken(name, x.size):
        return None
    params = _params((weight, bias), input.dtype, shape)
    if params is False:
        return None
    if eps is None:
        eps = float(np.finfo(x.dtype).eps)
    if not isinstance(eps, (int, float)):
        return None
    lib = _c_path.library()
    w, b = (0 if p is None else _addr(p) for p in params)
    y = np.empty_like(x)
    width = math.prod(shape)
    getattr(lib, "ow_norm_" + _CTYPE[x.dtype][1])(
        _addr(x), w, b, _addr(y), x.size // width, width, float(eps), int(rms)
    )
    return wrap(y, input.dtype)


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """layer_norm over the trailing dims of a float32/float64 tensor in C (mean and variance in double)."""
    return _norm("layer_norm", input, normalized_shape, weight, bias, eps, rms=False)


def _rms_norm(input, normalized_shape, weight=None, eps=None):
    """rms_norm over the trailing dims of a float32/float64 tensor in C (mean square in double)."""
    return _norm("rms_norm", input, normalized_shape, weight, None, eps, rms=True)


def _cross_entropy(self, target, weight=None, reduction=1, ignore_index=-100, label_smoothing=0.0):
    """cross_entropy_loss of (N, C) float32/float64 logits and int64 classes in C: one pass per row, no
    log_softmax written."""
    r = {"Mean": 1, "Sum": 2, "None": 0}.get(reduction, reduction) if isinstance(reduction, str) else reduction
    if not (
        self.ndim == 2
        and target.dtype is opweave.int64
        and tuple(target.shape) == (self.shape[0],)
        and target.device.type == "cpu"
        and weight is None
        and label_smoothing == 0
        and type(r) is int
        and r in (0, 1, 2)
        and isinstance(ignore_index, int)
    ):
        return None
    x = _contiguous(self)
    if x is None or not _taken("cross_entropy_loss", x.size):
        return None
    t = np.ascontiguousarray(native(target))
    rows, classes = x.shape
    lib = _c_path.library()
    loss = np.empty(rows, x.dtype)
    bad = getattr(lib, "ow_cross_entropy_" + _CTYPE[x.dtype][1])(
        _addr(x), _addr(t), _addr(loss), rows, classes, ignore_index
    )
    if bad:
        return None  # the NumPy kernel declines, the decomposition raises
    if r == 0:
        return wrap(loss, self.dtype)
    total = loss.sum(dtype=np.float64)
    if r == 1:
        with np.errstate(all="ignore"):
            total = total / np.float64(np.count_nonzero(t != ignore_index))
    return wrap(np.asarray(total, x.dtype), self.dtype)


def _decline(c_fn):
    """A kernel that has no NumPy twin: the C kernel, else the op's decomposition."""

    def kernel(*args, **kwargs):
        r = c_fn(*args, **kwargs)
        if r is None:
            raise Decline("not a call the C kernel takes")
        return r

    kernel.__name__, kernel.__doc__ = c_fn.__name__, c_fn.__doc__
    return kernel


C_KERNELS = {
    **{f"prims::{op}": _unary(f"prims::{op}", op) for op in ("exp", "expm1", "log", "log1p", "tanh", "sigmoid")},
    **{f"prims::{op}": _unary(f"prims::{op}", op) for op in ("erf", "sqrt")},
    # the canonical ops' direct kernels (``canonical_unary``) apply their prim's function: the prim's C kernel too,
    # from the prim's size, so results stay those of the decomposition bit for bit
    **{op: _unary(f"prims::{op}", op) for op in ("exp", "expm1", "log", "log1p", "tanh", "sigmoid", "erf", "sqrt")},
    **{f"prims::{op}": _binary(f"prims::{op}", op) for op in _BINARY},
    **{f"{op}.Tensor": _binary_op(op) for op in _BINARY},
    "prims::sum": _reduction("prims::sum", 0),
    "sum": _sum_all,
    "prims::amax": _reduction("prims::amax", 1),
    "prims::amin": _reduction("prims::amin", 2),
    "prims::var": _var,
    "softmax.int": _softmax("softmax", log=False, internal=False),
    "log_softmax.int": _softmax("log_softmax", log=True, internal=False),
    "_softmax": _softmax("softmax", log=False, internal=True),
    "_log_softmax": _softmax("log_softmax", log=True, internal=True),
    "layer_norm": _layer_norm,
    "cross_entropy_loss": _cross_entropy,
}

#: C kernels of ops the CPU backend has no kernel of its own for (else their decomposition runs)
C_ONLY = {
    "rms_norm": _decline(_rms_norm),
    "silu": _decline(_unary("silu", "silu")),
}


def _gelu(self, approximate="none"):
    """gelu (erf or tanh form) of a float32/float64 tensor in C."""
    if approximate not in ("none", "tanh"):
        return None
    x = _contiguous(self)
    if x is None or not _taken("gelu", x.size):
        return None
    lib = _c_path.library()
    y = np.empty_like(x)
    code = _UNARY.index("gelu_tanh" if approximate == "tanh" else "gelu")
    getattr(lib, "ow_unary_" + _CTYPE[x.dtype][1])(code, _addr(x), _addr(y), x.size)
    return wrap(y, self.dtype)


C_KERNELS["gelu"] = _gelu


def with_c(name: str, fn):
    """The kernel registered for ``name``: its C kernel when that takes the call, else ``fn``."""
    c_fn = C_KERNELS.get(name)
    if c_fn is None:
        return fn
    if hasattr(c_fn, "in_front_of"):  # a C kernel that runs ``fn`` itself when it does not take the call
        return c_fn.in_front_of(fn)

    # a C kernel that ``auto`` never takes costs the default path nothing (tiny ``a * 2.0`` stays at NumPy's cost)
    never_auto = hasattr(c_fn, "auto_name") and c_fn.auto_name not in _c_path.AUTO_MIN

    def kernel(*args, **kwargs):
        level = _c_path._level
        if level is None:
            level = _c_path.level()
        if level != _c_path.OFF and not (never_auto and level == _c_path.AUTO):
            r = c_fn(*args, **kwargs)
            if r is not None:
                return r
        return fn(*args, **kwargs)

    kernel.__name__ = getattr(fn, "__name__", name)
    kernel.__doc__ = fn.__doc__
    kernel.__wrapped__ = fn
    return kernel
