"""Deterministic mode: the settings, kernel choice on a test device, uninitialised-memory fill, op tags.

The test device ``detdev`` registers a nondeterministic ``prims::add`` with a deterministic
alternative and a nondeterministic ``prims::mul`` without one; canonical ops run their
decompositions and other prims run on the CPU through a boxed fallback. Expectations are
written out here (NumPy for values).
"""

from __future__ import annotations

import collections
import math
import threading
import types
import warnings

import numpy as np
import opweave
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave import ops
from opweave.backends import Backend, Storage
from opweave.dispatch import Layer, explain, keys_included, layer_bit
from opweave.utils import deterministic
from opweave.utils.deterministic import DeterministicGuard

CALLS = collections.Counter()
DET = opweave.device("detdev")


@pytest.fixture(autouse=True)
def _restore_modes():
    """Every test starts and ends with deterministic mode off and the fill setting on."""
    opweave.use_deterministic_algorithms(False)
    deterministic.fill_uninitialized_memory = True
    yield
    opweave.use_deterministic_algorithms(False)
    deterministic.fill_uninitialized_memory = True


# -- the test device -------------------------------------------------------------------------


class DetBackend(Backend):
    """Bytes in a NumPy uint8 buffer."""

    name = "detdev"

    def allocate(self, nbytes, device):
        """A zeroed buffer."""
        return Storage(np.zeros(nbytes, np.uint8), nbytes, DET, self)

    def copy_from_host(self, array, device):
        """Copy the array's bytes in."""
        data = np.frombuffer(np.ascontiguousarray(array).tobytes(), np.uint8).copy()
        return Storage(data, data.nbytes, DET, self)

    def copy_to_host(self, tensor):
        """Copy the tensor's elements out."""
        return np.array(_view(tensor), order="C")


def _view(t):
    if 0 in t.shape:
        return np.empty(t.shape, t.dtype.numpy)
    item = t.dtype.itemsize
    return np.ndarray(
        t.shape,
        t.dtype.numpy,
        t.untyped_storage().handle,
        t.storage_offset() * item,
        tuple(s * item for s in t.stride()),
    )


def _new(array, dtype):
    return BACKEND.from_host(np.asarray(array, dtype=dtype.numpy), DET)


def nondeterministic_add(a, b):
    """prims::add, registered deterministic=False."""
    CALLS["add"] += 1
    return _new(_view(a) + _view(b), a.dtype)


def deterministic_add(a, b):
    """The deterministic alternative of prims::add."""
    CALLS["deterministic_add"] += 1
    return _new(_view(a) + _view(b), a.dtype)


def nondeterministic_mul(a, b):
    """prims::mul, registered deterministic=False, with no alternative."""
    CALLS["mul"] += 1
    return _new(_view(a) * _view(b), a.dtype)


def cpu_fallback(op, *args):
    """Canonical ops: their decomposition; any other prim: run on the CPU and move tensor results back."""
    if op.decomposition is not None:
        return op.decomposition(*args)
    moved = [a.cpu() if isinstance(a, opweave.Tensor) else a for a in args]
    moved = [opweave.device("cpu") if isinstance(a, opweave.device) else a for a in moved]
    out = op.call_bound(*moved)
    return out.to("detdev") if isinstance(out, opweave.Tensor) else out


BACKEND = DetBackend()


def _plugin():
    module = types.ModuleType("detdev_plugin")

    @opweave.hookimpl
    def opweave_register(registry):
        registry.backend(BACKEND)
        registry.fallback(Layer.Dense, "detdev", cpu_fallback)
        registry.impl("prims::add", nondeterministic_add, backend="detdev", deterministic=False)
        registry.deterministic_impl("prims::add", deterministic_add, backend="detdev")
        registry.impl("prims::mul", nondeterministic_mul, backend="detdev", deterministic=False)

    module.opweave_register = opweave_register
    return module


