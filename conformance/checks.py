"""The checks the suite runs for one backend, one :class:`OpInfo`, one dtype and one sample.

Every check raises :class:`CheckFailure` (naming the check, with details that go
into the report) or :class:`NotImplementedKernel` (the dispatcher found no
kernel: the backend lacks a prim). Functional ops get: values against the oracle
(or, without one, against the CPU reference backend), output shape, dtype and
device against the meta device (strides and offset too for views), inputs left
unmodified, views aliasing their base both ways, seeded reproducibility for random
ops, bitwise-reproducible results in deterministic mode, declared error inputs, and
the allocator back at its baseline. Generated variants get in-place semantics
(identity, same storage, the functional's values, errors for a broadcast of self or
an unsafe cast leaving self unchanged) and ``out=`` semantics (the out tensors are
returned and written in place; a wrong-shaped ``out`` is resized with a warning).
Backend-wide checks: the exact round trip CPU → device → CPU of every dtype and
deterministic mode's filling of uninitialised memory.
"""

from __future__ import annotations

import contextlib
import gc
import math
import traceback
import warnings
from dataclasses import dataclass, field

import numpy as np
import opweave as ow

from .opdb._core import Arr, ErrorInput, OpInfo, SampleInput, make_values
from .tensors import build, build_arr, encode_array, oracle_args, tensors_of, to_host, widen

P = ow.ops.prims
REFERENCE = "cpu"


class CheckFailure(Exception):
    """A check failed: ``check`` names it, ``message`` says what went wrong, ``details`` hold the evidence."""

    def __init__(self, check: str, message: str, **details):
        super().__init__(f"[{check}] {message}")
        self.check = check
        self.message = message
        self.details = details


class NotImplementedKernel(Exception):
    """The backend has no kernel for an op this sample needs (NotImplementedError from dispatch)."""


@dataclass
class Context:
    """What the checks need to know about the run: the backend, its tolerances, its allocator statistics."""

    backend: str
    tolerances: dict = field(default_factory=dict)  # dtype name -> (rtol, atol), from the backend's config
    memory_stats: object = None  # callable() -> dict with "allocated", or None
    check_allocator: bool = True

    @property
    def device(self) -> str:
        """The device string tensors are built on."""
        return self.backend

    @property
    def is_reference(self) -> bool:
        """Whether this backend is the CPU reference backend itself."""
        return self.backend == REFERENCE

    def tolerance(self, info: OpInfo, dtype) -> tuple:
        """The op's tolerance for ``dtype`` widened by the backend's own (the larger of each)."""
        rtol, atol = info.tolerance(dtype)
        brtol, batol = self.tolerances.get(dtype.name, (0.0, 0.0))
        return max(rtol, brtol), max(atol, batol)


@contextlib.contextmanager
def quiet():
    """Silence warnings and NumPy floating-point errors (ops and oracles on special values)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


def is_missing_kernel(exc: BaseException) -> bool:
    """Whether ``exc`` is the dispatcher's "no kernel" NotImplementedError."""
    return isinstance(exc, NotImplementedError) and "no kernel" in str(exc)


def call(op, args, kwargs):
    """Call ``op``; a missing kernel becomes :class:`NotImplementedKernel`."""
    try:
        with quiet():
            return op(*args, **kwargs)
    except NotImplementedError as exc:
        if is_missing_kernel(exc):
            raise NotImplementedKernel(str(exc)) from None
        raise


# -- values ------------------------------------------------------------------------------------


def compare(
    actual,
    expected,
    dtype,
    rtol: float,
    atol: float,
    exact: bool = False,
    ulps: float | None = None,
    signed_zeros: bool = False,
    nonfinite_only: bool = False,
    subnormals: bool = False,
) -> dict | None:
    """``None`` if ``actual`` matches ``expected`` (rounded to ``dtype``) within tolerance, else the evidence.

    Integers and bool compare exactly; floating values match nan for nan, infinities
    exactly, and finite values within ``atol + rtol * |expected|`` (complex: both parts),
    or, when ``ulps`` is given, within ``ulps`` units in the last place of the rounded
    expected value in ``dtype`` (:func:`ulp`); with ``signed_zeros`` a zero must have the
    expected zero's sign (``-0.0`` is not ``0.0``). The integers of quantized dtypes compare
    within ``atol`` when one is given (``atol=1``: one quantization step, for engines whose
    requantization rounds differently). With ``nonfinite_only`` only this is checked: where the
    oracle holds a nan or ±inf, ``actual`` holds one too (anywhere: algorithms spread them differently).
    With ``subnormals``, where the rounded expected value is subnormal in ``dtype`` the tolerance is
    relative only (``rtol``, and at least :data:`SUBNORMAL_ULPS` units in the last place): ``atol``
    does not hide a kernel that flushes a subnormal result to zero, and zero signs are checked only where
    ``expected`` itself is zero (the sign of a value that merely rounds to zero, such as
    ``tiny * -tiny``, depends on the precision of the intermediate steps: PyTorch's float32 gives ``+0.0``
    for ``0 + tiny * -tiny`` in bfloat16).
    """
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    if expected.shape != actual.shape:
        return {"reason": f"shape {list(actual.shape)} != expected {list(expected.shape)}"}
    with quiet():
        want = expected.astype(dtype.numpy) if dtype is not None else expected
    if nonfinite_only and want.dtype.kind in "fc":
        lost = actual.dtype.kind not in "fc" or bool(np.isfinite(actual).all())
        bad = ~np.isfinite(want) if lost else np.zeros(want.shape, bool)
    elif dtype is not None and dtype.is_quantized and atol and not exact:
        bad = np.abs(actual.astype(np.int64) - want.astype(np.int64)) > atol
    elif actual.dtype.kind in "biu" and want.dtype.kind in "biu":
        bad = actual != want
    else:
        a, w = widen(actual), widen(want)
        if exact:
            rtol = atol = 0.0
        if ulps is not None and dtype is not None and not exact and w.dtype.kind == "f":
            bad = _bad_ulps(a.astype(np.float64), w.astype(np.float64), dtype, ulps)
        elif a.dtype.kind == "c" or w.dtype.kind == "c":
            bad = _bad_complex(a.astype(np.complex128), w.astype(np.complex128), rtol, atol)
        else:
            bad = _bad(a.astype(np.float64), w.astype(np.float64), rtol, atol)
        if subnormals and dtype is not None and dtype.is_floating_point and w.dtype.kind == "f" and not exact:
            bad = _subnormals_kept(bad, a.astype(np.float64), w.astype(np.float64), dtype, rtol)
        if signed_zeros:
            signs = _zero_signs_differ(a, w)
            if subnormals:  # the sign of a value that only rounds to zero depends on the intermediate precision
                signs = signs & (np.asarray(expected) == 0)
            bad = bad | signs
    bad = np.asarray(bad)
    if not bad.any():
        return None
    idx = np.argwhere(bad)[:5]
    examples = [
        {"index": [int(i) for i in ix], "actual": _scalar(actual[tuple(ix)]), "expected": _scalar(want[tuple(ix)])}
        for ix in idx
    ]
    if not bad.shape:
        examples = [{"index": [], "actual": _scalar(actual), "expected": _scalar(want)}]
    if ulps is not None and dtype is not None and dtype.is_floating_point:
        for e in examples:
            a, w = (float(np.float64(e[k])) for k in ("actual", "expected"))
            if math.isfinite(a) and math.isfinite(w):
                e["ulps"] = round(abs(a - w) / float(ulp(np.float64(w), dtype)), 1)
        return {"mismatched": int(bad.sum()), "total": int(bad.size), "ulps": ulps, "examples": examples}
    return {
        "mismatched": int(bad.sum()),
        "total": int(bad.size),
        "rtol": rtol,
        "atol": atol,
        "examples": examples,
    }


