"""The oneDNN layer of the x86 engine on NumPy arrays, against integer oracles written here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("cffi")
onednn = pytest.importorskip("opweave_x86quant._onednn")
if not onednn.availability()[0]:
    pytest.skip(f"x86 engine unavailable: {onednn.availability()[1]}", allow_module_level=True)

from opweave_x86quant._primitives import Quantization, matmul_executable  # noqa: E402

SMALL = settings(max_examples=12, deadline=None)


def _s32_matmul(x: np.ndarray, w_kn: np.ndarray, zx: int = 0, zw: int = 0) -> np.ndarray:
    """u8/s8 x s8 -> s32 through a oneDNN matmul whose only attributes are the zero points."""
    zero_points = [(onednn.ARG_SRC, 0)] + ([(onednn.ARG_WEIGHTS, 0)] if zw else [])
    src, wei = onednn.array_desc(x), onednn.array_desc(w_kn)
    out = np.empty((x.shape[0], w_kn.shape[1]), np.int32)
    dst = onednn.array_desc(out)
    pd = onednn.matmul_desc(src, wei, None, dst, onednn.attributes((), zero_points))
    zp_desc = onednn.memory_desc((1,), np.int32)
    descs = {onednn.ARG_SRC: src, onednn.ARG_WEIGHTS: wei, onednn.ARG_DST: dst}
    buffers = {onednn.ARG_SRC: x, onednn.ARG_WEIGHTS: w_kn, onednn.ARG_DST: out}
    descs[onednn.ARG_ATTR_ZERO_POINTS | onednn.ARG_SRC] = zp_desc
    buffers[onednn.ARG_ATTR_ZERO_POINTS | onednn.ARG_SRC] = np.array([zx], np.int32)
    if zw:
        descs[onednn.ARG_ATTR_ZERO_POINTS | onednn.ARG_WEIGHTS] = zp_desc
        buffers[onednn.ARG_ATTR_ZERO_POINTS | onednn.ARG_WEIGHTS] = np.array([zw], np.int32)
    onednn.Primitive(pd, descs).run(buffers)
    return out


def test_library_reports_version_and_isa():
    lib = onednn.library()
    assert lib.version[0] >= 3
    assert onednn.isa_has_int8_dot(lib.isa)
    assert "oneDNN" in lib.describe()


@SMALL
@given(
    m=st.integers(1, 40),
    k=st.integers(1, 300),
    n=st.integers(1, 40),
    zx=st.integers(0, 255),
    zw=st.integers(-128, 127),
    seed=st.integers(0, 2**31),
)
def test_u8_s8_s32_matmul_is_exact(m, k, n, zx, zw, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (m, k), dtype=np.uint8)
    w = rng.integers(-128, 128, (n, k), dtype=np.int8)
    got = _s32_matmul(x, w.T, zx, zw)  # the transposed view: oneDNN reads the strides
    want = (x.astype(np.int64) - zx) @ (w.astype(np.int64) - zw).T
    np.testing.assert_array_equal(got, want)


def test_s32_matmul_extremes_do_not_lose_bits():
    k = 4096  # 255 * 128 * 4096 = 2**27 * 1.0x: beyond float32's exact integers
    x = np.full((3, k), 255, np.uint8)
    w = np.full((2, k), -128, np.int8)
    got = _s32_matmul(x, np.ascontiguousarray(w.T))
    np.testing.assert_array_equal(got, np.full((3, 2), 255 * -128 * k, np.int64))


def _requantized(x, w, zx, zw, sx, sw, sy, zy, bias, relu):
    acc = (x.astype(np.int64) - zx) @ (w.astype(np.int64) - zw).T
    v = acc * (np.float64(sx) * np.asarray(sw, np.float64) / sy)
    if bias is not None:
        v = v + bias.astype(np.float64) / sy
    return np.clip(np.rint(v) + zy, zy if relu else 0, 255)


@SMALL
@given(
    m=st.integers(1, 24),
    k=st.integers(1, 200),
    n=st.integers(1, 24),
    zx=st.integers(0, 255),
    zy=st.integers(0, 255),
    per_channel=st.booleans(),
    with_bias=st.booleans(),
    relu=st.booleans(),
    seed=st.integers(0, 2**31),
)
def test_requantized_matmul_within_one_step(m, k, n, zx, zy, per_channel, with_bias, relu, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, (m, k), dtype=np.uint8)
    w = rng.integers(-128, 128, (n, k), dtype=np.int8)
    sx = float(rng.uniform(0.001, 0.1))
    sw = rng.uniform(0.001, 0.05, n if per_channel else 1).astype(np.float32)
    sy = float(rng.uniform(0.05, 2.0))
    bias = rng.standard_normal(n).astype(np.float32) if with_bias else None
    quant = Quantization(2 if per_channel else 0, sw.size, False, True)
    exe = matmul_executable((m, k), np.uint8, (k, n), (1, k), np.uint8, quant, with_bias, relu, weights_any=False)
    out = np.empty((m, n), np.uint8)
    buffers = quant.buffers(sx, zx, sw, 0, sy, zy)
    buffers.update({onednn.ARG_SRC: x, onednn.ARG_WEIGHTS: w, onednn.ARG_DST: out})
    if with_bias:
        buffers[onednn.ARG_BIAS] = bias.reshape(1, n)
    exe.run(buffers)
    want = _requantized(x, w, zx, 0, np.float32(sx), sw.astype(np.float64), np.float32(sy), zy, bias, relu)
    assert np.abs(out.astype(np.int64) - want).max() <= 1


def test_requantization_is_exact_when_the_multiplier_is_a_power_of_two():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (9, 33), dtype=np.uint8)
    w = rng.integers(-8, 8, (7, 33), dtype=np.int8)
    quant = Quantization(0, 1, False, True)
    exe = matmul_executable((9, 33), np.uint8, (33, 7), (1, 33), np.uint8, quant, False, False, weights_any=False)
    out = np.empty((9, 7), np.uint8)
    buffers = quant.buffers(0.5, 100, [0.25], 0, 4.0, 7)  # multiplier 1/32: exact in float32
    buffers.update({onednn.ARG_SRC: x, onednn.ARG_WEIGHTS: w, onednn.ARG_DST: out})
    exe.run(buffers)
    np.testing.assert_array_equal(out, _requantized(x, w, 100, 0, 0.5, 0.25, 4.0, 7, None, False))


def test_unimplemented_is_a_not_implemented_error():
    # per-output-channel weight zero points: oneDNN 3.2 has none for int8 matmul (the kernels use the reference)
    src, wei, dst = (onednn.memory_desc(s, d) for s, d in (((2, 3), np.uint8), ((3, 2), np.int8), ((2, 2), np.uint8)))
    with pytest.raises(NotImplementedError, match="dnnl_matmul_primitive_desc_create"):
        onednn.matmul_desc(src, wei, None, dst, onednn.attributes((), [(onednn.ARG_WEIGHTS, 2)]))


def test_failed_call_names_the_call():
    err = onednn.OneDNNError("dnnl_primitive_execute", 2)
    assert "dnnl_primitive_execute" in str(err) and "invalid_arguments" in str(err)
    assert isinstance(err, RuntimeError)


def test_aligned_buffer():
    buf = onednn.aligned_empty(1000)
    assert buf.nbytes == 1000 and buf.__array_interface__["data"][0] % 64 == 0


@pytest.mark.parametrize(
    ("isa", "has_int8_dot"),
    [(0x7, False), (0x27, False), (0x67, True), (0xE7, True), (0xFEF, True), (0x407, True), (0x1, False)],
)
def test_isa_gate(isa, has_int8_dot):
    assert onednn.isa_has_int8_dot(isa) is has_int8_dot
