"""Autocast: the Autocast dispatch layer, its per-thread state and the policy tables in effect.

``autocast(device_type)`` adds the Autocast layer bit to the thread's included
dispatch keys and records, per device type, whether autocast is enabled, its
dtype and whether casts are cached. One kernel per operator is registered at
``(Layer.Autocast, every backend)`` for each functional overload named in any
policy table: it reads the call's backend from the key set, and if autocast is
enabled for that device type in this thread, applies the device's policy for the
op to the arguments, then redispatches below the Autocast layer with the layer
excluded (the op's decomposition is not autocast again). Ops outside the tables
have no kernel: the layer falls through.

In-place and ``out=`` overloads are never autocast. Because opweave derives them
from the functional op (compute functionally, then copy), their functional call
must not be autocast either: the variants of table ops get a kernel that only
excludes the layer and redispatches.

The tables are data (``_autocast_tables.py``): ``DEVICE_TABLES`` by device type,
else ``GENERIC_GPU`` when the device's backend declares an ``autocast_dtype``.
Plugins change their device's table with ``Registry.autocast_policy``; the
result is what :func:`autocast_policy` returns and what the kernels apply.
"""

from __future__ import annotations

import copy
import functools
import warnings
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from . import _dispatch, _dtype, _keys, _ops
from ._autocast_tables import CATEGORIES, DEVICE_TABLES, GENERIC_GPU
from ._keys import Layer
from ._state import local
from ._tensor import Tensor
from .library import core_library

__all__ = ["AutocastPolicy", "autocast", "autocast_policy", "get_autocast_dtype", "is_autocast_enabled"]

_BIT = _keys.layer_bit(Layer.Autocast)
_BELOW = ~_keys.layers_at_and_above(Layer.Autocast)
_SOURCE = "autocast"
_SUPPORTED_DTYPES = (_dtype.float16, _dtype.bfloat16)
_STATE = local()  # the thread-local state object (its attributes are per thread)
_redispatch = _dispatch.dispatch_with_keyset


# -- per-thread state -------------------------------------------------------------------------------------------


class _DeviceState:
    """Autocast state of one device type in one thread."""

    __slots__ = ("enabled", "dtype", "cache_enabled", "depth", "cache")

    def __init__(self):
        self.enabled = False
        self.dtype = None  # None: the backend's autocast_dtype
        self.cache_enabled = True
        self.depth = 0  # nesting of autocast regions for this device type
        self.cache = {}  # (id(source), dtype) -> (weakref to source, cast)


def _states() -> dict:
    state = local()
    if state.autocast is None:
        state.autocast = {}
    return state.autocast


def _device_state(device_type: str) -> _DeviceState:
    states = _states()
    st = states.get(device_type)
    if st is None:
        st = states[device_type] = _DeviceState()
    return st


def _check_device_type(fn: str, device_type) -> str:
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}: expected 'device_type' of type str, got {type(device_type).__name__}")
    return device_type


def _backend_dtype(device_type: str):
    from . import _backends

    return getattr(_backends.ensure_loaded(device_type), "autocast_dtype", None)


def is_autocast_enabled(device_type: str) -> bool:
    """Whether autocast is enabled for ``device_type`` in the calling thread."""
    _check_device_type("is_autocast_enabled", device_type)
    states = local().autocast
    st = states.get(device_type) if states else None
    return bool(st is not None and st.enabled)


def get_autocast_dtype(device_type: str) -> _dtype.dtype:
    """The dtype autocast casts to on ``device_type`` in the calling thread.

    Inside an ``autocast`` region it is the region's dtype; outside, the default
    declared by the device's backend (``Backend.autocast_dtype``). Raises
    ``RuntimeError`` for a device type that declares none.
    """
    _check_device_type("get_autocast_dtype", device_type)
    states = local().autocast
    st = states.get(device_type) if states else None
    if st is not None and st.dtype is not None:
        return st.dtype
    found = _backend_dtype(device_type)
    if found is None:
        raise RuntimeError(
            f"get_autocast_dtype: device type '{device_type}' has no autocast dtype "
            "(its backend declares no autocast_dtype)"
        )
    return found


