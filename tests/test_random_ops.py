"""Seeded RNG and the canonical random ops: generators, seeds and states, fork_rng, the offset advance
rule, bit-identity across backends (CPU vs the toy device), distributions, dtypes/shapes/devices, meta, errors.

Oracles: a plain-Python Philox4x32-10 written here (the values of the first elements), the
documented advance rule written out as numbers, NumPy statistics with explicit 5-sigma bounds.
"""

from __future__ import annotations

import copy
import math
import pickle
import threading

import numpy as np
import opweave as ow
import pytest
import toy_backend
from hypothesis import given, settings
from hypothesis import strategies as st

if "toy" not in {s.name for s in ow.backends.status(load_all=False) if s.loaded}:
    ow.backends.register_plugin(toy_backend, name="toy")

M32 = 0xFFFFFFFF
N = 20_000  # sample size of the distribution checks (bounds are 5 sigma)


@pytest.fixture(autouse=True)
def _keep_global_rng():
    """Every test leaves the default generators as it found them."""
    with ow.random.fork_rng():
        yield


# -- an independent reference: Philox4x32-10 on Python ints -----------------------------------------


def philox_block(counter: int, seed: int) -> list[int]:
    """The four words of counter block ``counter`` under ``seed`` (Random123's philox4x32_R(10))."""
    c = [(counter >> (32 * j)) & M32 for j in range(4)]
    seed %= 2**64
    k0, k1 = seed & M32, seed >> 32
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c[3] ^ k1) & M32, p0 & M32]
    return c


def first_uniform24(seed: int, offset: int) -> float:
    """The first float32 ``rand`` value drawn at (seed, offset): 24 bits of word 0."""
    return (philox_block(offset, seed)[0] >> 8) * 2.0**-24


def gen(seed=0, device="cpu"):
    return ow.Generator(device).manual_seed(seed)


def bits(t) -> bytes:
    """The exact bytes of a tensor's values (any device), row-major."""
    return np.ascontiguousarray(t.cpu().numpy()).tobytes()


# -- generators, seeds, states -----------------------------------------------------------------------


def test_generator_defaults_and_attributes():
    g = ow.Generator()
    assert g.device == ow.device("cpu") and g.initial_seed() == 67280421310721 and g.get_offset() == 0
    assert ow.Generator(device="toy").device.type == "toy"
    assert g.manual_seed(3) is g and g.initial_seed() == 3
    assert g.manual_seed(-1).initial_seed() == 2**64 - 1, "negative seeds wrap to uint64 as in PyTorch"
    s = g.seed()
    assert g.initial_seed() == s and 0 <= s < 2**64 and g.get_offset() == 0


def test_manual_seed_returns_cpu_generator_and_seeds_every_device():
    toy_default = ow.random.default_generator("toy")
    g = ow.manual_seed(123)
    assert g is ow.random.default_generator("cpu") and g is ow.random.default_generator()
    assert ow.initial_seed() == 123 and toy_default.initial_seed() == 123 and toy_default.get_offset() == 0
    assert ow.random.default_generator("toy:0") is toy_default
    s = ow.seed()
    assert ow.initial_seed() == s and toy_default.initial_seed() == s


def test_default_generator_created_after_manual_seed_uses_that_seed():
    ow.manual_seed(77)
    ow.random.default_generator("meta")  # created lazily (or existing): seeded 77
    assert ow.random.default_generator("meta").initial_seed() == 77


def test_same_seed_same_values_and_successive_calls_differ():
    ow.manual_seed(2024)
    a, b = ow.rand(100), ow.rand(100)
    ow.manual_seed(2024)
    c, d = ow.rand(100), ow.rand(100)
    assert bits(a) == bits(c) and bits(b) == bits(d)
    assert bits(a) != bits(b), "successive calls draw fresh counter blocks"
    ow.manual_seed(2025)
    assert bits(ow.rand(100)) != bits(a)


def test_values_follow_the_philox_reference_and_the_advance_rule():
    g = gen(987654321)
    first = ow.rand(5, generator=g)  # float32: 1 word each -> 2 blocks
    assert first[0].item() == first_uniform24(987654321, 0)
    assert [first[i].item() for i in range(4)] == [(w >> 8) * 2.0**-24 for w in philox_block(0, 987654321)]
    assert first[4].item() == (philox_block(1, 987654321)[0] >> 8) * 2.0**-24
    assert g.get_offset() == 2
    second = ow.rand(1, generator=g)
    assert second.item() == first_uniform24(987654321, 2), "the next call starts at the next unused block"


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(-(2**63), 2**64 - 1), offset=st.integers(0, 2**64 - 1))
def test_any_seed_and_offset_match_the_reference(seed, offset):
    g = ow.Generator().manual_seed(seed).set_offset(offset)
    assert ow.rand(1, generator=g).item() == first_uniform24(seed, offset)
    assert g.get_offset() == (offset + 1) % 2**64


