"""gradcheck over the conformance op database: the helper the sweep test and ``scripts/`` share.

For every canonical functional op of the catalog whose entry has a sample with floating
tensors, the first small sample (every tensor at most ``MAX_NUMEL`` elements) is built in
float64 (complex128 for complex samples) on the CPU; its floating tensors require grad
and ``opweave.autograd.gradcheck`` compares the op's gradients with finite differences.
"""

from __future__ import annotations

import itertools

import numpy as np
import opweave as ow
from opweave_conformance import opdb
from opweave_conformance.opdb._core import Arr
from opweave_conformance.tensors import build

MAX_NUMEL = 24
MAX_SAMPLES = 40  # samples looked at per dtype (some generators are endless)

#: Outputs (positions) that carry a gradient, for ops PyTorch marks partly non-differentiable.
DIFFERENTIABLE_OUTPUTS = {"linalg_lstsq": (0,)}

#: Ops left out of the sweep, by reason (base names match every overload; full names one overload).
EXCEPTIONS = {
    "not differentiable (integer, boolean or piecewise-constant results; PyTorch marks them so)": (
        "argmax argmin argsort argwhere all any isclose allclose equal bincount bucketize searchsorted histc "
        "histogram histogramdd nonzero count_nonzero unique_consecutive unique_dim _unique _unique2 "
        "unique_dim_consecutive eq ne lt le gt ge isnan isinf isfinite isposinf isneginf isreal signbit "
        "logical_and logical_or logical_xor logical_not floor_divide sign ceil floor round trunc fix heaviside "
        "nextafter is_nonzero is_same_size tril_indices triu_indices bitwise_and bitwise_or bitwise_xor "
        "bitwise_not gcd lcm special_chebyshev_polynomial_t special_chebyshev_polynomial_u "
        "special_chebyshev_polynomial_v special_chebyshev_polynomial_w special_shifted_chebyshev_polynomial_t "
        "special_shifted_chebyshev_polynomial_u special_shifted_chebyshev_polynomial_v "
        "special_shifted_chebyshev_polynomial_w special_hermite_polynomial_h special_hermite_polynomial_he "
        "special_laguerre_polynomial_l special_legendre_polynomial_p frexp detach"
    ).split(),
    "PyTorch has no derivative with respect to the first argument (igamma, zeta)": (
        "igamma igammac special_gammainc special_gammaincc special_zeta"
    ).split(),
    "missing: no derivative formula yet for householder_product (orgqr, ormqr) and airy_ai, nor scatter_reduce "
    "with prod/amax/amin/mean; geqrf has none in PyTorch either": (
        "geqrf orgqr ormqr linalg_householder_product special_airy_ai index_reduce"
    ).split(),
    "singular/eigen vectors are defined up to a phase: checked with gauge-invariant losses in test_linalg_grads": (
        "svd linalg_svd linalg_eig"
    ).split(),
    "reads one triangle of a symmetric input: checked through a symmetrizing wrapper in test_gradgradcheck": (
        "cholesky linalg_cholesky linalg_cholesky_ex linalg_eigh linalg_eigvalsh"
    ).split(),
    "quantization: round-trips through integers (PyTorch's straight-through gradient is not the derivative)": (
        "dequantize fake_quantize_per_channel_affine fake_quantize_per_tensor_affine"
    ).split(),
    "duplicate indices in the sample: each duplicate receives the gradient, as in PyTorch": ["index_fill.int_Tensor"],
}


def _rng():
    return np.random.default_rng(1234)


def _is_floating(dt) -> bool:
    return dt is not None and (dt.is_floating_point or dt.is_complex)


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


def candidates() -> list[str]:
    """Canonical functional ops of the catalog (no in-place or out= variants)."""
    found = []
    for op in ow.ops.catalog():
        if op.kind != "canonical" or op.schema.mutated_arguments or op.name.startswith("quantized::"):
            continue
        found.append(op.name)
    return found


