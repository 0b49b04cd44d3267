"""Pinned host memory: ``Tensor.pin_memory()``, ``is_pinned()``, factories' ``pin_memory=`` and ``non_blocking``.

Without an accelerator the errors are PyTorch's. With one -- here ``PinnedHostMemory`` from
``tests/plugin_fixtures/host_memory.py``, a stand-in device whose "page-locked" memory is NumPy memory it
keeps a record of, and whose asynchronous copy is recorded -- a pinned tensor is a CPU tensor in the
backend's memory with the values it was made from, and ``to(device, non_blocking=True)`` of a pinned
tensor takes the backend's asynchronous path (pageable ones do not).
The CUDA implementation is checked on a GPU by ``tests/cuda/test_pinned_gpu.py``.
"""

from __future__ import annotations

import contextlib
import gc
import types

import ml_dtypes
import numpy as np
import opweave as ow
import pytest
from host_memory import HostMemory, PinnedHostMemory
from hypothesis import given
from hypothesis import strategies as st
from opweave import _pinned

NO_ACCELERATOR = "Cannot access accelerator device when none is available."
NO_ALLOCATOR = "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator"


def _real_accelerator() -> bool:
    try:
        _pinned.accelerator()
    except RuntimeError:
        return False
    return True


BACKEND = PinnedHostMemory("pinhost")
NO_PIN = HostMemory("nopinhost")  # a device without pinned memory


@pytest.fixture(scope="module")
def registered():
    plugin = types.ModuleType("pinhost_plugin")

    @ow.hookimpl
    def opweave_register(registry):
        registry.backend(BACKEND)
        registry.backend(NO_PIN)

    plugin.opweave_register = opweave_register
    ow.backends.register_plugin(plugin, name="pinhost_plugin")
    return BACKEND


@contextlib.contextmanager
def accelerated(backend):
    """The stand-in available (an accelerator with pinned memory) inside."""
    backend.available = True
    backend.async_copies.clear()
    try:
        yield backend
    finally:
        backend.available = False


@pytest.fixture
def pinhost(registered):
    with accelerated(registered) as backend:
        yield backend


# -- without an accelerator --------------------------------------------------------------------------------------

no_accelerator = pytest.mark.skipif(_real_accelerator(), reason="an accelerator with pinned memory is present")


@no_accelerator
def test_pin_memory_without_an_accelerator_raises_pytorchs_error(registered):
    t = ow.arange(4.0)
    with pytest.raises(RuntimeError, match=NO_ACCELERATOR):
        t.pin_memory()
    assert not t.is_pinned()
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2, 3])  # left as it was


@no_accelerator
@pytest.mark.parametrize(
    "make",
    [
        lambda: ow.empty(3, pin_memory=True),
        lambda: ow.zeros(2, 3, pin_memory=True),
        lambda: ow.ones(3, pin_memory=True),
        lambda: ow.full((2,), 7.0, pin_memory=True),
        lambda: ow.arange(5, pin_memory=True),
        lambda: ow.linspace(0, 1, 4, pin_memory=True),
        lambda: ow.eye(3, pin_memory=True),
        lambda: ow.rand(3, pin_memory=True),
        lambda: ow.randn(3, pin_memory=True),
        lambda: ow.randint(0, 9, (3,), pin_memory=True),
        lambda: ow.randperm(4, pin_memory=True),
        lambda: ow.empty_strided((2, 2), (1, 2), pin_memory=True),
        lambda: ow.zeros_like(ow.ones(2), pin_memory=True),
        lambda: ow.ones(2).new_empty(3, pin_memory=True),
        lambda: ow.tensor([1.0, 2.0], pin_memory=True),
    ],
)
def test_factories_with_pin_memory_without_an_accelerator_raise(make, registered):
    with pytest.raises(RuntimeError, match=NO_ALLOCATOR):
        make()


def test_pin_memory_false_and_meta_need_no_accelerator():
    assert not ow.zeros(3, pin_memory=False).is_pinned()
    meta = ow.empty(2, device="meta", pin_memory=True)
    assert meta.device.type == "meta" and tuple(meta.shape) == (2,)


def test_only_cpu_tensors_can_be_pinned():
    with pytest.raises(RuntimeError, match=r"cannot pin 'opweave.meta.float32' only dense CPU tensors can be pinned"):
        ow.ones(2, device="meta").pin_memory()
    assert not ow.ones(2, device="meta").is_pinned()
    with pytest.raises(RuntimeError, match="cpu is not an accelerator device"):
        ow.ones(2).pin_memory("cpu")


def test_non_blocking_from_pageable_memory_is_an_ordinary_copy():
    t = ow.arange(3.0)
    assert t.to("cpu", non_blocking=True) is t
    np.testing.assert_array_equal(t.to(ow.float64, non_blocking=True).numpy(), [0.0, 1.0, 2.0])


# -- with an accelerator (the stand-in) --------------------------------------------------------------------------

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int64", "uint8", "bool", "complex64"]


def _values(rng, dtype, shape):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith(("int", "uint")):
        return rng.integers(0, 100, shape).astype(dtype)
    if dtype == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)
    values = rng.standard_normal(shape)
    values.flat[:1] = -0.0
    return values.astype(ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)