# -- the context manager ----------------------------------------------------------------------------------------


class autocast:  # noqa: N801 - named like torch.autocast
    """Run ops of ``device_type`` in mixed precision inside the region (a context manager or decorator).

    Like ``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``:
    ops in the device's policy (:func:`autocast_policy`) cast their floating,
    non-float64 tensor arguments on that device to the policy's dtype (``dtype``,
    default the backend's ``autocast_dtype``: bfloat16 on CPU, float16 on GPUs).
    Regions nest and restore the previous state on exit (also on exceptions);
    ``enabled=False`` turns autocast off for that device inside the region. With
    ``cache_enabled`` (``None``: keep the enclosing setting, True outside any
    region), lower-precision casts of non-view float32 tensors are cached until the
    outermost region of the device exits. The state is per thread.

    Raises ``TypeError`` for a ``device_type`` that is not a str or a ``dtype`` that
    is not an opweave dtype, ``RuntimeError`` for a device type without autocast
    support. A dtype other than float16/bfloat16 warns and disables the region, as
    PyTorch does.
    """

    def __init__(
        self,
        device_type: str,
        dtype: _dtype.dtype | None = None,
        enabled: bool = True,
        cache_enabled: bool | None = True,
    ) -> None:
        _check_device_type("autocast", device_type)
        if dtype is not None and not isinstance(dtype, _dtype.dtype):
            raise TypeError(f"autocast: argument 'dtype' must be opweave.dtype, not {type(dtype).__name__}")
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast: argument 'enabled' must be bool, not {type(enabled).__name__}")
        if cache_enabled is not None and not isinstance(cache_enabled, bool):
            raise TypeError(f"autocast: argument 'cache_enabled' must be bool, not {type(cache_enabled).__name__}")
        default = _backend_dtype(device_type)
        if default is None and not _plugin_rules.get(device_type):
            raise RuntimeError(
                f"autocast: unsupported device type '{device_type}' (its backend declares no autocast_dtype "
                "and no plugin registered an autocast policy for it)"
            )
        if dtype is None:
            dtype = get_autocast_dtype(device_type) if default is not None else None
            if dtype is None:
                raise RuntimeError(f"autocast: device type '{device_type}' has no default autocast dtype; pass dtype=")
        if enabled and dtype not in _SUPPORTED_DTYPES:
            warnings.warn(
                f"In {device_type} autocast, but the target dtype {dtype.name} is not supported. Disabling autocast. "
                f"{device_type} autocast only supports dtypes float16 and bfloat16.",
                UserWarning,
                stacklevel=2,
            )
            enabled = False
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = enabled
        self._cache_enabled = cache_enabled
        self._saved = []

    def __enter__(self) -> autocast:
        _ensure_kernels()
        state = local()
        st = _device_state(self.device)
        self._saved.append((st.enabled, st.dtype, st.cache_enabled, state.included & _BIT))
        st.enabled = self._enabled
        st.dtype = self.fast_dtype
        if self._cache_enabled is not None:
            st.cache_enabled = self._cache_enabled
        st.depth += 1
        if any(s.enabled for s in _states().values()):
            state.included |= _BIT
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        state = local()
        st = _device_state(self.device)
        enabled, dtype, cache_enabled, bit = self._saved.pop()
        st.depth -= 1
        if st.depth == 0:
            st.cache.clear()
        st.enabled, st.dtype, st.cache_enabled = enabled, dtype, cache_enabled
        state.included = (state.included & ~_BIT) | bit
        return False

    def __call__(self, func: Callable) -> Callable:
        """Decorate ``func``: each call runs inside a fresh region with these settings."""

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            region = copy.copy(self)
            region._saved = []
            with region:
                return func(*args, **kwargs)

        return decorated

    def __repr__(self):
        return f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, enabled={self._enabled})"


def cache_size(device_type: str) -> int:
    """Number of cached casts for ``device_type`` in the calling thread (for tests and debugging)."""
    states = local().autocast
    st = states.get(device_type) if states else None
    return len(st.cache) if st is not None else 0


