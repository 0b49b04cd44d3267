"""The ``*_copy`` variants of the view ops (ATen's ``view_copy``, ``transpose_copy``...) and ``unsafe_*`` splits.

Each is its view op followed by a copy into a fresh contiguous tensor: same values, shape
and dtype, no aliasing. The schemas are the view ops' with the alias annotations dropped;
single-tensor results also get the derived ``out=`` variant.
"""

from __future__ import annotations

import re

from .._ops import canonical
from ._shapes import CONTIGUOUS
from ._utils import define_with_variants

# (view op packet, overload) -> the ``*_copy`` op of the same arguments
VIEW_OPS = [
    ("view", ""),
    ("view", "dtype"),
    ("squeeze", ""),
    ("squeeze", "dim"),
    ("squeeze", "dims"),
    ("unsqueeze", ""),
    ("transpose", "int"),
    ("t", ""),
    ("permute", ""),
    ("expand", ""),
    ("as_strided", ""),
    ("diagonal", ""),
    ("unfold", ""),
    ("select", "int"),
    ("slice", "Tensor"),
    ("alias", ""),
    ("detach", ""),
    ("view_as_real", ""),
    ("view_as_complex", ""),
    ("split", "Tensor"),
    ("split_with_sizes", ""),
    ("unbind", "int"),
]


def _copy_schema(view_op) -> str:
    text = str(view_op.schema)
    text = re.sub(r"\(a( -> \*)?\)", "", text)
    name, rest = text.split("(", 1)
    base, _, overload = name.partition(".")
    return f"{base}_copy{'.' + overload if overload else ''}({rest}"


def _copied(result):
    if isinstance(result, (list, tuple)):
        return [canonical.clone(r, memory_format=CONTIGUOUS) for r in result]
    return canonical.clone(result, memory_format=CONTIGUOUS)


def _decomposition(view_op):
    def decomposition(*args):
        return _copied(view_op.call_bound(*args))

    name = view_op.schema.name
    decomposition.__name__ = f"{name}_copy"
    decomposition.__doc__ = f"``{name}`` followed by a contiguous copy: the same values, aliasing nothing."
    return decomposition


def unsafe_split(self, split_size, dim=0):
    """``split`` into fresh tensors (PyTorch's view-tracking-free variant; here copies)."""
    return _copied(canonical.split.Tensor(self, split_size, dim))


def unsafe_split_with_sizes(self, split_sizes, dim=0):
    """``split_with_sizes`` into fresh tensors."""
    return _copied(canonical.split_with_sizes(self, split_sizes, dim))


def unsafe_chunk(self, chunks, dim=0):
    """``chunk`` into fresh tensors."""
    return _copied(canonical.chunk(self, chunks, dim))


UNSAFE = [
    ("unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]", unsafe_split),
    ("unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]", unsafe_split_with_sizes),
    ("unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", unsafe_chunk),
]


def view_copy(self, size):
    """``view`` followed by a contiguous copy; like PyTorch, also for layouts ``view`` cannot express (a reshape)."""
    return _copied(canonical.reshape(self, size))


def _define():
    for schema, fn in UNSAFE:
        define_with_variants(schema, fn, inplace=False, out=False)
    for packet, overload in VIEW_OPS:
        view_op = getattr(canonical, packet).overloads[overload]
        single = len(view_op.schema.returns) == 1 and not view_op.schema.returns[0].type.is_list
        fn = view_copy if (packet, overload) == ("view", "") else _decomposition(view_op)
        define_with_variants(_copy_schema(view_op), fn, inplace=False, out=single)


_define()
