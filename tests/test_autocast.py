"""Autocast: the Autocast layer, PyTorch's CPU and GPU policy tables, nesting, the weight cache, plugins, threads.

The GPU-like device is ``fakegpu``, a meta-based stand-in defined here: its
backend declares ``autocast_dtype = float16`` (so it gets the generic GPU table,
PyTorch's CUDA list), its tensors have shape, dtype and strides but no data, and a
boxed Dense fallback runs each prim's meta function (canonical ops run their
decompositions), so every op reports the dtype it would produce. Numbers are
checked on the CPU, against NumPy.
"""

from __future__ import annotations

import dataclasses
import threading
import types

import ml_dtypes
import numpy as np
import opweave
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave import ops
from opweave._autocast import cache_size
from opweave._autocast_tables import CATEGORIES, CPU, CUDA
from opweave.backends import Backend, Storage
from opweave.dispatch import Layer, explain, registered

f16, bf16, f32, f64 = opweave.float16, opweave.bfloat16, opweave.float32, opweave.float64


# -- a meta-based GPU stand-in --------------------------------------------------------------------------------


class StandInGPU(Backend):
    """A GPU-like device for dtype checks: metadata only, every prim's kernel is its meta function."""

    autocast_dtype = opweave.float16

    def __init__(self, name):
        self.name = name

    def allocate(self, nbytes, device):
        """A storage of ``nbytes`` that holds nothing."""
        return Storage(None, nbytes, device, self)

    def copy_from_host(self, array, device):
        """Only the size is recorded."""
        return Storage(None, array.nbytes, device, self)

    def copy_to_host(self, tensor):
        """Stand-in tensors have no data."""
        raise RuntimeError(f"{self.name} tensors have no data")


def _rehome(value, backend):
    """Meta outputs of a meta function as tensors of the stand-in device."""
    if isinstance(value, opweave.Tensor):
        if value.device.type != "meta":
            return value
        dev = opweave.device(backend.name)
        shape, stride = value.shape, value.stride()
        span = 1 + sum((s - 1) * t for s, t in zip(shape, stride)) if all(shape) else 0
        storage = Storage(None, span * value.dtype.itemsize, dev, backend)
        return opweave.Tensor._make(storage, shape, stride, value.storage_offset(), value.dtype, dev)
    if isinstance(value, (tuple, list)):
        return type(value)(_rehome(v, backend) for v in value)
    return value


def _stand_in_plugin(name, policy=None):
    """A plugin module declaring a stand-in GPU device ``name`` (and optionally changing its autocast policy)."""
    backend = StandInGPU(name)

    def fallback(op, *args):
        if op.kind == "prim":
            return _rehome(op.meta(*args), backend)
        return op.decomposition(*args)

    module = types.ModuleType(f"{name}_plugin")

    @opweave.hookimpl
    def opweave_register(registry):
        registry.backend(backend)
        registry.fallback(Layer.Dense, name, fallback)
        if policy is not None:
            registry.autocast_policy(name, **policy)

    module.opweave_register = opweave_register
    return module


EXT_POLICY = {"lower_precision": ["hypot"], "fp32": ["mm"], "promote": ["cat"], "remove": ["exp", "norm.Scalar"]}


def _register(name, policy=None):
    if name not in {s.name for s in opweave.backends.status(load_all=False) if s.loaded}:
        opweave.backends.register_plugin(_stand_in_plugin(name, policy), name=name)


_register("fakegpu")
_register("extgpu", EXT_POLICY)


def gpu(shape, dtype=f32, device="fakegpu"):
    """A stand-in GPU tensor."""
    return opweave.empty(shape, dtype=dtype, device=device)


def cpu(values, dtype=f32):
    """A CPU tensor."""
    return opweave.tensor(np.asarray(values), dtype=dtype)


def rand(*shape, dtype=f32, seed=0):
    """A CPU tensor of values in [-2, 2)."""
    return cpu(np.random.default_rng(seed).uniform(-2, 2, shape), dtype)


