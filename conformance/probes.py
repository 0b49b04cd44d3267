"""Edge-case probes derived from every op's own samples: where vendor kernels go wrong and random samples rarely go.

The op database's samples draw ordinary values (integers in [-9, 10), floats of moderate size),
so four kinds of bug slip through them. For each (op, dtype) the runner adds, after the op's
seeded samples, probes built from those samples (same shapes, same non-probed arguments):

- **integer limits** (:func:`limit_samples`): the integer tensors of arithmetic, reduction, scan,
  matrix, conversion and sorting ops get values at and around the dtype's minimum and maximum. PyTorch wraps
  around (two's complement); the oracle computes in NumPy's integer arithmetic, which wraps
  too, so a saturating kernel, a narrower accumulator or a float accumulator fails;
- **16-bit precision** (:func:`precision_samples`): float16/bfloat16 elementwise ops get values
  in ill-conditioned regions (subnormal and tiny arguments, values next to 1 and -1, near the
  overflow threshold of exp, cancellation between close operands), compared with the oracle
  rounded to the dtype within :data:`PRECISION_ULPS` units in the last place of the result;
- **indices out of range** (:func:`index_error_inputs`): every indexing op and prim gets one
  index just past the dim's size and one negative index beyond what the op accepts; it must
  raise the exception PyTorch raises (:data:`INDEX_RULES`); ops that accept negative indices
  also get in-range negative ones (:func:`negative_index_samples`), whose values are checked;
- **determinism** (:func:`determinism_samples`): floating samples of reductions, scans,
  index accumulation and matrix products with values of widely varying magnitude and both
  signs, where any change of summation order changes the bits; the runner runs them (and every
  ordinary sample) twice and compares the bits (:func:`.checks.check_reproducible`).
"""

from __future__ import annotations

import fnmatch
import math

import numpy as np
import opweave as ow

from .opdb._core import INT, Arr, ErrorInput, SampleInput

#: Tolerance of the 16-bit precision probes: PyTorch computes float16/bfloat16 elementwise ops in
#: float32 and rounds once, so a correct kernel is within one unit in the last place of the result.
PRECISION_ULPS = 1.0

# -- which ops get which probes ------------------------------------------------------------------

