"""Forward results of the opweave.nn layers against NumPy formulas written here (small shapes, float64)."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import opweave
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave import nn

F64 = opweave.float64


def T(a, dtype=F64):
    return opweave.tensor(np.asarray(a), dtype=dtype)


def N(t):
    return t.detach().numpy()


def rng(seed=0):
    return np.random.default_rng(seed)


def close(got, expected, tol=1e-10):
    np.testing.assert_allclose(N(got), expected, rtol=tol, atol=tol)


seeds = st.integers(0, 2**32 - 1)


# -- affine layers -------------------------------------------------------------------------------


@settings(max_examples=10)
@given(seed=seeds, batch=st.sampled_from([(), (3,), (2, 3)]), bias=st.booleans())
def test_linear(seed, batch, bias):
    r = rng(seed)
    lin = nn.Linear(4, 5, bias=bias).double()
    x = r.standard_normal((*batch, 4))
    expected = x @ N(lin.weight).T + (N(lin.bias) if bias else 0)
    close(lin(T(x)), expected)
    assert (lin.bias is None) == (not bias)


def test_linear_transposed_input_and_dtype_device_kwargs():
    lin = nn.Linear(3, 2, dtype=F64)
    assert lin.weight.dtype == F64
    x = rng().standard_normal((3, 4))
    close(lin(T(x).t()), x.T @ N(lin.weight).T + N(lin.bias))


def test_bilinear_and_identity():
    r = rng(1)
    bil = nn.Bilinear(3, 4, 2).double()
    x1, x2 = r.standard_normal((5, 3)), r.standard_normal((5, 4))
    expected = np.einsum("ni,kij,nj->nk", x1, N(bil.weight), x2) + N(bil.bias)
    close(bil(T(x1), T(x2)), expected)
    x = T(x1)
    assert nn.Identity(1, k=2)(x) is x


# -- convolution -----------------------------------------------------------------------------------


def conv2d_ref(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (padding[0], padding[0]), (padding[1], padding[1])))
    oh = (x.shape[2] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (x.shape[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = x[
                    :,
                    g * cg : (g + 1) * cg,
                    i * stride[0] : i * stride[0] + dilation[0] * (kh - 1) + 1 : dilation[0],
                    j * stride[1] : j * stride[1] + dilation[1] * (kw - 1) + 1 : dilation[1],
                ]
                out[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return out + (b[None, :, None, None] if b is not None else 0)


@pytest.mark.parametrize(
    ("kw", "shape"),
    [
        ({}, (2, 4, 6, 5)),
        ({"stride": 2, "padding": 1}, (1, 4, 7, 7)),
        ({"dilation": 2, "groups": 2, "bias": False}, (2, 4, 7, 6)),
        ({"padding": (1, 2), "stride": (1, 2)}, (1, 4, 5, 6)),
    ],
)
def test_conv2d(kw, shape):
    conv = nn.Conv2d(4, 6, 3, **kw).double()
    x = rng(2).standard_normal(shape)
    expected = conv2d_ref(
        x,
        N(conv.weight),
        None if conv.bias is None else N(conv.bias),
        conv.stride,
        conv.padding,
        conv.dilation,
        conv.groups,
    )
    close(conv(T(x)), expected)


def test_conv2d_padding_same_and_modes():
    x = rng(3).standard_normal((1, 2, 5, 5))
    conv = nn.Conv2d(2, 3, 3, padding="same").double()
    close(conv(T(x)), conv2d_ref(x, N(conv.weight), N(conv.bias), (1, 1), (1, 1), (1, 1), 1))
    conv = nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect").double()
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="reflect")
    close(conv(T(x)), conv2d_ref(padded, N(conv.weight), N(conv.bias), (1, 1), (0, 0), (1, 1), 1))
    conv = nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular").double()
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), mode="wrap")
    close(conv(T(x)), conv2d_ref(padded, N(conv.weight), N(conv.bias), (1, 1), (0, 0), (1, 1), 1))
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(2, 3, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="strided convolutions"):
        nn.Conv2d(2, 2, 3, stride=2, padding="same")


def test_conv1d_and_conv3d_reduce_to_the_2d_reference():
    r = rng(4)
    conv = nn.Conv1d(3, 2, 3, stride=2, padding=1).double()
    x = r.standard_normal((2, 3, 7))
    expected = conv2d_ref(x[:, :, None], N(conv.weight)[:, :, None], N(conv.bias), (1, 2), (0, 1), (1, 1), 1)[:, :, 0]
    close(conv(T(x)), expected)
    conv = nn.Conv3d(2, 2, (1, 2, 2)).double()
    x = r.standard_normal((1, 2, 3, 4, 4))
    out = N(conv(T(x)))
    for d in range(3):
        ref = conv2d_ref(x[:, :, d], N(conv.weight)[:, :, 0], N(conv.bias), (1, 1), (0, 0), (1, 1), 1)
        np.testing.assert_allclose(out[:, :, d], ref, rtol=1e-10, atol=1e-10)


def conv_transpose2d_ref(x, w, b, stride, padding, output_padding):
    n, cin, h, wd = x.shape
    _, cout, kh, kw = w.shape
    full_h = (h - 1) * stride + kh + output_padding
    full_w = (wd - 1) * stride + kw + output_padding
    out = np.zeros((n, cout, full_h, full_w))
    for i in range(h):
        for j in range(wd):
            out[:, :, i * stride : i * stride + kh, j * stride : j * stride + kw] += np.einsum(
                "nc,cokl->nokl", x[:, :, i, j], w
            )
    out = out[:, :, padding : full_h - padding, padding : full_w - padding]
    return out + b[None, :, None, None]


def test_conv_transpose2d_and_output_size():
    conv = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1).double()
    x = rng(5).standard_normal((2, 3, 3, 4))
    expected = conv_transpose2d_ref(x, N(conv.weight), N(conv.bias), 2, 1, 1)
    close(conv(T(x)), expected)
    conv.output_padding = (0, 0)
    out = conv(T(x), output_size=[6, 8])
    assert tuple(out.shape) == (2, 2, 6, 8)
    close(out, expected)
    with pytest.raises(ValueError, match="requested an output size"):
        conv(T(x), output_size=[9, 9])
    t1 = nn.ConvTranspose1d(3, 2, 2).double()
    x1 = rng(6).standard_normal((1, 3, 4))
    ref = conv_transpose2d_ref(x1[:, :, None], N(t1.weight)[:, :, None], N(t1.bias), 1, 0, 0)
    close(t1(T(x1)), ref[:, :, 0])


# -- normalization ---------------------------------------------------------------------------------


def test_batchnorm_training_updates_running_stats_and_eval_uses_them():
    r = rng(7)
    bn = nn.BatchNorm2d(3, momentum=0.2).double()
    with opweave.no_grad():
        bn.weight.copy_(T([1.0, 2.0, 0.5]))
        bn.bias.copy_(T([0.0, 1.0, -1.0]))
    x = r.standard_normal((4, 3, 2, 2)) * 3 + 1
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    unbiased = x.var(axis=(0, 2, 3), ddof=1)
    expected = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    expected = expected * N(bn.weight)[None, :, None, None] + N(bn.bias)[None, :, None, None]
    close(bn(T(x)), expected, 1e-9)
    close(bn.running_mean, 0.8 * 0 + 0.2 * mean)
    close(bn.running_var, 0.8 * 1 + 0.2 * unbiased)
    assert int(bn.num_batches_tracked) == 1
    bn.eval()
    y = r.standard_normal((2, 3, 2, 2))
    rm, rv = 0.2 * mean, 0.8 + 0.2 * unbiased
    expected = (y - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5)
    expected = expected * N(bn.weight)[None, :, None, None] + N(bn.bias)[None, :, None, None]
    close(bn(T(y)), expected, 1e-9)
    assert int(bn.num_batches_tracked) == 1


def test_batchnorm_cumulative_average_and_no_running_stats():
    r = rng(8)
    bn = nn.BatchNorm1d(2, momentum=None).double()
    xs = [r.standard_normal((5, 2)) for _ in range(3)]
    for x in xs:
        bn(T(x))
    close(bn.running_mean, np.mean([x.mean(0) for x in xs], axis=0))
    bn = nn.BatchNorm1d(2, track_running_stats=False, affine=False).double().eval()
    assert bn.running_mean is None
    x = r.standard_normal((4, 2, 3))
    expected = (x - x.mean(axis=(0, 2), keepdims=True)) / np.sqrt(x.var(axis=(0, 2), keepdims=True) + 1e-5)
    close(bn(T(x)), expected, 1e-9)
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        bn(T(np.zeros((2, 2, 2, 2))))


def test_layernorm_groupnorm_rmsnorm_instancenorm():
    r = rng(9)
    x = r.standard_normal((2, 4, 3))
    ln = nn.LayerNorm([4, 3]).double()
    with opweave.no_grad():
        ln.weight.copy_(T(r.standard_normal((4, 3))))
    m = x.mean(axis=(1, 2), keepdims=True)
    v = x.var(axis=(1, 2), keepdims=True)
    close(ln(T(x)), (x - m) / np.sqrt(v + 1e-5) * N(ln.weight) + N(ln.bias), 1e-9)
    assert nn.LayerNorm(3, bias=False).bias is None

    gn = nn.GroupNorm(2, 4).double()
    g = x.reshape(2, 2, 6)
    expected = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    close(gn(T(x)), expected, 1e-9)
    with pytest.raises(ValueError, match="divisible by num_groups"):
        nn.GroupNorm(3, 4)

    rms = nn.RMSNorm(3, eps=1e-6).double()
    close(rms(T(x)), x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-6), 1e-9)

    inorm = nn.InstanceNorm1d(4).double()
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    close(inorm(T(x)), expected, 1e-9)
    close(inorm(T(x[0])), expected[0], 1e-9)


# -- embeddings ------------------------------------------------------------------------------------


def test_embedding_padding_idx_and_from_pretrained():
    emb = nn.Embedding(5, 3, padding_idx=-1).double()
    assert emb.padding_idx == 4
    idx = np.array([[0, 4], [2, 2]])
    close(emb(opweave.tensor(idx)), N(emb.weight)[idx])
    np.testing.assert_array_equal(N(emb.weight)[4], np.zeros(3))
    w = rng(10).standard_normal((4, 2))
    pre = nn.Embedding.from_pretrained(T(w))
    assert not pre.weight.requires_grad
    close(pre(opweave.tensor([3, 1])), w[[3, 1]])
    assert nn.Embedding.from_pretrained(T(w), freeze=False).weight.requires_grad
    with pytest.raises(ValueError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(3, 2, padding_idx=3)
    with pytest.raises(ValueError, match="2-dimensional"):
        nn.Embedding.from_pretrained(T([1.0]))
    assert repr(emb) == "Embedding(5, 3, padding_idx=4)"


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    bag = nn.EmbeddingBag(6, 2, mode=mode).double()
    w = N(bag.weight)
    inp = np.array([1, 2, 4, 5, 4, 3, 2])
    offsets = np.array([0, 3, 3])
    reduce = {"sum": np.sum, "mean": np.mean, "max": np.max}[mode]
    bags = [inp[0:3], inp[3:3], inp[3:]]
    expected = np.stack([reduce(w[b], axis=0) if len(b) else np.zeros(2) for b in bags])
    close(bag(opweave.tensor(inp), opweave.tensor(offsets)), expected)
    close(bag(opweave.tensor(inp[:6].reshape(2, 3))), np.stack([reduce(w[inp[:3]], 0), reduce(w[inp[3:6]], 0)]))


# -- activations -----------------------------------------------------------------------------------

x_act = np.array([[-3.0, -1.0, -0.25, 0.0], [0.3, 1.0, 2.5, 7.0]])
sig = 1 / (1 + np.exp(-x_act))
erf = np.vectorize(math.erf)
ACTIVATIONS = [
    (nn.ReLU(), np.maximum(x_act, 0)),
    (nn.ReLU6(), np.clip(x_act, 0, 6)),
    (nn.LeakyReLU(0.2), np.where(x_act > 0, x_act, 0.2 * x_act)),
    (nn.ELU(0.5), np.where(x_act > 0, x_act, 0.5 * (np.exp(x_act) - 1))),
    (nn.CELU(2.0), np.maximum(0, x_act) + np.minimum(0, 2.0 * (np.exp(x_act / 2.0) - 1))),
    (
        nn.SELU(),
        1.0507009873554804934193349852946
        * np.where(x_act > 0, x_act, 1.6732632423543772848170429916717 * (np.exp(x_act) - 1)),
    ),
    (nn.GELU(), x_act * 0.5 * (1 + erf(x_act / math.sqrt(2)))),
    (
        nn.GELU(approximate="tanh"),
        0.5 * x_act * (1 + np.tanh(math.sqrt(2 / math.pi) * (x_act + 0.044715 * x_act**3))),
    ),
    (nn.SiLU(), x_act * sig),
    (nn.Mish(), x_act * np.tanh(np.log1p(np.exp(x_act)))),
    (nn.Sigmoid(), sig),
    (nn.Tanh(), np.tanh(x_act)),
    (nn.Hardtanh(-2.0, 2.0), np.clip(x_act, -2, 2)),
    (nn.Hardsigmoid(), np.clip(x_act / 6 + 0.5, 0, 1)),
    (nn.Hardswish(), x_act * np.clip(x_act + 3, 0, 6) / 6),
    (nn.Hardshrink(0.5), np.where(np.abs(x_act) > 0.5, x_act, 0)),
    (nn.Softshrink(0.5), np.where(x_act > 0.5, x_act - 0.5, np.where(x_act < -0.5, x_act + 0.5, 0))),
    (nn.Tanhshrink(), x_act - np.tanh(x_act)),
    (nn.Softsign(), x_act / (1 + np.abs(x_act))),
    (nn.Softplus(beta=2.0, threshold=5.0), np.where(2 * x_act > 5, x_act, np.log1p(np.exp(2 * x_act)) / 2)),
    (nn.Threshold(0.5, -9.0), np.where(x_act > 0.5, x_act, -9.0)),
    (nn.LogSigmoid(), np.log(sig)),
    (nn.Softmax(dim=1), np.exp(x_act) / np.exp(x_act).sum(1, keepdims=True)),
    (nn.Softmin(dim=0), np.exp(-x_act) / np.exp(-x_act).sum(0, keepdims=True)),
    (nn.LogSoftmax(dim=1), x_act - np.log(np.exp(x_act).sum(1, keepdims=True))),
    (nn.GLU(dim=1), x_act[:, :2] * (1 / (1 + np.exp(-x_act[:, 2:])))),
    (nn.PReLU(), np.where(x_act > 0, x_act, 0.25 * x_act)),
]


@pytest.mark.parametrize(("module", "expected"), ACTIVATIONS, ids=[type(m).__name__ for m, _ in ACTIVATIONS])
def test_activation(module, expected):
    close(module.double()(T(x_act)), expected, 1e-9)


def test_inplace_activation_writes_its_input():
    x = T(x_act)
    out = nn.ReLU(inplace=True)(x)
    np.testing.assert_array_equal(N(x), np.maximum(x_act, 0))
    assert out.data_ptr() == x.data_ptr()
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"


def test_rrelu_eval_uses_mean_slope():
    m = nn.RReLU(0.1, 0.3).eval()
    close(m(T(x_act)), np.where(x_act >= 0, x_act, 0.2 * x_act), 1e-9)


# -- dropout ---------------------------------------------------------------------------------------


def test_dropout_training_and_eval():
    x = T(np.ones((200, 50)))
    drop = nn.Dropout(0.25)
    out = N(drop(x))
    kept = out != 0
    np.testing.assert_allclose(out[kept], 1 / 0.75)
    assert abs(kept.mean() - 0.75) < 0.03
    drop.eval()
    np.testing.assert_array_equal(N(drop(x)), np.ones((200, 50)))
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(1.5)
    out = N(nn.Dropout2d(0.5)(T(np.ones((4, 30, 3, 3)))))
    per_channel = out.reshape(4, 30, 9)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2.0).all(-1))
    np.testing.assert_array_equal(N(nn.AlphaDropout(0.5).eval()(T(x_act))), x_act)


# -- pooling, shape --------------------------------------------------------------------------------


def test_pooling():
    x = rng(11).standard_normal((2, 3, 4, 6))
    windows = x.reshape(2, 3, 2, 2, 3, 2)
    close(nn.MaxPool2d(2)(T(x)), windows.max(axis=(3, 5)))
    close(nn.AvgPool2d(2)(T(x)), windows.mean(axis=(3, 5)))
    out, idx = nn.MaxPool2d(2, return_indices=True)(T(x))
    flat = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, N(idx).reshape(2, 3, -1), -1), N(out).reshape(2, 3, -1))
    close(nn.AdaptiveAvgPool2d(1)(T(x)), x.mean(axis=(2, 3), keepdims=True))
    close(nn.AdaptiveMaxPool2d((2, 3))(T(x)), windows.max(axis=(3, 5)))
    close(nn.AdaptiveAvgPool1d(3)(T(x[:, :, 0])), x[:, :, 0].reshape(2, 3, 3, 2).mean(-1))
    close(nn.MaxPool1d(3, stride=3)(T(x[:, :, 0])), x[:, :, 0].reshape(2, 3, 2, 3).max(-1))
    close(nn.AvgPool3d(2)(T(x[:, :, None].repeat(2, 2))), windows.mean(axis=(3, 5))[:, :, None])
    close(nn.LPPool2d(2, 2)(T(x)), np.sqrt((windows**2).sum(axis=(3, 5))))


def test_flatten_unflatten_pixel_shuffle_upsample_padding():
    x = rng(12).standard_normal((2, 4, 2, 3))
    assert tuple(nn.Flatten()(T(x)).shape) == (2, 24)
    close(nn.Flatten(0, 1)(T(x)), x.reshape(8, 2, 3))
    close(nn.Unflatten(1, (2, 2))(T(x)), x.reshape(2, 2, 2, 2, 3))
    ps = nn.PixelShuffle(2)(T(x))
    expected = x.reshape(2, 1, 2, 2, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(2, 1, 4, 6)
    close(ps, expected)
    close(nn.PixelUnshuffle(2)(ps), x)
    close(nn.Upsample(scale_factor=2)(T(x)), x.repeat(2, axis=2).repeat(2, axis=3))
    close(nn.ZeroPad2d((1, 0, 2, 1))(T(x)), np.pad(x, ((0, 0), (0, 0), (2, 1), (1, 0))))
    close(nn.ReflectionPad1d(1)(T(x[0])), np.pad(x[0], ((0, 0), (0, 0), (1, 1)), mode="reflect"))
    close(nn.ConstantPad1d(2, 3.5)(T(x[0])), np.pad(x[0], ((0, 0), (0, 0), (2, 2)), constant_values=3.5))
    with pytest.raises(TypeError, match="tuple of ints"):
        nn.Unflatten(1, 4)


# -- containers ------------------------------------------------------------------------------------


def test_sequential_indexing_slicing_and_mutation():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)).double()
    x = rng(13).standard_normal((4, 2))
    h = np.maximum(x @ N(seq[0].weight).T + N(seq[0].bias), 0)
    close(seq(T(x)), h @ N(seq[-1].weight).T + N(seq[-1].bias))
    assert len(seq) == 3 and isinstance(seq[1], nn.ReLU)
    head = seq[:2]
    assert isinstance(head, nn.Sequential) and len(head) == 2 and head[0] is seq[0]
    seq.append(nn.Tanh())
    assert [n for n, _ in seq.named_children()] == ["0", "1", "2", "3"]
    del seq[1]
    assert [type(m).__name__ for m in seq] == ["Linear", "Linear", "Tanh"]
    assert [n for n, _ in seq.named_children()] == ["0", "1", "2"]
    seq.insert(0, nn.Identity())
    assert isinstance(seq[0], nn.Identity) and len(seq) == 4
    with pytest.raises(IndexError, match="out of range"):
        seq[10]
    named = nn.Sequential(OrderedDict([("a", nn.ReLU()), ("b", nn.Tanh())]))
    assert isinstance(named.a, nn.ReLU) and list(named.state_dict()) == []
    assert len(seq + named) == 6


def test_module_list_and_dict():
    layers = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(layers) == 3 and len(list(layers.parameters())) == 6
    layers.append(nn.ReLU())
    layers.extend([nn.Tanh()])
    layers.insert(1, nn.Identity())
    assert [type(m).__name__ for m in layers] == ["Linear", "Identity", "Linear", "Linear", "ReLU", "Tanh"]
    assert isinstance(layers[-1], nn.Tanh) and len(layers[1:3]) == 2
    del layers[0]
    assert [n for n, _ in layers.named_children()][0] == "0" and isinstance(layers[0], nn.Identity)
    with pytest.raises(TypeError, match="iterable"):
        layers.extend(nn.ReLU())
    d = nn.ModuleDict({"act": nn.ReLU(), "fc": nn.Linear(1, 1)})
    assert list(d.keys()) == ["act", "fc"] and "fc" in d and len(d) == 2
    d["new"] = nn.Tanh()
    assert [n for n, _ in d.named_parameters()] == ["fc.weight", "fc.bias"]
    assert isinstance(d.pop("act"), nn.ReLU) and "act" not in d


def test_parameter_list_and_dict():
    pl = nn.ParameterList([opweave.ones(2), nn.Parameter(opweave.zeros(3))])
    assert all(isinstance(p, nn.Parameter) for p in pl) and len(pl) == 2
    pl.append(opweave.ones(1))
    assert [n for n, _ in pl.named_parameters()] == ["0", "1", "2"]
    assert "Parameter containing: [opweave.float32 of size 3]" in repr(pl)
    pd = nn.ParameterDict({"b": opweave.ones(1), "a": opweave.zeros(1)})
    assert list(pd.keys()) == ["a", "b"] and isinstance(pd["a"], nn.Parameter)
    pd["c"] = nn.Parameter(opweave.ones(2))
    assert [n for n, _ in pd.named_parameters()] == ["a", "b", "c"]
    del pd["a"]
    assert "a" not in pd and len(pd) == 2


# -- losses ----------------------------------------------------------------------------------------


def test_losses():
    r = rng(14)
    x, y = r.standard_normal((4, 3)), r.standard_normal((4, 3))
    close(nn.MSELoss()(T(x), T(y)), ((x - y) ** 2).mean())
    close(nn.MSELoss(reduction="sum")(T(x), T(y)), ((x - y) ** 2).sum())
    close(nn.L1Loss(reduction="none")(T(x), T(y)), np.abs(x - y))
    d = np.abs(x - y)
    close(nn.HuberLoss(delta=0.5)(T(x), T(y)), np.where(d < 0.5, 0.5 * d**2, 0.5 * (d - 0.25)).mean())
    close(nn.SmoothL1Loss(beta=0.5)(T(x), T(y)), np.where(d < 0.5, 0.5 * d**2 / 0.5, d - 0.25).mean())
    target = np.array([0, 2, 1, 2])
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    close(nn.CrossEntropyLoss()(T(x), opweave.tensor(target)), -logp[np.arange(4), target].mean())
    w = np.array([1.0, 2.0, 0.5])
    nll = -logp[np.arange(4), target] * w[target]
    close(nn.NLLLoss(weight=T(w))(T(logp), opweave.tensor(target)), nll.sum() / w[target].sum())
    ce = nn.CrossEntropyLoss(ignore_index=2, label_smoothing=0.1)(T(x), opweave.tensor(target))
    keep = target != 2
    smooth = -(0.9 * logp[np.arange(4), target] + 0.1 / 3 * logp.sum(1))
    close(ce, smooth[keep].mean())
    p = 1 / (1 + np.exp(-x))
    t = r.uniform(0, 1, (4, 3))
    bce = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    close(nn.BCELoss()(T(p), T(t)), bce.mean(), 1e-9)
    close(nn.BCEWithLogitsLoss()(T(x), T(t)), bce.mean(), 1e-9)
    pw = np.array([2.0, 1.0, 0.5])
    bce_pw = -(pw * t * np.log(p) + (1 - t) * np.log(1 - p))
    close(nn.BCEWithLogitsLoss(pos_weight=T(pw))(T(x), T(t)), bce_pw.mean(), 1e-9)
    q = np.exp(logp)
    close(
        nn.KLDivLoss(reduction="batchmean")(T(logp), T(q[::-1].copy())), (q[::-1] * (np.log(q[::-1]) - logp)).sum() / 4
    )
    close(nn.SoftMarginLoss()(T(x), T(np.sign(y))), np.log1p(np.exp(-np.sign(y) * x)).mean())
    assert nn.MSELoss(size_average=False).reduction == "sum"
    assert nn.CrossEntropyLoss().state_dict() == {}


# -- recurrent layers ------------------------------------------------------------------------------


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def rnn_ref(module, x, h0, c0=None):
    """PyTorch's documented equations, layer by layer and direction by direction, on (L, N, H_in) input."""
    mode = type(module).__name__
    dirs = 2 if module.bidirectional else 1
    layer_in = x
    hn, cn = [], []
    for layer in range(module.num_layers):
        outs = []
        for d in range(dirs):
            sfx = "_reverse" if d else ""
            w_ih = N(getattr(module, f"weight_ih_l{layer}{sfx}"))
            w_hh = N(getattr(module, f"weight_hh_l{layer}{sfx}"))
            b_ih = N(getattr(module, f"bias_ih_l{layer}{sfx}")) if module.bias else 0
            b_hh = N(getattr(module, f"bias_hh_l{layer}{sfx}")) if module.bias else 0
            h = h0[layer * dirs + d]
            c = c0[layer * dirs + d] if c0 is not None else None
            steps = range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])
            out = [None] * x.shape[0]
            for t in steps:
                gi = layer_in[t] @ w_ih.T + b_ih
                gh = h @ w_hh.T + b_hh
                if mode == "LSTM":
                    i, f, g, o = np.split(gi + gh, 4, axis=-1)
                    c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
                    h = sigmoid(o) * np.tanh(c)
                elif mode == "GRU":
                    ir, iz, in_ = np.split(gi, 3, axis=-1)
                    hr, hz, hn_ = np.split(gh, 3, axis=-1)
                    rr, zz = sigmoid(ir + hr), sigmoid(iz + hz)
                    nn_ = np.tanh(in_ + rr * hn_)
                    h = (1 - zz) * nn_ + zz * h
                else:
                    h = np.tanh(gi + gh) if module.nonlinearity == "tanh" else np.maximum(gi + gh, 0)
                out[t] = h
            outs.append(np.stack(out))
            hn.append(h)
            cn.append(c)
        layer_in = np.concatenate(outs, -1)
    return layer_in, np.stack(hn), (np.stack(cn) if c0 is not None else None)