def test_state_format_is_seed_then_offset_little_endian():
    g = gen(0x0102030405060708).set_offset(0x1122)
    state = g.get_state()
    assert state.dtype == ow.uint8 and state.device == ow.device("cpu") and tuple(state.shape) == (16,)
    assert state.tolist() == [8, 7, 6, 5, 4, 3, 2, 1, 0x22, 0x11, 0, 0, 0, 0, 0, 0]
    other = ow.Generator().set_state(ow.tensor(state.tolist(), dtype=ow.uint8))
    assert other.initial_seed() == 0x0102030405060708 and other.get_offset() == 0x1122


def test_state_save_and_restore_replays():
    g = gen(5)
    ow.randn(3, generator=g)
    saved = g.get_state()
    a = ow.randn(10, generator=g)
    b = ow.randint(0, 100, (10,), generator=g)
    g.set_state(saved)
    assert bits(ow.randn(10, generator=g)) == bits(a)
    assert bits(ow.randint(0, 100, (10,), generator=g)) == bits(b)
    ow.manual_seed(1)
    cpu_state = ow.get_rng_state()
    x = ow.rand(7)
    ow.set_rng_state(cpu_state)
    assert bits(ow.rand(7)) == bits(x)


def test_generator_pickles_and_deep_copies():
    g = gen(44)
    ow.rand(3, generator=g)
    for clone in (pickle.loads(pickle.dumps(g)), copy.deepcopy(g)):
        assert clone is not g and clone.device == g.device
        assert clone.initial_seed() == 44 and clone.get_offset() == g.get_offset() == 1
        assert bits(ow.rand(6, generator=clone)) == bits(ow.rand(6, generator=gen(44).set_offset(1)))
    assert g.get_offset() == 1, "drawing from a copy leaves the original alone"


def test_different_offsets_differ():
    a = ow.rand(8, generator=gen(9).set_offset(0))
    b = ow.rand(8, generator=gen(9).set_offset(2))
    c = ow.rand(8, generator=gen(9).set_offset(1))
    assert bits(a) != bits(b)
    assert bits(a)[16:] == bits(c)[:16], "offset 1 starts where the second block of offset 0 starts"


def test_generator_is_thread_safe():
    g = gen(11)
    results, lock = [], threading.Lock()

    def work():
        for _ in range(40):
            value = ow.rand(4, generator=g)  # exactly one block per call
            with lock:
                results.append(bits(value))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert g.get_offset() == 240
    expected = {bits(ow.rand(4, generator=gen(11).set_offset(k))) for k in range(240)}
    assert set(results) == expected and len(results) == 240, "every block handed out exactly once"


# -- fork_rng ---------------------------------------------------------------------------------------


def test_fork_rng_restores_states():
    ow.manual_seed(42)
    ow.random.default_generator("toy")
    expected_cpu = bits(ow.rand(5))
    expected_toy = bits(ow.rand(5, device="toy"))
    ow.manual_seed(42)
    with ow.random.fork_rng():
        ow.rand(100)
        ow.rand(3, device="toy")
        ow.manual_seed(7)
        ow.randn(10)
    assert ow.initial_seed() == 42
    assert bits(ow.rand(5)) == expected_cpu and bits(ow.rand(5, device="toy")) == expected_toy


def test_fork_rng_restores_on_exception_and_with_devices():
    ow.manual_seed(3)
    before = (ow.random.default_generator("cpu").get_offset(), ow.random.default_generator("toy").get_offset())
    with pytest.raises(KeyError):
        with ow.random.fork_rng(devices=["toy"]):
            ow.rand(9)
            ow.rand(9, device="toy")
            raise KeyError("boom")
    after = (ow.random.default_generator("cpu").get_offset(), ow.random.default_generator("toy").get_offset())
    assert after == before


def test_fork_rng_nests_and_can_be_disabled():
    ow.manual_seed(8)
    with ow.random.fork_rng():
        ow.rand(4)
        with ow.random.fork_rng():
            ow.rand(40)
        assert ow.random.default_generator().get_offset() == 1
    assert ow.random.default_generator().get_offset() == 0
    with ow.random.fork_rng(enabled=False):
        ow.rand(4)
    assert ow.random.default_generator().get_offset() == 1, "enabled=False restores nothing"


# -- the advance rule ---------------------------------------------------------------------------------


