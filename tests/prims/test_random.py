"""Random prims: Philox4x32-10 known answers, the documented (seed, offset) mapping, statistics, meta, errors."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import opweave as ow
import pytest
from _prim_support import FLOATS, INTS, LAYOUTS, P, in_layout
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave import _philox

M32 = 0xFFFFFFFF

# Random123 known-answer vectors for philox4x32_R(10, ctr, key).
KAT = [
    ([0, 0, 0, 0], [0, 0], [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]),
    ([M32] * 4, [M32, M32], [0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD]),
    (
        [0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
        [0xA4093822, 0x299F31D0],
        [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1],
    ),
]


# --- an independent plain-Python-int reference -------------------------------------------------


def philox_ref(ctr, key):
    """Philox4x32-10 on Python ints."""
    c = list(ctr)
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c[3] ^ k1) & M32, p0 & M32]
    return c


def words_ref(n, seed, offset):
    """The documented word stream: word w is lane w % 4 of block offset + w // 4 (128-bit counter)."""
    seed %= 2**64
    key = (seed & M32, seed >> 32)
    out = []
    for b in range((n + 3) // 4):
        counter = offset + b
        out += philox_ref([(counter >> (32 * j)) & M32 for j in range(4)], key)
    return out[:n]


def unit24(w):
    return (w >> 8) * 2.0**-24


def unit53(a, b):
    return ((a >> 5) * 2**26 + (b >> 6)) * 2.0**-53


# --- the generator itself -----------------------------------------------------------------------


@pytest.mark.parametrize("ctr, key, expected", KAT)
def test_known_answers(ctr, key, expected):
    out = _philox.philox4x32(np.array(ctr, np.uint32).reshape(4, 1), np.array(key, np.uint32))
    assert [int(v) for v in out[:, 0]] == expected
    assert philox_ref(ctr, key) == expected


def test_matches_python_reference_on_random_counters():
    rng = np.random.default_rng(123)
    ctr = rng.integers(0, 2**32, size=(4, 64), dtype=np.uint64).astype(np.uint32)
    key = rng.integers(0, 2**32, size=2, dtype=np.uint64).astype(np.uint32)
    got = _philox.philox4x32(ctr, key)
    for j in range(ctr.shape[1]):
        expected = philox_ref([int(v) for v in ctr[:, j]], [int(k) for k in key])
        assert [int(v) for v in got[:, j]] == expected


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(0, 23),
    seed=st.integers(-(2**63), 2**64 - 1),
    offset=st.one_of(st.integers(0, 2**20), st.integers(2**64 - 8, 2**64 - 1)),
)
def test_random_bits_follow_the_documented_stream(n, seed, offset):
    out = P.random_bits([n], seed, offset, device="cpu")
    assert out.dtype == ow.int64 and tuple(out.shape) == (n,)
    assert out.numpy().tolist() == words_ref(n, seed, offset)


def test_random_bits_shape_is_row_major():
    out = P.random_bits([2, 3, 2], 7, 5, device="cpu").numpy()
    assert out.reshape(-1).tolist() == words_ref(12, 7, 5)


# --- value mappings (bit-exact where the spec is exact) --------------------------------------------