if "detdev" not in {s.name for s in opweave.backends.status(load_all=False) if s.loaded}:
    opweave.backends.register_plugin(_plugin(), name="detdev")


def det(values):
    """A float32 tensor on the test device."""
    return opweave.tensor(values, dtype=opweave.float32, device="detdev")


# -- the settings ----------------------------------------------------------------------------


def test_defaults_and_setters_round_trip():
    assert not opweave.are_deterministic_algorithms_enabled()
    assert not opweave.is_deterministic_algorithms_warn_only_enabled()
    assert opweave.get_deterministic_debug_mode() == 0
    opweave.use_deterministic_algorithms(True)
    assert opweave.are_deterministic_algorithms_enabled()
    assert not opweave.is_deterministic_algorithms_warn_only_enabled()
    assert opweave.get_deterministic_debug_mode() == 2
    opweave.use_deterministic_algorithms(True, warn_only=True)
    assert opweave.is_deterministic_algorithms_warn_only_enabled()
    assert opweave.get_deterministic_debug_mode() == 1
    opweave.use_deterministic_algorithms(False)
    assert not opweave.are_deterministic_algorithms_enabled()
    assert opweave.get_deterministic_debug_mode() == 0


@pytest.mark.parametrize(
    ("level", "enabled", "warn_only", "read_back"),
    [
        (0, False, False, 0),
        ("default", False, False, 0),
        (1, True, True, 1),
        ("warn", True, True, 1),
        (2, True, False, 2),
        ("error", True, False, 2),
    ],
)
def test_debug_mode_levels(level, enabled, warn_only, read_back):
    opweave.set_deterministic_debug_mode(level)
    assert opweave.are_deterministic_algorithms_enabled() is enabled
    assert opweave.is_deterministic_algorithms_warn_only_enabled() is warn_only
    assert opweave.get_deterministic_debug_mode() == read_back


def test_bad_settings_raise_naming_the_argument():
    with pytest.raises(TypeError, match="use_deterministic_algorithms.*'mode' must be bool"):
        opweave.use_deterministic_algorithms(1)
    with pytest.raises(TypeError, match="use_deterministic_algorithms.*'warn_only' must be bool"):
        opweave.use_deterministic_algorithms(True, warn_only="yes")
    with pytest.raises(TypeError, match="debug_mode must be str or int"):
        opweave.set_deterministic_debug_mode(1.0)
    with pytest.raises(ValueError, match="expected 0, 1, or 2, but got 3"):
        opweave.set_deterministic_debug_mode(3)
    with pytest.raises(ValueError, match="expected one of `default`, `warn`, `error`, but got loud"):
        opweave.set_deterministic_debug_mode("loud")
    with pytest.raises(TypeError, match="fill_uninitialized_memory must be bool"):
        deterministic.fill_uninitialized_memory = 0
    assert not opweave.are_deterministic_algorithms_enabled(), "a rejected call must not change the mode"


def test_mode_is_a_bit_of_every_calls_key_set():
    x = opweave.tensor([1.0])
    assert "deterministic" not in str(explain(ops.prims.sin.default, x))
    opweave.use_deterministic_algorithms(True)
    assert "DispatchKeySet(Dense, deterministic | cpu)" in str(explain(ops.prims.sin.default, x))


def test_guard_restores_settings_also_on_errors():
    opweave.use_deterministic_algorithms(True, warn_only=True)
    with pytest.raises(KeyError):
        with DeterministicGuard(False, fill_uninitialized_memory=False):
            assert not opweave.are_deterministic_algorithms_enabled()
            assert deterministic.fill_uninitialized_memory is False
            with DeterministicGuard(True):
                assert opweave.get_deterministic_debug_mode() == 2
            assert not opweave.are_deterministic_algorithms_enabled()
            raise KeyError("boom")
    assert opweave.get_deterministic_debug_mode() == 1
    assert deterministic.fill_uninitialized_memory is True


