"""``opweave_mps.matmul``: the MPS matrix descriptors describe the operands' memory (checked with ``fake_metal``).

The fake multiplies what the descriptors point at (rows, row bytes, matrix bytes, offsets, transposes, batch),
as MPS documents; a descriptor that misreads a layout gives another product. Inputs are small integers,
so every product is exact in any order and the expected result is NumPy's.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
from fake_metal import FakeMetal, fake_mps
from hypothesis import given
from hypothesis import strategies as st
from opweave_mps import matmul
from opweave_mps._runtime import MetalRuntime


@pytest.fixture(scope="module")
def monkeypatch_module():
    """``matmul`` over a fake-backed mps backend: ``(backend, fake Metal)`` (restored after the module)."""
    from opweave_mps import _metal
    from opweave_mps._backend import MPSBackend

    fake = FakeMetal()
    backend = MPSBackend()
    backend._runtimes = [MetalRuntime(fake, fake.MTLCreateSystemDefaultDevice())]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_metal, "_found", (fake, fake_mps(), fake.device))
        mp.setattr(matmul, "BACKEND", backend)
        yield backend, fake


def _stored(rng, dtype, batch, rows, cols, transposed, pad, offset):
    """A (batch, rows, cols) operand as it lies in memory: (flat storage, element strides, element offset)."""
    inner, outer = (rows, cols) if transposed else (cols, rows)
    ld = inner + pad
    flat = rng.integers(-4, 5, size=offset + batch * outer * ld).astype(dtype)
    sb, sl = outer * ld, ld
    strides = (sb, 1, sl) if transposed else (sb, sl, 1)
    view = np.lib.stride_tricks.as_strided(flat[offset:], (batch, rows, cols), [s * flat.itemsize for s in strides])
    return flat, strides, view


@given(
    st.integers(1, 3), st.integers(1, 6), st.integers(1, 6), st.integers(1, 6),
    st.booleans(), st.booleans(), st.integers(0, 3), st.integers(0, 5), st.sampled_from(["float32", "float16"]),
    st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_encoded_products_read_the_operands_in_place(batch, m, n, k, ta, tb, pad, offset, dtype, seed):
    rng = np.random.default_rng(seed)
    fake = FakeMetal()
    rt = MetalRuntime(fake, fake.MTLCreateSystemDefaultDevice())
    a_flat, a_st, a = _stored(rng, dtype, batch, m, k, ta, pad, offset)
    b_flat, b_st, b = _stored(rng, dtype, batch, k, n, tb, pad, 0)
    specs = []
    for flat, strides, rows, cols, off in ((a_flat, a_st, m, k, offset), (b_flat, b_st, k, n, 0)):
        spec = matmul.operand(types.SimpleNamespace(stride=lambda s=strides: s, ndim=3), rows, cols, batch)
        assert spec is not None
        buf = rt.allocate(flat.nbytes)
        rt.copy_from_host(buf, flat.view(np.uint8))
        specs.append((buf, off * flat.itemsize, spec))
    out = rt.allocate(batch * m * n * a_flat.itemsize)
    matmul.encode(rt, fake_mps(), (out, 0), *specs, (m, n, k), dtype, batch)
    result = np.empty((batch, m, n), dtype)
    rt.copy_to_host(result.reshape(-1).view(np.uint8), out)
    np.testing.assert_array_equal(result, (a.astype(np.float64) @ b.astype(np.float64)).astype(dtype))
    assert any(e[0] == "mps_matmul" for e in fake.log)


def _layout(strides, ndim=3):
    return types.SimpleNamespace(stride=lambda: strides, ndim=ndim)


@pytest.mark.parametrize(
    "strides, expected",
    [
        ((12, 4, 1), (False, 4, 12)),  # row-major
        ((12, 1, 3), (True, 3, 12)),  # a transposed view: column-major, read with transpose
        ((0, 4, 1), None),  # a broadcast batch
        ((24, 8, 2), None),  # every other column
        ((12, 2, 1), None),  # rows overlap
    ],
)
def test_operand_layouts(strides, expected):
    assert matmul.operand(_layout(strides), 3, 4, 2) == expected


def test_a_single_row_takes_any_row_stride():
    assert matmul.operand(_layout((1, 1), 2), 1, 4, 1) == (False, 4, 4)
    assert matmul.operand(_layout((5, 1), 2), 4, 1, 1) == (False, 5, 20)


@given(
    st.integers(0, 3), st.integers(0, 5), st.integers(0, 5), st.integers(1, 5),
    st.booleans(), st.booleans(), st.sampled_from(["float32", "float16"]), st.integers(0, 2**32 - 1),
)  # fmt: skip
def test_mm_and_bmm_of_device_tensors_through_the_fake(monkeypatch_module, batch, m, n, k, ta, tb, dtype, seed):
    """The tensor-level glue: output allocation, byte offsets of views, 2-D and batched products."""
    import opweave
    from opweave.backends.kernel import wrap_storage
    from opweave_mps import _metal

    backend, fake = monkeypatch_module
    dev = opweave.device("mps", 0)
    rng = np.random.default_rng(seed)

    def operand(rows, cols, transposed):
        shape = (max(batch, 1), cols, rows) if transposed else (max(batch, 1), rows, cols)
        host = rng.integers(-4, 5, size=(3 + int(np.prod(shape)),)).astype(dtype)
        t = backend.from_host(host, dev)
        strides = (shape[1] * shape[2], 1, shape[2]) if transposed else (shape[1] * shape[2], shape[2], 1)
        logical = (max(batch, 1), rows, cols)
        ref = np.lib.stride_tricks.as_strided(host[3:], logical, [s * host.itemsize for s in strides])
        if not batch:  # a 2-D operand: the first matrix
            return wrap_storage(t.untyped_storage(), logical[1:], strides[1:], 3, dtype=t.dtype, device=dev), ref[0]
        return wrap_storage(t.untyped_storage(), logical, strides, 3, dtype=t.dtype, device=dev), ref

    (a, ra), (b, rb) = operand(m, k, ta), operand(k, n, tb)
    out = matmul.matmul(a, b, max(batch, 1) if batch else 1)
    assert out is not None and tuple(out.shape) == (ra @ rb).shape and out.dtype is a.dtype
    expected = (ra.astype(np.float64) @ rb.astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(backend.copy_to_host(out), expected)
    assert _metal.found()[0] is fake