@pytest.mark.parametrize("cls", [nn.RNN, nn.LSTM, nn.GRU])
@pytest.mark.parametrize(("layers", "bidirectional", "batch_first"), [(1, False, False), (2, True, True)])
def test_recurrent_layers_match_the_documented_equations(cls, layers, bidirectional, batch_first):
    r = rng(15)
    m = cls(3, 4, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first).double()
    dirs = 2 if bidirectional else 1
    x = r.standard_normal((5, 2, 3))
    h0 = r.standard_normal((layers * dirs, 2, 4))
    c0 = r.standard_normal((layers * dirs, 2, 4)) if cls is nn.LSTM else None
    inp = T(x.transpose(1, 0, 2) if batch_first else x)
    hx = (T(h0), T(c0)) if cls is nn.LSTM else T(h0)
    out, state = m(inp, hx)
    exp_out, exp_h, exp_c = rnn_ref(m, x, h0, c0)
    close(out, exp_out.transpose(1, 0, 2) if batch_first else exp_out)
    if cls is nn.LSTM:
        close(state[0], exp_h)
        close(state[1], exp_c)
    else:
        close(state, exp_h)


def test_recurrent_defaults_unbatched_and_errors():
    m = nn.GRU(2, 3, bias=False).double()
    x = rng(16).standard_normal((4, 2))
    out, h = m(T(x))
    exp_out, exp_h, _ = rnn_ref(m, x[:, None], np.zeros((1, 1, 3)))
    close(out, exp_out[:, 0])
    close(h, exp_h[:, 0])
    relu = nn.RNN(2, 3, nonlinearity="relu").double()
    exp_out, _, _ = rnn_ref(relu, x[:, None], np.zeros((1, 1, 3)))
    close(relu(T(x[:, None]))[0], exp_out)
    assert [n for n, _ in nn.LSTM(2, 3, bidirectional=True).named_parameters()][4] == "weight_ih_l0_reverse"
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        m(T(np.zeros((3, 1, 5))))
    with pytest.raises(ValueError, match="Unknown nonlinearity"):
        nn.RNN(2, 3, nonlinearity="gelu")
    with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
        nn.GRU(2, 3, proj_size=1)