def test_setting_is_process_global():
    seen = {}
    started, changed = threading.Event(), threading.Event()

    def old_thread():
        with keys_included(layer_bit(Layer.Autocast)):  # gives this thread its own value of the keys
            pass
        started.set()
        changed.wait(10)
        seen["old"] = (opweave.are_deterministic_algorithms_enabled(), opweave.get_deterministic_debug_mode())

    worker = threading.Thread(target=old_thread)
    worker.start()
    started.wait(10)
    opweave.use_deterministic_algorithms(True, warn_only=True)
    changed.set()
    worker.join()

    def new_thread():
        seen["new"] = (opweave.are_deterministic_algorithms_enabled(), opweave.get_deterministic_debug_mode())

    fresh = threading.Thread(target=new_thread)
    fresh.start()
    fresh.join()
    assert seen == {"old": (True, 1), "new": (True, 1)}
    opweave.use_deterministic_algorithms(False)
    fresh = threading.Thread(target=new_thread)
    fresh.start()
    fresh.join()
    assert seen["new"] == (False, 0)


def test_two_threads_never_see_each_others_autocast_or_default_device():
    """Two real threads in lock step: one inside autocast and ``with opweave.device("meta")``, one not.

    At each step both check their own modes (and what a matmul and a factory give) while the
    other is in a different state. Deterministic mode, process-global as in PyTorch, is switched
    on by the main thread between two steps: both threads see it, and it outlives their regions.
    """
    steps = threading.Barrier(3, timeout=20)
    errors = []
    x = opweave.ones(2, 2)

    def state():
        return (
            opweave.is_autocast_enabled("cpu"),
            ops.mm(x, x).dtype,
            opweave.get_default_device().type,
            opweave.zeros(1).device.type,
            opweave.are_deterministic_algorithms_enabled(),
        )

    bf16, f16, f32 = opweave.bfloat16, opweave.float16, opweave.float32
    amp_sees = [  # after each step
        (True, bf16, "meta", "meta", False),
        (True, bf16, "meta", "meta", True),
        (False, f32, "meta", "meta", True),  # autocast(enabled=False) nested inside
        (True, bf16, "meta", "meta", True),
        (False, f32, "cpu", "cpu", True),  # left both regions
    ]
    plain_sees = [
        (False, f32, "cpu", "cpu", False),
        (False, f32, "cpu", "cpu", True),
        (True, f16, "cpu", "cpu", True),  # its own float16 region, while the other has autocast off
        (False, f32, "cpu", "cpu", True),
        (False, f32, "cpu", "cpu", True),
    ]

    def run(name, expected, program):
        try:
            for step, action in enumerate(program):
                action()
                steps.wait()  # every thread has made this step's change
                seen = state()
                assert seen == expected[step], f"{name} thread, step {step}: {seen} != {expected[step]}"
                steps.wait()  # every thread has checked; the next step may change modes
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            steps.abort()

    amp_regions = [opweave.autocast("cpu"), opweave.device("meta"), opweave.autocast("cpu", enabled=False)]
    amp = [
        lambda: (amp_regions[0].__enter__(), amp_regions[1].__enter__()),
        lambda: None,
        lambda: amp_regions[2].__enter__(),
        lambda: amp_regions[2].__exit__(None, None, None),
        lambda: (amp_regions[1].__exit__(None, None, None), amp_regions[0].__exit__(None, None, None)),
    ]
    plain_region = opweave.autocast("cpu", dtype=f16)
    plain = [
        lambda: None,
        lambda: None,
        lambda: plain_region.__enter__(),
        lambda: plain_region.__exit__(None, None, None),
        lambda: None,
    ]
    threads = [
        threading.Thread(target=run, args=("amp", amp_sees, amp)),
        threading.Thread(target=run, args=("plain", plain_sees, plain)),
    ]
    for thread in threads:
        thread.start()
    try:
        for step in range(len(amp)):
            if step == 1:
                opweave.use_deterministic_algorithms(True)
            steps.wait()
            steps.wait()
    except threading.BrokenBarrierError:
        pass
    for thread in threads:
        thread.join(20)
    if errors:
        raise errors[0]
    assert not opweave.is_autocast_enabled("cpu") and opweave.get_default_device().type == "cpu"