ARITHMETIC_FAMILIES = frozenset(
    {
        "elementwise",
        "elementwise.unary",
        "elementwise.binary",
        "elementwise.ternary",
        "pointwise_extra",
        "prims.elementwise_unary",
        "prims.elementwise_binary",
        "prims.elementwise_ternary",
        "reductions",
        "prims.reductions",
        "scans",
        "prims.scans",
        "linalg_basic",
        "prims.linalg",
        "prims.data",  # conversions wrap (int64 -> int16 keeps the low bits)
        "sorting",  # a comparison through float64 cannot order 2**63 - 1 and 2**63 - 2
        "prims.sorting",
    }
)
#: Integer ops whose result at the limits is not a ring operation PyTorch and NumPy agree on
#: (division and its remainders overflow on min / -1, shifts past the width, powers, tolerances).
NO_LIMITS = (
    "*div*",
    "*remainder*",
    "*fmod*",
    "*pow*",
    "*shift*",
    "*gcd*",
    "*lcm*",
    "*isclose*",
    "*allclose*",
    "*mean*",
    "*var*",
    "*std*",
    "*norm*",
    "*dist*",
    "*logsumexp*",
    "*softmax*",
    "*ldexp*",
    "*polynomial*",
)
#: 16-bit ops without a precision probe: polynomials take the degree from a tensor (65504 terms); sinc
#: has a zero at every integer, which every large bfloat16 is; gelu, silu and tanhshrink are core
#: decompositions that round to 16 bits between steps where PyTorch computes in float32 (a known
#: deviation of the core, shared by every backend: see docs/conformance.md); rounding divisions and
#: remainders are discontinuous (close operands put the quotient next to an integer).
NO_PRECISION = (
    "*polynomial*",
    "*sinc*",
    "gelu",
    "silu",
    "tanhshrink",
    "*_mode",
    "*floor_divide*",
    "*remainder*",
    "*fmod*",
)
#: Ops without the special-value probe: at nan/inf/-0.0 the oracle and the CPU reference backend
#: disagree for these (to be settled against PyTorch, op by op; see docs/conformance.md).
NO_SPECIALS = (
    "*polynomial*",
    "*erfinv*",
    "*erf_inv*",
    "*exp2*",
    "log10",
    "log2",
    "prims::log10",
    "prims::log2",
    "*entr*",
    "*log_ndtr*",
    "sinc",
)
#: Ops whose special-value probe leaves out ±max (pattern -> why): at the largest finite value their usual
#: formulas overflow an intermediate where the exact result is finite, and PyTorch gives that overflow too.
#: The oracle (float64 or mpmath) gives the exact value, which no float32 formula PyTorch uses reaches.
NO_MAX = {
    "*lerp*": "start + weight * (end - start): end - start overflows (PyTorch: lerp(max, -max, 0.5) is inf)",
    "*addcmul*": "tensor1 * tensor2 overflows before the sum brings it back (PyTorch too)",
    "*addcdiv*": "tensor1 / tensor2 overflows before the sum brings it back (PyTorch too)",
    "*hardswish*": "x * (x + 3) / 6 overflows (PyTorch: hardswish(max) is inf)",
    "*round*decimals*": "x * 10**d overflows (PyTorch: round(max, decimals=3) is inf)",
    "gelu": "the core's decomposition forms x * (1 + erf(x / sqrt 2)), which overflows (PyTorch keeps max)",
    "*sinc*": "pi * x overflows: sin(pi x) is nan (PyTorch too); the exact value is 0 (every such float is an integer)",
    "*airy_ai*": "Ai(-max) oscillates with phase 2/3 |x|**1.5, beyond any float (PyTorch: nan); Ai(max) underflows",
    "*zeta*": "zeta(inf, q > 1) is Cephes' nan (PyTorch's, the oracle's) but SciPy's 0 once q is huge",
}
PRECISION_FAMILIES = frozenset(
    {
        "elementwise",
        "elementwise.unary",
        "elementwise.binary",
        "elementwise.activation",
        "pointwise_extra",
        "special",
        "prims.elementwise_unary",
        "prims.elementwise_binary",
    }
)
#: Families of the special-value probe: the 16-bit ones and the ternary ops (clamp's bounds, lerp's weight).
SPECIAL_FAMILIES = PRECISION_FAMILIES | {"elementwise.ternary", "prims.elementwise_ternary"}
#: Families whose kernels accumulate (a result that depends on the order of a sum): they get the
#: wide-magnitude determinism probes and the deterministic-mode double run.
ACCUMULATING_FAMILIES = frozenset(
    {
        "reductions",
        "prims.reductions",
        "scans",
        "prims.scans",
        "indexing",
        "prims.indexing",
        "indexing_extra",
        "linalg_basic",
        "prims.linalg",
        "statistics",
        "nn_conv",
        "prims.conv",
        "nn_norm",
        "nn_pool",
    }
)
INDEX_FAMILIES = frozenset({"indexing", "prims.indexing", "indexing_extra"})
SIXTEEN_BIT = ("float16", "bfloat16")


def family(info) -> str:
    """The family of ``info`` (its own, or the module of its op)."""
    from . import opdb

    return info.family or opdb.family_of(info.op)


def accumulates(info) -> bool:
    """Whether ``info``'s kernels may sum in an order (reductions, scans, index accumulation, products)."""
    return info.nondeterministic or "reduction" in info.op.tags or family(info) in ACCUMULATING_FAMILIES


def _matches(name: str, patterns) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


def _named_values(info, sample: SampleInput) -> dict:
    """Argument name -> value of ``sample`` (positional arguments named by the schema)."""
    names = [a.name for a in info.op.schema.arguments]
    out = {names[i]: v for i, v in enumerate(sample.args) if i < len(names)}
    out.update(sample.kwargs)
    if "a" in out and "self" not in out:  # prims call their first tensor ``a``
        out["self"] = out["a"]
    return out


def _rebuild(info, sample: SampleInput, fn, desc: str, ulps=None) -> SampleInput:
    """``sample`` with every :class:`Arr` ``a`` of argument ``name`` replaced by ``fn(name, a)``."""
    names = [a.name for a in info.op.schema.arguments]

    def walk(name, v):
        if isinstance(v, Arr) and type(v) is Arr:
            return fn(name, v)
        if isinstance(v, list):
            return [walk(name, x) for x in v]
        if isinstance(v, tuple):
            return tuple(walk(name, x) for x in v)
        return v

    args = tuple(walk(names[i] if i < len(names) else None, v) for i, v in enumerate(sample.args))
    kwargs = {k: walk(k, v) for k, v in sample.kwargs.items()}
    return SampleInput(args, kwargs, desc, dict(sample.oracle_kwargs), ulps)