def test_lstm_projection():
    m = nn.LSTM(2, 4, proj_size=2).double()
    assert tuple(m.weight_hh_l0.shape) == (16, 2) and tuple(m.weight_hr_l0.shape) == (2, 4)
    x = rng(17).standard_normal((3, 1, 2))
    out, (h, c) = m(T(x))
    hh, cc = np.zeros((1, 2)), np.zeros((1, 4))
    w_ih, w_hh, w_hr = N(m.weight_ih_l0), N(m.weight_hh_l0), N(m.weight_hr_l0)
    b = N(m.bias_ih_l0) + N(m.bias_hh_l0)
    for t in range(3):
        i, f, g, o = np.split(x[t] @ w_ih.T + hh @ w_hh.T + b, 4, -1)
        cc = sigmoid(f) * cc + sigmoid(i) * np.tanh(g)
        hh = (sigmoid(o) * np.tanh(cc)) @ w_hr.T
    close(out[-1], hh)
    close(c[0], cc)


def test_cells():
    r = rng(18)
    x, h, c = r.standard_normal((2, 3)), r.standard_normal((2, 4)), r.standard_normal((2, 4))
    cell = nn.LSTMCell(3, 4).double()
    gates = x @ N(cell.weight_ih).T + N(cell.bias_ih) + h @ N(cell.weight_hh).T + N(cell.bias_hh)
    i, f, g, o = np.split(gates, 4, -1)
    c2 = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    h2, c2_got = cell(T(x), (T(h), T(c)))
    close(c2_got, c2)
    close(h2, sigmoid(o) * np.tanh(c2))
    gru = nn.GRUCell(3, 4).double()
    gi = x @ N(gru.weight_ih).T + N(gru.bias_ih)
    gh = h @ N(gru.weight_hh).T + N(gru.bias_hh)
    rr = sigmoid(gi[:, :4] + gh[:, :4])
    zz = sigmoid(gi[:, 4:8] + gh[:, 4:8])
    nn_ = np.tanh(gi[:, 8:] + rr * gh[:, 8:])
    close(gru(T(x), T(h)), (1 - zz) * nn_ + zz * h)
    rc = nn.RNNCell(3, 4).double()
    close(rc(T(x[0])), np.tanh(x[0] @ N(rc.weight_ih).T + N(rc.bias_ih) + N(rc.bias_hh)))


