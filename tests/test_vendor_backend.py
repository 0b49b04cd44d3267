"""The example vendor backend (``examples/vendor_backend``, device ``vnpu``) agrees with the CPU backend.

Skipped unless ``pip install -e examples/vendor_backend`` was run. Every prim
runs on vnpu for every dtype its meta function accepts, with the schema-driven
samples of ``catalog_samples.py`` converted to that dtype (and once more with
non-contiguous inputs), and must give the CPU backend's results: exactly for
integer, bool and random outputs, within float tolerance otherwise, or the same
exception type. Then a few canonical ops through their decompositions, the
allocator (split, coalesce, baseline after ops, out of memory), the two
devices, and the conformance hook.
"""

from __future__ import annotations

import gc
import importlib
import sys
import zlib
from pathlib import Path

import numpy as np
import opweave as ow
import pytest

vendor = pytest.importorskip("opweave_vendor_example")

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))
samples = importlib.import_module("catalog_samples")

DTYPES = [
    ow.bool, ow.uint8, ow.int8, ow.int16, ow.int32, ow.int64,
    ow.float16, ow.bfloat16, ow.float32, ow.float64, ow.complex64, ow.complex128,
]  # fmt: skip
TOLERANCE = {ow.float16: 2e-3, ow.bfloat16: 1.6e-2, ow.float32: 2e-5, ow.complex64: 2e-5}
UNINITIALISED = {"prims::empty_strided", "prims::empty_permuted"}  # values are undefined: metadata only
PRIMS = ow.ops.catalog(kind="prim")


def _converted(t, dtype):
    """A CPU tensor like the float32 sample ``t`` in ``dtype``, with values that mean something there."""
    x = t.numpy().astype(np.float64)
    if dtype is ow.bool:
        x = x > 0.5
    elif dtype.kind in ("int", "uint"):
        x = np.round(x * 8)
    elif dtype.is_complex:
        x = x + 0.5j * np.flip(x)
    return ow.tensor(np.asarray(x).astype(dtype.numpy), dtype=dtype)


def _convert(v, dtype):
    """Float32 sample tensors converted to ``dtype``, recursively."""
    if isinstance(v, ow.Tensor):
        return _converted(v, dtype) if v.dtype is ow.float32 else v
    if isinstance(v, list):
        return [_convert(x, dtype) for x in v]
    if isinstance(v, dict):
        return {k: _convert(x, dtype) for k, x in v.items()}
    return v


def _column_major(v):
    """Tensors of 2 or more dims given column-major strides (same values), recursively."""
    if isinstance(v, ow.Tensor):
        return v.mT.contiguous().mT if v.ndim >= 2 else v
    if isinstance(v, list):
        return [_column_major(x) for x in v]
    if isinstance(v, dict):
        return {k: _column_major(x) for k, x in v.items()}
    return v


def _sample(op, dtype):
    """(args, kwargs) on the CPU: the catalog sample with its float32 tensors (or its ``dtype``) in ``dtype``."""
    args, kwargs = samples.build(op, np.random.default_rng(zlib.crc32(op.name.encode())))
    has_float = any(isinstance(x, ow.Tensor) and x.dtype is ow.float32 for x in _flat([args, kwargs]))
    for i, arg in enumerate(op.schema.arguments):
        if not has_float and arg.type.name == "ScalarType" and not arg.type.optional:  # vary a factory's dtype
            if i < len(args) and not arg.kwarg_only:
                args[i] = dtype
            else:
                kwargs[arg.name] = dtype
            break
    return _convert(args, dtype), _convert(kwargs, dtype)


def _flat(v):
    if isinstance(v, (list, tuple)):
        for x in v:
            yield from _flat(x)
    elif isinstance(v, dict):
        yield from _flat(list(v.values()))
    else:
        yield v