@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_mapping(dtype):
    n, seed, offset, low, high = 11, 42, 3, -2.0, 5.0
    w = words_ref(2 * n, seed, offset)
    if dtype is ow.float64:
        u = [unit53(w[2 * i], w[2 * i + 1]) for i in range(n)]
    else:
        u = [unit24(x) for x in w[:n]]
    expected = (low + (high - low) * np.array(u)).astype(dtype.numpy)
    out = P.uniform([n], low, high, seed, offset, dtype=dtype, device="cpu")
    assert out.dtype == dtype
    np.testing.assert_array_equal(out.numpy(), expected)


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_mapping(dtype):
    n, seed, offset, mean, std = 9, 5, 1, 1.5, 2.0
    w = words_ref(4 * ((n + 1) // 2), seed, offset)
    z = []
    for j in range((n + 1) // 2):
        b = w[4 * j : 4 * j + 4]
        u1 = (((b[0] >> 5) * 2**26 + (b[1] >> 6)) + 1) * 2.0**-53
        u2 = unit53(b[2], b[3])
        r = math.sqrt(-2 * math.log(u1))
        z += [r * math.cos(2 * math.pi * u2), r * math.sin(2 * math.pi * u2)]
    expected = (mean + std * np.array(z[:n])).astype(dtype.numpy)
    out = P.normal([n], mean, std, seed, offset, dtype=dtype, device="cpu")
    assert out.dtype == dtype
    # libm's log/sin/cos may differ by an ulp in float64; after rounding to the dtype it is exact.
    rtol = 1e-14 if dtype is ow.float64 else 0
    np.testing.assert_allclose(out.numpy().astype(np.float64), expected.astype(np.float64), rtol=rtol, atol=0)


@pytest.mark.parametrize("low, high", [(0, 10), (-3, 4), (-(2**63), 2**63 - 1), (5, 6)])
def test_randint_mapping(low, high):
    n, seed, offset = 10, 99, 17
    w = words_ref(2 * n, seed, offset)
    expected = [low + ((w[2 * i] | w[2 * i + 1] << 32) % (high - low)) for i in range(n)]
    out = P.randint([n], low, high, seed, offset, dtype=ow.int64, device="cpu")
    assert out.numpy().tolist() == expected


@pytest.mark.parametrize("n", [0, 1, 2, 7, 50])
def test_randperm_mapping(n):
    w = words_ref(2 * n, 3, 8)
    keys = [w[2 * i] | w[2 * i + 1] << 32 for i in range(n)]
    expected = sorted(range(n), key=lambda i: (keys[i], i))
    out = P.randperm(n, 3, 8, dtype=ow.int64, device="cpu")
    assert out.dtype == ow.int64 and out.numpy().tolist() == expected


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_bernoulli_mapping_and_layouts(dtype, layout):
    rng = np.random.default_rng(0)
    values = rng.random((3, 4)).astype(dtype.numpy)
    values[0, 0], values[1, 1] = 0, 1
    p, values, keep = in_layout(values, layout)
    before = p.numpy().copy()
    out = P.bernoulli(p, 11, 2)
    n = values.size
    w = words_ref(2 * n, 11, 2)
    if dtype is ow.float64:
        u = np.array([unit53(w[2 * i], w[2 * i + 1]) for i in range(n)])
    else:
        u = np.array([unit24(x) for x in w[:n]])
    expected = (u < values.reshape(-1).astype(np.float64)).astype(dtype.numpy).reshape(values.shape)
    assert out.dtype == dtype and tuple(out.shape) == values.shape
    np.testing.assert_array_equal(out.numpy(), expected)
    np.testing.assert_array_equal(p.numpy(), before)
    del keep


# --- reproducibility -----------------------------------------------------------------------------


def _draw(name, seed, offset):
    shape = [64]
    calls = {
        "random_bits": lambda: P.random_bits(shape, seed, offset, device="cpu"),
        "uniform": lambda: P.uniform(shape, 0.0, 1.0, seed, offset, dtype=ow.float32, device="cpu"),
        "normal": lambda: P.normal(shape, 0.0, 1.0, seed, offset, dtype=ow.float64, device="cpu"),
        "bernoulli": lambda: P.bernoulli(ow.from_numpy(np.full(shape, 0.5)), seed, offset),
        "randint": lambda: P.randint(shape, 0, 1000, seed, offset, dtype=ow.int32, device="cpu"),
        "randperm": lambda: P.randperm(64, seed, offset, dtype=ow.int64, device="cpu"),
    }
    return calls[name]().numpy()


@pytest.mark.parametrize("name", ["random_bits", "uniform", "normal", "bernoulli", "randint", "randperm"])
def test_reproducible(name):
    a, b = _draw(name, 1234, 10), _draw(name, 1234, 10)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, _draw(name, 1234, 11 + 64))
    assert not np.array_equal(a, _draw(name, 1235, 10))


# --- statistics (n = 10**5, 5 sigma) --------------------------------------------------------------

N = 100_000


@pytest.mark.parametrize("dtype", FLOATS)
def test_uniform_statistics(dtype):
    low, high = -1.0, 3.0
    x = P.uniform([N], low, high, 2024, 0, dtype=dtype, device="cpu").numpy().astype(np.float64)
    assert x.min() >= low and x.max() < high
    var = (high - low) ** 2 / 12
    assert abs(x.mean() - (low + high) / 2) < 5 * math.sqrt(var / N)
    mu4 = (high - low) ** 4 / 80
    # bfloat16 rounds every value by up to 2**-8 relative: allow for it in the variance.
    slack = 0.02 if dtype is ow.bfloat16 else 0
    assert abs(x.var() - var) < 5 * math.sqrt((mu4 - var**2) / N) + slack


@pytest.mark.parametrize("dtype", FLOATS)
def test_normal_statistics(dtype):
    mean, std = 2.0, 3.0
    x = P.normal([N], mean, std, 77, 5, dtype=dtype, device="cpu").numpy().astype(np.float64)
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(N)
    slack = 0.1 if dtype is ow.bfloat16 else 0
    assert abs(x.var() - std**2) < 5 * std**2 * math.sqrt(2 / N) + slack
    assert np.isfinite(x).all()


@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9, 1.0])
def test_bernoulli_statistics(p):
    x = P.bernoulli(ow.from_numpy(np.full(N, p, np.float32)), 5, 0).numpy()
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert abs(x.mean() - p) <= 5 * math.sqrt(p * (1 - p) / N)


