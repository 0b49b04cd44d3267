"""Generators: the (seed, offset) state behind opweave's random ops.

The random prims (:mod:`opweave.prims.random`) are pure functions of a ``(seed, offset)``
pair (Philox4x32-10, specified in :mod:`opweave._philox`). A :class:`Generator` holds such
a pair for one device and hands out disjoint ranges of counter blocks: a canonical random
op reads the generator's current ``(seed, offset)``, passes them to its prim and advances
the offset by the number of counter blocks the prim consumes (:func:`philox_blocks`).

The advance rule (the same on every backend, so that a seed gives the same values
everywhere)
    A call that draws ``n`` values from one prim advances the offset by

    =========================================  ====================
    prim (dtype of the values)                 counter blocks
    =========================================  ====================
    ``random_bits``                            ``ceil(n / 4)``
    ``uniform`` / ``bernoulli``, 16/32-bit     ``ceil(n / 4)``
    ``uniform`` / ``bernoulli``, float64       ``ceil(n / 2)``
    ``normal``                                 ``ceil(n / 2)``
    ``randint``, ``randperm``                  ``ceil(n / 2)``
    =========================================  ====================

    (``bernoulli`` counts the elements and dtype of its probability tensor, complex
    values count as two real values.) An op that calls several prims advances by the sum,
    in call order. A call drawing nothing (0 elements) does not move the generator. The
    offset is taken modulo 2**64. Ops on the meta device draw nothing: they neither read
    nor advance a generator.

State
    ``get_state()`` is a CPU ``uint8`` tensor of 16 bytes: the seed as a little-endian
    uint64 followed by the offset as a little-endian uint64. ``set_state`` accepts
    exactly that.

Default generators
    There is one default generator per device (device type plus index; a missing index
    means 0), created lazily on first use with the current *global seed*: 67280421310721
    (PyTorch's default) until :func:`manual_seed` or :func:`seed` sets another. Those two
    re-seed every default generator that exists and set the global seed for the ones
    created later. Generators are shared by all threads; drawing from one is atomic
    (a lock guards the offset advance).
"""

from __future__ import annotations

import contextlib
import operator
import os
import threading
from collections.abc import Iterable, Iterator

from . import _dtype
from ._device import as_device
from ._device import device as _device_cls
from ._tensor import Tensor

DEFAULT_SEED = 67280421310721  # PyTorch's default_rng_seed_val
_MASK64 = (1 << 64) - 1
_UNINDEXED = frozenset({"cpu", "meta"})
_BLOCK_WORDS = {"random_bits": 4, "uniform": 4, "bernoulli": 4, "normal": 2, "randint": 2, "randperm": 2}


def _seed_value(value, where: str) -> int:
    """A seed argument as an unsigned 64-bit int (negative seeds wrap, as in PyTorch)."""
    if isinstance(value, bool):
        raise TypeError(f"{where}: seed must be an int, not bool")
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{where}: seed must be an int, not {type(value).__name__}") from None
    if not -(1 << 63) <= value <= _MASK64:
        raise ValueError(f"{where}: seed must be in [-2**63, 2**64), got {value}")
    return value & _MASK64


def _nondeterministic_seed() -> int:
    """64 bits from the operating system's entropy source."""
    return int.from_bytes(os.urandom(8), "little")


def _normalise(dev) -> _device_cls:
    """A device as generators key it: ``cpu``/``meta`` without index, others with one (0 if missing)."""
    dev = as_device(dev)
    if dev.type in _UNINDEXED:
        return _device_cls(dev.type)
    return _device_cls(dev.type, dev.index or 0)


