"""``out=`` memory-overlap checks, as PyTorch documents them (``assert_no_internal_overlap``,
``assert_no_partial_overlap``, ``assert_no_overlap``): an ``out=`` whose elements share memory, or that
shares memory with an input, raises RuntimeError and leaves every tensor as it was; ``out=`` tensors on
disjoint parts of one storage work. Also: reflected operators called unbound on a non-tensor raise
TypeError."""

from __future__ import annotations

import numpy as np
import opweave as D
import pytest
from hypothesis import given
from hypothesis import strategies as st

INTERNAL = "more than one element of the written-to tensor refers to a single memory location"
SHARED = "some elements of the input tensor and the written-to tensor refer to a single memory location"
DTYPES = [D.float32, D.float64, D.int64]


def _values(t):
    return np.array(t.numpy(force=True), copy=True)


# op name -> (call with out=, NumPy result) for 1-d ``src`` and an index ``idx`` into it
GATHERS = {
    "gather": (lambda s, i, out: D.gather(s, 0, i, out=out), lambda s, i: s[i]),
    "take": (lambda s, i, out: D.take(s, i, out=out), lambda s, i: s.reshape(-1)[i]),
    "index_select": (lambda s, i, out: D.index_select(s, 0, i, out=out), lambda s, i: s[i]),
    "take_along_dim": (lambda s, i, out: D.take_along_dim(s, i, 0, out=out), lambda s, i: s[i]),
    "cat": (lambda s, i, out: D.cat([s, s[: len(i)]], out=out), lambda s, i: np.concatenate([s, s[: len(i)]])),
    "stack": (
        lambda s, i, out: D.stack([s[: len(i)], s[-len(i) :]], out=out),
        lambda s, i: np.stack([s[: len(i)], s[-len(i) :]]),
    ),
    "masked_select": (lambda s, i, out: D.masked_select(s, s >= s[0], out=out), lambda s, i: s[s >= s[0]]),
}


def _length(name, n, k):
    """Number of elements the op writes for an ``n``-element source and ``k`` indices."""
    return {"cat": n + k, "stack": 2 * k}.get(name, k)


def _read_ranges(name, n, k):
    """The parts ``[lo, hi)`` of the ``n``-element source the op reads (``stack`` reads only its two ends)."""
    return [(0, k), (n - k, n)] if name == "stack" else [(0, n)]