def first_sample(info):
    """The first sample with a floating tensor and small tensors, widened to double precision (or None)."""
    dtypes = [d for d in info.dtypes if d is None or _is_floating(d)]
    preferred = (
        [d for d in dtypes if d in (ow.float64, ow.complex128)]
        or [d for d in dtypes if d is not None and d.is_floating_point]
        or dtypes
    )
    for dtype in preferred[:2]:
        try:
            samples = info.sample_inputs(_rng(), dtype, "cpu")
            for sample in itertools.islice(samples, MAX_SAMPLES):
                arrs = sample.arrs()
                if not any(_is_floating(a.dtype) for a in arrs):
                    continue
                if any(a.value.size > MAX_NUMEL for a in arrs):
                    continue
                if any(_is_floating(a.dtype) and not np.isfinite(a.value).all() for a in arrs):
                    continue  # finite differences need finite values
                if any(_is_floating(a.dtype) and a.layout == "broadcast" for a in arrs):
                    continue  # a stride-0 leaf has one element per row: not the op's gradient
                sample.args = tuple(_widen(list(sample.args)))
                sample.kwargs = {k: _widen(v) for k, v in sample.kwargs.items()}
                return sample
        except Exception:  # a generator that cannot make this dtype: try the next
            continue
    return None


def _variants(sample):
    """The sample as drawn, then moved off ties (jitter), then into positive and (0, 1) domains."""
    rng = _rng()

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


def check(name: str) -> tuple[str, str]:
    """``("pass" | "skip" | "fail", detail)`` for the op ``name`` (the first sample variant that passes)."""
    first = None
    base = name.split("::")[-1].split(".")[0]
    for reason, ops in EXCEPTIONS.items():
        if base in ops or name in ops:
            return "skip", reason
    info = opdb.get(name)
    if info is None:
        return "skip", "no op database entry"
    if info.random:
        return "skip", "random op"
    if info.values_undefined:
        return "skip", "uninitialised output"
    sample = first_sample(info)
    if sample is None:
        return "skip", "no small floating sample"
    for how, variant in _variants(sample):
        status, detail = _check_sample(info, variant)
        if status != "fail":
            return status, detail if status == "skip" else how
        first = first or (status, detail)
    return first


def _check_sample(info, sample) -> tuple[str, str]:
    """``("pass" | "skip" | "fail", detail)`` for the op ``name``."""
    args, kwargs = build(sample, "cpu")
    slots = []  # (container, key, index in a tensor list or None)
    flat = list(args)
    for container, items in (("arg", enumerate(flat)), ("kw", kwargs.items())):
        for key, v in items:
            if isinstance(v, ow.Tensor) and _is_floating(v.dtype):
                slots.append((container, key, None))
            elif isinstance(v, (list, tuple)):
                for j, item in enumerate(v):
                    if isinstance(item, ow.Tensor) and _is_floating(item.dtype):
                        slots.append((container, key, j))
    if not slots:
        return "skip", "no floating tensor argument"
    leaves = []
    for container, key, j in slots:
        t = flat[key] if container == "arg" else kwargs[key]
        t = t if j is None else t[j]
        leaves.append(t.detach().clone().requires_grad_(True))
    op = info.op

    def func(*xs):
        call_args, call_kwargs = list(flat), dict(kwargs)
        for (container, key, j), x in zip(slots, xs):
            target = call_args if container == "arg" else call_kwargs
            if j is None:
                target[key] = x
            else:
                items = list(target[key])
                items[j] = x
                target[key] = items
        out = op(*call_args, **call_kwargs)
        keep = DIFFERENTIABLE_OUTPUTS.get(op.name.split("::")[-1].split(".")[0])
        if keep is not None:
            out = tuple(out[i] for i in keep)
        outs = []
        for o in out if isinstance(out, (tuple, list)) else (out,):
            outs.extend(o if isinstance(o, (tuple, list)) else (o,))
        return tuple(o for o in outs if isinstance(o, ow.Tensor) and _is_floating(o.dtype))

    try:
        outs = func(*leaves)
    except Exception as exc:  # the sample itself fails forward in double precision
        return "fail", f"forward raised {type(exc).__name__}: {str(exc)[:80]}"
    if not all(np.isfinite(o.detach().numpy()).all() for o in outs):
        return "fail", "non-finite outputs at this sample"
    if not outs:
        return "skip", "no floating output"
    try:
        ow.autograd.gradcheck(func, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)
    except Exception as exc:
        return "fail", f"{type(exc).__name__}: {str(exc)[:200]}"
    return "pass", ""