# -- attention and transformers --------------------------------------------------------------------


def mha_ref(m, q, k, v, mask=None):
    e, heads = m.embed_dim, m.num_heads
    hd = e // heads
    w, b = N(m.in_proj_weight), N(m.in_proj_bias)
    qp = q @ w[:e].T + b[:e]
    kp = k @ w[e : 2 * e].T + b[e : 2 * e]
    vp = v @ w[2 * e :].T + b[2 * e :]
    L, n, _ = q.shape
    S = k.shape[0]
    qh = qp.reshape(L, n * heads, hd).transpose(1, 0, 2)
    kh = kp.reshape(S, n * heads, hd).transpose(1, 0, 2)
    vh = vp.reshape(S, n * heads, hd).transpose(1, 0, 2)
    scores = qh @ kh.transpose(0, 2, 1) / math.sqrt(hd)
    if mask is not None:
        scores = scores + mask
    attn = np.exp(scores - scores.max(-1, keepdims=True))
    attn /= attn.sum(-1, keepdims=True)
    out = (attn @ vh).transpose(1, 0, 2).reshape(L, n, e)
    out = out @ N(m.out_proj.weight).T + N(m.out_proj.bias)
    return out, attn.reshape(n, heads, L, S).mean(1)


def test_multihead_attention():
    r = rng(19)
    m = nn.MultiheadAttention(8, 2).double()
    with opweave.no_grad():
        m.in_proj_bias.copy_(T(r.standard_normal(24)))
    q, k = r.standard_normal((3, 2, 8)), r.standard_normal((5, 2, 8))
    mask = np.triu(np.full((3, 5), -np.inf), 3)
    out, weights = m(T(q), T(k), T(k), attn_mask=T(mask))
    exp_out, exp_w = mha_ref(m, q, k, k, mask)
    close(out, exp_out, 1e-9)
    close(weights, exp_w, 1e-9)
    bf = nn.MultiheadAttention(8, 2, batch_first=True).double()
    bf.load_state_dict(m.state_dict())
    out_bf, _ = bf(T(q.transpose(1, 0, 2)), T(k.transpose(1, 0, 2)), T(k.transpose(1, 0, 2)), need_weights=False)
    close(out_bf, mha_ref(m, q, k, k)[0].transpose(1, 0, 2), 1e-9)
    with pytest.raises(ValueError, match="divisible by num_heads"):
        nn.MultiheadAttention(6, 4)


