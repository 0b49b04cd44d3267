"""The Dispatcher: the one object that owns every registration table and picks kernels.

Tables (all here, nowhere else):

- kernels per (op, layer, backend) — ``backend=None`` means every backend;
- deterministic alternatives per (op, layer, backend);
- CompositeExplicit kernels per op;
- boxed fallbacks per (layer, backend);
- autocast policy rules per device type;
- the backend bits (``_keys.BITS``) and the operator catalog (``_ops``).

Each table entry is a stack: a registration pushes a :class:`Kernel` and returns a
:class:`Registration` whose ``remove()`` takes exactly that kernel out again (what
``opweave.library.Library`` does when it is closed); the newest kernel wins.

A call's kernel is resolved once per (op, key set) and kept in the op's cache (a
plain dict the generated entry point reads, see ``_binding``). A registration for
one op clears that op's cache only; fallbacks and global modes clear every cache.

Resolution of one (layer L, backend B) slot yields its candidates in order:

1. the kernel registered at (L, B), then the one at L for every backend; at Dense, B's own kernel
   of a canonical op that has a decomposition (a direct kernel standing in for it) steps aside
   while another source's Dense kernel of any prim on B is in force (see ``_replaced_prims``);
2. at Dense: the op's CompositeExplicit kernel;
3. B's boxed fallback for L, then L's fallback for every backend;
4. at Dense and Quantized: the op's CompositeImplicit decomposition;
5. at Dense, for a prim on a backend that opted in, or whose own kernel may decline:
   the CPU fallback (``_fallback``).

Layers that fall through (Autocast, Python, ...) continue with the next layer. A
kernel that raises :class:`Decline` hands the call to the next candidate; when no
candidate is left, ``NotImplementedError`` names the op, the key and the reasons.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from . import _backends, _fallback, _kernel_check, _keys, _plans
from ._keys import LAYER_BITS, Layer
from ._state import local
from ._tensor import Tensor

FALLTHROUGH_LAYERS = frozenset({Layer.Autograd, Layer.Autocast, Layer.Trace, Layer.Python})


class Decline(Exception):  # noqa: N818 - PyTorch-style short name; it is a signal, not an error
    """Raised by a kernel for a case it does not handle: the dispatcher runs the next candidate."""


@dataclass(frozen=True, eq=False)
class Kernel:
    """One registered kernel and where it came from (shown by ``explain``)."""

    fn: object
    source: str  # the library or plugin that registered it ("core" for the core)
    deterministic: bool = True


class Registration:
    """The handle of one registration; ``remove()`` undoes it (idempotent)."""

    __slots__ = ("_dispatcher", "_table", "_key", "kernel", "_op")

    def __init__(self, dispatcher, table: dict, key, kernel: Kernel, op):
        self._dispatcher, self._table, self._key, self.kernel, self._op = dispatcher, table, key, kernel, op

    def remove(self) -> None:
        """Take this kernel out of its table (the one registered before it applies again)."""
        stack = self._table.get(self._key)
        if stack is None:
            return
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is self.kernel:
                del stack[i]
                break
        else:
            return
        if not stack:
            del self._table[self._key]
        if self._op is None or self._dispatcher.replaces_prim(self._op, self._key, self.kernel):
            self._dispatcher.invalidate()
        else:
            self._dispatcher.invalidate(self._op)


class Dispatcher:
    """Every registration table of opweave and the resolution of calls against them."""

    def __init__(self):
        self.kernels: dict = {}  # op -> {(layer, backend or None): [Kernel, ...]}
        self.deterministic: dict = {}  # op -> {(layer, backend or None): [Kernel, ...]}
        self.composite_explicit: dict = {}  # op -> {None: [Kernel, ...]}
        self.composite_implicit: dict = {}  # op -> {None: [Kernel, ...]} (over the op's own decomposition)
        self.fallbacks: dict = {}  # (layer, backend or None) -> [Kernel, ...]
        self.autocast_rules: dict = {}  # device type -> [(op names, category or None, source), ...]
        self.declines: dict = {}  # (op name, key set) -> the last decline's reason (for explain)
        self.ops: dict = {}  # qualified name -> OpOverload (the catalog; filled by ``_ops``)
        self.bits = _keys.BITS
        self.generation = 0  # bumped by restore(): derived state (autocast kernels) is recomputed
        self.plan_generation = 0  # bumped by every change of a table: per-signature plans are dropped
        self._caches: dict = {}  # op -> its cache dict (key set -> callable)
        self._replaced: tuple = (-1, {})  # (plan_generation, {backend: whether a prim kernel is replaced})
        self._undefine = self.forget  # removes an op from the catalog's namespaces too, once ``_ops`` provides it

    # -- caches ---------------------------------------------------------------------------------

    def cache_for(self, op) -> dict:
        """The dict of resolved kernels of ``op`` (created on first request; the entry point reads it)."""
        cache = self._caches.get(op)
        if cache is None:
            cache = self._caches[op] = {}
        return cache

    def invalidate(self, op=None) -> None:
        """Forget resolved kernels: of ``op`` only, or of every op (``op=None``); every plan is dropped."""
        self.plan_generation += 1  # a plan of any op may have called ``op``'s kernels
        if op is not None:
            cache = self._caches.get(op)
            if cache:
                cache.clear()
            return
        for cache in self._caches.values():
            cache.clear()

    # -- registration ---------------------------------------------------------------------------

    def _push(self, table: dict, key, kernel: Kernel, op) -> Registration:
        table.setdefault(key, []).append(kernel)
        self.invalidate(op)
        return Registration(self, table, key, kernel, op)

    def register_kernel(self, op, layer: Layer, backend, fn, source: str, deterministic=True) -> Registration:
        """Register ``fn`` for ``op`` at (layer, backend); ``backend=None`` means every backend."""
        if backend is not None:
            self.bits.bit(backend)
        kernel = Kernel(fn, source, deterministic)
        registration = self._push(self.kernels.setdefault(op, {}), (layer, backend), kernel, op)
        if self.replaces_prim(op, (layer, backend), kernel):
            self.invalidate()  # every direct kernel resolved on this backend steps aside now
        return registration

    def replaces_prim(self, op, key, kernel: Kernel) -> bool:
        """Whether ``kernel`` at ``key`` = (layer, backend) is a Dense prim kernel from another source than the
        core or the backend's own plugin (a user's re-registration)."""
        if type(key) is not tuple:  # a CompositeExplicit kernel
            return False
        layer, backend = key
        if layer is not Layer.Dense or getattr(op, "kind", None) != "prim" or kernel.source == "core":
            return False
        return backend is None or kernel.source != _backends.owner(backend)

    def register_deterministic(self, op, layer: Layer, backend, fn, source: str) -> Registration:
        """Register the kernel deterministic mode uses at (layer, backend) instead of a nondeterministic one."""
        return self._push(self.deterministic.setdefault(op, {}), (layer, backend), Kernel(fn, source, True), op)

    def register_composite_explicit(self, op, fn, source: str, deterministic=True) -> Registration:
        """Register one Dense kernel for ``op`` shared by every backend without its own."""
        table = self.composite_explicit.setdefault(op, {})
        return self._push(table, None, Kernel(fn, source, deterministic), op)

    def register_composite_implicit(self, op, fn, source: str) -> Registration:
        """Register a decomposition of ``op`` that replaces its own (CompositeImplicit) while registered."""
        return self._push(self.composite_implicit.setdefault(op, {}), None, Kernel(fn, source, True), op)

    def register_fallback(self, layer: Layer, backend, fn, source: str) -> Registration:
        """Register a boxed kernel for every op at (layer, backend) (see ``opweave.dispatch.register_fallback``)."""
        reg = self._push(self.fallbacks, (layer, backend), Kernel(fn, source, True), None)
        self.invalidate()
        return reg

    def add_autocast_rules(self, device_type: str, rules: list) -> None:
        """Append autocast policy rules for ``device_type`` (see ``_autocast.extend_policy``)."""
        self.autocast_rules.setdefault(device_type, []).extend(rules)

    def add_op(self, op) -> None:
        """Enter ``op`` in the catalog (``_ops`` defines it; ``ValueError`` if the name is taken)."""
        if op.name in self.ops:
            raise ValueError(f"operator {op.name} is defined twice")
        self.ops[op.name] = op

    def provide_undefine(self, undefine) -> None:
        """Declare how an op leaves the catalog (``_ops.undefine``: its namespace, then :meth:`forget`).

        The catalog sits above the dispatcher in the layer order; :meth:`restore` removes the ops
        defined since the snapshot through this function and does not import the catalog.
        """
        self._undefine = undefine

    def forget(self, op) -> None:
        """Drop ``op`` from the catalog and every table (see ``_ops.undefine``)."""
        self.ops.pop(op.name, None)
        for table in (self.kernels, self.deterministic, self.composite_explicit, self.composite_implicit, self._caches):
            table.pop(op, None)

    # -- reading the tables ---------------------------------------------------------------------

    def kernel(self, op, layer: Layer, backend) -> Kernel | None:
        """The kernel registered exactly at (layer, backend) for ``op`` (None: none)."""
        stack = self.kernels.get(op, {}).get((layer, backend))
        return stack[-1] if stack else None

    def registered(self, op) -> dict:
        """``{(layer, backend): Kernel}`` of every kernel in force for ``op`` (a copy)."""
        return {key: stack[-1] for key, stack in self.kernels.get(op, {}).items()}

    def composite_explicit_of(self, op) -> Kernel | None:
        """The CompositeExplicit kernel of ``op`` in force, or None."""
        stack = self.composite_explicit.get(op, {}).get(None)
        return stack[-1] if stack else None

    def fallback(self, layer: Layer, backend) -> Kernel | None:
        """The boxed fallback registered exactly at (layer, backend), or None."""
        stack = self.fallbacks.get((layer, backend))
        return stack[-1] if stack else None

    # -- snapshot / restore ---------------------------------------------------------------------

    def snapshot(self) -> dict:
        """A copy of every table (restore it with :meth:`restore`)."""

        def copy(table):
            return {op: {k: list(v) for k, v in slots.items()} for op, slots in table.items()}

        return {
            "kernels": copy(self.kernels),
            "deterministic": copy(self.deterministic),
            "composite_explicit": copy(self.composite_explicit),
            "composite_implicit": copy(self.composite_implicit),
            "fallbacks": {k: list(v) for k, v in self.fallbacks.items()},
            "autocast_rules": {k: list(v) for k, v in self.autocast_rules.items()},
            "ops": dict(self.ops),
            "bits": self.bits.snapshot(),
        }

    def restore(self, state: dict) -> None:
        """Put back every table as :meth:`snapshot` saw it; ops defined since are removed from the catalog."""
        for name in [n for n in self.ops if n not in state["ops"]]:
            self._undefine(self.ops[name])
        for attr in ("kernels", "deterministic", "composite_explicit", "composite_implicit"):
            table = getattr(self, attr)
            table.clear()
            table.update({op: {k: list(v) for k, v in slots.items()} for op, slots in state[attr].items()})
        self.fallbacks.clear()
        self.fallbacks.update({k: list(v) for k, v in state["fallbacks"].items()})
        self.autocast_rules.clear()
        self.autocast_rules.update({k: list(v) for k, v in state["autocast_rules"].items()})
        self.bits.restore(state["bits"])
        self.declines.clear()
        self.generation += 1
        self.invalidate()

    # -- resolution -----------------------------------------------------------------------------

    def candidates(self, op, keyset: int):
        """Yield ``(callable, reason)`` for every kernel that may run a call, in order of preference."""
        backend = _keys.highest_backend(keyset)
        layers = keyset & _keys.LAYER_MASK
        while layers:
            layer = Layer(layers.bit_length() - 1)
            yield from self._slot(op, layer, backend, keyset)
            if layer not in FALLTHROUGH_LAYERS:
                return
            layers &= ~(1 << layer)

    def resolve(self, op, keyset: int):
        """The kernel for ``keyset`` and the reasons; ``NotImplementedError`` if there is none."""
        reasons = [f"key set {_keys.format_keyset(keyset)}"]
        backend = _keys.highest_backend(keyset)
        layers = keyset & _keys.LAYER_MASK
        while layers:
            layer = Layer(layers.bit_length() - 1)
            for fn, why in self._slot(op, layer, backend, keyset):
                reasons.append(why)
                return fn, reasons
            if layer not in FALLTHROUGH_LAYERS:
                break
            reasons.append(f"{layer.name}: no kernel for this op, falls through")
            layers &= ~(1 << layer)
        raise NotImplementedError(self._missing_message(op, keyset))

    def _slot(self, op, layer: Layer, backend, keyset: int):
        table = self.kernels.get(op, {})
        deterministic = keyset & _keys.MODE_DETERMINISTIC
        own = False  # whether the backend has a kernel of its own here (its declines may reach the CPU)
        for key, where in (((layer, backend), backend), ((layer, None), "every backend")):
            stack = table.get(key)
            if stack:
                kernel = stack[-1]
                if key[1] is not None and self._steps_aside(op, layer, backend, kernel):
                    continue  # the decomposition runs, calling the re-registered prim
                own = key[1] is not None
                note = "" if kernel.deterministic else " (registered nondeterministic)"
                if deterministic and not kernel.deterministic:
                    kernel = self._deterministic_alternative(op, layer, backend, kernel)
                    note = " (its deterministic alternative)"
                why = f"{layer.name}×{where}: kernel from {kernel.source}{note}"
                yield self._finish(op, kernel, layer, keyset), why
                break
        if layer is Layer.Dense:
            k = self.composite_explicit_of(op)
            if k is not None:
                if deterministic and not k.deterministic:
                    k = self._deterministic_alternative(op, layer, backend, k)
                yield self._finish(op, k, layer, keyset), f"Dense×{backend}: CompositeExplicit kernel from {k.source}"
        for key, where in (((layer, backend), backend), ((layer, None), "every backend")):
            stack = self.fallbacks.get(key)
            if stack:
                why = f"{layer.name}×{where}: boxed fallback from {stack[-1].source}"
                yield _boxed(op, stack[-1].fn, layer, keyset), why
                break
        if layer in (Layer.Dense, Layer.Quantized):
            stack = self.composite_implicit.get(op, {}).get(None)
            if stack:
                yield stack[-1].fn, f"{layer.name}×{backend}: CompositeImplicit kernel from {stack[-1].source}"
            elif op.decomposition is not None:
                fn = op.decomposition
                if layer is Layer.Dense:
                    fn = _plans.planned(op, fn, keyset)
                yield fn, f"{layer.name}×{backend}: CompositeImplicit decomposition"
        if layer is Layer.Dense and op.kind == "prim":
            fb = _fallback.kernel_for(op, backend, lambda: self.kernel(op, Layer.Dense, "cpu"), self._copy_to, own)
            if fb is not None:
                why = f"Dense×{backend}: CPU fallback (the CPU kernel, with copies)"
                yield self._finish(op, fb, layer, keyset), why

    def _steps_aside(self, op, layer: Layer, backend, kernel: Kernel) -> bool:
        """Whether ``kernel``, the backend's own Dense kernel of a canonical op with a decomposition, stands in
        for prims of which another source's kernel is in force (it would bypass them)."""
        if layer is not Layer.Dense or op.kind == "prim" or op.decomposition is None or backend is None:
            return False
        return kernel.source == _backends.owner(backend) and self._replaced_prims(backend)

    def _replaced_prims(self, backend) -> bool:
        """Whether any prim's Dense kernel in force on ``backend`` replaces the core's or the backend's own."""
        generation, found = self._replaced
        if generation != self.plan_generation:
            found = {}
            self._replaced = (self.plan_generation, found)
        replaced = found.get(backend)
        if replaced is None:
            replaced = found[backend] = any(
                stack and self.replaces_prim(op, key, stack[-1])
                for op, table in self.kernels.items()
                if op.kind == "prim"
                for key in ((Layer.Dense, backend), (Layer.Dense, None))
                for stack in (table.get(key),)
            )
        return replaced

    def _deterministic_alternative(self, op, layer: Layer, backend, kernel: Kernel) -> Kernel:
        table = self.deterministic.get(op, {})
        stack = table.get((layer, backend)) or table.get((layer, None))
        if stack:
            return stack[-1]
        message = (
            f"{op.name} does not have a deterministic implementation on {backend}, but you set "
            "'use_deterministic_algorithms(True)'"
        )
        if local().deterministic_warn_only:
            return _warning_kernel(kernel, message)
        raise RuntimeError(message)

    def _copy_to(self, target, source) -> None:
        """``prims::copy_to``: how the CPU fallback writes a result back into a device tensor."""
        self.ops["prims::copy_to"](target, source)

    @staticmethod
    def _finish(op, kernel: Kernel, layer: Layer, keyset: int):
        """Wrap a kernel for calling: layer kernels get the key set; prims validate with their meta first."""
        fn = kernel.fn
        if layer is not Layer.Dense:
            return lambda *args: fn(keyset, *args)
        if op.kind == "prim" and op.meta is not None and op.meta is not fn:
            return _kernel_check.guard(op, fn, op.meta, _keys.highest_backend(keyset), kernel.source)
        return fn

    def _missing_message(self, op, keyset: int, declined=()) -> str:
        layers = keyset & _keys.LAYER_MASK
        layer = Layer.Dense
        while layers:
            layer = Layer(layers.bit_length() - 1)
            if layer not in FALLTHROUGH_LAYERS:
                break
            layers &= ~(1 << layer)
        else:
            layer = Layer.Dense
        backend = _keys.highest_backend(keyset)
        having = sorted({b for (lay, b) in self.kernels.get(op, {}) if b is not None and lay is Layer.Dense})
        extra = f"; backends with a kernel: {', '.join(having)}" if having else ""
        provider = _backends.owner(backend) if backend is not None else None
        if provider is not None and provider != "core":
            extra += f"; device type '{backend}' is provided by plugin '{provider}'"
        why = "".join(f"; {d}" for d in declined)
        return (
            f"{op.name}: no kernel for key {layer.name}×{backend} "
            f"(no backend kernel, fallback or decomposition){why}{extra}"
        )

    # -- calling --------------------------------------------------------------------------------

    def call(self, op, keyset: int, args: tuple):
        """Run ``op`` for ``keyset`` (the slow path: validate devices, resolve, cache, run)."""
        keyset, mixed = self._one_device(op, keyset, args)
        cache = self.cache_for(op)
        kernel = cache.get(keyset)
        if kernel is None:
            kernel = self.resolve(op, keyset)[0]
            if not mixed:
                cache[keyset] = kernel
        try:
            return kernel(*args)
        except Decline as exc:
            return self.declined(op, keyset, args, exc)

    def declined(self, op, keyset: int, args: tuple, exc: Decline):
        """The first candidate declined ``args``: run the next ones in order until one accepts."""
        keyset, mixed = self._one_device(op, keyset, args)
        cache = self.cache_for(op)
        chain = cache.get(-keyset - 1)  # (reason of the first candidate, the others), beside its cached kernel
        if chain is None:
            it = self.candidates(op, keyset)
            first = next(it, None)
            try:
                chain = (first and first[1], list(it))
            except RuntimeError:  # a later candidate cannot run in this mode: try them one by one
                it = self.candidates(op, keyset)
                first = next(it, None)
                chain = (first and first[1], it)
            else:
                if not mixed:
                    cache[-keyset - 1] = chain
        first_why, rest = chain
        reasons = [(first_why, str(exc))]  # kept as text: an exception would keep its frames' tensors alive
        for fn, why in rest:
            try:
                result = fn(*args)
            except Decline as again:
                reasons.append((why, str(again)))
                continue
            self.declines[(op.name, keyset)] = reasons
            return result
        self.declines[(op.name, keyset)] = reasons
        raise NotImplementedError(self._missing_message(op, keyset, describe_declines(reasons)))

    def _one_device(self, op, keyset: int, args: tuple) -> tuple[int, int]:
        """``keyset`` with CPU scalars dropped when it names several devices, and whether it still does.

        A call that mixes CPU 0-dim tensors into another device's call (``a - 2.0`` on a GPU) reduces to
        that device's key set, whose cached kernel it shares; only a key set that stays mixed is not cached.
        """
        backends = keyset >> LAYER_BITS
        if not backends & (backends - 1):
            return keyset, 0
        keyset = self.mixed_device_keyset(op, keyset, args)
        backends = keyset >> LAYER_BITS
        return keyset, backends & (backends - 1)

    @staticmethod
    def mixed_device_keyset(op, keyset: int, args: tuple) -> int:
        """Drop CPU 0-dim tensors (and wrapped scalars) from a multi-device key set, or raise."""
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


def describe_declines(reasons) -> list[str]:
    """``"<candidate> declined: <why>"`` for each (candidate, decline message) of a call."""
    return [f"{why} declined: {text}" if text else f"{why} declined" for why, text in reasons if why is not None]


def _tensor_args(args):
    for value in args:
        if isinstance(value, (list, tuple)):
            yield from value
        else:
            yield value


def _boxed(op, fn, layer: Layer, keyset: int):
    if layer is Layer.Dense:

        def boxed(*args):
            return fn(op, *args)

    else:

        def boxed(*args):
            return fn(op, keyset, *args)

    return boxed


def _warning_kernel(kernel: Kernel, message: str) -> Kernel:
    """``kernel`` wrapped to warn on every call (the resolved kernel is cached, so warn at call time)."""
    fn = kernel.fn

    def warn_then_run(*args):
        warnings.warn(message, UserWarning, stacklevel=3)
        return fn(*args)

    return Kernel(warn_then_run, kernel.source, False)


DISPATCHER = Dispatcher()
_plans.install(DISPATCHER, Decline)
DISPATCHER.register_fallback(Layer.Trace, None, _plans.trace_fallback, "core")