class Generator:
    """A counter-based (Philox4x32-10) random generator for one device: a seed and an offset.

    ``Generator(device="cpu")`` starts at seed 67280421310721 and offset 0. Pass it as the
    ``generator=`` argument of a random op to draw from it instead of the device's default
    generator; it must be on the op's device type (RuntimeError otherwise), except for
    ops on the meta device, which draw nothing.
    """

    __slots__ = ("device", "_seed", "_offset", "_lock")

    def __init__(self, device: _device_cls | str | int | None = "cpu") -> None:
        from . import _backends

        dev = as_device(device) if device is not None else _device_cls("cpu")
        _backends.ensure_loaded(dev.type, "Generator")
        self.device = dev
        self._seed = DEFAULT_SEED
        self._offset = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<opweave.Generator device={self.device} seed={self._seed} offset={self._offset}>"

    def manual_seed(self, seed: int) -> Generator:
        """Set the seed (an int in [-2**63, 2**64); negatives wrap to uint64) and reset the offset; returns self."""
        value = _seed_value(seed, "Generator.manual_seed")
        with self._lock:
            self._seed, self._offset = value, 0
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy (offset reset to 0) and return the new seed."""
        value = _nondeterministic_seed()
        with self._lock:
            self._seed, self._offset = value, 0
        return value

    def initial_seed(self) -> int:
        """The seed last set (by ``manual_seed``, ``seed`` or ``set_state``), as an unsigned 64-bit int."""
        return self._seed

    def get_offset(self) -> int:
        """The current offset: the index of the next Philox counter block this generator hands out."""
        return self._offset

    def set_offset(self, offset: int) -> Generator:
        """Move to counter block ``offset`` (0 <= offset < 2**64), keeping the seed; returns self."""
        if isinstance(offset, bool) or not hasattr(offset, "__index__"):
            raise TypeError(f"Generator.set_offset: offset must be an int, not {type(offset).__name__}")
        value = operator.index(offset)
        if not 0 <= value <= _MASK64:
            raise ValueError(f"Generator.set_offset: offset must be in [0, 2**64), got {value}")
        with self._lock:
            self._offset = value
        return self

    def get_state(self) -> Tensor:
        """The state as a CPU uint8 tensor of 16 bytes: seed then offset, each a little-endian uint64."""
        import numpy as np

        from ._factories import from_numpy

        with self._lock:
            raw = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
        return from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        """Restore a state returned by ``get_state`` (a CPU uint8 tensor of 16 bytes); returns self."""
        seed, offset = _read_state(new_state, "Generator.set_state")
        with self._lock:
            self._seed, self._offset = seed, offset
        return self

    def __reduce__(self):
        """Pickle and ``copy.deepcopy`` as (device, seed, offset): the copy draws what the original would."""
        return _rebuild_generator, (str(self.device), self._seed, self._offset)

    def _advance(self, blocks: int) -> tuple[int, int]:
        """Atomically return the current ``(seed, offset)`` and move the offset ``blocks`` ahead."""
        with self._lock:
            taken = (self._seed, self._offset)
            self._offset = (self._offset + blocks) & _MASK64
        return taken

    def _restore(self, seed: int, offset: int) -> None:
        with self._lock:
            self._seed, self._offset = seed, offset


def _rebuild_generator(device: str, seed: int, offset: int) -> Generator:
    """A generator on ``device`` at ``(seed, offset)`` (unpickling)."""
    gen = Generator(device)
    gen._restore(seed, offset)
    return gen


def _read_state(state, where: str) -> tuple[int, int]:
    """``(seed, offset)`` from a 16-byte CPU uint8 state tensor; TypeError/ValueError otherwise."""
    from . import _dtype

    if not isinstance(state, Tensor):
        raise TypeError(f"{where}: the state must be a Tensor, not {type(state).__name__}")
    if state.dtype is not _dtype.uint8 or state.device.type != "cpu":
        raise TypeError(f"{where}: the state must be a CPU uint8 tensor, got {state.dtype.name} on {state.device}")
    if state.numel() != 16:
        raise ValueError(f"{where}: the state must have 16 bytes (seed and offset), got {state.numel()}")
    raw = bytes(bytearray(int(v) for v in state.reshape(-1).tolist()))
    return int.from_bytes(raw[:8], "little"), int.from_bytes(raw[8:], "little")


# -- default generators -------------------------------------------------------------------

_defaults: dict[_device_cls, Generator] = {}
_global_seed = DEFAULT_SEED
_lock = threading.Lock()


def default_generator(device: _device_cls | str | int = "cpu") -> Generator:
    """The default generator of ``device`` (created on first use, seeded with the global seed)."""
    dev = _normalise(device if device is not None else "cpu")
    gen = _defaults.get(dev)
    if gen is not None:
        return gen
    from . import _backends

    _backends.ensure_loaded(dev.type, "default_generator")
    with _lock:
        gen = _defaults.get(dev)
        if gen is None:
            gen = Generator(dev)
            gen._seed = _global_seed
            _defaults[dev] = gen
    return gen


def manual_seed(seed: int) -> Generator:
    """Seed every device's default generator (also those created later); returns the CPU one."""
    global _global_seed
    value = _seed_value(seed, "manual_seed")
    cpu = default_generator("cpu")
    with _lock:
        _global_seed = value
        for gen in _defaults.values():
            gen._restore(value, 0)
    return cpu