#: (precision in bits, minimum normal exponent) of the floating dtypes, for :func:`ulp`.
_FORMATS = {"float16": (11, -14), "bfloat16": (8, -126), "float32": (24, -126), "float64": (53, -1022)}


def ulp(values, dtype) -> np.ndarray:
    """The unit in the last place of ``values`` (float64) in the floating ``dtype`` (subnormals included)."""
    bits, emin = _FORMATS[dtype.to_real().name]
    magnitude = np.abs(np.asarray(values, np.float64))
    with quiet():
        _, exponent = np.frexp(magnitude)
    exponent = np.where(magnitude == 0, emin, np.maximum(exponent - 1, emin))
    return np.ldexp(1.0, exponent - bits + 1)


def _zero_signs_differ(a, w):
    parts = [(a.real, w.real), (a.imag, w.imag)] if a.dtype.kind == "c" or w.dtype.kind == "c" else [(a, w)]
    out = False
    for x, y in parts:
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        out = out | ((x == 0) & (y == 0) & (np.signbit(x) != np.signbit(y)))
    return out


_F32_TINY = 2.0**-126
#: The error allowed on a subnormal result, in units in the last place (at least; the op's ``rtol`` if wider):
#: a subnormal has fewer significant bits, so one rounding of an intermediate product may cost one of them.
SUBNORMAL_ULPS = 2.0


def _subnormals_kept(bad, a, w, dtype, rtol):
    """``bad`` with the subnormal expected values judged relatively: within ``rtol`` or :data:`SUBNORMAL_ULPS`."""
    tiny = 2.0 ** _FORMATS[dtype.name][1]
    with quiet():
        subnormal = np.isfinite(w) & (w != 0) & (np.abs(w) < tiny)
        allowed = np.maximum(rtol * np.abs(w), SUBNORMAL_ULPS * ulp(w, dtype))
        far = ~(np.abs(a - w) <= allowed)  # a nan actual is far too
    return np.where(subnormal, far, bad)


def _bad_ulps(a, w, dtype, ulps):
    with quiet():
        nan_a, nan_w = np.isnan(a), np.isnan(w)
        finite = np.isfinite(a) & np.isfinite(w)
        bad = nan_a != nan_w
        bad |= ~nan_a & ~nan_w & ~finite & (a != w)
        bad |= finite & (np.abs(a - w) > ulps * ulp(w, dtype))
        bad &= ~((a == 0) & (np.abs(w) < _F32_TINY))  # 16-bit ops compute in float32, which may flush
    return bad


def _bad(a, w, rtol, atol):
    with quiet():
        nan_a, nan_w = np.isnan(a), np.isnan(w)
        finite = np.isfinite(a) & np.isfinite(w)
        bad = nan_a != nan_w
        bad |= ~nan_a & ~nan_w & ~finite & (a != w)
        bad |= finite & (np.abs(a - w) > atol + rtol * np.abs(w))
    return bad


def _bad_complex(a, w, rtol, atol):
    """Complex values: nan and infinite parts must match part by part; finite ones within a modulus tolerance."""
    with quiet():
        finite = np.isfinite(a) & np.isfinite(w)
        bad = ~finite & (_bad(a.real, w.real, 0.0, 0.0) | _bad(a.imag, w.imag, 0.0, 0.0))
        bad |= finite & (np.abs(a - w) > atol + rtol * np.abs(w))
    return bad


def _scalar(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return str(complex(x))
    if x.dtype.kind in "biu":
        return x.item()
    v = float(x.astype(np.float64))
    return v if np.isfinite(v) else str(v)


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays are identical bit for bit (shape, dtype and bytes)."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _flatten(value) -> list:
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flatten(v)]
    return [value]


def _expected_outputs(info: OpInfo, sample: SampleInput) -> list:
    args, kwargs = oracle_args(sample, info.upcast)
    with quiet():
        return _flatten(info.oracle(*args, **kwargs))


def check_properties(info: OpInfo, sample: SampleInput, result) -> None:
    """The outputs the oracle leaves open satisfy their defining properties (:attr:`OpInfo.verify`)."""
    args, kwargs = oracle_args(sample, info.upcast)
    with quiet():
        problem = info.verify([_host_or_value(r) for r in _flatten(result)], *args, **kwargs)
    if problem:
        raise CheckFailure("values", problem)


