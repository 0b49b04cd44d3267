"""Tensor operators called unbound on a non-tensor (``Tensor.__add__(2, t)``) raise PyTorch's TypeError.

The forward binary operators (``__add__``, ``__mul__``, ``__lt__``...) are the ops' generated entries
themselves, so ``a + b`` costs one Python call; those entries accept a number for ``self`` (as
``torch.ops.aten.add.Tensor(2, t)`` does), so called unbound they would compute. Tensor's metaclass,
:class:`TensorType`, holds a data descriptor for each such operator: a data descriptor on the
metaclass takes precedence for attribute access on the class (``Tensor.__add__``, the only way to
call an operator unbound), where it gives a function that checks ``self`` first, while CPython's
operator slots and instance attribute access (``a + b``, ``t.__add__``, ``super().__add__``) look in
the class's own namespace and never consult the metaclass: the per-call cost of ``a + b`` is unchanged.
"""

from __future__ import annotations

from typing import Any


def not_a_tensor(name: str, self: object) -> TypeError:
    """The TypeError of a Tensor method or operator ``name`` called unbound with a non-Tensor ``self``."""
    return TypeError(f"descriptor '{name}' requires an opweave.Tensor object but received '{type(self).__name__}'")


class TensorType(type):
    """The metaclass of ``opweave.Tensor``: class-level access to the guarded operators is checked."""


class _ClassLevel:
    """A data descriptor of :class:`TensorType` for the operator ``name`` defined on ``owner``."""

    __slots__ = ("owner", "name", "checked")

    def __init__(self, owner: type, name: str) -> None:
        self.owner, self.name = owner, name

        def checked(self: Any, other: Any) -> Any:
            if not isinstance(self, owner):
                raise not_a_tensor(name, self)
            return vars(owner)[name](self, other)

        checked.__name__, checked.__qualname__ = name, f"{owner.__name__}.{name}"
        checked.__doc__ = vars(owner)[name].__doc__
        self.checked = checked

    def __get__(self, cls: type | None, meta: type | None = None) -> Any:
        if cls is None:
            return self
        for klass in cls.__mro__:  # a subclass's own definition comes first, as without the metaclass
            if self.name in vars(klass):
                if klass is self.owner:
                    return self.checked
                attr = vars(klass)[self.name]
                get = getattr(type(attr), "__get__", None)
                return attr if get is None else get(attr, None, cls)
        raise AttributeError(f"type object '{cls.__name__}' has no attribute '{self.name}'")

    def __set__(self, cls: type, value: Any) -> None:
        self._aside(setattr, cls, value)

    def __delete__(self, cls: type) -> None:
        self._aside(delattr, cls)

    def _aside(self, action, cls: type, *value: Any) -> None:
        # act on the class's namespace (as without the metaclass): step aside while type.__setattr__ runs
        delattr(TensorType, self.name)
        try:
            action(cls, self.name, *value)
        finally:
            setattr(TensorType, self.name, self)


def guard(owner: type, name: str) -> None:
    """Make ``owner.<name>`` (an operator already set on ``owner``) raise TypeError for a non-``owner`` self."""
    if type(owner) is not TensorType:
        raise TypeError(f"guard: {owner.__name__} is not made by TensorType")
    if not isinstance(vars(TensorType).get(name), _ClassLevel):
        setattr(TensorType, name, _ClassLevel(owner, name))
