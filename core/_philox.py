"""Philox4x32-10 and the exact mapping from (seed, offset, element) to random values.

Every backend must produce bit-identical random bits (and, up to the accuracy of
``log``/``sin``/``cos``, identical values) for the random prims. This module is the
specification and the reference implementation, vectorised in NumPy.

Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11;
Random123's ``philox4x32_R(10, ...)``)
    A block cipher on a 128-bit counter ``(c0, c1, c2, c3)`` (four uint32 words) with a
    64-bit key ``(k0, k1)``. One round::

        hi0, lo0 = mulhilo(0xD2511F53, c0)     # 32x32 -> 64-bit product, high and low words
        hi1, lo1 = mulhilo(0xCD9E8D57, c2)
        (c0, c1, c2, c3) = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0)

    Ten rounds; between consecutive rounds the key is bumped:
    ``k0 += 0x9E3779B9; k1 += 0xBB67AE85`` (mod 2**32). The output block is the four words
    after the tenth round.

Seed and offset
    ``seed`` is any Python int, taken modulo 2**64; the key is
    ``(k0, k1) = (seed & 0xffffffff, (seed >> 32) & 0xffffffff)``.
    ``offset`` (0 <= offset < 2**64) is the position of the generator, counted in
    *blocks* of four words. Block ``j`` of a call uses the 128-bit counter
    ``C = offset + j`` stored little-endian in four words:
    ``c0 = C & 0xffffffff, c1 = (C >> 32) & 0xffffffff, c2 = (C >> 64) & 0xffffffff, c3 = C >> 96``
    (so ``c2`` is the carry out of the low 64 bits and ``c3`` is always 0).

The word stream
    A call reads the words of consecutive blocks in order: word ``w`` is lane ``w % 4`` of
    block ``w // 4``. Elements are numbered in row-major (C) order of the output shape
    (for ``bernoulli``, of ``p``'s shape, whatever its strides).

Values (``W`` is the word stream, ``i`` the element number)
    - ``random_bits``: ``W[i]`` (an int64 holding a uint32 value).
    - ``uniform`` (``[low, high)``), with ``u`` in ``[0, 1)``:
        float16 / bfloat16 / float32: ``u = (W[i] >> 8) * 2**-24`` (24 bits);
        float64: ``u = ((W[2i] >> 5) * 2**26 + (W[2i+1] >> 6)) * 2**-53`` (53 bits, two words).
      The value ``low + (high - low) * u`` is computed in float64 and rounded to the dtype
      (round to nearest even); a result that rounds up to ``high`` (possible only when the
      dtype is narrower than float64 or for huge ranges) is replaced by the largest value
      of the dtype below ``high``, so the interval stays half-open.
    - ``normal`` (Box-Muller): element ``i`` uses block ``j = i // 2`` (four words
      ``B0..B3``). ``u1 = ((B0 >> 5) * 2**26 + (B1 >> 6) + 1) * 2**-53`` in ``(0, 1]``,
      ``u2 = ((B2 >> 5) * 2**26 + (B3 >> 6)) * 2**-53`` in ``[0, 1)``,
      ``r = sqrt(-2 log u1)``; even ``i`` gets ``r cos(2 pi u2)``, odd ``i`` gets
      ``r sin(2 pi u2)``. The value ``mean + std * z`` is computed in float64 and rounded
      to the dtype.
    - ``bernoulli``: ``1`` where ``u < p`` else ``0``, with ``u`` the uniform value of
      element ``i`` for ``p``'s dtype (24 bits, or 53 bits from two words for float64);
      the comparison is done in float64.
    - ``randint``: the 64-bit value ``V = W[2i] | W[2i+1] << 32``; the result is
      ``low + V % (high - low)`` (computed exactly; ``high - low <= 2**64``).
    - ``randperm``: the 64-bit keys ``K[i] = W[2i] | W[2i+1] << 32`` for ``i < n``; the
      result is the stable ascending argsort of ``K`` (equal keys keep index order).
"""

