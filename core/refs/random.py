"""Random canonical ops: factories (rand, randn, randint, randperm), in-place samplers, bernoulli,
normal, multinomial and dropout.

Every random value comes from the random prims (Philox4x32-10, :mod:`opweave._philox`). An op
takes ``(seed, offset)`` from its generator — the ``generator=`` argument, else the default
generator of the op's device — and advances it by the counter blocks its prims consume
(:func:`opweave._random.philox_blocks`), so one seed gives bit-identical draws on every
backend that implements the random prims. Values are numbered in row-major order of the
result's shape whatever its strides; complex results draw their (real, imaginary) pairs as
a trailing dim of 2. A generator on another device type than the op raises RuntimeError;
on the meta device nothing is drawn (the generator is neither checked against the device
nor advanced) and only shapes are produced.

Deviations from PyTorch: the schemas' ``from`` argument is spelled ``from_`` (``from`` is a
Python keyword; PyTorch's Python binding only accepts it positionally too); the streams
differ from PyTorch's (Philox with this module's mapping, not mt19937), so a seed gives
different numbers than in PyTorch; ``randint``/``randint_like`` accept ``generator=`` in
one overload instead of separate ``.generator`` overloads.
"""

from __future__ import annotations

import math

from .. import _dtype, _random
from .._ops import define, lookup, prims
from .._pinned import with_pinning
from .._tensor import Tensor, contiguous_strides
from ._shapes import check_layout, check_sizes, factory_device, numel, scalar, strides_for
from ._utils import (
    _variant_schema,
    broadcast_shapes,
    broadcast_to,
    common_device,
    define_with_variants,
    to_device,
    to_dtype,
    write_out,
)

F16, BF16, F32, F64 = _dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64
FLOAT = frozenset({F16, BF16, F32, F64})
COMPLEX = frozenset({_dtype.complex64, _dtype.complex128})
INT = frozenset({_dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64})
BOOL = frozenset({_dtype.bool_})
# Integers a float dtype holds exactly: [-2**digits, 2**digits] (PyTorch's random_ bounds).
_FLOAT_DIGITS = {F16: 11, BF16: 8, F32: 24, F64: 53}

SEEDED = ("nondeterministic_seeded",)
SEEDED_FACTORY = ("nondeterministic_seeded", "factory")


# -- helpers ------------------------------------------------------------------------------


def _draw(op: str, generator, device, prim: str, n: int, dtype=None) -> tuple[int, int]:
    """``(seed, offset)`` for one call of random prim ``prim`` drawing ``n`` values (advances the generator)."""
    return _random.claim(op, generator, device, _random.philox_blocks(prim, n, dtype))


def _check_floating(op: str, dtype, complex_ok: bool = True) -> None:
    if dtype in FLOAT or (complex_ok and dtype in COMPLEX):
        return
    kinds = "floating point or complex" if complex_ok else "floating point"
    raise TypeError(f"{op}: expected a {kinds} dtype, got {dtype.name}")


def _default_float(dtype):
    return _dtype.get_default_dtype() if dtype is None else dtype


def _long(dtype):
    """The schema default ``long`` (or None) as int64."""
    return _dtype.int64 if dtype is None or dtype == "long" else dtype


def _compute(dtype):
    """The dtype random values are computed in for a result of ``dtype``: float64 for float64, else float32."""
    return F64 if dtype is F64 else F32


def _uniform_values(op, shape, low, high, dtype, device, generator) -> Tensor:
    """Uniform ``[low, high)`` values of ``shape`` (complex: real and imaginary parts each uniform)."""
    if dtype in COMPLEX:
        pairs = _uniform_values(op, [*shape, 2], low, high, dtype.to_real(), device, generator)
        return prims.view_as_complex(pairs)
    seed, offset = _draw(op, generator, device, "uniform", numel(shape), dtype)
    return prims.uniform(list(shape), low, high, seed, offset, dtype=dtype, device=device)


