"""Per-signature plans: a canonical op's decomposition traced once, replayed as straight-line kernel calls.

The second Dense call of a canonical op with a given *signature* (the first under
``OPWEAVE_CHECK_PLANS=1``; a signature met once, as in a sweep over shapes, is not worth
recording) runs its Python decomposition with the ``Trace`` key included. Every op the decomposition calls then
reaches :func:`trace_fallback` first, which resolves the call below ``Trace`` exactly as
the dispatcher would: a decomposition is descended into (its own calls are traced in
turn); any other kernel (a backend's prim kernel, a direct kernel, a layer kernel) runs
and becomes one :class:`Step` of the :class:`Plan`. The plan is compiled into one small
Python function that calls those kernels in order; later calls with the same signature
run that function: no decomposition, no binding of inner calls, no meta functions.

The signature is everything a decomposition may branch on: each tensor's dtype, shape,
strides, storage offset, device and dispatch keys, which tensor arguments are the same object, each
other argument's type and *value* (so scalars, dims and sizes select the plan; a Python
float is not turned into a tensor per call — the plan keeps the wrapped constant), the
call's key set (modes such as deterministic and autocast), the thread's included and
excluded keys (grad mode), inference mode and the default dtype. A plan is dropped when
``Dispatcher.plan_generation`` moves (any registration or deregistration).

A call is not planned (the decomposition runs as before) when the op or any op it calls
is random, has a data-dependent output (``nonzero``, ``masked_select``, ``item``), or
changes a tensor's metadata in place; when the decomposition reads tensor data in Python,
makes a tensor outside the dispatcher, returns a non-tensor, or warns; or when an op has
seen :data:`MAX_PLANS` signatures. A replay that raises re-runs the decomposition, so a bad
call raises exactly the decomposition's error.

``OPWEAVE_CHECK_PLANS=1`` runs the decomposition beside every replay and raises
:class:`PlanCheckError` on any difference in values, dtype, shape or strides (inputs an
in-place op wrote included). ``OPWEAVE_PLANS=0`` turns plans off. See ``docs/plans.md``.
"""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from . import _backends, _hooks, _keys
from . import _dtype as _dtype_module
from ._keys import LAYER_BITS, Layer
from ._state import local
from ._tensor import Tensor

if TYPE_CHECKING:
    from ._ops import OpOverload

__all__ = ["MAX_PLANS", "Plan", "PlanCheckError", "Planned", "Step", "enabled", "plans_of"]

MAX_PLANS = 64  # signatures per (op, key set); beyond it calls run the decomposition unplanned
SEEN_LIMIT = 4 * MAX_PLANS  # signatures remembered as called once (forgotten all at once beyond it)
TRACE_BIT = _keys.layer_bit(Layer.Trace)
# While a Python-layer mode (the profiler) is on, calls are not planned: it sees every op a decomposition calls.
_UNPLANNED_LAYERS = _keys.layer_bit(Layer.Python)
UNPLANNABLE_TAGS = frozenset(
    {"random", "nondeterministic_seeded", "dynamic_output_shape", "data_dependent_output", "inplace_view"}
)
# Factories whose output is fixed by their arguments: a plan folds them when nothing writes or returns the
# output (a decomposition's ``full((), 0.0)`` beside a tensor), so a replay allocates nothing for them.
_VALUE_FACTORIES = frozenset({"prims::full", "prims::scalar_tensor", "prims::iota"})
_NO_VALUE_CHECK = ("empty", "new_empty", "resize")  # op names whose results hold uninitialised memory

_enabled = os.environ.get("OPWEAVE_PLANS", "1") != "0"
_check = os.environ.get("OPWEAVE_CHECK_PLANS", "0") == "1"
_tls = _hooks.trace  # ``recorder``: the recorder of the call this thread is tracing, or None
_dispatcher = None  # the Dispatcher (set by ``install``; this module does not import it)
_Decline = Exception


class PlanCheckError(AssertionError):
    """A replayed plan gave a different result than the decomposition (``OPWEAVE_CHECK_PLANS=1``)."""


def enabled() -> bool:
    """Whether calls are planned (``OPWEAVE_PLANS`` is not ``0``)."""
    return _enabled