def _plain(sample: SampleInput) -> bool:
    """Whether every tensor of ``sample`` is a plain :class:`Arr` (not quantized or self-building)."""
    return all(type(a) is Arr for a in sample.arrs())


def _meta_dtypes(info, sample: SampleInput):
    """The output dtypes the meta device gives for ``sample`` (None if it cannot say)."""
    from .checks import call
    from .tensors import build, tensors_of

    try:
        args, kwargs = build(sample, "meta")
        return [t.dtype for t in tensors_of(call(info.op, args, kwargs))]
    except Exception:
        return None


# -- integer limits ------------------------------------------------------------------------------


def limit_values(dtype) -> np.ndarray:
    """Values at and around ``dtype``'s limits (and the small values overflow turns them into)."""
    info = np.iinfo(dtype.numpy)
    lo, hi = int(info.min), int(info.max)
    pool = {
        lo,
        lo + 1,
        lo + 2,
        lo // 2,
        lo // 2 - 1,
        -2,
        -1,
        0,
        1,
        2,
        hi // 3,
        hi // 2,
        hi // 2 + 1,
        hi - 2,
        hi - 1,
        hi,
    }
    return np.array(sorted(v for v in pool if lo <= v <= hi), dtype=dtype.numpy)


def limit_samples(info, dtype, samples: list, rng) -> list[SampleInput]:
    """Samples of ``info`` whose tensors of the integer ``dtype`` hold values at its limits."""
    if dtype not in INT or info.oracle is None or info.random or info.values_undefined:
        return []
    if family(info) not in ARITHMETIC_FAMILIES or _matches(info.name, NO_LIMITS):
        return []
    pool = limit_values(dtype)
    out = []
    for sample in samples[:2]:
        if not _plain(sample) or not any(a.dtype is dtype and a.value.size for a in sample.arrs()):
            continue

        def fill(name, a):
            if a.dtype is not dtype or not a.value.size:
                return a
            return Arr(rng.choice(pool, a.value.shape), dtype, a.layout)

        probe = _rebuild(info, sample, fill, f"{dtype.name} limits: {sample.desc}")
        outs = _meta_dtypes(info, probe)
        if outs and all(not (d.is_floating_point or d.is_complex) for d in outs):
            out.append(probe)
    return out


# -- 16-bit precision -------------------------------------------------------------------------------


def ill_conditioned_values(dtype) -> np.ndarray:
    """float16/bfloat16 values where 16-bit kernels lose digits, rounded to ``dtype``.

    Subnormal and tiny arguments (``log1p``, ``expm1``, ``sin``, ``atanh``... are about ``x``),
    values next to 1 and -1 (``log``, ``acosh``, ``log1p``'s pole), arguments around the overflow
    and underflow thresholds of ``exp``/``exp2``/``sinh``, near pi/2 (``tan``), and large ones.
    """
    fi = ow.finfo(dtype)
    eps, tiny, big = float(fi.eps), float(fi.tiny), float(fi.max)
    sub = tiny * eps  # the smallest subnormal
    small = [sub, 3 * sub, 17 * sub, tiny / 3, tiny, 3 * tiny, 1e-5, 3e-4, eps / 4, eps, 5 * eps, 0.01, 0.07, 0.3]
    ln_max, ln_tiny = math.log(big), math.log(tiny)
    around = [1 - eps / 2, 1 - eps, 1 + eps, 1 + 3 * eps, 1 - 4 * eps, 0.99, 1.01, math.pi / 2, 2.5]
    # no integers > 1 (zeros of sin(pi x)) and nothing large: there the float32 computation PyTorch makes
    # has no correct 16-bit digit left (sinc(2), j0(1e30)), so no tolerance in ulps can judge it
    ln_sub = math.log(sub)  # exp/exp2 of arguments between ln_sub and ln_tiny land among the subnormals
    edges = [ln_max * 0.98, ln_max - 0.05, ln_max, ln_max + 0.05, ln_tiny, ln_tiny - 1.5, (ln_tiny + ln_sub) / 2, 6.0]
    # Gaussian tails: log_ndtr(4.25) = -1.1e-5 and log_ndtr(4.75) = -1.0e-6 are float16 subnormals, ndtr(-4.75) too
    edges += [4.25, 4.75]
    values = small + around + edges
    values = values + [-v for v in values] + [0.0, -0.0]
    with np.errstate(all="ignore"):
        return np.array(values, np.float64).astype(dtype.numpy)


