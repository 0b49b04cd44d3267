"""The shared oneDNN binding (:mod:`opweave_onednn`) as the int8 kernels see it.

Everything is :mod:`opweave_onednn`'s, except that :func:`library` and :func:`availability` also
require int8 dot-product instructions (AVX512-VNNI, AVX-VNNI or AMX): without them the x86
engine is unavailable even where oneDNN loads.
"""

from __future__ import annotations

import opweave_onednn
from opweave_onednn import *  # noqa: F403
from opweave_onednn import Library, Unavailable, isa_has_int8_dot


def library() -> Library:
    """The loaded library; :class:`Unavailable` with the reason when it is missing or the CPU cannot run int8."""
    lib = opweave_onednn.library()
    if not isa_has_int8_dot(lib.isa):
        raise Unavailable(f"the CPU lacks AVX512-VNNI, AVX-VNNI and AMX (oneDNN reports ISA {lib.isa_name})")
    return lib


def availability() -> tuple[bool, str | None]:
    """``(True, None)`` when the int8 kernels can run, else ``(False, reason)``."""
    try:
        library()
    except Unavailable as exc:
        return False, str(exc)
    return True, None