def _accepts(op, dtype) -> bool:
    """Whether the prim's meta function accepts the sample in ``dtype`` (TypeError: it does not)."""
    args, kwargs = _sample(op, dtype)
    has_float = any(isinstance(x, ow.Tensor) and x.dtype is ow.float32 for x in _flat(samples.build(op)))
    if dtype is not ow.float32 and not has_float and "dtype" not in {a.name for a in op.schema.arguments}:
        return False  # nothing to vary: the float32 run covers it
    try:
        op(*samples.to_device(args, "meta"), **samples.to_device(kwargs, "meta"))
    except TypeError:
        return False
    except Exception:
        return True  # a ValueError, or data-dependent: both backends must agree on it
    return True


def _cases():
    for op in PRIMS:
        for dtype in DTYPES:
            if _accepts(op, dtype):
                yield pytest.param(op, dtype, id=f"{op.name}-{dtype.name}")


def _run(op, args, kwargs, device, noncontiguous=False):
    args, kwargs = samples.to_device(args, device), samples.to_device(kwargs, device)
    if noncontiguous:
        args, kwargs = _column_major(args), _column_major(kwargs)
    try:
        return op(*args, **kwargs)
    except Exception as exc:  # compared below: both backends must raise the same type
        return exc


def assert_same(op, cpu, vnpu, where="output"):
    """Same structure, shapes, dtypes and values (exact, or within the dtype's tolerance); vnpu on vnpu."""
    if isinstance(cpu, Exception) or isinstance(vnpu, Exception):
        assert type(vnpu) is type(cpu), f"{op.name} {where}: cpu gave {cpu!r}, vnpu gave {vnpu!r}"
        return
    if isinstance(cpu, (tuple, list)):
        assert type(vnpu) is type(cpu) and len(vnpu) == len(cpu), f"{op.name} {where}: {vnpu!r} vs {cpu!r}"
        for i, (c, v) in enumerate(zip(cpu, vnpu)):
            assert_same(op, c, v, f"{where}[{i}]")
        return
    if not isinstance(cpu, ow.Tensor):
        assert vnpu == cpu or (cpu != cpu and vnpu != vnpu), f"{op.name} {where}: {vnpu!r} vs {cpu!r}"
        return
    assert isinstance(vnpu, ow.Tensor), f"{op.name} {where}: vnpu gave {type(vnpu).__name__}"
    assert vnpu.device.type == "vnpu", f"{op.name} {where}: result on {vnpu.device}"
    assert (vnpu.shape, vnpu.dtype) == (cpu.shape, cpu.dtype), f"{op.name} {where}: {vnpu!r} vs {cpu!r}"
    if op.name in UNINITIALISED:
        assert vnpu.stride() == cpu.stride(), f"{op.name} {where}: strides {vnpu.stride()} vs {cpu.stride()}"
        return
    got, want = vnpu.cpu().numpy(), cpu.numpy()
    tol = TOLERANCE.get(cpu.dtype, 1e-12)
    if cpu.dtype.is_floating_point or cpu.dtype.is_complex:
        got, want = got.astype(np.complex128), want.astype(np.complex128)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=f"{op.name} {where}")
    else:
        np.testing.assert_array_equal(got, want, err_msg=f"{op.name} {where}")


@pytest.mark.parametrize(("op", "dtype"), list(_cases()))
def test_prim_matches_cpu(op, dtype):
    args, kwargs = _sample(op, dtype)
    assert_same(op, _run(op, args, kwargs, "cpu"), _run(op, args, kwargs, "vnpu"))


@pytest.mark.parametrize("op", PRIMS, ids=lambda op: op.name)
def test_prim_matches_cpu_on_noncontiguous_inputs(op):
    args, kwargs = _sample(op, ow.float32)
    assert_same(op, _run(op, args, kwargs, "cpu", True), _run(op, args, kwargs, "vnpu", True))