def precision_samples(info, dtype, samples: list, rng) -> list[SampleInput]:
    """float16/bfloat16 samples of elementwise ops in ill-conditioned regions, with a tolerance in ulps."""
    if dtype is None or dtype.name not in SIXTEEN_BIT or info.oracle is None or info.random:
        return []
    if family(info) not in PRECISION_FAMILIES or _matches(info.name, NO_PRECISION):
        return []
    base = next((s for s in samples if _plain(s) and s.arrs()), None)
    if base is None or not all(a.dtype is dtype for a in base.arrs()) or len(base.arrs()) > 2:
        return []
    values = ill_conditioned_values(dtype)
    n = values.size
    # a second operand: close to the first (cancellation in sub, division near 1) or another probe value
    steps = np.where(np.arange(n) % 2 == 0, 1 + float(ow.finfo(dtype).eps) * rng.integers(-3, 4, n), 0.0)
    with np.errstate(all="ignore"):
        other = np.where(steps != 0, values.astype(np.float64) * steps, rng.permutation(values).astype(np.float64))
    # products and quotients that underflow into the subnormals (a kernel that flushes them to zero fails)
    fi = ow.finfo(dtype)
    tiny = float(fi.tiny)
    firsts = np.array([tiny, -3 * tiny, 5 * tiny, tiny / 4], np.float64).astype(dtype.numpy)
    seconds = np.array([0.3, 0.5, -0.1, 0.7], np.float64).astype(dtype.numpy)
    operands = [np.concatenate([values, firsts]), np.concatenate([other.astype(dtype.numpy), seconds])]
    seen = []

    def fill(name, a):
        seen.append(name)
        return Arr(operands[min(len(seen) - 1, 1)], dtype)

    probe = _rebuild(info, base, fill, f"{dtype.name} ill-conditioned values", ulps=PRECISION_ULPS)
    probe.signed_zeros = True  # an underflow keeps its sign: -tiny / 3 rounds to -0.0
    outs = _meta_dtypes(info, probe)
    if not outs or any(d is not dtype for d in outs):
        return []
    return [probe]


# -- special values -------------------------------------------------------------------------------


def _complex(re, im) -> np.ndarray:
    out = np.empty(re.shape, np.complex128)
    out.real, out.imag = re, im
    return out


#: Conversions: op -> name of the target-dtype argument. Their special-value probe converts nan, ±inf,
#: ±0.0, values that overflow or underflow the target and values between two of its floats to every
#: other floating dtype (a float16 kernel that saturates, flushes subnormals or loses a NaN fails).
CONVERSIONS = {"prims::convert_element_type": "dtype"}


