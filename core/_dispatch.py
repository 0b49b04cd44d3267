"""The dispatcher: from a key set to a kernel.

A call's key set is the OR of its tensor arguments' keys, plus the thread's
included keys, minus its excluded keys (computed in the generated entry point,
see ``_binding``). The highest layer picks the slot; within it the backend bit
picks the kernel. For one (op, key set) the choice is resolved once and cached;
any registration clears the caches. ``explain`` replays the resolution in
words.

Resolution of one slot (layer L, backend B), first match wins:

1. a kernel registered at (L, B), then one registered at L for every backend;
2. at Dense: the op's CompositeExplicit kernel;
3. the backend's boxed fallback for L, then L's fallback for every backend;
4. the op's CompositeImplicit decomposition;
   then, for a prim on a backend that opted in, the CPU fallback (``_fallback``);
5. a layer that falls through (Autocast, Python, ...) is skipped: go to the next layer;
6. otherwise ``NotImplementedError`` naming the op, the key and the backends that have it.

Prims run their meta function before the backend kernel, so every backend
validates inputs identically. In deterministic mode (a mode bit of the key set,
so it is part of the cache key) a kernel registered as deterministic for the
slot is preferred; a nondeterministic one raises, or warns with ``warn_only``.
"""

from __future__ import annotations

import contextlib

from . import _binding, _fallback, _keys
from ._keys import LAYER_BITS, Layer

_FALLTHROUGH_LAYERS = {Layer.Autograd, Layer.Autocast, Layer.Trace, Layer.Python}
_fallbacks: dict[tuple, object] = {}  # (layer, backend or None) -> Kernel taking (op, [keyset,] *args)
_ops_with_cache: list = []


def make_entry(op):
    """Create the generated entry point of ``op`` (see ``_binding``)."""
    _ops_with_cache.append(op)
    return _binding.make_entry(op, dispatch, factory_keys)


def factory_keys(op, args) -> int:
    """Key set for a call without tensor arguments: from its ``device`` argument."""
    from . import _backends
    from ._device import as_device, get_default_device

    position = op._device_position
    if position is None:
        names = [a.name for a in op.schema.arguments]
        position = op._device_position = names.index("device") if "device" in names else -1
    value = args[position] if position >= 0 else None
    dev = as_device(value) if value is not None else get_default_device()
    _backends.ensure_loaded(dev.type, op.name)
    return _keys.layer_bit(Layer.Dense) | _keys.backend_bit(dev.type)


def dispatch(op, keyset: int, args: tuple):
    """Slow path of a call: validate devices, resolve and cache the kernel, run it."""
    backends = keyset >> LAYER_BITS
    if backends & (backends - 1):
        keyset = _mixed_device_keyset(op, keyset, args)
        return _resolve(op, keyset)[0](*args)
    kernel = _resolve(op, keyset)[0]
    op._cache[keyset] = kernel
    return kernel(*args)


def call_positional(op, args: tuple):
    """Run ``op`` on already-bound arguments (every argument positional, in schema order)."""
    from ._state import local
    from ._tensor import Tensor

    keyset = 0
    for value in args:
        if isinstance(value, Tensor):
            keyset |= value._keys
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, Tensor):
                    keyset |= item._keys
    if not keyset:
        keyset = factory_keys(op, args)
    state = local()
    keyset = (keyset | state.included) & ~state.excluded
    kernel = op._cache.get(keyset)
    if kernel is None:
        return dispatch(op, keyset, args)
    return kernel(*args)


def dispatch_with_keyset(op, keyset: int, args: tuple):
    """Run ``op`` for an explicit key set (redispatch from a layer kernel)."""
    backends = keyset >> LAYER_BITS
    if backends & (backends - 1):
        keyset = _mixed_device_keyset(op, keyset, args)
    kernel = op._cache.get(keyset)
    if kernel is None:
        kernel = _resolve(op, keyset)[0]
        if not (backends & (backends - 1)):
            op._cache[keyset] = kernel
    return kernel(*args)


