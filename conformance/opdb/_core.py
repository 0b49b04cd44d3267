"""The op database's data model: :class:`OpInfo`, :class:`SampleInput`, :class:`Arr` and value makers.

A sample holds NumPy arrays, never tensors: :class:`Arr` is one tensor argument
(its logical values, its opweave dtype and a *layout request*), so the same
sample can be built on any device, fed to the oracle, written into a JSON
report and replayed. Layouts are applied on the device with view prims:

``contiguous``  the values as they are;
``transposed``  the last two dims swapped in memory (``prims.transpose`` of a contiguous base);
``strided``     every other element of the last dim, from storage offset 1 (``prims.slice`` with a step);
``broadcast``   dim 0 has stride 0 (``prims.broadcast_in_dim`` of the first row; the values repeat);
``cpu``         left on the CPU (0-dim CPU tensors mix with device tensors; some arguments are read on the host).

A layout that does not fit the array (``transposed`` below 2 dims...) falls back to
the nearest one that does, so generators can ask for layouts blindly.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import opweave as ow

# -- dtype groups ---------------------------------------------------------------------------

BOOL = (ow.bool,)
INT = (ow.uint8, ow.int8, ow.int16, ow.int32, ow.int64)
FLOAT = (ow.float16, ow.bfloat16, ow.float32, ow.float64)
COMPLEX = (ow.complex64, ow.complex128)
INTEGRAL = BOOL + INT
REAL = INT + FLOAT
NUMERIC = REAL + COMPLEX
FLOATING = FLOAT + COMPLEX
ALL = BOOL + NUMERIC
NOT_COMPLEX = BOOL + REAL

LAYOUTS = ("contiguous", "transposed", "strided", "broadcast", "cpu")

#: Default tolerances ``(rtol, atol)`` by result dtype (integers and bool compare exactly).
DEFAULT_TOLERANCES = {
    "float16": (2e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-5, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-5, 1e-5),
    "complex128": (1e-7, 1e-7),
}

SPECIALS = (math.nan, math.inf, -math.inf, -0.0, 0.0)


class _Device:
    """Placeholder for the device a sample runs on (``Device`` arguments of factories)."""

    def __repr__(self):
        return "DEVICE"


DEVICE = _Device()


# -- samples ------------------------------------------------------------------------------------


@dataclass
class Arr:
    """One tensor argument: logical ``value`` (a NumPy array of ``dtype.numpy``), ``dtype`` and ``layout``."""

    value: np.ndarray
    dtype: object
    layout: str = "contiguous"

    def __post_init__(self):
        self.value = np.asarray(self.value).astype(self.dtype.numpy, copy=False)
        self.layout = fit_layout(self.value, self.layout)
        if self.layout == "broadcast":  # the values a stride-0 dim 0 can hold
            self.value = np.ascontiguousarray(np.broadcast_to(self.value[:1], self.value.shape))

    @property
    def shape(self) -> tuple:
        """The logical shape."""
        return self.value.shape


def fit_layout(value: np.ndarray, layout: str) -> str:
    """``layout`` if ``value`` can take it, else the nearest one that can."""
    if layout == "transposed" and value.ndim < 2:
        layout = "strided"
    if layout == "strided" and value.ndim < 1:
        layout = "contiguous"
    if layout == "broadcast" and (value.ndim < 1 or value.shape[0] < 2):
        layout = "contiguous"
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout {layout!r}; expected one of {LAYOUTS}")
    return layout


@dataclass
class SampleInput:
    """Arguments of one call: ``args``/``kwargs`` hold :class:`Arr` (tensors), lists of them, or plain values.

    ``desc`` says what the sample is about (shown in reports); ``oracle_kwargs``
    are extra keyword arguments for the oracle only; ``ulps`` (None: the op's
    ``(rtol, atol)``) states the value tolerance in units in the last place of the
    result dtype instead (the 16-bit precision probes of :mod:`..probes`).
    """

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    desc: str = ""
    oracle_kwargs: dict = field(default_factory=dict)
    ulps: float | None = None
    signed_zeros: bool = False  # zeros must match the oracle's sign (the special-value probes)
    nonfinite_only: bool = False  # only "non-finite where the oracle is" is checked (the linalg nan/inf probes)
    subnormals: bool = False  # subnormal expected values are checked in ulps of the result, not hidden by atol

    def arrs(self) -> list[Arr]:
        """Every :class:`Arr` of the sample, in argument order."""
        found = []
        _walk(list(self.args) + list(self.kwargs.values()), found)
        return found


def _walk(values, found):
    for v in values:
        if isinstance(v, Arr):
            found.append(v)
        elif isinstance(v, (list, tuple)):
            _walk(v, found)


@dataclass
class ErrorInput:
    """A sample that must raise ``error`` (an exception type) on every backend; ``match`` is an optional regex."""

    sample: SampleInput
    error: type
    match: str | None = None


@dataclass
class OpInfo:
    """What the conformance suite knows about one operator overload (by qualified name).

    ``sample_inputs(rng, dtype, device)`` yields :class:`SampleInput` (first the
    quick ones: the quick profile takes a prefix); ``oracle(*args, **kwargs)`` is an
    independent NumPy/SciPy formula taking the samples' NumPy values (float inputs
    widened to float64/complex128 unless ``upcast`` is False) and returning the
    result(s); ``dtypes`` are the dtypes the op supports (``(None,)``: the sample
    fixes its own dtypes); ``tolerances`` maps dtype names to ``(rtol, atol)``
    overriding :data:`DEFAULT_TOLERANCES`; ``error_inputs(rng, dtype)`` yields
    :class:`ErrorInput`. Flags: ``returns_view`` (outputs alias the first tensor
    argument), ``may_alias`` (outputs may share the input's storage though the schema does
    not say so), ``nondeterministic`` (results may differ bitwise between runs),
    ``random`` (checked by seeded reproducibility instead of values),
    ``data_dependent`` (no meta run), ``values_undefined`` (uninitialised outputs:
    ``empty``), ``strides`` (output strides are a promise checked against the meta
    device's, see :attr:`promises_strides`). ``known_failure`` marks a bug or deviation of the core op (every
    backend xfails it, with this reason; a dict maps dtype names to reasons).
    ``verify(outputs, *args, **kwargs)`` checks what the oracle cannot pin down (eigenvectors and singular
    vectors, defined up to sign or phase) by their defining properties: it takes the outputs as NumPy
    arrays and the oracle's arguments, and returns what is wrong (None if nothing is).
    ``family`` groups ops in reports; ``source`` is ``"opdb"`` (hand-written) or
    ``"generated"`` (schema-driven samples).
    """

    name: str
    sample_inputs: Callable
    oracle: Callable | None = None
    dtypes: tuple = (None,)
    tolerances: dict = field(default_factory=dict)
    error_inputs: Callable | None = None
    returns_view: bool = False
    may_alias: bool = False
    nondeterministic: bool = False
    random: bool = False
    data_dependent: bool = False
    values_undefined: bool = False
    upcast: bool = True
    strides: bool = False
    known_failure: str | dict | None = None
    verify: Callable | None = None
    family: str = ""
    source: str = "opdb"
    variant: str | None = None  # "inplace" or "out": checks of a generated variant
    functional: OpInfo | None = None  # the functional op's info, for variants

    @property
    def op(self):
        """The :class:`opweave` OpOverload."""
        from opweave.ops import lookup

        return lookup(self.name)

    @property
    def promises_strides(self) -> bool:
        """Whether the outputs' strides must equal the meta device's.

        Views promise their strides and storage offset; other ops only where their entry
        says ``strides=True``: factories that take a layout (``empty_strided``...) and
        prims whose meta function gives a fixed (contiguous) layout that backends honour.
        The elementwise and reduction prims' meta layouts (the input's dense order) are
        advisory: the CPU reference backend returns NumPy's layout instead.
        """
        return self.returns_view or bool(self.strides)

    @property
    def has_oracle(self) -> bool:
        """Whether values are checked against an independent oracle."""
        return self.oracle is not None

    @property
    def supports_inplace(self) -> bool:
        """Whether the catalog has a generated in-place variant of this op."""
        return any(v.variant == "inplace" for v in variants_of(self.op))

    @property
    def supports_out(self) -> bool:
        """Whether the catalog has a generated ``out=`` variant of this op."""
        return any(v.variant == "out" for v in variants_of(self.op))

    def known_failure_for(self, dtype) -> str | None:
        """Why the core op is expected to fail for ``dtype`` (None if it is not)."""
        if isinstance(self.known_failure, dict):
            return self.known_failure.get(dtype.name) if dtype is not None else None
        return self.known_failure

    def tolerance(self, dtype) -> tuple:
        """``(rtol, atol)`` of this op for results of ``dtype``."""
        name = dtype.name
        return self.tolerances.get(name, DEFAULT_TOLERANCES.get(name, (0.0, 0.0)))


_VARIANTS: dict | None = None


def variants_of(op) -> list:
    """The generated in-place and ``out=`` variants of the functional ``op``."""
    global _VARIANTS
    if _VARIANTS is None:
        _VARIANTS = {}
        for o in ow.ops.catalog():
            if o.functional is not None:
                _VARIANTS.setdefault(o.functional.name, []).append(o)
    return _VARIANTS.get(op.name, [])


# -- values ---------------------------------------------------------------------------------------

#: Value domains: (low, high) for floats; integer ranges follow the same intent.
DOMAINS = {
    "any": (-4.0, 4.0),
    "pos": (0.1, 5.0),
    "nonneg": (0.0, 5.0),
    "unit": (-0.95, 0.95),
    "prob": (0.02, 0.98),
    "gt1": (1.05, 5.0),
    "small": (-3.0, 3.0),
    "nonzero": (-4.0, 4.0),
    "shift": (0.0, 7.0),
    "exp": (0.0, 4.0),
}
_INT_DOMAINS = {
    "any": (-9, 10),
    "pos": (1, 10),
    "nonneg": (0, 10),
    "unit": (-1, 2),
    "prob": (0, 2),
    "gt1": (2, 10),
    "small": (-3, 4),
    "nonzero": (-9, 10),
    "shift": (0, 8),
    "exp": (0, 5),
}


def make_values(rng, shape, dtype, domain: str = "any", specials: bool = False) -> np.ndarray:
    """Random values of ``dtype`` (a NumPy array of ``dtype.numpy``) in ``domain``.

    ``specials`` mixes nan, ±inf, -0.0 and 0.0 into floating values (about one element in five).
    Integer values avoid 0 for the ``nonzero`` domain; unsigned ones are non-negative.
    """
    shape = tuple(shape)
    if dtype is ow.bool:
        if domain in ("pos", "nonzero", "gt1"):
            return np.ones(shape, bool)
        return rng.random(shape) < 0.5
    if not (dtype.is_floating_point or dtype.is_complex):
        lo, hi = _INT_DOMAINS.get(domain, _INT_DOMAINS["any"])
        info = np.iinfo(dtype.numpy)
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max) + 1)
        v = rng.integers(lo, hi, shape)
        if domain == "nonzero":
            v = np.where(v == 0, 1, v)
        return np.asarray(v).astype(dtype.numpy)
    v = _floats(rng, shape, domain)
    if specials and v.size:
        mask = rng.random(shape) < 0.2
        v[mask] = rng.choice(np.array(SPECIALS), int(mask.sum()))
    if dtype.is_complex:
        v = v + 1j * _floats(rng, shape, domain)
    return np.asarray(v).astype(dtype.numpy)


def _floats(rng, shape, domain) -> np.ndarray:
    lo, hi = DOMAINS.get(domain, DOMAINS["any"])
    if domain in ("small", "shift", "exp"):
        return rng.integers(int(lo), int(hi) + 1, shape).astype(np.float64)
    v = rng.uniform(lo, hi, shape)
    if domain == "nonzero":
        v = np.where(np.abs(v) < 0.25, np.copysign(0.5, v), v)
    return np.asarray(v, dtype=np.float64)


def arr(rng, shape, dtype, layout="contiguous", domain="any", specials=False) -> Arr:
    """An :class:`Arr` of random values (see :func:`make_values`)."""
    return Arr(make_values(rng, shape, dtype, domain, specials), dtype, layout)


def python_scalar(rng, dtype, domain="any"):
    """A Python number of ``dtype``'s category (bool, int, float or complex) in ``domain``."""
    v = make_values(rng, (), dtype, domain).item()
    if dtype is ow.bool:
        return bool(v)
    if dtype.is_complex:
        return complex(v)
    if dtype.is_floating_point:
        return float(v)
    return int(v)


def seed_for(*parts) -> int:
    """A stable 32-bit seed from strings and ints (runs are replayable across processes)."""
    return zlib.crc32("/".join(str(p) for p in parts).encode()) & 0x7FFFFFFF


def take(samples: Iterable, n: int | None) -> list:
    """The first ``n`` samples (all when ``n`` is None)."""
    out = []
    for s in samples:
        if n is not None and len(out) >= n:
            break
        out.append(s)
    return out
