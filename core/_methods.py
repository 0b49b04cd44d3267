"""Tensor methods, Python operators and the ``opweave.*`` functions.

Data access (``item``, ``tolist``, ``numpy``, DLPack, ``to``) is written here;
every canonical op whose first argument is ``Tensor self`` also becomes a
method, and every canonical packet becomes an ``opweave.<name>`` function.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from . import _backends, _dtype, _views
from ._device import as_device
from ._device import device as _device_cls
from ._indexing import __getitem__, __setitem__
from ._ops import canonical, prims
from ._pinned import is_pinned, pin_memory
from ._plans import note_unplannable
from ._tensor import Tensor
from ._unbound import guard, not_a_tensor

_OPERAND_TYPES = (Tensor, int, float, bool, complex, np.generic)

# Python operator -> (canonical op, reflected?)
BINARY_OPERATORS = {
    "__add__": ("add", False),
    "__radd__": ("add", True),
    "__sub__": ("sub", False),
    "__rsub__": ("sub", True),
    "__mul__": ("mul", False),
    "__rmul__": ("mul", True),
    "__truediv__": ("div", False),
    "__rtruediv__": ("div", True),
    "__rdiv__": ("div", True),
    "__floordiv__": ("floor_divide", False),
    "__rfloordiv__": ("floor_divide", True),
    "__mod__": ("remainder", False),
    "__rmod__": ("remainder", True),
    "__pow__": ("pow", False),
    "__rpow__": ("pow", True),
    "__matmul__": ("matmul", False),
    "__rmatmul__": ("matmul", True),
    "__and__": ("bitwise_and", False),
    "__rand__": ("bitwise_and", True),
    "__or__": ("bitwise_or", False),
    "__ror__": ("bitwise_or", True),
    "__xor__": ("bitwise_xor", False),
    "__rxor__": ("bitwise_xor", True),
    "__lshift__": ("bitwise_left_shift", False),
    "__rlshift__": ("bitwise_left_shift", True),
    "__rshift__": ("bitwise_right_shift", False),
    "__rrshift__": ("bitwise_right_shift", True),
    "__eq__": ("eq", False),
    "__ne__": ("ne", False),
    "__lt__": ("lt", False),
    "__le__": ("le", False),
    "__gt__": ("gt", False),
    "__ge__": ("ge", False),
}
INPLACE_OPERATORS = {
    "__iadd__": "add_",
    "__isub__": "sub_",
    "__imul__": "mul_",
    "__itruediv__": "div_",
    "__ifloordiv__": "floor_divide_",
    "__imod__": "remainder_",
    "__ipow__": "pow_",
    "__iand__": "bitwise_and_",
    "__ior__": "bitwise_or_",
    "__ixor__": "bitwise_xor_",
    "__ilshift__": "bitwise_left_shift_",
    "__irshift__": "bitwise_right_shift_",
}
UNARY_OPERATORS = {"__neg__": "neg", "__pos__": "positive", "__abs__": "abs", "__invert__": "bitwise_not"}


# Called unbound on something else than a Tensor (``Tensor.__add__(2, t)``, ``Tensor.add(2, t)``), every
# generated method and operator raises PyTorch's TypeError instead of computing. The Python wrappers check
# ``type(self) is Tensor`` (one identity test; ``isinstance`` only for subclasses and the error); the forward
# binary operators that are the generated entries themselves are guarded by Tensor's metaclass instead, at no
# cost per call (see ``_unbound``). ``__or__`` is not: ``type.__or__`` makes ``Tensor | None`` annotations.
_CLASS_GUARDED = frozenset(d for d, (n, r) in BINARY_OPERATORS.items() if not r and n not in ("eq", "ne")) - {"__or__"}


def _binary(packet, reflected: bool, dunder: str):
    tensor_overload = packet.overloads.get("Tensor") or next(iter(packet.overloads.values()))
    entry = tensor_overload._entry

    if reflected:

        def operator(self, other):
            if type(self) is not Tensor and not isinstance(self, Tensor):
                raise not_a_tensor(operator.__name__, self)
            if isinstance(other, _OPERAND_TYPES):
                return entry(other, self) if isinstance(other, Tensor) else packet(_scalar_like(other, self), self)
            return NotImplemented

        operator.__doc__ = f"Reflected operand: ``other {packet.name} self`` (see :func:`opweave.{packet.name}`)."
    elif dunder in _CLASS_GUARDED:
        return entry  # the generated entry is the operator: unsupported operands raise TypeError naming the op
    elif packet.name not in ("eq", "ne"):

        def operator(self, other):
            if type(self) is Tensor or isinstance(self, Tensor):
                return entry(self, other)
            raise not_a_tensor(operator.__name__, self)

        operator.__doc__ = entry.__doc__
    else:

        def operator(self, other):
            if type(self) is not Tensor and not isinstance(self, Tensor):
                raise not_a_tensor(operator.__name__, self)
            if isinstance(other, _OPERAND_TYPES):
                return entry(self, other)
            return NotImplemented

        operator.__doc__ = f"Elementwise ``{packet.name}`` as a bool tensor (see :func:`opweave.{packet.name}`)."
    return operator


def _scalar_like(value, like: Tensor):
    """A reflected operand as a wrapped scalar on ``like``'s device (``2 - t``)."""
    from ._tensor import wrap_scalar

    return wrap_scalar(value)