def _normal_values(op, shape, mean, std, dtype, device, generator) -> Tensor:
    """Normal values of ``shape`` (complex: parts each with mean ``mean`` and std ``std / sqrt(2)``, as torch)."""
    if dtype in COMPLEX:
        pairs = _normal_values(op, [*shape, 2], mean, std / math.sqrt(2.0), dtype.to_real(), device, generator)
        return prims.view_as_complex(pairs)
    seed, offset = _draw(op, generator, device, "normal", numel(shape))
    return prims.normal(list(shape), mean, std, seed, offset, dtype=dtype, device=device)


def _unit(op, self: Tensor, generator) -> Tensor:
    """Uniform [0, 1) values shaped like ``self`` in its computation dtype (53 bits for float64, else 24)."""
    return _uniform_values(op, self.shape, 0.0, 1.0, _compute(self.dtype), self.device, generator)


def _place(values: Tensor, strides) -> Tensor:
    """``values`` laid out with ``strides`` (itself when they are the contiguous ones)."""
    if tuple(strides) == tuple(contiguous_strides(values.shape)):
        return values
    out = prims.empty_strided(list(values.shape), list(strides), dtype=values.dtype, device=values.device)
    prims.copy_to(out, values)
    return out


def _all(t: Tensor) -> bool:
    """Whether every element of the bool tensor ``t`` is true (reads one value from the device)."""
    return bool(prims.item(prims.all(t, None)))


def _c(value, like: Tensor) -> Tensor:
    return scalar(value, like)


def _real_arg(op: str, name: str, value) -> float:
    """A float argument that must be finite (ValueError naming the op and argument otherwise)."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{op}: argument '{name}' must be finite, got {value}")
    return value


def _int_bounds(dtype) -> tuple[int, int]:
    """The smallest and largest integer random ops may produce in ``dtype`` (inclusive)."""
    if dtype is _dtype.bool_:
        return 0, 1
    if dtype in INT:
        info = _dtype.iinfo(dtype)
        return int(info.min), int(info.max)
    digits = _FLOAT_DIGITS[dtype]
    return -(2**digits), 2**digits


def _check_int_dtype(op: str, dtype) -> None:
    if dtype not in INT | FLOAT | BOOL:
        raise TypeError(f"{op}: dtype {dtype.name} is not supported (integer, bool or floating point dtypes only)")


def _check_range(op: str, low: int, high: int, dtype) -> None:
    """PyTorch's checks of an integer range ``[low, high)`` for ``dtype``."""
    if low >= high:
        raise ValueError(f"{op}: expects 'from' to be less than 'to', but got from={low} >= to={high}")
    lo, hi = _int_bounds(dtype)
    if low < lo or low > hi:
        raise ValueError(f"{op}: from={low} is out of bounds for {dtype.name}")
    if high - 1 > hi:
        raise ValueError(f"{op}: to - 1 = {high - 1} is out of bounds for {dtype.name}")


def _integers(op, shape, low, high, dtype, device, generator) -> Tensor:
    """Uniform integers in ``[low, high)`` of ``dtype`` (checked), via ``prims.randint``."""
    _check_int_dtype(op, dtype)
    _check_range(op, low, high, dtype)
    seed, offset = _draw(op, generator, device, "randint", numel(shape))
    return prims.randint(list(shape), low, high, seed, offset, dtype=dtype, device=device)


# -- factories ------------------------------------------------------------------------------


