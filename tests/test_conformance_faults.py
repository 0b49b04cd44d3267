"""Planted faults: each is the CPU backend with one realistic vendor bug, and the quick profile must catch it.

Every fault registers its own device type (``opweave_conformance.testing.install``) whose
prim kernels are the CPU's except one, replaced by a wrapper with the bug; the suite runs
only on the ops that reach that prim (``--ops``), must fail, and must name the prim (or an
op that reached it) with the expected check. Faults cover the kinds vendors get wrong:
wrong values for one dtype, wrong result dtypes, non-contiguous inputs, broadcasting,
reduction dims, special values, missing errors, mutated inputs, views that copy, ignored
seeds, nondeterminism, off-by-one shapes, integer overflow, 16-bit precision and clamped indices.
"""

from __future__ import annotations

import numpy as np
import opweave as ow
import opweave_conformance as conformance
import pytest
from opweave_conformance import testing as T
from opweave_cpu._backend import native, wrap

F16, BF16, F32, F64 = ow.float16, ow.bfloat16, ow.float32, ow.float64


def _np(fn, dtype=None):
    """A fault computing ``fn(*numpy arrays)`` in place of the kernel (result in the first tensor's dtype)."""

    def run(kernel, *args):
        arrays = [native(a) if isinstance(a, ow.Tensor) else a for a in args]
        out = kernel(*args)
        with np.errstate(all="ignore"):
            return wrap(np.asarray(fn(*arrays)).astype(out.dtype.numpy), out.dtype)

    return T.transformed(run, dtype)


def _strided_second(kernel):
    """Reads a non-contiguous second operand as if it were contiguous."""

    def faulty(a, b, *rest):
        return T.wrong_when_strided(lambda b2, a2: kernel(a2, b2, *rest))(b, a)

    return faulty


def _broadcast_first_row(kernel):
    """A binary kernel that reads a stride-0 operand's storage past its one row (zero-filled memory)."""

    def dense(t):
        if not any(s == 0 and n > 1 for s, n in zip(t.stride(), t.shape)):
            return t
        host = np.zeros(tuple(t.shape), t.dtype.numpy)
        host[(0,) * (t.ndim - 1)] = native(t)[(0,) * (t.ndim - 1)]
        return wrap(host, t.dtype)

    def faulty(a, b):
        return kernel(dense(a), dense(b))

    return faulty


def _keepdim_lost(kernel):
    """A reduction over the last dim only, whatever dims it was asked for."""

    def faulty(inp, dims, *rest):
        if dims and inp.ndim > 1:
            dims = [inp.ndim - 1 - (d % inp.ndim) for d in dims]
        return kernel(inp, dims, *rest)

    return faulty


def _fmax_nan(kernel):
    return _np(np.fmax)(kernel)


def _positive_zero(kernel):
    """``neg`` computed as ``0 - x``: -0.0 for 0.0 is lost."""
    return _np(lambda x: 0 - x if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else -x)(kernel)


def _exp_inf_nan(kernel):
    return _np(lambda x: np.where(np.isinf(x), np.nan, np.exp(x)))(kernel)


def _sign_nan_zero(kernel):
    return _np(lambda x: np.sign(np.nan_to_num(x)) if x.dtype.kind in "fV" else np.sign(x))(kernel)


def _amax_ignores_nan(kernel):
    def faulty(inp, dims):
        x = native(inp)
        if x.dtype.kind not in "f" or x.size == 0:
            return kernel(inp, dims)
        axes = None if dims is None else tuple(dims)
        out = kernel(inp, dims)
        with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
            __import__("warnings").simplefilter("ignore")
            v = np.nanmax(x, axis=axes) if x.ndim else x
        return wrap(np.asarray(v).astype(x.dtype).reshape(out.shape), out.dtype)

    return faulty


def _no_error_dropping(kernel):
    """An indexing kernel that skips out-of-range indices instead of raising (it returns ``a`` unchanged)."""

    def faulty(a, *rest):
        try:
            return kernel(a, *rest)
        except (IndexError, RuntimeError, ValueError):
            return wrap(np.array(native(a)), a.dtype)

    return faulty


def _mutates_sorted(kernel):
    """``prims::cumsum`` that also writes its result into its input."""

    def faulty(a, dim, *rest):
        out = kernel(a, dim, *rest)
        if out.dtype == a.dtype and a.numel():
            native(a)[...] = native(out)
        return out

    return faulty


def _seed_ignored(seed_pos):
    def change(args):
        args[seed_pos] = 0
        return args

    return T.with_args(change)


