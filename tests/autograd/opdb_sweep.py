"""gradcheck over the conformance op database: the helper the sweep test and ``scripts/`` share.

For every canonical functional op of the catalog whose entry has a sample with floating
tensors, the first small sample (every tensor at most ``MAX_NUMEL`` elements) is built in
float64 (complex128 for complex samples) on the CPU; its floating tensors require grad
and ``opweave.autograd.gradcheck`` compares the op's gradients with finite differences.
The check itself is the conformance suite's (``opweave_conformance.gradients``), which
runs it on any backend.
"""

from __future__ import annotations

import opweave as ow
from opweave_conformance.gradients import MAX_NUMEL, NOT_CHECKED, gradcheck_op

__all__ = ["EXCEPTIONS", "MAX_NUMEL", "candidates", "check"]

#: Ops left out of the sweep, by reason (base names match every overload; full names one overload).
EXCEPTIONS = NOT_CHECKED


def candidates() -> list[str]:
    """Canonical functional ops of the catalog (no in-place or out= variants; the c10d:: collectives need a
    process group: tests/distributed checks them)."""
    found = []
    for op in ow.ops.catalog():
        if op.kind != "canonical" or op.schema.mutated_arguments or op.name.startswith("quantized::"):
            continue
        if op.schema.namespace == "c10d":
            continue
        found.append(op.name)
    return found


def check(name: str) -> tuple[str, str]:
    """``("pass" | "skip" | "fail", detail)`` for the op ``name`` (the first sample variant that passes)."""
    return gradcheck_op(name)
