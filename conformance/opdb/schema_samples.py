"""Sample arguments for every operator of the catalog (used by tests/test_catalog.py).

A sample is built from the op's schema: each argument without a default gets a
small valid value from :func:`_default` (float tensors of shape ``S`` with
values in [0.25, 0.75), name-based guesses for index/mask tensors, dims and
sizes, the target device for ``Device``), except where :data:`OVERRIDES` says
otherwise. Overrides are keyed by packet name (``"gcd"`` covers every overload
of gcd, prims are ``"prims::gather"``) and by qualified name (``"add.Tensor"``,
which wins over its packet's entry); each maps argument names to values or
specs (:func:`t`, :func:`ints`, ...), plus ``"*"``: the spec of every tensor
argument it does not name. Arguments with defaults are left out unless
overridden. In-place and ``out=`` variants use their functional op's sample.
"""

from __future__ import annotations

import importlib
import zlib
from dataclasses import dataclass

import numpy as np
import opweave as ow

S = (2, 3)  # the default tensor shape
DEVICE = object()  # placeholder for the device the sample runs on


@dataclass(frozen=True)
class T:
    """A tensor spec: ``shape``, ``dtype``, values drawn uniformly from [low, high) (integer dtypes: integers)."""

    shape: tuple = S
    dtype: object = ow.float32
    low: float = 0.25
    high: float = 0.75

    def make(self, rng):
        shape, dt = tuple(self.shape), self.dtype
        if dt is ow.bool:
            return ow.tensor(rng.random(shape) < 0.5)
        if dt.is_complex:
            real, imag = rng.uniform(self.low, self.high, (2, *shape))
            return ow.tensor((real + 1j * imag).astype(dt.numpy), dtype=dt)
        if dt.is_floating_point:
            return ow.tensor(rng.uniform(self.low, self.high, shape), dtype=dt)
        return ow.tensor(rng.integers(int(self.low), int(self.high), shape), dtype=dt)


@dataclass(frozen=True)
class Fn:
    """A value computed by ``fn(rng)`` (matrices with structure, tensors with chosen values)."""

    fn: object

    def make(self, rng):
        return self.fn(rng)


@dataclass(frozen=True)
class L:
    """A list of specs (``Tensor[]``, ``Tensor?[]``)."""

    items: tuple

    def make(self, rng):
        return [make(v, rng) for v in self.items]


def t(*shape, dtype=ow.float32, low=0.25, high=0.75) -> T:
    """A float (or ``dtype``) tensor spec of ``shape``."""
    return T(shape, dtype, low, high)


def ints(*shape, low=0, high=3, dtype=ow.int64) -> T:
    """An integer tensor spec with values in [low, high)."""
    return T(shape, dtype, low, high)


def bools(*shape) -> T:
    """A bool tensor spec."""
    return T(shape, ow.bool)


def cplx(*shape, dtype=ow.complex64) -> T:
    """A complex tensor spec."""
    return T(shape, dtype)


@dataclass(frozen=True)
class OnCpu:
    """A spec whose tensor stays on the CPU in every run (arguments PyTorch reads on the host)."""

    spec: object

    def make(self, rng):
        return Pinned(make(self.spec, rng))


@dataclass(frozen=True)
class Pinned:
    """A sample tensor that :func:`to_device` keeps on the CPU."""

    tensor: object


def lst(*items) -> L:
    """A list spec."""
    return L(items)


def value(v) -> Fn:
    """A tensor holding exactly ``v`` (a number or nested list; ints give int64)."""
    return Fn(lambda rng: ow.tensor(v))


def spd(n=3) -> Fn:
    """A symmetric positive definite float32 ``n x n`` matrix."""

    def build_spd(rng):
        a = rng.uniform(-1, 1, (n, n))
        return ow.tensor((a @ a.T + n * np.eye(n)).astype(np.float32))

    return Fn(build_spd)


