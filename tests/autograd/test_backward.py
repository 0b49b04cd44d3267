"""Gradients against closed-form NumPy derivatives, and the engine's behaviour."""

from __future__ import annotations

import threading

import numpy as np
import opweave as ow
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

shapes = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4)
finite = st.floats(-3, 3, allow_nan=False, allow_infinity=False, width=64)


def leaf(values, dtype=ow.float64, layout="contiguous"):
    """A leaf tensor holding ``values``; ``transposed`` makes it a non-contiguous view's base."""
    array = np.asarray(values, dtype=np.float64 if dtype is ow.float64 else np.complex128)
    if layout == "transposed" and array.ndim >= 2:
        t = ow.tensor(np.ascontiguousarray(np.swapaxes(array, -1, -2)), dtype=dtype).mT.detach()
        return t.requires_grad_()
    return ow.tensor(array, dtype=dtype, requires_grad=True)


UNARY = {
    "sin": (ow.sin, np.cos),
    "cos": (ow.cos, lambda x: -np.sin(x)),
    "exp": (ow.exp, np.exp),
    "tanh": (ow.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "sigmoid": (ow.sigmoid, lambda x: np.exp(-x) / (1 + np.exp(-x)) ** 2),
    "atan": (ow.atan, lambda x: 1 / (1 + x * x)),
    "square": (ow.square, lambda x: 2 * x),
    "erf": (ow.erf, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x)),
    "softplus": (ow.nn.functional.softplus, lambda x: 1 / (1 + np.exp(-x))),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@given(data=st.data())
def test_unary_gradient_matches_closed_form(name, data):
    fn, derivative = UNARY[name]
    x_np = data.draw(hnp.arrays(np.float64, shapes, elements=finite))
    layout = data.draw(st.sampled_from(["contiguous", "transposed"]))
    x = leaf(x_np, layout=layout)
    fn(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), derivative(x_np), rtol=1e-10, atol=1e-12)


@given(data=st.data())
def test_binary_gradients_with_broadcasting(data):
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    a_np = data.draw(hnp.arrays(np.float64, shape, elements=finite))
    b_shape = shape[data.draw(st.integers(0, len(shape))) :]
    b_np = data.draw(hnp.arrays(np.float64, b_shape, elements=st.floats(0.5, 3, width=64)))
    a, b = leaf(a_np), leaf(b_np)
    g_np = data.draw(hnp.arrays(np.float64, np.broadcast_shapes(shape, b_shape), elements=finite))
    out = a * b + a / b - ow.pow(b, 2.0)
    out.backward(ow.tensor(g_np))
    axes = tuple(range(len(shape) - len(b_shape)))
    np.testing.assert_allclose(a.grad.numpy(), (g_np * (b_np + 1 / b_np)).reshape(shape), rtol=1e-10, atol=1e-12)
    expected_b = np.sum(g_np * (a_np - a_np / b_np**2 - 2 * b_np), axis=axes)
    np.testing.assert_allclose(b.grad.numpy(), expected_b, rtol=1e-9, atol=1e-10)


@given(data=st.data())
def test_matmul_and_reductions(data):
    m, k, n = (data.draw(st.integers(1, 4)) for _ in range(3))
    a_np = data.draw(hnp.arrays(np.float64, (m, k), elements=finite))
    b_np = data.draw(hnp.arrays(np.float64, (k, n), elements=finite))
    g_np = data.draw(hnp.arrays(np.float64, (m, n), elements=finite))
    a, b = leaf(a_np, layout=data.draw(st.sampled_from(["contiguous", "transposed"]))), leaf(b_np)
    (a @ b).backward(ow.tensor(g_np))
    np.testing.assert_allclose(a.grad.numpy(), g_np @ b_np.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), a_np.T @ g_np, rtol=1e-10, atol=1e-12)
    x = leaf(a_np)
    x.mean(dim=0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((m, k), 1.0 / m))


def test_complex_gradients_follow_conjugate_wirtinger():
    z_np = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j])
    z = leaf(z_np, dtype=ow.complex128)
    ow.real(z * z.conj()).sum().backward()  # |z|^2: gradient 2 z
    np.testing.assert_allclose(z.grad.numpy(), 2 * z_np)
    w = leaf(z_np, dtype=ow.complex128)
    ow.abs(w).sum().backward()  # |z|: gradient z / |z|
    np.testing.assert_allclose(w.grad.numpy(), z_np / np.abs(z_np))