def special_values(dtype, with_max: bool = True) -> np.ndarray:
    """The values of the special-value probe, as float64.

    nan, ``-nan`` (written as nan here; :func:`_with_negative_nan` sets its sign bit once the values
    are in ``dtype``), ±inf, ±0.0, a few ordinary values, the smallest subnormal and one in the middle
    of the subnormal range, both signs, and ±the largest finite value of ``dtype`` (unless ``with_max`` is
    false: :data:`NO_MAX`). Complex dtypes
    get the first eight only (products and quotients of huge parts overflow differently between
    correct algorithms).
    """
    values = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -2.5, 0.5]
    if dtype.is_complex:  # complex products and quotients of huge parts overflow differently between algorithms
        return np.array(values, np.float64)
    fi = ow.finfo(dtype)
    tiny, big = float(fi.tiny), float(fi.max)
    smallest = tiny * float(fi.eps)  # 2**-24 in float16, 2**-133 in bfloat16, 2**-149, 2**-1074
    middle = math.ldexp(1.0, (math.frexp(smallest)[1] + math.frexp(tiny)[1]) // 2)
    values += [smallest, -smallest, 3 * middle, -3 * middle] + ([big, -big] if with_max else []) + [_NEGATIVE_NAN]
    return np.array(values, np.float64)


#: A placeholder in :func:`special_values` for a nan with its sign bit set (a value no probe draws otherwise).
_NEGATIVE_NAN = -1.25e-7


def _with_negative_nan(values: np.ndarray) -> np.ndarray:
    """``values`` with every :data:`_NEGATIVE_NAN` placeholder (in a real or imaginary part) made a ``-nan``."""
    out = values.copy()
    for part in (out.real, out.imag) if out.dtype.kind == "c" else (out,):
        marked = part == part.dtype.type(_NEGATIVE_NAN)
        part[marked] = np.copysign(np.array(np.nan, part.dtype), np.array(-1.0, part.dtype))
    return out


def special_samples(info, dtype, samples: list, rng) -> list[SampleInput]:
    """Every floating elementwise op on nan, ±inf, ±0.0 and a few ordinary values (for two operands: every
    pair of them), compared with the oracle; zeros must carry the oracle's sign."""
    if dtype is None or not (dtype.is_floating_point or dtype.is_complex) or info.oracle is None or info.random:
        return []
    if info.name in CONVERSIONS:
        return conversion_samples(info, dtype, samples)
    if family(info) not in SPECIAL_FAMILIES or _matches(info.name, NO_SPECIALS):
        return []
    base = next((s for s in samples if _plain(s) and s.arrs()), None)
    if base is None or not all(a.dtype is dtype for a in base.arrs()) or len(base.arrs()) > 3:
        return []
    if len(base.arrs()) == 3 and dtype.is_complex:  # a complex product or quotient of infinities: no one answer
        return []
    values = special_values(dtype, with_max=not _matches(info.name, NO_MAX))
    if len(base.arrs()) >= 2:  # every pair; a third operand (clamp's bounds, lerp's weight) drawn from the values
        operands = [np.repeat(values, values.size), np.tile(values, values.size)]
        operands.append(rng.choice(values, operands[0].size))
    else:
        operands = [values, values]
    if dtype.is_complex:
        operands = [_complex(v, rng.permutation(v)) for v in operands]
    operands = [_with_negative_nan(v.astype(dtype.numpy)) for v in operands]
    seen = []

    def fill(name, a):
        seen.append(name)
        return Arr(operands[min(len(seen) - 1, len(operands) - 1)], dtype)

    probe = _rebuild(info, base, fill, f"{dtype.name} special values (nan, -nan, inf, -0.0, subnormals, max)")
    probe.signed_zeros = True
    probe.subnormals = True
    outs = _meta_dtypes(info, probe)
    if not outs or any(d is not dtype for d in outs):
        return []
    return [probe]


def conversion_samples(info, dtype, samples: list) -> list[SampleInput]:
    """``dtype`` values at the edges of every other floating dtype, converted to it (see :data:`CONVERSIONS`)."""
    base = next((s for s in samples if _plain(s) and len(s.arrs()) == 1), None)
    if dtype.is_complex or base is None:
        return []
    edges = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, -2.5, 1 / 3, 65504.0, 65520.0, -7e4]
    edges += [3.0e38, 3.4e38, 1e-40, -1e-45, 6e-8, 2e-8, 1e-300]
    with np.errstate(all="ignore"):
        values = np.array(edges, np.float64).astype(dtype.numpy)
    target_arg = CONVERSIONS[info.name]
    out = []
    for target in (ow.float16, ow.bfloat16, ow.float32, ow.float64, ow.complex64, ow.complex128):
        if target is dtype:
            continue

        def fill(name, a, target=target):
            return Arr(values, dtype)

        probe = _rebuild(info, base, fill, f"{dtype.name} nan/inf/-0.0/overflow/underflow to {target.name}")
        names = [a.name for a in info.op.schema.arguments]
        position = names.index(target_arg)
        if position < len(probe.args):
            probe.args = probe.args[:position] + (target,) + probe.args[position + 1 :]
        else:
            probe.kwargs = {**probe.kwargs, target_arg: target}
        probe.signed_zeros = True
        probe.ulps = 0.5  # a conversion rounds once: the oracle's value exactly (subnormals too, not within atol)
        out.append(probe)
    return out


# -- signed zeros in reductions, scans and sorting --------------------------------------------------