def _mixed_device_keyset(op, keyset: int, args: tuple) -> int:
    """Drop CPU 0-dim tensors (and wrapped scalars) from a multi-device key set, or raise."""
    from ._tensor import Tensor

    devices, kept = set(), 0
    for value in _tensor_args(args):
        if isinstance(value, Tensor) and not (value._device.type == "cpu" and not value._shape):
            devices.add(str(value._device))
            kept |= value._keys
    kept_backends = kept >> LAYER_BITS
    if len(devices) > 1 or kept_backends & (kept_backends - 1):
        raise RuntimeError(
            f"{op.name}: expected all tensors to be on the same device, but found tensors on "
            f"{', '.join(sorted(devices))} (only CPU 0-dim tensors and Python scalars may be mixed in)"
        )
    backend_mask = ~((1 << LAYER_BITS) - 1)
    return (keyset & ~backend_mask) | (kept & backend_mask) if kept else keyset


def _tensor_args(args):
    for value in args:
        if isinstance(value, (list, tuple)):
            yield from value
        else:
            yield value


def _resolve(op, keyset: int):
    """Pick the kernel for ``keyset``; returns ``(callable, reasons)``."""
    reasons = [f"key set {_keys.format_keyset(keyset)}"]
    backend = _keys.highest_backend(keyset)
    layers = keyset & _keys.LAYER_MASK
    while layers:
        layer = Layer(layers.bit_length() - 1)
        found = _slot(op, layer, backend, keyset)
        if found is not None:
            fn, why = found
            reasons.append(why)
            return fn, reasons
        if layer in _FALLTHROUGH_LAYERS:
            reasons.append(f"{layer.name}: no kernel for this op, falls through")
            layers &= ~(1 << layer)
            continue
        break
    else:
        layer = Layer.Dense
    raise NotImplementedError(_missing_message(op, layer, backend))


def _slot(op, layer: Layer, backend: str | None, keyset: int):
    """The kernel for one (layer, backend) slot and the reason, or None."""
    kernel = op._kernels.get((layer, backend)) or op._kernels.get((layer, None))
    note = "" if kernel is None or kernel.deterministic else " (registered nondeterministic)"
    if kernel is not None and keyset & _keys.MODE_DETERMINISTIC and not kernel.deterministic:
        kernel = _deterministic_alternative(op, layer, backend, kernel)
        note = " (its deterministic alternative)"
    if kernel is not None:
        where = backend if (layer, backend) in op._kernels else "every backend"
        return _finish(op, kernel, layer, keyset), f"{layer.name}×{where}: kernel from {kernel.source}{note}"
    if layer is Layer.Dense and op._composite_explicit is not None:
        k = op._composite_explicit
        if keyset & _keys.MODE_DETERMINISTIC and not k.deterministic:
            k = _deterministic_alternative(op, layer, backend, k)
        return _finish(op, k, layer, keyset), f"Dense×{backend}: CompositeExplicit kernel from {k.source}"
    fallback = _fallbacks.get((layer, backend)) or _fallbacks.get((layer, None))
    if fallback is not None:
        fn = fallback.fn
        if layer is Layer.Dense:

            def boxed(*args, _op=op, _fn=fn):
                return _fn(_op, *args)

        else:

            def boxed(*args, _op=op, _fn=fn, _keyset=keyset):
                return _fn(_op, _keyset, *args)

        where = backend if (layer, backend) in _fallbacks else "every backend"
        return boxed, f"{layer.name}×{where}: boxed fallback from {fallback.source}"
    if op.decomposition is not None and layer in (Layer.Dense, Layer.Quantized):
        return op.decomposition, f"{layer.name}×{backend}: CompositeImplicit decomposition"
    cpu = _fallback.kernel_for(op, backend) if layer is Layer.Dense else None
    if cpu is not None:
        return _finish(op, cpu, layer, keyset), f"Dense×{backend}: CPU fallback (the CPU kernel, with copies)"
    return None


def _deterministic_alternative(op, layer: Layer, backend, kernel):
    """In deterministic mode: the slot's deterministic kernel, or raise/warn about ``kernel``."""
    alternative = op._deterministic_kernels.get((layer, backend)) or op._deterministic_kernels.get((layer, None))
    if alternative is not None:
        return alternative
    from ._state import local

    message = (
        f"{op.name} does not have a deterministic implementation on {backend}, but you set "
        "'use_deterministic_algorithms(True)'"
    )
    if local().deterministic_warn_only:
        return _warning_kernel(kernel, message)
    raise RuntimeError(message)


def _warning_kernel(kernel, message: str):
    """``kernel`` wrapped to warn on every call (the resolved kernel is cached, so warn at call time)."""
    import warnings

    from ._ops import Kernel

    fn = kernel.fn

    def warn_then_run(*args):
        warnings.warn(message, UserWarning, stacklevel=3)
        return fn(*args)

    return Kernel(warn_then_run, kernel.source, False)


