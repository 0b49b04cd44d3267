"""Invalid-argument fuzz over every operator of the catalog, on one backend, in its own process.

Each op's valid sample (``catalog_samples``) is broken in one way, drawn from a seeded generator: a wrong dtype,
shape or device for a tensor, ``None``, a wrong Python type, a negative or huge size, an unknown keyword, a missing or
an extra argument. The call must either succeed or raise TypeError/ValueError/RuntimeError/NotImplementedError/
IndexError whose message names the op; no input may change (on success, only the arguments the schema marks
``Tensor(a!)``). Run as ``python tests/fuzz_invalid.py BACKEND SEED [ROUNDS [SHARDS]]``: it prints one JSON line
per problem and a last line ``{"done": ...}``. ``test_fuzz_invalid.py`` runs it in a subprocess, so that a crash
of the process (a segfault in a cffi or OpenCL call) fails the test naming the last op, not the test run.
"""

from __future__ import annotations

import importlib
import json
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import opweave as ow  # noqa: E402

samples = importlib.import_module("catalog_samples")

ALLOWED = (TypeError, ValueError, RuntimeError, NotImplementedError, IndexError)
DTYPES = (ow.bool, ow.uint8, ow.int8, ow.int32, ow.int64, ow.float16, ow.bfloat16, ow.float32, ow.float64, ow.complex64)
HUGE = 1 << 40  # 1 Ti elements: a size no allocation may attempt
BAD_INTS = (-1, -(1 << 62), HUGE, 1 << 62, 1 << 70, 1.5, "3", None, True, [1])
BAD_INT_LISTS = ([], [-1], [-3, 2], [HUGE, HUGE], [1 << 62], [1] * 9, "ab", None, [1.5], [None])
BAD_FLOATS = ("x", None, [1.0], 1j)
BAD_SCALARS = ("x", None, [1], object())
BAD_OTHER = (3, "nonsense", None, object(), [])


def ops_for(backend: str) -> list:
    """The overloads fuzzed on ``backend``: every overload; the quantized ones (and their inputs) for x86quant."""
    ops = ow.ops.catalog()
    if backend == "x86quant":
        return [o for o in ops if o.schema.namespace == "quantized" or "quantize" in o.name]
    return [o for o in ops if o.schema.namespace != "quantized"]


def device_of(backend: str) -> str:
    return "cpu" if backend == "x86quant" else backend


def other_device(device: str) -> str:
    return "meta" if device == "cpu" else "cpu"


def tensors_in(value):
    """The tensors in an argument (a tensor, a list of them, or none)."""
    if isinstance(value, ow.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, ow.Tensor)]
    return []


def snapshot(t) -> bytes | None:
    """A tensor's element bytes (None for meta tensors, which hold none)."""
    if t.device.type == "meta":
        return None
    if t.is_quantized:
        t = t.int_repr()
    return np.ascontiguousarray(t.numpy(force=True)).tobytes() + repr((tuple(t.shape), t.dtype)).encode()


def break_tensor(t, rng, device):
    """One way to make a tensor argument wrong, and its description."""
    kind = rng.integers(7)
    if kind == 0 and not t.is_quantized:
        dtype = DTYPES[rng.integers(len(DTYPES))]
        return t.to(dtype), f"dtype {dtype}"
    if kind == 1:
        return ow.zeros((5, 1, 7), dtype=t.dtype if not t.is_quantized else ow.float32, device=device), "shape (5,1,7)"
    if kind == 2:
        return ow.zeros((), dtype=ow.float32, device=device), "0-dim"
    if kind == 3 and not t.is_quantized:
        return t.to(other_device(device)), f"device {other_device(device)}"
    if kind == 4:
        return [[1, 2], [3, 4]], "nested list"
    if kind == 5:
        return "tensor", "str"
    return None, "None"


def break_value(arg, value, rng, device):
    """A wrong value for one argument of the schema, and its description."""
    ty = arg.type
    if ty.name == "Tensor" and not ty.is_list:
        return break_tensor(value, rng, device) if isinstance(value, ow.Tensor) else ("x", "str")
    if ty.name == "Tensor":
        items = list(value) if isinstance(value, (list, tuple)) else []
        if items and rng.integers(2) and isinstance(items[0], ow.Tensor):
            items[0], what = break_tensor(items[0], rng, device)
            return items, f"element 0: {what}"
        choice = [[], None, "x", [1, 2]][rng.integers(4)]
        return choice, repr(choice)
    if ty.name in ("int", "SymInt"):
        pool = BAD_INT_LISTS if ty.is_list else BAD_INTS
    elif ty.name == "float":
        pool = BAD_FLOATS
    elif ty.name == "Scalar":
        pool = BAD_SCALARS
    else:
        pool = BAD_OTHER
    choice = pool[rng.integers(len(pool))]
    return choice, repr(choice)