class Spy:
    """A Dense kernel that records the dtypes of the tensor arguments reaching it, then runs the decomposition."""

    def __init__(self, op):
        self.op, self.calls = op, []

    def __call__(self, *args):
        seen = []
        for a in args:
            if isinstance(a, (list, tuple)):
                seen.append([t.dtype if isinstance(t, opweave.Tensor) else t for t in a])
            elif isinstance(a, opweave.Tensor):
                seen.append(a.dtype)
        self.calls.append((seen, args))
        return self.op.decomposition(*args)


# -- CPU: the policy applied -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, call",
    [
        ("mm", lambda a, b, v: ops.mm(a, b)),
        ("matmul", lambda a, b, v: a @ b),
        ("linear", lambda a, b, v: ops.linear(a, b, v)),
        ("addmm", lambda a, b, v: ops.addmm(a, a, b)),
        ("bmm", lambda a, b, v: ops.bmm(a[None], b[None])),
        ("baddbmm", lambda a, b, v: ops.baddbmm(a[None], a[None], b[None])),
        ("addbmm", lambda a, b, v: ops.addbmm(a, a[None], b[None])),
    ],
)
def test_cpu_lower_precision_ops_run_in_bfloat16(name, call):
    a, b, v = rand(3, 3), rand(3, 3, seed=1), rand(3, seed=2)
    assert name in opweave.autocast_policy("cpu").lower_precision
    with opweave.autocast("cpu"):
        assert call(a, b, v).dtype is bf16
    assert call(a, b, v).dtype is f32


@settings(max_examples=25, deadline=None)
@given(
    m=st.integers(1, 5),
    k=st.integers(1, 6),
    n=st.integers(1, 5),
    seed=st.integers(0, 2**31 - 1),
)
def test_cpu_mm_values_are_the_bfloat16_product(m, k, n, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-4, 4, (m, k)).astype(np.float32), rng.uniform(-4, 4, (k, n)).astype(np.float32)
    with opweave.autocast("cpu"):
        got = ops.mm(cpu(a), cpu(b))
    assert got.dtype is bf16
    rounded = [x.astype(ml_dtypes.bfloat16).astype(np.float64) for x in (a, b)]
    expected = (rounded[0] @ rounded[1]).astype(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_allclose(got.numpy().astype(np.float64), expected, rtol=2**-7, atol=1e-6)


def test_cpu_fp32_ops_upcast_lower_precision_inputs():
    x = rand(3, 3, dtype=bf16)
    with opweave.autocast("cpu"):
        assert ops.prod(x).dtype is f32
        assert ops.prod(x, 0).dtype is f32
        assert ops.trace(x).dtype is f32
        assert ops.view_as_complex(rand(3, 2, dtype=bf16)).dtype is opweave.complex64
    assert ops.prod(x).dtype is bf16


def test_cpu_promote_ops_widen_to_float32():
    lo, hi = rand(2, 2, dtype=bf16), rand(2, 2)
    spy = Spy(ops.cat.default)
    with registered(ops.cat.default, spy, backend="cpu"), opweave.autocast("cpu"):
        assert ops.cat([lo, hi]).dtype is f32
        assert ops.cat([lo, lo]).dtype is bf16
    assert [seen for seen, _ in spy.calls] == [[[f32, f32]], [[bf16, bf16]]]
    with opweave.autocast("cpu"):
        assert ops.stack([lo, hi]).dtype is f32
        assert ops.index_copy(lo, 0, cpu([1], opweave.int64), hi[:1]).dtype is f32


_PROMOTE_DTYPES = [bf16, f16, f32, f64, opweave.int32]


def _expected_promote(dtypes):
    """PyTorch's promote policy, written out: floating non-float64 inputs go to the widest of them."""
    low = [d for d in dtypes if d in (bf16, f16, f32)]
    if not low:
        return list(dtypes)
    widest = f32 if f32 in low or (bf16 in low and f16 in low) else low[0]
    return [widest if d in (bf16, f16, f32) else d for d in dtypes]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(_PROMOTE_DTYPES), min_size=1, max_size=4))
