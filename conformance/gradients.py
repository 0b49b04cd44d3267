"""Gradient checks: whether backward is right on a backend.

Every canonical op is differentiable on every backend through its prims' derivative
rules, so a backend's backward pass runs its own kernels. Two checks, per op:

``gradcheck``  the op's gradients against central finite differences in float64
               (``opweave.autograd.gradcheck``) on the backend, at the op's first small
               sample; a sample on a kink or outside the domain is moved (jittered, made
               positive, put in (0, 1)) and the op passes if one of those passes. The
               check of the CPU reference backend, and of any backend with float64 in the
               full profile.
``vs-cpu``     the vector-Jacobian product for a seeded random ``grad_output`` on the
               backend against the CPU's, in the sample's dtype (float32 preferred), within
               :data:`GRAD_TOLERANCE_SCALE` times the op's tolerance: the check of every
               other backend.

:data:`NOT_CHECKED` says which ops have no gradient to check (PyTorch marks them
non-differentiable) or are checked elsewhere, and why.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np
import opweave as ow

from . import opdb
from .checks import REFERENCE, CheckFailure, Context, compare, is_missing_kernel, last_frames, quiet
from .opdb._core import Arr, seed_for
from .tensors import build

#: Largest tensor (elements) of a sample gradcheck differentiates (a forward pass per element).
MAX_NUMEL = 24
#: Largest tensor of a vs-cpu sample.
MAX_NUMEL_VS_CPU = 256
MAX_SAMPLES = 40  # samples looked at per dtype (some generators are endless)
#: Backward composes several ops: its tolerance is the op's forward tolerance times this.
GRAD_TOLERANCE_SCALE = 10.0

#: Ops without a gradient to check, by reason (base names match every overload; full names one overload).
NOT_CHECKED = {
    "not differentiable (integer, boolean or piecewise-constant results; PyTorch marks them so)": (
        "argmax argmin argsort argwhere all any isclose allclose equal bincount bucketize searchsorted histc "
        "histogram histogramdd nonzero count_nonzero unique_consecutive unique_dim _unique _unique2 "
        "unique_dim_consecutive eq ne lt le gt ge isnan isinf isfinite isposinf isneginf isreal signbit "
        "logical_and logical_or logical_xor logical_not "
        "is_nonzero is_same_size tril_indices triu_indices bitwise_and bitwise_or bitwise_xor "
        "bitwise_not gcd lcm special_chebyshev_polynomial_t special_chebyshev_polynomial_u "
        "special_chebyshev_polynomial_v special_chebyshev_polynomial_w special_shifted_chebyshev_polynomial_t "
        "special_shifted_chebyshev_polynomial_u special_shifted_chebyshev_polynomial_v "
        "special_shifted_chebyshev_polynomial_w special_hermite_polynomial_h special_hermite_polynomial_he "
        "special_laguerre_polynomial_l special_legendre_polynomial_p special_airy_ai detach detach_copy"
    ).split(),
    "PyTorch has no derivative (backward raises, as in PyTorch)": (
        "linalg_ldl_factor_ex linalg_ldl_factor linalg_ldl_solve geqrf"
    ).split(),
    "PyTorch has no derivative with respect to the first argument (not_implemented; backward raises, as in "
    "PyTorch): the second argument's is gradchecked in tests/autograd/test_gradcheck_small_samples.py": (
        "igamma igammac special_gammainc special_gammaincc special_zeta"
    ).split(),
    "singular/eigen vectors are defined up to a phase: checked with gauge-invariant losses in the test suite": (
        "svd linalg_svd linalg_eig"
    ).split(),
    "reads one triangle of a symmetric input: checked through a symmetrizing wrapper in the test suite": (
        "cholesky linalg_cholesky linalg_cholesky_ex linalg_eigh linalg_eigvalsh"
    ).split(),
    "quantized input: a quantized tensor cannot require grad (as in PyTorch)": ["dequantize"],
    "fake quantization: PyTorch's gradient is the straight-through estimator, not the derivative (0 almost "
    "everywhere); checked against the estimator's formula in tests/autograd/test_gradcheck_small_samples.py": (
        "fake_quantize_per_channel_affine fake_quantize_per_tensor_affine"
    ).split(),
    "duplicate indices in the sample: each duplicate receives the gradient, as in PyTorch (finite differences "
    "count it once); gradchecked without duplicates in tests/autograd/test_gradcheck_small_samples.py": [
        "index_fill.int_Tensor"
    ],
    "tensor bounds are read as numbers (.item()): PyTorch's linspace/logspace have no derivative either": [
        f"{op}.{form}"
        for op in ("linspace", "logspace")
        for form in ("Tensor_Tensor", "Tensor_Scalar", "Scalar_Tensor")
    ],
}

#: Outputs (positions) that carry a gradient, for ops PyTorch marks partly non-differentiable.
DIFFERENTIABLE_OUTPUTS = {"linalg_lstsq": (0,)}


def reason_not_checked(name: str) -> str | None:
    """Why the op ``name`` has no gradient check (None: it has one)."""
    base = name.split("::")[-1].split(".")[0]
    for reason, ops in NOT_CHECKED.items():
        if base in ops or name in ops:
            return reason
    return None


def _is_floating(dt) -> bool:
    return dt is not None and (dt.is_floating_point or dt.is_complex)


def candidates(names) -> list[str]:
    """The canonical functional ops among ``names`` with a gradient to check."""
    found = []
    for name in names:
        info = opdb.get(name)
        if info is None or info.variant is not None or info.random or info.values_undefined:
            continue
        op = info.op
        if op.kind != "canonical" or op.schema.mutated_arguments or name.startswith("quantized::"):
            continue
        if reason_not_checked(name) is not None:
            continue
        if not any(d is None or _is_floating(d) for d in info.dtypes):
            continue
        found.append(name)
    return found


def _widen(value):
    """Arr dtypes widened to float64/complex128 (the sample's values kept)."""
    if isinstance(value, Arr):
        if value.dtype.is_complex:
            return Arr(value.value.astype(np.complex128), ow.complex128, value.layout)
        if value.dtype.is_floating_point:
            return Arr(value.value.astype(np.float64), ow.float64, value.layout)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_widen(v) for v in value)
    return value