def test_accumulation_and_retain_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_error_messages():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        ow.ones(2).sum().backward()
    with pytest.raises(
        RuntimeError, match="a leaf Variable that requires grad is being used in an in-place operation."
    ):
        x.add_(1)
    y = ow.exp(x)
    y.mul_(2)  # exp saved its output
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    with ow.no_grad():
        x.add_(1)  # allowed without grad mode
    np.testing.assert_allclose(x.detach().numpy(), [2.0, 3.0])


def test_version_counter_error_on_saved_input():
    a, b = leaf([1.0, 2.0]), ow.tensor([3.0, 4.0], dtype=ow.float64)
    y = a * b  # saves b for a's gradient
    b.add_(1)
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead|is at version [0-9]+"):
        y.sum().backward()


def test_autograd_grad_options():
    x, w = leaf([1.0, 2.0]), leaf([3.0])
    y = (x * x).sum()
    (gx,) = ow.autograd.grad(y, x, retain_graph=True)
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0])
    assert x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        ow.autograd.grad(y, [x, w], retain_graph=True)
    gx, gw = ow.autograd.grad(y, [x, w], retain_graph=True, allow_unused=True)
    assert gw is None
    gx, gw = ow.autograd.grad(y, [x, w], materialize_grads=True)
    np.testing.assert_array_equal(gw.numpy(), [0.0])


def test_backward_inputs_accumulates_only_into_them():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * w).sum().backward(inputs=[w])
    assert x.grad is None
    np.testing.assert_allclose(w.grad.numpy(), [1.0, 2.0])


def test_create_graph_gives_second_derivatives():
    x_np = np.array([0.3, -1.2, 2.0])
    x = leaf(x_np)
    y = (ow.sin(x) * x).sum()
    (g,) = ow.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), np.cos(x_np) * x_np + np.sin(x_np))
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), -np.sin(x_np) * x_np + 2 * np.cos(x_np), rtol=1e-12)


def test_hooks():
    x = leaf([1.0, 2.0])
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 10)
    acc = []
    x.register_post_accumulate_grad_hook(lambda t: acc.append(t.grad.numpy().copy()))
    y = x * 3
    y.register_hook(lambda g: g + 1)
    y.retain_grad()
    y.sum().backward()
    np.testing.assert_allclose(seen[0], [6.0, 6.0])  # (1 + 1) * 3 reaches the leaf hook
    np.testing.assert_allclose(x.grad.numpy(), [60.0, 60.0])
    np.testing.assert_allclose(acc[0], [60.0, 60.0])
    np.testing.assert_allclose(y.grad.numpy(), [2.0, 2.0])
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ow.ones(2).register_hook(lambda g: g)


def test_inplace_on_a_view_reaches_the_base():
    x_np = np.arange(6.0).reshape(2, 3)
    x = leaf(x_np)
    z = x.clone()
    z[0].mul_(3)
    z[:, 1] = 0.0
    (z * z).sum().backward()
    expected = 2 * x_np
    expected[0] *= 9
    expected[:, 1] = 0
    np.testing.assert_allclose(x.grad.numpy(), expected)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x[0].add_(1)


def test_canonical_ops_differentiate_through_decompositions():
    x_np = np.array([[1.0, -2.0, 0.5], [0.25, 3.0, -1.0]])
    x = leaf(x_np)
    ow.cat([x, x * 2], dim=0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full_like(x_np, 3.0))
    x.grad = None
    ow.nn.functional.pad(x, [1, 1]).pow(2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x_np)


def test_independent_graphs_on_threads():
    results, errors = {}, []

    def work(i):
        try:
            x = leaf(np.full(50, float(i)))
            for _ in range(10):
                y = (x * x).sum()
                (g,) = ow.autograd.grad(y, x)
            results[i] = g.numpy().copy()
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for i in range(4):
        np.testing.assert_allclose(results[i], np.full(50, 2.0 * i))


