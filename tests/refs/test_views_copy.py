"""The ``*_copy`` view variants, ``unsafe_*`` splits and ``resize_``/``resize_as_`` against NumPy."""

from __future__ import annotations

import numpy as np
import opweave as ow
import pytest
from _shape_support import assert_same, dtypes, layout_of, layouts, seeds, shapes, values
from hypothesis import given, settings

SETTINGS = settings(max_examples=15, deadline=None)


def _check_copy(result, expected: np.ndarray, source):
    assert_same(result, expected, source.dtype)
    assert result.is_contiguous()
    if result.numel() and source.numel():
        assert result.untyped_storage() is not source.untyped_storage()


# (op name, args for a tensor of ndim >= 2, NumPy oracle of the same)
CASES = [
    ("transpose_copy", (0, -1), lambda a: np.swapaxes(a, 0, -1)),
    ("t_copy", (), lambda a: a.T),
    ("permute_copy", ((1, 0),), lambda a: np.transpose(a, (1, 0))),
    ("unsqueeze_copy", (1,), lambda a: np.expand_dims(a, 1)),
    ("squeeze_copy", (), lambda a: np.squeeze(a)),
    ("diagonal_copy", (0, 0, 1), lambda a: np.diagonal(a, 0, 0, 1)),
    ("view_copy", ((-1,),), lambda a: a.reshape(-1)),
    ("expand_copy", ((3, -1, -1),), lambda a: np.broadcast_to(a, (3,) + a.shape)),
    ("alias_copy", (), lambda a: a),
    ("select_copy", (0, 0), lambda a: a[0]),
    ("slice_copy", (1, 0, None, 2), lambda a: a[:, ::2]),
]


@pytest.mark.parametrize("name,args,oracle", CASES, ids=[c[0] for c in CASES])
@SETTINGS
@given(seed=seeds, shape=shapes(min_dims=2, max_dims=2, min_side=1), dtype=dtypes, layout=layouts)
def test_copy_variants_match_the_view_and_alias_nothing(name, args, oracle, seed, shape, dtype, layout):
    array = values(np.random.default_rng(seed), shape, dtype)
    source = layout_of(array, layout)
    result = getattr(ow, name)(source, *args)
    _check_copy(result, oracle(array), source)
    result.fill_(0) if result.numel() else None
    assert_same(source, array)  # the copy is independent


@SETTINGS
@given(seed=seeds, shape=shapes(min_dims=1, max_dims=3, min_side=1), layout=layouts)
def test_list_copies_and_unsafe_splits(seed, shape, layout):
    array = values(np.random.default_rng(seed), shape, ow.float32)
    source = layout_of(array, layout)
    n = shape[0]
    for result, expected in (
        (ow.unbind_copy(source, 0), [array[i] for i in range(n)]),
        (ow.split_copy(source, 2), np.split(array, range(2, n, 2))),
        (ow.unsafe_split(source, 2), np.split(array, range(2, n, 2))),
        (ow.split_with_sizes_copy(source, [1, n - 1]), np.split(array, [1])),
        (ow.unsafe_split_with_sizes(source, [1, n - 1]), np.split(array, [1])),
        (ow.unsafe_chunk(source, 2), np.array_split(array, min(2, n)) if n % 2 == 0 or n == 1 else None),
    ):
        if expected is None:
            continue
        assert len(result) == len(expected)
        for r, e in zip(result, expected):
            _check_copy(r, e, source)


def test_view_copy_out_variant_and_errors():
    a = ow.arange(6.0)
    out = ow.empty(6)
    ow.view_copy(a, (2, 3), out=out)
    np.testing.assert_array_equal(out.numpy(), np.arange(6.0).reshape(2, 3))
    with pytest.raises(RuntimeError):
        ow.view_copy(a, (4, 2))
    with pytest.raises(IndexError):
        ow.transpose_copy(a, 0, 3)


@SETTINGS
@given(seed=seeds, old=shapes(min_dims=1, max_dims=3, min_side=1), new=shapes(min_dims=0, max_dims=3))
def test_resize_keeps_the_leading_elements(seed, old, new):
    array = values(np.random.default_rng(seed), old, ow.float64)
    t = ow.tensor(array)
    assert t.resize_(new) is t
    assert t.shape == tuple(new) and t.is_contiguous()
    keep = min(array.size, int(np.prod(new)))
    assert t.numpy().reshape(-1)[:keep].tobytes() == array.reshape(-1)[:keep].tobytes()
    u = ow.tensor(array)
    u.resize_as_(ow.empty(new))
    assert u.shape == tuple(new)


def test_resize_errors_name_the_op():
    with pytest.raises(ValueError, match="resize_"):
        ow.ones(3).resize_((-1, 2))
    t = ow.ones(2, 3)
    t.resize_((2, 3, 1, 1), memory_format=ow.channels_last)
    assert t.stride() == (3, 1, 3, 3)