def first_sample(info, device: str, dtypes, max_numel: int, widen: bool, rng_seed: int = 1234):
    """``(dtype, sample)``: the first sample with a floating tensor, small finite tensors and no stride-0 leaf."""
    for dtype in dtypes:
        try:
            samples = info.sample_inputs(np.random.default_rng(rng_seed), dtype, device)
            for sample in itertools.islice(samples, MAX_SAMPLES):
                arrs = sample.arrs()
                if not any(_is_floating(a.dtype) for a in arrs):
                    continue
                if any(a.value.size > max_numel for a in arrs):
                    continue
                if any(_is_floating(a.dtype) and not np.isfinite(a.value).all() for a in arrs):
                    continue  # finite differences need finite values
                if any(_is_floating(a.dtype) and a.layout == "broadcast" for a in arrs):
                    continue  # a stride-0 leaf has one element per row: not the op's gradient
                if widen:
                    sample.args = tuple(_widen(list(sample.args)))
                    sample.kwargs = {k: _widen(v) for k, v in sample.kwargs.items()}
                return dtype, sample
        except Exception:  # a generator that cannot make this dtype: try the next
            continue
    return None, None


def _variants(sample):
    """The sample as drawn, then moved off ties (jitter), then into positive and (0, 1) domains."""
    rng = np.random.default_rng(1234)

    def remap(fn):
        def walk(v):
            if isinstance(v, Arr) and _is_floating(v.dtype):
                return Arr(fn(v.value), v.dtype, v.layout)
            if isinstance(v, (list, tuple)):
                return type(v)(walk(x) for x in v)
            return v

        return type(sample)(tuple(walk(list(sample.args))), {k: walk(v) for k, v in sample.kwargs.items()}, sample.desc)

    yield "as drawn", sample
    yield "jittered", remap(lambda v: v + rng.uniform(-0.2, 0.2, v.shape).astype(v.dtype))
    yield "positive", remap(lambda v: np.abs(v) + 0.5 + rng.uniform(0, 0.2, v.shape).astype(v.dtype))
    yield "in (0, 1)", remap(lambda v: rng.uniform(0.1, 0.9, v.shape).astype(v.dtype))