def check_values(
    ctx: Context,
    info: OpInfo,
    result,
    expected: list,
    where: str = "values",
    ulps: float | None = None,
    signed_zeros: bool = False,
    nonfinite_only: bool = False,
    subnormals: bool = False,
) -> None:
    """Each output of ``result`` matches the corresponding expected value within the op's tolerance (or ``ulps``)."""
    outputs = _flatten(result)
    if len(outputs) != len(expected):
        raise CheckFailure(where, f"{len(outputs)} outputs but the oracle gives {len(expected)}")
    for i, (out, want) in enumerate(zip(outputs, expected)):
        if want is None:  # the oracle does not define this output (e.g. unspecified indices)
            continue
        label = f"output {i}" if len(outputs) > 1 else "output"
        if isinstance(out, ow.Tensor):
            rtol, atol = ctx.tolerance(info, out.dtype)
            bad = compare(
                to_host(out),
                want,
                out.dtype,
                rtol,
                atol,
                ulps=ulps,
                signed_zeros=signed_zeros,
                nonfinite_only=nonfinite_only,
                subnormals=subnormals,
            )
        else:
            bad = _compare_python(out, want, info, ctx)
        if bad:
            raise CheckFailure(where, f"{label} differs from the expected values", **bad)


def _compare_python(out, want, info, ctx):
    if hasattr(out, "unpack") and isinstance(want, dict):  # packed quantized weights: compare what they hold
        return _compare_packed(out, want, info, ctx)
    if isinstance(out, (bool, np.bool_)) or isinstance(want, (bool, np.bool_)):
        return None if bool(out) == bool(np.asarray(want)) else {"actual": repr(out), "expected": repr(want)}
    return compare(np.asarray(out), np.asarray(want), None, *ctx.tolerance(info, ow.float64))


def _compare_packed(out, want, info, ctx):
    """Packed weights against ``{"weight": integers, "bias": values or None}`` from the oracle."""
    weight, bias = out.unpack()[:2]
    bad = compare(to_host(weight.int_repr()), want["weight"], None, 0.0, 0.0)
    if bad is None and (bias is None) != (want.get("bias") is None):
        bad = {"reason": "bias presence differs"}
    if bad is None and bias is not None:
        bad = compare(to_host(bias), want["bias"], bias.dtype, *ctx.tolerance(info, bias.dtype))
    return bad


# -- one sample of a functional op -------------------------------------------------------------


def run_on_device(ctx: Context, op, sample: SampleInput):
    """``(args, kwargs, result)`` of ``sample`` on the backend; a failing call is explained against the reference."""
    args, kwargs = build(sample, ctx.device)
    try:
        return args, kwargs, call(op, args, kwargs)
    except NotImplementedKernel:
        raise
    except Exception as exc:
        raise _explain_error(ctx, op, sample, exc) from None


def last_frames(exc: BaseException, n: int = 4) -> list[str]:
    """The last ``n`` frames of ``exc``'s traceback, one line each: ``file:line in function: source``.

    An exception the dispatcher raised *from* a kernel's (a ``KernelError`` naming the plugin) shows
    the kernel's own frames: the innermost cause is where the vendor's code failed.
    """
    while exc.__cause__ is not None and exc.__cause__.__traceback__ is not None:
        exc = exc.__cause__
    frames = traceback.extract_tb(exc.__traceback__)[-n:]
    return [f"{f.filename}:{f.lineno} in {f.name}: {(f.line or '').strip()}" for f in frames]


def _explain_error(ctx: Context, op, sample: SampleInput, exc: Exception) -> CheckFailure:
    failure = _explain(ctx, op, sample, exc)
    failure.details.setdefault("traceback", last_frames(exc))
    return failure


def _explain(ctx: Context, op, sample: SampleInput, exc: Exception) -> CheckFailure:
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ow.backends.KernelError) and exc.mismatch:  # the dispatcher compared the result with meta
        return CheckFailure("meta", str(exc))
    try:
        ref_args, ref_kwargs = build(sample, REFERENCE)
        call(op, ref_args, ref_kwargs)
    except NotImplementedKernel:
        return CheckFailure("run", f"raises {detail}")
    except Exception as ref_exc:
        if type(ref_exc) is type(exc):
            return CheckFailure("sample", f"raises {detail} (on the reference backend too: an invalid sample)")
        return CheckFailure(
            "errors", f"raises {detail}; the reference backend raises {type(ref_exc).__name__}: {ref_exc}"
        )
    return CheckFailure("run", f"raises {detail}; the reference backend runs this sample")


def check_functional(ctx: Context, info: OpInfo, sample: SampleInput, first: bool = False, rerun: bool = True) -> list:
    """Run every check of a functional op on one sample; return notes (things checked but worth saying).

    ``first`` adds the deterministic-mode double run (ops tagged nondeterministic); ``rerun``
    runs the sample a second time and compares the bits (:func:`check_reproducible`).
    """
    notes = []
    op = info.op
    args, kwargs, result = run_on_device(ctx, op, sample)
    check_device(ctx, op, result)
    check_returns_mutated(op, args, kwargs, result)
    names = [a.name for a in op.schema.arguments]
    check_inputs_unchanged(ctx, sample, args, kwargs, set(op.schema.mutated_arguments), names)
    if not info.data_dependent:
        check_meta(ctx, info, sample, result)
    else:
        if not ctx.is_reference:
            check_reference_structure(info, sample, result)
        if info.promises_strides and not info.returns_view:
            check_contiguous_outputs(result)
    if info.values_undefined:
        pass
    elif info.random:
        notes += check_random(ctx, info, sample, result)
    elif info.oracle is not None:
        expected = _expected_outputs(info, sample)
        check_values(
            ctx,
            info,
            result,
            expected,
            ulps=sample.ulps,
            signed_zeros=sample.signed_zeros,
            nonfinite_only=sample.nonfinite_only,
            subnormals=sample.subnormals,
        )
        if info.verify is not None and not sample.nonfinite_only:
            check_properties(info, sample, result)
    elif not ctx.is_reference:
        ref_args, ref_kwargs = build(sample, REFERENCE)
        reference = call(op, ref_args, ref_kwargs)
        check_values(ctx, info, result, [_host_or_value(r) for r in _flatten(reference)], where="reference")
    if not info.returns_view and not info.may_alias:
        check_no_alias(info, args, kwargs, result)
    host = [_host_or_value(r) for r in _flatten(result)] if rerun and _reproducible(info) else None
    del result, args, kwargs
    if info.returns_view:
        check_aliasing(ctx, info, sample)
    if host is not None:
        notes += check_reproducible(ctx, info, sample, host)
    if first and info.nondeterministic and hasattr(ow, "use_deterministic_algorithms"):
        notes += check_deterministic(ctx, info, sample)
    return notes


