"""``requires_grad=`` on the factory functions (PyTorch's Python argument parser adds it to every
op with TensorOptions; the schemas themselves do not carry it)."""

from __future__ import annotations

from .._ops import OpPacket


class FactoryFunction:
    """An ``opweave.<factory>`` function: the op packet plus a keyword-only ``requires_grad``."""

    def __init__(self, packet: OpPacket):
        self._packet = packet
        self.__name__ = self.__qualname__ = packet.name
        self.__doc__ = getattr(packet, "__doc__", None)

    def __call__(self, *args, requires_grad: bool = False, **kwargs):
        result = self._packet(*args, **kwargs)
        if requires_grad:
            if kwargs.get("out") is not None:
                raise RuntimeError(f"{self._packet.name}(): argument 'out' cannot be combined with requires_grad=True")
            result.requires_grad_(True)
        return result

    def __getattr__(self, name):
        return getattr(self._packet, name)

    def __repr__(self):
        return f"<opweave factory {self._packet.name}>"


def is_factory(packet: OpPacket) -> bool:
    """Whether some overload of ``packet`` takes TensorOptions (``pin_memory``)."""
    return any(any(a.name == "pin_memory" for a in overload.schema.arguments) for overload in packet.overloads.values())


def install(namespace: dict) -> None:
    """Wrap every factory packet in ``namespace`` (``opweave``) so that it accepts ``requires_grad``."""
    for name, value in list(namespace.items()):
        if isinstance(value, OpPacket) and is_factory(value):
            namespace[name] = FactoryFunction(value)
