"""``opweave.return_types``: the named tuples that multi-output ops return (PyTorch's ``torch.return_types``).

An op whose schema names every one of its several returns
(``max.dim(...) -> (Tensor values, Tensor indices)``) returns an instance of
``opweave.return_types.<op name>``, a :func:`collections.namedtuple` with those
field names: ``ow.max(t, 0).values``, and it still unpacks and indexes as a tuple.
Ops with unnamed returns (``native_layer_norm``) return plain tuples, as in PyTorch.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._schema import OpSchema

_TYPES: dict[tuple, type] = {}
_schemas: Callable[[], Iterable[OpSchema]] = tuple  # every defined op's schema, by name; ``_ops`` provides it


def provide_schemas(schemas: Callable[[], Iterable[OpSchema]]) -> None:
    """Declare where the defined ops' schemas come from (the catalog, ``_ops``, which sits above this module)."""
    global _schemas
    _schemas = schemas


def for_schema(schema: OpSchema) -> type | None:
    """The named tuple type for ``schema``'s returns, or None when it has fewer than two or any is unnamed."""
    names = tuple(r.name for r in schema.returns)
    if len(names) < 2 or not all(names):
        return None
    key = (schema.name, names)
    cls = _TYPES.get(key)
    if cls is None:
        cls = _TYPES[key] = collections.namedtuple(schema.name, names, module=__name__)
        cls.__doc__ = f"The result of ``{schema.name}``: ({', '.join(names)})."
        globals().setdefault(schema.name, cls)
    return cls


def wrapper(cls: type | None) -> Callable | None:
    """A function turning a kernel's tuple result into ``cls``; anything else (a layer's None) passes through."""
    if cls is None:
        return None

    def named(result):
        return cls(*result) if type(result) is tuple or type(result) is list else result

    return named


def __getattr__(name: str) -> type:
    if name.startswith("__"):
        raise AttributeError(name)
    for schema in _schemas():
        if schema.name == name:
            cls = for_schema(schema)
            if cls is not None:
                return cls
    raise AttributeError(f"module 'opweave.return_types' has no attribute '{name}'")