# -- policy tables ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AutocastPolicy:
    """The autocast policy in effect for one device type (read-only).

    ``dtype`` is the default autocast dtype (the backend's ``autocast_dtype``, or
    None). Each category is a frozenset of names of operators in opweave's
    catalog: a packet name when every functional overload of it has that policy,
    else the overload's qualified name (``"norm.Scalar"``, ``"sum.default"``).
    """

    device_type: str
    dtype: object
    lower_precision: frozenset
    fp32: frozenset
    fp32_set_opt_dtype: frozenset
    promote: frozenset

    def category(self, op) -> str | None:
        """The policy of ``op`` on this device, or None.

        ``op`` is an OpOverload, a qualified overload name (``"norm.Scalar"``,
        ``"sum.default"``) or a packet name (``"pow"``: the policy all its functional
        overloads share, None if they differ).
        """
        index = _index(self.device_type)
        if not isinstance(op, str):
            return index.get(op.name)
        if "." in op:
            found = _matching(op)
            return index.get(found[0].name) if found else None
        categories = {index.get(o.name) for o in _matching(op)}
        return categories.pop() if len(categories) == 1 else None

    def __contains__(self, name) -> bool:
        return any(name in getattr(self, c) for c in CATEGORIES)


# device type -> [(names, category or None for remove, source)]: a table of the dispatcher
_plugin_rules: dict[str, list] = _dispatch.DISPATCHER.autocast_rules
_index_cache: dict[str, tuple] = {}  # device type -> (version, {op name: category})
_rules_version = 0


def _matching(name: str) -> list:
    """The functional overloads a table name covers (none if the catalog lacks it)."""
    if "." in name:
        qualified = name[: -len(".default")] if name.endswith(".default") else name
        op = _ops._all.get(qualified)
        return [op] if op is not None and op.variant is None else []
    packet = _ops.canonical._packets.get(name)
    if packet is None:
        return []
    return [o for o in packet.overloads.values() if o.variant is None]


def _base_table(device_type: str):
    table = DEVICE_TABLES.get(device_type)
    if table is not None:
        return table
    from . import _backends

    backend = _backends._backends.get(device_type)
    if backend is not None and getattr(backend, "autocast_dtype", None) is not None:
        return GENERIC_GPU
    return None


def _rules(device_type: str) -> list:
    """Ordered (names, category) rules for a device: the base table, then plugin changes; later rules win."""
    rules = []
    table = _base_table(device_type)
    if table is not None:
        for specific in (False, True):  # packet names first, then single overloads (more specific)
            for category in CATEGORIES:
                names = tuple(n for n in table.get(category, ()) if ("." in n) == specific)
                rules.append((names, category))
    rules.extend((names, category) for names, category, _ in _plugin_rules.get(device_type, ()))
    return rules


def _index(device_type: str) -> dict:
    """{qualified op name: category} for the functional overloads autocast acts on for ``device_type``."""
    version = (_rules_version, _dispatch.DISPATCHER.generation, len(_ops._all))
    cached = _index_cache.get(device_type)
    if cached is not None and cached[0] == version:
        return cached[1]
    index = {}
    for names, category in _rules(device_type):
        for name in names:
            for op in _matching(name):
                if category is None:
                    index.pop(op.name, None)
                else:
                    index[op.name] = category
    from . import _backends

    if device_type in _backends._backends:  # the base table depends on the backend: cache once it is known
        _index_cache[device_type] = (version, index)
    return index


def autocast_policy(device_type: str) -> AutocastPolicy:
    """The autocast policy in effect for ``device_type``, as a read-only :class:`AutocastPolicy`.

    It is PyTorch's list for the device (``_autocast_tables.DEVICE_TABLES``, else the
    generic GPU table when the backend declares an ``autocast_dtype``, else empty)
    restricted to opweave's catalog, with the changes plugins made through
    ``Registry.autocast_policy``. Raises ``RuntimeError`` if no backend provides ``device_type``.
    """
    _check_device_type("autocast_policy", device_type)
    default = _backend_dtype(device_type)
    index = _index(device_type)
    groups = {c: set() for c in CATEGORIES}
    by_packet: dict = {}
    for name, category in index.items():
        by_packet.setdefault(_ops._all[name].schema.name, []).append((name, category))
    for packet, entries in by_packet.items():
        functional = _matching(packet)
        categories = {c for _, c in entries}
        if len(entries) == len(functional) and len(categories) == 1:
            groups[categories.pop()].add(packet)
        else:
            for name, category in entries:
                groups[category].add(name if "." in name else name + ".default")
    return AutocastPolicy(device_type, default, **{c: frozenset(v) for c, v in groups.items()})