def mutate(op, args, kwargs, rng, device):
    """Break one argument of a valid call (or its arity), in place; the description."""
    schema = op.schema
    named = list(zip([a for a in schema.arguments if not a.kwarg_only], range(len(args))))
    present = [(a, ("pos", i)) for a, i in named] + [(a, ("kw", a.name)) for a in schema.arguments if a.name in kwargs]
    roll = rng.integers(10)
    if roll == 0 or not present:
        kwargs["no_such_argument"] = 1
        return "unknown keyword"
    if roll == 1:
        args.append(ow.zeros((2,), device=device))
        args.append(7)
        return "two extra positional arguments"
    arg, (where, key) = present[rng.integers(len(present))]
    if roll == 2 and where == "kw" and not arg.has_default:
        del kwargs[key]
        return f"{arg.name} missing"
    old = args[key] if where == "pos" else kwargs[key]
    new, what = break_value(arg, old, rng, device)
    if where == "pos":
        args[key] = new
    else:
        kwargs[key] = new
    return f"{arg.name}: {what}"


def names_of(op) -> set:
    """Names an error message may use for ``op``: its own, its functional op's, without ``prims::`` or ``_``."""
    names = set()
    for o in (op, op.functional):
        if o is None:
            continue
        base = o.schema.name
        names |= {base, base.rstrip("_"), o.name}
    return {n for n in names if n}


def run_one(op, device, rng):
    """Fuzz one call of ``op``; a problem's description, or None."""
    functional = op.functional or op
    try:
        args, kwargs = samples.build(functional)
        args, kwargs = samples.to_device(args, device), samples.to_device(kwargs, device)
        if op.variant == "out":
            result = functional(*args, **kwargs)
            results = result if isinstance(result, tuple) else (result,)
            given = {a.name for a in functional.schema.arguments}
            outs = [a.name for a in op.schema.arguments if a.name not in given]
            for name, r in zip(outs, results):
                kwargs[name] = ow.empty(tuple(r.shape), dtype=r.dtype, device=device)
    except Exception:  # no valid sample on this device: nothing to break
        return None
    try:
        what = mutate(op, args, kwargs, rng, device)
    except Exception:  # the device cannot hold the wrong value (a dtype it lacks): break the call another way
        kwargs["no_such_argument"] = 1
        what = "unknown keyword"
    inputs = [t for v in (*args, *kwargs.values()) for t in tensors_in(v)]
    before = [(t, snapshot(t)) for t in inputs]
    # batch_norm's running statistics are updated in training mode without a write annotation, as in ATen
    writable = set(op.schema.mutated_arguments) | {"running_mean", "running_var"}
    written = {
        id(t)
        for name, v in (*zip([a.name for a in op.schema.arguments], args), *kwargs.items())
        if name in writable
        for t in tensors_in(v)
    }
    error = None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op(*args, **kwargs)
    except ALLOWED as exc:
        message = str(exc)
        if not any(n in message for n in names_of(op)):
            error = f"{type(exc).__name__} does not name the op: {message[:200]}"
    except BaseException as exc:  # noqa: BLE001 - any other type is the finding
        error = f"raised {type(exc).__name__}: {str(exc)[:200]}"
    else:
        for t, snap in before:
            if id(t) not in written and snap is not None and snapshot(t) != snap:
                return {"op": op.name, "mutation": what, "problem": "an input changed"}
        return None
    for t, snap in before:
        if snap is not None and snapshot(t) != snap:
            error = (error + "; " if error else "") + "a failing call changed an input"
    return None if error is None else {"op": op.name, "mutation": what, "problem": error}


def main(backend: str, seed: int, rounds: int, shards: int = 1) -> None:
    """Fuzz every op of ``backend`` ``rounds`` times; with ``shards`` > 1 only the ops of shard ``seed % shards``."""
    if backend == "x86quant":
        ow.backends.quantized.engine = "x86"
    device = device_of(backend)
    ops = [o for o in ops_for(backend) if zlib.crc32(o.name.encode()) % shards == seed % shards]
    calls = 0
    for op in ops:
        rng = np.random.default_rng([seed, zlib.crc32(op.name.encode())])
        for _ in range(rounds):
            print(json.dumps({"op": op.name}), file=sys.stderr, flush=True)  # the last op, should the process die
            problem = run_one(op, device, rng)
            calls += 1
            if problem is not None:
                print(json.dumps(problem), flush=True)
    print(json.dumps({"done": calls, "ops": len(ops), "backend": backend}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), *(int(v) for v in sys.argv[3:5]))
