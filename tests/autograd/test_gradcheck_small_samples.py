"""gradcheck for the differentiable ops the op-database sweep cannot take (``opdb_sweep``).

The sweep differentiates each op's first sample with at most 24 elements per tensor; some
ops PyTorch differentiates have no such sample (3-d pooling and convolution, grid sampling,
CTC loss, ...), some samples give no floating output (``to`` an integer dtype), some ops are
random (dropout: checked with the generator reseeded before each call, so the mask is the
same for every finite difference) and igamma/zeta are differentiated with respect to their
second argument only (PyTorch: ``not_implemented`` for the first). Each is checked here on a
small hand-made input in float64: values a hypothesis-drawn permutation apart (so max
pooling has no ties and no kink is within the finite-difference step).
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave.autograd import gradcheck

O = ow.ops
SEEDS = st.integers(0, 2**32 - 1)


def distinct(rng, shape, scale: float = 0.1) -> ow.Tensor:
    """float64 values at least ``scale`` apart, in random order (no ties for max-type ops)."""
    n = int(np.prod(shape))
    values = (rng.permutation(n) - n / 2) * scale
    return ow.tensor(values.reshape(shape), dtype=ow.float64, requires_grad=True)


def normal(rng, shape, low=None, high=None) -> ow.Tensor:
    """float64 standard-normal values (or uniform in [low, high)) that require grad."""
    values = rng.standard_normal(shape) if low is None else rng.uniform(low, high, shape)
    return ow.tensor(values, dtype=ow.float64, requires_grad=True)


def first(fn):
    """``fn``'s first output (the values of a (values, indices) pair)."""
    return lambda *a: fn(*a)[0]


def seeded(fn):
    """``fn`` with the default generator reseeded before each call: the same random draw every time."""

    def call(*a):
        ow.manual_seed(1234)
        return fn(*a)

    return call


def _pooling(rng):
    x = distinct(rng, (1, 2, 3, 3, 4))
    samples = ow.tensor(rng.uniform(0, 1, (1, 2, 2)), dtype=ow.float64)
    samples3 = ow.tensor(rng.uniform(0, 1, (1, 1, 3)), dtype=ow.float64)
    x3 = distinct(rng, (1, 1, 3, 3, 3))
    x2 = distinct(rng, (1, 2, 4, 4))
    return {
        "avg_pool3d": (lambda t: O.avg_pool3d(t, [2, 2, 2], [1, 2, 2], [1, 0, 1]), (x,)),
        "max_pool3d": (lambda t: O.max_pool3d(t, [2, 2, 2], [1, 1, 2]), (x,)),
        "max_pool3d_with_indices": (first(lambda t: O.max_pool3d_with_indices(t, [2, 2, 2], [1, 2, 2])), (x,)),
        "adaptive_avg_pool3d": (lambda t: O.adaptive_avg_pool3d(t, [2, 2, 3]), (x,)),
        "_adaptive_avg_pool3d": (lambda t: O._adaptive_avg_pool3d(t, [2, 1, 3]), (x,)),
        "adaptive_max_pool3d": (first(lambda t: O.adaptive_max_pool3d(t, [2, 2, 3])), (x,)),
        "fractional_max_pool2d": (first(lambda t: O.fractional_max_pool2d(t, [2, 2], [2, 2], samples)), (x2,)),
        "fractional_max_pool3d": (
            first(lambda t: O.fractional_max_pool3d(t, [2, 2, 2], [1, 1, 1], samples3)),
            (x3,),
        ),
        "reflection_pad3d": (lambda t: O.reflection_pad3d(t, [1, 2, 1, 0, 0, 1]), (x,)),
        "replication_pad3d": (lambda t: O.replication_pad3d(t, [1, 2, 1, 0, 0, 1]), (x,)),
    }