#: Families whose zero results carry a sign that IEEE 754 fixes whatever the order of evaluation, when no
#: operand is ``+0.0``: a product's sign is the parity of its negative factors, a maximum of ``-0.0`` and
#: negative values is ``-0.0`` (a minimum of ``-0.0`` and positive ones too), and sorting moves bits.
SIGNED_ZERO_FAMILIES = frozenset({"reductions", "prims.reductions", "scans", "prims.scans", "sorting", "prims.sorting"})
#: Additive reductions and scans, where the sign of a zero result is not checked: PyTorch's accumulator
#: starts at ``+0.0`` (``sum([-0.0, -0.0])`` is ``0.0``), NumPy's at the first element (``-0.0``); both
#: are correct orders of the same IEEE additions. Softmax and logsumexp subtract a maximum first, which
#: turns ``-0.0 - -0.0`` into ``+0.0`` in one algorithm and not in another.
ZERO_SIGN_FREE = ("*sum*", "*mean*", "*softmax*", "*logsumexp*", "*logcumsumexp*", "*std*", "*var*", "*norm*")
#: The non-zero values mixed with ``-0.0`` in the probes: negative ones (maxima are ``-0.0``), positive
#: ones (minima are ``-0.0``); products and sorting see both.
_ZERO_COMPANIONS = ((-1.0, -2.5, -0.5), (1.0, 2.5, 0.5))


def signed_zero_samples(info, dtype, samples: list, rng) -> list[SampleInput]:
    """Real floating samples of reductions, scans and sorting ops made of ``-0.0`` and values of one sign.

    No operand is ``+0.0``, so every zero result has the sign IEEE 754 gives in any order of
    evaluation; the probes are compared with ``signed_zeros`` (a kernel that returns ``+0.0`` for
    ``prod([-0.0, 1.0])``, ``amax([-0.0, -1.0])`` or ``cummax([-0.0])`` fails). Additive ops
    (:data:`ZERO_SIGN_FREE`) are skipped.
    """
    if dtype is None or not dtype.is_floating_point or info.oracle is None or info.random or info.values_undefined:
        return []
    if family(info) not in SIGNED_ZERO_FAMILIES or _matches(info.name, ZERO_SIGN_FREE):
        return []
    base = next(
        (s for s in samples if _plain(s) and any(a.dtype is dtype and a.value.size > 1 for a in s.arrs())),
        None,
    )
    if base is None:
        return []
    out = []
    for companions in _ZERO_COMPANIONS:
        pool = np.array((-0.0, -0.0) + companions)

        def fill(name, a, pool=pool):
            if a.dtype is not dtype or not a.value.size:
                return a
            values = rng.choice(pool, a.value.shape)
            values.reshape(-1)[0] = -0.0  # every probe holds a -0.0
            return Arr(values.astype(dtype.numpy), dtype, a.layout)

        sign = "negative" if companions[0] < 0 else "positive"
        probe = _rebuild(info, base, fill, f"{dtype.name} -0.0 and {sign} values: {base.desc}")
        probe.signed_zeros = True
        probe.ulps = 0.5  # a conversion rounds once: the oracle's value exactly (subnormals too, not within atol)
        out.append(probe)
    return out


# -- nan and inf in matrix operations ---------------------------------------------------------------

#: Families of the nan/inf probe: matrix products, solvers, decompositions and matrix functions.
NONFINITE_FAMILIES = frozenset({"linalg", "linalg_basic", "prims.linalg"})
#: Ops without the nan/inf probe: they run LAPACK's iterative SVD or eigenvalue solvers, whose behaviour on a
#: nan or inf is undefined (they iterate to their limit for seconds, or report an illegal value).
NO_NONFINITE = ("*svd*", "*cond*", "*pinv*", "*matrix_rank*", "*lstsq*", "*eig*", "*norm*", "*schur*")