def set_enabled(on: bool) -> None:
    """Turn planning on or off for the process (existing plans stay but are not used while off)."""
    global _enabled
    _enabled = bool(on)


def set_check(on: bool) -> None:
    """Turn ``OPWEAVE_CHECK_PLANS`` behaviour on or off for the process."""
    global _check
    _check = bool(on)


def checking() -> bool:
    """Whether every replay is checked against the decomposition."""
    return _check


def install(dispatcher, decline) -> None:
    """Connect this module to the dispatcher (called once by ``_dispatcher``)."""
    global _dispatcher, _Decline
    _dispatcher, _Decline = dispatcher, decline


# -- plans --------------------------------------------------------------------------------------


class Step:
    """One kernel call of a plan: ``outputs = kernel(*args)``; ``args`` are slot names or constants.

    ``layout`` is ``(shape, strides, offset, dtype)`` of a view prim's output when the core's own
    view kernel ran: the replay then makes the view directly (the layout is fixed by the signature).
    """

    __slots__ = ("op", "kernel", "args", "why", "layout")

    def __init__(self, op: OpOverload, kernel: Any, args: tuple, why: str, layout: tuple | None = None) -> None:
        self.op, self.kernel, self.args, self.why, self.layout = op, kernel, args, why, layout

    def __repr__(self):
        return f"<Step {self.op.name}({', '.join(map(str, self.args))}) via {self.why}>"


class Plan:
    """A traced call: the steps in order, where the result comes from, and the compiled replay function.

    ``steps[i]`` writes slot ``r{i}``; the call's arguments are slots ``a0, a1, ...``
    (``a2[1]`` for an element of a tensor list); ``c{k}`` are constants (wrapped scalars).
    ``str(plan)`` lists it; ``plan.source`` is the replay function's Python source.
    """

    __slots__ = ("op", "keyset", "steps", "result", "constants", "source", "run", "generation")

    def __init__(self, op: OpOverload, keyset: int, steps: list, result: str, constants: list, generation: int) -> None:
        self.op, self.keyset, self.steps, self.result = op, keyset, steps, result
        self.constants, self.generation = constants, generation
        self.source, self.run = _compile(self)

    def __str__(self):
        lines = [f"plan of {self.op.name} ({len(self.steps)} steps, key set {_keys.format_keyset(self.keyset)})"]
        for i, step in enumerate(self.steps):
            lines.append(f"  r{i} = {step.op.name}({', '.join(map(_show, step.args))})    # {step.why}")
        lines.append(f"  return {self.result}")
        return "\n".join(lines)

    __repr__ = __str__


class _Slot(str):
    """A slot name in a step's argument template (a plain str is a constant)."""

    __slots__ = ()


class _Const:
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index

    def __repr__(self):
        return f"c{self.index}"


def _show(arg) -> str:
    if isinstance(arg, _Slot):
        return str(arg)
    if isinstance(arg, list):
        return "[" + ", ".join(map(_show, arg)) + "]"
    if isinstance(arg, tuple) and any(isinstance(x, (_Slot, _Const)) for x in arg):
        return "(" + ", ".join(map(_show, arg)) + ("," if len(arg) == 1 else "") + ")"
    return repr(arg)


def _expr(arg, env: dict) -> str:
    """Python source for one argument template."""
    if isinstance(arg, _Slot):
        return str(arg)
    if isinstance(arg, _Const):
        return f"c{arg.index}"
    if isinstance(arg, list) and any(isinstance(x, (_Slot, _Const, list, tuple)) for x in arg):
        return "[" + ", ".join(_expr(x, env) for x in arg) + "]"
    if isinstance(arg, tuple) and any(isinstance(x, (_Slot, _Const, list, tuple)) for x in arg):
        return "(" + ", ".join(_expr(x, env) for x in arg) + ("," if len(arg) == 1 else "") + ")"
    name = f"v{len(env)}"
    env[name] = arg
    return name if not isinstance(arg, list) else f"list({name})"