def _finish(op, kernel, layer: Layer, keyset: int):
    """Wrap a kernel for calling: prims validate with their meta function first."""
    fn = kernel.fn
    if layer is not Layer.Dense:
        return lambda *args: fn(keyset, *args)
    if op.kind == "prim" and op.meta is not None and op.meta is not fn:
        meta = op.meta

        def checked(*args):
            meta(*args)
            return fn(*args)

        return checked
    return fn


def _missing_message(op, layer: Layer, backend: str | None) -> str:
    having = sorted({b for (lay, b) in op._kernels if b is not None and lay is Layer.Dense})
    extra = f"; backends with a kernel: {', '.join(having)}" if having else ""
    return f"{op.name}: no kernel for key {layer.name}×{backend} (no backend kernel, fallback or decomposition){extra}"


def register_kernel(op, layer: Layer, backend: str | None, fn, source: str, deterministic=True):
    """Register ``fn`` for ``op`` at (layer, backend); ``backend=None`` means every backend."""
    if backend is not None:
        _keys.backend_bit(backend)
    op._kernels[(layer, backend)] = _make_kernel(fn, source, deterministic)
    invalidate()


def register_deterministic_kernel(op, layer: Layer, backend: str | None, fn, source: str):
    """Register the kernel deterministic mode uses for (layer, backend) instead of a nondeterministic one."""
    op._deterministic_kernels[(layer, backend)] = _make_kernel(fn, source, True)
    invalidate()


@contextlib.contextmanager
def registered(op, fn, *, backend: str | None, layer: Layer = Layer.Dense, source: str = "override"):
    """Register ``fn`` for ``op`` at (layer, backend) inside a ``with`` block; the previous kernel returns after."""
    key = (layer, backend)
    previous = op._kernels.get(key)
    register_kernel(op, layer, backend, fn, source)
    try:
        yield op
    finally:
        if previous is None:
            op._kernels.pop(key, None)
        else:
            op._kernels[key] = previous
        invalidate()


def register_composite_explicit(op, fn, source: str, deterministic=True):
    """Register one kernel used at Dense by every backend without its own."""
    op._composite_explicit = _make_kernel(fn, source, deterministic)
    invalidate()


def register_fallback(layer: Layer, backend: str | None, fn, source: str):
    """Register a boxed kernel for every op at (layer, backend); ``backend=None``: every backend.

    At Dense it is called as ``fn(op, *args)``; at other layers as ``fn(op, keyset, *args)``
    so that it can redispatch below itself.
    """
    _fallbacks[(layer, backend)] = _make_kernel(fn, source, True)
    invalidate()


def _make_kernel(fn, source, deterministic):
    from ._ops import Kernel

    return Kernel(fn, source, deterministic)


def invalidate():
    """Forget every resolved kernel (after any registration)."""
    for op in _ops_with_cache:
        op._cache.clear()


class Explanation:
    """What ``explain`` found: the key set, the chosen kernel and the reasons."""

    def __init__(self, op, keyset: int, kernel, reasons):
        self.op, self.keyset, self.kernel, self.reasons = op, keyset, kernel, reasons

    @property
    def nondeterministic(self) -> bool:
        """Whether the chosen kernel is registered ``deterministic=False`` (results may differ bitwise)."""
        return any(r.endswith("(registered nondeterministic)") for r in self.reasons)

    def __str__(self):
        return f"{self.op.name}\n  " + "\n  ".join(self.reasons)

    __repr__ = __str__


def explain(op, *args, **kwargs) -> Explanation:
    """Say which key and kernel a call of ``op`` with these arguments would take, and why."""
    from ._ops import OpPacket, _binds

    if isinstance(op, OpPacket):
        candidates = [o for o in op.overloads.values() if _binds(o, args, kwargs)]
        if not candidates:
            raise TypeError(f"explain: no overload of {op.name} matches these arguments")
        op = candidates[0]
    captured = {}

    def capture(_op, keyset, bound):
        captured["keyset"], captured["args"] = keyset, bound

    _binding.make_entry(op, capture, factory_keys, cache={})(*args, **kwargs)
    keyset, bound = captured["keyset"], captured["args"]
    backends = keyset >> LAYER_BITS
    if backends & (backends - 1):
        keyset = _mixed_device_keyset(op, keyset, bound)
    kernel, reasons = _resolve(op, keyset)
    return Explanation(op, keyset, kernel, reasons)