def test_cpu_promote_casts_what_reaches_the_kernel(dtypes):
    tensors = [rand(2, dtype=d, seed=i) if d.is_floating_point else cpu([1, 2], d) for i, d in enumerate(dtypes)]
    spy = Spy(ops.cat.default)
    with registered(ops.cat.default, spy, backend="cpu"), opweave.autocast("cpu"):
        out = ops.cat(tensors)
    assert spy.calls[0][0][0] == _expected_promote(dtypes)
    reference = ops.cat([t.to(d) for t, d in zip(tensors, _expected_promote(dtypes))])
    assert out.dtype is reference.dtype


def test_float64_and_integer_inputs_are_untouched():
    d, i = rand(3, 3, dtype=f64), cpu([[1, 2], [3, 4]], opweave.int64)
    with opweave.autocast("cpu"):
        assert ops.mm(d, d).dtype is f64
        assert ops.mm(i, i).dtype is opweave.int64
        assert ops.mm(i, i).tolist() == [[7, 10], [15, 22]]
        assert ops.prod(i).dtype is opweave.int64
    with opweave.autocast("fakegpu"):
        h = gpu((3,), f64)
        assert ops.exp(h).dtype is f64
        assert ops.sum(h).dtype is f64
        assert ops.sum(gpu((3,), opweave.int32)).dtype is opweave.int64


def test_ops_outside_the_tables_keep_their_input_dtype():
    x, h = rand(2, 2), rand(2, 2, dtype=bf16)
    with opweave.autocast("cpu"):
        reasons = explain(ops.sub.Tensor, x, x).reasons
        assert "Autocast: no kernel for this op, falls through" in reasons
        assert (x + x).dtype is f32 and (h + h).dtype is bf16
        assert ops.exp(x).dtype is f32 and ops.sum(h).dtype is bf16
        assert ops.softmax(h, 0).dtype is bf16  # GPU's fp32_set_opt_dtype, not on CPU's list
    with opweave.autocast("fakegpu"):
        g = gpu((2, 2))
        assert ops.sin(g).dtype is f32 and ops.relu(g).dtype is f32 and (g * g).dtype is f32
        assert ops.cat([g, g]).dtype is f32  # CPU's promote list, not the GPU's


# -- the GPU-like device: the generic GPU table -----------------------------------------------------------------


def test_gpu_like_device_uses_the_generic_gpu_table_with_float16():
    policy = opweave.autocast_policy("fakegpu")
    assert policy.dtype is f16 and opweave.get_autocast_dtype("fakegpu") is f16
    assert {"mm", "matmul", "addmv", "linear"} <= policy.lower_precision
    assert {"exp", "log", "pow", "logsumexp", "softplus", "dist"} <= policy.fp32
    assert {"sum", "softmax", "log_softmax", "cumsum", "cumprod", "prod", "norm.Scalar"} <= policy.fp32_set_opt_dtype
    assert {"addcmul", "addcdiv", "atan2", "dot", "scatter_add", "index_put"} <= policy.promote
    assert "cat" not in policy and "stack" not in policy


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda x, h: ops.mm(x, x), f16),
        (lambda x, h: x @ x, f16),
        (lambda x, h: ops.mv(x, x[0]), f16),
        (lambda x, h: ops.addmv(x[0], x, x[0]), f16),
        (lambda x, h: ops.linear(x, x, x[0]), f16),
        (lambda x, h: ops.exp(h), f32),
        (lambda x, h: ops.log1p(h), f32),
        (lambda x, h: ops.pow(h, 2), f32),
        (lambda x, h: ops.pow(2, h), f32),
        (lambda x, h: ops.pow(h, h), f32),
        (lambda x, h: ops.logsumexp(h, [0]), f32),
        (lambda x, h: ops.sum(h), f32),
        (lambda x, h: ops.sum(h, [1]), f32),
        (lambda x, h: ops.softmax(h, 0), f32),
        (lambda x, h: ops.log_softmax(h, 1), f32),
        (lambda x, h: ops.cumsum(h, 0), f32),
        (lambda x, h: ops.prod(h, 1), f32),
        (lambda x, h: ops.norm(h), f32),
        (lambda x, h: ops.norm(h, 2, [0]), f32),
        (lambda x, h: ops.addcmul(h, h, h), f16),
        (lambda x, h: ops.atan2(h, x), f32),
        (lambda x, h: ops.dot(h[0], h[0]), f16),
    ],
)
def test_gpu_like_device_output_dtypes(call, expected):
    x, h = gpu((3, 3)), gpu((3, 3), f16)
    with opweave.autocast("fakegpu"):
        assert call(x, h).dtype is expected