FLOAT_SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -3.7, 7.9, 1e-3, 100.0, -100.0, np.inf, -np.inf, np.nan, 3.0]
INT_SPECIALS = [0, 1, -1, 2, -3, 7, 100, -128, 127, 5]
POINTWISE = [op for op in PRIMS if "pointwise" in op.tags and all(a.type.name == "Tensor" for a in op.schema.arguments)]


def _specials(dtype, n_inputs, position):
    """Input ``position`` of ``n_inputs``: every combination of special values of ``dtype`` (an outer product)."""
    if dtype is ow.bool:
        pool = np.array([False, True])
    elif dtype.kind in ("int", "uint"):
        info = np.iinfo(dtype.numpy)
        pool = np.unique(np.clip(INT_SPECIALS, info.min, info.max)).astype(dtype.numpy)
    else:
        pool = np.array(FLOAT_SPECIALS)
        if dtype.is_complex:
            pool = pool.astype(np.complex128)
            pool.imag = np.roll(pool.real, 3)
    grid = np.meshgrid(*[pool] * n_inputs, indexing="ij")[position].reshape(-1)
    return ow.tensor(grid.astype(dtype.numpy), dtype=dtype)


def _pointwise_cases():
    for op in POINTWISE:
        n = len(op.schema.arguments)
        for dtype in DTYPES:
            if n <= 2 or dtype is not ow.complex128:  # keep ternary grids small
                metas = [ow.empty(1, dtype=ow.bool if (op.name == "prims::where" and i == 0) else dtype, device="meta")
                         for i in range(n)]  # fmt: skip
                try:
                    op(*metas)
                except TypeError:
                    continue
                yield pytest.param(op, dtype, id=f"{op.name}-{dtype.name}")


@pytest.mark.parametrize(("op", "dtype"), list(_pointwise_cases()))
def test_pointwise_prims_on_special_values(op, dtype):
    n = len(op.schema.arguments)
    args = [_specials(ow.bool if (op.name == "prims::where" and i == 0) else dtype, n, i) for i in range(n)]
    assert_same(op, _run(op, args, {}, "cpu"), _run(op, args, {}, "vnpu"))


def test_every_prim_has_a_vnpu_kernel_or_a_shared_one():
    missing = [op.name for op in PRIMS if not (op.has_kernel("vnpu") or op.composite_explicit is not None)]
    assert not missing, missing


def test_vnpu_registers_no_canonical_kernels():
    canonical = [op.name for op in ow.ops.catalog(kind="canonical") if op.has_kernel("vnpu")]
    assert not canonical, canonical


# -- canonical ops through their decompositions -------------------------------------------------------------


def _both(fn, *arrays):
    """``fn`` on CPU tensors and on vnpu tensors made from ``arrays``; returns (cpu result, vnpu result on host)."""
    cpu = fn(*(ow.tensor(a) for a in arrays))
    vnpu = fn(*(ow.tensor(a, device="vnpu") for a in arrays))
    assert vnpu.device.type == "vnpu"
    return cpu.numpy(), vnpu.cpu().numpy()


