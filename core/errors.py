"""Exception types that are what opweave documents and what PyTorch raises, at once.

opweave raises ``ValueError`` for bad shapes, dims and values and ``TypeError`` for bad
dtypes (see ``docs/architecture.md``); PyTorch raises ``RuntimeError`` for most of both (its
C++ checks) and ``IndexError`` for a dim out of range. So that code written for either
catches what it expects, an error raised *inside* an op (its decomposition or kernel) leaves
the op as :class:`ValueRuntimeError` or :class:`TypeRuntimeError` (subclasses of both), and a
dim out of range is a :class:`DimIndexError` (an ``IndexError`` and a ``ValueError``).
Argument-binding errors (wrong argument types or names) stay plain ``TypeError``, as in PyTorch.
"""

from __future__ import annotations


class ValueRuntimeError(ValueError, RuntimeError):
    """A bad shape or value inside an op: a ``ValueError`` that PyTorch code catches as ``RuntimeError``."""


class TypeRuntimeError(TypeError, RuntimeError):
    """A bad dtype inside an op: a ``TypeError`` that PyTorch code catches as ``RuntimeError``."""


class DimIndexError(IndexError, ValueError):
    """A dim out of range: PyTorch's ``IndexError``, and the ``ValueError`` opweave documents."""


_AS_RUNTIME = {ValueError: ValueRuntimeError, TypeError: TypeRuntimeError}


def from_op(exc: BaseException) -> BaseException:
    """The exception to raise in place of ``exc`` as it leaves an op (``exc`` itself unless plain Value/TypeError)."""
    cls = _AS_RUNTIME.get(type(exc))
    if cls is None:
        return exc
    return cls(*exc.args).with_traceback(exc.__traceback__)