def nonfinite_samples(info, dtype, samples: list, rng) -> list[SampleInput]:
    """Linear-algebra samples with one nan (then one inf) in the first matrix, compared by non-finiteness.

    Algorithms spread a nan or inf differently (PyTorch's ``matrix_exp`` of a matrix holding a nan
    is nan everywhere, SciPy's only where the nan reaches; an inf becomes nan in one and stays inf
    in another; a triangular solve leaves the zero triangle out, a general one multiplies it by the
    nan), so only this is checked: an output the oracle gives with a nan or ±inf has a nan or ±inf
    too (a kernel that drops the nan, or saturates to the largest float, fails). Probes
    whose oracle raises or stays finite, and ops whose outputs are checked by their properties
    (:attr:`OpInfo.verify`: decompositions), get none.
    """
    if dtype is None or not (dtype.is_floating_point or dtype.is_complex) or info.oracle is None:
        return []
    if info.random or info.values_undefined or info.verify is not None or family(info) not in NONFINITE_FAMILIES:
        return []
    if _matches(info.name, NO_NONFINITE):
        return []
    base = next((s for s in samples if _plain(s) and any(a.dtype is dtype and a.value.size for a in s.arrs())), None)
    if base is None:
        return []
    from .checks import _expected_outputs

    out = []
    # a nan among the sample's values, and an inf alone among zeros (where an inf result survives: among other
    # values, whether an inf turns into nan or into finite values depends on the pivoting)
    for special, alone in ((math.nan, False), (math.inf, True)):
        done = []

        def fill(name, a, special=special, alone=alone, done=done):
            if done or a.dtype is not dtype or not a.value.size:
                return a
            done.append(name)
            values = np.zeros_like(a.value) if alone else a.value.copy()
            values.reshape(-1)[0 if alone else int(rng.integers(0, values.size))] = special
            return Arr(values, dtype, a.layout)

        where = "alone among zeros" if alone else "among the values"
        probe = _rebuild(info, base, fill, f"{dtype.name} a {special} {where} of '{'{}'}': {base.desc}")
        probe.desc = probe.desc.format(done[0] if done else "?")
        probe.nonfinite_only = True
        try:
            expected = _expected_outputs(info, probe)
        except Exception:
            continue
        arrays = [np.asarray(e) for e in expected if e is not None]
        if any(a.dtype.kind in "fc" and not np.isfinite(a).all() for a in arrays):
            out.append(probe)
    return out


# -- determinism ------------------------------------------------------------------------------------


def wide_values(rng, shape, dtype) -> np.ndarray:
    """Values of both signs spread over many binades: any change of summation order changes the sum's bits."""
    span = {"float16": 5, "bfloat16": 10, "float32": 14, "float64": 24}.get(dtype.to_real().name, 10)
    mags = np.exp2(rng.uniform(-span, span, shape)) * rng.choice([-1.0, 1.0], shape)
    if dtype.is_complex:
        mags = mags + 1j * np.exp2(rng.uniform(-span, span, shape)) * rng.choice([-1.0, 1.0], shape)
    return mags.astype(dtype.numpy)


def determinism_samples(info, dtype, samples: list, rng) -> list[SampleInput]:
    """Floating samples of accumulating ops with wide-magnitude values (run twice, compared bit for bit)."""
    if dtype is None or not (dtype.is_floating_point or dtype.is_complex) or not accumulates(info):
        return []
    if info.random or info.values_undefined:
        return []
    # indexing ops accumulate only in some of their samples (index_put's accumulate=True): probe each
    budget = len(samples) if family(info) in INDEX_FAMILIES else 1
    out = []
    for sample in samples:
        if len(out) >= budget:
            break
        if not _plain(sample) or not any(a.dtype is dtype and a.value.size > 1 for a in sample.arrs()):
            continue

        def fill(name, a):
            if a.dtype is not dtype or not a.value.size:
                return a
            return Arr(wide_values(rng, a.value.shape, dtype), dtype, a.layout)

        out.append(_rebuild(info, sample, fill, f"{dtype.name} wide magnitudes: {sample.desc}"))
    return out


# -- indices ---------------------------------------------------------------------------------------


def _dim_size(values: dict, tensor: str = "self", dim: str = "dim") -> int | None:
    a, d = values.get(tensor), values.get(dim, 0)
    if not isinstance(a, Arr) or not isinstance(d, int):
        return None
    return 1 if a.value.ndim == 0 else int(a.value.shape[d % a.value.ndim])


def _numel(values: dict, tensor: str = "self") -> int | None:
    a = values.get(tensor)
    return int(a.value.size) if isinstance(a, Arr) else None


def _along_dim(values: dict):
    if values.get("dim") is None:
        return _numel(values)
    return None  # PyTorch's take_along_dim with a dim broadcasts the index first: no bound to probe


def _rows(values: dict):
    w = values.get("weight")
    return int(w.value.shape[0]) if isinstance(w, Arr) and w.value.ndim else None