CANONICAL = {
    "softmax": (lambda x: ow.softmax(x, dim=-1), [(3, 5)]),
    "log_softmax": (lambda x: ow.log_softmax(x, 0), [(3, 5)]),
    "matmul": (lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "elementwise layer": (
        lambda x, w, b: ow.tanh(x @ w + b) * ow.sigmoid(x @ w) - (x @ w).relu(),
        [(4, 3), (3, 2), (2,)],
    ),
    "linear/gelu/norm": (lambda x, w, b: ow.gelu(ow.linear(x, w, b)) / ow.norm(x), [(3, 5), (2, 5), (2,)]),
    "conv via unfold": (lambda x, w: (x.unfold(1, 3, 1) * w).sum(-1), [(2, 8), (3,)]),
    "mean/var": (lambda x: x.var(0) + x.mean(), [(4, 3)]),
    "getitem": (lambda x: x[1:, ::2] + x[0, :2] + x[[0, 2]][:, 1:2] + x[..., None][2, 1:3, 0], [(3, 4)]),
    "bool mask": (lambda x: x[x > 0.5], [(3, 4)]),
    "cumsum/sort": (lambda x: x.cumsum(1) + x.sort(0)[0] + x.argsort(1), [(3, 4)]),
    "where/clamp": (lambda x: ow.where(x > 0.5, x, -x).clamp(-0.6, 0.6), [(3, 4)]),
}


@pytest.mark.parametrize("name", CANONICAL)
def test_canonical_ops_run_through_decompositions(name):
    fn, shapes = CANONICAL[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    arrays = [rng.uniform(0, 1, s).astype(np.float32) for s in shapes]
    cpu, vnpu = _both(fn, *arrays)
    np.testing.assert_allclose(vnpu, cpu, rtol=1e-5, atol=1e-6)


def test_setitem_and_inplace_ops_write_vnpu_memory():
    x, y = ow.zeros(3, 4), ow.zeros(3, 4, device="vnpu")
    for t in (x, y):
        t[1] = 2.0
        t[:, 0] += 1
        t.mul_(3)
    np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())


def test_views_alias_vnpu_memory():
    x = ow.arange(12, device="vnpu").reshape(3, 4)
    v = x.T[1:]
    v.fill_(-1)
    assert v.untyped_storage() is x.untyped_storage()
    assert (x.cpu().numpy()[:, 1:] == -1).all()


# -- the allocator --------------------------------------------------------------------------------------------


def test_arena_splits_and_coalesces():
    from opweave_vendor_example._arena import ALIGN, Arena

    arena = Arena(0, 16 * ALIGN)
    a, b, c = arena.malloc(1), arena.malloc(ALIGN + 1), arena.malloc(ALIGN)
    assert (a, b, c) == (0, ALIGN, 3 * ALIGN)
    assert arena.stats()["allocated"] == 4 * ALIGN and arena.stats()["num_allocs"] == 3
    arena.free(b)
    assert arena.malloc(ALIGN) == ALIGN  # first fit reuses the hole, splitting it
    arena.free(a)
    arena.free(ALIGN)
    assert arena.stats()["free_blocks"] == 2  # [0, 3*ALIGN) coalesced, and the tail
    arena.free(c)
    stats = arena.stats()
    assert (stats["allocated"], stats["num_allocs"], stats["free_blocks"]) == (0, 0, 1)
    assert stats["peak"] == 4 * ALIGN
    with pytest.raises(ow.OutOfMemoryError, match="vnpu:0"):
        arena.malloc(17 * ALIGN)


def test_memory_returns_to_baseline_after_ops():
    gc.collect()
    before = vendor.memory_stats("vnpu:0")
    x = ow.randn(8, 8, device="vnpu")
    y = (ow.softmax(x @ x.T, dim=1) + x.sum(0)).sort(1)[0]
    assert vendor.memory_stats("vnpu:0")["allocated"] > before["allocated"]
    assert y.cpu().shape == (8, 8)
    del x, y
    gc.collect()
    after = vendor.memory_stats("vnpu:0")
    assert (after["allocated"], after["num_allocs"]) == (before["allocated"], before["num_allocs"])
    assert after["peak"] >= before["peak"] and after["reserved"] == before["reserved"]


def test_out_of_memory_is_an_opweave_error_naming_the_device():
    with pytest.raises(ow.OutOfMemoryError, match="vnpu:1"):
        ow.empty(1 << 40, dtype=ow.uint8, device="vnpu:1")


# -- devices ---------------------------------------------------------------------------------------------------


def test_two_devices_with_their_own_memory():
    gc.collect()
    before = vendor.memory_stats("vnpu:1")["allocated"]
    a = ow.ones(4, device="vnpu:0")
    b = a.to("vnpu:1")
    assert (a.device, b.device) == (ow.device("vnpu:0"), ow.device("vnpu:1"))
    assert vendor.memory_stats("vnpu:1")["allocated"] > before
    assert b.data_ptr() // (1 << 40) == 2 and a.data_ptr() // (1 << 40) == 1
    np.testing.assert_array_equal((b * 2).cpu().numpy(), np.full(4, 2.0, np.float32))
    assert (b * 2).device == ow.device("vnpu:1")


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(lambda a, b: a + b, id="add"),
        pytest.param(lambda a, b: ow.where(a > 0, a, b), id="where"),
        pytest.param(lambda a, b: a @ b.reshape(4, 1), id="matmul"),
        pytest.param(lambda a, b: ow.ops.prims.add(a, b), id="prims.add"),
        pytest.param(lambda a, b: ow.ops.prims.mm(a.reshape(1, 4), b.reshape(4, 1)), id="prims.mm"),
    ],
)
def test_cross_device_calls_raise(fn):
    a, b = ow.ones(4, device="vnpu:0"), ow.ones(4, device="vnpu:1")
    with pytest.raises(RuntimeError, match="device"):
        fn(a, b)


