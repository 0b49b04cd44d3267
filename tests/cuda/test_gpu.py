"""The CUDA backend on a GPU: values against NumPy, memory, streams and events, Philox (skipped without a device)."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest

pytestmark = pytest.mark.skipif(not ow.cuda.is_available(), reason=f"no CUDA device: {ow.cuda.unavailable_reason()}")


def _rng(seed=0):
    return np.random.default_rng(seed)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_elementwise_and_reductions_match_numpy(dtype):
    a = (_rng(1).standard_normal((37, 65)) * 10).astype(dtype)
    b = (_rng(2).standard_normal((37, 65)) * 10).astype(dtype)
    x, y = ow.tensor(a, device="cuda"), ow.tensor(b, device="cuda")
    assert x.device.type == "cuda"
    np.testing.assert_allclose((x + y).cpu().numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose((x * y).cpu().numpy(), a * b, rtol=1e-6)
    np.testing.assert_allclose(x.T.contiguous().cpu().numpy(), a.T)  # strided read
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(x.sum(dim=1).cpu().numpy(), a.sum(axis=1), rtol=rtol, atol=1e-4)
    np.testing.assert_allclose(x.amax(dim=0).cpu().numpy(), a.max(axis=0))


def test_large_sum_and_softmax_match_numpy():
    a = _rng(3).standard_normal((4, 1 << 18)).astype(np.float32)
    x = ow.tensor(a, device="cuda")
    np.testing.assert_allclose(x.sum().item(), a.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(
        ow.softmax(x, dim=1).cpu().numpy(), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-9
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_matmul_matches_numpy_any_layout(dtype):
    prev = ow.get_float32_matmul_precision()
    ow.set_float32_matmul_precision("highest")
    try:
        a = _rng(4).standard_normal((3, 40, 30)).astype(dtype)
        b = _rng(5).standard_normal((3, 30, 20)).astype(dtype)
        x, y = ow.tensor(a, device="cuda"), ow.tensor(b, device="cuda")
        rtol = 1e-4 if dtype != np.float64 else 1e-12
        np.testing.assert_allclose((x @ y).cpu().numpy(), a @ b, rtol=rtol, atol=1e-4)
        np.testing.assert_allclose((x[0] @ y[0]).cpu().numpy(), a[0] @ b[0], rtol=rtol, atol=1e-4)
        xt = ow.tensor(np.ascontiguousarray(a.transpose(0, 2, 1)), device="cuda").transpose(1, 2)
        np.testing.assert_allclose((xt @ y).cpu().numpy(), a @ b, rtol=rtol, atol=1e-4)
        np.testing.assert_allclose((x[:, ::2] @ y).cpu().numpy(), a[:, ::2] @ b, rtol=rtol, atol=1e-4)
    finally:
        ow.set_float32_matmul_precision(prev)


def test_all_dtypes_round_trip_exactly():
    for dt in (
        np.bool_,
        np.uint8,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
    ):
        a = (_rng(6).standard_normal(33) * 50).astype(dt)
        np.testing.assert_array_equal(ow.tensor(a, device="cuda").cpu().numpy(), a)


def test_memory_stats_count_live_tensors_and_empty_cache_releases_the_pool():
    ow.cuda.synchronize()
    base = ow.cuda.memory_allocated()
    x = ow.empty(1 << 20, dtype=ow.float32, device="cuda")
    assert ow.cuda.memory_allocated() == base + 4 * (1 << 20)
    assert ow.cuda.max_memory_allocated() >= base + 4 * (1 << 20)
    assert ow.cuda.memory_reserved() >= ow.cuda.memory_allocated()
    del x
    assert ow.cuda.memory_allocated() == base
    ow.cuda.empty_cache()
    ow.cuda.reset_peak_memory_stats()
    assert ow.cuda.max_memory_allocated() == base


def test_out_of_memory_raises_after_releasing_the_cache_and_leaks_nothing():
    base = ow.cuda.memory_allocated()
    with pytest.raises(ow.OutOfMemoryError, match="out of memory"):
        ow.empty(1 << 50, dtype=ow.uint8, device="cuda")
    assert ow.cuda.memory_allocated() == base
    assert ow.cuda.memory_stats()["num_ooms"] >= 1


def test_streams_and_events_order_and_time_work():
    s = ow.cuda.Stream()
    start, end = ow.cuda.Event(enable_timing=True), ow.cuda.Event(enable_timing=True)
    a = _rng(7).standard_normal(1 << 20).astype(np.float32)
    with ow.cuda.stream(s):
        assert ow.cuda.current_stream() == s
        x = ow.tensor(a, device="cuda")
        start.record()
        y = x * 2 + 1
        end.record()
    assert ow.cuda.current_stream() != s
    end.synchronize()
    assert end.query() and s.query()
    assert start.elapsed_time(end) >= 0.0
    np.testing.assert_allclose(y.cpu().numpy(), a * 2 + 1, rtol=1e-6)


def test_device_queries():
    assert ow.cuda.device_count() >= 1
    major, minor = ow.cuda.get_device_capability()
    assert major >= 5 and isinstance(ow.cuda.get_device_name(), str)
    ow.cuda.set_device(0)
    assert ow.cuda.current_device() == 0


def test_philox_streams_are_bit_identical_to_the_cpu():
    ow.manual_seed(1234)
    cpu = ow.rand(4096, dtype=ow.float32).numpy()
    ow.manual_seed(1234)
    gpu = ow.rand(4096, dtype=ow.float32, device="cuda").cpu().numpy()
    np.testing.assert_array_equal(gpu, cpu)


def test_dlpack_device_is_cuda():
    x = ow.ones(3, device="cuda")
    assert x.__dlpack_device__() == (2, 0)


class _Foreign:
    """Another library's CUDA tensor, as DLPack shows it (here: an opweave tensor behind the protocol)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kwargs):
        return self.t.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()