def _reproducible(info: OpInfo) -> bool:
    """Whether two runs of ``info`` on the same inputs must give the same bits (not random, not undefined)."""
    return not info.random and not info.values_undefined and not (info.functional or info).random


def run_host(ctx: Context, info: OpInfo, sample: SampleInput) -> list:
    """The outputs of ``sample`` on the backend, as NumPy arrays (other values as they are)."""
    args, kwargs = build(sample, ctx.device)
    return [_host_or_value(r) for r in _flatten(call(info.op, args, kwargs))]


def first_difference(first: list, second: list) -> dict | None:
    """Evidence of the first output whose bits differ between two runs (None if none does)."""
    for i, (a, b) in enumerate(zip(first, second)):
        if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or same_bits(a, b):
            continue
        if a.shape != b.shape or a.dtype != b.dtype:
            return {"output": i, "reason": f"run 1 gave {a.dtype}{list(a.shape)}, run 2 {b.dtype}{list(b.shape)}"}
        va, vb = a.reshape(-1).view(np.uint8).reshape(a.size, -1), b.reshape(-1).view(np.uint8).reshape(b.size, -1)
        differ = (va != vb).any(axis=1).reshape(a.shape)
        idx = np.argwhere(differ)[:5]
        examples = [
            {"index": [int(j) for j in ix], "run 1": _scalar(a[tuple(ix)]), "run 2": _scalar(b[tuple(ix)])}
            for ix in idx
        ]
        if not a.shape:
            examples = [{"index": [], "run 1": _scalar(a), "run 2": _scalar(b)}]
        return {"output": i, "mismatched": int(differ.sum()), "total": int(differ.size), "examples": examples}
    return None


def _declared_nondeterministic(ctx: Context, info: OpInfo, sample: SampleInput) -> str | None:
    """Why the sample may give other bits on another run (None if every kernel it runs is deterministic).

    A prim's own kernel must be registered ``deterministic=False`` (``opweave.dispatch.explain``
    says which kernel runs); a canonical op may differ when it is tagged
    ``nondeterministic_bitwise`` (its prims are then checked on their own entries), or when
    deterministic mode refuses a kernel it runs.
    """
    if info.op.kind == "prim":
        try:
            args, kwargs = build(sample, ctx.device)
            declared = getattr(ow.dispatch.explain(info.op, *args, **kwargs), "nondeterministic", False)
        except Exception:
            declared = False
        if declared:
            return f"{info.name}'s kernel on {ctx.backend} is registered deterministic=False"
    elif info.nondeterministic:
        return f"{info.name} is tagged nondeterministic_bitwise"
    was = ow.are_deterministic_algorithms_enabled()
    warn_only = ow.is_deterministic_algorithms_warn_only_enabled()
    ow.use_deterministic_algorithms(True)
    try:
        run_host(ctx, info, sample)
    except RuntimeError as exc:
        return str(exc)
    except Exception:
        return None
    finally:
        ow.use_deterministic_algorithms(was, warn_only=warn_only)
    return None


def check_reproducible(ctx: Context, info: OpInfo, sample: SampleInput, first: list) -> list[str]:
    """A second run of ``sample`` gives the bits of the first, unless a kernel it runs is declared nondeterministic.

    A kernel is declared nondeterministic by registering it with ``deterministic=False``:
    deterministic mode then uses a deterministic alternative or raises, which is how the
    check tells a declared kernel from an undeclared one.
    """
    second = run_host(ctx, info, sample)
    diff = first_difference(first, second)
    if diff is None:
        return []
    if not hasattr(ow, "use_deterministic_algorithms"):
        return []
    refused = _declared_nondeterministic(ctx, info, sample)
    if refused is not None:
        return [f"results differ between two runs; a kernel is declared nondeterministic ({refused})"]
    raise CheckFailure(
        "determinism",
        f"output {diff['output']} differs bit for bit between two runs of the same inputs, but every kernel it "
        "runs is registered deterministic (a kernel whose result depends on thread or atomic order must be "
        "registered with deterministic=False)",
        **{k: v for k, v in diff.items() if k != "output"},
    )


def check_determinism_probe(ctx: Context, info: OpInfo, sample: SampleInput) -> list[str]:
    """Wide-magnitude samples of accumulating ops: two runs agree bitwise, and so do two in deterministic mode.

    Deterministic mode runs a different kernel only where one is declared nondeterministic (the
    op's tag, or the two runs differed and deterministic mode refused it); only then is it run twice.
    """
    try:
        first = run_host(ctx, info, sample)
    except NotImplementedKernel:
        raise
    except Exception:  # the probe's values are not valid for this op (a singular matrix...): nothing to compare
        return []
    notes = check_reproducible(ctx, info, sample, first)
    if hasattr(ow, "use_deterministic_algorithms") and (notes or info.nondeterministic):
        notes += check_deterministic(ctx, info, sample)  # where deterministic mode may select another kernel
    return notes


def _host_or_value(r):
    return to_host(r) if isinstance(r, ow.Tensor) else r


def check_device(ctx: Context, op, result) -> None:
    """Tensor outputs live on the backend's device."""
    for i, t in enumerate(tensors_of(result)):
        if t.device.type != ctx.backend:
            raise CheckFailure("device", f"output {i} is on {t.device}, not on {ctx.backend}")