def seed() -> int:
    """Seed every default generator with one non-deterministic 64-bit seed and return it."""
    value = _nondeterministic_seed()
    manual_seed(value)
    return value


def initial_seed() -> int:
    """The initial seed of the CPU default generator."""
    return default_generator("cpu").initial_seed()


def get_rng_state() -> Tensor:
    """The CPU default generator's state (a 16-byte uint8 tensor: seed and offset, little-endian)."""
    return default_generator("cpu").get_state()


def set_rng_state(new_state: Tensor) -> None:
    """Restore the CPU default generator's state from :func:`get_rng_state`'s tensor."""
    default_generator("cpu").set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices: Iterable[_device_cls | str | int] | None = None, enabled: bool = True) -> Iterator[None]:
    """Inside the block, random ops may use the default generators freely; on exit their states return.

    ``devices=None`` forks every default generator (and the global seed; default generators
    first created inside the block are reset to what they would have been had they been
    created after it); otherwise the CPU generator and those of ``devices`` (device-likes).
    ``enabled=False`` makes it a no-op. States are restored on exceptions too.
    """
    global _global_seed
    if not enabled:
        yield
        return
    if devices is None:
        gens = None
    else:
        if isinstance(devices, (str, _device_cls)):
            devices = [devices]
        gens = [default_generator("cpu")] + [default_generator(d) for d in devices]
    with _lock:
        saved_seed = _global_seed
        if gens is None:
            gens = list(_defaults.values())
        saved = [(g, g._seed, g._offset) for g in gens]
        existing = set(_defaults)
    try:
        yield
    finally:
        with _lock:
            for gen, s, o in saved:
                gen._restore(s, o)
            if devices is None:
                _global_seed = saved_seed
                for dev, gen in _defaults.items():
                    if dev not in existing:
                        gen._restore(saved_seed, 0)


# -- what canonical ops use -------------------------------------------------------------------


def philox_blocks(prim: str, numel: int, dtype: _dtype.dtype | None = None) -> int:
    """Counter blocks one call of random prim ``prim`` drawing ``numel`` values consumes (module docstring)."""
    from . import _dtype

    per_block = _BLOCK_WORDS[prim]
    if prim in ("uniform", "bernoulli") and dtype is _dtype.float64:
        per_block = 2
    return -(-numel // per_block)


def claim(op: str, generator: Generator | None, device: _device_cls, blocks: int) -> tuple[int, int]:
    """The ``(seed, offset)`` an op on ``device`` passes to its prims; advances the generator by ``blocks``.

    ``generator`` is the op's ``generator=`` argument (None: ``device``'s default). TypeError
    if it is not a Generator, RuntimeError if it is on another device type. On the meta
    device nothing is drawn: returns ``(0, 0)``.
    """
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{op}(): argument 'generator' must be Generator, not {type(generator).__name__}")
    if device.type == "meta":
        return 0, 0
    if generator is None:
        generator = default_generator(device)
    elif generator.device.type != device.type:
        raise RuntimeError(
            f"{op}: expected a generator for device type '{device.type}' (the op runs on {device}), "
            f"but got a generator on '{generator.device}'"
        )
    return generator._advance(blocks)
