"""``opweave.library``: the one way to define operators and register kernels, modelled on ``torch.library``.

A :class:`Library` is a handle on registrations in one operator namespace::

    lib = opweave.library.Library("myops", "DEF")
    lib.define("scale(Tensor self, float factor) -> Tensor")
    lib.impl("scale", scale_cpu, "CPU")
    lib.impl("scale", scale_meta, "Meta")
    ...
    lib.close()  # every definition and registration made through ``lib`` is undone

Kinds: ``"DEF"`` owns a new namespace (a second DEF library for it is refused),
``"FRAGMENT"`` adds definitions to a namespace, ``"IMPL"`` only registers kernels.
The namespace ``"aten"`` is opweave's canonical ops, ``"prims"`` the prims,
``"quantized"`` the ``quantized::`` ops. A Library is also a context manager.

Dispatch keys (strings, as in PyTorch; case-insensitive for device names):

- a device type: ``"CPU"``/``"cpu"``, ``"Meta"``, ``"opencl"``, a plugin's ``"vnpu"``: the
  Dense kernel of that backend;
- ``"CompositeImplicitAutograd"`` (or ``"CompositeImplicit"``): a decomposition used by
  every backend that has no kernel of its own (the default for ``impl``);
- ``"CompositeExplicitAutograd"`` (or ``"CompositeExplicit"``): one Dense kernel shared
  by every backend without its own, ranked above the decomposition;
- a layer: ``"Autocast"``, ``"Quantized"``, ``"Python"``, ``"Autograd"``, ``"Dense"`` (every
  backend), optionally followed by a device type: ``"AutocastCPU"``, ``"QuantizedVNPU"``;
- a ``(Layer, device type or None)`` tuple (what ``opweave.backends.Registry`` uses).

A kernel at a layer other than Dense is called as ``fn(keyset, *args)`` when registered
``with_keyset=True`` and redispatches below itself with ``op.redispatch(keyset & ~mask, ...)``;
with ``with_keyset=False`` (the default) it runs with its layer and those above it excluded,
so calling the op again reaches the layers below.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _ops
from ._dispatcher import DISPATCHER, Registration
from ._keys import Layer, layers_at_and_above
from ._state import keys_excluded

__all__ = ["KINDS", "Library", "define", "dispatch_key", "impl"]

KINDS = ("DEF", "IMPL", "FRAGMENT")
_IMPLICIT = {"compositeimplicitautograd", "compositeimplicit"}
_EXPLICIT = {"compositeexplicitautograd", "compositeexplicit", "compositeexplicitautogradnonfunctional"}
_LAYERS = {layer.name.lower(): layer for layer in Layer}
_owners: dict[str, Library] = {}  # namespace -> the live DEF library that owns it

DispatchKey = str | tuple
# An operator: its overload, its packet (when it has one overload) or its name ("add.Tensor", "myns::foo").
OpName = "str | _ops.OpOverload | _ops.OpPacket"


def dispatch_key(key: DispatchKey) -> tuple[str, Layer | None, str | None]:
    """Parse a dispatch key into ``(kind, layer, backend)``; kind is "kernel", "implicit" or "explicit".

    ``ValueError`` for an empty or malformed key.
    """
    if isinstance(key, tuple):
        if len(key) != 2 or not isinstance(key[0], Layer) or not (key[1] is None or isinstance(key[1], str)):
            raise ValueError(f"dispatch key {key!r}: expected (Layer, device type or None)")
        return "kernel", key[0], key[1]
    if not isinstance(key, str) or not key:
        raise ValueError(f"dispatch key {key!r}: expected a non-empty string such as 'CPU' or 'Autocast'")
    low = key.lower()
    if low in _IMPLICIT:
        return "implicit", None, None
    if low in _EXPLICIT:
        return "explicit", None, None
    for name, layer in sorted(_LAYERS.items(), key=lambda item: -len(item[0])):
        if low.startswith(name):
            rest = low[len(name) :]
            if layer is Layer.Dense and not rest:
                return "kernel", Layer.Dense, None
            return "kernel", layer, rest or None
    if not low.replace("_", "").isalnum():
        raise ValueError(f"dispatch key {key!r}: not a device type or layer name")
    return "kernel", Layer.Dense, low


class Library:
    """A handle on the definitions and registrations made in one namespace (see the module docstring)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = "", *, source: str | None = None):
        if not isinstance(ns, str) or not ns or not ns.replace("_", "").isalnum():
            raise ValueError(f"Library: namespace {ns!r} is not an identifier")
        if kind not in KINDS:
            raise ValueError(f"Library: kind must be one of {', '.join(KINDS)}, not {kind!r}")
        if kind == "DEF":
            if ns in ("aten", "prims", "quantized") or ns in _owners:
                raise RuntimeError(
                    f"Library: namespace '{ns}' is already defined"
                    + (" by opweave" if ns not in _owners else f" by another DEF library ({_owners[ns].source})")
                    + "; use kind='FRAGMENT' to add operators to it or 'IMPL' to register kernels"
                )
            _owners[ns] = self
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self.source = source or ns
        self._registrations: list[Registration] = []
        self._defined: list = []
        self._closed = False

    def __repr__(self) -> str:
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})"

    # -- operators -------------------------------------------------------------------------------

    def define(
        self,
        schema: str,
        alias_analysis: str = "",
        *,
        tags: tuple[str, ...] | list[str] = (),
        decomposition: Callable | None = None,
        doc: str | None = None,
    ) -> _ops.OpOverload:
        """Define the operator ``schema`` (ATen syntax) in this namespace and return its overload.

        ``decomposition`` is its CompositeImplicit reference; without one, the op runs only
        where a kernel is registered (``impl``). ``alias_analysis`` is accepted for PyTorch
        compatibility and ignored.
        """
        self._check_open("define")
        if self.kind == "IMPL":
            raise RuntimeError(f"Library({self.ns!r}, 'IMPL'): an IMPL library cannot define operators")
        if not isinstance(schema, str):
            raise TypeError(f"Library.define: argument 'schema' must be str, not {type(schema).__name__}")
        if "::" in schema.split("(")[0]:
            raise ValueError(f"Library.define: '{schema}' names a namespace; the library's namespace is '{self.ns}'")
        qualified = schema if self.ns == "aten" else f"{self.ns}::{schema}"
        op = _ops.define(qualified, decomposition, tags=tags, doc=doc)
        self._defined.append(op)
        return op

    def _lookup(self, op_name: OpName) -> _ops.OpOverload:
        if isinstance(op_name, _ops.OpOverload):
            return op_name
        if isinstance(op_name, _ops.OpPacket):
            if len(op_name.overloads) != 1:
                raise ValueError(f"{op_name.name} has several overloads; pass one (e.g. ops.{op_name.name}.Tensor)")
            return next(iter(op_name.overloads.values()))
        if not isinstance(op_name, str):
            raise TypeError(f"Library: op must be an OpOverload or its name, not {type(op_name).__name__}")
        name = op_name[: -len(".default")] if op_name.endswith(".default") else op_name
        if "::" not in name and self.ns != "aten":
            name = f"{self.ns}::{name}"
        name = name[len("aten::") :] if name.startswith("aten::") else name
        return _ops.lookup(name)

    # -- kernels -------------------------------------------------------------------------------

    def impl(
        self,
        op_name: OpName,
        fn: Callable,
        dispatch_key: DispatchKey = "",
        *,
        with_keyset: bool = False,
        deterministic: bool = True,
    ) -> Registration:
        """Register ``fn`` as the kernel of ``op_name`` (an OpOverload or its name) at ``dispatch_key``.

        Returns the registration; closing the library removes it. ``deterministic=False``
        marks a kernel deterministic mode must not run (see ``use_deterministic_algorithms``).
        """
        self._check_open("impl")
        if not callable(fn):
            raise TypeError(f"Library.impl: argument 'fn' must be callable, not {type(fn).__name__}")
        op = self._lookup(op_name)
        kind, layer, backend = dispatch_key_of(dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        if kind == "implicit":
            reg = DISPATCHER.register_composite_implicit(op, fn, self.source)
        elif kind == "explicit":
            reg = DISPATCHER.register_composite_explicit(op, fn, self.source, deterministic)
        else:
            if layer is not Layer.Dense and not with_keyset:
                fn = _below_layer(fn, layer)
            reg = DISPATCHER.register_kernel(op, layer, backend, fn, self.source, deterministic)
        self._registrations.append(reg)
        return reg

    def deterministic_impl(self, op_name: OpName, fn: Callable, dispatch_key: DispatchKey) -> Registration:
        """Register the kernel deterministic mode runs for ``op_name`` at ``dispatch_key`` instead of the usual one."""
        self._check_open("deterministic_impl")
        kind, layer, backend = dispatch_key_of(dispatch_key)
        if kind != "kernel":
            raise ValueError(f"Library.deterministic_impl: {dispatch_key!r} is not a backend or layer key")
        reg = DISPATCHER.register_deterministic(self._lookup(op_name), layer, backend, fn, self.source)
        self._registrations.append(reg)
        return reg

    def fallback(self, fn: Callable, dispatch_key: DispatchKey = "", *, with_keyset: bool = True) -> Registration:
        """Register a boxed kernel for every op at ``dispatch_key``.

        At Dense it is called as ``fn(op, *args)``; at a layer as ``fn(op, keyset, *args)``
        (so it can redispatch below itself). ``with_keyset=False`` at a layer: ``fn(op, *args)``
        run with the layer and those above it excluded.
        """
        self._check_open("fallback")
        kind, layer, backend = dispatch_key_of(dispatch_key or self.dispatch_key)
        if kind != "kernel":
            raise ValueError(f"Library.fallback: {dispatch_key!r} is not a backend or layer key")
        if layer is not Layer.Dense and not with_keyset:
            inner, mask = fn, layers_at_and_above(layer)

            def fn(op, keyset, *args):
                with keys_excluded(mask):
                    return inner(op, *args)

        reg = DISPATCHER.register_fallback(layer, backend, fn, self.source)
        self._registrations.append(reg)
        return reg

    # -- lifetime ------------------------------------------------------------------------------

    def _check_open(self, what: str) -> None:
        if self._closed:
            raise RuntimeError(f"Library({self.ns!r}, {self.kind!r}).{what}: the library is closed")

    def _destroy(self) -> None:
        """Undo every definition and registration made through this library (as ``torch.library`` does)."""
        if self._closed:
            return
        self._closed = True
        for reg in reversed(self._registrations):
            reg.remove()
        self._registrations.clear()
        for op in reversed(self._defined):
            _ops.undefine(op)
        self._defined.clear()
        if _owners.get(self.ns) is self:
            del _owners[self.ns]

    close = _destroy

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._destroy()


dispatch_key_of = dispatch_key


def _below_layer(fn: Callable, layer: Layer) -> Callable:
    """A layer kernel without the key set: it runs with ``layer`` and above excluded."""
    mask = layers_at_and_above(layer)

    def kernel(keyset, *args):
        with keys_excluded(mask):
            return fn(*args)

    kernel.__name__ = getattr(fn, "__name__", "kernel")
    kernel.__doc__ = fn.__doc__
    return kernel


_core_libraries: dict[str, Library] = {}


def core_library(source: str) -> Library:
    """The process-long FRAGMENT library through which a part of the core (``source``) registers."""
    lib = _core_libraries.get(source)
    if lib is None:
        lib = _core_libraries[source] = Library("aten", "FRAGMENT", source=source)
    return lib


_process_libraries: dict[str, Library] = {}


def _library_for(qualname: str) -> tuple[Library, str]:
    ns, _, name = qualname.rpartition("::")
    ns = ns or "aten"
    lib = _process_libraries.get(ns)
    if lib is None:
        lib = _process_libraries[ns] = Library(ns, "FRAGMENT")
    return lib, name


def define(qualname: str, schema: str, *, lib: Library | None = None, tags: tuple = ()) -> _ops.OpOverload:
    """Define ``qualname`` ("ns::name") with the argument part ``schema`` ("(Tensor x) -> Tensor")."""
    library, name = (lib, qualname.rpartition("::")[2]) if lib is not None else _library_for(qualname)
    return library.define(name + schema, tags=tags)


def impl(qualname: str, types: DispatchKey, func: Callable | None = None, *, lib: Library | None = None) -> Callable:
    """Register ``func`` for ``qualname`` at dispatch key ``types``; without ``func``, a decorator.

    Without ``lib`` the registration lasts for the process (as ``torch.library.impl``).
    """

    def register(fn: Callable) -> Callable:
        library, name = (lib, qualname) if lib is not None else _library_for(qualname)
        library.impl(name, fn, types)
        return fn

    return register if func is None else register(func)