def extend_policy(
    device_type: str,
    *,
    lower_precision=(),
    fp32=(),
    fp32_set_opt_dtype=(),
    promote=(),
    remove=(),
    source: str = "user",
) -> None:
    """Add ops to (or remove them from) ``device_type``'s autocast policy; later changes win.

    Names are packet names (every functional overload) or qualified overload names.
    Adding a name moves it out of any other category. Raises ``TypeError`` for a
    list that is not a sequence of str and ``ValueError`` for a name that names no
    operator, or one given in two categories.
    """
    global _rules_version
    _check_device_type("autocast_policy", device_type)
    given = {
        "lower_precision": lower_precision,
        "fp32": fp32,
        "fp32_set_opt_dtype": fp32_set_opt_dtype,
        "promote": promote,
        "remove": remove,
    }
    seen: dict[str, str] = {}
    rules = []
    for category, names in given.items():
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise TypeError(f"autocast_policy: argument '{category}' must be a sequence of op names (str)")
        for name in names:
            if name in seen:
                raise ValueError(f"autocast_policy: op '{name}' is given in both '{seen[name]}' and '{category}'")
            seen[name] = category
            if not _matching(name):
                raise ValueError(f"autocast_policy: '{name}' names no functional operator of opweave's catalog")
        if names:
            rules.append((tuple(names), None if category == "remove" else category, source))
    _dispatch.DISPATCHER.add_autocast_rules(device_type, rules)
    _rules_version += 1
    _ensure_kernels()


# -- the kernels ------------------------------------------------------------------------------------------------


def _eligible(value, device_type: str) -> bool:
    """A floating, non-float64 tensor on the autocast device (Python scalars wrapped as tensors are not)."""
    if not isinstance(value, Tensor) or value._wrapped_number or value._device.type != device_type:
        return False
    dt = value._dtype
    return dt.is_floating_point and dt is not _dtype.float64


def _is_view(t) -> bool:
    """Whether ``t`` does not own its whole storage from offset 0 (casts of views are not cached)."""
    return t._offset != 0 or t._storage.nbytes != t.numel() * t._dtype.itemsize


def _cast(t, dtype, st: _DeviceState, cacheable: bool):
    if t._dtype is dtype:
        return t
    if not (cacheable and st.cache_enabled and t._dtype is _dtype.float32) or _is_view(t):
        return _convert(t, dtype)
    cache = st.cache
    key = (id(t), dtype)
    hit = cache.get(key)
    if hit is not None and hit[0]() is t:
        return hit[1]
    result = _convert(t, dtype)

    def forget(ref, _key=key, _cache=cache):
        entry = _cache.get(_key)
        if entry is not None and entry[0] is ref:
            del _cache[_key]

    cache[key] = (weakref.ref(t, forget), result)
    return result


def _convert(t, dtype):
    return _ops.prims.convert_element_type.default(t, dtype)


def _cast_args(args, info, device_type: str, dtype, st: _DeviceState, cacheable: bool) -> list:
    args = list(args)
    for i, is_list in info.tensor_positions:
        value = args[i]
        if is_list:
            if isinstance(value, (list, tuple)):
                cast = [_cast(v, dtype, st, cacheable) if _eligible(v, device_type) else v for v in value]
                args[i] = type(value)(cast)
        elif _eligible(value, device_type):
            args[i] = _cast(value, dtype, st, cacheable)
    return args


def _eligible_args(args, info, device_type: str):
    for i, is_list in info.tensor_positions:
        value = args[i]
        if is_list:
            if isinstance(value, (list, tuple)):
                yield from (v for v in value if _eligible(v, device_type))
        elif _eligible(value, device_type):
            yield value