# -- kernel choice ---------------------------------------------------------------------------


def test_nondeterministic_kernel_runs_outside_deterministic_mode():
    before = CALLS.copy()
    assert ops.prims.add(det([1.0, 2.0]), det([3.0, 4.0])).cpu().tolist() == [4.0, 6.0]
    assert ops.prims.mul(det([1.0, 2.0]), det([3.0, 4.0])).cpu().tolist() == [3.0, 8.0]
    assert CALLS - before == collections.Counter({"add": 1, "mul": 1})


def test_deterministic_alternative_is_preferred_in_deterministic_mode():
    x, y = det([1.0, 2.0]), det([0.5, 0.25])
    opweave.use_deterministic_algorithms(True)
    before = CALLS.copy()
    assert ops.prims.add(x, y).cpu().tolist() == [1.5, 2.25]
    assert (x + y).cpu().tolist() == [1.5, 2.25], "canonical add decomposes into the deterministic prims::add"
    assert CALLS - before == collections.Counter({"deterministic_add": 2})
    opweave.use_deterministic_algorithms(False)
    before = CALLS.copy()
    ops.prims.add(x, y)
    assert CALLS - before == collections.Counter({"add": 1}), "leaving the mode goes back to the regular kernel"


def test_no_alternative_raises_naming_op_and_backend():
    x = det([1.0, 2.0])
    opweave.use_deterministic_algorithms(True)
    before = CALLS.copy()
    with pytest.raises(RuntimeError, match=r"prims::mul does not have a deterministic implementation on detdev"):
        ops.prims.mul(x, x)
    with pytest.raises(RuntimeError, match=r"prims::mul .*detdev.*use_deterministic_algorithms\(True\)"):
        x * x  # the canonical op reaches the prim through its decomposition
    assert CALLS - before == collections.Counter(), "the nondeterministic kernel must not run"


def test_warn_only_warns_once_per_call_and_computes():
    x = det([1.0, 2.0])
    opweave.use_deterministic_algorithms(True, warn_only=True)
    before = CALLS.copy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [ops.prims.mul(x, x).cpu().tolist() for _ in range(3)]
        assert ops.prims.add(x, x).cpu().tolist() == [2.0, 4.0]
    assert results == [[1.0, 4.0]] * 3
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert len(messages) == 3, messages
    assert all("prims::mul does not have a deterministic implementation on detdev" in m for m in messages)
    assert CALLS - before == collections.Counter({"mul": 3, "deterministic_add": 1})


def test_changing_warn_only_is_not_hidden_by_the_kernel_cache():
    x = det([3.0])
    opweave.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match="prims::mul"):
        ops.prims.mul(x, x)
    opweave.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match="prims::mul"):
        ops.prims.mul(x, x)
    opweave.use_deterministic_algorithms(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ops.prims.mul(x, x).cpu().tolist() == [9.0]


def test_nondeterministic_composite_explicit_kernel_is_checked():
    from opweave import _dispatch

    op = ops.prims.sub.default
    x = det([5.0, 7.0])

    def composite_sub(a, b):
        return _new(_view(a) - _view(b), a.dtype)

    registration = _dispatch.register_composite_explicit(op, composite_sub, "test", deterministic=False)
    try:
        assert ops.prims.sub(x, x).cpu().tolist() == [0.0, 0.0]
        opweave.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError, match="prims::sub does not have a deterministic implementation on detdev"):
            ops.prims.sub(x, x)
    finally:
        registration.remove()


def test_cpu_kernels_are_all_registered_deterministic():
    cpu = [(op.name, k) for op in ops.catalog() for (layer, b), k in op.kernels().items() if b == "cpu"]
    assert cpu, "the CPU backend registers kernels"
    assert [name for name, k in cpu if not k.deterministic] == []


