"""Plant every generic fault into every prim and measure what the quick conformance profile catches.

The planted-fault tests (``tests/test_conformance_faults.py``) hold hand-written faults, one
per bug a vendor is known to make. This sweep generalises them: each fault kind below is a
wrapper around any CPU prim kernel, planted into one prim at a time of a shadow backend
(``opweave_conformance.testing``), and the suite runs on that prim's own entry only. A fault
that never changed a result during the run (``-0.0`` handling in a prim that never yields
``-0.0``) is *inactive* and not counted; an active fault that the run did not fail is a
*miss*, printed with the dtypes it changed, so the sample sets can be made to reach it.

    python scripts/fault_sweep.py                 # every prim, every kind
    python scripts/fault_sweep.py --prims 'add,sum*' --kinds value,strided
"""

from __future__ import annotations

import argparse
import fnmatch
import itertools
import sys
import time
from collections.abc import Callable

import numpy as np
import opweave as ow
import opweave_conformance as conformance
from opweave_conformance import opdb
from opweave_conformance import testing as T
from opweave_cpu import from_host_array, host_array

_counter = itertools.count()


def _tensors(value) -> list:
    if isinstance(value, ow.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    return []


def _bits(t: ow.Tensor) -> np.ndarray:
    a = np.ascontiguousarray(host_array(t))
    return a.view(np.uint8) if a.dtype.itemsize and a.size else a


def _changed(old, new, strides: bool = False) -> bool:
    """Whether ``new`` differs from ``old`` in dtype, shape or values' bits (or strides, if asked)."""
    for o, n in zip(_tensors(old), _tensors(new), strict=False):
        if o.dtype != n.dtype or o.shape != n.shape or (strides and o.stride() != n.stride()):
            return True
        if not np.array_equal(_bits(o), _bits(n)):
            return True
    return False


def _map_outputs(out, fn):
    """``out`` with every tensor replaced by ``fn(tensor)`` (a tuple/list stays one)."""
    if isinstance(out, ow.Tensor):
        return fn(out)
    if isinstance(out, (tuple, list)):
        return type(out)(_map_outputs(v, fn) for v in out)
    return out


def _host_result(t: ow.Tensor, array: np.ndarray) -> ow.Tensor:
    """``array`` as a tensor of ``t``'s dtype, in ``array``'s own memory layout (``t``'s, for a copy of it)."""
    return from_host_array(array.astype(t.dtype.numpy, copy=False), t.dtype)


def _copy(t: ow.Tensor) -> np.ndarray:
    """A copy of ``t``'s elements keeping its memory order (so that a changed value is the only change)."""
    return np.array(host_array(t), copy=True, order="K")


def _is_float(t) -> bool:
    return t.dtype.is_floating_point or t.dtype.is_complex


def _perturb(t: ow.Tensor) -> ow.Tensor:
    """One element wrong by a relative 1% (floats) or by one (integers, bool flipped)."""
    if not t.numel():
        return t
    a = _copy(t)
    i = np.unravel_index(a.size // 2, a.shape)
    if t.dtype is ow.bool:
        a[i] = not a[i]
    elif _is_float(t):
        with np.errstate(all="ignore"):
            v = a[i]
            a[i] = v * 1.01 if np.isfinite(v) and v != 0 else (1.0 if not np.isfinite(v) else 0.5)
    else:
        with np.errstate(all="ignore"):
            a[i] = a[i] + np.array(1, a.dtype)
    return _host_result(t, a)


def _last_lost(t: ow.Tensor) -> ow.Tensor:
    """The last element left at zero (a loop bound one short)."""
    if t.numel() < 2:
        return t
    a = _copy(t)
    a[np.unravel_index(a.size - 1, a.shape)] = 0
    return _host_result(t, a)


def _nan_to_zero(t: ow.Tensor) -> ow.Tensor:
    if not _is_float(t):
        return t
    a = _copy(t)
    return _host_result(t, np.where(np.isnan(a), 0, a))


def _signless_zero(t: ow.Tensor) -> ow.Tensor:
    if not t.dtype.is_floating_point:
        return t
    a = _copy(t)
    with np.errstate(all="ignore"):
        return _host_result(t, a + 0.0)


def _inf_saturated(t: ow.Tensor) -> ow.Tensor:
    if not t.dtype.is_floating_point or t.dtype.itemsize < 2:
        return t
    a = _copy(t)
    big = float(ow.finfo(t.dtype).max)
    return _host_result(t, np.where(np.isposinf(a), big, np.where(np.isneginf(a), -big, a)))


def _flush_subnormals(t: ow.Tensor) -> ow.Tensor:
    """float16 results below the normal range flushed to a zero of their sign (FTZ in a 16-bit kernel).

    float16 only: PyTorch computes float16 ops in float32, where every float16 subnormal is a
    normal number; bfloat16's subnormals lie below float32's normal range, where the suite lets a
    kernel flush (as float32 kernels running with FTZ do).
    """
    if t.dtype is not ow.float16:
        return t
    a = _copy(t)
    tiny = float(ow.finfo(t.dtype).tiny)
    with np.errstate(all="ignore"):
        return _host_result(t, np.where(np.abs(a) < tiny, np.copysign(np.zeros_like(a), a), a))


def _wrong_dtype(t: ow.Tensor) -> ow.Tensor:
    other = ow.float32 if t.dtype is ow.float64 else (ow.int32 if t.dtype is ow.int64 else ow.float64)
    if t.dtype is ow.bool:
        other = ow.uint8
    with np.errstate(all="ignore"):
        return from_host_array(_copy(t).astype(other.numpy), other)


def _column_major(t: ow.Tensor) -> ow.Tensor:
    if t.ndim < 2 or t.numel() < 2:
        return t
    return from_host_array(np.asfortranarray(host_array(t)), t.dtype)


def _output_fault(transform: Callable) -> Callable:
    def fault(kernel):
        def faulty(*args):
            return _map_outputs(kernel(*args), transform)

        return faulty

    return fault


class _Flaky:
    """Every other call returns a result one ulp away (floating results): thread-order rounding."""

    def __init__(self):
        self.calls = 0

    def __call__(self, kernel):
        def faulty(*args):
            out = kernel(*args)
            self.calls += 1
            if self.calls % 2:
                return out
            return _map_outputs(out, self._nudge)

        return faulty

    @staticmethod
    def _nudge(t):
        if not t.dtype.is_floating_point or not t.numel():
            return t
        a = _copy(t)
        nonzero = np.argwhere(np.isfinite(a) & (a != 0))
        if not len(nonzero):
            return t
        i = tuple(nonzero[0])
        a[i] = np.nextafter(a[i], np.array(np.inf, a.dtype))
        return _host_result(t, a)


#: kind -> fault(cpu_kernel) -> kernel (a fresh fault per plant; ``_Flaky`` keeps a call count).
KINDS: dict[str, Callable[[], Callable]] = {
    "value": lambda: _output_fault(_perturb),
    "last-element": lambda: _output_fault(_last_lost),
    "dtype": lambda: _output_fault(_wrong_dtype),
    "strides": lambda: _output_fault(_column_major),
    "strided-input": lambda: T.wrong_when_strided,
    "mutates-input": lambda: T.mutates_input,
    "nan": lambda: _output_fault(_nan_to_zero),
    "negative-zero": lambda: _output_fault(_signless_zero),
    "inf": lambda: _output_fault(_inf_saturated),
    "flushes-subnormals": lambda: _output_fault(_flush_subnormals),
    "int-saturates": lambda: T.saturating,
    "nondeterministic": _Flaky,
}


#: Kinds that change values only: they mean nothing for ops whose values are undefined (``empty``).
VALUE_KINDS = frozenset({"value", "last-element", "nan", "negative-zero", "inf", "flushes-subnormals", "int-saturates"})
#: Kinds that change which bits come back twice: they mean nothing for ops whose values are undefined
#: either (``empty_permuted``'s two calls may return different garbage; only its strides are promised).
NONDETERMINISM_KINDS = frozenset({"nondeterministic"})


def _watched(fault: Callable, active: dict, strides: bool) -> Callable:
    """``fault`` that records, per dtype of its first tensor argument, whether it changed a result.

    The correct kernel runs first on the same arguments (prims are functional, so the inputs
    are intact for the faulty call); a change of the outputs, or of the inputs by the faulty
    call, makes the fault active.
    """

    def wrapped(kernel):
        faulty = fault(kernel)

        def run(*args):
            inputs = _tensors(list(args))
            key = inputs[0].dtype.name if inputs else "-"
            try:
                good = kernel(*args)
            except Exception:
                good = None
            before = [_bits(t).copy() for t in inputs]
            out = faulty(*args)
            if good is None or _changed(good, out, strides):
                active[key] = True
            elif any(not np.array_equal(b, _bits(t)) for b, t in zip(before, inputs, strict=True)):
                active[key] = True
            return out

        return run

    return wrapped


def plant(prim: str, kind: str) -> tuple[bool, bool, set, str]:
    """Plant ``kind`` into ``prim``; (active, caught, dtypes it changed, the report's reason)."""
    active: dict = {}
    info = opdb.get(prim)
    if kind == "strides" and not info.promises_strides:
        return False, False, set(), "the meta layout is advisory for this prim"
    if kind in VALUE_KINDS and (info.values_undefined or info.random):
        return False, False, set(), "values undefined or random (the random checks are statistical)"
    if kind in NONDETERMINISM_KINDS and info.values_undefined:
        return False, False, set(), "values undefined: two calls may return different bits"
    name = f"sweep{next(_counter)}"
    T.install(name, {prim: _watched(KINDS[kind](), active, strides=kind == "strides")})
    report = conformance.run(name, ops=prim, gradients=0)
    failed = [r.reason for r in report.ops if r.status == "fail"]
    failed += [f"{c.check} [{c.dtype}]: {c.message}" for c in report.failed_backend_checks]
    return bool(active), bool(failed), set(active), failed[0] if failed else ""


def main(argv=None) -> int:
    """Run the sweep and print the catch rate per kind and every miss."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prims", default="*", help="comma-separated fnmatch patterns on prim names (no prims::)")
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated fault kinds")
    args = parser.parse_args(argv)
    patterns = args.prims.split(",")
    prims = sorted(
        op for op in T.cpu_kernels() if any(fnmatch.fnmatchcase(op.removeprefix("prims::"), p) for p in patterns)
    )
    kinds = args.kinds.split(",")
    totals = {k: [0, 0] for k in kinds}
    misses = []
    start = time.perf_counter()
    for prim in prims:
        for kind in kinds:
            try:
                active, caught, dtypes, _ = plant(prim, kind)
            except Exception as exc:  # the harness itself failed: report, go on
                print(f"  {prim} {kind}: sweep error {type(exc).__name__}: {exc}", file=sys.stderr)
                continue
            if not active:
                continue
            totals[kind][0] += 1
            totals[kind][1] += caught
            if not caught:
                misses.append((prim, kind, sorted(dtypes)))
                print(f"  MISS {prim:32} {kind:18} changed {', '.join(sorted(dtypes))}", flush=True)
    print(f"\n{len(prims)} prims, {time.perf_counter() - start:.0f} s")
    print(f"{'kind':18} {'active':>7} {'caught':>7}")
    all_active = all_caught = 0
    for kind, (n, c) in totals.items():
        print(f"{kind:18} {n:7d} {c:7d}  {100 * c / n if n else 100:5.1f}%")
        all_active, all_caught = all_active + n, all_caught + c
    print(f"{'all':18} {all_active:7d} {all_caught:7d}  {100 * all_caught / max(all_active, 1):5.1f}%")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