class _OpInfo:
    """Where an overload's tensor arguments and its ``dtype`` argument are."""

    __slots__ = ("tensor_positions", "dtype_index")

    def __init__(self, op):
        self.tensor_positions = []
        self.dtype_index = None
        for i, arg in enumerate(op.schema.arguments):
            if arg.type.name == "Tensor":
                self.tensor_positions.append((i, arg.type.is_list))
            elif arg.name == "dtype" and arg.type.name == "ScalarType":
                self.dtype_index = i


def _below(op, keyset: int, args):
    """Redispatch below the Autocast layer, with the layer excluded while the op runs."""
    state = _STATE
    saved = state.excluded & _BIT
    state.excluded |= _BIT
    try:
        return _redispatch(op, keyset & _BELOW, args)
    finally:
        state.excluded = (state.excluded & ~_BIT) | saved


def _apply(op, info: _OpInfo, category: str, device_type: str, st: _DeviceState, args):
    """The arguments after the cast policy ``category``."""
    if info.dtype_index is not None and args[info.dtype_index] is not None:
        return args  # an explicit dtype= wins
    if category == "lower_precision":
        target = st.dtype if st.dtype is not None else _backend_dtype(device_type)
        return _cast_args(args, info, device_type, target, st, True)
    if category == "fp32":
        return _cast_args(args, info, device_type, _dtype.float32, st, False)
    if category == "fp32_set_opt_dtype":
        if info.dtype_index is None:  # PyTorch's fp32_append_dtype overloads
            return _cast_args(args, info, device_type, _dtype.float32, st, False)
        first = info.tensor_positions[0][0] if info.tensor_positions else None
        if first is not None and _eligible(args[first], device_type):
            args = list(args)
            args[info.dtype_index] = _dtype.float32
        return args
    # promote: the widest floating dtype among the eligible arguments (float64 ignored)
    widest = None
    for t in _eligible_args(args, info, device_type):
        widest = t._dtype if widest is None else _dtype.promote_types(widest, t._dtype)
    if widest is None:
        return args
    return _cast_args(args, info, device_type, widest, st, False)


def _autocast_kernel(op):
    info = _OpInfo(op)

    def kernel(keyset, *args):
        device_type = _keys.highest_backend(keyset)
        states = _STATE.autocast
        st = states.get(device_type) if states else None
        if st is not None and st.enabled:
            category = _index(device_type).get(op.name)
            if category is not None:
                args = _apply(op, info, category, device_type, st, args)
        return _below(op, keyset, args)

    kernel.__name__ = f"autocast_{op.schema.name}"
    return kernel


def _variant_kernel(op):
    def kernel(keyset, *args):
        return _below(op, keyset, args)

    kernel.__name__ = f"autocast_guard_{op.schema.name}"
    return kernel


_installed_state = [None]  # (rules version, dispatcher generation, catalog size) at the last installation


def _all_table_names():
    names = set()
    for table in (*DEVICE_TABLES.values(), GENERIC_GPU):
        for category in CATEGORIES:
            names.update(table.get(category, ()))
    for rules in _plugin_rules.values():
        for rule_names, category, _ in rules:
            if category is not None:
                names.update(rule_names)
    return names


def _ensure_kernels() -> None:
    """Register the Autocast kernels of every functional op in any table (and the guards of their variants)."""
    marker = (_rules_version, _dispatch.DISPATCHER.generation, len(_ops._all))
    if _installed_state[0] == marker:
        return
    wanted = {op for name in _all_table_names() for op in _matching(name)}
    covered = {id(o) for o in wanted}
    for op in _ops._all.values():
        if op in wanted:
            if not _installed(op):
                core_library(_SOURCE).impl(op, _autocast_kernel(op), "Autocast", with_keyset=True)
        elif op.variant is not None and id(op.functional) in covered and not _installed(op):
            guards = core_library(_SOURCE + " (no cast: in-place/out=)")
            guards.impl(op, _variant_kernel(op), "Autocast", with_keyset=True)
    _installed_state[0] = marker


def _installed(op) -> bool:
    kernel = _dispatch.DISPATCHER.kernel(op, Layer.Autocast, None)
    return kernel is not None and kernel.source.startswith(_SOURCE)


_ensure_kernels()