def check_inputs_unchanged(ctx: Context, sample: SampleInput, args, kwargs, skip=(), names=()) -> None:
    """The op did not write into its inputs (except the arguments it declares as written: ``skip``, by name)."""
    pairs = [(names[i] if i < len(names) else None, v, b) for i, (v, b) in enumerate(zip(sample.args, args))]
    pairs += [(k, sample.kwargs[k], kwargs[k]) for k in sample.kwargs if k in kwargs]
    index = 0
    for name, given, built in pairs:
        arrs, tensors = SampleInput((given,)).arrs(), tensors_of(built)
        for a, t in zip(arrs, tensors):
            if name not in skip:
                now = to_host(t)
                if not same_bits(now, a.value):
                    bad = compare(now, a.value, a.dtype, 0.0, 0.0) or {}
                    raise CheckFailure("inputs", f"the op modified its input tensor {index} ('{name}')", **bad)
            index += 1


def check_returns_mutated(op, args, kwargs, result) -> None:
    """An op returning a written argument (``Tensor(a!)``) returns that very tensor object."""
    schema = op.schema
    written = {a.type.alias.set: a.name for a in schema.arguments if a.type.alias and a.type.alias.is_write}
    if not written:
        return
    values = dict(zip((a.name for a in schema.arguments), args)) | kwargs
    results = result if isinstance(result, tuple) else (result,)
    for i, ret in enumerate(schema.returns):
        if ret.type.alias and ret.type.alias.is_write and not ret.type.is_list:
            name = written.get(ret.type.alias.set)
            if name is not None and results[i] is not values.get(name):
                raise CheckFailure("inplace", f"output {i} must be argument '{name}' itself, not a new tensor")


def check_meta(ctx: Context, info: OpInfo, sample: SampleInput, result) -> None:
    """Outputs have the structure, shapes and dtypes of the meta device's, and its strides where promised.

    Views must match strides and storage offset; prims (and entries flagged ``strides``)
    must match the strides of every dim of size > 1 (check "strides").
    """
    args, kwargs = build(sample, "meta")
    try:
        meta = call(info.op, args, kwargs)
    except NotImplementedKernel:
        return
    except NotImplementedError:  # the op cannot run without data
        return
    _compare_structure(info, result, meta, "output")


def check_reference_structure(info: OpInfo, sample: SampleInput, result) -> None:
    """Outputs of a data-dependent op (no meta run) have the reference backend's structure, shapes and dtypes."""
    ref_args, ref_kwargs = build(sample, REFERENCE)
    reference = call(info.op, ref_args, ref_kwargs)
    got, want = _flatten(result), _flatten(reference)
    if len(got) != len(want):
        raise CheckFailure("meta", f"{len(got)} outputs; the reference backend gives {len(want)}")
    for i, (out, ref) in enumerate(zip(got, want)):
        if not isinstance(ref, ow.Tensor):
            continue
        where = f"output {i}" if len(got) > 1 else "output"
        if not isinstance(out, ow.Tensor):
            raise CheckFailure("meta", f"{where} is {type(out).__name__}; the reference backend returns a Tensor")
        if out.dtype is not ref.dtype or tuple(out.shape) != tuple(ref.shape):
            raise CheckFailure(
                "meta",
                f"{where} is {out.dtype.name}{list(out.shape)}; the reference backend gives "
                f"{ref.dtype.name}{list(ref.shape)}",
            )


def contiguous_strides(shape) -> tuple:
    """The row-major strides of ``shape``, in elements, with None for dims of size 1 (:func:`significant_strides`)."""
    out, step = [], 1
    for n in reversed(tuple(shape)):
        out.append(step if n > 1 else None)
        step *= max(int(n), 1)
    return tuple(reversed(out))


def check_contiguous_outputs(result) -> None:
    """Every output tensor is contiguous (check "strides").

    A data-dependent op (``unique``, ``nonzero``...) has no meta layout to compare with; its outputs
    are fresh tensors, and PyTorch returns fresh outputs of a non-view op contiguous.
    """
    for i, out in enumerate(_flatten(result)):
        if isinstance(out, ow.Tensor) and out.numel() > 1 and significant_strides(out) != contiguous_strides(out.shape):
            where = f"output {i}" if len(_flatten(result)) > 1 else "output"
            raise CheckFailure(
                "strides",
                f"{where} has strides {tuple(out.stride())}; a fresh output is contiguous ({list(out.shape)})",
            )


def _compare_structure(info, result, meta, where):
    if isinstance(result, ow.Tensor):
        if not isinstance(meta, ow.Tensor):
            raise CheckFailure("meta", f"{where} is a Tensor but the meta device returns {type(meta).__name__}")
        if tuple(result.shape) != tuple(meta.shape):
            raise CheckFailure(
                "meta", f"{where} has shape {list(result.shape)}; the meta device says {list(meta.shape)}"
            )
        if result.dtype is not meta.dtype:
            raise CheckFailure("meta", f"{where} has dtype {result.dtype.name}; the meta device says {meta.dtype.name}")
        if info.returns_view and result.numel() > 1:
            got = (tuple(result.stride()), result.storage_offset())
            want = (tuple(meta.stride()), meta.storage_offset())
            if got != want:
                raise CheckFailure("meta", f"{where} (a view) has strides/offset {got}; the meta device says {want}")
        elif info.promises_strides and result.numel() > 1:
            got, want = significant_strides(result), significant_strides(meta)
            if got != want:
                raise CheckFailure(
                    "strides",
                    f"{where} has strides {tuple(result.stride())}; the meta device says {tuple(meta.stride())}",
                )
        return
    if isinstance(result, (tuple, list)):
        if not isinstance(meta, (tuple, list)) or len(meta) != len(result):
            raise CheckFailure("meta", f"{where}: {len(result)} outputs, the meta device gives {_describe(meta)}")
        for i, (r, m) in enumerate(zip(result, meta)):
            _compare_structure(info, r, m, f"{where}[{i}]")
        return
    if isinstance(meta, ow.Tensor):
        raise CheckFailure("meta", f"{where} is {type(result).__name__}; the meta device returns a Tensor")


def significant_strides(t) -> tuple:
    """The strides of ``t``'s dims of size > 1 (a size-1 dim's stride never addresses memory)."""
    return tuple(st if n > 1 else None for n, st in zip(t.shape, t.stride()))