def test_dlpack_round_trip_is_zero_copy_and_keeps_the_memory_alive():
    a = _rng(8).standard_normal((6, 5)).astype(np.float32)
    x = ow.tensor(a, device="cuda")[:, 1:4]  # a strided view with an offset
    y = ow.from_dlpack(_Foreign(x))
    assert y.device == x.device and y.shape == x.shape and y.stride() == x.stride()
    assert y.data_ptr() == x.data_ptr()
    np.testing.assert_array_equal(y.cpu().numpy(), a[:, 1:4])
    del x
    np.testing.assert_array_equal(y.cpu().numpy(), a[:, 1:4])  # the producer's memory is still held
    y.fill_(2.0)
    np.testing.assert_array_equal(y.cpu().numpy(), np.full((6, 3), 2.0, np.float32))


def test_dlpack_refuses_stream_zero_and_a_foreign_device():
    x = ow.ones(3, device="cuda")
    with pytest.raises(BufferError, match="stream=0"):
        x.__dlpack__(stream=0)
    with pytest.raises(BufferError, match="DLPack device"):
        x.__dlpack__(dl_device=(1, 0))


def test_deterministic_mode_gives_scatter_add_the_cpu_order():
    idx = _rng(9).integers(0, 4, 1000)
    src = _rng(10).standard_normal(1000).astype(np.float32)
    expected = np.zeros(4, np.float32)
    np.add.at(expected, idx, src)
    ow.use_deterministic_algorithms(True)
    try:
        out = ow.zeros(4, device="cuda").scatter_add(0, ow.tensor(idx, device="cuda"), ow.tensor(src, device="cuda"))
        again = ow.zeros(4, device="cuda").scatter_add(0, ow.tensor(idx, device="cuda"), ow.tensor(src, device="cuda"))
    finally:
        ow.use_deterministic_algorithms(False)
    np.testing.assert_array_equal(out.cpu().numpy(), again.cpu().numpy())  # bitwise the same run to run
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-5, atol=1e-5)