@pytest.mark.parametrize("dtype", INTS + [ow.float32, ow.float64])
def test_randint_statistics(dtype):
    low, high = (0, 7) if dtype is ow.uint8 else (-3, 4)
    x = P.randint([N], low, high, 3, 9, dtype=dtype, device="cpu").numpy()
    assert x.dtype == dtype.numpy
    assert sorted(np.unique(x).tolist()) == list(range(low, high))
    var = ((high - low) ** 2 - 1) / 12
    assert abs(x.astype(np.float64).mean() - (low + high - 1) / 2) < 5 * math.sqrt(var / N)


def test_randint_bool_and_huge_ranges():
    b = P.randint([1000], 0, 2, 1, 0, dtype=ow.bool, device="cpu").numpy()
    assert b.dtype == np.bool_ and b.any() and not b.all()
    x = P.randint([1000], -(2**63), 2**63, 1, 0, dtype=ow.int64, device="cpu").numpy()
    assert (x < 0).any() and (x > 0).any()


@pytest.mark.parametrize("dtype", [ow.int64, ow.int32, ow.int16, ow.float32, ow.float64])
def test_randperm_is_a_permutation(dtype):
    x = P.randperm(N // 10, 8, 0, dtype=dtype, device="cpu").numpy()
    assert x.dtype == dtype.numpy
    np.testing.assert_array_equal(np.sort(x), np.arange(N // 10))


def test_uniform_interval_is_half_open_after_rounding():
    one_ulp = 1 + 2**-7  # the bfloat16 value after 1.0
    x = P.uniform([4096], 1.0, one_ulp, 0, 0, dtype=ow.bfloat16, device="cpu").numpy()
    assert (x == ml_dtypes.bfloat16(1.0)).all()
    y = P.uniform([4096], 0.0, 1e-45, 0, 0, dtype=ow.float16, device="cpu").numpy().astype(np.float64)
    assert (y < 1e-45).all() and (y <= 0).all()
    z = P.uniform([8], 2.5, 2.5, 0, 0, dtype=ow.float32, device="cpu").numpy()
    assert (z == 2.5).all()


# --- meta ------------------------------------------------------------------------------------------


@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 4), max_size=3), dtype=st.sampled_from(FLOATS))
def test_meta_matches_cpu(shape, dtype):
    pairs = [
        lambda dev: P.random_bits(shape, 1, 0, device=dev),
        lambda dev: P.uniform(shape, 0, 1, 1, 0, dtype=dtype, device=dev),
        lambda dev: P.normal(shape, 0, 1, 1, 0, dtype=dtype, device=dev),
        lambda dev: P.randint(shape, 0, 5, 1, 0, dtype=ow.int16, device=dev),
        lambda dev: P.randperm(sum(shape), 1, 0, dtype=ow.int32, device=dev),
    ]
    for call in pairs:
        m, c = call("meta"), call("cpu")
        assert m.device.type == "meta" and m.dtype == c.dtype and tuple(m.shape) == tuple(c.shape)
    pm = P.empty_strided(shape, [1] * len(shape), dtype=dtype, device="meta")
    out = P.bernoulli(pm, 0, 0)
    assert out.device.type == "meta" and out.dtype == dtype and tuple(out.shape) == tuple(shape)