def _inplace(packet):
    def operator(self, other):
        if type(self) is not Tensor and not isinstance(self, Tensor):
            raise not_a_tensor(operator.__name__, self)
        packet(self, other)
        return self

    operator.__doc__ = f"In place: ``self.{packet.name}(other)``, returns ``self``."
    return operator


def _unary(packet):
    def operator(self):
        if type(self) is Tensor or isinstance(self, Tensor):
            return packet(self)
        raise not_a_tensor(operator.__name__, self)

    operator.__doc__ = f"``self.{packet.name}()`` (see :func:`opweave.{packet.name}`)."
    return operator


def _method(packet):
    choices = packet._choices  # the packet's cached overload choices (cleared in place, never replaced)

    def method(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if not (type(self) is Tensor or isinstance(self, Tensor)):
            raise not_a_tensor(method.__name__, self)
        if not kwargs:  # the packet's own lookup, without its frame: argument types -> entry point
            choice = choices.get((type(self), *map(type, args)) if args else (type(self),))
            if choice is not None:
                entry, start, as_list = choice
                if start is None:
                    return entry(self, *args)
                if start:  # varargs sizes from packet position ``start`` (``t.view(2, 8)``)
                    tail = args[start - 1 :]
                    return entry(self, *args[: start - 1], list(tail) if as_list else tail)
        return packet(self, *args, **kwargs)

    method.__name__ = packet.name
    method.__qualname__ = f"Tensor.{packet.name}"
    method.__doc__ = _packet_doc(packet)
    return method


def _packet_doc(packet) -> str:
    """The first overload's docstring followed by every overload's schema (what ``help()`` shows)."""
    overloads = list(packet.overloads.values())
    text = overloads[0].__doc__ or ""
    schemas = "\n".join(f"    {op.schema}" for op in overloads)
    return f"{text}\n\nSchemas:\n{schemas}" if text != str(overloads[0].schema) else f"Schemas:\n{schemas}"


def _name_operator(fn, dunder: str) -> None:
    if getattr(fn, "__qualname__", "").endswith("<locals>.operator"):
        fn.__name__ = dunder
        fn.__qualname__ = f"Tensor.{dunder}"


_PYTHON_FUNCTIONS: dict = {}  # name -> (function, Tensor method or None); see python_function


def python_function(name: str, fn, *, method=None) -> None:
    """Declare a Python-level function ``opweave.<name>`` (and ``Tensor.<name>``) that replaces the op packet.

    For ops whose PyTorch signature is not one schema (``unique`` picks among several ops);
    :func:`install` puts them in place after the packets.
    """
    _PYTHON_FUNCTIONS[name] = (fn, method)


def install(namespace: dict) -> None:
    """Attach op methods and operators to Tensor, and op functions to ``namespace`` (``opweave``)."""
    for name, (fn, method) in _PYTHON_FUNCTIONS.items():
        namespace[name] = fn
        if method is not None:
            setattr(Tensor, name, method)
    for name, packet in canonical._packets.items():
        if name not in namespace:
            namespace[name] = packet
        first = packet.overloads[next(iter(packet.overloads))].schema.arguments
        if first and first[0].name == "self" and first[0].type.name == "Tensor" and not hasattr(Tensor, name):
            setattr(Tensor, name, _method(packet))
    operators = [
        (d, _binary(canonical._packets[n], r, d)) for d, (n, r) in BINARY_OPERATORS.items() if n in canonical._packets
    ]
    operators += [(d, _inplace(canonical._packets[n])) for d, n in INPLACE_OPERATORS.items() if n in canonical._packets]
    operators += [(d, _unary(canonical._packets[n])) for d, n in UNARY_OPERATORS.items() if n in canonical._packets]
    for dunder, operator in operators:
        _name_operator(operator, dunder)
        setattr(Tensor, dunder, operator)
        if dunder in _CLASS_GUARDED:
            guard(Tensor, dunder)
    Tensor.__hash__ = object.__hash__
    _views.install(Tensor)


# -- data access ----------------------------------------------------------


def _host(t: Tensor) -> np.ndarray:
    note_unplannable("the decomposition reads tensor data")
    return _backends.get(t.device.type).copy_to_host(t)


def item(self: Tensor) -> complex:
    """The value of a one-element tensor as a Python number."""
    return prims.item(self)


def tolist(self: Tensor) -> list | complex:
    """The elements as (nested) Python lists of numbers."""
    array = _host(self)
    if self.dtype is _dtype.bfloat16 or self.dtype.is_float8 or self.dtype is _dtype.float16:
        array = array.astype(np.float64)
    return array.tolist()


def numpy(self, *, force: bool = False) -> np.ndarray:
    """A NumPy array sharing memory with this CPU tensor (``force=True`` copies from other devices)."""
    note_unplannable("the decomposition reads tensor data")
    view = _backends.get(self.device.type).host_view(self)
    if view is not None:
        return view
    if force:
        return _host(self)
    raise TypeError(f"numpy(): can't convert a {self.device.type} tensor to NumPy; use .cpu() first")


def __array__(self, dtype=None, copy=None):
    array = numpy(self, force=copy is not False)
    if dtype is not None and array.dtype != dtype:
        if copy is False:
            raise ValueError("__array__: a dtype change needs a copy, but copy=False")
        return array.astype(dtype)
    return array.copy() if copy else array


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    view = _backends.get(self.device.type).host_view(self)
    if view is None:
        exporter = getattr(_backends.get(self.device.type), "dlpack", None)
        if exporter is None:
            raise BufferError(f"__dlpack__: the {self.device.type} backend cannot export DLPack")
        return exporter(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
    kwargs = {"stream": stream}
    if max_version is not None:
        kwargs["max_version"] = max_version
    if dl_device is not None:
        kwargs["dl_device"] = dl_device
    if copy is not None:
        kwargs["copy"] = copy
    return view.__dlpack__(**kwargs)


def __dlpack_device__(self):
    backend = _backends.get(self.device.type)
    if backend.dlpack_device_type is None:
        raise BufferError(f"__dlpack_device__: the {self.device.type} backend has no DLPack device type")
    return (backend.dlpack_device_type, self.device.index or 0)


def to(
    self: Tensor,
    *args: Any,
    device: _device_cls | str | int | None = None,
    dtype: _dtype.dtype | None = None,
    non_blocking: bool = False,
    copy: bool = False,
    memory_format: object = None,
) -> Tensor:
    """Convert to another device and/or dtype: ``t.to("cpu")``, ``t.to(opweave.float64)``, ``t.to(other)``.

    ``memory_format`` (``opweave.contiguous_format``, ``channels_last``...) lays the result out
    in that format; ``self`` is returned when nothing changes and ``copy`` is False.
    """
    if (  # t.to(dtype), the everyday call: the planned _to_copy op (its plan runs the cast kernel only)
        len(args) == 1
        and type(args[0]) is _dtype.dtype
        and device is None
        and dtype is None
        and not copy
        and memory_format is None
        and self._ag is None
    ):
        return self if args[0] is self._dtype else canonical._to_copy.default(self, dtype=args[0])
    flags = [a for a in args if isinstance(a, bool)]
    if len(flags) > 2 or args[len(args) - len(flags) :] != tuple(flags):
        raise TypeError("to(): positional bools are non_blocking and copy, after the device/dtype/tensor")
    if flags:
        non_blocking, copy = (flags + [copy])[:2]
        args = args[: len(args) - len(flags)]
    for arg in args:
        if isinstance(arg, _dtype.dtype):
            dtype = arg
        elif isinstance(arg, Tensor):
            device, dtype = arg.device, arg.dtype
        elif isinstance(arg, str) or type(arg).__name__ == "device":
            device = arg
        else:
            raise TypeError(f"to(): unexpected argument of type {type(arg).__name__}")
    if dtype is not None and not isinstance(dtype, _dtype.dtype):
        raise TypeError(f"to(): argument 'dtype' must be opweave.dtype, not {type(dtype).__name__}")
    dev = as_device(device)
    out = self
    if dev is not None and (dev.type != self.device.type or (dev.index or 0) != (self.device.index or 0)):
        out = prims.device_put(out, dev, non_blocking)
    if dtype is not None and dtype is not out.dtype:
        out = prims.convert_element_type(out, dtype)
    if memory_format is not None and str(memory_format) != "preserve_format":
        out = canonical.contiguous(out, memory_format=str(memory_format))
    if copy and out is self:
        out = prims.clone(self)
    return out


def new_tensor(
    self: Tensor,
    data: object,
    *,
    dtype: _dtype.dtype | None = None,
    device: _device_cls | str | int | None = None,
    requires_grad: bool = False,
    layout: Any = None,
    pin_memory: bool = False,
) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (nested sequences, scalars, arrays, tensors); never shares memory.

    ``dtype`` and ``device`` default to this tensor's (not to those ``data`` would infer). A tensor ``data`` is
    copied and detached, with PyTorch's ``UserWarning`` recommending ``data.detach().clone()``.
    """
    from ._factories import tensor
    from .refs._shapes import check_layout

    check_layout("new_tensor", layout, pin_memory)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
            "sourceTensor.detach().clone().requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
    return tensor(
        data,
        dtype=self.dtype if dtype is None else dtype,
        device=self.device if device is None else device,
        requires_grad=requires_grad,
        pin_memory=pin_memory,
    )


def cpu(self: Tensor) -> Tensor:
    """This tensor on the CPU (itself if already there)."""
    return to(self, "cpu")


def __bool__(self):
    if self.numel() != 1:
        raise RuntimeError(f"Boolean value of Tensor with {self.numel()} values is ambiguous")
    return bool(item(self))


def __int__(self):
    if self.numel() != 1:
        raise ValueError(f"only one-element tensors can be converted to Python scalars (got {self.numel()})")
    return int(item(self).real if isinstance(item(self), complex) else item(self))


def __float__(self):
    if self.numel() != 1:
        raise ValueError(f"only one-element tensors can be converted to Python scalars (got {self.numel()})")
    return float(item(self))


def __complex__(self):
    if self.numel() != 1:
        raise ValueError(f"only one-element tensors can be converted to Python scalars (got {self.numel()})")
    return complex(item(self))


def __index__(self):
    if self.dtype.kind not in ("int", "uint", "bool") or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    return int(item(self))


def __len__(self):
    if not self.shape:
        raise TypeError("len() of a 0-d tensor")
    return self.shape[0]


def __iter__(self):
    if not self.shape:
        raise TypeError("iteration over a 0-d tensor")
    return (self[i] for i in range(self.shape[0]))


def __repr__(self):
    from ._format import format_tensor

    return format_tensor(self)


for _fn in (
    item,
    tolist,
    numpy,
    __array__,
    __dlpack__,
    __dlpack_device__,
    to,
    new_tensor,
    cpu,
    pin_memory,
    is_pinned,
    __bool__,
    __int__,
    __float__,
    __complex__,
    __index__,
    __len__,
    __iter__,
    __repr__,
    __getitem__,
    __setitem__,
):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