def _describe(v):
    return f"{len(v)} outputs" if isinstance(v, (tuple, list)) else type(v).__name__


# -- views ---------------------------------------------------------------------------------------


def perturb(a: np.ndarray) -> np.ndarray:
    """Values guaranteed to differ from ``a`` element by element (same dtype)."""
    if a.dtype.kind == "b":
        return ~a
    if a.dtype.kind in "iu":
        return a ^ np.ones_like(a)
    if a.dtype.kind == "c":
        return np.where(a == 2.5 + 1j, 3.5, 2.5 + 1j).astype(a.dtype)
    wide = a.astype(np.float64)
    return np.where(wide == 2.5, 3.5, 2.5).astype(a.dtype)


def has_overlap(t) -> bool:
    """Whether two elements of ``t`` share memory (stride-0 dims, overlapping windows)."""
    if t.numel() <= 1:
        return False
    if any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape)):
        return True
    if t.numel() > 4096:
        return False
    idx = np.indices(tuple(t.shape)).reshape(t.ndim, -1)
    offsets = (np.asarray(t.stride()).reshape(-1, 1) * idx).sum(axis=0)
    return len(np.unique(offsets)) != offsets.size


def _write(t, values: np.ndarray, device: str) -> None:
    src = build_arr(Arr(values, t.dtype), device)
    with quiet():
        P.copy_to(t, src)


def _base_and_outputs(args, result):
    outputs = tensors_of(result)
    first = args[0] if args else None
    if isinstance(first, (list, tuple)):  # broadcast_tensors: output i views input i
        return list(zip(first, outputs))
    return [(first, o) for o in outputs] if isinstance(first, ow.Tensor) else []


def check_aliasing(ctx: Context, info: OpInfo, sample: SampleInput) -> None:
    """A view's outputs share memory with the base: a write through one is seen by the other."""
    op = info.op
    # view -> base: write through each output, then derive the view again from the base.
    args, kwargs, result = run_on_device(ctx, op, sample)
    pairs = _base_and_outputs(args, result)
    for i, (_base, view) in enumerate(pairs):
        if view.numel() == 0 or has_overlap(view):
            continue
        written = perturb(to_host(view))
        _write(view, written, ctx.device)
        again = tensors_of(call(op, args, kwargs))[i]
        if not same_bits(to_host(again), written):
            raise CheckFailure(
                "view",
                f"output {i} does not alias its base: values written through the view are not seen in the base",
            )
    # base -> view: write into the base, then read the old view objects.
    args, kwargs, result = run_on_device(ctx, op, sample)
    pairs = _base_and_outputs(args, result)
    for i, (base, view) in enumerate(pairs):
        if view.numel() == 0 or base.numel() == 0 or has_overlap(base):
            continue
        _write(base, perturb(to_host(base)), ctx.device)
        fresh = tensors_of(call(op, args, kwargs))[i]
        if not same_bits(to_host(view), to_host(fresh)):
            raise CheckFailure(
                "view", f"output {i} does not alias its base: a write into the base is not seen through the view"
            )


def check_no_alias(info: OpInfo, args, kwargs, result) -> None:
    """A non-view output has its own storage when the schema promises no aliasing (no ``Tensor(a)`` return)."""
    schema = info.op.schema
    if any(r.type.alias is not None for r in schema.returns):
        return
    inputs = {id(t.untyped_storage()) for t in tensors_of(list(args) + list(kwargs.values()))}
    for i, t in enumerate(tensors_of(result)):
        if id(t.untyped_storage()) in inputs and t.numel() > 0:
            raise CheckFailure("alias", f"output {i} shares storage with an input, but the op is not a view")


# -- random and deterministic ----------------------------------------------------------------------


def _arg_names(op) -> list[str]:
    return [a.name for a in op.schema.arguments]


def _replace_arg(op, sample: SampleInput, name: str, fn) -> SampleInput:
    """A copy of ``sample`` with argument ``name`` replaced by ``fn(old value)`` (None: not present)."""
    names = _arg_names(op)
    args, kwargs = list(sample.args), dict(sample.kwargs)
    if name in kwargs:
        kwargs[name] = fn(kwargs[name])
    elif name in names and names.index(name) < len(args):
        i = names.index(name)
        args[i] = fn(args[i])
    else:
        return None
    return SampleInput(tuple(args), kwargs, sample.desc, sample.oracle_kwargs)


def _seeded_run(ctx, op, sample, seed, device):
    if seed is not None:
        ow.manual_seed(seed)
    args, kwargs = build(sample, device)
    return [_host_or_value(r) for r in _flatten(call(op, args, kwargs))]


def check_random(ctx: Context, info: OpInfo, sample: SampleInput, result) -> list[str]:
    """Random ops: the same seed gives the same bits, the CPU's values (same stream everywhere), a new seed new ones."""
    op = info.op
    explicit = "seed" in _arg_names(op)  # random prims take (seed, offset) arguments
    seed = None if explicit else RANDOM_SEED
    first = _seeded_run(ctx, op, sample, seed, ctx.device)
    second = _seeded_run(ctx, op, sample, seed, ctx.device)
    for i, (a, b) in enumerate(zip(first, second)):
        if isinstance(a, np.ndarray) and not same_bits(a, b):
            raise CheckFailure("random", f"output {i}: the same seed gave different values on two runs")
    if not ctx.is_reference:
        reference = _seeded_run(ctx, op, sample, seed, REFERENCE)
        for i, (a, r) in enumerate(zip(first, reference)):
            if isinstance(a, np.ndarray):
                bad = compare(a, r, ow.dtype_of_numpy(a.dtype), *ctx.tolerance(info, ow.dtype_of_numpy(a.dtype)))
                if bad:
                    raise CheckFailure("random", f"output {i}: values differ from the CPU's for the same seed", **bad)
    return _check_seed_matters(ctx, info, sample, seed, first)