def _case(draw):
    name = draw(st.sampled_from(sorted(GATHERS)))
    dtype = draw(st.sampled_from(DTYPES))
    n = draw(st.integers(2, 8))
    k = draw(st.integers(1, n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    src = rng.permutation(np.arange(n * 3)).astype(dtype.name if dtype.name != "float32" else np.float32)[:n]
    idx = rng.integers(0, n, k)
    return name, dtype, src, idx


@st.composite
def cases(draw):
    return _case(draw)


@given(cases())
def test_expanded_out_raises_and_changes_nothing(case):
    name, dtype, src_np, idx_np = case
    call, expected = GATHERS[name]
    src, idx = D.tensor(src_np, dtype=dtype), D.tensor(idx_np)
    m = len(np.atleast_1d(expected(src_np, idx_np)).reshape(-1))
    if m < 2:
        return
    shape = expected(src_np, idx_np).shape
    base = D.zeros((1,) * len(shape), dtype=dtype)
    out = base.expand(shape)
    with pytest.raises(RuntimeError, match=INTERNAL):
        call(src, idx, out)
    np.testing.assert_array_equal(_values(src), src_np)
    np.testing.assert_array_equal(_values(idx), idx_np)
    np.testing.assert_array_equal(_values(base), np.zeros((1,) * len(shape)))


@given(cases())
def test_out_that_is_the_input_raises(case):
    name, dtype, src_np, idx_np = case
    call, _ = GATHERS[name]
    src, idx = D.tensor(src_np, dtype=dtype), D.tensor(idx_np)
    with pytest.raises(RuntimeError, match=SHARED):
        call(src, idx, src)
    np.testing.assert_array_equal(_values(src), src_np)


@given(cases(), st.data())
def test_out_partly_over_the_input_raises(case, data):
    name, dtype, src_np, idx_np = case
    call, expected = GATHERS[name]
    want = expected(src_np, idx_np)
    n, m = len(src_np), want.size
    buf = D.zeros(m + n + m, dtype=dtype)
    src = buf[m : m + n]  # elements [m, m + n) of the storage
    src.copy_(D.tensor(src_np, dtype=dtype))
    # out's storage elements [start, start + m) meet a part of src's [m, m + n) that the op reads
    meets = [
        s for s in range(1, m + n) for lo, hi in _read_ranges(name, n, len(idx_np)) if s < m + hi and s + m > m + lo
    ]
    start = data.draw(st.sampled_from(sorted(set(meets))))
    out = buf[start : start + m].view(want.shape)
    before = _values(buf)
    with pytest.raises(RuntimeError, match=SHARED):
        call(src, D.tensor(idx_np), out)
    np.testing.assert_array_equal(_values(buf), before)


@given(cases())
def test_out_on_a_disjoint_part_of_the_storage_works(case):
    name, dtype, src_np, idx_np = case
    call, expected = GATHERS[name]
    want = expected(src_np, idx_np)
    n, m = len(src_np), want.size
    buf = D.zeros(n + m, dtype=dtype)
    src, out = buf[:n], buf[n:].view(want.shape)
    src.copy_(D.tensor(src_np, dtype=dtype))
    assert call(src, D.tensor(idx_np), out) is out
    np.testing.assert_array_equal(_values(out), want)
    np.testing.assert_array_equal(_values(src), src_np)


@given(cases())
def test_interleaved_out_works(case):
    """Strided views of one storage that never share an element: PyTorch lets them through, and so do we."""
    name, dtype, src_np, idx_np = case
    call, expected = GATHERS[name]
    want = expected(src_np, idx_np)
    n, m = len(src_np), want.size
    buf = D.zeros(2 * max(n, m), dtype=dtype)
    src, out = buf[0 : 2 * n : 2], buf[1 : 2 * m : 2].view(want.shape) if want.ndim == 1 else None
    if out is None:
        return
    src.copy_(D.tensor(src_np, dtype=dtype))
    call(src, D.tensor(idx_np), out)
    np.testing.assert_array_equal(_values(out), want)
    np.testing.assert_array_equal(_values(src), src_np)


def test_out_resized_onto_the_index_raises():
    """PyTorch resizes ``out`` first: ``ind[:1]`` grown to two elements reaches ``ind[1:]``."""
    ind = D.tensor([2, 1, 0])
    out = ind[:1]
    with pytest.raises(RuntimeError, match=SHARED):
        D.gather(ind.clone(), 0, ind[1:], out=out)
    np.testing.assert_array_equal(_values(ind), [2, 1, 0])
    assert out.shape == (1,)  # checked before anything is resized or written


@given(st.sampled_from(DTYPES), st.integers(1, 6))
def test_elementwise_out_may_be_an_input_but_not_expanded(dtype, n):
    """Element-wise ops allow ``out=`` to be exactly an input (PyTorch's partial-overlap rule)."""
    a_np = np.arange(n) + 1
    a, b = D.tensor(a_np, dtype=dtype), D.tensor(a_np * 2, dtype=dtype)
    assert D.add(a, b, out=a) is a
    np.testing.assert_array_equal(_values(a), a_np * 3)
    if n > 1:
        with pytest.raises(RuntimeError, match=INTERNAL):
            D.add(a, b, out=D.zeros(1, dtype=dtype).expand(n))
        buf = D.tensor(np.arange(n + 1), dtype=dtype)
        with pytest.raises(RuntimeError, match=SHARED):
            D.add(buf[:n], b, out=buf[1:])
        np.testing.assert_array_equal(_values(buf), np.arange(n + 1))


@pytest.mark.parametrize(
    "dunder",
    [
        "__radd__",
        "__rsub__",
        "__rmul__",
        "__rtruediv__",
        "__rdiv__",
        "__rand__",
        "__ror__",
        "__rxor__",
        "__rpow__",
        "__rmod__",
    ],
)
def test_reflected_operator_unbound_on_a_number_raises_type_error(dunder):
    t = D.tensor([1, 2, 3])
    with pytest.raises(TypeError, match=dunder):
        getattr(D.Tensor, dunder)(2, t)
    with pytest.raises(TypeError, match=dunder):
        getattr(D.Tensor, dunder)(2, 3)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("__add__", (None,)),
        ("__sub__", (None,)),
        ("__mul__", (2,)),
        ("__matmul__", (None,)),
        ("__and__", (None,)),
        ("__eq__", (None,)),
        ("__lt__", (1,)),
        ("__iadd__", (None,)),
        ("__neg__", ()),
        ("__invert__", ()),
        ("add", (None,)),
        ("sqrt", ()),
        ("reshape", (3,)),
    ],
)
@pytest.mark.parametrize("self_value", [2, 2.5, [1, 2, 3], None])
def test_operators_and_methods_unbound_on_a_non_tensor_raise_type_error(name, args, self_value):
    """PyTorch: ``Tensor.__add__(2, t)`` is a TypeError (the method needs a Tensor self), never a computation."""
    t = D.tensor([1, 2, 3])
    args = tuple(t if a is None else a for a in args)
    with pytest.raises(TypeError, match=f"'{name}'.*received '{type(self_value).__name__}'"):
        getattr(D.Tensor, name)(self_value, *args)
    assert _values(t).tolist() == [1, 2, 3]