def test_gpu_promote_widens_what_reaches_the_kernel():
    lo, hi = gpu((2,), f16), gpu((2,))
    spy = Spy(ops.addcmul.default)
    with registered(ops.addcmul.default, spy, backend="fakegpu"), opweave.autocast("fakegpu"):
        assert ops.addcmul(lo, hi, lo).dtype is f32
        assert ops.addcmul(lo, lo, lo).dtype is f16
        assert ops.addcmul(gpu((2,), f64), lo, hi).dtype is f64
    assert [seen for seen, _ in spy.calls] == [[f32, f32, f32], [f16, f16, f16], [f64, f32, f32]]


def test_explicit_dtype_wins():
    h = gpu((3, 3), f16)
    with opweave.autocast("fakegpu"):
        assert ops.sum(h, dtype=f16).dtype is f16
        assert ops.softmax(h, 0, dtype=f16).dtype is f16
        assert ops.cumsum(h, 0, dtype=f64).dtype is f64
        assert ops.norm(h, 2, dtype=f16).dtype is f16
    x = rand(3, 3, dtype=bf16)
    with opweave.autocast("cpu"):
        assert ops.prod(x, dtype=bf16).dtype is bf16  # fp32 op, caller's dtype
        assert ops.prod(x).dtype is f32


def test_autocast_on_one_device_leaves_the_other_alone():
    x, g = rand(2, 2), gpu((2, 2))
    with opweave.autocast("cpu"):
        assert ops.mm(g, g).dtype is f32
        assert not opweave.is_autocast_enabled("fakegpu")
    with opweave.autocast("fakegpu"):
        assert ops.mm(x, x).dtype is f32
        assert ops.mm(g, g).dtype is f16


# -- in-place and out= -----------------------------------------------------------------------------------------


def test_out_and_inplace_calls_are_not_autocast():
    a, b = rand(3, 3), rand(3, 3, seed=1)
    spy, spy_addmm = Spy(ops.mm.default), Spy(ops.addmm.default)
    with registered(ops.mm.default, spy, backend="cpu"), registered(ops.addmm.default, spy_addmm, backend="cpu"):
        with opweave.autocast("cpu"):
            out = opweave.empty((3, 3))
            assert ops.mm(a, b, out=out) is out and out.dtype is f32
            c = a.clone()
            c.addmm_(a, b)
            assert c.dtype is f32
    assert [seen for seen, _ in spy.calls] == [[f32, f32]]
    assert [seen for seen, _ in spy_addmm.calls] == [[f32, f32, f32]]
    expected = a.numpy().astype(np.float64) @ b.numpy().astype(np.float64)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    with opweave.autocast("fakegpu"):
        h = gpu((3,), f16)
        h.cumsum_(0)
        assert h.dtype is f16
        out = gpu((3,), f16)
        assert ops.exp(h, out=out).dtype is f16
        assert "no cast" in explain(ops.exp.out, h, out=out).reasons[-1]


# -- regions: nesting, enabled=False, exceptions, decorator, errors ---------------------------------------------