def _compile(plan: Plan):
    env: dict = {}
    n_args = len(plan.op.schema.arguments)
    params = ", ".join(f"a{i}" for i in range(n_args))
    lines = [f"def replay({params}):"]
    for i, step in enumerate(plan.steps):
        if step.layout is not None:  # a view with its layout precomputed: no validation, no kernel
            env[f"k{i}"] = step.layout
            lines.append(f"    r{i} = _view({_expr(step.args[0], env)}, *k{i})")
            continue
        env[f"k{i}"] = step.kernel
        lines.append(f"    r{i} = k{i}({', '.join(_expr(a, env) for a in step.args)})")
    lines.append(f"    return {plan.result}")
    for i, c in enumerate(plan.constants):
        env[f"c{i}"] = c
    env["_view"] = _precomputed_view
    source = "\n".join(lines) + "\n"
    exec(compile(source, f"<opweave plan {plan.op.name}>", "exec"), env)
    return source, env["replay"]


_new = object.__new__


def _precomputed_view(a: Tensor, shape, stride, offset, dtype) -> Tensor:
    """What a view prim returns for ``a``, with the layout its kernel computed when the plan was traced."""
    t = _new(Tensor)
    t._st = a._storage
    t._shape, t._stride, t._offset, t._dtype = shape, stride, offset, dtype
    t._device, t._keys = a._device, a._keys
    t._native = None
    t._wrapped_number = False
    t._qparams = a._qparams
    t._ag = None
    base = a._base
    t._base = a if base is None else base
    return t


# -- the planned decomposition (the cached kernel at Dense) --------------------------------------


class Planned:
    """The Dense kernel of a canonical op whose decomposition is planned per signature."""

    __slots__ = ("op", "decomposition", "keyset", "plans", "seen", "mutates", "signature", "call", "__weakref__")

    def __init__(self, op, decomposition, keyset: int):
        self.op, self.decomposition, self.keyset = op, decomposition, keyset
        self.plans: dict = {}  # signature -> Plan, or a str: why this signature is not planned
        self.seen: set = set()  # signatures called once: recorded at their second call
        self.mutates = bool(op.schema.mutated_arguments)
        self.signature = signature_function(op)
        self.call = _fast_call(self)  # what the dispatcher caches: the replay path in one frame

    def __call__(self, *args):
        if not _enabled or _tls.recorder is not None or _STATE.included & _UNPLANNED_LAYERS:
            return self.decomposition(*args)
        try:
            key = self.signature(*args)
        except _NoPlan:
            return self.decomposition(*args)
        plan = self.plans.get(key)
        if plan is None:
            if len(self.plans) >= MAX_PLANS:
                return self.decomposition(*args)
            if not _check and key not in self.seen:  # a signature met once (a sweep of shapes) is not worth a plan
                if len(self.seen) >= SEEN_LIMIT:
                    self.seen.clear()
                self.seen.add(key)
                return self.decomposition(*args)
            self.seen.discard(key)
            return self._record(key, args)
        if type(plan) is str:
            return self.decomposition(*args)
        if plan.generation != _dispatcher.plan_generation:
            del self.plans[key]
            return self._record(key, args)
        if _check:
            return _checked(self, plan, args)
        try:
            return plan.run(*args)
        except BaseException:  # the decomposition raises the call's own error (or runs it on)
            return self.decomposition(*args)

    def _record(self, key, args):
        recorder = _Recorder(self.op, args)
        state = _state()
        saved = state.included
        _tls.recorder = recorder
        state.included = saved | TRACE_BIT
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                out = self.decomposition(*args)
        finally:
            state.included = saved
            _tls.recorder = None
        for w in caught:  # re-issued where they were raised; a call that warns is not planned
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
        if caught:
            recorder.fail("the decomposition warns")
        self.plans[key] = recorder.finish(out, self.keyset)
        return out

    def __repr__(self):
        return f"<Planned {self.op.name}: {len(self.plans)} signatures>"


def planned(op, decomposition, keyset: int):
    """``decomposition`` as the Dense kernel of ``op`` for ``keyset``: planned unless the op cannot be.

    The kernel is the :class:`Planned` object's generated ``call`` function (its ``planned``
    attribute is the object): a replay costs one Python frame before the plan's own.
    """
    if op.tags & UNPLANNABLE_TAGS or op.kind == "prim":
        return decomposition
    return Planned(op, decomposition, keyset).call