def ceil_div(a, b):
    return -(-a // b)


ADVANCE = {
    "rand f32": (lambda n, g: ow.rand(n, generator=g), lambda n: ceil_div(n, 4)),
    "rand f16": (lambda n, g: ow.rand(n, generator=g, dtype=ow.float16), lambda n: ceil_div(n, 4)),
    "rand f64": (lambda n, g: ow.rand(n, generator=g, dtype=ow.float64), lambda n: ceil_div(n, 2)),
    "rand c64": (lambda n, g: ow.rand(n, generator=g, dtype=ow.complex64), lambda n: ceil_div(2 * n, 4)),
    "randn": (lambda n, g: ow.randn(n, generator=g), lambda n: ceil_div(n, 2)),
    "randn c128": (lambda n, g: ow.randn(n, generator=g, dtype=ow.complex128), lambda n: n),
    "randint": (lambda n, g: ow.randint(3, 9, (n,), generator=g), lambda n: ceil_div(n, 2)),
    "randperm": (lambda n, g: ow.randperm(n, generator=g), lambda n: ceil_div(n, 2)),
    "bernoulli f32": (lambda n, g: ow.bernoulli(ow.full((n,), 0.5), generator=g), lambda n: ceil_div(n, 4)),
    "bernoulli f64": (
        lambda n, g: ow.bernoulli(ow.full((n,), 0.5, dtype=ow.float64), generator=g),
        lambda n: ceil_div(n, 2),
    ),
    "bernoulli.p int": (lambda n, g: ow.zeros(n, dtype=ow.int32).bernoulli(0.5, generator=g), lambda n: ceil_div(n, 4)),
    "uniform_ f64": (lambda n, g: ow.empty(n, dtype=ow.float64).uniform_(generator=g), lambda n: ceil_div(n, 2)),
    "exponential_": (lambda n, g: ow.empty(n).exponential_(generator=g), lambda n: ceil_div(n, 4)),
    "random_": (lambda n, g: ow.empty(n).random_(generator=g), lambda n: ceil_div(n, 2)),
    "multinomial repl": (
        lambda n, g: ow.multinomial(ow.ones(3), n, True, generator=g) if n else None,
        lambda n: ceil_div(n, 2),
    ),
    "multinomial no repl": (
        lambda n, g: ow.multinomial(ow.ones(n), n, generator=g) if n else None,
        lambda n: ceil_div(n, 4),
    ),
    "normal tensors": (lambda n, g: ow.normal(ow.zeros(n), ow.ones(n), generator=g), lambda n: ceil_div(n, 2)),
}


@settings(max_examples=20, deadline=None)
@given(name=st.sampled_from(sorted(ADVANCE)), n=st.integers(0, 37), start=st.integers(0, 1000))
def test_offset_advances_by_the_blocks_consumed(name, n, start):
    call, blocks = ADVANCE[name]
    g = gen(1).set_offset(start)
    call(n, g)
    assert g.get_offset() == start + blocks(n)


def test_meta_and_dropout_eval_draw_nothing():
    g = gen(1)
    ow.rand(100, generator=g, device="meta")
    ow.bernoulli(ow.ones(10, device="meta"), generator=g)
    ow.dropout(ow.ones(10), 0.5, False)
    assert g.get_offset() == 0
    before = ow.random.default_generator().get_offset()
    ow.dropout(ow.ones(10), 0.5, False)
    ow.randn(3, 0, device="meta")
    assert ow.random.default_generator().get_offset() == before


# -- bit-identity across backends -----------------------------------------------------------------------


def _pair(seed):
    return gen(seed, "cpu"), gen(seed, "toy")


TOY_OPS = {
    "rand": lambda d, g, dt: ow.rand(3, 5, generator=g, dtype=dt, device=d),
    "randn": lambda d, g, dt: ow.randn(7, generator=g, dtype=dt, device=d),
    "normal": lambda d, g, dt: ow.normal(-2.0, 3.0, (2, 3), generator=g, dtype=dt, device=d),
    "rand_like": lambda d, g, dt: ow.rand_like(ow.ones(4, 2, dtype=dt, device=d), generator=g),
    "randn_like": lambda d, g, dt: ow.randn_like(ow.ones(5, dtype=dt, device=d), generator=g),
    "bernoulli": lambda d, g, dt: ow.bernoulli(ow.full((9,), 0.4, dtype=dt, device=d), generator=g),
    "bernoulli.p": lambda d, g, dt: ow.bernoulli(ow.zeros(9, dtype=dt, device=d), 0.3, generator=g),
    "randint": lambda d, g, dt: ow.randint(-5, 40, (11,), generator=g, dtype=dt, device=d),
    "randint_like": lambda d, g, dt: ow.randint_like(ow.ones(6, dtype=dt, device=d), 2, 9, generator=g),
    "randperm": lambda d, g, dt: ow.randperm(13, generator=g, dtype=dt, device=d),
}


@settings(max_examples=30, deadline=None)
@given(
    name=st.sampled_from(sorted(TOY_OPS)),
    dtype=st.sampled_from([ow.float16, ow.bfloat16, ow.float32, ow.float64]),
    seed=st.integers(0, 2**64 - 1),
    offset=st.integers(0, 2**40),
)
def test_toy_device_matches_cpu_bit_for_bit(name, dtype, seed, offset):
    g_cpu, g_toy = _pair(seed)
    g_cpu.set_offset(offset)
    g_toy.set_offset(offset)
    on_cpu = TOY_OPS[name]("cpu", g_cpu, dtype)
    on_toy = TOY_OPS[name]("toy", g_toy, dtype)
    assert on_toy.device.type == "toy" and on_cpu.device.type == "cpu"
    assert on_toy.dtype == on_cpu.dtype and on_toy.shape == on_cpu.shape
    assert bits(on_toy) == bits(on_cpu)
    assert g_toy.get_offset() == g_cpu.get_offset() > offset


def test_default_generators_give_the_same_values_on_cpu_and_toy():
    ow.manual_seed(31337)
    on_toy = [ow.rand(6, device="toy"), ow.randn(5, device="toy"), ow.randperm(8, device="toy")]
    ow.manual_seed(31337)
    on_cpu = [ow.rand(6), ow.randn(5), ow.randperm(8)]
    assert [bits(t) for t in on_toy] == [bits(t) for t in on_cpu]
    assert toy_backend.CALLS["prims::uniform"] > 0 and toy_backend.CALLS["prims::randperm"] > 0


# -- distributions (5 sigma) ----------------------------------------------------------------------------


def check_mean_var(x, mean, var, fourth_central):
    """Sample mean and variance within 5 sigma of ``mean``/``var`` (``fourth_central`` = E[(X - mean)^4])."""
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    assert abs(x.mean() - mean) <= 5 * math.sqrt(var / n), (x.mean(), mean)
    assert abs(x.var() - var) <= 5 * math.sqrt((fourth_central - var**2) / n), (x.var(), var)


@pytest.mark.parametrize("dtype", [ow.float16, ow.bfloat16, ow.float32, ow.float64])
def test_rand_is_uniform(dtype):
    x = ow.rand(N, generator=gen(1), dtype=dtype).numpy().astype(np.float64)
    assert x.min() >= 0 and x.max() < 1
    check_mean_var(x, 0.5, 1 / 12, 1 / 80)


def test_uniform_inplace_range_and_moments():
    a, b = -3.0, 5.0
    x = ow.empty(N, dtype=ow.float64).uniform_(a, b, generator=gen(2)).numpy()
    assert x.min() >= a and x.max() < b
    w = b - a
    check_mean_var(x, (a + b) / 2, w**2 / 12, w**4 / 80)


@pytest.mark.parametrize("dtype", [ow.float32, ow.float64])
def test_randn_and_normal_are_normal(dtype):
    check_mean_var(ow.randn(N, generator=gen(3), dtype=dtype).numpy(), 0.0, 1.0, 3.0)
    check_mean_var(ow.normal(2.0, 0.5, (N,), generator=gen(4), dtype=dtype).numpy(), 2.0, 0.25, 3 * 0.25**2)
    check_mean_var(ow.empty(N, dtype=dtype).normal_(-1.0, 3.0, generator=gen(5)).numpy(), -1.0, 9.0, 3 * 81.0)


def test_randn_complex_parts_have_half_variance():
    z = ow.randn(N, generator=gen(6), dtype=ow.complex64).numpy()
    check_mean_var(z.real, 0.0, 0.5, 3 * 0.25)
    check_mean_var(z.imag, 0.0, 0.5, 3 * 0.25)


def test_normal_with_tensor_mean_and_std():
    means = ow.tensor([-5.0, 0.0, 5.0]).repeat(N // 3)
    stds = ow.tensor([0.5, 1.0, 2.0]).repeat(N // 3)
    x = ow.normal(means, stds, generator=gen(7)).numpy().reshape(-1, 3)
    for j, (m, s) in enumerate([(-5.0, 0.5), (0.0, 1.0), (5.0, 2.0)]):
        check_mean_var(x[:, j], m, s * s, 3 * s**4)
    exact = ow.normal(ow.tensor([1.5, -2.0]), ow.zeros(2), generator=gen(8))
    assert exact.tolist() == [1.5, -2.0], "std 0 gives the mean exactly"
    check_mean_var(ow.normal(ow.full((N,), 3.0), 2.0, generator=gen(9)).numpy(), 3.0, 4.0, 48.0)
    check_mean_var(ow.normal(-1.0, ow.full((N,), 0.5), generator=gen(10)).numpy(), -1.0, 0.25, 3 * 0.0625)


@pytest.mark.parametrize("lambd", [0.5, 2.0])
def test_exponential(lambd):
    x = ow.empty(N, dtype=ow.float64).exponential_(lambd, generator=gen(11)).numpy()
    assert x.min() >= 0
    check_mean_var(x, 1 / lambd, 1 / lambd**2, 9 / lambd**4)


def test_cauchy_quartiles():
    median, sigma = 1.0, 2.0
    x = ow.empty(N, dtype=ow.float64).cauchy_(median, sigma, generator=gen(12)).numpy()
    bound = 5 * math.sqrt(0.25 / N)
    assert abs((x < median).mean() - 0.5) <= bound
    assert abs((np.abs(x - median) < sigma).mean() - 0.5) <= bound, "the quartiles are median -+ sigma"


def test_log_normal():
    x = ow.empty(N, dtype=ow.float64).log_normal_(0.5, 0.25, generator=gen(13)).numpy()
    assert x.min() > 0
    check_mean_var(np.log(x), 0.5, 0.0625, 3 * 0.0625**2)


@pytest.mark.parametrize("dtype", [ow.int64, ow.float32])
def test_geometric(dtype):
    p = 0.3
    x = ow.empty(N, dtype=dtype).geometric_(p, generator=gen(14)).numpy().astype(np.float64)
    assert x.min() >= 1 and np.all(x == np.round(x))
    var = (1 - p) / p**2
    assert abs(x.mean() - 1 / p) <= 5 * math.sqrt(var / N)
    assert abs((x == 1).mean() - p) <= 5 * math.sqrt(p * (1 - p) / N)


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_bernoulli_rate(p):
    x = ow.bernoulli(ow.full((N,), p), generator=gen(15)).numpy()
    assert set(np.unique(x)) <= {0.0, 1.0}
    assert abs(x.mean() - p) <= 5 * math.sqrt(p * (1 - p) / N)
    y = ow.zeros(N, dtype=ow.uint8).bernoulli_(p, generator=gen(16)).numpy()
    assert y.dtype == np.uint8 and abs(y.mean() - p) <= 5 * math.sqrt(p * (1 - p) / N)


def test_bernoulli_tensor_p_broadcasts():
    p = ow.tensor([0.1, 0.9])
    x = ow.zeros(N // 2, 2).bernoulli_(p, generator=gen(17)).numpy()
    for j, pj in enumerate([0.1, 0.9]):
        assert abs(x[:, j].mean() - pj) <= 5 * math.sqrt(pj * (1 - pj) / (N // 2))


@pytest.mark.parametrize("low, high, dtype", [(0, 10, ow.int64), (-7, 3, ow.int8), (250, 256, ow.uint8)])
def test_randint_range_and_coverage(low, high, dtype):
    x = ow.randint(low, high, (N,), generator=gen(18), dtype=dtype).numpy().astype(np.int64)
    assert x.min() >= low and x.max() < high
    counts = np.bincount(x - low, minlength=high - low)
    assert counts.size == high - low and np.all(counts > 0)
    q = 1 / (high - low)
    assert np.all(np.abs(counts - N * q) <= 5 * math.sqrt(N * q * (1 - q)))


@pytest.mark.parametrize(
    "dtype, expected_max",
    [(ow.uint8, 255), (ow.int8, 127), (ow.bool, 1), (ow.float16, 2**11), (ow.int64, 2**63 - 1)],
)
def test_random_inplace_default_ranges(dtype, expected_max):
    x = ow.empty(N, dtype=dtype).random_(generator=gen(19)).numpy().astype(np.float64)
    assert x.min() >= 0 and x.max() <= expected_max and np.all(x == np.round(x))
    if expected_max < 300:
        assert x.max() == expected_max, "the top of the range is reached"
    y = ow.empty(N, dtype=dtype).random_(2, generator=gen(20)).numpy()
    assert set(np.unique(y.astype(np.int64))) == {0, 1}
    if dtype is not ow.bool:
        z = ow.empty(N, dtype=dtype).random_(1, 3, generator=gen(21)).numpy()
        assert set(np.unique(z.astype(np.int64))) == {1, 2}


def test_random_from_without_to_reaches_the_dtype_max():
    x = ow.empty(N, dtype=ow.int8).random_(120, None, generator=gen(22)).numpy()
    assert set(np.unique(x).tolist()) == set(range(120, 128))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(0, 300), seed=st.integers(0, 2**64 - 1))
def test_randperm_is_a_permutation(n, seed):
    x = ow.randperm(n, generator=gen(seed))
    assert x.dtype == ow.int64 and tuple(x.shape) == (n,)
    assert sorted(x.tolist()) == list(range(n))


def test_randperm_positions_are_uniform():
    rows = np.stack([ow.randperm(4, generator=gen(s)).numpy() for s in range(2000)])
    first = np.bincount(rows[:, 0], minlength=4)
    assert np.all(np.abs(first - 500) <= 5 * math.sqrt(2000 * 0.25 * 0.75))


def test_multinomial_with_replacement_frequencies():
    p = np.array([0.1, 0.2, 0.0, 0.3, 0.4])
    x = ow.multinomial(ow.tensor(p * 7.0), N, True, generator=gen(23)).numpy()  # weights need not sum to 1
    counts = np.bincount(x, minlength=5)
    assert counts[2] == 0, "a zero-weight category is never drawn"
    assert np.all(np.abs(counts - N * p) <= 5 * np.sqrt(N * p * (1 - p)))


def test_multinomial_without_replacement_is_sequential_sampling():
    p = np.array([0.5, 0.25, 0.15, 0.1, 0.0])
    probs = ow.tensor(p, dtype=ow.float32).expand(N, 5).contiguous()
    x = ow.multinomial(probs, 3, generator=gen(24)).numpy()
    assert x.shape == (N, 3) and x.dtype == np.int64
    assert all(len(set(row)) == 3 for row in x.tolist()), "no repeats without replacement"
    assert not np.any(x == 4), "a zero-weight category is not drawn while others remain"
    first = np.bincount(x[:, 0], minlength=5)
    assert np.all(np.abs(first - N * p) <= 5 * np.sqrt(N * p * (1 - p)))
    # P(second = j) = sum_{i != j} p_i p_j / (1 - p_i)
    q = np.array([sum(p[i] * p[j] / (1 - p[i]) for i in range(5) if i != j) for j in range(5)])
    second = np.bincount(x[:, 1], minlength=5)
    assert np.all(np.abs(second - N * q) <= 5 * np.sqrt(N * q * (1 - q)))


def test_multinomial_all_categories_and_1d():
    x = ow.multinomial(ow.tensor([1.0, 0.0, 2.0]), 3, generator=gen(25))
    assert tuple(x.shape) == (3,) and sorted(x.tolist()) == [0, 1, 2]
    assert x.tolist()[2] == 1, "the zero-weight category comes last"


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_multinomial_out_must_be_int64(dtype):
    out = ow.full((3,), 7, dtype=getattr(ow, dtype))
    with pytest.raises(RuntimeError, match="multinomial"):
        ow.multinomial(ow.tensor([1.0, 0.0, 2.0]), 3, out=out)
    assert out.tolist() == [7, 7, 7], "a refused out= is left as it was"
    out = ow.empty((0,), dtype=ow.int64)
    assert ow.multinomial(ow.tensor([1.0, 0.0, 2.0]), 2, out=out, generator=gen(27)) is out
    assert out.shape == (2,) and 1 not in out.tolist()


def test_dropout_zero_rate_and_scale():
    p = 0.3
    x = ow.dropout(ow.ones(N), p, True).numpy()
    kept = np.float32(1) / np.float32(1 - p)
    assert set(np.unique(x).tolist()) == {0.0, float(kept)}
    assert abs((x == 0).mean() - p) <= 5 * math.sqrt(p * (1 - p) / N)
    inp = ow.randn(50)
    assert ow.dropout(inp, p, False) is inp, "eval mode returns the input itself, as torch"
    assert ow.dropout(inp, 1.0, True).tolist() == [0.0] * 50
    y = ow.ones(100)
    assert ow.dropout_(y, 0.5, True) is y and set(np.unique(y.numpy()).tolist()) <= {0.0, 2.0}


def test_native_dropout_and_alpha_dropout():
    x = ow.randn(N, generator=gen(26))
    out, mask = ow.native_dropout(x, 0.25, True)
    assert mask.dtype == ow.bool and out.dtype == x.dtype
    m = mask.numpy()
    assert abs(m.mean() - 0.75) <= 5 * math.sqrt(0.75 * 0.25 / N)
    np.testing.assert_array_equal(out.numpy()[~m], 0)
    np.testing.assert_allclose(out.numpy()[m], x.numpy()[m] / 0.75, rtol=1e-6)
    p, alpha = 0.2, 1.7580993408473766
    a = 1 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    y = ow.alpha_dropout(x, p, True).numpy()
    kept = np.isclose(y, a * x.numpy() + alpha * a * p, rtol=1e-5, atol=1e-6)
    dropped = np.isclose(y, alpha * a * (p - 1), rtol=1e-6)
    assert np.all(kept | dropped)
    assert abs(dropped.mean() - p) <= 5 * math.sqrt(p * (1 - p) / N)


# -- dtypes, shapes, devices, layouts, out= ---------------------------------------------------------------


def test_factory_dtypes_shapes_and_devices(restore_default_dtype):
    assert ow.rand(2, 3).dtype == ow.float32 and tuple(ow.rand(2, 3).shape) == (2, 3)
    assert ow.rand([]).shape == () and ow.rand(0).numel() == 0
    assert ow.randint(5, (4,)).dtype == ow.int64 and ow.randperm(5).dtype == ow.int64
    assert ow.randint(0, 2, (4,), dtype=ow.bool).dtype == ow.bool
    assert ow.randperm(5, dtype=ow.float32).dtype == ow.float32
    assert ow.multinomial(ow.ones(2, 3), 2).dtype == ow.int64
    ow.set_default_dtype(ow.float64)
    assert ow.rand(3).dtype == ow.float64 and ow.randn(3).dtype == ow.float64
    assert ow.normal(0.0, 1.0, (2,)).dtype == ow.float64
    with ow.device("meta"):
        assert ow.rand(3).device.type == "meta" and ow.randint(3, (2,)).device.type == "meta"
    assert ow.rand(3, device="toy").device == ow.device("toy:0")


def test_like_ops_follow_self():
    x = ow.empty(2, 3, dtype=ow.float64)
    assert ow.rand_like(x).dtype == ow.float64 and ow.randn_like(x).shape == x.shape
    assert ow.randint_like(ow.empty(4, dtype=ow.int16), 7).dtype == ow.int16
    assert ow.rand_like(x, dtype=ow.float16).dtype == ow.float16
    assert ow.rand_like(x, device="meta").device.type == "meta"
    channels_last = ow.empty(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    y = ow.rand_like(channels_last, generator=gen(27))
    assert y.stride() == channels_last.stride(), "preserve_format keeps a dense layout"
    assert bits(y.contiguous()) == bits(ow.rand(2, 3, 4, 5, generator=gen(27))), "values in row-major order"


def test_inplace_ops_return_self_and_fill_in_row_major_order():
    x = ow.empty(4, 3).t()  # non-contiguous
    assert x.uniform_(generator=gen(28)) is x
    assert bits(x) == bits(ow.rand(3, 4, generator=gen(28)))
    y = ow.zeros(3, 4)
    assert y.normal_(generator=gen(29)) is y and bits(y) == bits(ow.randn(3, 4, generator=gen(29)))
    for method, args in [("exponential_", ()), ("cauchy_", ()), ("log_normal_", ()), ("geometric_", (0.5,))]:
        z = ow.zeros(5)
        assert getattr(z, method)(*args) is z


def test_out_variants_use_out_dtype():
    out = ow.empty(5, dtype=ow.float64)
    assert ow.rand(5, generator=gen(30), out=out) is out
    assert bits(out) == bits(ow.rand(5, generator=gen(30), dtype=ow.float64))
    iout = ow.empty(6, dtype=ow.int32)
    ow.randint(0, 9, (6,), generator=gen(31), out=iout)
    assert bits(iout) == bits(ow.randint(0, 9, (6,), generator=gen(31), dtype=ow.int32))
    pout = ow.empty(0, dtype=ow.int64)
    ow.randperm(4, out=pout)
    assert sorted(pout.tolist()) == [0, 1, 2, 3]


def test_rand_complex():
    z = ow.rand(N, generator=gen(32), dtype=ow.complex128).numpy()
    for part in (z.real, z.imag):
        assert part.min() >= 0 and part.max() < 1
        check_mean_var(part, 0.5, 1 / 12, 1 / 80)


def test_meta_device_gives_shapes_with_any_generator():
    g = gen(1)
    m = ow.ones(3, 4, device="meta")
    cases = [
        (ow.rand(2, 3, generator=g, device="meta"), (2, 3), ow.float32),
        (ow.randn_like(m, generator=g), (3, 4), ow.float32),
        (ow.randint(0, 5, (7,), generator=g, device="meta"), (7,), ow.int64),
        (ow.randperm(6, generator=g, device="meta"), (6,), ow.int64),
        (ow.bernoulli(m, generator=g), (3, 4), ow.float32),
        (ow.multinomial(m, 2, generator=g), (3, 2), ow.int64),
        (ow.multinomial(m, 9, True, generator=g), (3, 9), ow.int64),
        (ow.normal(m, m, generator=g), (3, 4), ow.float32),
        (m.clone().uniform_(generator=g), (3, 4), ow.float32),
        (ow.dropout(m, 0.5, True), (3, 4), ow.float32),
    ]
    for t, shape, dtype in cases:
        assert t.device.type == "meta" and tuple(t.shape) == shape and t.dtype == dtype
    assert g.get_offset() == 0


def test_ops_are_tagged_seeded():
    names = ["rand", "randn", "randint.low", "randperm", "bernoulli.p", "multinomial", "uniform_", "normal_", "dropout"]
    for name in names:
        assert "nondeterministic_seeded" in ow.ops.lookup(name).tags, name


# -- errors -------------------------------------------------------------------------------------------------


def test_generator_device_mismatch_names_op_and_devices():
    with pytest.raises(RuntimeError, match=r"rand:.*'cpu'.*'toy"):
        ow.rand(3, generator=gen(1, "toy"))
    with pytest.raises(RuntimeError, match=r"randn:.*'toy'.*'cpu'"):
        ow.randn(3, device="toy", generator=gen(1))
    with pytest.raises(RuntimeError, match=r"bernoulli:.*toy.*cpu"):
        ow.bernoulli(ow.full((3,), 0.5, device="toy"), generator=gen(1))
    with pytest.raises(TypeError, match="generator"):
        ow.rand(3, generator=5)


def test_seed_and_state_errors():
    with pytest.raises(ValueError, match="seed"):
        ow.manual_seed(2**64)
    with pytest.raises(TypeError, match="seed"):
        ow.manual_seed(1.5)
    with pytest.raises(ValueError, match="16 bytes"):
        ow.Generator().set_state(ow.zeros(8, dtype=ow.uint8))
    with pytest.raises(TypeError, match="uint8"):
        ow.Generator().set_state(ow.zeros(16))
    with pytest.raises(TypeError, match="Tensor"):
        ow.set_rng_state(b"0" * 16)
    with pytest.raises(ValueError, match="offset"):
        ow.Generator().set_offset(-1)
    with pytest.raises(RuntimeError, match="nosuchdevice"):
        ow.Generator("nosuchdevice")


@pytest.mark.parametrize(
    "call, exc, pattern",
    [
        (lambda: ow.rand(3, dtype=ow.int64), TypeError, "rand: expected a floating"),
        (lambda: ow.randn(3, dtype=ow.bool), TypeError, "randn"),
        (lambda: ow.rand(-1), ValueError, "negative dimension"),
        (lambda: ow.randint(5, 5, (2,)), ValueError, "randint: expects 'from' to be less than 'to'"),
        (lambda: ow.randint(0, 300, (2,), dtype=ow.uint8), ValueError, "out of bounds for uint8"),
        (lambda: ow.randint(-1, 3, (2,), dtype=ow.uint8), ValueError, "out of bounds"),
        (lambda: ow.randint(0, 3, (2,), dtype=ow.complex64), TypeError, "randint"),
        (lambda: ow.randperm(-1), ValueError, "randperm: n must be non-negative"),
        (lambda: ow.randperm(300, dtype=ow.int8), ValueError, "too large"),
        (lambda: ow.bernoulli(ow.zeros(3), 1.5), ValueError, "bernoulli: expects 0 <= p <= 1"),
        (lambda: ow.bernoulli(ow.full((3,), 1.5)), ValueError, "0 <= p <= 1"),
        (lambda: ow.bernoulli(ow.ones(3, dtype=ow.int64)), TypeError, "bernoulli"),
        (lambda: ow.zeros(3).bernoulli_(ow.zeros(4)), ValueError, "bernoulli"),
        (lambda: ow.normal(0.0, -1.0, (3,)), ValueError, "normal: expects std >= 0.0"),
        (lambda: ow.normal(ow.zeros(3), ow.tensor([1.0, -1.0, 1.0])), ValueError, "std >= 0.0"),
        (lambda: ow.normal(ow.zeros(3, dtype=ow.int64), 1.0), TypeError, "normal"),
        (lambda: ow.zeros(3).normal_(0.0, -2.0), ValueError, "std >= 0.0"),
        (lambda: ow.zeros(3).uniform_(2.0, 1.0), ValueError, "uniform: expects to return a \\[from, to\\) range"),
        (lambda: ow.zeros(3).uniform_(0.0, math.inf), ValueError, "finite"),
        (lambda: ow.zeros(3, dtype=ow.float16).uniform_(0.0, 1e6), ValueError, "range of float16"),
        (lambda: ow.zeros(3, dtype=ow.int32).uniform_(), TypeError, "uniform"),
        (lambda: ow.zeros(3).exponential_(0.0), ValueError, "exponential: expects lambda > 0.0"),
        (lambda: ow.zeros(3).cauchy_(0.0, -1.0), ValueError, "sigma > 0.0"),
        (lambda: ow.zeros(3).log_normal_(0.0, 0.0), ValueError, "std > 0.0"),
        (lambda: ow.zeros(3).geometric_(1.0), ValueError, "geometric: expects p to be in \\(0, 1\\)"),
        (lambda: ow.zeros(3).random_(3, 3), ValueError, "random_: expects 'from' to be less than 'to'"),
        (lambda: ow.zeros(3, dtype=ow.int8).random_(200), ValueError, "out of bounds for int8"),
        (lambda: ow.zeros(3, dtype=ow.complex64).random_(), TypeError, "random_"),
        (lambda: ow.dropout(ow.ones(3), 1.5, True), ValueError, "dropout: dropout probability has to be between"),
        (lambda: ow.dropout(ow.ones(3), -0.1, False), ValueError, "between 0 and 1"),
        (lambda: ow.dropout(ow.ones(3, dtype=ow.int64), 0.5, True), TypeError, "dropout"),
        (lambda: ow.multinomial(ow.ones(2, 2, 2), 1), ValueError, "multinomial: prob_dist must be 1 or 2 dim"),
        (lambda: ow.multinomial(ow.ones(3, dtype=ow.int64), 1), TypeError, "floating-point"),
        (lambda: ow.multinomial(ow.ones(3), 0), ValueError, "num_samples <= 0"),
        (lambda: ow.multinomial(ow.ones(3), 4), ValueError, "without replacement"),
        (lambda: ow.multinomial(ow.tensor([0.5, -0.1]), 1), ValueError, "`inf`, `nan` or element < 0"),
        (lambda: ow.multinomial(ow.tensor([0.5, math.inf]), 1, True), ValueError, "`inf`, `nan`"),
        (lambda: ow.multinomial(ow.tensor([0.5, math.nan]), 1), ValueError, "`inf`, `nan`"),
        (lambda: ow.multinomial(ow.tensor([[1.0, 1.0], [0.0, 0.0]]), 1, True), ValueError, "sum of probabilities"),
        (lambda: ow.multinomial(ow.zeros(3), 2), ValueError, "sum of probabilities <= 0"),
    ],
)
def test_errors(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_invalid_calls_do_not_write_or_advance():
    x = ow.ones(3)
    g = gen(1)
    with pytest.raises(ValueError):
        x.uniform_(3.0, 1.0, generator=g)
    with pytest.raises(ValueError):
        ow.multinomial(ow.tensor([0.5, -1.0]), 1, generator=g)
    assert x.tolist() == [1.0, 1.0, 1.0] and g.get_offset() == 0