def test_float16_tensors_cast_and_compute_natively(monkeypatch):
    """float16 elementwise ops and reductions run on the GPU (no CPU fallback), computed in float and rounded to
    half once: +, -, *, / equal NumPy's float16 arithmetic (which does the same) bit for bit."""
    from opweave import _fallback

    fell_back = []
    original = _fallback.run
    monkeypatch.setattr(_fallback, "run", lambda op, *rest: fell_back.append(str(op)) or original(op, *rest))
    a = _rng(11).standard_normal((64, 33)).astype(np.float32)
    b = (_rng(12).standard_normal((64, 33)) + 3).astype(np.float32)
    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    x, y = ow.tensor(a, device="cuda").half(), ow.tensor(b, device="cuda").half()
    assert x.dtype == ow.float16 and x.device.type == "cuda"
    np.testing.assert_array_equal(x.cpu().numpy(), a16)  # round to nearest even, as NumPy
    for got, want in (
        (x + y, a16 + b16),
        (x - y, a16 - b16),
        (x * y, a16 * b16),
        (x / y, a16 / b16),
        (x[:, ::2] + y[:, ::2], a16[:, ::2] + b16[:, ::2]),  # the strided kernel
        (ow.maximum(x, y), np.maximum(a16, b16)),
        (x.neg(), -a16),
        (x.abs(), np.abs(a16)),
    ):
        assert got.dtype == ow.float16
        np.testing.assert_array_equal(got.cpu().numpy(), want)
    exp = x.exp().cpu().numpy().astype(np.float64)  # expf differs from NumPy's by an ulp of float32 at most
    np.testing.assert_allclose(exp, np.exp(a16.astype(np.float64)), rtol=2.0**-10)
    assert (x < y).dtype == ow.bool
    np.testing.assert_array_equal((x < y).cpu().numpy(), a16 < b16)
    total = x.sum(1).cpu().numpy().astype(np.float64)  # float32 accumulation, one rounding to half
    want = a16.astype(np.float64).sum(1)
    bound = 33 * 2.0**-24 * np.abs(a16.astype(np.float64)).sum(1) + np.abs(want) * 2.0**-11
    assert np.all(np.abs(total - want) <= bound)
    np.testing.assert_array_equal(x.amax(0).cpu().numpy(), a16.max(0))
    big = ow.tensor(_rng(13).standard_normal(1 << 20).astype(np.float16), device="cuda")
    host = big.cpu().numpy().astype(np.float64)
    assert abs(float(big.sum(dtype=ow.float32).item()) - host.sum()) <= 2.0**-24 * (1 << 20) * np.abs(host).sum()
    soft = ow.softmax(x, dim=1).float().cpu().numpy()
    e = np.exp(a16.astype(np.float64) - a16.astype(np.float64).max(1, keepdims=True))
    np.testing.assert_allclose(soft, e / e.sum(1, keepdims=True), rtol=2.0**-9, atol=2.0**-14)
    assert not [op for op in fell_back if any(n in op for n in ("add", "sub", "mul", "div", "exp", "sum", "amax"))]
    with ow.autocast("cuda"):
        z = ow.tensor(a[:10, :10], device="cuda") @ ow.tensor(a[:10, :10], device="cuda")
    assert z.dtype == ow.float16


def test_float16_extra_elementwise_prims_run_natively(monkeypatch):
    """prims::clamp, lerp, sign, floor_divide, logaddexp, xlogy of float16 run on the GPU, computed in float and
    rounded to half once: clamp and sign are exact; the others are within the rounding of the float result to half.
    (The public ops compute float16 in float32 around the prims, as PyTorch's refs do.)"""
    from opweave import _fallback

    prims = ow.ops.prims
    fell_back = []
    original = _fallback.run
    monkeypatch.setattr(_fallback, "run", lambda op, *rest: fell_back.append(str(op)) or original(op, *rest))
    a16 = (_rng(21).standard_normal((40, 17)) * 3).astype(np.float16)
    b16 = (_rng(22).standard_normal((40, 17)) * 3).astype(np.float16)
    special = np.concatenate([a16[0], np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], np.float16)])
    s = ow.tensor(special, device="cuda")
    lo, hi = ow.full_like(s, -1), ow.full_like(s, 1)
    np.testing.assert_array_equal(prims.clamp(s, lo, hi).cpu().numpy(), np.clip(special, -1, 1))
    np.testing.assert_array_equal(prims.sign(s).cpu().numpy(), np.sign(special))
    x, y = ow.tensor(a16, device="cuda"), ow.tensor(b16, device="cuda")
    quarter = ow.full_like(x, 0.25)
    wide_a, wide_b = a16.astype(np.float32), b16.astype(np.float32)
    with np.errstate(all="ignore"):
        cases = (
            (prims.lerp(x, y, quarter), (wide_a + np.float32(0.25) * (wide_b - wide_a)).astype(np.float16)),
            (prims.floor_divide(x, y), np.floor_divide(wide_a, wide_b).astype(np.float16)),
            (prims.logaddexp(x, y), np.logaddexp(wide_a, wide_b).astype(np.float16)),
            (prims.xlogy(x.abs(), y.abs()), (np.abs(wide_a) * np.log(np.abs(wide_b))).astype(np.float16)),
        )
    for got, want in cases:
        assert got.dtype == ow.float16
        np.testing.assert_allclose(got.cpu().numpy().astype(np.float64), want, rtol=2.0**-10, atol=2.0**-24)
    names = ("clamp", "lerp", "sign", "floor_divide", "logaddexp", "xlogy")
    assert not [op for op in fell_back if any(n in op for n in names)]