def _check_seed_matters(ctx, info, sample, seed, first) -> list[str]:
    op = info.op
    if sum(a.size for a in first if isinstance(a, np.ndarray)) < 16:
        return []
    if seed is None:
        other = _replace_arg(op, sample, "seed", lambda s: int(s) + 1)
        if other is None:
            return []
        changed = _seeded_run(ctx, op, other, None, ctx.device)
        reference = (_seeded_run(ctx, op, sample, None, REFERENCE), _seeded_run(ctx, op, other, None, REFERENCE))
    else:
        changed = _seeded_run(ctx, op, sample, seed + 1, ctx.device)
        reference = (_seeded_run(ctx, op, sample, seed, REFERENCE), _seeded_run(ctx, op, sample, seed + 1, REFERENCE))
    same = all(same_bits(a, b) for a, b in zip(first, changed) if isinstance(a, np.ndarray))
    ref_same = all(same_bits(a, b) for a, b in zip(*reference) if isinstance(a, np.ndarray))
    if same and not ref_same:
        raise CheckFailure("random", "a different seed gave the same values: the op ignores its seed")
    return []


def check_deterministic(ctx: Context, info: OpInfo, sample: SampleInput) -> list[str]:
    """In deterministic mode the op either raises RuntimeError or gives bitwise identical results twice."""
    was = ow.are_deterministic_algorithms_enabled()
    warn_only = ow.is_deterministic_algorithms_warn_only_enabled()
    ow.use_deterministic_algorithms(True)
    try:
        runs = [run_host(ctx, info, sample) for _ in range(2)]
    except RuntimeError as exc:
        return [f"raises RuntimeError in deterministic mode: {exc}"]
    finally:
        ow.use_deterministic_algorithms(was, warn_only=warn_only)
    diff = first_difference(*runs)
    if diff is not None:
        raise CheckFailure(
            "deterministic",
            f"output {diff['output']}: two runs in deterministic mode (use_deterministic_algorithms(True)) "
            "differ bitwise: a kernel it selects there is not deterministic",
            **{k: v for k, v in diff.items() if k != "output"},
        )
    return []


# -- errors ----------------------------------------------------------------------------------------


def check_error_input(ctx: Context, info: OpInfo, err: ErrorInput) -> None:
    """The invalid input raises the declared exception type and leaves the inputs unmodified."""
    import re

    args, kwargs = build(err.sample, ctx.device)
    try:
        call(info.op, args, kwargs)
    except NotImplementedKernel:
        raise
    except err.error as exc:
        if err.match and not re.search(err.match, str(exc)):
            raise CheckFailure(
                "errors", f"raises {type(exc).__name__} but the message does not match {err.match!r}"
            ) from None
        check_inputs_unchanged(ctx, err.sample, args, kwargs, (), [a.name for a in info.op.schema.arguments])
        return
    except Exception as exc:
        raise CheckFailure(
            "errors",
            f"{err.sample.desc or 'invalid input'}: raises {type(exc).__name__} ({exc}), expected {err.error.__name__}",
            traceback=last_frames(exc),
        ) from None
    raise CheckFailure("errors", f"{err.sample.desc or 'invalid input'}: no error, expected {err.error.__name__}")


# -- generated variants ------------------------------------------------------------------------------


RANDOM_SEED = 1234


def _reseed(info: OpInfo) -> None:
    """Random ops: reset the generators so the functional op and its variant draw the same values."""
    if (info.functional or info).random:
        ow.manual_seed(RANDOM_SEED)


def _functional_result(ctx, info: OpInfo, sample: SampleInput):
    _reseed(info)
    args, kwargs, result = run_on_device(ctx, info.functional.op, sample)
    return result


def _expected_host(info: OpInfo, sample: SampleInput, results: list) -> list:
    """What a variant must write: the oracle's values when the op has one, else the functional op's on the device."""
    base = info.functional
    if base.oracle is not None and not base.random and not base.values_undefined:
        expected = _expected_outputs(base, sample)
        if len(expected) == len(results):
            return [
                to_host(r) if e is None else np.broadcast_to(np.asarray(e), tuple(r.shape))
                for e, r in zip(expected, results)
            ]
    return [to_host(r) for r in results]


def check_inplace(ctx: Context, info: OpInfo, sample: SampleInput) -> None:
    """``op_(self, ...)`` returns ``self``, keeps its storage and holds the functional result (or raises cleanly)."""
    first = sample.args[0] if sample.args else None
    if not isinstance(first, Arr):
        return
    expected = _functional_result(ctx, info, sample)
    if first.layout == "broadcast":  # writing into a stride-0 view is illegal; use a dense self
        first = Arr(first.value, first.dtype, "contiguous")
    sample = SampleInput((first,) + tuple(sample.args[1:]), sample.kwargs, sample.desc, sample.oracle_kwargs)
    args, kwargs = build(sample, ctx.device)
    self_ = args[0]
    storage, ptr = self_.untyped_storage(), self_.data_ptr()
    layout = (tuple(self_.shape), tuple(self_.stride()))
    error = None
    if tuple(expected.shape) != tuple(self_.shape):
        error = ValueError
    elif not ow.can_cast(expected.dtype, self_.dtype):
        error = TypeError
    try:
        _reseed(info)
        returned = call(info.op, args, kwargs)
    except NotImplementedKernel:
        raise
    except Exception as exc:
        if error is not None and isinstance(exc, error):
            if not same_bits(to_host(self_), first.value):
                raise CheckFailure("inplace", f"raised {type(exc).__name__} but modified self first") from None
            return
        raise CheckFailure("inplace", f"raises {type(exc).__name__}: {exc}") from None
    if error is not None:
        why = "self would need a broadcast" if error is ValueError else "the result cannot be cast to self's dtype"
        raise CheckFailure("inplace", f"returned a result although {why}: expected {error.__name__}")
    if returned is not self_:
        raise CheckFailure("inplace", "returns a new tensor instead of self")
    if self_.untyped_storage() is not storage or self_.data_ptr() != ptr:
        raise CheckFailure("inplace", "self was given new storage instead of being written in place")
    if (tuple(self_.shape), tuple(self_.stride())) != layout:
        raise CheckFailure("inplace", f"self's shape/strides changed from {layout}")
    if info.functional.values_undefined:
        return
    rtol, atol = ctx.tolerance(info, self_.dtype)
    want = _expected_host(info, sample, [expected])[0]
    bad = compare(to_host(self_), want, self_.dtype, rtol, atol)
    if bad:
        raise CheckFailure("inplace", "self does not hold the functional op's result", **bad)