def test_tags():
    for name in ["random_bits", "uniform", "normal", "randint", "randperm"]:
        assert {"random", "nondeterministic_seeded", "factory"} <= getattr(P, name).default.tags
    assert {"random", "nondeterministic_seeded"} <= P.bernoulli.default.tags
    assert "factory" not in P.bernoulli.default.tags


# --- errors ----------------------------------------------------------------------------------------


def _err(exc, name, fn):
    with pytest.raises(exc, match=f"prims::{name}"):
        fn()


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_errors(device):
    f32, i32 = ow.float32, ow.int32
    _err(ValueError, "randint", lambda: P.randint([2], 5, 5, 0, 0, dtype=i32, device=device))
    _err(ValueError, "randint", lambda: P.randint([2], 0, 300, 0, 0, dtype=ow.uint8, device=device))
    _err(ValueError, "randint", lambda: P.randint([2], 0, 3, 0, 0, dtype=ow.bool, device=device))
    _err(TypeError, "randint", lambda: P.randint([2], 0, 3, 0, 0, dtype=ow.complex64, device=device))
    _err(ValueError, "uniform", lambda: P.uniform([2], 1.0, 0.0, 0, 0, dtype=f32, device=device))
    _err(ValueError, "uniform", lambda: P.uniform([2], 0.0, math.inf, 0, 0, dtype=f32, device=device))
    _err(ValueError, "uniform", lambda: P.uniform([2], 0.0, 1e6, 0, 0, dtype=ow.float16, device=device))
    _err(TypeError, "uniform", lambda: P.uniform([2], 0.0, 1.0, 0, 0, dtype=i32, device=device))
    _err(TypeError, "uniform", lambda: P.uniform([2], 0.0, 1j, 0, 0, dtype=f32, device=device))
    _err(ValueError, "normal", lambda: P.normal([2], 0.0, -1.0, 0, 0, dtype=f32, device=device))
    _err(TypeError, "normal", lambda: P.normal([2], 0.0, 1.0, 0, 0, dtype=ow.complex64, device=device))
    _err(ValueError, "random_bits", lambda: P.random_bits([2], 0, -1, device=device))
    _err(ValueError, "random_bits", lambda: P.random_bits([2], 0, 2**64, device=device))
    _err(ValueError, "random_bits", lambda: P.random_bits([-1], 0, 0, device=device))
    _err(ValueError, "randperm", lambda: P.randperm(-1, 0, 0, dtype=ow.int64, device=device))
    _err(ValueError, "randperm", lambda: P.randperm(300, 0, 0, dtype=ow.uint8, device=device))
    _err(TypeError, "randperm", lambda: P.randperm(3, 0, 0, dtype=ow.bool, device=device))


def test_bernoulli_errors():
    _err(TypeError, "bernoulli", lambda: P.bernoulli(ow.tensor([1, 0]), 0, 0))
    _err(TypeError, "bernoulli", lambda: P.bernoulli(ow.from_numpy(np.array([0.5j])), 0, 0))
    _err(ValueError, "bernoulli", lambda: P.bernoulli(ow.from_numpy(np.array([0.5, 1.5])), 0, 0))
    _err(ValueError, "bernoulli", lambda: P.bernoulli(ow.from_numpy(np.array([np.nan])), 0, 0))