def _off(pos, delta):
    def change(args):
        args[pos] = args[pos] + delta if isinstance(args[pos], int) else [x + delta for x in args[pos]]
        return args

    return T.with_args(change)


def _slice_short(kernel):
    def faulty(a, start, limit, strides=None):
        limit = [max(s, lim - 1) if i == len(limit) - 1 else lim for i, (s, lim) in enumerate(zip(start, limit))]
        return kernel(a, start, limit, strides)

    return faulty


def _sinh_naive(x):
    return (np.exp(x) - np.exp(-x)) / 2


def _atanh_naive(x):
    return 0.5 * np.log((1 + x) / (1 - x))


def _erf_crude(x):
    """Abramowitz-Stegun 7.1.25 (3 terms, error 2.5e-5), in the input's 16-bit precision."""
    t = 1 / (1 + 0.47047 * np.abs(x))
    y = 1 - (0.3480242 * t - 0.0958798 * t**2 + 0.7478556 * t**3) * np.exp(-(x * x))
    return np.sign(x) * y


def _take_wrap(kernel):
    return T.clamps_indices(1, "wrap", lambda args: args[0].numel())(kernel)


def _index_clamped(kernel):
    """``prims::index`` clamping every index tensor into its dim."""

    def faulty(a, indices):
        fixed = []
        for k, i in enumerate(indices):
            if i is None or i.dtype is ow.bool:
                fixed.append(i)
                continue
            n = a.shape[k]
            v = native(i).astype(np.int64)
            fixed.append(wrap(np.clip(np.where(v < 0, v + n, v), 0, n - 1).astype(i.dtype.numpy), i.dtype))
        return kernel(a, fixed)

    return faulty


def _argmax_int32(kernel):
    return T.wrong_dtype(ow.int32)(kernel)


def _var_no_correction(kernel):
    def faulty(inp, dims, correction, *rest):
        return kernel(inp, dims, 0.0, *rest)

    return faulty


def _where_swapped_broadcast(kernel):
    def faulty(pred, a, b):
        if any(s == 0 and n > 1 for s, n in zip(pred.stride(), pred.shape)):
            return kernel(pred, b, a)
        return kernel(pred, a, b)

    return faulty


def _mm_strided_rhs(kernel):
    return _strided_second(kernel)


I16, I8, I32, I64 = ow.int16, ow.int8, ow.int32, ow.int64


def _half_saturates(kernel):
    """``convert_element_type`` to float16 clamping at ±65504 instead of overflowing to ±inf (no NaN kept)."""

    def faulty(a, dtype):
        out = kernel(a, dtype)
        if dtype is not F16 or not a.dtype.is_floating_point:
            return out
        with np.errstate(all="ignore"):
            x = np.nan_to_num(native(a).astype(np.float64), nan=0.0)
            return wrap(np.clip(x, -65504, 65504).astype(np.float16), F16)

    return faulty


def _eigh_rows(kernel):
    """``eigh`` returning the eigenvectors as rows (Vᵀ, LAPACK's row-major trap): eigenvalues stay right."""

    def faulty(a, uplo):
        w, v = kernel(a, uplo)
        return w, wrap(np.ascontiguousarray(np.swapaxes(native(v), -1, -2)), v.dtype)

    return faulty


def _bincount_int32(kernel):
    """``bincount`` counting into int32 (its output shape depends on the data, so no meta device run sees it)."""

    def faulty(*args):
        out = kernel(*args)
        return out if out.dtype is not ow.int64 else wrap(native(out).astype(np.int32), ow.int32)

    return faulty


def _outputs(fn):
    """A fault that passes every floating output of the kernel through ``fn(numpy array) -> numpy array``."""

    def fault(kernel):
        def one(t):
            if not isinstance(t, ow.Tensor) or not t.dtype.is_floating_point:
                return t
            with np.errstate(all="ignore"):
                return wrap(np.asarray(fn(np.array(native(t)))).astype(t.dtype.numpy), t.dtype)

        def faulty(*args):
            out = kernel(*args)
            return type(out)(one(t) for t in out) if isinstance(out, (tuple, list)) else one(out)

        return faulty

    return fault


def _unsigned_zero(x):
    """-0.0 returned as 0.0 (an accumulator or a select that starts from +0.0)."""
    return x + 0.0


def _flush_f16(x):
    """float16 results below the normal range flushed to zero (a 16-bit kernel with FTZ)."""
    if x.dtype != np.float16:
        return x
    return np.where(np.abs(x) < np.finfo(np.float16).tiny, np.copysign(np.zeros_like(x), x), x)