def planned_kernel(fn) -> Planned | None:
    """The :class:`Planned` object behind a cached kernel (None: the kernel is not a planned decomposition)."""
    return fn if isinstance(fn, Planned) else getattr(fn, "planned", None)


def _fast_call(planned: Planned):
    """``call(*args)``: a current plan of the call's signature replayed, else ``Planned.__call__``.

    A closure, not generated code, so that an op's first call compiles nothing more; it reads the
    module's flags (``_enabled``, ``_check``) and the thread's state live, as ``__call__`` does.
    """
    signature, plans_get = planned.signature, planned.plans.get
    decomposition, slow = planned.decomposition, planned.__call__

    def call(*args):
        if _enabled and not _check and _tls.recorder is None and not _STATE.included & _UNPLANNED_LAYERS:
            try:
                plan = plans_get(signature(*args))
            except _NoPlan:
                return decomposition(*args)
            if type(plan) is Plan and plan.generation == _dispatcher.plan_generation:
                try:
                    return plan.run(*args)
                except BaseException:  # the decomposition raises the call's own error
                    return decomposition(*args)
        return slow(*args)

    call.planned = planned
    call.__qualname__ = call.__name__ = planned.op.name
    return call


_state = local
_STATE = local()  # a threading.local: its attributes are the calling thread's

_SCALAR_TYPES = (int, float, bool, complex)


class _NoPlan(Exception):  # noqa: N818 - a signal: this call's arguments cannot key a plan
    """Raised by a signature function for arguments that cannot be part of a plan key."""


def _tensor_key(t):
    """The part of a plan key one tensor argument contributes (None for None)."""
    if t is None:
        return None
    if not isinstance(t, Tensor):
        return _value_key(t)
    stride = t._stride if t._stride is not None else t.stride()
    if t._wrapped_number:  # a Python scalar: decompositions read its value (``to_dtype``)
        return (t._dtype, t._shape, stride, t._offset, t._device, t._keys, _number_key(t._native.item()))
    return (t._dtype, t._shape, stride, t._offset, t._device, t._keys, type(t))  # nn.Parameter is a Tensor too


def _number_key(x):
    if x != x:
        raise _NoPlan("NaN")
    return x if x else str(x)  # -0.0 == 0.0, but they are different arguments


def _value_key(v):
    """The part of a plan key a non-tensor argument contributes: its type and value."""
    tv = type(v)
    if tv is int or tv is bool or v is None or tv is str:
        return (tv, v)
    if tv is float or tv is complex:
        return (tv, _number_key(v))
    if tv is list or tv is tuple:
        for x in v:
            if type(x) is not int:
                return (tv, tuple(_tensor_key(x) if isinstance(x, Tensor) else _value_key(x) for x in v))
        return (tv, tuple(v))  # sizes and dims: ints only (the common case)
    if tv.__module__ in ("opweave._dtype", "opweave._device"):
        return (tv, v)
    raise _NoPlan(tv.__name__)  # generators and other objects with state


def _aliasing(*tensors):
    """Which tensor arguments are the same object (a pattern of first-occurrence indices), or None."""
    flat = []
    for t in tensors:
        if isinstance(t, Tensor):
            flat.append(t)
        elif type(t) in (list, tuple):
            flat.extend(x for x in t if isinstance(x, Tensor))
    ids = [id(t) for t in flat]
    return None if len(set(ids)) == len(ids) else tuple(ids.index(i) for i in ids)


def _storage_aliasing(*tensors):
    """Which tensor arguments share a storage (for ops that write: ``out=`` overlap checks depend on it)."""
    flat = []
    for t in tensors:
        if isinstance(t, Tensor):
            flat.append(t)
        elif type(t) in (list, tuple):
            flat.extend(x for x in t if isinstance(x, Tensor))
    ids = [_storage_id(t) for t in flat]
    return tuple(ids.index(i) for i in ids)


def signature_function(op):
    """Generate ``key(*args)`` for ``op``: its arguments' plan key and the thread's modes (``_NoPlan``: none)."""
    params, key = _signature_source(op)
    env: dict = {}
    exec(compile(f"def key({params}):\n    return {key}\n", f"<opweave plan key {op.name}>", "exec"), globals(), env)
    return env["key"]