def test_nondifferentiable_outputs():
    x = leaf([3.0, 1.0, 2.0])
    values, indices = ow.sort(x)
    assert values.requires_grad and not indices.requires_grad
    assert not ow.argmax(x).requires_grad and not (x > 1).requires_grad
    (values * ow.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 1.0, 2.0])


def test_autocast_sits_above_autograd():
    x = ow.randn(4, 3, requires_grad=True)
    w = ow.randn(3, 5, requires_grad=True)
    with ow.autocast("cpu", dtype=ow.bfloat16):
        z = x @ w
    assert z.dtype == ow.bfloat16
    z.to(ow.float32).sum().backward()
    assert x.grad.dtype == ow.float32 and w.grad.dtype == ow.float32
    expected = np.ones((4, 5)) @ w.detach().to(ow.bfloat16).to(ow.float32).numpy().T
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=2e-2, atol=2e-2)


def test_profiler_records_backward_ops():
    x = ow.randn(4, 3, requires_grad=True)
    y = (ow.exp(x) * 2).sum()
    with ow.profiler.profile() as prof:
        y.backward()
    names = {e.name for e in prof.events()}
    assert "mul.Tensor" in names  # exp's backward multiplies by the saved output
    assert "prims::broadcast_in_dim" in names  # sum's backward broadcasts the gradient back


OUT_CALLS = {
    "zeros": lambda out, **k: ow.zeros(3, out=out, **k),
    "ones": lambda out, **k: ow.ones(3, out=out, **k),
    "full": lambda out, **k: ow.full((3,), 1.5, out=out, **k),
    "arange": lambda out, **k: ow.arange(3.0, out=out, **k),
    "linspace": lambda out, **k: ow.linspace(0, 1, 3, out=out, **k),
    "rand": lambda out, **k: ow.rand(3, out=out, **k),
    "add": lambda out, **k: ow.add(ow.ones(3), 1.0, out=out),
}


@pytest.mark.parametrize("name", sorted(OUT_CALLS))
def test_out_into_a_tensor_that_requires_grad_raises(name):
    call = OUT_CALLS[name]
    out = ow.zeros(3, dtype=ow.float64).requires_grad_()
    for kwargs in ({}, {"requires_grad": True}):
        if name == "add" and kwargs:
            continue
        with pytest.raises(RuntimeError, match=rf"^{name}\(\): functions with out=\.\.\. arguments don't support"):
            call(out, **kwargs)
        np.testing.assert_array_equal(out.detach().numpy(), [0.0, 0.0, 0.0])  # left intact
    with ow.no_grad():
        call(out)  # allowed without grad mode
    # a fresh out tensor becomes a leaf that requires grad, as in PyTorch
    if name != "add":
        fresh = ow.empty(3)
        assert call(fresh, requires_grad=True) is fresh and fresh.requires_grad and fresh.is_leaf


def test_out_with_an_input_that_requires_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"^mul\(\): functions with out=\.\.\. arguments don't support"):
        ow.mul(x, 2.0, out=ow.empty(2, dtype=ow.float64))


@given(
    rows=st.integers(1, 5),
    dim=st.integers(1, 3),
    index_shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=4),
    padding=st.one_of(st.none(), st.integers(-5, 4)),
    scale=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_embedding_gradient_padding_idx_and_scale_grad_by_freq(rows, dim, index_shape, padding, scale, seed):
    rng = np.random.default_rng(seed)
    if padding is not None and not -rows <= padding < rows:
        padding = None
    indices = rng.integers(0, rows, index_shape)
    weight = leaf(rng.standard_normal((rows, dim)))
    upstream = rng.standard_normal(index_shape + (dim,))
    out = ow.nn.functional.embedding(ow.tensor(indices), weight, padding_idx=padding, scale_grad_by_freq=scale)
    out.backward(ow.tensor(upstream))
    expected = np.zeros((rows, dim))
    counts = np.bincount(indices.ravel(), minlength=rows)
    for i, g in zip(indices.ravel(), upstream.reshape(-1, dim)):
        if padding is not None and i == padding % rows:
            continue
        expected[i] += g / counts[i] if scale else g
    np.testing.assert_allclose(weight.grad.numpy(), expected, rtol=1e-12, atol=1e-12)