@pytest.mark.parametrize("accumulate", [False, True])
def test_nondeterministic_tagged_ops_run_bitwise_reproducibly_on_cpu(accumulate):
    rng = np.random.default_rng(0)
    values = rng.standard_normal(200).astype(np.float32)
    index = rng.integers(0, 7, 200)
    opweave.use_deterministic_algorithms(True)
    src, idx = opweave.from_numpy(values), opweave.from_numpy(index)
    base = opweave.zeros(7)
    runs = [
        (
            base.scatter_add(0, idx, src).numpy().tobytes(),
            base.index_add(0, idx, src).numpy().tobytes(),
            base.index_put((idx,), src, accumulate=accumulate).numpy().tobytes(),
        )
        for _ in range(3)
    ]
    assert runs[0] == runs[1] == runs[2]
    expected = np.zeros(7, np.float32)
    np.add.at(expected, index, values)
    np.testing.assert_allclose(np.frombuffer(runs[0][0], np.float32), expected, rtol=1e-5, atol=1e-5)


# -- op tags ---------------------------------------------------------------------------------

#: Ops without a bitwise reproducibility guarantee on some device in PyTorch (duplicate indices
#: accumulate or overwrite in an unspecified order); their prims too.
BITWISE = {
    "scatter.src",
    "scatter.value",
    "scatter.reduce",
    "scatter.value_reduce",
    "scatter_add",
    "scatter_reduce.two",
    "index_add",
    "index_copy",
    "index_put",
    "put",
    "prims::scatter",
    "prims::scatter_add",
    "prims::scatter_reduce",
    "prims::index_add",
    "prims::index_copy",
    "prims::index_put",
    "prims::put",
}
#: Random ops: reproducible given a seed.
SEEDED = {"rand", "randn", "randint", "randperm", "bernoulli", "normal.Tensor_Tensor", "uniform", "dropout"}
#: Deterministic ops that must carry neither tag.
PLAIN = {"add.Tensor", "sum", "gather", "index_select", "empty.memory_format", "sort", "matmul", "prims::gather"}


def _by_name():
    return {op.name: op for op in ops.catalog()}


def test_nondeterministic_bitwise_tags():
    catalog = _by_name()
    assert BITWISE <= set(catalog)
    assert all("nondeterministic_bitwise" in catalog[n].tags for n in BITWISE)
    assert not any("nondeterministic_bitwise" in catalog[n].tags for n in PLAIN if n in catalog)


def test_nondeterministic_seeded_tags():
    catalog = _by_name()
    assert [n for n in SEEDED if n in catalog and "nondeterministic_seeded" not in catalog[n].tags] == []
    random_prims = [op for op in ops.catalog(kind="prim", tag="random")]
    assert random_prims, "the random prims are tagged 'random'"
    assert all("nondeterministic_seeded" in op.tags for op in random_prims)
    assert not any("nondeterministic_seeded" in catalog[n].tags for n in PLAIN | BITWISE if n in catalog)


def test_generated_variants_keep_the_nondeterministic_tags():
    for op in ops.catalog():
        if op.functional is not None:
            wanted = op.functional.tags & {"nondeterministic_bitwise", "nondeterministic_seeded"}
            assert wanted <= op.tags, op.name


# -- filling uninitialised memory ----------------------------------------------------------------

DTYPES = [
    opweave.bool,
    opweave.uint8,
    opweave.int8,
    opweave.int16,
    opweave.int32,
    opweave.int64,
    opweave.float16,
    opweave.bfloat16,
    opweave.float32,
    opweave.float64,
    opweave.complex64,
    opweave.complex128,
    opweave.float8_e4m3fn,
    opweave.float8_e5m2,
]
INT_MAX = {"uint8": 255, "int8": 127, "int16": 32767, "int32": 2**31 - 1, "int64": 2**63 - 1}