def _signature_source(op) -> tuple[str, str]:
    """``(parameters, key expression)`` of ``op``'s plan key (it names this module's globals)."""
    parts, tensor_args = [], []
    for i, arg in enumerate(op.schema.arguments):
        t = arg.type
        name = f"a{i}"
        if t.name == "Tensor" and not t.is_list and not t.optional:
            parts.append(
                f"({name}._dtype, {name}._shape, {name}._stride if {name}._stride is not None else {name}.stride(), "
                f"{name}._offset, {name}._device.index, {name}._keys) "  # the keys name the device type
                f"if type({name}) is _T and not {name}._wrapped_number else _tk({name})"
            )
            tensor_args.append(name)
        elif t.name == "Tensor":
            parts.append(f"_tk({name})" if not t.is_list else f"_vk({name})")
            tensor_args.append(name)
        elif t.name in ("int", "SymInt", "bool") and not t.is_list and not t.optional:
            parts.append(f"(type({name}), {name})")
        elif t.optional or arg.has_default:  # None (a dtype, device or layout not given) keys as itself
            parts.append(f"None if {name} is None else _vk({name})")
        else:
            parts.append(f"_vk({name})")
    lists = any(a.type.is_list and a.type.name == "Tensor" for a in op.schema.arguments)
    if 1 < len(tensor_args) <= 4 and not lists:  # which arguments are the same object, pair by pair
        parts.extend(f"{x} is {y}" for k, x in enumerate(tensor_args) for y in tensor_args[k + 1 :])
    elif len(tensor_args) > 1 or lists:
        parts.append(f"_alias({', '.join(tensor_args)})")
    if len(tensor_args) > 1 or lists:
        if op.schema.mutated_arguments:
            parts.append(f"_storages({', '.join(tensor_args)})")
    parts.append("_st.included, _st.excluded, _st.inference, _dt._default_dtype")
    params = ", ".join(f"a{i}" for i in range(len(op.schema.arguments)))
    return params, f"({', '.join(parts)},)"


# the names the generated key source uses
_T, _tk, _vk, _alias, _storages = Tensor, _tensor_key, _value_key, _aliasing, _storage_aliasing
_st, _dt = _STATE, _dtype_module


def _storage_id(t: Tensor):
    if t._st is not None:
        return id(t._st)
    native = t._native
    if native is not None:
        while isinstance(native, np.ndarray) and native.base is not None:
            native = native.base
        return id(native)
    return id(t._storage)


# -- recording ----------------------------------------------------------------------------------


