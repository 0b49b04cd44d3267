"""gradcheck over the conformance op database: the helper the sweep test and ``scripts/`` share.

For every canonical functional op of the catalog whose entry has a sample with floating
tensors, the first small sample (every tensor at most ``MAX_NUMEL`` elements) is built in
float64 (complex128 for complex samples) on the CPU; its floating tensors require grad
and ``opweave.autograd.gradcheck`` compares the op's gradients with finite differences.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
from opweave_conformance import opdb
from opweave_conformance.opdb._core import Arr
from opweave_conformance.tensors import build

MAX_NUMEL = 24

#: Ops left out of the sweep, with the reason.
EXCEPTIONS = {
    # results are not differentiable functions of the inputs (integers, booleans, indices, counts)
    "nondifferentiable": (
        "argmax argmin argsort argwhere all any isclose allclose equal bincount bucketize searchsorted histc "
        "histogram histogramdd nonzero count_nonzero unique unique_consecutive unique_dim eq ne lt le gt ge "
        "isnan isinf isfinite isposinf isneginf isreal signbit logical_and logical_or logical_xor logical_not "
        "floor_divide sign ceil floor round trunc fix heaviside nextafter is_nonzero is_same_size "
        "tril_indices triu_indices bitwise_and bitwise_or bitwise_xor bitwise_not gcd lcm"
    ).split(),
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
            for sample in samples:
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


def check(name: str) -> tuple[str, str]:
    """``("pass" | "skip" | "fail", detail)`` for the op ``name``."""
    base = name.split("::")[-1].split(".")[0]
    for reason, ops in EXCEPTIONS.items():
        if base in ops:
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
    args, kwargs = build(sample, "cpu")
    slots = []
    flat = list(args)
    for i, a in enumerate(flat):
        if isinstance(a, ow.Tensor) and _is_floating(a.dtype):
            slots.append(("arg", i))
    for k, v in kwargs.items():
        if isinstance(v, ow.Tensor) and _is_floating(v.dtype):
            slots.append(("kw", k))
    if not slots:
        return "skip", "no floating tensor argument"
    leaves = []
    for kind, key in slots:
        t = flat[key] if kind == "arg" else kwargs[key]
        leaves.append(t.detach().clone().requires_grad_(True))
    op = info.op

    def func(*xs):
        call_args, call_kwargs = list(flat), dict(kwargs)
        for (kind, key), x in zip(slots, xs):
            if kind == "arg":
                call_args[key] = x
            else:
                call_kwargs[key] = x
        out = op(*call_args, **call_kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return tuple(o for o in outs if isinstance(o, ow.Tensor) and _is_floating(o.dtype))

    try:
        outs = func(*leaves)
    except Exception as exc:  # the sample itself fails forward in double precision
        return "skip", f"forward raised {type(exc).__name__}: {str(exc)[:80]}"
    if not outs:
        return "skip", "no floating output"
    try:
        ow.autograd.gradcheck(func, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3)
    except Exception as exc:
        return "fail", f"{type(exc).__name__}: {str(exc)[:200]}"
    return "pass", ""