def rand(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """Uniform values in [0, 1) of shape ``size`` (default dtype unless given; floating or complex)."""
    shape = check_sizes("rand", size)
    check_layout("rand", layout, pin_memory)
    dtype = _default_float(dtype)
    _check_floating("rand", dtype)
    return _uniform_values("rand", shape, 0.0, 1.0, dtype, factory_device(device), generator)


def randn(size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """Standard normal values of shape ``size`` (complex: each part has variance 1/2)."""
    shape = check_sizes("randn", size)
    check_layout("randn", layout, pin_memory)
    dtype = _default_float(dtype)
    _check_floating("randn", dtype)
    return _normal_values("randn", shape, 0.0, 1.0, dtype, factory_device(device), generator)


def _like(op, self, dtype, layout, device, pin_memory, memory_format):
    check_layout(op, layout, pin_memory)
    dtype = self.dtype if dtype is None else dtype
    strides = strides_for(op, self.shape, memory_format, like=self)
    return dtype, factory_device(device, self), strides


def rand_like(self, generator=None, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """``rand`` with ``self``'s shape, dtype, device and (preserved) layout unless given."""
    dtype, dev, strides = _like("rand_like", self, dtype, layout, device, pin_memory, memory_format)
    _check_floating("rand_like", dtype)
    return _place(_uniform_values("rand_like", self.shape, 0.0, 1.0, dtype, dev, generator), strides)


def randn_like(self, generator=None, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """``randn`` with ``self``'s shape, dtype, device and (preserved) layout unless given."""
    dtype, dev, strides = _like("randn_like", self, dtype, layout, device, pin_memory, memory_format)
    _check_floating("randn_like", dtype)
    return _place(_normal_values("randn_like", self.shape, 0.0, 1.0, dtype, dev, generator), strides)


def randint_low(low, high, size, generator=None, dtype="long", layout=None, device=None, pin_memory=None):
    """Uniform integers in ``[low, high)`` of shape ``size`` (int64 unless given; bool and floats allowed)."""
    shape = check_sizes("randint", size)
    check_layout("randint", layout, pin_memory)
    return _integers("randint", shape, low, high, _long(dtype), factory_device(device), generator)


def randint(high, size, generator=None, dtype="long", layout=None, device=None, pin_memory=None):
    """Uniform integers in ``[0, high)`` of shape ``size`` (int64 unless given)."""
    return randint_low(0, high, size, generator, dtype, layout, device, pin_memory)


def randint_like_low_dtype(
    self, low, high, generator=None, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None
):
    """Uniform integers in ``[low, high)`` with ``self``'s shape, dtype and device unless given."""
    dtype, dev, strides = _like("randint_like", self, dtype, layout, device, pin_memory, memory_format)
    return _place(_integers("randint_like", self.shape, low, high, dtype, dev, generator), strides)


def randint_like(self, high, generator=None, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    """Uniform integers in ``[0, high)`` with ``self``'s shape, dtype and device unless given."""
    return randint_like_low_dtype(self, 0, high, generator, dtype, layout, device, pin_memory, memory_format)


def randperm(n, generator=None, dtype="long", layout=None, device=None, pin_memory=None):
    """A random permutation of ``0 .. n-1`` (int64 unless given; integer or floating dtypes that hold n - 1)."""
    op = "randperm"
    if n < 0:
        raise ValueError(f"{op}: n must be non-negative, got {n}")
    dtype = _long(dtype)
    check_layout(op, layout, pin_memory)
    if dtype not in INT | FLOAT:
        raise TypeError(f"{op}: dtype {dtype.name} is not supported (integer or floating point dtypes only)")
    if n > 1 and n - 1 > _int_bounds(dtype)[1]:
        raise ValueError(f"{op}: n={n} is too large for result tensor type {dtype.name}")
    dev = factory_device(device)
    seed, offset = _draw(op, generator, dev, "randperm", n)
    return prims.randperm(n, seed, offset, dtype=dtype, device=dev)


def normal_float_float(mean, std, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    """Normal values ``mean + std * z`` of shape ``size`` (default dtype unless given); ValueError if std < 0."""
    op = "normal"
    shape = check_sizes(op, size)
    check_layout(op, layout, pin_memory)
    mean, std = _real_arg(op, "mean", mean), _real_arg(op, "std", std)
    if std < 0:
        raise ValueError(f"{op}: expects std >= 0.0, but found std {std}")
    dtype = _default_float(dtype)
    _check_floating(op, dtype)
    return _normal_values(op, shape, mean, std, dtype, factory_device(device), generator)


# -- normal with tensor arguments --------------------------------------------------------------


def _check_std(op: str, std: Tensor) -> None:
    """ValueError unless every element of ``std`` is >= 0 (nan fails too); reads the data, not on meta."""
    if std.device.type != "meta" and std.numel() and not _all(prims.ge(std, _c(0, std))):
        raise ValueError(f"{op}: expects all elements of std >= 0.0")


def _normal_tensor(op, mean, std, generator, result_dtype):
    """``mean + std * z`` with z standard normal of the broadcast shape, computed in opmath, rounded once."""
    compute = _dtype.opmath_dtype(result_dtype)
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    device = common_device(tensors)
    shape = broadcast_shapes(op, *(t.shape for t in tensors))
    z = _normal_values(op, shape, 0.0, 1.0, compute, device, generator)

    def operand(value):
        if isinstance(value, Tensor):
            return broadcast_to(to_device(to_dtype(value, compute), device), shape)
        return _c(value, z)

    out = prims.add(prims.mul(z, operand(std)), operand(mean))
    return to_dtype(out, result_dtype)


def normal_tensor_float(mean, std=1.0, generator=None):
    """Normal values with per-element ``mean`` (a floating tensor) and one ``std``; result has mean's dtype."""
    op = "normal"
    _check_floating(op, mean.dtype, complex_ok=False)
    std = _real_arg(op, "std", std)
    if std < 0:
        raise ValueError(f"{op}: expects std >= 0.0, but found std {std}")
    return _normal_tensor(op, mean, std, generator, mean.dtype)


def normal_float_tensor(mean, std, generator=None):
    """Normal values with one ``mean`` and per-element ``std`` (a floating tensor); result has std's dtype."""
    op = "normal"
    _check_floating(op, std.dtype, complex_ok=False)
    _check_std(op, std)
    return _normal_tensor(op, _real_arg(op, "mean", mean), std, generator, std.dtype)


def normal_tensor_tensor(mean, std, generator=None):
    """Normal values with per-element ``mean`` and ``std`` (broadcast); result has mean's dtype."""
    op = "normal"
    _check_floating(op, mean.dtype, complex_ok=False)
    _check_floating(op, std.dtype, complex_ok=False)
    _check_std(op, std)
    return _normal_tensor(op, mean, std, generator, mean.dtype)


# -- bernoulli --------------------------------------------------------------------------------


def _check_p(op: str, p: float) -> float:
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: expects 0 <= p <= 1, but got p={p}")
    return p


def bernoulli(self, generator=None):
    """0/1 draws with probabilities ``self`` (a floating tensor; same dtype). ValueError for p outside [0, 1]."""
    op = "bernoulli"
    _check_floating(op, self.dtype, complex_ok=False)
    seed, offset = _draw(op, generator, self.device, "bernoulli", self.numel(), self.dtype)
    return prims.bernoulli(self, seed, offset)


def bernoulli_p(self, p, generator=None):
    """0/1 draws with one probability ``p`` in ``self``'s shape and dtype (any real or bool dtype)."""
    op = "bernoulli"
    p = _check_p(op, p)
    if self.dtype in COMPLEX:
        raise TypeError(f"{op}: complex tensors are not supported")
    probs = prims.full(list(self.shape), p, dtype=_compute(self.dtype), device=self.device)
    seed, offset = _draw(op, generator, self.device, "bernoulli", probs.numel(), probs.dtype)
    return to_dtype(prims.bernoulli(probs, seed, offset), self.dtype)


def bernoulli_tensor(self, p, generator=None):
    """0/1 draws in ``self``'s shape and dtype with probabilities ``p`` (floating, broadcast to self's shape)."""
    op = "bernoulli"
    if self.dtype in COMPLEX:
        raise TypeError(f"{op}: complex tensors are not supported")
    _check_floating(op, p.dtype, complex_ok=False)
    shape = broadcast_shapes(op, self.shape, p.shape)
    if tuple(shape) != tuple(self.shape):
        raise ValueError(f"{op}: p of shape {list(p.shape)} cannot be broadcast to self's shape {list(self.shape)}")
    probs = broadcast_to(to_device(p, self.device), self.shape)
    seed, offset = _draw(op, generator, self.device, "bernoulli", self.numel(), probs.dtype)
    return to_dtype(prims.bernoulli(probs, seed, offset), self.dtype)


# -- samplers behind the in-place ops (functional forms) ----------------------------------------


def uniform(self, from_=0.0, to=1.0, generator=None):
    """Values uniform in ``[from_, to)`` shaped like ``self`` (floating or complex dtype)."""
    op = "uniform"
    _check_floating(op, self.dtype)
    low, high = float(from_), float(to)
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"{op}: from and to must be finite, got from={from_} and to={to}")
    if low > high:
        raise ValueError(f"{op}: expects to return a [from, to) range, but found from={low} > to={high}")
    limit = float(_dtype.finfo(self.dtype.to_real() if self.dtype in COMPLEX else self.dtype).max)
    if low < -limit or high > limit:
        raise ValueError(f"{op}: from={low} and to={high} must be within the range of {self.dtype.name}")
    if high - low > limit:
        raise ValueError(f"{op}: expects to - from <= {limit} for {self.dtype.name}, got to={high} and from={low}")
    return _uniform_values(op, self.shape, low, high, self.dtype, self.device, generator)


def normal_functional(self, mean=0.0, std=1.0, generator=None):
    """Normal values shaped like ``self`` (floating or complex dtype); ValueError if std < 0."""
    op = "normal"
    _check_floating(op, self.dtype)
    mean, std = _real_arg(op, "mean", mean), _real_arg(op, "std", std)
    if std < 0:
        raise ValueError(f"{op}: expects std >= 0.0, but found std {std}")
    return _normal_values(op, self.shape, mean, std, self.dtype, self.device, generator)


def exponential(self, lambd=1.0, generator=None):
    """Exponential values ``-log(1 - u) / lambd`` shaped like ``self`` (floating dtype); ValueError unless lambd > 0."""
    op = "exponential"
    _check_floating(op, self.dtype, complex_ok=False)
    if not float(lambd) > 0:
        raise ValueError(f"{op}: expects lambda > 0.0, but found lambda={lambd}")
    u = _unit(op, self, generator)
    x = prims.div(prims.neg(prims.log1p(prims.neg(u))), _c(float(lambd), u))
    return to_dtype(x, self.dtype)


def cauchy(self, median=0.0, sigma=1.0, generator=None):
    """Cauchy values ``median + sigma * tan(pi * (u - 1/2))`` shaped like ``self``; ValueError unless sigma > 0."""
    op = "cauchy"
    _check_floating(op, self.dtype, complex_ok=False)
    median, sigma = _real_arg(op, "median", median), _real_arg(op, "sigma", sigma)
    if not sigma > 0:
        raise ValueError(f"{op}: expects sigma > 0.0, but found sigma={sigma}")
    u = _unit(op, self, generator)
    t = prims.tan(prims.mul(prims.sub(u, _c(0.5, u)), _c(math.pi, u)))
    return to_dtype(prims.add(prims.mul(t, _c(sigma, u)), _c(median, u)), self.dtype)


def log_normal(self, mean=1.0, std=2.0, generator=None):
    """``exp`` of normal values with ``mean`` and ``std`` shaped like ``self``; ValueError unless std > 0."""
    op = "log_normal"
    _check_floating(op, self.dtype, complex_ok=False)
    mean, std = _real_arg(op, "mean", mean), _real_arg(op, "std", std)
    if not std > 0:
        raise ValueError(f"{op}: expects std > 0.0, but found std={std}")
    z = _normal_values(op, self.shape, mean, std, _compute(self.dtype), self.device, generator)
    return to_dtype(prims.exp(z), self.dtype)


def geometric(self, p, generator=None):
    """Geometric values (trials until the first success, >= 1) ``ceil(log(1 - u) / log(1 - p))``; p in (0, 1)."""
    op = "geometric"
    if self.dtype not in INT | FLOAT:
        raise TypeError(f"{op}: dtype {self.dtype.name} is not supported (integer or floating point dtypes only)")
    p = float(p)
    if not 0.0 < p < 1.0:
        raise ValueError(f"{op}: expects p to be in (0, 1), but got p={p}")
    u = _unit(op, self, generator)
    x = prims.ceil(prims.div(prims.log1p(prims.neg(u)), _c(math.log1p(-p), u)))
    return to_dtype(prims.maximum(x, _c(1.0, u)), self.dtype)


def random_from(self, from_, to=None, generator=None):
    """Integers uniform in ``[from_, to)`` in ``self``'s shape and dtype; ``to=None``: up to the dtype's largest
    integer (inclusive; ``2**mantissa digits`` for floating dtypes)."""
    op = "random_"
    _check_int_dtype(op, self.dtype)
    high = _int_bounds(self.dtype)[1] + 1 if to is None else to
    return _integers(op, self.shape, from_, high, self.dtype, self.device, generator)


def random_to(self, to, generator=None):
    """Integers uniform in ``[0, to)`` in ``self``'s shape and dtype."""
    return random_from(self, 0, to, generator)


def random(self, generator=None):
    """Integers uniform in ``[0, max]``: the dtype's largest value (bool: 1; floats: ``2**mantissa digits``)."""
    return random_from(self, 0, None, generator)


# -- multinomial --------------------------------------------------------------------------------


def multinomial(self, num_samples, replacement=False, generator=None):
    """Indices (int64) sampled from the rows of ``self`` (1-D or 2-D non-negative weights, not normalised).

    With replacement: inverse-CDF sampling (float64 cumulative sums, one uniform per sample);
    without: Gumbel-top-k (``argtopk(p / q)`` with ``q ~ Exp(1)`` per category), which is
    sequential sampling without replacement. Categories with weight 0 are never drawn while
    others remain.
    """
    op = "multinomial"
    if self.ndim not in (1, 2):
        raise ValueError(f"{op}: prob_dist must be 1 or 2 dim, got {self.ndim} dims")
    if self.dtype not in FLOAT:
        raise TypeError(f"{op}: only supports floating-point dtypes for input, got {self.dtype.name}")
    if num_samples <= 0:
        raise ValueError(f"{op}: cannot sample num_samples <= 0 samples (got {num_samples})")
    n_cat = self.shape[-1]
    if not replacement and num_samples > n_cat:
        raise ValueError(
            f"{op}: cannot sample num_samples > prob_dist.size(-1) samples without replacement "
            f"({num_samples} > {n_cat})"
        )
    if n_cat == 0:
        raise ValueError(f"{op}: invalid multinomial distribution (sum of probabilities <= 0): no categories")
    if n_cat > 2**24:
        raise ValueError(f"{op}: number of categories cannot exceed 2^24, got {n_cat}")
    last = self.ndim - 1
    out_shape = [num_samples] if self.ndim == 1 else [self.shape[0], num_samples]
    compute = F64 if replacement else _compute(self.dtype)
    probs = to_dtype(self, compute)
    if self.device.type != "meta" and self.numel():
        valid = prims.logical_and(prims.isfinite(probs), prims.ge(probs, _c(0.0, probs)))
        if not _all(valid):
            raise ValueError(f"{op}: probability tensor contains either `inf`, `nan` or element < 0")
    if self.device.type != "meta" and self.shape[0] != 0:
        sums = prims.sum(probs, [last])
        if not _all(prims.gt(sums, _c(0.0, sums))):
            raise ValueError(f"{op}: invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement:
        cdf = prims.cumsum(probs, last)
        total = prims.slice_in_dim(cdf, n_cat - 1, n_cat, 1, last)
        u = _uniform_values(op, out_shape, 0.0, 1.0, F64, self.device, generator)
        x = prims.mul(u, broadcast_to(total, out_shape))
        return prims.searchsorted(cdf, x, True)
    q = _uniform_values(op, self.shape, 0.0, 1.0, compute, self.device, generator)
    q = prims.neg(prims.log1p(prims.neg(q)))  # Exp(1)
    q = prims.maximum(q, _c(float(_dtype.finfo(compute).tiny), q))
    return prims.topk(prims.div(probs, q), num_samples, last, True, True)[1]


# -- dropout --------------------------------------------------------------------------------------


def _check_dropout(op: str, input, p: float) -> float:
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    _check_floating(op, input.dtype, complex_ok=False)
    return p


def _keep_mask(op: str, input, p: float, generator=None) -> Tensor:
    """1 (kept, probability 1 - p) / 0 in ``input``'s dtype."""
    probs = prims.full(list(input.shape), 1.0 - p, dtype=_compute(input.dtype), device=input.device)
    seed, offset = _draw(op, generator, input.device, "bernoulli", probs.numel(), probs.dtype)
    return to_dtype(prims.bernoulli(probs, seed, offset), input.dtype)


def _times(input, other) -> Tensor:
    """``input * other`` computed in opmath and rounded once to ``input``'s dtype."""
    compute = _dtype.opmath_dtype(input.dtype)
    return to_dtype(prims.mul(to_dtype(input, compute), to_dtype(other, compute)), input.dtype)


def dropout(input, p, train):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` (``train``; else ``input``).

    As PyTorch: ``p == 1`` gives ``input * 0`` (zeros for finite inputs); ValueError for p outside [0, 1].
    """
    op = "dropout"
    p = _check_dropout(op, input, p)
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return _times(input, _c(0.0, input))
    mask = to_dtype(_keep_mask(op, input, p), _compute(input.dtype))
    noise = to_dtype(prims.div(mask, _c(1.0 - p, mask)), input.dtype)  # torch: noise.div_(1 - p) in input's dtype
    return _times(input, noise)


_ALPHA = 1.7580993408473766  # -scale * alpha of SELU


def alpha_dropout(input, p, train):
    """Dropout that keeps SELU's mean and variance: dropped elements become ``-alpha'``, then an affine map."""
    op = "alpha_dropout"
    p = _check_dropout(op, input, p)
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return _times(input, _c(0.0, input))
    compute = _dtype.opmath_dtype(input.dtype)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1.0) * (1.0 - p))
    mask = to_dtype(_keep_mask(op, input, p), compute)
    b = prims.add(prims.mul(prims.sub(mask, _c(1.0, mask)), _c(_ALPHA * a, mask)), _c(_ALPHA * a * p, mask))
    out = prims.add(prims.mul(to_dtype(input, compute), prims.mul(mask, _c(a, mask))), b)
    return to_dtype(out, input.dtype)


def native_dropout(input, p, train):
    """``(output, mask)``: dropout's output and the bool keep mask (``train=False``: a copy and all-true)."""
    op = "native_dropout"
    p = _check_dropout(op, input, p)
    if train is False:
        return prims.clone(input), prims.full(list(input.shape), True, dtype=_dtype.bool_, device=input.device)
    mask = _keep_mask(op, input, p)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    out = _times(input, prims.mul(mask, _c(scale, mask)))
    return out, to_dtype(mask, _dtype.bool_)


# -- in-place ops written by hand ------------------------------------------------------------------


def _inplace_from(functional_name: str):
    """An in-place kernel: compute with the functional op (through dispatch), then copy into ``self``."""

    def kernel(self, *rest):
        result = lookup(functional_name).call_bound(self, *rest)
        prims.copy_to(self, result)
        return self

    return kernel


def _factory_out(functional):
    """The ``out=`` kernel of a factory: dtype and device default to ``out``'s, then checked and copied."""
    names = [a.name for a in functional.schema.arguments]
    n_args = len(names)
    i_dtype, i_device = names.index("dtype"), names.index("device")

    def kernel(*args):
        out = args[n_args]
        if not isinstance(out, Tensor):
            raise TypeError(f"{functional.name}: argument 'out' must be Tensor, not {type(out).__name__}")
        args = list(args[:n_args])
        if args[i_dtype] is None or args[i_dtype] == "long":
            args[i_dtype] = out.dtype
        if args[i_device] is None:
            args[i_device] = out.device
        write_out(functional.name, out, functional.call_bound(*args))
        return out

    return kernel


def _define_factory(schema: str, fn) -> None:
    functional = define(schema, fn, tags=SEEDED_FACTORY)
    out_tags = SEEDED_FACTORY + ("generated", "out")
    op = define(_variant_schema(functional, "out"), _factory_out(functional), tags=out_tags)
    op.functional, op.variant = functional, "out"


_F = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_FL = "ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_G = "Generator? generator=None"
_MF = "MemoryFormat? memory_format=None"

FACTORIES = [
    (f"rand(SymInt[] size, *, {_G}, {_F}) -> Tensor", rand),
    (f"randn(SymInt[] size, *, {_G}, {_F}) -> Tensor", randn),
    # .low first: an overload binds only if its arguments fit, and randint(0, 10, size=...) must not
    # bind randint(high, size) with size given twice.
    (f"randint.low(SymInt low, SymInt high, SymInt[] size, *, {_G}, {_FL}) -> Tensor", randint_low),
    (f"randint(SymInt high, SymInt[] size, *, {_G}, {_FL}) -> Tensor", randint),
    (f"randperm(SymInt n, *, {_G}, {_FL}) -> Tensor", randperm),
    (f"normal.float_float(float mean, float std, SymInt[] size, *, {_G}, {_F}) -> Tensor", normal_float_float),
]

OPS = [
    # (schema, decomposition, in-place variant, out variant[, extra tags])
    (f"rand_like(Tensor self, *, {_G}, {_F}, {_MF}) -> Tensor", rand_like, False, False),
    (f"randn_like(Tensor self, *, {_G}, {_F}, {_MF}) -> Tensor", randn_like, False, False),
    (
        f"randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, {_G}, {_F}, {_MF}) -> Tensor",
        randint_like_low_dtype,
        False,
        False,
    ),
    (f"randint_like(Tensor self, SymInt high, *, {_G}, {_F}, {_MF}) -> Tensor", randint_like, False, False),
    (f"bernoulli(Tensor self, *, {_G}) -> Tensor", bernoulli, False, True),
    (f"bernoulli.p(Tensor self, float p, *, {_G}) -> Tensor", bernoulli_p, False, False),
    (f"bernoulli.Tensor(Tensor self, Tensor p, *, {_G}) -> Tensor", bernoulli_tensor, True, False),
    (f"normal.Tensor_float(Tensor mean, float std=1, *, {_G}) -> Tensor", normal_tensor_float, False, True),
    (f"normal.float_Tensor(float mean, Tensor std, *, {_G}) -> Tensor", normal_float_tensor, False, True),
    (f"normal.Tensor_Tensor(Tensor mean, Tensor std, *, {_G}) -> Tensor", normal_tensor_tensor, False, True),
    (f"uniform(Tensor self, float from_=0, float to=1, *, {_G}) -> Tensor", uniform, True, False),
    (f"normal_functional(Tensor self, float mean=0, float std=1, *, {_G}) -> Tensor", normal_functional, False, False),
    (f"exponential(Tensor self, float lambd=1, *, {_G}) -> Tensor", exponential, True, False),
    (f"cauchy(Tensor self, float median=0, float sigma=1, *, {_G}) -> Tensor", cauchy, True, False),
    (f"log_normal(Tensor self, float mean=1, float std=2, *, {_G}) -> Tensor", log_normal, True, False),
    (f"geometric(Tensor self, float p, *, {_G}) -> Tensor", geometric, True, False),
    (f"random.from(Tensor self, int from_, int? to, *, {_G}) -> Tensor", random_from, True, False),
    (f"random.to(Tensor self, int to, *, {_G}) -> Tensor", random_to, True, False),
    (f"random(Tensor self, *, {_G}) -> Tensor", random, True, False),
    (
        f"multinomial(Tensor self, int num_samples, bool replacement=False, *, {_G}) -> Tensor",
        multinomial,
        False,
        True,
        ("out_exact_dtype",),  # out= must be int64, as PyTorch's "multinomial expects Long tensor out"
    ),
    ("dropout(Tensor input, float p, bool train) -> Tensor", dropout, True, False),
    ("alpha_dropout(Tensor input, float p, bool train) -> Tensor", alpha_dropout, True, False),
    ("native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", native_dropout, False, False),
]

INPLACE = [
    # (schema, functional op it copies from)
    (f"normal_(Tensor(a!) self, float mean=0, float std=1, *, {_G}) -> Tensor(a!)", "normal_functional"),
    (f"bernoulli_.float(Tensor(a!) self, float p=0.5, *, {_G}) -> Tensor(a!)", "bernoulli.p"),
]


def _define():
    for schema, fn in FACTORIES:
        _define_factory(schema, with_pinning(fn))
    for schema, fn, inplace, out, *extra_tags in OPS:
        tags = SEEDED + (extra_tags[0] if extra_tags else ())
        define_with_variants(schema, with_pinning(fn), tags=tags, inplace=inplace, out=out)
    for schema, functional in INPLACE:
        op = define(schema, _inplace_from(functional), tags=SEEDED + ("inplace",))
        op.functional, op.variant = lookup(functional), "inplace"


_define()