def _assert_filled(t, dtype):
    values = t.cpu().numpy()
    assert values.dtype == dtype.numpy
    if dtype is opweave.bool:
        assert values.all()
    elif dtype.name in INT_MAX:
        assert (values == INT_MAX[dtype.name]).all()
    elif dtype.is_complex:
        assert np.isnan(values.real).all() and np.isnan(values.imag).all()
    else:
        assert np.isnan(values.astype(np.float64)).all()


def _factories(shape, dtype):
    like = opweave.zeros(shape, dtype=dtype)
    n = len(shape)
    strides = [math.prod(shape[i + 1 :]) for i in range(n)]
    return {
        "empty": lambda: opweave.empty(shape, dtype=dtype),
        "empty_like": lambda: opweave.empty_like(like),
        "empty_strided": lambda: opweave.empty_strided(shape, strides, dtype=dtype),
        "empty_permuted": lambda: opweave.empty_permuted(shape, list(reversed(range(n))), dtype=dtype),
        "new_empty": lambda: like.new_empty(shape),
        "new_empty_strided": lambda: like.new_empty_strided(shape, strides),
    }


@settings(max_examples=25, deadline=None)
@given(
    dtype=st.sampled_from(DTYPES),
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple),
    factory=st.sampled_from(
        ["empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"]
    ),
)
def test_empty_factories_fill_in_deterministic_mode(dtype, shape, factory):
    with DeterministicGuard(True):
        t = _factories(shape, dtype)[factory]()
    assert tuple(t.shape) == shape and t.dtype is dtype
    _assert_filled(t, dtype)


def test_fill_covers_overlapping_and_gappy_layouts():
    with DeterministicGuard(True):
        overlapping = opweave.empty_strided((3, 2), (0, 1), dtype=opweave.int32)
        gappy = opweave.empty_strided((2, 2), (4, 1), dtype=opweave.float64)
    assert overlapping.tolist() == [[2**31 - 1] * 2] * 3
    assert np.isnan(gappy.numpy()).all()


def _nested_names(prof, parent: str):
    names, inside = [], False
    for e in prof.events():
        if e.depth == 0:
            inside = e.name == parent
        elif inside:
            names.append(e.name)
    return names


def test_fill_can_be_turned_off_and_is_off_outside_the_mode():
    with opweave.profiler.profile() as filled:
        with DeterministicGuard(True):
            opweave.empty(4)
    with opweave.profiler.profile() as unfilled:
        with DeterministicGuard(True, fill_uninitialized_memory=False):
            opweave.empty(4)
    with opweave.profiler.profile() as off:
        opweave.empty(4)
    assert "prims::copy_to" in _nested_names(filled, "empty.memory_format")
    assert _nested_names(unfilled, "empty.memory_format") == ["prims::empty_strided"]
    assert _nested_names(off, "empty.memory_format") == ["prims::empty_strided"]


def test_other_factories_and_meta_tensors_are_unaffected():
    with DeterministicGuard(True):
        assert opweave.zeros(3).tolist() == [0.0, 0.0, 0.0]
        assert opweave.full((2,), 7, dtype=opweave.int16).tolist() == [7, 7]
        meta = opweave.empty(5, device="meta")
    assert meta.device.type == "meta" and meta.shape == (5,)


def test_resize_growth_fills_only_the_new_memory():
    from opweave._modes import fill_resize_if_deterministic

    t = opweave.tensor([1.0, 2.0], dtype=opweave.float32)
    old = t.untyped_storage().nbytes
    with DeterministicGuard(True):
        ops.prims.resize(t, [5])
        fill_resize_if_deterministic(t, old)
    values = t.numpy()
    assert values[:2].tolist() == [1.0, 2.0]
    assert np.isnan(values[2:]).all()
    u = opweave.tensor([3, 4], dtype=opweave.int8)
    old = u.untyped_storage().nbytes
    ops.prims.resize(u, [4])
    fill_resize_if_deterministic(u, old)  # mode off: nothing is written
    assert u.tolist()[:2] == [3, 4]
