"""Every operator of the catalog runs on the CPU and on the meta device, and the two agree.

One test per overload (prims, canonical ops and their generated in-place and
``out=`` variants), with the sample arguments of ``catalog_samples.py``: a new
op without a working sample fails here. Outputs are compared by structure,
shape, dtype and device only (the per-family tests check values). Ops whose
output depends on the data must refuse the meta device with NotImplementedError.
Every op also runs twice on the CPU in deterministic mode and must give the same bits.
"""

from __future__ import annotations

import importlib
import struct
import sys
from pathlib import Path

import numpy as np
import opweave as ow
import pytest

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
samples = importlib.import_module("catalog_samples")

DATA_DEPENDENT = frozenset({"dynamic_output_shape", "data_dependent_output"})

#: Ops that fail because of a bug in the op (not in its sample): op name -> reason. Owners: fix and remove.
KNOWN_FAILURES: dict[str, str] = {
    "tensor_split.tensor_indices_or_sections": "tagged data_dependent_output but runs on meta with a CPU 0-dim "
    "sections tensor (as PyTorch allows); with a meta index tensor it raises TypeError, not NotImplementedError",
}

# The c10d:: collectives need a process group of several ranks: tests/distributed runs them under mpiexec.
CATALOG = [op for op in ow.ops.catalog() if op.schema.namespace != "c10d"]


def _params():
    for op in CATALOG:
        marks = ()
        if op.name in KNOWN_FAILURES:
            marks = (pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[op.name]),)
        yield pytest.param(op, id=op.name, marks=marks)


def _call(op, args, kwargs):
    return op(*args, **kwargs)


def _empty_like_result(result, device):
    return ow.empty(tuple(result.shape), dtype=result.dtype, device=device)


def cases(op):
    """(cpu_args, cpu_kwargs, meta_args, meta_kwargs) for ``op``, its variants derived from its functional op.

    Every tensor is a fresh copy (in-place ops write their first argument); ``out=`` tensors are allocated with
    the shapes and dtypes of the functional op's CPU results, on the device of the run.
    """
    functional = op.functional or op
    args, kwargs = samples.build(functional)
    meta_args, meta_kwargs = samples.to_device(args, "meta"), samples.to_device(kwargs, "meta")
    args, kwargs = samples.to_device(args, "cpu"), samples.to_device(kwargs, "cpu")
    if op.variant == "out":
        results = _call(functional, args, kwargs)
        results = results if isinstance(results, tuple) else (results,)
        given = {a.name for a in functional.schema.arguments}
        names = [a.name for a in op.schema.arguments if a.name not in given]
        assert len(names) == len(results), f"{op.name}: {len(names)} out arguments for {len(results)} results"
        for name, result in zip(names, results):
            kwargs[name] = _empty_like_result(result, "cpu")
            meta_kwargs[name] = _empty_like_result(result, "meta")
    return args, kwargs, meta_args, meta_kwargs


def check_agree(op, cpu, meta, where="output"):
    """CPU and meta results have the same structure, shapes and dtypes (and sit on their devices)."""
    if isinstance(cpu, ow.Tensor):
        assert isinstance(meta, ow.Tensor), f"{op.name} {where}: meta gave {type(meta).__name__}, cpu a Tensor"
        assert tuple(meta.shape) == tuple(cpu.shape), f"{op.name} {where}: shape {meta.shape} on meta, {cpu.shape}"
        assert meta.dtype == cpu.dtype, f"{op.name} {where}: dtype {meta.dtype} on meta, {cpu.dtype} on cpu"
        assert cpu.device.type == "cpu", f"{op.name} {where}: cpu result on {cpu.device}"
        assert meta.device.type == "meta", f"{op.name} {where}: meta result on {meta.device}"
    elif isinstance(cpu, (tuple, list)):
        assert type(meta) is type(cpu), f"{op.name} {where}: {type(meta).__name__} on meta, {type(cpu).__name__}"
        assert len(meta) == len(cpu), f"{op.name} {where}: {len(meta)} outputs on meta, {len(cpu)} on cpu"
        for i, (c, m) in enumerate(zip(cpu, meta)):
            check_agree(op, c, m, f"{where}[{i}]")
    else:
        assert type(meta) is type(cpu), f"{op.name} {where}: {type(meta).__name__} on meta, {type(cpu).__name__}"