def test_copy_between_devices():
    a, b = ow.zeros(4, device="vnpu:0"), ow.arange(4.0, device="vnpu:1")
    a.copy_(b)
    assert a.device == ow.device("vnpu:0")
    np.testing.assert_array_equal(a.cpu().numpy(), np.arange(4.0, dtype=np.float32))


def test_cpu_and_vnpu_tensors_do_not_mix_except_cpu_scalars():
    a = ow.ones(3, device="vnpu")
    with pytest.raises(RuntimeError, match="device"):
        a + ow.ones(3)
    np.testing.assert_array_equal((a + ow.tensor(2.0)).cpu().numpy(), np.full(3, 3.0, np.float32))


def test_no_third_device():
    with pytest.raises(RuntimeError, match="vnpu:2"):
        ow.ones(2, device="vnpu:2")


def test_round_trip_every_dtype_exactly():
    for dtype in DTYPES:
        host = _converted(ow.tensor(np.linspace(0, 1, 12, dtype=np.float32).reshape(3, 4)), dtype)
        back = host.to("vnpu").cpu()
        assert back.dtype is dtype
        np.testing.assert_array_equal(back.numpy().view(np.uint8), host.numpy().view(np.uint8))


def test_autocast_runs_matmuls_in_float16():
    x, w = ow.randn(2, 3, device="vnpu"), ow.randn(3, 2, device="vnpu")
    with ow.autocast("vnpu"):
        y = x @ w
        assert (y.dtype, y.device.type) == (ow.float16, "vnpu")
        assert ow.softmax(y, 1).dtype is ow.float32
    np.testing.assert_allclose(y.cpu().numpy(), (x.cpu() @ w.cpu()).numpy(), rtol=2e-3, atol=2e-3)


# -- registration -----------------------------------------------------------------------------------------------


def test_registered_through_the_entry_point():
    row = next(s for s in ow.backends.status() if s.name == "vnpu")
    assert row.available and row.devices == 2 and row.plugin == "opweave_vendor_example"


def test_conformance_config_hook():
    hook = ow.backends.plugin_manager().hook.opweave_conformance_config
    config = hook(backend="vnpu")
    assert set(config) == {"tolerances", "xfail", "skip_dtypes"}
    assert all(isinstance(reason, str) and reason for reason in config["xfail"].values())
    assert vendor.opweave_conformance_config("cpu") is None


def test_arena_free_inside_a_locked_section_does_not_deadlock():
    # A garbage collection inside malloc's locked section runs the finalizer that frees a block on the
    # same thread; the free is deferred to the next locked call instead of waiting for the lock it holds.
    from opweave_vendor_example._arena import Arena

    arena = Arena(0, 1 << 16)
    offset = arena.malloc(64)
    with arena._lock:
        arena.free(offset)
    assert arena.stats()["allocated"] == 0
    assert arena.malloc(1 << 16) == 0  # the whole arena is one free block again
