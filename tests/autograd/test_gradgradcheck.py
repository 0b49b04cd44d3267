"""Second derivatives (gradgradcheck, float64, CPU) for the elementwise, matmul, reduction and nn families.

Inputs are drawn with a seeded NumPy generator away from the functions' kinks and domain
edges; gradcheck itself compares with central finite differences.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import opweave.nn.functional as F
import pytest
from opweave.autograd import gradcheck, gradgradcheck


def make(*shape, low=-1.0, high=1.0, seed=0, positive=False):
    rng = np.random.default_rng(seed + sum(shape))
    values = rng.uniform(low, high, shape)
    if positive:
        values = np.abs(values) + 0.5
    return ow.tensor(values, dtype=ow.float64, requires_grad=True)


ELEMENTWISE = {
    "sin": (lambda x: ow.sin(x), {}),
    "exp": (lambda x: ow.exp(x), {}),
    "tanh": (lambda x: ow.tanh(x), {}),
    "sigmoid": (lambda x: ow.sigmoid(x), {}),
    "log": (lambda x: ow.log(x), {"positive": True}),
    "sqrt": (lambda x: ow.sqrt(x), {"positive": True}),
    "rsqrt": (lambda x: ow.rsqrt(x), {"positive": True}),
    "reciprocal": (lambda x: ow.reciprocal(x), {"positive": True}),
    "erf": (lambda x: ow.erf(x), {}),
    "atan": (lambda x: ow.atan(x), {}),
    "lgamma": (lambda x: ow.lgamma(x), {"positive": True}),
    "gelu": (lambda x: F.gelu(x), {}),
    "softplus": (lambda x: F.softplus(x), {}),
    "silu": (lambda x: F.silu(x), {}),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_elementwise_unary(name):
    fn, kw = ELEMENTWISE[name]
    x = make(2, 3, **kw)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: a * b,
        lambda a, b: a / b,
        lambda a, b: ow.pow(a, b),
        lambda a, b: ow.atan2(a, b),
        lambda a, b: ow.hypot(a, b),
        lambda a, b: ow.maximum(a, b),
    ],
    ids=["mul", "div", "pow", "atan2", "hypot", "maximum"],
)
def test_elementwise_binary_with_broadcasting(fn):
    a, b = make(2, 3, positive=True, seed=1), make(3, positive=True, seed=2)
    assert gradgradcheck(fn, (a, b))


def test_complex_elementwise():
    rng = np.random.default_rng(3)
    z = ow.tensor(rng.standard_normal(4) + 1j * rng.standard_normal(4), dtype=ow.complex128, requires_grad=True)
    for fn in (lambda t: t * t, ow.exp, ow.sin, lambda t: ow.abs(t), lambda t: t.conj() * t):
        assert gradcheck(fn, (z,))
    assert gradgradcheck(lambda t: ow.exp(t) * t, (z,))


@pytest.mark.parametrize(
    "fn, shapes",
    [
        (lambda a, b: a @ b, [(3, 4), (4, 2)]),
        (lambda a, b: ow.matmul(a, b), [(2, 3, 4), (4,)]),
        (lambda a, b: ow.bmm(a, b), [(2, 3, 4), (2, 4, 2)]),
        (lambda a, b: ow.mm(a.mT, b), [(4, 3), (4, 2)]),
        (lambda a, b, c: ow.linear(a, b, c), [(3, 4), (2, 4), (2,)]),
    ],
    ids=["matmul", "matmul-broadcast", "bmm", "mm-transposed", "linear"],
)
def test_matmul_family(fn, shapes):
    inputs = tuple(make(*s, seed=i) for i, s in enumerate(shapes))
    assert gradgradcheck(fn, inputs)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.sum(),
        lambda x: x.sum(dim=1, keepdim=True),
        lambda x: x.mean(dim=0),
        lambda x: x.prod(dim=1),
        lambda x: x.var(dim=1),
        lambda x: x.std(),
        lambda x: x.amax(dim=1),
        lambda x: ow.logsumexp(x, dim=1),
        lambda x: ow.norm(x),
        lambda x: ow.cumsum(x, dim=1),
        lambda x: ow.cumprod(x, dim=1),
    ],
    ids=["sum", "sum-dim", "mean", "prod", "var", "std", "amax", "logsumexp", "norm", "cumsum", "cumprod"],
)
def test_reductions(fn):
    x = make(3, 4, positive=True, seed=5)
    assert gradgradcheck(fn, (x,))


NN = {
    "softmax": (lambda x: F.softmax(x, dim=-1), [(2, 5)]),
    "log_softmax": (lambda x: F.log_softmax(x, dim=-1), [(2, 5)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, [4], w, b), [(3, 4), (4,), (4,)]),
    "conv2d": (lambda x, w: F.conv2d(x, w, padding=1), [(1, 2, 4, 4), (3, 2, 3, 3)]),
    "conv1d-stride-groups": (lambda x, w: F.conv1d(x, w, stride=2, groups=2), [(1, 4, 7), (2, 2, 3)]),
    "conv_transpose2d": (lambda x, w: F.conv_transpose2d(x, w, stride=2), [(1, 2, 3, 3), (2, 3, 2, 2)]),
    "max_pool2d": (lambda x: F.max_pool2d(x, 2), [(1, 2, 4, 4)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1), [(1, 1, 5, 5)]),
    "mse_loss": (lambda a, b: F.mse_loss(a, b), [(3, 4), (3, 4)]),
}


@pytest.mark.parametrize("name", sorted(NN))
def test_nn_functions(name):
    fn, shapes = NN[name]
    inputs = tuple(make(*s, seed=i) for i, s in enumerate(shapes))
    assert gradgradcheck(fn, inputs)


def test_cross_entropy_and_nll():
    x = make(3, 5, seed=7)
    target = ow.tensor([0, 4, 2])
    assert gradgradcheck(lambda t: F.cross_entropy(t, target), (x,))
    assert gradcheck(lambda t: F.nll_loss(F.log_softmax(t, dim=1), target), (x,))


def test_cholesky_through_a_symmetrizing_wrapper():
    a = make(3, 3, seed=9)

    def spd(m):
        return ow.linalg.cholesky(m @ m.mT + 3 * ow.eye(3, dtype=ow.float64))

    assert gradgradcheck(spd, (a,))


def test_eigh_through_a_symmetrizing_wrapper():
    a = make(3, 3, seed=10)

    def sym(m):
        return m + m.mT

    assert gradgradcheck(lambda m: ow.linalg.eigvalsh(sym(m)), (a,))
    assert gradcheck(lambda m: ow.linalg.eigh(sym(m))[1].pow(2), (a,))  # eigenvectors up to sign


def test_linalg_inverse_det_solve():
    a = make(3, 3, seed=11)
    b = make(3, 2, seed=12)
    shift = 3 * ow.eye(3, dtype=ow.float64)
    assert gradgradcheck(lambda m: ow.linalg.inv(m + shift), (a,))
    assert gradgradcheck(lambda m: ow.linalg.det(m + shift), (a,))
    assert gradgradcheck(lambda m, r: ow.linalg.solve(m + shift, r), (a, b))


def test_fft_family():
    x = make(2, 6, seed=13)
    assert gradcheck(lambda t: ow.real(ow.fft.fft(t)), (x,))
    assert gradgradcheck(lambda t: ow.abs(ow.fft.rfft(t)), (x,))
    assert gradcheck(lambda t: ow.fft.irfft(ow.fft.rfft(t) * 2), (x,))
