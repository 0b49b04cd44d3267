"""The direct view methods (``opweave._views``): ``t.view``, ``t.reshape``, ``t.t``, ``t.transpose``,
``t.permute``, ``t.unsqueeze``, ``t.expand``, ``t.flatten``, ``t.squeeze`` on the CPU.

Each call runs twice (the first enters the layout, the second makes the view from it) and is
checked against NumPy's formula for the same array (values) and against the op's decomposition
(shape, strides, offset, storage, base). Writes through the view show in the input. The cases
the direct methods leave to the general path (autograd, modes, a re-registered view prim,
bad arguments) keep its behaviour. Another backend whose storage is host memory gets the direct
methods by declaring ``Backend.host_storage``; one that does not keeps the general path.
"""

from __future__ import annotations

import types

import numpy as np
import opweave
import pytest
from host_memory import HostMemory, new, view
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from opweave import _views
from opweave.dispatch import registered

DTYPES = [np.float32, np.float64, np.int64, np.bool_, np.float16]
VALUES = {np.float32: [np.nan, np.inf, -np.inf, -0.0], np.float64: [np.nan, -np.inf, -0.0]}


def arrays(min_dims=0, max_dims=3):
    return st.sampled_from(DTYPES).flatmap(
        lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=4))
    )


def layouts(array: np.ndarray, kind: str) -> opweave.Tensor:
    """``array`` as a tensor: contiguous, transposed strides, a slice at an offset, or a broadcast view."""
    t = opweave.tensor(array)
    if kind == "transposed" and t.ndim >= 2:
        t = t.mT.contiguous().mT
    elif kind == "offset":
        t = opweave.tensor(np.concatenate([array.reshape(-1), array.reshape(-1)])[array.size :]).view(array.shape)
    elif kind == "broadcast" and t.ndim >= 1 and array.shape[0] == 1:
        t = opweave.tensor(array[:, ...].copy()).expand(*array.shape)
    return t


def same_view(got: opweave.Tensor, want: opweave.Tensor, base: opweave.Tensor) -> None:
    assert type(got) is opweave.Tensor
    assert got.shape == want.shape and got.stride() == want.stride()
    assert got.storage_offset() == want.storage_offset() and got.dtype == want.dtype
    assert got._storage is base._storage
    assert got._base is (base if base._base is None else base._base)
    assert got.requires_grad is False and got.grad_fn is None


def run_twice(method: str, t: opweave.Tensor, *args):
    first = getattr(t, method)(*args)
    second = getattr(t, method)(*args)
    return first, second


CASES = st.sampled_from(["contiguous", "transposed", "offset", "broadcast"])


@given(arrays(), CASES, st.data())
def test_view_and_reshape_like_numpy(array, kind, data):
    t = layouts(array, kind)
    shape = data.draw(st.permutations([*array.shape, 1]).map(tuple))
    if shape and data.draw(st.booleans()):
        shape = (-1, *shape[1:]) if 0 not in shape else shape
    want = opweave.ops.reshape.default.decomposition(t, list(shape))
    for got in run_twice("reshape", t, *shape):
        np.testing.assert_array_equal(got.numpy(), np.reshape(array, shape))
        assert got.shape == want.shape and got.stride() == want.stride()
        if want._base is not None and want._storage is t._storage:
            same_view(got, want, t)
    if t.is_contiguous():
        want = opweave.ops.view.default.decomposition(t, list(shape))
        for got in run_twice("view", t, *shape):
            same_view(got, want, t)
            np.testing.assert_array_equal(got.numpy(), np.reshape(array, shape))


@given(arrays(), CASES, st.data())
def test_transposes_like_numpy(array, kind, data):
    t = layouts(array, kind)
    n = array.ndim
    dims = data.draw(st.permutations(range(n)).map(tuple))
    want = opweave.ops.permute.default.decomposition(t, list(dims))
    for got in run_twice("permute", t, *(dims if n else [()])):
        same_view(got, want, t)
        np.testing.assert_array_equal(got.numpy(), np.transpose(array, dims))
    if n:
        d0, d1 = data.draw(st.integers(-n, n - 1)), data.draw(st.integers(-n, n - 1))
        want = opweave.ops.transpose.int.decomposition(t, d0, d1)
        for got in run_twice("transpose", t, d0, d1):
            same_view(got, want, t)
            np.testing.assert_array_equal(got.numpy(), np.swapaxes(array, d0, d1))
    if n <= 2:
        want = opweave.ops.t.default.decomposition(t)
        for got in run_twice("t", t):
            same_view(got, want, t)
            np.testing.assert_array_equal(got.numpy(), array.T)


@given(arrays(), CASES, st.data())
def test_unsqueeze_expand_squeeze_flatten_like_numpy(array, kind, data):
    t = layouts(array, kind)
    n = array.ndim
    dim = data.draw(st.integers(-n - 1, n))
    want = opweave.ops.unsqueeze.default.decomposition(t, dim)
    for got in run_twice("unsqueeze", t, dim):
        same_view(got, want, t)
        np.testing.assert_array_equal(got.numpy(), np.expand_dims(array, dim))
    lead = data.draw(st.integers(0, 4))
    sizes = (lead, *[data.draw(st.sampled_from([s, -1] if s != 1 else [1, 3, -1])) for s in array.shape])
    shape = tuple(old if new == -1 else new for new, old in zip(sizes[1:], array.shape))
    want = opweave.ops.expand.default.decomposition(t, list(sizes))
    for got in run_twice("expand", t, *sizes):
        same_view(got, want, t)
        np.testing.assert_array_equal(got.numpy(), np.broadcast_to(array, (lead, *shape)))
    want = opweave.ops.squeeze.default.decomposition(t)
    for got in run_twice("squeeze", t):
        same_view(got, want, t)
        np.testing.assert_array_equal(got.numpy(), np.squeeze(array))
    flat = run_twice("flatten", t)
    np.testing.assert_array_equal(flat[1].numpy(), array.reshape(-1))
    if n == 1:  # PyTorch returns the input itself
        assert flat[0] is t and flat[1] is t