def test_device_properties():
    props = ow.cuda.get_device_properties()
    assert (props.major, props.minor) == ow.cuda.get_device_capability()
    assert props.total_memory > 1 << 30 and props.multi_processor_count > 0 and props.warp_size == 32
    assert props.name == ow.cuda.get_device_name()


def test_float16_pooling_scans_sorting_specials_and_parameter_prims_run_natively(monkeypatch):
    """float16 pooling, scans, sorting, special functions and the parameter prims run on the GPU: loaded as half,
    computed in float (scans accumulate in float32; special functions in double), rounded to half once."""
    from opweave import _fallback
    from scipy import special as sp

    prims = ow.ops.prims
    fell_back = []
    original = _fallback.run
    monkeypatch.setattr(_fallback, "run", lambda op, *rest: fell_back.append(str(op)) or original(op, *rest))
    a16 = (_rng(31).standard_normal((3, 8, 8)) * 2).astype(np.float16)
    wide = a16.astype(np.float32)
    x = ow.tensor(a16, device="cuda")

    def close(got, want, rtol=2.0**-10, atol=2.0**-24):
        assert got.dtype == ow.float16
        got, want = got.cpu().numpy().astype(np.float64), want.astype(np.float64)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)

    windows = wide.reshape(3, 4, 2, 4, 2)
    values, _ = prims.max_pool(x[None], [2, 2], [2, 2], [0, 0], [1, 1], False)
    np.testing.assert_array_equal(values.cpu().numpy()[0], windows.max(axis=(2, 4)).astype(np.float16))
    close(prims.avg_pool(x[None], [2, 2], [2, 2], [0, 0], False, True, None)[0], windows.mean(axis=(2, 4)))
    close(prims.cumsum(x, 2), np.cumsum(wide, axis=2, dtype=np.float32).astype(np.float16))
    close(prims.cumprod(x, 2), np.cumprod(wide, axis=2, dtype=np.float32).astype(np.float16))
    close(prims.logcumsumexp(x, 1), np.logaddexp.accumulate(wide.astype(np.float64), axis=1).astype(np.float16))
    top, where = prims.cummax(x, 2)
    np.testing.assert_array_equal(top.cpu().numpy(), np.maximum.accumulate(a16, axis=2))
    ordered, order = prims.sort(x, 2, False, True)
    np.testing.assert_array_equal(ordered.cpu().numpy(), np.sort(a16, axis=2))
    np.testing.assert_array_equal(order.cpu().numpy(), np.argsort(a16, axis=2, kind="stable"))
    np.testing.assert_array_equal(prims.argmax(x, 2).cpu().numpy(), np.argmax(a16, axis=2))
    np.testing.assert_array_equal(prims.argmin(x, None).cpu().numpy(), np.argmin(a16))
    w16 = (_rng(32).standard_normal((2, 3, 3, 3))).astype(np.float16)
    conv = prims.convolution(x[None], ow.tensor(w16, device="cuda"), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)
    windows = np.lib.stride_tricks.sliding_window_view(wide, (3, 3), axis=(1, 2))  # (3, 6, 6, 3, 3)
    # 27 products summed in float32 in another order, then one rounding to half
    close(conv[0], np.einsum("chwij,ocij->ohw", windows, w16.astype(np.float32)), atol=1e-4)
    close(prims.erfcx(x), sp.erfcx(a16.astype(np.float64)))
    close(prims.lgamma(x), sp.gammaln(a16.astype(np.float64)))
    close(prims.round_decimals(x, 1), (np.rint(wide * np.float32(10)) / np.float32(10)).astype(np.float16))
    special = np.array([np.nan, np.inf, -np.inf, 1.5], np.float16)
    np.testing.assert_array_equal(
        prims.nan_to_num(ow.tensor(special, device="cuda"), None, None, None).cpu().numpy(),
        np.nan_to_num(special),
    )
    names = ("pool", "cum", "logcumsumexp", "sort", "argm", "convolution", "erfcx", "lgamma", "round_decimals")
    names += ("nan_to_num",)
    assert not [op for op in fell_back if any(n in op for n in names)]
