"""Exception types of the core that PyTorch users catch by their builtin bases."""

from __future__ import annotations


class IndexOutOfBoundsError(IndexError, RuntimeError):
    """An index tensor holds a value outside the dim it indexes.

    Both an ``IndexError`` and a ``RuntimeError``: PyTorch raises one or the other depending
    on the op (``index_select``, ``take``, ``index_put``: IndexError; ``gather``, ``scatter``,
    ``index_add``: RuntimeError), and code written for either catches this. Kernels raise it
    when they find such an index (the bound is data, so only the kernel can check it).
    """