def layer_norm_ref(x, ln):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + ln.eps) * N(ln.weight) + N(ln.bias)


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_encoder_layer_eval(norm_first):
    r = rng(20)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, norm_first=norm_first).double().eval()
    x = r.standard_normal((4, 2, 8))

    def sa(z):
        return mha_ref(layer.self_attn, z, z, z)[0]

    def ff(z):
        h = np.maximum(z @ N(layer.linear1.weight).T + N(layer.linear1.bias), 0)
        return h @ N(layer.linear2.weight).T + N(layer.linear2.bias)

    if norm_first:
        y = x + sa(layer_norm_ref(x, layer.norm1))
        y = y + ff(layer_norm_ref(y, layer.norm2))
    else:
        y = layer_norm_ref(x + sa(x), layer.norm1)
        y = layer_norm_ref(y + ff(y), layer.norm2)
    close(layer(T(x)), y, 1e-9)


def test_transformer_stacks():
    enc_layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
    enc = nn.TransformerEncoder(enc_layer, num_layers=2)
    assert len(enc.layers) == 2 and enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    np.testing.assert_array_equal(N(enc.layers[0].linear1.weight), N(enc.layers[1].linear1.weight))
    x = T(rng(21).standard_normal((3, 2, 8)), opweave.float32)
    close(enc(x), N(enc.layers[1](enc.layers[0](x))), 1e-6)
    model = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)
    out = model(x, T(rng(22).standard_normal((4, 2, 8)), opweave.float32))
    assert tuple(out.shape) == (4, 2, 8)
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(N(mask), np.triu(np.full((3, 3), -np.inf), 1))
    dec = nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    assert tuple(dec(x.transpose(0, 1), x.transpose(0, 1), tgt_mask=mask).shape) == (2, 3, 8)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        nn.TransformerEncoderLayer(8, 2, activation="swish")
