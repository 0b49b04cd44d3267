"""``ReduceOp``: the reductions of the collectives, with PyTorch's names."""

from __future__ import annotations

import enum


class ReduceOp(enum.Enum):
    """A reduction of ``all_reduce``/``reduce``/``reduce_scatter`` (``ReduceOp.SUM`` ...).

    ``c10d::`` ops name a reduction by its lower-case name (``"sum"``); :meth:`parse`
    accepts either spelling.
    """

    SUM = "sum"
    AVG = "avg"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    BAND = "band"
    BOR = "bor"
    BXOR = "bxor"

    def __repr__(self) -> str:
        return f"<ReduceOp.{self.name}>"

    __str__ = __repr__

    @classmethod
    def parse(cls, op, where: str) -> ReduceOp:
        """``op`` (a ReduceOp or its c10d name such as ``"sum"``) as a ReduceOp; ``ValueError`` naming ``where``."""
        if isinstance(op, cls):
            return op
        if isinstance(op, str):
            try:
                return cls(op.lower())
            except ValueError:
                pass
        choices = ", ".join(repr(m.value) for m in cls)
        raise ValueError(f"{where}: unknown reduce op {op!r}; expected a ReduceOp or one of {choices}")