class _Call:
    """The op called on a built sample with its floating tensors replaced by the given leaves."""

    def __init__(self, info, sample, device: str):
        self.info = info
        args, kwargs = build(sample, device)
        self.args, self.kwargs = list(args), kwargs
        self.slots = []  # (container, key, index in a tensor list or None)
        for container, items in (("arg", enumerate(self.args)), ("kw", kwargs.items())):
            for key, v in items:
                if isinstance(v, ow.Tensor) and _is_floating(v.dtype):
                    self.slots.append((container, key, None))
                elif isinstance(v, (list, tuple)):
                    for j, item in enumerate(v):
                        if isinstance(item, ow.Tensor) and _is_floating(item.dtype):
                            self.slots.append((container, key, j))

    def leaves(self) -> list:
        """Fresh leaves (requires_grad) holding the sample's floating tensors, layouts kept."""
        out = []
        for container, key, j in self.slots:
            t = self.args[key] if container == "arg" else self.kwargs[key]
            t = t if j is None else t[j]
            out.append(t.detach().requires_grad_(True))
        return out

    def __call__(self, *xs) -> tuple:
        call_args, call_kwargs = list(self.args), dict(self.kwargs)
        for (container, key, j), x in zip(self.slots, xs):
            target = call_args if container == "arg" else call_kwargs
            if j is None:
                target[key] = x
            else:
                items = list(target[key])
                items[j] = x
                target[key] = items
        op = self.info.op
        out = op(*call_args, **call_kwargs)
        keep = DIFFERENTIABLE_OUTPUTS.get(op.name.split("::")[-1].split(".")[0])
        if keep is not None:
            out = tuple(out[i] for i in keep)
        outs = []
        for o in out if isinstance(out, (tuple, list)) else (out,):
            outs.extend(o if isinstance(o, (tuple, list)) else (o,))
        return tuple(o for o in outs if isinstance(o, ow.Tensor) and _is_floating(o.dtype))


def _host(t) -> np.ndarray:
    return np.asarray(t.detach().cpu().numpy())


def gradcheck_sample(info, sample, device: str = REFERENCE) -> tuple[str, str]:
    """``("pass" | "skip" | "fail", detail)``: gradcheck of ``info``'s op at one float64 sample on ``device``."""
    call = _Call(info, sample, device)
    if not call.slots:
        return "skip", "no floating tensor argument"
    leaves = call.leaves()
    try:
        with quiet():
            outs = call(*leaves)
    except Exception as exc:  # the sample itself fails forward in double precision
        return "fail", f"forward raised {type(exc).__name__}: {str(exc)[:80]}"
    if not outs:
        return "skip", "no floating output"
    if not all(np.isfinite(_host(o)).all() for o in outs):
        return "fail", "non-finite outputs at this sample"
    try:
        with quiet():
            ow.autograd.gradcheck(call, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)
    except Exception as exc:
        return "fail", f"{type(exc).__name__}: {str(exc)[:200]}"
    return "pass", ""


def gradcheck_op(name: str, device: str = REFERENCE) -> tuple[str, str]:
    """``("pass" | "skip" | "fail", detail)`` for the op ``name`` (the first sample variant that passes)."""
    reason = reason_not_checked(name)
    if reason is not None:
        return "skip", reason
    info = opdb.get(name)
    if info is None:
        return "skip", "no op database entry"
    if info.random:
        return "skip", "random op"
    if info.values_undefined:
        return "skip", "uninitialised output"
    _, sample = first_sample(info, device, _preferred(info.dtypes, double=True), MAX_NUMEL, widen=True)
    if sample is None:
        return "skip", "no small floating sample"
    first = None
    for how, variant in _variants(sample):
        status, detail = gradcheck_sample(info, variant, device)
        if status != "fail":
            return status, detail if status == "skip" else how
        first = first or (status, detail)
    return first


def _preferred(dtypes, double: bool, supported=None) -> list:
    """The op's floating dtypes to try, best first: float64/complex128 (``double``) or float32/complex64."""
    floating = [d for d in dtypes if d is None or _is_floating(d)]
    if supported is not None:
        floating = [d for d in floating if d is None or d in supported]
    wide = [d for d in floating if d in (ow.float64, ow.complex128)]
    single = [d for d in floating if d in (ow.float32, ow.complex64)]
    rest = [d for d in floating if d not in wide and d not in single]
    order = (wide + single + rest) if double else (single + wide + rest)
    return order[:2]