@given(st.sampled_from(list(VALUES)), st.data())
def test_special_values_and_writes_show_in_the_input(dtype, data):
    array = data.draw(hnp.arrays(dtype, (2, 3), elements=st.sampled_from(VALUES[dtype])))
    t = opweave.tensor(array)
    for _ in range(2):
        v = t.reshape(6).view(3, 2).t()
        np.testing.assert_array_equal(v.numpy(), array.reshape(3, 2).T)
    version = t._version
    v.fill_(7)  # one write through the view: the input changes, its version moves
    np.testing.assert_array_equal(t.numpy(), np.full((2, 3), 7, dtype))
    assert t._version > version


def test_errors_are_the_general_paths_every_time():
    t = opweave.ones(2, 3)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="view"):
            t.view(4, 2)
        with pytest.raises(RuntimeError, match="view"):
            t.t().view(6)  # not viewable: the general path's error
        with pytest.raises(IndexError):
            t.transpose(0, 5)
        with pytest.raises(TypeError):
            t.unsqueeze(0.0)
    for _ in range(2):  # True == 1, but a bool is not an int key: the general path rejects it each time
        assert t.unsqueeze(1).shape == (2, 1, 3)
        with pytest.raises(TypeError, match="unsqueeze"):
            t.unsqueeze(True)


def test_reshape_that_copies_keeps_copying():
    t = opweave.arange(6.0).view(2, 3).t()
    for _ in range(3):
        r = t.reshape(6)
        assert r._storage is not t._storage
        np.testing.assert_array_equal(r.numpy(), np.arange(6.0).reshape(2, 3).T.reshape(6))


def test_autograd_and_modes_take_the_general_path():
    x = opweave.ones(2, 3, requires_grad=True)
    for _ in range(2):
        y = x.t()
        assert y.requires_grad and y.grad_fn is not None
        (y * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((2, 3), 4.0))
    t = opweave.ones(2, 3)
    for mode in (opweave.inference_mode, opweave.no_grad, lambda: opweave.autocast("cpu")):
        with mode():
            for _ in range(2):
                v = t.t()
                assert v.shape == (3, 2) and v._base is t


def test_a_reregistered_view_prim_is_called():
    t = opweave.ones(2, 3)
    t.t(), t.t()
    seen = []
    cpu_transpose = opweave.ops.prims.transpose.default

    def spy(a, perm):
        seen.append(perm)
        return opweave.ops.prims.as_strided(a, [a.shape[p] for p in perm], [a.stride(p) for p in perm], 0)

    with registered(cpu_transpose, spy, backend="cpu"):
        for _ in range(2):
            assert t.t().shape == (3, 2)
    assert len(seen) == 2
    assert t.t().shape == (3, 2) and len(seen) == 2  # removed: the direct method again
    assert any(table for table in _views._tables)  # the layout is entered again


class _HostStore(HostMemory):
    """A vendor-style device whose storage is host bytes NumPy reads with the tensor's strides."""

    host_storage = True


HOST_STORE, BYTE_STORE = _HostStore("viewhoststore"), HostMemory("viewbytestore")


@pytest.fixture(scope="module")
def host_backends():
    plugin = types.ModuleType("view_host_plugin")

    @opweave.hookimpl
    def opweave_register(registry):
        registry.backend(HOST_STORE)
        registry.backend(BYTE_STORE)

    plugin.opweave_register = opweave_register
    opweave.backends.register_plugin(plugin, name="view_host_plugin")
    return HOST_STORE, BYTE_STORE


def _entered(keys: int) -> int:
    return sum(1 for table in _views._tables for key in table if key[0] == keys)


def test_a_backend_declaring_host_storage_gets_the_direct_views(host_backends):
    host, _ = host_backends
    values = np.arange(24.0).reshape(2, 3, 4)
    t = new(host, values)
    before = _entered(t._keys)
    for method, args, want in [
        ("view", (6, 4), values.reshape(6, 4)),
        ("permute", (2, 0, 1), values.transpose(2, 0, 1)),
        ("unsqueeze", (1,), values[:, None]),
    ]:
        first, second = run_twice(method, t, *args)
        for got in (first, second):
            assert got.device == t.device and got._storage is t._storage and got._base is t
            np.testing.assert_array_equal(view(got), want)
    assert _entered(t._keys) == before + 3
    seen = []

    def spy(a, perm):
        seen.append(perm)
        return opweave.ops.prims.as_strided(a, [a.shape[p] for p in perm], [a.stride(p) for p in perm], 0)

    with registered(opweave.ops.prims.transpose.default, spy, backend=host.name):  # another source's kernel
        for _ in range(2):
            np.testing.assert_array_equal(view(t.permute(2, 0, 1)), values.transpose(2, 0, 1))
    assert len(seen) == 2


def test_a_backend_without_host_storage_keeps_the_general_path(host_backends):
    _, other = host_backends
    values = np.arange(12.0).reshape(3, 4)
    t = new(other, values)
    for _ in range(2):
        got = t.t()
        assert got._storage is t._storage and got._base is t
        np.testing.assert_array_equal(view(got), values.T)
    assert _entered(t._keys) == 0