class _Recorder:
    """What one traced call has seen: slots of tensors, the steps, constants, and why it cannot be planned."""

    def __init__(self, op, args: tuple):
        self.op = op
        self.slots: dict = {}  # id(tensor) -> slot name
        self.keep: list = list(args)  # keeps every traced tensor alive, so ids stay unique
        self.steps: list = []
        self.constants: list = []
        self.failed: str | None = None
        self.in_leaf = 0
        self.keep_out: list = []  # each step's output
        self.result_renames: dict = {}
        for i, v in enumerate(args):
            if isinstance(v, Tensor):
                self.slots.setdefault(id(v), _Slot(f"a{i}"))
            elif type(v) in (list, tuple):
                for j, x in enumerate(v):
                    if isinstance(x, Tensor):
                        self.slots.setdefault(id(x), _Slot(f"a{i}[{j}]"))

    def fail(self, why: str) -> None:
        """Mark this call as not plannable (the first reason is kept)."""
        if self.failed is None:
            self.failed = why

    def template(self, value):
        """The argument template of ``value``: a slot, a constant, or a container of them."""
        tv = type(value)
        if isinstance(value, Tensor):
            slot = self.slots.get(id(value))
            if slot is not None:
                return slot
            if value._st is None and value._native is not None and not value._shape:
                self.keep.append(value)
                self.constants.append(value)
                slot = self.slots[id(value)] = _Const(len(self.constants) - 1)
                return slot
            self.fail("a tensor made outside the dispatcher")
            return None
        if tv is list or tv is tuple:
            return tv(self.template(x) for x in value)
        if value is None or tv in _SCALAR_TYPES or tv is str:
            return value
        if type(value).__module__ in ("opweave._dtype", "opweave._device"):
            return value
        self.fail(f"an argument of type {tv.__name__}")
        return None

    def add_step(self, op, kernel, template: tuple, out, why: str) -> None:
        """Record ``out = kernel(*args)`` as the next step (``template``: the arguments, see :meth:`template`)."""
        if self.failed is not None:
            return
        name = f"r{len(self.steps)}"
        layout = None
        if "view" in op.tags and why.endswith("CompositeExplicit kernel from core") and type(out) is Tensor:
            if type(template[0]) is _Slot and out._qparams is None:
                layout = (out._shape, tuple(out.stride()), out._offset, out._dtype)
        self.steps.append(Step(op, kernel, template, why, layout))
        self.keep.append(out)
        self.keep_out.append(out)
        if isinstance(out, Tensor):
            self.slots.setdefault(id(out), _Slot(name))
        elif type(out) in (tuple, list) and all(isinstance(o, Tensor) for o in out):
            for j, o in enumerate(out):
                self.slots.setdefault(id(o), _Slot(f"{name}[{j}]"))
        elif out is not None:
            self.fail(f"{op.name} returns a Python value")

    def finish(self, out, keyset: int):
        """The Plan of this call, or the reason it has none."""
        if self.failed is None:
            if isinstance(out, Tensor):
                result = self.slots.get(id(out))
            elif type(out) in (tuple, list) and all(isinstance(o, Tensor) for o in out):
                names = [self.slots.get(id(o)) for o in out]
                result = None if any(n is None or isinstance(n, _Const) for n in names) else _result_tuple(out, names)
            else:
                result = None
            if result is None or isinstance(result, _Const):
                self.fail("the result is not made by a traced kernel")
            else:
                self._fold(result)
                result = _rename_text(result, self.result_renames)
                if self.failed is not None:
                    return self.failed
                return Plan(self.op, keyset, self.steps, result, self.constants, _dispatcher.plan_generation)
        return self.failed

    def _fold(self, result: str) -> None:
        """Constant folding: a step that only reads constants (``broadcast_in_dim`` of a wrapped scalar)
        or makes a fixed value (``full``, ``scalar_tensor``, ``iota``) becomes a constant, its recorded
        output kept. A step whose output — or a view of it — is written or returned is never folded
        (each call gets its own memory), nor one whose output is not on the CPU (a plan keeps no
        device memory alive)."""
        root = {}  # slot -> the slot (or constant) whose memory it views (itself when it is not a view)
        for i, step in enumerate(self.steps):
            source = step.args[0] if step.args else None
            if "view" in step.op.tags and isinstance(source, _Slot):
                base = str(source).split("[")[0]
                root[f"r{i}"] = root.get(base, base)
            elif "view" in step.op.tags and isinstance(source, _Const):
                root[f"r{i}"] = source
        if any(isinstance(root.get(x), _Const) for x in _slots_in_text(result)):
            self.fail("the result is a view of a constant")
            return
        forbidden = set()
        for step in self.steps:
            mutated = step.op.schema.mutated_arguments
            for arg, value in zip(step.op.schema.arguments, step.args):
                if arg.name in mutated:
                    forbidden.update(root.get(x, x) for x in _slots_in(value))
        forbidden.update(root.get(x, x) for x in _slots_in_text(result))
        folded = {}  # slot name -> constant
        kept = []
        for i, step in enumerate(self.steps):
            args = tuple(_substitute(a, folded) for a in step.args)
            name = f"r{i}"
            out = self.keep_out[i]
            leaves = list(_leaves(args))
            foldable = (
                type(out) is Tensor
                and out._device.type == "cpu"  # a plan holds no device memory (allocators return to baseline)
                and not step.op.schema.mutated_arguments
                and not (step.op.tags & UNPLANNABLE_TAGS)
                and (step.op.name in _VALUE_FACTORIES or any(isinstance(x, _Const) for x in leaves))
                and not any(isinstance(x, _Slot) for x in leaves)
                and name not in forbidden
            )
            if foldable:
                self.constants.append(out)
                folded[name] = _Const(len(self.constants) - 1)
                continue
            kept.append((name, Step(step.op, step.kernel, args, step.why, step.layout)))
        if not folded:
            return
        renames = {old: _Slot(f"r{j}") for j, (old, _) in enumerate(kept)}
        self.steps = [Step(st.op, st.kernel, _substitute(st.args, renames), st.why, st.layout) for _, st in kept]
        self.result_renames = renames