def _flush_wide(x):
    """float32/float64 results below the normal range flushed to signed zero (FTZ; 16-bit ones kept)."""
    if x.dtype not in (np.float32, np.float64):
        return x
    return np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.copysign(np.zeros_like(x), x), x)


def _inputs_flushed(kernel):
    """Subnormal floating inputs read as signed zero (denormals-are-zero) before the kernel runs."""

    def one(t):
        if not isinstance(t, ow.Tensor) or t.dtype not in (F32, F64):
            return t
        x = np.array(native(t))
        return wrap(np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.copysign(np.zeros_like(x), x), x), t.dtype)

    return lambda *args: kernel(*(one(a) for a in args))


def _sign_from_signbit(kernel):
    """``sign`` that reads the sign bit before testing for nan: ``sign(-nan)`` is -1 (``sign(nan)`` stays nan)."""

    def faulty(a):
        out = kernel(a)
        if not out.dtype.is_floating_point:
            return out
        x = np.array(native(a))
        return wrap(np.where(np.isnan(x) & np.signbit(x), -1, np.array(native(out))).astype(x.dtype), out.dtype)

    return faulty


def _abs_by_square(x):
    """``|x|`` as ``sqrt(x * x)``: exact for ordinary values, inf at the largest finite value, 0 at subnormals."""
    with np.errstate(all="ignore"):
        return np.sqrt(x * x)


def _remainder_numpy_sign(kernel):
    """remainder whose zero results take the divisor's sign (NumPy's rule; PyTorch keeps the dividend's)."""
    return _np(np.remainder, (F32, F64))(kernel)


def _column_major(kernel):
    """Fresh outputs laid out column-major (a kernel that writes its result transposed)."""

    def one(t):
        if not isinstance(t, ow.Tensor) or t.ndim < 2 or t.numel() < 2:
            return t
        return wrap(np.asfortranarray(native(t)), t.dtype)

    def faulty(*args):
        out = kernel(*args)
        return type(out)(one(t) for t in out) if isinstance(out, (tuple, list)) else one(out)

    return faulty


