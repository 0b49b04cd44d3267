"""The mm/bmm kernels that hand products to ``cublas.matmul``, checked on a host device with a NumPy stand-in.

The CUDA backend's ``prims::mm``/``prims::bmm`` (``opweave_cuda._kernels``) compute pointers with
offsets, (batch, row, col) strides in elements, copies of operands cuBLAS cannot address and the
broadcast batch stride, then call ``cublas.matmul`` with the contract ``cublas.py`` implements. Here
they run on a small C-runtime device whose "cuBLAS" reads the operands at those addresses with
those strides through NumPy, so every layout the glue produces is checked against ``a @ b``.
"""

from __future__ import annotations

import ctypes
import types

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave.backends import register_plugin
from opweave_cuda import _kernels
from opweave_kernelgen import KernelBackend, register_kernels
from opweave_kernelgen.c_runtime import CRuntime, HostBuffer, compiler

pytestmark = pytest.mark.skipif(compiler()[0] is None, reason=f"no C compiler: {compiler()[1]}")

NAME = "cudaglue"


class _Runtime(CRuntime):
    def __init__(self):
        super().__init__(f"{NAME}:0")

    def allocate(self, nbytes):
        return HostBuffer(nbytes)

    def stream(self) -> int:
        return 0x5EED


class _Backend(KernelBackend):
    name = NAME

    def __init__(self):
        super().__init__()
        self._rt = [_Runtime()]

    def runtimes(self):
        return self._rt


class FakeCublas:
    """``cublas.matmul``'s contract, computed by NumPy on the memory the pointers address."""

    def __init__(self):
        self.calls = []

    def available(self):
        return True, ""

    def matmul(self, stream, dtype, batch, m, n, k, a, a_strides, b, b_strides, c, c_strides, alpha=1.0, beta=0.0):
        self.calls.append((stream, dtype, batch, m, n, k, a_strides, b_strides, c_strides))
        dt = np.dtype(dtype)
        for strides, rows, cols in ((a_strides, m, k), (b_strides, k, n)):
            assert 1 in strides[1:], strides  # the contract: one of row/col stride is 1
            row, col = strides[1:]
            assert (col == 1 and row >= cols) or (row == 1 and col >= rows), strides  # a valid leading dimension
        assert c_strides == (m * n, n, 1)
        for i in range(batch):
            x = _view(a + i * a_strides[0] * dt.itemsize, dt, (m, k), a_strides[1:])
            y = _view(b + i * b_strides[0] * dt.itemsize, dt, (k, n), b_strides[1:])
            z = _view(c + i * c_strides[0] * dt.itemsize, dt, (m, n), c_strides[1:])
            # cuBLAS reads C only when beta != 0 (C may be uninitialised memory, NaN included)
            z[...] = alpha * (x @ y) + (beta * z if beta else 0)


def _view(ptr, dt, shape, strides):
    span = 1 + sum((s - 1) * st for s, st in zip(shape, strides))
    raw = np.ctypeslib.as_array((ctypes.c_uint8 * (span * dt.itemsize)).from_address(ptr))
    return np.lib.stride_tricks.as_strided(raw.view(dt), shape, tuple(st * dt.itemsize for st in strides))


FAKE = FakeCublas()
BACKEND = _Backend()
_plugin = types.ModuleType("cudaglue_plugin")


@ow.hookimpl
def opweave_register(registry):
    registry.backend(BACKEND)
    register_kernels(registry, BACKEND)
    _kernels.register(registry, BACKEND)


_plugin.opweave_register = opweave_register


@pytest.fixture(scope="module", autouse=True)
def device():
    register_plugin(_plugin, NAME)


@pytest.fixture(autouse=True)
def fake_cublas(monkeypatch):
    monkeypatch.setattr(_kernels, "cublas", lambda: FAKE)
    FAKE.calls.clear()


def _layout(a: np.ndarray, how: str):
    """A device tensor with ``a``'s values in the layout ``how``."""
    if how == "contiguous":
        return ow.tensor(a, device=NAME)
    if how == "transposed":  # column-major matrices
        return ow.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2)), device=NAME).transpose(-1, -2)
    if how == "offset":  # a slice starting inside its storage
        pad = np.concatenate([np.zeros((*a.shape[:-1], 3), a.dtype), a], axis=-1)
        return ow.tensor(pad, device=NAME)[..., 3:]
    wide = np.repeat(a, 2, axis=-1)  # every other column: no stride is 1, cuBLAS needs a copy
    return ow.tensor(wide, device=NAME)[..., ::2]


LAYOUTS = ["contiguous", "transposed", "offset", "strided"]


@settings(max_examples=20, deadline=None)
@given(
    m=st.integers(1, 5),
    k=st.integers(1, 5),
    n=st.integers(1, 5),
    la=st.sampled_from(LAYOUTS),
    lb=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from([np.float32, np.float64, np.complex64]),
    seed=st.integers(0, 2**32 - 1),
)
def test_mm_hands_cublas_pointers_and_strides_that_address_the_operands(m, k, n, la, lb, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    out = ow.ops.lookup("prims::mm")(_layout(a, la), _layout(b, lb))
    np.testing.assert_allclose(out.cpu().numpy(), a @ b, rtol=1e-5, atol=1e-5)
    assert FAKE.calls and FAKE.calls[-1][:6] == (0x5EED, np.dtype(dtype).name, 1, m, n, k)


@settings(max_examples=20, deadline=None)
@given(
    batch=st.integers(1, 3),
    m=st.integers(1, 4),
    n=st.integers(1, 4),
    la=st.sampled_from(LAYOUTS),
    lb=st.sampled_from(LAYOUTS),
    broadcast=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_bmm_batches_with_strides_and_broadcast_operands(batch, m, n, la, lb, broadcast, seed):
    rng = np.random.default_rng(seed)
    k = 3
    a = rng.standard_normal((batch, m, k)).astype(np.float32)
    b = rng.standard_normal((1 if broadcast else batch, k, n)).astype(np.float32)
    x, y = _layout(a, la), _layout(b, lb)
    if broadcast:
        y = y.expand(batch, k, n)  # batch stride 0
    out = ow.ops.lookup("prims::bmm")(x, y)
    np.testing.assert_allclose(out.cpu().numpy(), a @ np.broadcast_to(b, (batch, k, n)), rtol=1e-5, atol=1e-5)
    assert FAKE.calls[-1][2] == batch


def test_empty_inner_dim_gives_zeros_without_a_gemm():
    out = ow.ops.lookup("prims::mm")(ow.zeros((3, 0), device=NAME), ow.zeros((0, 2), device=NAME))
    np.testing.assert_array_equal(out.cpu().numpy(), np.zeros((3, 2), np.float32))
    assert not FAKE.calls


def test_integer_products_and_no_cublas_take_the_generated_kernel(monkeypatch):
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    out = ow.ops.lookup("prims::mm")(ow.tensor(a, device=NAME), ow.tensor(a.T.copy(), device=NAME))
    np.testing.assert_array_equal(out.cpu().numpy(), a @ a.T)
    monkeypatch.setattr(_kernels, "cublas", lambda: None)
    f = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = ow.ops.lookup("prims::mm")(ow.tensor(f, device=NAME), ow.tensor(f.T.copy(), device=NAME))
    np.testing.assert_allclose(out.cpu().numpy(), f @ f.T)
    assert not FAKE.calls
