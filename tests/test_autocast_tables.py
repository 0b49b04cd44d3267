"""Every op of every autocast table follows its policy, on the CPU and on the example vendor backend.

Each functional overload of each table entry runs inside ``autocast(device)`` on the
catalog's sample arguments (floating tensors converted to the policy's input dtype),
and every floating output (complex: its real dtype) must have the dtype the policy promises:

- lower_precision: float32 inputs → outputs in the autocast dtype;
- fp32 and fp32_set_opt_dtype: inputs in the autocast dtype → float32 outputs;
- promote: float32 and autocast-dtype inputs mixed → float32 outputs.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from opweave_conformance.opdb import schema_samples

samples = schema_samples

DEVICES = ["cpu"] + (["vnpu"] if ow.backends.is_available("vnpu") else [])

#: Table ops whose results are never floating (an integer rank): they only have to run under autocast.
INTEGER_RESULTS = ("linalg_matrix_rank",)


def _overloads(name: str):
    packet, _, overload = name.partition(".")
    found = getattr(ow.ops, packet, None)
    if found is None:
        return []
    ops = [found.overloads.get(overload)] if overload else list(found.overloads.values())
    return [op for op in ops if op is not None and op.variant is None]


def _cases():
    for device in DEVICES:
        policy = ow.autocast_policy(device)
        for category in ("lower_precision", "fp32", "fp32_set_opt_dtype", "promote"):
            for name in sorted(getattr(policy, category)):
                for op in _overloads(name):
                    yield pytest.param(device, category, op, id=f"{device}-{category}-{op.name}")


def _convert(value, dtype, flip):
    """Floating tensors to ``dtype``; with ``flip``, every other one stays float32 (for promote)."""
    if isinstance(value, ow.Tensor) and value.dtype.is_floating_point:
        converted = value.to(dtype) if not flip[0] else value
        flip[0] = not flip[0] if flip[1] else flip[0]
        return converted
    if isinstance(value, list):
        return [_convert(v, dtype, flip) for v in value]
    return value


def _floating_outputs(out):
    items = out if isinstance(out, (tuple, list)) else [out]
    return [t for t in items if isinstance(t, ow.Tensor) and (t.dtype.is_floating_point or t.dtype.is_complex)]


@pytest.mark.parametrize(("device", "category", "op"), list(_cases()))
def test_table_op_output_dtype(device, category, op):
    policy = ow.autocast_policy(device)
    low = policy.dtype
    args, kwargs = samples.build(op, np.random.default_rng(0))
    args, kwargs = samples.to_device(args, device), samples.to_device(kwargs, device)
    if category == "lower_precision":
        expected, source, flip = low, ow.float32, [False, False]
    elif category == "promote":
        expected, source, flip = ow.float32, low, [False, True]
    else:
        expected, source, flip = ow.float32, low, [False, False]
    args = [_convert(a, source, flip) for a in args]
    kwargs = {k: _convert(v, source, flip) for k, v in kwargs.items()}
    with ow.autocast(device):
        out = op(*args, **kwargs)
    outputs = _floating_outputs(out)
    if op.schema.name in INTEGER_RESULTS:
        assert not outputs and out.dtype is ow.int64, op.name
        return
    assert outputs, f"{op.name} returned no floating tensor"
    assert all(t.dtype.to_real() is expected for t in outputs), [t.dtype for t in outputs]