def _convolutions(rng):
    x3 = normal(rng, (1, 2, 3, 2, 3))
    w3 = normal(rng, (2, 2, 2, 1, 2))
    b = normal(rng, (2,))
    x2 = normal(rng, (2, 2, 3, 3))
    w2 = normal(rng, (2, 1, 2, 2))
    wt = normal(rng, (2, 1, 2, 1, 2))
    conv = O.convolution.default
    return {
        "convolution": (
            lambda x, w, bb: conv(x, w, bb, [1, 2], [1, 0], [1, 1], False, [0, 0], 2),
            (x2, w2, b),
        ),
        "_convolution": (
            lambda x, w, bb: O._convolution(
                x, w, bb, [1, 1], [0, 1], [1, 1], False, [0, 0], 2, False, True, True, True
            ),
            (x2, w2, b),
        ),
        "conv2d.padding": (lambda x, w, bb: O.conv2d.padding(x, w, bb, 1, "same", 1, 2), (x2, w2, b)),
        "conv3d": (lambda x, w, bb: O.conv3d(x, w, bb, 1, [1, 0, 0]), (x3, w3, b)),
        "conv3d.padding": (lambda x, w, bb: O.conv3d.padding(x, w, bb, 1, "same"), (x3, w3, b)),
        "conv_transpose3d.input": (
            lambda x, w, bb: O.conv_transpose3d.input(x, w, bb, [2, 1, 1], 0, [1, 0, 0], 2),
            (x3, wt, b),
        ),
    }


def _sampling_and_losses(rng):
    image = normal(rng, (1, 2, 3, 3))
    volume = normal(rng, (1, 1, 2, 3, 2))
    grid = normal(rng, (1, 2, 2, 2), -0.8, 0.8)
    grid3 = normal(rng, (1, 1, 2, 2, 3), -0.8, 0.8)
    log_probs = ow.tensor(np.log(rng.dirichlet(np.ones(4), (5, 2))), dtype=ow.float64, requires_grad=True)
    targets = ow.tensor([[1, 2], [3, 1]])
    q, k, v = (normal(rng, (1, 2, 3, 2)) for _ in range(3))
    cols = normal(rng, (1, 2 * 4, 4))
    n_fft, hop = 4, 2
    window = ow.tensor(np.hanning(n_fft + 1)[:-1] + 0.5, dtype=ow.float64)
    spec_np = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
    spec_np[0].imag = 0  # the DC and Nyquist bins of a real signal are real
    spec_np[-1].imag = 0
    spec = ow.tensor(spec_np, dtype=ow.complex128, requires_grad=True)
    return {
        "grid_sampler": (lambda t, g: O.grid_sampler(t, g, 0, 0, False), (image, grid)),
        "grid_sampler_3d": (lambda t, g: O.grid_sampler_3d(t, g, 0, 1, True), (volume, grid3)),
        "_upsample_bilinear2d_aa.vec": (lambda t: O._upsample_bilinear2d_aa.vec(t, [2, 2], False, None), (image,)),
        "_upsample_bicubic2d_aa.vec": (lambda t: O._upsample_bicubic2d_aa.vec(t, [2, 2], True, None), (image,)),
        "col2im": (lambda t: O.col2im(t, [3, 3], [2, 2], [1, 1], [0, 0], [1, 1]), (cols,)),
        "ctc_loss.IntList": (lambda lp: O.ctc_loss.IntList(lp, targets, [5, 4], [2, 1]), (log_probs,)),
        "ctc_loss.Tensor": (
            lambda lp: O.ctc_loss.Tensor(lp, targets, ow.tensor([5, 4]), ow.tensor([2, 2]), 0, 0),
            (log_probs,),
        ),
        "_scaled_dot_product_attention_math": (
            first(lambda a, b, c: O._scaled_dot_product_attention_math(a, b, c, None, 0.0, True)),
            (q, k, v),
        ),
        "istft": (
            lambda s: O.istft(s, n_fft, hop, n_fft, window, True, False, True, None, False),
            (spec,),
        ),
    }


def _conversions_and_second_arguments(rng):
    x = normal(rng, (2, 3))
    other = ow.zeros(1, dtype=ow.complex128)  # a float64 → complex128 conversion loses nothing
    positive = normal(rng, (2, 3), 0.5, 3.0)
    a = ow.tensor(rng.uniform(0.5, 3.0, (2, 3)))
    s = ow.tensor(rng.uniform(1.5, 4.0, (2, 3)))
    value = ow.tensor(1.5, dtype=ow.float64, requires_grad=True)
    return {
        "to.dtype": (lambda t: O.to.dtype(t, ow.complex128).real, (x,)),
        "to.device": (lambda t: O.to.device(t, ow.device("cpu"), ow.complex128).real, (x,)),
        "to.other": (lambda t: O.to.other(t, other).real, (x,)),
        "type_as": (lambda t: O.type_as(t, other).real, (x,)),
        "index_fill.int_Tensor": (
            lambda t, v: O.index_fill.int_Tensor(t, 1, ow.tensor([2, 0]), v),
            (x, value),
        ),
        "igamma": (lambda t: O.igamma(a, t), (positive,)),
        "igammac": (lambda t: O.igammac(a, t), (positive,)),
        "special_gammainc": (lambda t: O.special_gammainc(a, t), (positive,)),
        "special_gammaincc": (lambda t: O.special_gammaincc(a, t), (positive,)),
        "special_zeta": (lambda t: O.special_zeta(s, t), (positive,)),
        "special_zeta.self_scalar": (lambda t: O.special_zeta.self_scalar(2.5, t), (positive,)),
    }