def test_regions_nest_and_restore():
    x = rand(2, 2)
    assert not opweave.is_autocast_enabled("cpu") and opweave.get_autocast_dtype("cpu") is bf16
    with opweave.autocast("cpu"):
        assert ops.mm(x, x).dtype is bf16
        with opweave.autocast("cpu", dtype=f16):
            assert opweave.get_autocast_dtype("cpu") is f16
            assert ops.mm(x, x).dtype is f16
            with opweave.autocast("cpu", enabled=False):
                assert not opweave.is_autocast_enabled("cpu")
                assert ops.mm(x, x).dtype is f32
            assert opweave.is_autocast_enabled("cpu") and ops.mm(x, x).dtype is f16
        assert opweave.get_autocast_dtype("cpu") is bf16 and ops.mm(x, x).dtype is bf16
        with pytest.raises(KeyError):
            with opweave.autocast("cpu", dtype=f16), opweave.autocast("cpu", enabled=False):
                raise KeyError("boom")
        assert opweave.is_autocast_enabled("cpu") and opweave.get_autocast_dtype("cpu") is bf16
    assert not opweave.is_autocast_enabled("cpu") and ops.mm(x, x).dtype is f32
    assert opweave.get_autocast_dtype("cpu") is bf16
    assert "Autocast" not in str(explain(ops.mm.default, x, x))


def test_enabled_false_alone_adds_no_layer_and_other_device_stays_on():
    x = rand(2, 2)
    with opweave.autocast("cpu", enabled=False):
        assert "Autocast" not in str(explain(ops.mm.default, x, x))
    g = gpu((2, 2))
    with opweave.autocast("fakegpu"), opweave.autocast("cpu", enabled=False):
        assert ops.mm(g, g).dtype is f16 and ops.mm(x, x).dtype is f32


def test_decorator_form():
    calls = []

    @opweave.autocast("cpu")
    def forward(a, b):
        """Doc kept."""
        calls.append(opweave.is_autocast_enabled("cpu"))
        return a @ b

    x = rand(2, 2)
    assert forward(x, x).dtype is bf16 and forward(x, x).dtype is bf16
    assert calls == [True, True] and forward.__doc__ == "Doc kept."
    assert not opweave.is_autocast_enabled("cpu") and (x @ x).dtype is f32

    @opweave.autocast("cpu", enabled=False)
    def plain(a):
        return a @ a

    with opweave.autocast("cpu"):
        assert plain(x).dtype is f32 and (x @ x).dtype is bf16


def test_explain_shows_the_autocast_kernel_inside_a_region():
    x = rand(2, 2)
    with opweave.autocast("cpu"):
        why = explain(ops.mm.default, x, x)
        assert "Autocast" in why.reasons[0]
        assert why.reasons[-1] == "Autocast×every backend: kernel from autocast"
    assert explain(ops.mm.default, x, x).reasons[-1].startswith("Dense")


def test_argument_errors():
    with pytest.raises(TypeError, match="autocast: expected 'device_type' of type str"):
        opweave.autocast(opweave.device("cpu"))
    with pytest.raises(TypeError, match="autocast: argument 'dtype' must be opweave.dtype"):
        opweave.autocast("cpu", dtype="bfloat16")
    with pytest.raises(TypeError, match="autocast: argument 'enabled' must be bool"):
        opweave.autocast("cpu", enabled=1)
    with pytest.raises(RuntimeError, match="autocast: unsupported device type 'meta'"):
        opweave.autocast("meta")
    with pytest.raises(RuntimeError, match="no backend provides device type 'nosuchdev'"):
        opweave.autocast("nosuchdev")
    with pytest.raises(RuntimeError, match="get_autocast_dtype: device type 'meta' has no autocast dtype"):
        opweave.get_autocast_dtype("meta")
    x = rand(2, 2)
    with pytest.warns(UserWarning, match="float64 is not supported. Disabling autocast"):
        region = opweave.autocast("cpu", dtype=f64)
    with region:
        assert not opweave.is_autocast_enabled("cpu") and ops.mm(x, x).dtype is f32


# -- the weight cache --------------------------------------------------------------------------------------------