def _leaves(value):
    if isinstance(value, (list, tuple)) and not isinstance(value, _Slot):
        for x in value:
            yield from _leaves(x)
    else:
        yield value


def _slots_in(value) -> set:
    return {str(x).split("[")[0] for x in _leaves(value) if isinstance(x, _Slot)}


def _slots_in_text(text: str) -> set:
    import re

    return set(re.findall(r"r\d+", text))


def _substitute(value, mapping: dict):
    if isinstance(value, _Slot):
        base, _, rest = str(value).partition("[")
        new = mapping.get(base)
        if new is None:
            return value
        if isinstance(new, _Const):
            return new  # pragma: no cover - folded steps return one tensor, never indexed
        return _Slot(str(new) + ("[" + rest if rest else ""))
    if isinstance(value, (list, tuple)):
        return type(value)(_substitute(x, mapping) for x in value)
    return value


def _rename_text(text: str, mapping: dict) -> str:
    import re

    return re.sub(r"r\d+", lambda m: str(mapping.get(m.group(0), m.group(0))), text)


def _result_tuple(out, names) -> str:
    body = ", ".join(names) + ("," if len(names) == 1 else "")
    if type(out) is list:
        return f"[{body}]"
    if type(out) is tuple:
        return f"({body})"
    return f"type(r0)(({body}))"  # pragma: no cover - only tuples and lists reach here


def note_unplannable(why: str) -> None:
    """Called where Python code reads tensor data or changes metadata: a call being traced is not planned."""
    recorder = _tls.recorder
    if recorder is not None and not recorder.in_leaf:
        recorder.fail(why)


def trace_fallback(op, keyset: int, *args):
    """The Trace layer's boxed kernel: run ``op`` below Trace, recording the kernel that ran as a step."""
    below = keyset & ~TRACE_BIT
    recorder = _tls.recorder
    if recorder is None or recorder.in_leaf:
        return op.redispatch(below, *args)
    if op.tags & UNPLANNABLE_TAGS:
        recorder.fail(f"it calls {op.name}")
    backends = below >> LAYER_BITS
    if backends & (backends - 1):
        below = _dispatcher.mixed_device_keyset(op, below, args)
    declines = []  # (candidate, its reason) of the kernels that declined, for ``explain``
    for fn, why in _dispatcher.candidates(op, below):
        planned_fn = planned_kernel(fn)
        if planned_fn is not None or fn is op.decomposition:
            decomposition = fn if planned_fn is None else planned_fn.decomposition
            if declines:
                _dispatcher.declines[(op.name, below)] = declines
            return decomposition(*args)  # descend: the ops it calls are traced
        template = tuple(recorder.template(a) for a in args) if recorder.failed is None else ()
        state = _state()
        saved = state.included
        state.included = saved & ~TRACE_BIT
        recorder.in_leaf += 1
        try:
            out = fn(*args)
        except _Decline as exc:
            declines.append((why, str(exc)))
            continue
        finally:
            recorder.in_leaf -= 1
            state.included = saved
        recorder.add_step(op, getattr(fn, "unchecked", fn), template, out, why)
        if declines:
            _dispatcher.declines[(op.name, below)] = declines
        return out
    raise NotImplementedError(_dispatcher._missing_message(op, below))


# -- OPWEAVE_CHECK_PLANS -----------------------------------------------------------------------