def _out_names(info: OpInfo) -> list[str]:
    given = {a.name for a in info.functional.op.schema.arguments}
    return [a.name for a in info.op.schema.arguments if a.name not in given]


def check_out(ctx: Context, info: OpInfo, sample: SampleInput, resize: bool = False) -> None:
    """``op(..., out=t)`` writes ``t`` in place and returns it; a wrong-shaped ``t`` is resized with a warning."""
    expected = tensors_of(_functional_result(ctx, info, sample))
    names = _out_names(info)
    if len(names) != len(expected):
        raise CheckFailure("out", f"{len(names)} out= arguments for {len(expected)} outputs")
    outs = [ow.empty(tuple(e.shape), dtype=e.dtype, device=ctx.device) for e in expected]
    expected = [(e, w) for e, w in zip(expected, _expected_host(info, sample, expected))]
    _call_out(ctx, info, sample, names, outs, expected, "out")
    if resize and expected and expected[0][0].numel() > 0:
        wrong = [ow.empty((e.numel() + 1,), dtype=e.dtype, device=ctx.device) for e, _ in expected]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _call_out(ctx, info, sample, names, wrong, expected, "out-resize", check_storage=False)
        if not any(issubclass(w.category, UserWarning) and "resized" in str(w.message) for w in caught):
            raise CheckFailure("out-resize", "a wrong-shaped out= tensor was resized without a warning")


def _call_out(ctx, info, sample, names, outs, expected, check, check_storage=True):
    args, kwargs = build(sample, ctx.device)
    kwargs.update(zip(names, outs))
    storages = [(o.untyped_storage(), o.data_ptr()) for o in outs]
    try:
        _reseed(info)
        if check == "out-resize":
            with np.errstate(all="ignore"):
                returned = info.op(*args, **kwargs)
        else:
            returned = call(info.op, args, kwargs)
    except NotImplementedError as exc:
        if is_missing_kernel(exc):
            raise NotImplementedKernel(str(exc)) from None
        raise CheckFailure(check, f"raises {type(exc).__name__}: {exc}") from None
    except NotImplementedKernel:
        raise
    except Exception as exc:
        raise CheckFailure(check, f"raises {type(exc).__name__}: {exc}") from None
    got = returned if isinstance(returned, tuple) else (returned,)
    if len(got) != len(outs) or any(g is not o for g, o in zip(got, outs)):
        raise CheckFailure(check, "does not return the out= tensors themselves")
    for i, (o, (e, want)) in enumerate(zip(outs, expected)):
        if tuple(o.shape) != tuple(e.shape):
            raise CheckFailure(check, f"out {i} has shape {list(o.shape)}, expected {list(e.shape)}")
        if check_storage and (o.untyped_storage() is not storages[i][0] or o.data_ptr() != storages[i][1]):
            raise CheckFailure(check, f"out {i} was given new storage instead of being written in place")
        if info.functional.values_undefined:
            continue
        rtol, atol = ctx.tolerance(info, o.dtype)
        bad = compare(to_host(o), want, o.dtype, rtol, atol)
        if bad:
            raise CheckFailure(check, f"out {i} does not hold the functional op's result", **bad)


# -- allocator ---------------------------------------------------------------------------------------


def allocated(ctx: Context):
    """Bytes the backend's allocator holds now (None without ``memory_stats``)."""
    if ctx.memory_stats is None or not ctx.check_allocator:
        return None
    stats = ctx.memory_stats()  # Backend's default is {}: a backend without an allocator of its own
    return int(stats["allocated"]) if "allocated" in stats else None


def check_allocator(ctx: Context, before) -> None:
    """The allocator is back at (or below) ``before`` once the sample's tensors are gone."""
    if before is None:
        return
    after = allocated(ctx)
    if after > before:
        gc.collect()
        after = allocated(ctx)
    if after > before:
        raise CheckFailure(
            "allocator", f"{after - before} bytes still allocated after the op (baseline {before}, now {after})"
        )


# -- backend-wide checks --------------------------------------------------------------------------


def check_round_trip(ctx: Context, dtype, rng) -> None:
    """CPU → device → CPU gives back the same bits, for dense, empty, 0-dim and non-contiguous tensors."""
    values = make_values(rng, (3, 5), dtype, specials=True)
    for shape_values in (values, values[0, 0], values[:0]):
        t = ow.tensor(shape_values, dtype=dtype)
        back = to_host(t.to(ctx.device))
        if not same_bits(back, np.asarray(shape_values)):
            raise CheckFailure(
                "round-trip",
                f"{dtype.name} {list(np.shape(shape_values))}: values changed on the way to {ctx.backend} and back",
                sent=encode_array(np.asarray(shape_values), dtype),
                received=encode_array(back, dtype),
            )
    view = build_arr(Arr(values, dtype, "transposed"), ctx.device)
    if not same_bits(to_host(view), values):
        raise CheckFailure("round-trip", f"{dtype.name}: a transposed device tensor read back wrong")


def check_deterministic_fill(ctx: Context, dtype) -> None:
    """In deterministic mode ``empty`` is filled: NaN for floating/complex dtypes, the largest value for integers."""
    was = ow.are_deterministic_algorithms_enabled()
    warn_only = ow.is_deterministic_algorithms_warn_only_enabled()
    ow.use_deterministic_algorithms(True)
    try:
        host = to_host(ow.empty((4,), dtype=dtype, device=ctx.device))
    finally:
        ow.use_deterministic_algorithms(was, warn_only=warn_only)
    if dtype is ow.bool:
        ok = bool(host.all())
    elif dtype.is_floating_point or dtype.is_complex:
        ok = bool(np.isnan(widen(host)).all())
    else:
        ok = bool((host == np.iinfo(dtype.numpy).max).all())
    if not ok:
        raise CheckFailure("deterministic-fill", f"empty({dtype.name}) in deterministic mode is not filled: {host}")
