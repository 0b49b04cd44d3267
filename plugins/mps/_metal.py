"""Finding Metal: the PyObjC frameworks and the system's default GPU, or why there is none.

Everything Metal-specific the plugin calls goes through the module objects returned
here (PyObjC's ``Metal`` and ``MetalPerformanceShaders``), so the tests can hand the
runtime a recorded fake instead (``tests/mps/fake_metal.py``).
"""

from __future__ import annotations

import sys
import threading

_lock = threading.Lock()
_found: tuple | None = None  # (Metal module, MPS module or None, MTLDevice) or (None, None, reason)


def _load() -> tuple:
    if sys.platform != "darwin":
        return None, None, f"Metal requires macOS (this is {sys.platform})"
    try:
        import Metal
    except ImportError as exc:
        return None, None, f"pyobjc-framework-Metal is not installed ({exc}): pip install 'opweave[mps]'"
    try:
        import MetalPerformanceShaders as mps
    except ImportError:
        mps = None  # matrix products then run as generated kernels
    device = Metal.MTLCreateSystemDefaultDevice()
    if device is None:
        return None, None, "MTLCreateSystemDefaultDevice() found no Metal GPU"
    return Metal, mps, device


def found() -> tuple:
    """``(Metal, MetalPerformanceShaders or None, MTLDevice)``, or ``(None, None, reason)`` without Metal."""
    global _found
    if _found is None:
        with _lock:
            if _found is None:
                _found = _load()
    return _found


def unavailable_reason() -> str | None:
    """Why Metal cannot be used here (None when it can)."""
    metal, _, device = found()
    return device if metal is None else None