def test_weight_cache_returns_the_same_cast_inside_a_region_and_clears_on_exit():
    x, w = rand(2, 3), rand(3, 3, seed=1)
    spy = Spy(ops.mm.default)
    with registered(ops.mm.default, spy, backend="cpu"):
        with opweave.autocast("cpu"):
            ops.mm(x, w)
            with opweave.autocast("cpu"):
                ops.mm(w, w)
            assert cache_size("cpu") == 2, "an inner region's exit must not clear the cache"
            ops.mm(x, w)
            first = spy.calls[0][1][1]
            assert first.dtype is bf16
            assert spy.calls[1][1][0] is first and spy.calls[1][1][1] is first and spy.calls[2][1][1] is first
            assert spy.calls[2][1][0] is spy.calls[0][1][0]
        assert cache_size("cpu") == 0
        with opweave.autocast("cpu"):
            ops.mm(x, w)
        assert spy.calls[-1][1][1] is not first
    np.testing.assert_array_equal(first.numpy(), w.numpy().astype(ml_dtypes.bfloat16))


def test_weight_cache_skips_views_and_honours_cache_enabled_and_drops_dead_tensors():
    w = rand(4, 4)
    with opweave.autocast("cpu"):
        ops.mm(w[1:], w)  # w[1:] starts at an offset: not cached; w is
        assert cache_size("cpu") == 1
        ops.mm(w[:, :2].t(), w[:, :2])  # does not own its whole storage: not cached
        assert cache_size("cpu") == 1
        v = rand(4, 4, seed=3)
        ops.mm(v, v)
        assert cache_size("cpu") == 2
        del v
        assert cache_size("cpu") == 1, "the entry of a tensor that died must go"
    with opweave.autocast("cpu", cache_enabled=False):
        ops.mm(w, w)
        assert cache_size("cpu") == 0


# -- threads ----------------------------------------------------------------------------------------------------


def test_autocast_state_is_per_thread():
    x = rand(2, 2)
    seen = {}

    def worker():
        seen["enabled"] = opweave.is_autocast_enabled("cpu")
        seen["dtype"] = ops.mm(x, x).dtype
        with opweave.autocast("cpu", dtype=f16):
            seen["inner"] = ops.mm(x, x).dtype

    with opweave.autocast("cpu"):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert opweave.is_autocast_enabled("cpu") and ops.mm(x, x).dtype is bf16
    assert seen == {"enabled": False, "dtype": f32, "inner": f16}


# -- tables and plugins -----------------------------------------------------------------------------------------


def _in_catalog(name):
    qualified = name.removesuffix(".default")
    return any(
        op.variant is None and (op.name == qualified if "." in name else op.schema.name == name)
        for op in ops.catalog(kind="canonical")
    )


def _policy_name(name):
    """A table name as the policy lists it: the packet's name when the name covers every functional overload."""
    packet, _, overload = name.removesuffix(".default").partition(".")
    functional = [op for op in getattr(ops, packet).overloads.values() if op.variant is None]
    return packet if overload and [op.schema.overload for op in functional] == [overload] else name


# Names of PyTorch's lists that opweave's catalog lacks (when this test was written; it may only shrink).
KNOWN_MISSING = {
    *("conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d.input conv_transpose3d.input".split()),
    *("linalg_vecdot _addmm_activation _convolution.deprecated mkldnn_rnn_layer prelu".split()),
    *("scaled_dot_product_attention _native_multi_head_attention avg_pool3d binary_cross_entropy".split()),
    *("grid_sampler grid_sampler_2d grid_sampler_3d _grid_sampler_2d_cpu_fallback polar quantile".split()),
    *("nanquantile stft cdist cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr".split()),
    *("pinverse max_pool3d max_unpool2d max_unpool3d adaptive_avg_pool3d reflection_pad1d".split()),
    *("reflection_pad2d replication_pad1d replication_pad2d replication_pad3d mse_loss".split()),
    *("cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss".split()),
    *("smooth_l1_loss cross_entropy_loss l1_loss huber_loss margin_ranking_loss soft_margin_loss".split()),
    *("triplet_margin_loss multi_margin_loss ctc_loss kl_div multilabel_margin_loss".split()),
    *("binary_cross_entropy_with_logits fake_quantize_per_tensor_affine geqrf _lu_with_info qr svd".split()),
    *("triangular_solve fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d".split()),
    "multilabel_margin_loss_forward",
    *(f"fft_{n}" for n in "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft".split()),
    *("linalg_" + n for n in "cond matrix_rank matrix_norm solve cholesky svdvals eigvals eigvalsh inv".split()),
    *("linalg_" + n for n in "householder_product tensorinv tensorsolve qr cholesky_ex svd eig eigh".split()),
    *("linalg_lstsq linalg_inv_ex linalg_multi_dot linalg_vector_norm _convolution convolution".split()),
    *("einsum chain_matmul _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell gru_cell".split()),
    *("rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention cudnn_convolution".split()),
    *("cudnn_convolution_transpose layer_norm native_layer_norm group_norm frobenius_norm.dim".split()),
    *("nuclear_norm cosine_similarity pdist renorm upsample_nearest1d upsample_nearest2d".split()),
    *("upsample_nearest3d _upsample_nearest_exact1d _upsample_nearest_exact2d _upsample_nearest_exact3d".split()),
    *("upsample_linear1d upsample_bilinear2d _upsample_bilinear2d_aa upsample_trilinear3d".split()),
    *("upsample_bicubic2d _upsample_bicubic2d_aa norm.names_ScalarOpt_dim bilinear cross tensordot".split()),
}


