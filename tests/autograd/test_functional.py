"""``opweave.autograd.functional`` against analytic NumPy Jacobians/Hessians and central differences.

Oracles are written here: closed-form derivatives of x ↦ sin(x)·x², A·x, softmax, logsumexp and
a one-hidden-layer tanh MLP, plus float64 central finite differences of NumPy versions of the
same functions. Return structures and errors follow ``torch.autograd.functional``'s documentation.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import opweave.nn.functional as NF
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave.autograd import functional as AF

RTOL, ATOL = 1e-10, 1e-10  # float64, a handful of rounding steps per entry


def t64(a) -> ow.Tensor:
    return ow.tensor(np.asarray(a, dtype=np.float64), dtype=ow.float64)


def close(actual: ow.Tensor, expected, rtol: float = RTOL, atol: float = ATOL) -> None:
    assert isinstance(actual, ow.Tensor)
    expected = np.asarray(expected, dtype=np.float64)
    assert tuple(actual.shape) == expected.shape
    np.testing.assert_allclose(actual.numpy(), expected, rtol=rtol, atol=atol)


def values(shape):
    return hnp.arrays(np.float64, shape, elements=st.floats(-2.0, 2.0, allow_nan=False, allow_subnormal=False))


SHAPES = st.sampled_from([(), (1,), (4,), (2, 3)])


# ----------------------------------------------------------------------------- oracles


def sinx2(x):
    return ow.sin(x) * x * x


def d_sinx2(x: np.ndarray) -> np.ndarray:
    return np.cos(x) * x**2 + 2 * x * np.sin(x)


def dd_sinx2(x: np.ndarray) -> np.ndarray:
    return -np.sin(x) * x**2 + 4 * x * np.cos(x) + 2 * np.sin(x)


def ddd_sinx2(x: np.ndarray) -> np.ndarray:
    return -np.cos(x) * x**2 - 6 * x * np.sin(x) + 6 * np.cos(x)


def np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def np_mlp(w1: np.ndarray, b1: np.ndarray, w2: np.ndarray, x: np.ndarray) -> float:
    return float(w2 @ np.tanh(w1 @ x + b1))


def mlp(w1, b1, w2, x):
    return (w2 * ow.tanh(w1 @ x + b1)).sum()


def central_jacobian(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """∂f/∂x by central differences: shape f(x).shape + x.shape."""
    y0 = np.asarray(f(x))
    jac = np.zeros(y0.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        e = np.zeros_like(x)
        e[idx] = eps
        jac[(...,) + idx] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps)
    return jac


# ----------------------------------------------------------------------------- elementwise: all six functions


@given(data=st.data(), shape=SHAPES)
def test_elementwise_products_and_matrices(data, shape):
    x = data.draw(values(shape))
    v = data.draw(values(shape))
    n = x.size
    jac = np.diag(d_sinx2(x).reshape(-1)).reshape(shape + shape)
    out, res = AF.vjp(sinx2, t64(x), t64(v))
    close(out, np.sin(x) * x**2)
    close(res, v * d_sinx2(x))
    out, res = AF.jvp(sinx2, t64(x), t64(v))
    close(out, np.sin(x) * x**2)
    close(res, v * d_sinx2(x))
    close(AF.jacobian(sinx2, t64(x)), jac)

    def total(x):
        return sinx2(x).sum()

    close(AF.hessian(total, t64(x)), np.diag(dd_sinx2(x).reshape(-1)).reshape(shape + shape))
    for fn in (AF.hvp, AF.vhp):
        out, res = fn(total, t64(x), t64(v))
        close(out, (np.sin(x) * x**2).sum())
        close(res, v * dd_sinx2(x))
    assert n == 0 or out.ndim == 0


@given(x=values(()))
def test_scalar_input_v_defaults_to_one(x):
    # v may be omitted for a single one-element input (jvp, hvp, vhp) or output (vjp)
    close(AF.jvp(sinx2, t64(x))[1], d_sinx2(x))
    close(AF.vjp(sinx2, t64(x))[1], d_sinx2(x))
    close(AF.hvp(sinx2, t64(x))[1], dd_sinx2(x))
    close(AF.vhp(sinx2, t64(x))[1], dd_sinx2(x))


# ----------------------------------------------------------------------------- A·x: tuple inputs


@given(data=st.data(), m=st.integers(1, 3), n=st.integers(1, 3))
def test_matvec_jacobian_over_a_tuple_of_inputs(data, m, n):
    a, x = data.draw(values((m, n))), data.draw(values((n,)))
    va, vx, u = data.draw(values((m, n))), data.draw(values((n,))), data.draw(values((m,)))
    jac_a = np.einsum("ij,k->ijk", np.eye(m), x)  # ∂(Ax)_i/∂A_jk = δ_ij x_k
    ja, jx = AF.jacobian(lambda a, x: a @ x, (t64(a), t64(x)))
    close(ja, jac_a)
    close(jx, a)
    out, (ga, gx) = AF.vjp(lambda a, x: a @ x, (t64(a), t64(x)), t64(u))
    close(out, a @ x)
    close(ga, np.outer(u, x))
    close(gx, a.T @ u)
    out, res = AF.jvp(lambda a, x: a @ x, (t64(a), t64(x)), (t64(va), t64(vx)))
    close(res, va @ x + a @ vx)  # product rule: d(Ax) = dA·x + A·dx


@given(data=st.data(), n=st.integers(1, 4))
def test_bilinear_hessian_blocks(data, n):
    # f(A, x) = xᵀAx: H_xx = A + Aᵀ, H_xA[k, i, j] = δ_ki x_j + x_i δ_kj, H_AA = 0
    a, x = data.draw(values((n, n))), data.draw(values((n,)))
    (haa, hax), (hxa, hxx) = AF.hessian(lambda a, x: x @ (a @ x), (t64(a), t64(x)))
    eye = np.eye(n)
    h_xa = np.einsum("ki,j->kij", eye, x) + np.einsum("i,kj->kij", x, eye)
    close(hxx, a + a.T)
    close(hxa, h_xa)
    close(hax, np.moveaxis(h_xa, 0, -1))
    close(haa, np.zeros((n, n, n, n)))


# ----------------------------------------------------------------------------- softmax, logsumexp, MLP


@given(data=st.data(), n=st.integers(1, 5))
def test_softmax_jacobian_and_jvp(data, n):
    x, v = data.draw(values((n,))), data.draw(values((n,)))
    s = np_softmax(x)
    jac = np.diag(s) - np.outer(s, s)

    def softmax(x):
        return NF.softmax(x, dim=0)

    close(AF.jacobian(softmax, t64(x)), jac, atol=1e-12)
    close(AF.jvp(softmax, t64(x), t64(v))[1], jac @ v, atol=1e-12)
    close(AF.vjp(softmax, t64(x), t64(v))[1], v @ jac, atol=1e-12)
    close(AF.jacobian(softmax, t64(x)), central_jacobian(np_softmax, x), rtol=1e-6, atol=1e-8)


@given(data=st.data(), n=st.integers(1, 5))
def test_logsumexp_hessian_and_hvp(data, n):
    x, v = data.draw(values((n,))), data.draw(values((n,)))
    s = np_softmax(x)
    hess = np.diag(s) - np.outer(s, s)

    def lse(x):
        return ow.logsumexp(x, dim=0)

    close(AF.jacobian(lse, t64(x)), s, atol=1e-12)
    close(AF.hessian(lse, t64(x)), hess, atol=1e-12)
    close(AF.hvp(lse, t64(x), t64(v))[1], hess @ v, atol=1e-12)
    close(AF.vhp(lse, t64(x), t64(v))[1], v @ hess, atol=1e-12)
    close(AF.hessian(lse, t64(x)), central_jacobian(np_softmax, x), rtol=1e-6, atol=1e-8)


def _mlp_params(seed: int, hidden: int = 4, n: int = 3):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in ((hidden, n), (hidden,), (hidden,), (n,))]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mlp_gradient_hessian_and_finite_differences(seed):
    w1, b1, w2, x = _mlp_params(seed)
    h = np.tanh(w1 @ x + b1)
    dh = 1 - h**2
    grad_x = w1.T @ (w2 * dh)
    hess_x = w1.T @ np.diag(w2 * (-2 * h * dh)) @ w1
    args = tuple(t64(p) for p in (w1, b1, w2, x))

    out, (gw1, gb1, gw2, gx) = AF.vjp(mlp, args)  # scalar output: v defaults to 1
    close(out, np_mlp(w1, b1, w2, x))
    close(gx, grad_x)
    close(gw1, np.outer(w2 * dh, x))
    close(gb1, w2 * dh)
    close(gw2, h)

    hessian = AF.hessian(lambda x: mlp(*args[:3], x), args[3])
    close(hessian, hess_x)
    v = np.linspace(-1.0, 1.0, x.size)
    close(AF.hvp(lambda x: mlp(*args[:3], x), args[3], t64(v))[1], hess_x @ v)

    # second oracle: central differences of the NumPy model's analytic gradient and of the model itself
    def np_grad_x(x):
        hx = np.tanh(w1 @ x + b1)
        return w1.T @ (w2 * (1 - hx**2))

    close(hessian, central_jacobian(np_grad_x, x), rtol=1e-6, atol=1e-8)
    jac_w1 = AF.jacobian(lambda w: mlp(w, *args[1:]), args[0])
    close(jac_w1, central_jacobian(lambda w: np_mlp(w, b1, w2, x), w1), rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- return structures


def test_return_structures_follow_pytorch():
    x, y = t64([0.5, -1.0, 2.0]), t64([[1.0, 2.0], [3.0, 4.0]])

    def one_to_two(x):
        return sinx2(x), x.sum()

    def two_to_one(x, y):
        return x.sum() * y

    def two_to_two(x, y):
        return x * 2, y.sum()

    jac = AF.jacobian(sinx2, x)
    assert isinstance(jac, ow.Tensor) and tuple(jac.shape) == (3, 3)
    jac = AF.jacobian(one_to_two, x)
    assert isinstance(jac, tuple) and [tuple(j.shape) for j in jac] == [(3, 3), (3,)]
    jac = AF.jacobian(two_to_one, (x, y))
    assert isinstance(jac, tuple) and [tuple(j.shape) for j in jac] == [(2, 2, 3), (2, 2, 2, 2)]
    jac = AF.jacobian(two_to_two, (x, y))
    assert [[tuple(j.shape) for j in row] for row in jac] == [[(3, 3), (3, 2, 2)], [(3,), (2, 2)]]
    # a 1-tuple stays a tuple
    jac = AF.jacobian(lambda x: (sinx2(x),), (x,))
    assert isinstance(jac, tuple) and len(jac) == 1 and isinstance(jac[0], tuple) and len(jac[0]) == 1

    hess = AF.hessian(lambda x, y: (x.sum() * y).sum(), (x, y))
    assert [[tuple(h.shape) for h in row] for row in hess] == [[(3, 3), (3, 2, 2)], [(2, 2, 3), (2, 2, 2, 2)]]
    close(hess[0][1], np.ones((3, 2, 2)))
    close(hess[0][0], np.zeros((3, 3)))

    out, res = AF.vjp(one_to_two, x, (ow.ones(3, dtype=ow.float64), t64(1.0)))
    assert isinstance(out, tuple) and isinstance(res, ow.Tensor)
    close(res, d_sinx2(x.numpy()) + 1.0)
    out, res = AF.jvp(one_to_two, x, t64([1.0, 0.0, 0.0]))
    assert isinstance(out, tuple) and isinstance(res, tuple) and len(res) == 2
    close(res[1], 1.0)
    out, res = AF.jvp(two_to_one, (x, y), (t64([1.0, 0.0, 0.0]), ow.zeros(2, 2, dtype=ow.float64)))
    assert isinstance(out, ow.Tensor) and isinstance(res, ow.Tensor)
    close(res, y.numpy())
    out, res = AF.vhp(lambda x, y: (x.sum() * y).sum(), (x, y), (ow.ones(3, dtype=ow.float64), t64(np.eye(2))))
    assert isinstance(res, tuple) and len(res) == 2
    close(res[0], np.full(3, 2.0))  # H_xy · I: each x_i pairs with every y entry
    close(res[1], np.full((2, 2), 3.0))


def test_results_are_detached_and_inputs_untouched_without_create_graph():
    x = t64([0.5, -1.0])
    w = ow.tensor([1.0, 2.0], dtype=ow.float64, requires_grad=True)
    for out, res in (AF.vjp(sinx2, x, x), AF.jvp(sinx2, x, x), AF.hvp(lambda x: sinx2(x).sum(), x, x)):
        assert not out.requires_grad and not res.requires_grad
    assert not AF.jacobian(sinx2, x).requires_grad
    assert not x.requires_grad and x.grad is None
    # a closure-captured tensor that requires grad still does not leak a graph, nor get a .grad
    assert not AF.jacobian(lambda x: x * w, x).requires_grad
    assert w.grad is None


@given(data=st.data(), m=st.integers(2, 3), n=st.integers(2, 3))
def test_transposed_inputs_and_float32(data, m, n):
    # a non-contiguous (transposed) input: the Jacobian of X ↦ sin(X)·X² still has X's (logical) layout
    x = data.draw(values((n, m)))
    xt = t64(x).t()
    assert not xt.is_contiguous()
    close(AF.jacobian(sinx2, xt), np.diag(d_sinx2(x.T).reshape(-1)).reshape((m, n, m, n)))
    # float32 in, float32 out; tolerances of float32 arithmetic
    x32 = ow.tensor(x.astype(np.float32))
    out, res = AF.jvp(sinx2, x32, ow.ones_like(x32))
    assert out.dtype == ow.float32 and res.dtype == ow.float32
    np.testing.assert_allclose(res.numpy(), d_sinx2(x.astype(np.float32).astype(np.float64)), rtol=1e-5, atol=1e-5)


def test_empty_outputs_and_inputs():
    x = t64([1.0, 2.0])
    jac = AF.jacobian(lambda x: x[:0] * 2, x)
    assert tuple(jac.shape) == (0, 2)
    e = ow.zeros(0, dtype=ow.float64)
    assert tuple(AF.jacobian(lambda e: e * 2, e).shape) == (0, 0)
    out, res = AF.jvp(lambda e: e * 2, e, e)
    assert tuple(res.shape) == (0,)


# ----------------------------------------------------------------------------- create_graph


@given(data=st.data(), shape=st.sampled_from([(), (3,)]))
def test_create_graph_results_differentiate_again(data, shape):
    x, v = data.draw(values(shape)), data.draw(values(shape))
    xt = t64(x).requires_grad_()
    _, res = AF.jvp(sinx2, xt, t64(v), create_graph=True)
    assert res.requires_grad
    (g,) = ow.autograd.grad(res.sum(), xt)
    close(g, v * dd_sinx2(x))  # d/dx Σ v·f'(x) = v·f''(x)

    jac = AF.jacobian(sinx2, xt, create_graph=True)
    assert jac.requires_grad
    (g,) = ow.autograd.grad(jac.sum(), xt)
    close(g, dd_sinx2(x))

    _, res = AF.hvp(lambda x: sinx2(x).sum(), xt, t64(v), create_graph=True)
    (g,) = ow.autograd.grad(res.sum(), xt)
    close(g, v * ddd_sinx2(x))

    hess = AF.hessian(lambda x: sinx2(x).sum(), xt, create_graph=True)
    (g,) = ow.autograd.grad(hess.sum(), xt)
    close(g, ddd_sinx2(x))

    _, res = AF.vjp(sinx2, xt, t64(v), create_graph=True)
    (g,) = ow.autograd.grad(res.sum(), xt)
    close(g, v * dd_sinx2(x))


def test_create_graph_reaches_v():
    # with create_graph, a v that requires grad stays in the graph: ∂(J·v)/∂v = Jᵀ·1
    x = t64([0.3, -0.8])
    v = ow.tensor([1.0, 2.0], dtype=ow.float64, requires_grad=True)
    _, res = AF.jvp(sinx2, x, v, create_graph=True)
    (g,) = ow.autograd.grad(res.sum(), v)
    close(g, d_sinx2(x.numpy()))


# ----------------------------------------------------------------------------- strict and errors


def test_strict_errors_word_for_word():
    x, y = t64([1.0, 2.0]), t64([3.0, 4.0])

    def ignores_y(x, y):
        return x * 2

    with pytest.raises(RuntimeError, match=r"^The output of the user-provided function is independent of input 1\. "):
        AF.vjp(ignores_y, (x, y), x, strict=True)
    zeros = AF.vjp(ignores_y, (x, y), x)[1][1]
    close(zeros, [0.0, 0.0])
    with pytest.raises(RuntimeError, match=r"^Output 0 of the user-provided function is independent of input 1\. "):
        AF.jacobian(ignores_y, (x, y), strict=True)
    close(AF.jacobian(ignores_y, (x, y))[1], np.zeros((2, 2)))
    with pytest.raises(RuntimeError, match=r"^The output of the user-provided function is independent of input 1\. "):
        AF.jvp(ignores_y, (x, y), (x, y), strict=True)
    close(AF.jvp(ignores_y, (x, y), (x, y))[1], 2 * x.numpy())
    with pytest.raises(RuntimeError, match=r"^Output 0 of the user-provided function does not require gradients\."):
        AF.jacobian(lambda x: ow.ones(2, dtype=ow.float64), x, strict=True)
    close(AF.jacobian(lambda x: ow.ones(2, dtype=ow.float64), x), np.zeros((2, 2)))
    with pytest.raises(RuntimeError, match=r"^While computing the hessian, found that the jacobian"):
        AF.hessian(lambda x: (x * 3).sum(), x, strict=True)
    close(AF.hessian(lambda x: (x * 3).sum(), x), np.zeros((2, 2)))
    with pytest.raises(RuntimeError, match=r"independent of input 0\. This is not allowed in strict mode when create"):
        AF.vjp(lambda x: x * 2, x, x, create_graph=True, strict=True)
    with pytest.raises(RuntimeError, match=r"^While computing the hessian, found that the jacobian"):
        AF.hvp(lambda x: (x * 3).sum(), x, x, strict=True)
    close(AF.hvp(lambda x: (x * 3).sum(), x, x)[1], [0.0, 0.0])
    with pytest.raises(RuntimeError, match=r"^The hessian of the user-provided function is independent of input 0\. "):
        AF.hvp(lambda x: (x * x).sum(), x, x, create_graph=True, strict=True)
    assert not x.requires_grad and not y.requires_grad  # failing calls leave the inputs as they were


def test_strict_hvp_checks_the_jacobian_as_pytorch_does():
    # PyTorch's hvp passes the gradient ``jac`` to its strict check twice ("jacobian", then "hessian"):
    # a linear func raises the jacobian error; a func with a constant Hessian (x·x) passes strict mode.
    x, v = t64([1.0, -2.0, 0.5]), t64([0.25, 3.0, -1.0])
    with pytest.raises(
        RuntimeError,
        match=r"^While computing the hessian, found that the jacobian of the user-provided "
        r"function with respect to input 0 is independent of the input\.",
    ):
        AF.hvp(lambda x: (x * 3).sum(), x, v, strict=True)
    w = t64([2.0, 0.0, 1.0])
    with pytest.raises(RuntimeError, match=r"with respect to input 1 is independent of the input\."):
        AF.hvp(lambda x, w: (x * x).sum() + (w * 4).sum(), (x, w), (v, v), strict=True)
    out, hv = AF.hvp(lambda x: (x * x).sum(), x, v, strict=True)
    close(out, np.sum(x.numpy() ** 2))
    close(hv, 2 * v.numpy())  # H = 2I
    out, hv = AF.hvp(lambda x: (x**3).sum(), x, v, strict=True)
    close(hv, 6 * x.numpy() * v.numpy())  # H = diag(6x)


def test_argument_errors():
    x = t64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns"):
        AF.vjp(sinx2, x)
    for fn in (AF.jvp, AF.hvp, AF.vhp):
        with pytest.raises(RuntimeError, match="The vector v can only be None if the input to"):
            fn(lambda x: sinx2(x).sum(), x)
    with pytest.raises(RuntimeError, match=r"v has invalid size: should be opweave.Size\(\[2\]\) but got"):
        AF.jvp(sinx2, x, t64([1.0, 2.0, 3.0]))
    with pytest.raises(RuntimeError, match=r"Entry 1 in v has invalid size"):
        AF.jvp(lambda a, b: a * b, (x, x), (x, t64([1.0])))
    with pytest.raises(RuntimeError, match=r"v is a tuple of invalid length: should be 2 but got 1\."):
        AF.jvp(lambda a, b: a * b, (x, x), (x,))
    with pytest.raises(RuntimeError, match=r"The given v should contain a single Tensor\."):
        AF.vjp(sinx2, x, (x, x))
    with pytest.raises(TypeError, match=r"The inputs given to jacobian must be either a Tensor or a tuple of Tensors"):
        AF.jacobian(sinx2, [x])
    with pytest.raises(TypeError, match=r"value at index 1 has type"):
        AF.vjp(lambda a, b: a, (x, 2.0), x)
    with pytest.raises(TypeError, match=r"The outputs of the user-provided function given to jvp must be"):
        AF.jvp(lambda x: 1.0, x, x)
    with pytest.raises(RuntimeError, match="The function given to hessian should return a single Tensor"):
        AF.hessian(lambda x: (x.sum(), x.sum()), x)
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hvp should contain a single"):
        AF.hvp(sinx2, x, x)
    with pytest.raises(NotImplementedError, match='strategy="forward-mode"'):
        AF.jacobian(sinx2, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="vectorize=True"):
        AF.jacobian(sinx2, x, vectorize=True)
    with pytest.raises(NotImplementedError, match='outer_jacobian_strategy="forward-mode"'):
        AF.hessian(lambda x: x.sum(), x, outer_jacobian_strategy="forward-mode")
    with pytest.raises(ValueError, match="Expected strategy to be either"):
        AF.jacobian(sinx2, x, strategy="sideways")


def test_grad_mode_is_restored_and_no_grad_is_respected():
    x = t64([0.5, 1.5])
    with ow.no_grad():
        _, res = AF.jvp(sinx2, x, x)
        assert not ow.is_grad_enabled()
    close(res, x.numpy() * d_sinx2(x.numpy()))
    assert ow.is_grad_enabled()


# ----------------------------------------------------------------------------- another backend, no backend code


def test_jvp_on_the_vendor_device():
    try:
        x = ow.tensor([0.5, -1.0, 2.0], dtype=ow.float32).to("vnpu")
    except (RuntimeError, NotImplementedError) as exc:  # the vendor example is not installed here
        pytest.skip(f"vnpu unavailable: {exc}")
    v = ow.tensor([1.0, 2.0, -1.0], dtype=ow.float32).to("vnpu")
    out, res = AF.jvp(sinx2, x, v)
    assert res.device.type == "vnpu"
    xn = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(res.cpu().numpy(), np.array([1.0, 2.0, -1.0]) * d_sinx2(xn), rtol=1e-5, atol=1e-6)
    hess = AF.hessian(lambda x: sinx2(x).sum(), x)
    np.testing.assert_allclose(hess.cpu().numpy(), np.diag(dd_sinx2(xn)), rtol=1e-5, atol=1e-6)