def make(spec, rng):
    """The value of ``spec`` (plain values are returned as they are)."""
    if isinstance(spec, (T, Fn, L, OnCpu)):
        return spec.make(rng)
    if isinstance(spec, list):
        return [make(v, rng) for v in spec]
    return spec


INT = {"*": ints(*S, low=1, high=5)}
SHIFT = {"*": ints(*S, low=0, high=3)}
CPLX = {"*": cplx(*S)}
SQ = {"*": t(3, 3)}  # square matrices
VEC = {"*": t(3)}
GATHER = {"dim": 0, "index": value([[0, 1, 0], [1, 0, 1]])}
SCATTER = {**GATHER, "src": t(2, 3)}
CONV = {"input": t(1, 2, 5), "weight": t(4, 2, 3), "stride": [1], "padding": [0], "dilation": [1]}
CONV |= {"output_padding": [0]}
UNIQUE = {"return_inverse": True, "return_counts": True}
POOL = {"self": t(1, 2, 4, 4), "kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 0]}


def _group(spec, *names) -> dict:
    return dict.fromkeys(names, spec)


OVERRIDES: dict[str, dict] = {
    # dtype-restricted elementwise ops, value arguments
    **_group(INT, "gcd", "lcm", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "prims::xor_sum"),
    **_group(INT, "prims::gcd", "prims::lcm", "prims::bitwise_and", "prims::bitwise_or", "prims::bitwise_xor"),
    **_group(INT, "prims::bitwise_not"),
    **_group(SHIFT, "bitwise_left_shift", "bitwise_right_shift", "prims::shift_left", "prims::shift_right_arithmetic"),
    **_group(CPLX, "view_as_real", "prims::view_as_real", "imag", "prims::imag", "prims::real", "prims::fft_c2c"),
    "prims::fft_c2r": {"self": cplx(2, 3), "dim": [1], "normalization": 0, "last_dim_size": 4},
    "clamp": {"min": 0.4},
    "clamp.Tensor": {"min": t(2, 3)},
    "clip": {"max": 0.6},
    "clip.Tensor": {"max": t(3)},
    "fill.Tensor": {"value": t()},
    "masked_fill.Tensor": {"value": t()},
    "index_fill.int_Tensor": {"value": t()},
    **_group({"train": True}, "dropout", "alpha_dropout", "native_dropout"),
    "prims::bernoulli": {"p": t(2, 3, low=0, high=1)},
    # linear algebra, convolution, pooling
    **_group(SQ, "mm", "matmul", "addmm", "prims::mm", "prims::inverse", "prims::det", "prims::slogdet", "prims::eig"),
    **_group(SQ, "prims::matrix_exp", "prims::geqrf", "prims::lu", "prims::lu_factor", "prims::svd"),
    **_group(SQ, "prims::solve", "prims::triangular_solve"),
    **_group(VEC, "dot", "vdot", "cartesian_prod", "meshgrid"),
    "prims::qr": {"A": t(3, 3), "mode": "reduced"},
    "prims::eigh": {"A": spd(), "UPLO": "L"},
    "prims::cholesky": {"A": spd()},
    "prims::lstsq": {"A": t(4, 3), "B": t(4, 2)},
    "prims::householder_product": {"A": t(3, 2), "tau": t(2)},
    "bmm": {"self": t(4, 2, 3), "mat2": t(4, 3, 2)},
    "prims::bmm": {"self": t(4, 2, 3), "mat2": t(4, 3, 2)},
    "addbmm": {"self": t(2, 2), "batch1": t(4, 2, 3), "batch2": t(4, 3, 2)},
    "baddbmm": {"self": t(4, 2, 2), "batch1": t(4, 2, 3), "batch2": t(4, 3, 2)},
    "addmv": {"self": t(2), "mat": t(2, 3), "vec": t(3)},
    "addr": {"vec1": t(2), "vec2": t(3)},
    "mv": {"vec": t(3)},
    "outer": {"self": t(2), "vec2": t(3)},
    "ger": {"self": t(2), "vec2": t(3)},
    "prims::convolution": CONV,
    "prims::avg_pool": {**POOL, "count_include_pad": True},
    "prims::max_pool": {**POOL, "dilation": [1, 1]},
    # indexing, scatter/gather, sorting
    **_group(GATHER, "gather", "prims::gather"),
    **_group(SCATTER, "prims::scatter", "scatter_add", "prims::scatter_add"),
    "scatter": {**SCATTER, "reduce": "add"},
    "scatter_reduce": {**SCATTER, "reduce": "sum"},
    "prims::scatter_reduce": {**SCATTER, "reduce": "sum", "include_self": True},
    "index.Tensor": {"indices": lst(bools(2))},  # a mask: the data-dependent case
    "put": {"source": t(2)},
    "prims::put": {"source": t(2)},
    "prims::repeat_interleave": {"repeats": ints(3, low=1, high=3)},
    "repeat_interleave.Tensor": {"repeats": ints(3, low=1, high=3)},
    "repeat_interleave.self_Tensor": {"repeats": ints(3, low=1, high=3), "dim": 1},
    "bincount": {"self": ints(5)},
    "prims::bincount": {"self": ints(5), "minlength": 0},
    "bucketize": {"boundaries": value([0.3, 0.5, 0.7])},
    "searchsorted.Scalar": {"sorted_sequence": value([0.3, 0.5, 0.7])},
    "narrow.Tensor": {"start": value(1)},
    "tensor_split.tensor_indices_or_sections": {"tensor_indices_or_sections": OnCpu(value(2))},
    "prims::item": {"a": t()},
    **_group(UNIQUE, "_unique2", "unique_consecutive", "unique_dim", "prims::unique", "prims::unique_consecutive"),
    "_unique": {"return_inverse": True},
    # shapes, views, factories
    "diagonal_scatter": {"src": t(2)},
    "select_scatter": {"src": t(3)},
    "as_strided_scatter": {"src": t(2, 3)},
    "dsplit": {"self": t(2, 2, 4), "sections": 2},
    "prims::squeeze": {"a": t(2, 1, 3), "dimensions": [1]},
    "prims::slice": {"start_indices": [0, 1], "limit_indices": [2, 3]},
    "arange": {"start": 1, "end": 5},
    **_group({"start": value(0.5), "end": value(2.0)}, "linspace.Tensor_Tensor", "logspace.Tensor_Tensor"),
    **_group({"start": value(0.5)}, "linspace.Tensor_Scalar", "logspace.Tensor_Scalar"),
    **_group({"end": value(2.0)}, "linspace.Scalar_Tensor", "logspace.Scalar_Tensor"),
    "prims::slice_in_dim": {"start_index": 1, "limit_index": 3, "axis": 1},
    "prims::iota": {"length": 3, "start": 0, "step": 1, "dtype": ow.int64},
    "prims::tril_indices": {"dtype": ow.int64},
    "prims::triu_indices": {"dtype": ow.int64},
    "view_as_complex": {"self": t(2, 2)},
    "prims::view_as_complex": {"a": t(2, 2)},
    "view.dtype": {"dtype": ow.int32},
    "prims::view_of_dtype": {"dtype": ow.int32},
    "meshgrid.indexing": {"indexing": "ij"},
    "tile": {"dims": [2, 1]},
}

#: Families whose overrides live in their own module ``samples_<family>.py`` (a dict ``OVERRIDES``).
OVERRIDE_FAMILIES = ("nn_layers", "nn_misc", "linalg", "fft", "statistics", "quantized")

# name-based guesses for arguments no override names (the default tensor shape S is 2 x 3)
_TENSORS = {
    "index": ints(2, high=2),
    "indices": ints(2, high=2),
    "mask": bools(*S),
    "condition": bools(*S),
    "pred": bools(*S),
}
_INTS = {"dim": 0, "dim0": 0, "dim1": 1, "dim2": 1, "axis": 0, "axis0": 0, "axis1": 1, "dimension": 0, "n": 2}
_INTS |= {"storage_offset": 0, "row": 3, "col": 4, "low": 0, "high": 5, "from_": 0, "to": 5}
_INT_LISTS = {
    "dim": [0],
    "dims": [1, 0],
    "permutation": [1, 0],
    "physical_layout": [1, 0],
    "size": [2, 3],
    "shape": [2, 3],
    "stride": [3, 1],
    "strides": [3, 1],
    "broadcast_dimensions": [0, 1],
    "pad": [1, 1],
    "split_size": [1, 1],
    "split_sizes": [1, 1],
    "sizes": [1, 2],
    "repeats": [1, 2],
}


def _default(op, arg, rng):
    """A value for argument ``arg`` of ``op`` when no override names it."""
    ty, name = arg.type, arg.name
    if ty.name == "Tensor":
        spec = _TENSORS.get(name, T())
        if ty.is_list:
            return [spec.make(rng)] if name in _TENSORS else [spec.make(rng), spec.make(rng)]
        return None if ty.optional else spec.make(rng)
    if ty.name == "Device":
        return DEVICE
    if ty.name in ("int", "SymInt"):
        return list(_INT_LISTS.get(name, [1])) if ty.is_list else _INTS.get(name, 1)
    if ty.name == "float":
        return 0.5
    if ty.name == "bool":
        return False
    if ty.name == "Scalar":
        return 2
    if ty.name == "ScalarType":
        return ow.float64
    if ty.optional:
        return None
    raise LookupError(f"no sample for {op.name} argument {arg}: add an override")


def _load_family_overrides() -> None:
    for family in OVERRIDE_FAMILIES:
        module = importlib.import_module(f"{__package__}.samples_{family}")
        for name, spec in module.OVERRIDES.items():
            if name in OVERRIDES:
                raise ValueError(f"schema samples: {name} overridden twice")
            OVERRIDES[name] = spec


def overrides_for(op) -> dict:
    """The overrides of ``op``: its packet's (``"add"``), updated by its qualified name's (``"add.Tensor"``)."""
    packet, name = op.name.split(".")[0], op.name
    if packet.endswith("_copy") and packet not in OVERRIDES and name not in OVERRIDES:  # a view's *_copy
        base = packet[: -len("_copy")]
        packet, name = base, base + name[len(packet) :]
    return {**OVERRIDES.get(packet, {}), **OVERRIDES.get(name, {})}


def build(op, rng=None) -> tuple[list, dict]:
    """(args, kwargs) for a call of ``op`` on the CPU (its ``Device`` arguments are :data:`DEVICE`)."""
    rng = rng if rng is not None else np.random.default_rng(zlib.crc32(op.name.encode()))
    spec = overrides_for(op)
    tensor_spec = spec.get("*")
    args, kwargs, gap = [], {}, False
    for arg in op.schema.arguments:
        if arg.name in spec:
            v = make(spec[arg.name], rng)
        elif arg.type.name == "Device":
            v = DEVICE
        elif arg.has_default:
            gap = True  # later arguments go by keyword
            continue
        elif tensor_spec is not None and arg.type.name == "Tensor":
            v = make(lst(tensor_spec, tensor_spec) if arg.type.is_list else tensor_spec, rng)
        else:
            v = _default(op, arg, rng)
        if gap or arg.kwarg_only:
            kwargs[arg.name] = v
        else:
            args.append(v)
    return args, kwargs


def to_device(v, device: str):
    """``v`` with its tensors moved to ``device`` (copied for the CPU) and :data:`DEVICE` replaced by it."""
    if v is DEVICE:
        return device
    if isinstance(v, Pinned):
        return v.tensor.clone()
    if isinstance(v, ow.Tensor):
        return v.clone() if device == "cpu" else v.to(device)
    if hasattr(v, "backend_cache"):  # packed quantized weights (opweave.quantization.LinearPackedParams ...)
        return v.to(device)
    if isinstance(v, list):
        return [to_device(x, device) for x in v]
    if isinstance(v, dict):
        return {k: to_device(x, device) for k, x in v.items()}
    return v


_load_family_overrides()