@pytest.mark.parametrize("device, table", [("cpu", CPU), ("fakegpu", CUDA)])
def test_policy_is_pytorchs_list_restricted_to_the_catalog(device, table):
    policy = opweave.autocast_policy(device)
    for category in CATEGORIES:
        names = set(table[category])
        missing = {n for n in names if not _in_catalog(n)}
        assert missing <= KNOWN_MISSING, f"names of PyTorch's {category} list not in the catalog: {missing}"
        assert getattr(policy, category) == {_policy_name(n) for n in names - missing}
        for name in getattr(policy, category):
            assert policy.category(name) == category
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.dtype = f32
    assert isinstance(policy.fp32, frozenset)


def test_device_without_autocast_dtype_has_an_empty_policy():
    policy = opweave.autocast_policy("meta")
    assert policy.dtype is None
    assert not (policy.lower_precision | policy.fp32 | policy.fp32_set_opt_dtype | policy.promote)


def test_plugin_extends_and_overrides_its_device_table():
    policy, generic = opweave.autocast_policy("extgpu"), opweave.autocast_policy("fakegpu")
    assert "hypot" in policy.lower_precision and "hypot" not in generic
    assert "mm" in policy.fp32 and "mm" not in policy.lower_precision and "mm" in generic.lower_precision
    assert "cat" in policy.promote
    assert "exp" not in policy and "exp" in generic.fp32
    assert "norm.Scalar" not in policy.fp32_set_opt_dtype and "norm.ScalarOpt_dim" in policy.fp32_set_opt_dtype
    assert "hypot" not in opweave.autocast_policy("cpu")
    x, h = gpu((2, 2), device="extgpu"), gpu((2, 2), f16, device="extgpu")
    with opweave.autocast("extgpu"):
        assert ops.hypot(x, x).dtype is f16
        assert ops.mm(h, h).dtype is f32
        assert ops.exp(h).dtype is f16
        assert ops.norm(h).dtype is f16 and ops.norm(h, 2, [0]).dtype is f32
        assert ops.cat([h, x]).dtype is f32
        assert explain(ops.hypot.default, x, x).reasons[-1] == "Autocast×every backend: kernel from autocast"
    with opweave.autocast("fakegpu"):
        g = gpu((2, 2))
        assert ops.hypot(g, g).dtype is f32 and ops.mm(g, g).dtype is f16


def test_registry_autocast_policy_rejects_bad_names():
    registry = opweave.backends.Registry("test")
    with pytest.raises(ValueError, match="'no_such_op' names no functional operator"):
        registry.autocast_policy("extgpu", fp32=["no_such_op"])
    with pytest.raises(ValueError, match="'mm' is given in both 'lower_precision' and 'fp32'"):
        registry.autocast_policy("extgpu", lower_precision=["mm"], fp32=["mm"])
    with pytest.raises(TypeError, match="argument 'promote' must be a sequence of op names"):
        registry.autocast_policy("extgpu", promote="cat")
    assert "mm" in opweave.autocast_policy("extgpu").fp32