def _checked(planned: Planned, plan: Plan, args: tuple):
    """Run the decomposition, put written arguments back, run the plan; PlanCheckError if they differ."""
    global _enabled
    op = planned.op
    names = op.schema.mutated_arguments
    written = [a for a, arg in zip(args, op.schema.arguments) if arg.name in names and isinstance(a, Tensor)]
    before = [(_layout(t), t._st, _copy(_host(t))) for t in written]
    was, _enabled = _enabled, False  # the reference run plans nothing, inner ops included
    try:
        expected = planned.decomposition(*args)
    finally:
        _enabled = was
    after = [(_layout(t), _copy(_host(t))) for t in written]
    for t, (layout, storage, values) in zip(written, before):
        if _layout(t) != layout:  # resize_ and friends: the plan starts from the same tensor
            t._set_metadata(storage if storage is not None else t._storage, layout[0], layout[1], layout[2])
        _host_write(t, values)
    try:
        got = plan.run(*args)
    except BaseException as exc:
        raise PlanCheckError(f"{op.name}: the plan raised {type(exc).__name__}: {exc}\n{plan}") from exc
    _compare(op, plan, got, expected, args)
    check_values = not op.name.startswith(_NO_VALUE_CHECK)
    for t, (layout, values) in zip(written, after):
        if _layout(t) != layout:
            raise PlanCheckError(f"{op.name}: the plan left an argument as {_layout(t)}, not {layout}\n{plan}")
        if check_values and not _same_values(_host(t), values):
            raise PlanCheckError(f"{op.name}: the plan wrote different values into an argument\n{plan}")
    return got


def _layout(t: Tensor) -> tuple:
    return (tuple(t._shape), tuple(t.stride()), t._offset)


def _host(t: Tensor):
    if t._device.type == "meta":
        return None  # no data: metadata is compared only
    return np.asarray(_backends.get(t._device.type).copy_to_host(t))


def _copy(values):
    return None if values is None else values.copy()


def _host_write(t: Tensor, values) -> None:
    if values is None:
        return
    backend = _backends.get(t._device.type)
    view = backend.host_view(t)
    if view is not None:
        view[...] = values
        return
    ops = _dispatcher.ops
    host = _backends.get("cpu").from_host(values, None)
    ops["prims::copy_to"](t, ops["prims::device_put"](host, t._device, False))


def _same_values(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.array_equal(a, b, equal_nan=True))
    if a.dtype.kind == "V" or a.dtype.kind == "O":
        return a.tobytes() == b.tobytes()
    return bool(np.array_equal(a, b))


def _compare(op, plan: Plan, got, expected, args) -> None:
    if isinstance(expected, Tensor):
        got, expected = (got,), (expected,)
    if type(got) not in (tuple, list) or len(got) != len(expected):
        raise PlanCheckError(f"{op.name}: the plan returned {type(got).__name__}, the decomposition did not\n{plan}")
    values = not op.name.startswith(_NO_VALUE_CHECK)
    for i, (g, e) in enumerate(zip(got, expected)):
        where = f"{op.name}: result {i}:"
        if (g is e) or (any(g is a for a in args) != any(e is a for a in args)):
            if g is not e and (any(g is a for a in args) or any(e is a for a in args)):
                raise PlanCheckError(f"{where} one of plan and decomposition returned an argument\n{plan}")
            continue
        if g._dtype is not e._dtype or g._shape != e._shape or g._device != e._device:
            raise PlanCheckError(
                f"{where} plan gave {g._dtype.name}{list(g._shape)} on {g._device}, "
                f"decomposition {e._dtype.name}{list(e._shape)} on {e._device}\n{plan}"
            )
        if g.numel() > 1 and g.stride() != e.stride():
            raise PlanCheckError(f"{where} plan strides {g.stride()}, decomposition {e.stride()}\n{plan}")
        if values and not _same_values(_host(g), _host(e)):
            raise PlanCheckError(f"{where} values differ\n{plan}")


# -- inspection -------------------------------------------------------------------------------


def plans_of(op: OpOverload) -> list[Plan]:
    """The plans recorded for ``op`` (every key set), newest last."""
    return [p for planned in planned_of(op) for p in planned.plans.values() if isinstance(p, Plan)]


def planned_of(op) -> list:
    """The :class:`Planned` kernels of ``op`` in its dispatch cache (one per key set that runs its decomposition)."""
    found = []
    for entry in _dispatcher.cache_for(op).values():
        entry_planned = planned_kernel(entry)
        if entry_planned is not None:
            found.append(entry_planned)
        elif type(entry) is tuple:  # (first candidate's reason, the candidates after it) of a declined kernel
            if type(entry[1]) is list:
                found.extend(planned_kernel(fn) for fn, _ in entry[1] if planned_kernel(fn) is not None)
    return found