@dataclass
class GradientResult:
    """The gradient check of one op on the backend."""

    op: str
    check: str  # "gradcheck" or "vs-cpu"
    status: str  # pass, fail, xfail, xpass, not-implemented, skip
    dtype: str | None = None
    message: str | None = None
    details: dict = field(default_factory=dict)
    reason: str | None = None
    seconds: float = 0.0

    def to_json(self) -> dict:
        """A JSON-able dict."""
        out = {"op": self.op, "check": self.check, "status": self.status, "seconds": round(self.seconds, 4)}
        for key in ("dtype", "message", "reason"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.details:
            out["details"] = self.details
        return out


def _grads(call, leaves, outs, grad_outputs):
    outs_g = [(o, g) for o, g in zip(outs, grad_outputs) if o.requires_grad]
    if not outs_g:
        return None
    return ow.autograd.grad([o for o, _ in outs_g], leaves, [g for _, g in outs_g], allow_unused=True)


def _random_like(rng, t) -> np.ndarray:
    values = rng.standard_normal(tuple(t.shape))
    if t.dtype.is_complex:
        values = values + 1j * rng.standard_normal(tuple(t.shape))
    return values


def _to(values: np.ndarray, like, device: str):
    return ow.from_numpy(np.array(values, order="C")).to(device=device, dtype=like.dtype)


def vs_cpu(ctx: Context, info, seed: int) -> GradientResult:
    """The backend's vector-Jacobian product of ``info``'s op against the CPU's, in the sample's dtype."""
    supported = ow.backends.get(ctx.backend).dtypes
    dtype, sample = first_sample(
        info, ctx.device, _preferred(info.dtypes, double=False, supported=supported), MAX_NUMEL_VS_CPU, widen=False
    )
    label = dtype.name if dtype is not None else None
    result = GradientResult(info.name, "vs-cpu", "pass", label)
    if sample is None:
        result.status, result.message = "skip", "no small floating sample on this backend's dtypes"
        return result
    rng = np.random.default_rng(seed)
    try:
        ref_call = _Call(info, sample, REFERENCE)
        ref_leaves = ref_call.leaves()
        with quiet():
            ref_outs = ref_call(*ref_leaves)
            upstream = [_random_like(rng, o) for o in ref_outs]
            expected = _grads(
                ref_call, ref_leaves, ref_outs, [_to(u, o, REFERENCE) for u, o in zip(upstream, ref_outs)]
            )
    except Exception as exc:  # the reference cannot differentiate this sample: nothing to compare with
        result.status, result.message = "skip", f"the CPU's backward raised {type(exc).__name__}: {str(exc)[:120]}"
        return result
    if expected is None:
        result.status, result.message = "skip", "no output requires grad"
        return result
    try:
        call = _Call(info, sample, ctx.device)
        leaves = call.leaves()
        with quiet():
            outs = call(*leaves)
            if len(outs) != len(ref_outs):
                raise CheckFailure("gradient", f"{len(outs)} floating outputs, the CPU gives {len(ref_outs)}")
            actual = _grads(call, leaves, outs, [_to(u, o, ctx.device) for u, o in zip(upstream, outs)])
    except CheckFailure as exc:
        result.status, result.message = "fail", exc.message
        return result
    except Exception as exc:
        if is_missing_kernel(exc):
            result.status, result.message = "not-implemented", str(exc)
        else:
            result.status = "fail"
            result.message = f"backward raised {type(exc).__name__}: {str(exc)[:200]}"
            result.details = {"traceback": last_frames(exc)}
        return result
    for i, (a, e) in enumerate(zip(actual or (), expected)):
        if (a is None) != (e is None):
            result.status = "fail"
            result.message = f"input {i}: gradient {'missing' if a is None else 'present'}, the CPU's is not"
            return result
        if a is None:
            continue
        if a.device.type != ctx.device.split(":")[0]:
            result.status, result.message = "fail", f"input {i}: gradient on {a.device}, not on the backend"
            return result
        rtol, atol = ctx.tolerance(info, e.dtype)
        bad = compare(_host(a), _host(e), e.dtype, rtol * GRAD_TOLERANCE_SCALE, atol * GRAD_TOLERANCE_SCALE)
        if bad is not None:
            result.status, result.message, result.details = "fail", f"input {i}: gradient differs from the CPU's", bad
            return result
    return result


def run_checks(ctx: Context, names: list, limit: int | None, seed: int, double: bool, config=None) -> list:
    """Gradient checks of up to ``limit`` ops of ``names`` (None: all), a seeded choice; ``double``: gradcheck."""
    chosen = candidates(names)
    if limit is not None and len(chosen) > limit:
        rng = np.random.default_rng(seed_for(seed, "gradients", None))
        chosen = sorted(rng.choice(chosen, size=limit, replace=False).tolist())
    results = []
    for name in chosen:
        info = opdb.get(name)
        start = time.perf_counter()
        if ctx.is_reference or double:
            status, detail = gradcheck_op(name, ctx.device)
            r = GradientResult(name, "gradcheck", status, "float64")
            if status == "fail":
                r.message = detail
            elif status == "skip":
                r.message = detail
            if status != "fail" and not ctx.is_reference:
                other = vs_cpu(ctx, info, seed_for(seed, name, "gradients"))
                if other.status != "pass":
                    r = other
        else:
            r = vs_cpu(ctx, info, seed_for(seed, name, "gradients"))
        reason = info.known_failure_for(None) if not isinstance(info.known_failure, dict) else None
        if config is not None:
            reason = reason or config.xfail_reason(f"grad:{name}", None)
        if reason:
            if r.status == "fail":
                r.status, r.reason = "xfail", reason
            elif r.status == "pass":
                r.status, r.reason = "xpass", reason
        r.seconds = time.perf_counter() - start
        results.append(r)
    return results
