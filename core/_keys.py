"""Dispatch keys: ordered functionality layers times unordered backend bits.

A key set is a Python int. Its low ``LAYER_BITS`` bits are functionality
layers, higher bit = higher priority. The bits above are backends, one each,
handed out when a backend registers, so there is no fixed enum of devices and
no reserved "private use" slot: a vendor's device gets a bit like ours do.
A runtime key is one layer plus one backend, e.g. ``(Layer.Autocast, "cuda")``.
"""

from __future__ import annotations

import enum


class Layer(enum.IntEnum):
    """Functionality layers, lowest priority first (the value is the bit)."""

    Dense = 0
    Quantized = 1
    Autograd = 2  # opweave.autograd (docs/autograd.md)
    Autocast = 3
    Trace = 4  # planned
    Python = 5  # profiler and Python modes


LAYER_BITS = 8
LAYER_MASK = 0x3F  # bits 0-5: layers
MODE_DETERMINISTIC = 1 << 7  # a mode bit: not a layer, but part of the cache key
ALL_LAYERS = LAYER_MASK


class Alias(enum.Enum):
    """Registration-only keys that expand to many runtime keys."""

    CompositeImplicit = "CompositeImplicit"  # the op's decomposition; every backend
    CompositeExplicit = "CompositeExplicit"  # one kernel for every backend's Dense key


def layer_bit(layer: Layer) -> int:
    """The key-set bit of a functionality layer."""
    return 1 << layer


def layers_at_and_above(layer: Layer) -> int:
    """Mask of ``layer`` and every layer above it (what a layer masks to redispatch)."""
    return LAYER_MASK & ~((1 << layer) - 1)


class BackendBits:
    """The backend bits handed out so far (a table of the dispatcher, see ``_dispatcher``)."""

    def __init__(self):
        self.names: list[str] = []
        self.bits: dict[str, int] = {}

    def bit(self, device_type: str) -> int:
        """The key-set bit of a backend, allocated on first request."""
        bit = self.bits.get(device_type)
        if bit is None:
            bit = 1 << (LAYER_BITS + len(self.names))
            self.names.append(device_type)
            self.bits[device_type] = bit
        return bit

    def snapshot(self) -> tuple:
        """The allocated names (restore with :meth:`restore`)."""
        return tuple(self.names)

    def restore(self, names: tuple) -> None:
        """Forget bits allocated after ``names`` was taken (bits already allocated stay put)."""
        del self.names[len(names) :]
        for name in [n for n in self.bits if n not in names]:
            del self.bits[name]


BITS = BackendBits()
_backend_names = BITS.names


def backend_bit(device_type: str) -> int:
    """The key-set bit of a backend, allocated on first request."""
    bit = BITS.bits.get(device_type)
    return bit if bit is not None else BITS.bit(device_type)


def backend_names(keyset: int) -> list[str]:
    """Names of the backends whose bits are set in ``keyset``, in bit order."""
    bits = keyset >> LAYER_BITS
    return [name for i, name in enumerate(_backend_names) if bits >> i & 1]


def highest_backend(keyset: int) -> str | None:
    """The backend with the highest bit in ``keyset`` (None if there is none)."""
    bits = keyset >> LAYER_BITS
    return _backend_names[bits.bit_length() - 1] if bits else None


def highest_layer(keyset: int) -> Layer | None:
    """The highest-priority functionality layer set in ``keyset``."""
    bits = keyset & LAYER_MASK
    return Layer(bits.bit_length() - 1) if bits else None


def format_keyset(keyset: int) -> str:
    """Readable form, e.g. ``DispatchKeySet(Dense, Autocast | cpu)``."""
    layers = [layer.name for layer in Layer if keyset >> layer & 1]
    if keyset & MODE_DETERMINISTIC:
        layers.append("deterministic")
    return f"DispatchKeySet({', '.join(layers)} | {', '.join(backend_names(keyset))})"