from __future__ import annotations

import numpy as np

PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
ROUNDS = 10
_MASK32 = 0xFFFFFFFF
_MASK64 = (1 << 64) - 1

__all__ = [
    "philox4x32",
    "seed_to_key",
    "block_counters",
    "random_words",
    "uniform_unit",
    "uniform_values",
    "normal_values",
    "bernoulli_values",
    "randint_values",
    "randperm_values",
    "check_seed_offset",
]


def _mulhilo(m: int, x: np.ndarray):
    """High and low 32-bit words of the 64-bit product ``m * x`` (``x`` uint32)."""
    prod = np.uint64(m) * x.astype(np.uint64)
    return (prod >> np.uint64(32)).astype(np.uint32), (prod & np.uint64(_MASK32)).astype(np.uint32)


def philox4x32(counter: np.ndarray, key: np.ndarray, rounds: int = ROUNDS) -> np.ndarray:
    """Philox4x32 on counters ``(4, n)`` (uint32) with key ``(2,)`` or ``(2, n)``; returns ``(4, n)`` uint32."""
    c0, c1, c2, c3 = (np.asarray(w, dtype=np.uint32) for w in np.asarray(counter, dtype=np.uint32))
    key = np.asarray(key, dtype=np.uint32)
    k0, k1 = key[0], key[1]
    w0, w1 = np.uint32(PHILOX_W0), np.uint32(PHILOX_W1)
    with np.errstate(over="ignore"):
        for r in range(rounds):
            if r:
                k0, k1 = k0 + w0, k1 + w1
            hi0, lo0 = _mulhilo(PHILOX_M0, c0)
            hi1, lo1 = _mulhilo(PHILOX_M1, c2)
            c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return np.stack([c0, c1, c2, c3])


def seed_to_key(seed: int) -> np.ndarray:
    """The Philox key ``(seed & 0xffffffff, seed >> 32 & 0xffffffff)`` of a seed taken modulo 2**64."""
    s = int(seed) & _MASK64
    return np.array([s & _MASK32, s >> 32], dtype=np.uint32)


def block_counters(offset: int, n_blocks: int) -> np.ndarray:
    """The ``(4, n_blocks)`` uint32 counters ``offset + j`` (128-bit, little-endian words)."""
    j = np.arange(n_blocks, dtype=np.uint64)
    with np.errstate(over="ignore"):
        low = np.uint64(offset) + j
    carry = (low < np.uint64(offset)).astype(np.uint32)
    return np.stack(
        [
            (low & np.uint64(_MASK32)).astype(np.uint32),
            (low >> np.uint64(32)).astype(np.uint32),
            carry,
            np.zeros(n_blocks, dtype=np.uint32),
        ]
    )