def check_aliasing(op, result, args, kwargs):
    """A return annotated ``Tensor(a!)`` is the argument annotated ``Tensor(a!)`` (in-place ops, ``out=``)."""
    results = result if isinstance(result, tuple) else (result,)
    values = dict(zip((a.name for a in op.schema.arguments), args)) | kwargs
    written = {a.type.alias.set: a.name for a in op.schema.arguments if a.type.alias and a.type.alias.is_write}
    for i, ret in enumerate(op.schema.returns):
        if ret.type.alias and ret.type.alias.is_write and not ret.type.is_list:
            name = written[ret.type.alias.set]
            assert results[i] is values[name], f"{op.name}: output {i} must be argument '{name}' itself"


@pytest.mark.parametrize("op", list(_params()))
def test_cpu_and_meta_agree(op):
    args, kwargs, meta_args, meta_kwargs = cases(op)
    cpu = _call(op, args, kwargs)
    check_aliasing(op, cpu, args, kwargs)
    if op.tags & DATA_DEPENDENT:
        with pytest.raises(NotImplementedError):
            _call(op, meta_args, meta_kwargs)
        return
    meta = _call(op, meta_args, meta_kwargs)
    check_aliasing(op, meta, meta_args, meta_kwargs)
    check_agree(op, cpu, meta)


def test_catalog_counts():
    prims = [op for op in CATALOG if op.kind == "prim"]
    functional = [op for op in CATALOG if op.kind == "canonical" and op.variant is None]
    assert len(prims) >= 230, len(prims)
    assert len(functional) >= 250, len(functional)


def test_overrides_name_real_ops():
    """Every override key names an op (qualified or packet name) and only arguments that op has."""
    for key, spec in samples.OVERRIDES.items():
        ops = [o for o in CATALOG if key in (o.name, o.name.split(".")[0])]
        assert ops, f"override {key!r} names no op"
        names = {a.name for o in ops for a in o.schema.arguments} | {"*"}
        assert set(spec) <= names, f"override {key!r}: unknown arguments {sorted(set(spec) - names)}"


# -- deterministic mode: every op, run twice, gives the same bits ---------------------------------------------


def _bits(value):
    """A comparable, NaN-aware record of ``value``: tensors by shape, dtype and the bytes of their elements."""
    if isinstance(value, ow.Tensor):
        array = np.ascontiguousarray(value.numpy())
        return ("tensor", tuple(value.shape), str(value.dtype), array.tobytes())
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(_bits(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _bits(v)) for k, v in value.items()))
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    if isinstance(value, complex):
        return ("complex", struct.pack("<dd", value.real, value.imag))
    return (type(value).__name__, value)


def _deterministic_run(op):
    """Fresh sample arguments, the same seed, one call in deterministic mode: the bits of the result and arguments."""
    args, kwargs, _, _ = cases(op)
    ow.manual_seed(1234)
    result = _call(op, args, kwargs)
    return _bits(result), _bits(args), _bits(kwargs)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name) for op in CATALOG])
def test_cpu_runs_are_bitwise_identical_in_deterministic_mode(op):
    """The CPU registers only deterministic kernels: no op raises in the mode, and two runs agree bit for bit.

    Random ops draw from the same seed in both runs; ``empty*`` outputs are filled (NaN or the
    integer maximum) by the mode, so they agree too. In-place and ``out=`` variants are compared
    through their (written) arguments as well.
    """
    ow.use_deterministic_algorithms(True)
    try:
        first, second = _deterministic_run(op), _deterministic_run(op)
    finally:
        ow.use_deterministic_algorithms(False)
    assert first == second, f"{op.name}: two runs in deterministic mode differ"