# name -> (prim, fault, ops to run, ops of which at least one must fail (the prim's name first), check)
FAULTS = {
    # wrong value for one dtype
    "add_f32": ("prims::add", _np(np.subtract, (F32,)), "prims::add,add.Tensor", "values"),
    "mul_i8": ("prims::mul", _np(lambda a, b: a * b + 1, (I8,)), "prims::mul,mul.Tensor", "values"),
    "exp_bf16": ("prims::exp", _np(lambda x: np.exp(x) * 1.05, (BF16,)), "prims::exp,exp", "values"),
    "sqrt_f64": ("prims::sqrt", _np(lambda x: np.sqrt(x) * (1 + 1e-6), (F64,)), "prims::sqrt,sqrt", "values"),
    # wrong result dtype
    "abs_dtype": ("prims::abs", T.wrong_dtype(F64), "prims::abs,abs", "meta"),
    "argmax_dtype": ("prims::argmax", _argmax_int32, "prims::argmax,argmax", "meta"),
    "sum_dtype": ("prims::sum", T.wrong_dtype(F32), "prims::sum,sum", "meta"),
    "bincount_dtype": ("prims::bincount", _bincount_int32, "prims::bincount,bincount", "meta"),
    # non-contiguous or transposed inputs only
    "sum_strided": ("prims::sum", T.wrong_when_strided, "prims::sum,sum.dim_IntList", "values"),
    "exp_strided": ("prims::exp", T.wrong_when_strided, "prims::exp,exp", "values"),
    "mm_strided": ("prims::mm", _mm_strided_rhs, "prims::mm,mm", "values"),
    # broadcasting (stride-0 operands)
    "add_broadcast": ("prims::add", _broadcast_first_row, "prims::add,add.Tensor", "values"),
    "where_broadcast": ("prims::where", _where_swapped_broadcast, "prims::where,where.self", "values"),
    # reduction dims
    "sum_dims": ("prims::sum", _keepdim_lost, "prims::sum,sum.dim_IntList", "meta"),
    "var_correction": ("prims::var", _var_no_correction, "prims::var,var.correction", "values"),
    # NaN, inf, -0.0
    "maximum_nan": ("prims::maximum", _fmax_nan, "prims::maximum,maximum", "values"),
    "amax_nan": ("prims::amax", _amax_ignores_nan, "prims::amax,amax", "values"),
    "neg_zero": ("prims::neg", _positive_zero, "prims::neg,neg", "values"),
    "exp_inf": ("prims::exp", _exp_inf_nan, "prims::exp,exp", "values"),
    "sign_nan": ("prims::sign", _sign_nan_zero, "prims::sign,sign", "values"),
    "eigh_vectors_as_rows": ("prims::eigh", _eigh_rows, "prims::eigh", "values"),
    "half_saturates": (
        "prims::convert_element_type",
        _half_saturates,
        "prims::convert_element_type,to.dtype",
        "values",
    ),
    "prod_neg_zero": ("prims::prod", _outputs(_unsigned_zero), "prims::prod,prod", "values"),
    "cumprod_neg_zero": ("prims::cumprod", _outputs(_unsigned_zero), "prims::cumprod,cumprod", "values"),
    "cummax_neg_zero": ("prims::cummax", _outputs(_unsigned_zero), "prims::cummax,cummax", "values"),
    "topk_neg_zero": ("prims::topk", _outputs(_unsigned_zero), "prims::topk,topk", "values"),
    "clamp_neg_zero": ("prims::clamp", _outputs(_unsigned_zero), "prims::clamp", "values"),
    "remainder_zero_sign": ("prims::remainder", _remainder_numpy_sign, "prims::remainder", "values"),
    "bessel_i1_neg_zero": ("prims::bessel_i1", _outputs(_unsigned_zero), "prims::bessel_i1", "values"),
    "matrix_exp_drops_nan": ("prims::matrix_exp", _outputs(np.nan_to_num), "prims::matrix_exp", "values"),
    "matrix_exp_inf_saturates": (
        "prims::matrix_exp",
        _outputs(lambda x: np.nan_to_num(x, nan=np.nan)),
        "prims::matrix_exp",
        "values",
    ),
    # layout of fresh outputs
    "unique_column_major": ("prims::unique", _column_major, "prims::unique", "strides"),
    # missing errors
    "div_no_error": ("prims::div", T.no_error, "prims::div", "errors"),
    "index_put_no_error": ("prims::index_put", _no_error_dropping, "prims::index_put,index_put", "errors"),
    "index_add_no_error": ("prims::index_add", _no_error_dropping, "prims::index_add,index_add", "errors"),
    # inputs mutated
    "exp_mutates": ("prims::exp", T.mutates_input, "prims::exp,exp", "inputs"),
    "cumsum_mutates": ("prims::cumsum", _mutates_sorted, "prims::cumsum,cumsum", "inputs"),
    # views returning copies
    "diagonal_copy": ("prims::diagonal", T.copy_instead_of_view, "prims::diagonal,diagonal", "meta"),
    "transpose_copy": ("prims::transpose", T.copy_instead_of_view, "prims::transpose,transpose.int", "meta"),
    # seeds ignored
    "uniform_seed": ("prims::uniform", T.ignores_seed, "prims::uniform,rand", "random"),
    "normal_seed": ("prims::normal", _seed_ignored(3), "prims::normal,randn", "random"),
    # nondeterminism
    "sum_order": ("prims::sum", T.random_order_sum, "prims::sum,sum.dim_IntList", "determinism"),
    "index_add_order": (
        "prims::index_add",
        T.random_order_accumulate(3, 2),
        "prims::index_add,index_add",
        "determinism",
    ),
    "scatter_add_order": (
        "prims::scatter_add",
        T.random_order_accumulate(3, 2),
        "prims::scatter_add,scatter_add",
        "determinism",
    ),
    "mm_split_k": ("prims::mm", T.split_k_matmul, "prims::mm,mm", "determinism"),
    "bmm_split_k": ("prims::bmm", T.split_k_matmul, "prims::bmm,bmm", "determinism"),
    # off-by-one in shape ops
    "diagonal_offset": ("prims::diagonal", _off(1, 1), "prims::diagonal,diagonal", "meta"),
    "slice_short": ("prims::slice", _slice_short, "prims::slice,slice.Tensor", "meta"),
    "tril_indices_offset": ("prims::tril_indices", _off(2, 1), "prims::tril_indices,tril_indices", "meta"),
    # integer overflow
    "add_i16_saturates": ("prims::add", T.saturating, "prims::add,add.Tensor", "values"),
    "mul_i32_saturates": ("prims::mul", T.saturating, "prims::mul,mul.Tensor", "values"),
    "sum_i64_narrow": ("prims::sum", T.narrow_accumulator(np.int32), "prims::sum,sum", "values"),
    "cumsum_i32_float": ("prims::cumsum", T.float_accumulator, "prims::cumsum,cumsum", "values"),
    "mm_i32_float": ("prims::mm", T.float_accumulator, "prims::mm,mm", "values"),
    "prod_i64_float": ("prims::prod", T.float_accumulator, "prims::prod,prod", "values"),
    # 16-bit precision
    "log1p_f16": ("prims::log1p", T.computed_in((F16, BF16), lambda x: np.log(1 + x)), "prims::log1p,log1p", "values"),
    "expm1_f16": ("prims::expm1", T.computed_in((F16, BF16), lambda x: np.exp(x) - 1), "prims::expm1,expm1", "values"),
    "sinh_f16": ("prims::sinh", T.computed_in((F16,), _sinh_naive), "prims::sinh,sinh", "values"),
    "atanh_bf16": ("prims::atanh", T.computed_in((BF16,), _atanh_naive), "prims::atanh,atanh", "values"),
    "erf_f16": ("prims::erf", T.computed_in((F16,), _erf_crude), "prims::erf,erf", "values"),
    "exp_f16_flushes": ("prims::exp", _outputs(_flush_f16), "prims::exp,exp", "values"),
    "mul_f16_flushes": ("prims::mul", _outputs(_flush_f16), "prims::mul", "values"),
    "convert_f16_flushes": (
        "prims::convert_element_type",
        _outputs(_flush_f16),
        "prims::convert_element_type",
        "values",
    ),
    # subnormals, the largest finite value and -nan (the special-value probe)
    "log_ndtr_f16_flushes": ("prims::log_ndtr", _outputs(_flush_f16), "prims::log_ndtr,special_log_ndtr", "values"),
    "i1_flushes": ("prims::bessel_i1", _outputs(_flush_wide), "prims::bessel_i1", "values"),
    "mul_flushes": ("prims::mul", _outputs(_flush_wide), "prims::mul", "values"),
    "log_daz": ("prims::log", _inputs_flushed, "prims::log", "values"),
    "sign_negative_nan": ("prims::sign", _sign_from_signbit, "prims::sign,sign", "values"),
    "abs_by_square": ("prims::abs", _np(_abs_by_square, (F32, F64)), "prims::abs", "values"),
    # clamped or wrapped indices
    "gather_clamps": ("prims::gather", T.clamps_indices(2), "prims::gather,gather", "errors"),
    "index_select_wraps": ("prims::index_select", T.clamps_indices(2, "wrap"), "prims::index_select", "errors"),
    "scatter_add_clamps": ("prims::scatter_add", T.clamps_indices(2), "prims::scatter_add,scatter_add", "errors"),
    "take_wraps": ("prims::take", _take_wrap, "prims::take,take", "errors"),
    "index_clamps": ("prims::index", _index_clamped, "prims::index,index.Tensor", "errors"),
}