def _random(rng):
    x = normal(rng, (2, 3, 2))
    return {
        "dropout": (seeded(lambda t: O.dropout(t, 0.4, True)), (x,)),
        "alpha_dropout": (seeded(lambda t: O.alpha_dropout(t, 0.4, True)), (x,)),
        "feature_dropout": (seeded(lambda t: O.feature_dropout(t, 0.4, True)), (x,)),
        "feature_alpha_dropout": (seeded(lambda t: O.feature_alpha_dropout(t, 0.4, True)), (x,)),
        "native_dropout": (seeded(first(lambda t: O.native_dropout(t, 0.4, True))), (x,)),
    }


GROUPS = {
    "pooling": _pooling,
    "convolutions": _convolutions,
    "sampling and losses": _sampling_and_losses,
    "conversions and second arguments": _conversions_and_second_arguments,
    "random": _random,
}
CASES = [(group, name) for group, make in GROUPS.items() for name in make(np.random.default_rng(0))]
#: The ops this module checks (the exceptions list in docs/autograd.md names them).
CHECKED = sorted(name for _, name in CASES)


@pytest.mark.parametrize("group,name", CASES, ids=[name for _, name in CASES])
@settings(max_examples=2)
@given(seed=SEEDS)
def test_gradcheck_small_sample(group, name, seed):
    fn, inputs = GROUPS[group](np.random.default_rng(seed))[name]
    assert gradcheck(fn, inputs), name


def test_zeta_and_igamma_first_argument_has_no_derivative():
    """As in PyTorch (``not_implemented``): backward through the first argument raises."""
    for op in (O.igamma, O.special_zeta):
        a = ow.tensor([2.0, 3.0], dtype=ow.float64, requires_grad=True)
        out = op(a, ow.tensor([1.5, 2.5], dtype=ow.float64))
        with pytest.raises(RuntimeError, match="not implemented"):
            out.sum().backward()


def test_airy_ai_result_does_not_require_grad():
    """PyTorch's derivatives.yaml marks ``special_airy_ai``'s input non_differentiable."""
    x = ow.tensor([0.5, -1.0], dtype=ow.float64, requires_grad=True)
    assert not ow.special.airy_ai(x).requires_grad


@settings(max_examples=10)
@given(
    x=st.lists(st.floats(-8, 8, width=32), min_size=1, max_size=12),
    scale=st.floats(0.05, 2.0),
    zero_point=st.integers(0, 15),
    per_channel=st.booleans(),
)
def test_fake_quantize_gradient_is_straight_through(x, scale, zero_point, per_channel):
    """PyTorch's estimator (not the derivative, 0 almost everywhere): g where round(x/s) + zp was not clamped."""
    values = np.array(x, np.float32)
    g = np.arange(1, values.size + 1, dtype=np.float32)
    t = ow.tensor(values, requires_grad=True)
    if per_channel:
        scales = ow.tensor([scale] * values.size, dtype=ow.float32)
        points = ow.tensor([zero_point] * values.size, dtype=ow.int32)
        out = O.fake_quantize_per_channel_affine(t, scales, points, 0, 0, 15)
    else:
        out = O.fake_quantize_per_tensor_affine(t, scale, zero_point, 0, 15)
    out.backward(ow.tensor(g))
    inv = np.float32(1.0 / float(np.float32(scale)))  # as the forward: 1/scale rounded to float32
    q = np.rint(values * inv).astype(np.float64) + zero_point
    expected = np.where((q >= 0) & (q <= 15), g, np.float32(0))
    np.testing.assert_array_equal(t.grad.numpy(), expected)
