"""``opweave.nn.Parameter``: a Tensor that a Module registers as a learnable parameter."""

from __future__ import annotations

from .._tensor import Tensor

# The slots that describe a tensor's memory and element type (not its autograd state).
_PAYLOAD = ("_st", "_shape", "_stride", "_offset", "_dtype", "_device", "_keys", "_native", "_qparams")


def _all_slots(cls) -> list:
    names = []
    for klass in cls.__mro__:
        for name in getattr(klass, "__slots__", ()):
            if name not in ("__weakref__", "__dict__") and name not in names:
                names.append(name)
    return names


def _set_requires_grad(t: Tensor, flag: bool) -> None:
    setter = getattr(t, "requires_grad_", None)
    if setter is not None:
        setter(flag)


def _detached(data: Tensor) -> Tensor:
    """``data.detach()``, taken with gradient recording off (a view made then never has a ``grad_fn``)."""
    import opweave

    with opweave.no_grad():
        return data.detach()


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    ``Parameter(data=None, requires_grad=True)`` shares ``data``'s memory (no copy), as PyTorch's does;
    ``data=None`` gives an empty float32 tensor.
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        """Wrap ``data`` (shared, detached) as a leaf that requires grad."""
        if data is None:
            import opweave

            data = opweave.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): 'data' must be a Tensor, got {type(data).__name__}")
        base = _detached(data)
        p = object.__new__(cls)
        for name in _all_slots(Tensor):
            try:
                value = object.__getattribute__(base, name)
            except AttributeError:
                continue
            object.__setattr__(p, name, value)
        if requires_grad and not (data.is_floating_point() or data.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        _set_requires_grad(p, requires_grad)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True):
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (_detached(self), bool(getattr(self, "requires_grad", True))))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(_detached(self).clone(), bool(getattr(self, "requires_grad", True)))
        memo[id(self)] = result
        return result


def _rebuild_parameter(data: Tensor, requires_grad: bool) -> Parameter:
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """A marker for a tensor that a Module registers as a buffer on assignment (``persistent=`` as PyTorch).

    ``Buffer(data, persistent=True)`` returns a plain Tensor sharing ``data``'s memory when assigned: the
    module stores the tensor, not the marker.
    """

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        """Mark ``data`` to be registered as a buffer."""
        import opweave

        if data is None:
            data = opweave.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): 'data' must be a Tensor, got {type(data).__name__}")
        b = object.__new__(cls)
        for name in _all_slots(Tensor):
            try:
                value = object.__getattribute__(_detached(data), name)
            except AttributeError:
                continue
            object.__setattr__(b, name, value)
        b.persistent = persistent
        return b

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True):
        pass


def plain_tensor(t: Tensor) -> Tensor:
    """A plain ``Tensor`` viewing the same memory as ``t`` (used to unwrap a ``Buffer``)."""
    out = object.__new__(Tensor)
    for name in _all_slots(Tensor):
        try:
            value = object.__getattribute__(t, name)
        except AttributeError:
            continue
        object.__setattr__(out, name, value)
    return out


def swap_payload(dst: Tensor, src: Tensor) -> None:
    """Make ``dst`` view ``src``'s memory, shape and dtype in place (PyTorch's ``dst.data = src``)."""
    flag = bool(getattr(dst, "requires_grad", False))
    for name in _PAYLOAD:
        try:
            value = object.__getattribute__(src, name)
        except AttributeError:
            continue
        object.__setattr__(dst, name, value)
    _set_requires_grad(dst, flag)