def test_operators_and_methods_unbound_on_a_tensor_or_subclass_compute():
    t = D.tensor([1, 2, 3])
    np.testing.assert_array_equal(_values(D.Tensor.__add__(t, 2)), [3, 4, 5])
    np.testing.assert_array_equal(_values(D.Tensor.sqrt(D.tensor([4.0]))), [2.0])
    p = D.nn.Parameter(D.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(_values(D.Tensor.__mul__(p, 2).detach()), [2.0, 4.0])
    np.testing.assert_array_equal(_values(D.Tensor.__neg__(p).detach()), [-1.0, -2.0])
    assert D.Tensor.__eq__(t, "text") is NotImplemented
    assert (D.Tensor | None) is not None  # the class itself still makes type unions


def test_guarded_operators_stay_assignable_and_overridable():
    """Tensor's metaclass guards class-level access only: setting, deleting and overriding work as usual."""
    entry = vars(D.Tensor)["__sub__"]

    def replaced(self, other):
        return "replaced"

    D.Tensor.__sub__ = replaced
    try:
        assert vars(D.Tensor)["__sub__"] is replaced
        assert D.tensor([1]) - 1 == "replaced"
        assert D.Tensor.__sub__(D.tensor([1]), 1) == "replaced"
    finally:
        D.Tensor.__sub__ = entry
    np.testing.assert_array_equal(_values(D.tensor([3]) - 1), [2])

    class Sub(D.nn.Parameter):
        def __add__(self, other):
            return "own"

    assert Sub.__add__(None, 1) == "own"  # a subclass's own operator comes first, unchecked as Python's


def test_reflected_operators_still_work():
    t = D.tensor([1, 2, 3])
    np.testing.assert_array_equal(_values(2 + t), [3, 4, 5])
    np.testing.assert_array_equal(_values(D.Tensor.__rsub__(t, 10)), [9, 8, 7])
    np.testing.assert_array_equal(_values(6 | t), [7, 6, 7])


@given(st.sampled_from([D.float64, D.int64, D.float32]))
def test_out_of_another_dtype_raises_where_pytorch_requires_the_same(out_dtype):
    """gather, aminmax and complex take only an out= of the result's dtype (even one it would cast to)."""
    src = D.tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    cases = [
        (D.float32, lambda out: D.gather(src, 1, D.tensor([[0, 0], [1, 0]]), out=out)),
        (D.float32, lambda out: D.ops.aminmax.out(src, dim=0, min=out, max=D.empty(2, dtype=out.dtype))),
        (D.complex64, lambda out: D.complex(src, src, out=out)),
    ]
    for result_dtype, call in cases:
        out = D.zeros((2, 2), dtype=out_dtype if out_dtype is not D.float32 else D.complex128)
        if out.dtype is result_dtype:
            continue
        with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
            call(out)
        np.testing.assert_array_equal(_values(out), np.zeros((2, 2)))
    out = D.empty((2, 2), dtype=D.float32)
    D.gather(src, 1, D.tensor([[0, 0], [1, 0]]), out=out)
    np.testing.assert_array_equal(_values(out), [[1.0, 1.0], [4.0, 3.0]])


def test_kthvalue_values_out_may_not_be_the_input():
    x = D.tensor(np.array([3.0, 1.0, 2.0]))
    with pytest.raises(RuntimeError, match=SHARED):
        D.ops.kthvalue.out(x, 2, values=x, indices=D.empty((), dtype=D.int64))
    np.testing.assert_array_equal(_values(x), [3.0, 1.0, 2.0])
    values, indices = D.empty(()), D.empty((), dtype=D.int64)
    D.ops.kthvalue.out(x, 2, values=values, indices=indices)
    assert values.item() == 2.0 and indices.item() == 2
