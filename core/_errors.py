"""Errors leaving an operator name it.

Every op's generated entry point (``_binding``) passes the exceptions that leave it through :func:`name_op`: a
TypeError/ValueError/RuntimeError/NotImplementedError/IndexError whose message does not mention the op gets the op's
name in front (``swapaxes: transpose: dim 3 is out of range ...``), so an error raised deep in a decomposition still
says which call the user made; the exception keeps its type and traceback. A ``MemoryError`` (NumPy refusing a huge
array) becomes :class:`opweave.OutOfMemoryError` (a RuntimeError, as PyTorch's allocator raises) naming the op, and
an ``OverflowError`` (a Python int too large for a C integer) a RuntimeError, as PyTorch's "Overflow when unpacking
long".

It also holds the exception types of the core that PyTorch users catch by their builtin bases.
"""

from __future__ import annotations


class OutOfMemoryError(RuntimeError):
    """A device ran out of memory even after its allocator released its cache."""

    __module__ = "opweave"


NAMED = (TypeError, ValueError, RuntimeError, NotImplementedError, IndexError)


def name_op(exc: BaseException, op) -> None:
    """Put ``op``'s name in front of ``exc``'s message unless the message names it already (in place)."""
    args = exc.args
    if not args or not isinstance(args[0], str):
        return
    base = op.schema.name
    if base in args[0] or base.rstrip("_") in args[0]:
        return
    try:
        exc.args = (f"{op.name}: {args[0]}", *args[1:])
    except (AttributeError, TypeError):  # an extension type with read-only args: leave it as it is
        pass


def out_of_memory(exc: MemoryError, op) -> BaseException:
    """The :class:`opweave.OutOfMemoryError` that replaces a host ``MemoryError`` raised inside ``op``."""
    return OutOfMemoryError(f"{op.name}: cannot allocate the memory this call needs: {exc}")


def overflow(exc: OverflowError, op) -> RuntimeError:
    """The RuntimeError that replaces an ``OverflowError`` raised inside ``op`` (an integer argument out of range)."""
    return RuntimeError(f"{op.name}: an integer argument is out of range: {exc}")


class IndexOutOfBoundsError(IndexError, RuntimeError):
    """An index tensor holds a value outside the dim it indexes.

    Both an ``IndexError`` and a ``RuntimeError``: PyTorch raises one or the other depending
    on the op (``index_select``, ``take``, ``index_put``: IndexError; ``gather``, ``scatter``,
    ``index_add``: RuntimeError), and code written for either catches this. Kernels raise it
    when they find such an index (the bound is data, so only the kernel can check it).
    """