#: Indexing ops: base name -> (index argument, its bound, whether negative indices wrap, PyTorch's error).
#: A bound of ``"positional"`` means a list of index tensors, one per dim of ``self`` (advanced indexing).
INDEX_RULES = {
    "gather": ("index", _dim_size, False, RuntimeError),
    "scatter": ("index", _dim_size, False, RuntimeError),
    "scatter_add": ("index", _dim_size, False, RuntimeError),
    "scatter_reduce": ("index", _dim_size, False, RuntimeError),
    "index_add": ("index", _dim_size, False, RuntimeError),
    "index_select": ("index", _dim_size, False, IndexError),
    "index_copy": ("index", _dim_size, False, IndexError),
    "index_fill": ("index", _dim_size, True, IndexError),
    "index_reduce": ("index", _dim_size, False, IndexError),
    "take": ("index", _numel, True, IndexError),
    "put": ("index", _numel, True, IndexError),
    "take_along_dim": ("indices", _along_dim, False, RuntimeError),
    "index": ("indices", "positional", True, IndexError),
    "index_put": ("indices", "positional", True, IndexError),
    "embedding": ("indices", _rows, False, IndexError),
}


def index_rule(info):
    """The :data:`INDEX_RULES` entry of ``info``'s op (None for other ops)."""
    base = info.name.split("::")[-1].split(".")[0]
    return INDEX_RULES.get(base)


def _index_targets(info, sample: SampleInput):
    """``[(path, bound)]``: where the sample's integer index tensors are and the size each indexes."""
    rule = index_rule(info)
    if rule is None or not _plain(sample):
        return []
    arg, bound, _, _ = rule
    values = _named_values(info, sample)
    index = values.get(arg)
    if bound == "positional":
        if not isinstance(index, list):
            return []
        self_ = values.get("self")
        if not isinstance(self_, Arr) or any(isinstance(i, Arr) and i.dtype is ow.bool for i in index):
            return []
        return [
            ((arg, k), int(self_.value.shape[k]))
            for k, i in enumerate(index)
            if isinstance(i, Arr) and i.value.size and k < self_.value.ndim
        ]
    size = bound(values)
    if not isinstance(index, Arr) or not index.value.size or size is None or index.dtype is ow.bool:
        return []
    return [((arg, None), size)]


def _with_index(info, sample: SampleInput, path, fn, desc: str) -> SampleInput:
    arg, k = path

    def replace(name, a):
        return a

    probe = _rebuild(info, sample, replace, desc)  # a copy, then the one index tensor changed
    values = _named_values(info, probe)
    names = [a.name for a in info.op.schema.arguments]
    target = values[arg] if k is None else values[arg][k]
    changed = Arr(fn(target.value.copy()), target.dtype, target.layout)
    new = changed if k is None else [changed if j == k else x for j, x in enumerate(values[arg])]
    if arg in probe.kwargs:
        probe.kwargs[arg] = new
    else:
        args = list(probe.args)
        args[names.index(arg)] = new
        probe.args = tuple(args)
    return probe


def index_error_inputs(info, dtype, samples: list, rng) -> list[ErrorInput]:
    """For an indexing op: an index equal to the dim's size, and a negative one beyond what the op accepts."""
    rule = index_rule(info)
    if rule is None:
        return []
    _, _, wraps, error = rule
    out = []
    for sample in samples:
        targets = _index_targets(info, sample)
        if not targets:
            continue
        path, size = targets[-1]
        for bad in (size, -size - 1 if wraps else -1):

            def poke(v, bad=bad):
                v.reshape(-1)[int(rng.integers(0, v.size))] = bad
                return v

            where = f"'{path[0]}'" + (f"[{path[1]}]" if path[1] is not None else "")
            desc = f"{where} holds {bad}, out of range for a dim of size {size}"
            out.append(ErrorInput(_with_index(info, sample, path, poke, desc), error))
        break
    return out


def negative_index_samples(info, dtype, samples: list, rng) -> list[SampleInput]:
    """For ops that accept negative indices: the first indexing sample with its indices written as ``i - size``."""
    rule = index_rule(info)
    if rule is None or not rule[2] or info.oracle is None:
        return []
    for sample in samples:
        targets = _index_targets(info, sample)
        if not targets:
            continue
        path, size = targets[-1]

        def negate(v, size=size):
            v = v.astype(np.int64)
            flip = rng.random(v.shape) < 0.7
            return np.where(flip & (v >= 0), v - size, v)

        return [_with_index(info, sample, path, negate, f"negative indices (i - {size}): {sample.desc}")]
    return []
