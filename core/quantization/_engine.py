"""The quantized engine: which implementation runs quantized ops on the CPU (``opweave.backends.quantized``).

``"reference"`` (the core's dequantize → float → requantize kernels, every backend) is
always available. A plugin registers kernels at (Quantized, "cpu") and declares its
engine with :func:`register_engine`; its kernels ask :func:`get_engine` and fall back to
``opweave.quantization.reference`` when another engine is selected. Unless the user
picks one, the engine is the last available engine registered (``"x86"`` when its
plugin loaded and the CPU supports it), else ``"reference"``.

The environment variable ``OPWEAVE_QUANTIZED_ENGINE`` picks the engine at startup (e.g.
``reference`` to check the reference kernels while an engine plugin is installed).

Plugins that provide no device are imported lazily; reading the engine, the list of
engines, or running the first quantized op loads the discovered plugins once
(:func:`ensure_plugins_loaded`) so that they can register.
"""

from __future__ import annotations

import os
import threading

REFERENCE = "reference"

_engines: dict[str, tuple[bool, str | None]] = {REFERENCE: (True, None)}
_selected: str | None = None
_lock = threading.Lock()
plugins_loaded = False


def ensure_plugins_loaded() -> bool:
    """Import the discovered plugins once; True when this call loaded them (kernels may have changed)."""
    global plugins_loaded
    if plugins_loaded:
        return False
    with _lock:
        if plugins_loaded:
            return False
        plugins_loaded = True
    from .. import _plugins

    _plugins.load_if_autoload()
    return True


def register_engine(name: str, is_available: bool, reason: str | None = None) -> None:
    """Declare a quantized engine (called by plugins from ``opweave_register``); ``reason`` says why not available."""
    if not isinstance(name, str) or not name or name == REFERENCE:
        raise ValueError(f"register_engine: invalid engine name {name!r}")
    _engines[name] = (bool(is_available), None if is_available else (reason or "unavailable"))


def supported_engines() -> list[str]:
    """The engines that can be selected now, ``"reference"`` first, then in registration order."""
    ensure_plugins_loaded()
    return [name for name, (ok, _) in _engines.items() if ok]


def engine_status() -> dict[str, tuple[bool, str | None]]:
    """Every declared engine: ``name -> (available, reason when not)``."""
    ensure_plugins_loaded()
    return dict(_engines)


def get_engine() -> str:
    """The engine quantized ops use now (cheap: engines' kernels ask on every call)."""
    if _selected is not None:
        return _selected
    ensure_plugins_loaded()
    wanted = os.environ.get("OPWEAVE_QUANTIZED_ENGINE")
    if wanted:
        set_engine(wanted)
        return wanted
    return [name for name, (ok, _) in _engines.items() if ok][-1]


def set_engine(name: str) -> None:
    """Select the engine; RuntimeError names the reason when it is unknown or unavailable."""
    global _selected
    ensure_plugins_loaded()
    if name not in _engines:
        known = ", ".join(_engines)
        raise RuntimeError(f"quantized engine {name!r} is unknown (known engines: {known})")
    ok, reason = _engines[name]
    if not ok:
        raise RuntimeError(f"quantized engine {name!r} is not available: {reason}")
    _selected = name


def reset_engine() -> None:
    """Forget the user's choice: the default engine applies again."""
    global _selected
    _selected = None


class QuantizedFlags:
    """``opweave.backends.quantized``: ``engine`` (get/set) and ``supported_engines``, as torch.backends.quantized."""

    @property
    def engine(self) -> str:
        """The selected quantized engine (``"x86"`` or ``"reference"``)."""
        return get_engine()

    @engine.setter
    def engine(self, name: str) -> None:
        set_engine(name)

    @property
    def supported_engines(self) -> list[str]:
        """Engines that can be selected."""
        return supported_engines()

    def status(self) -> dict[str, tuple[bool, str | None]]:
        """Every declared engine with its availability and the reason when unavailable."""
        return engine_status()

    def __repr__(self):
        return f"<opweave.backends.quantized engine={self.engine!r} supported={self.supported_engines}>"


flags = QuantizedFlags()