def random_words(n_words: int, seed: int, offset: int) -> np.ndarray:
    """The first ``n_words`` words (uint32) of the stream at (seed, offset)."""
    n_blocks = -(-n_words // 4)
    blocks = philox4x32(block_counters(offset, n_blocks), seed_to_key(seed))
    return blocks.T.reshape(-1)[:n_words].copy()


def _words64(n: int, seed: int, offset: int) -> np.ndarray:
    """``W[2i] | W[2i+1] << 32`` for ``i < n`` as uint64."""
    w = random_words(2 * n, seed, offset).astype(np.uint64)
    return w[0::2] | (w[1::2] << np.uint64(32))


def _unit53(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``(a >> 5) * 2**26 + (b >> 6)`` as float64 (an integer below 2**53)."""
    return (a >> np.uint32(5)).astype(np.float64) * 67108864.0 + (b >> np.uint32(6)).astype(np.float64)


def uniform_unit(n: int, seed: int, offset: int, bits53: bool) -> np.ndarray:
    """``n`` float64 values in ``[0, 1)``: 24 bits from one word, or 53 bits from two words."""
    if bits53:
        w = random_words(2 * n, seed, offset)
        return _unit53(w[0::2], w[1::2]) * 2.0**-53
    w = random_words(n, seed, offset)
    return (w >> np.uint32(8)).astype(np.float64) * 2.0**-24


def _below(value: float, np_dtype: np.dtype) -> np.ndarray:
    """The largest value of ``np_dtype`` strictly below the float ``value`` (representable in it)."""
    x = np.array(value, dtype=np_dtype)
    uint = np.dtype(f"u{x.dtype.itemsize}")
    bits = int(x.view(uint))
    sign = 1 << (8 * x.dtype.itemsize - 1)
    if value == 0:
        bits = sign | 1  # the smallest negative subnormal
    elif value > 0:
        bits -= 1
    else:
        bits += 1
    return np.array(bits, dtype=uint).view(x.dtype)


def uniform_values(
    shape: tuple[int, ...], low: float, high: float, seed: int, offset: int, np_dtype: np.dtype
) -> np.ndarray:
    """The ``uniform`` prim's values as an array of ``np_dtype`` (see the module docstring)."""
    n = int(np.prod(shape, dtype=np.int64))
    u = uniform_unit(n, seed, offset, np.dtype(np_dtype) == np.float64)
    v = (low + (high - low) * u).astype(np_dtype)
    if high > low:
        top = np.array(high, dtype=np_dtype)
        limit = top if float(top) < high else _below(float(top), np_dtype)
        v = np.where(v.astype(np.float64) > float(limit), limit, v)
    return v.reshape(shape)


def normal_values(
    shape: tuple[int, ...], mean: float, std: float, seed: int, offset: int, np_dtype: np.dtype
) -> np.ndarray:
    """The ``normal`` prim's values (Box-Muller, see the module docstring)."""
    n = int(np.prod(shape, dtype=np.int64))
    n_pairs = -(-n // 2)
    b = random_words(4 * n_pairs, seed, offset).reshape(n_pairs, 4)
    u1 = (_unit53(b[:, 0], b[:, 1]) + 1.0) * 2.0**-53
    u2 = _unit53(b[:, 2], b[:, 3]) * 2.0**-53
    r = np.sqrt(-2.0 * np.log(u1))
    theta = 2.0 * np.pi * u2
    z = np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1).reshape(-1)[:n]
    return (mean + std * z).astype(np_dtype).reshape(shape)


def bernoulli_values(p: np.ndarray, seed: int, offset: int) -> np.ndarray:
    """``u < p`` (as p's dtype) for the C-order elements of ``p`` (see the module docstring)."""
    u = uniform_unit(p.size, seed, offset, p.dtype == np.float64).reshape(p.shape)
    return (u < p.astype(np.float64)).astype(p.dtype)


def randint_values(shape: tuple[int, ...], low: int, high: int, seed: int, offset: int) -> np.ndarray:
    """``low + V % (high - low)`` as int64 (wrapping) for the C-order elements of ``shape``."""
    n = int(np.prod(shape, dtype=np.int64))
    v = _words64(n, seed, offset)
    if high - low < 1 << 64:
        v = v % np.uint64(high - low)
    with np.errstate(over="ignore"):
        out = v + np.uint64(low & _MASK64)
    return out.view(np.int64).reshape(shape)


def randperm_values(n: int, seed: int, offset: int) -> np.ndarray:
    """A permutation of ``range(n)`` (int64): the stable argsort of ``n`` 64-bit keys."""
    return np.argsort(_words64(n, seed, offset), kind="stable").astype(np.int64)


def check_seed_offset(op: str, seed: int, offset: int) -> None:
    """ValueError unless ``0 <= offset < 2**64`` and ``-2**63 <= seed < 2**64``."""
    if not 0 <= offset <= _MASK64:
        raise ValueError(f"{op}: argument 'offset' must be in [0, 2**64), got {offset}")
    if not -(1 << 63) <= seed <= _MASK64:
        raise ValueError(f"{op}: argument 'seed' must be in [-2**63, 2**64), got {seed}")