@given(
    dtype=st.sampled_from(DTYPES),
    shape=st.sampled_from([(), (0,), (5,), (3, 4), (2, 1, 3)]),
    transposed=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_pin_memory_copies_into_the_backends_pinned_memory(registered, dtype, shape, transposed, seed):
    with accelerated(registered) as pinhost:
        _check_pin_memory(pinhost, dtype, shape, transposed, seed)


def _check_pin_memory(pinhost, dtype, shape, transposed, seed):
    values = _values(np.random.default_rng(seed), dtype, shape)
    source = ow.tensor(values)
    if transposed and len(shape) >= 2:
        source = ow.tensor(np.ascontiguousarray(values.swapaxes(0, 1))).transpose(0, 1)
    pinned = source.pin_memory(pinhost.name)  # named: on a machine with a GPU, CUDA is the current accelerator
    assert pinned.device.type == "cpu" and pinned.dtype == source.dtype and tuple(pinned.shape) == shape
    np.testing.assert_array_equal(pinned.numpy(), values)
    assert pinned.is_contiguous()
    if source.numel():
        assert pinned.is_pinned() and not source.is_pinned()
        assert pinhost.is_pinned_host(pinned.data_ptr())
        assert pinned.pin_memory() is pinned, "pinning a pinned tensor returns it"
    pinned.fill_(1)
    np.testing.assert_array_equal(source.numpy(), values)  # a copy, not a view


def test_factories_with_pin_memory_make_pinned_tensors(pinhost):
    cases = [
        (ow.zeros(2, 3, pin_memory=True), np.zeros((2, 3), np.float32)),
        (ow.full((2,), 7, dtype=ow.int16, pin_memory=True), np.full(2, 7, np.int16)),
        (ow.arange(5, pin_memory=True), np.arange(5)),
        (ow.eye(3, pin_memory=True), np.eye(3, dtype=np.float32)),
        (ow.tensor([[1.5, 2.5]], pin_memory=True), np.array([[1.5, 2.5]], np.float32)),
        (ow.zeros_like(ow.ones(4, dtype=ow.float64), pin_memory=True), np.zeros(4)),
        (ow.ones(2).new_ones(3, pin_memory=True), np.ones(3, np.float32)),
        (ow.ops._to_copy(ow.arange(3), pin_memory=True), np.arange(3)),
    ]
    for tensor, want in cases:
        assert tensor.is_pinned(), tensor
        assert tensor.dtype == ow.dtype_of_numpy(want.dtype)
        np.testing.assert_array_equal(tensor.numpy(), want)
    r = ow.randn(1000, pin_memory=True)
    assert r.is_pinned() and abs(float(r.mean())) < 0.5
    with pytest.raises(RuntimeError, match="Only dense CPU tensors can be pinned"):
        ow.zeros(2, device="pinhost", pin_memory=True)


def test_non_blocking_copies_from_pinned_memory_take_the_async_path(pinhost):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    pinned = ow.tensor(values).pin_memory("pinhost")
    moved = pinned.to("pinhost", non_blocking=True)
    assert pinhost.async_copies == [pinned.data_ptr()], "the pinned memory itself is the source (no staging copy)"
    np.testing.assert_array_equal(pinhost.copy_to_host(moved), values)
    ow.tensor(values).to("pinhost", non_blocking=True)  # pageable: a synchronous copy
    pinned.to("pinhost")  # non_blocking=False
    assert len(pinhost.async_copies) == 1


def test_non_blocking_copies_to_the_host_land_in_pinned_memory(pinhost):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    on_device = ow.tensor(values, device="pinhost")
    back = on_device.to("cpu", non_blocking=True)
    assert back.device.type == "cpu" and back.is_pinned() and back.dtype == ow.float32
    assert pinhost.async_copies == [back.data_ptr()], "the backend's asynchronous path, into pinned memory"
    np.testing.assert_array_equal(back.numpy(), values)
    plain = on_device.to("cpu")  # non_blocking=False: an ordinary copy
    assert not plain.is_pinned() and len(pinhost.async_copies) == 1
    np.testing.assert_array_equal(plain.numpy(), values)
    other = ow.tensor(values, device="nopinhost").to("cpu", non_blocking=True)  # a backend without the hook
    assert not other.is_pinned() and len(pinhost.async_copies) == 1
    np.testing.assert_array_equal(other.numpy(), values)


def test_pinned_memory_is_released_with_its_last_tensor(pinhost):
    gc.collect()
    before = len(pinhost.blocks)
    pinned = ow.ones(1000).pin_memory("pinhost")
    view = pinned[10:20]
    del pinned
    gc.collect()
    assert len(pinhost.blocks) == before + 1 and view.is_pinned()
    del view
    gc.collect()
    assert len(pinhost.blocks) == before


def test_an_explicit_device_must_pin(pinhost):
    assert ow.ones(2).pin_memory("pinhost").is_pinned("pinhost")
    with pytest.raises(RuntimeError, match="the nopinhost backend has no pinned host memory"):
        ow.ones(2).pin_memory("nopinhost")