def _index_put_random_order(kernel):
    """``prims::index_put`` with ``accumulate=True`` adding duplicates in a random (atomic) order."""
    rng = np.random.default_rng(0)

    def faulty(a, indices, values, accumulate):
        if not accumulate or not (a.dtype.is_floating_point or a.dtype.is_complex):
            return kernel(a, indices, values, accumulate)
        flat = [i for i in indices if i is not None]
        if not flat or any(i.dtype is ow.bool for i in flat) or flat[0].numel() < 2:
            return kernel(a, indices, values, accumulate)
        n = flat[0].shape[0] if flat[0].ndim else 1
        v = np.broadcast_to(native(values), (n,) + tuple(native(values).shape[1:])) if native(values).ndim else None
        if v is None or any(i.ndim != 1 or i.shape[0] != n for i in flat):
            return kernel(a, indices, values, accumulate)
        out = a
        for k in rng.permutation(n):
            one = [None if i is None else wrap(native(i)[k : k + 1].copy(), i.dtype) for i in indices]
            out = kernel(out, one, wrap(np.ascontiguousarray(v[k : k + 1]), values.dtype), True)
        return out

    return faulty


FAULTS["index_put_order"] = (
    "prims::index_put",
    _index_put_random_order,
    "prims::index_put,index_put",
    "determinism",
)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_planted_fault_is_caught_and_named(name):
    prim, fault, ops, check = FAULTS[name]
    backend = f"fault_{name}"
    T.install(backend, {prim: fault})
    report = conformance.run(backend, ops=ops)
    failed = {r.name: r for r in report.ops if r.status == "fail"}
    assert failed, f"{name}: the planted fault in {prim} was not caught\n{report.table()}"
    table = report.table()
    assert any(op in table for op in failed), "the report names a failing op"
    checks = {d.check for r in failed.values() for d in r.dtypes if d.status == "fail"}
    assert check in checks, f"{name}: expected a '{check}' failure, got {checks}\n{table}"
    if prim in ops.split(","):
        assert prim in failed, f"{name}: the faulty prim {prim} itself passed\n{table}"


def test_the_fault_set_covers_every_kind():
    assert len(FAULTS) >= 40
