"""Which CPU kernel path runs (oneDNN or NumPy), and the cached oneDNN float primitives the kernels use.

``$OPWEAVE_CPU_KERNELS`` picks the path, read once on first use: ``auto`` (the default) runs the
oneDNN primitives where the shared binding (:mod:`opweave_onednn`) loads and NumPy elsewhere;
``numpy`` runs the pure NumPy kernels everywhere (the reference); ``onednn`` is ``auto`` that says
why oneDNN is missing in :func:`describe`. :func:`set_path` changes it in-process (benchmarks).

Primitives are made once per (shape, strides, dtype, parameters) and kept in an LRU cache, so a
repeated call pays only the binding of its buffers. A oneDNN primitive that is unimplemented for
a case raises :class:`opweave_onednn.OneDNNUnimplemented`; :func:`cached` turns a failed build into
``None`` so the caller takes the NumPy path.
"""

from __future__ import annotations

import functools
import os

import ml_dtypes
import numpy as np

ENV = "OPWEAVE_CPU_KERNELS"
PATHS = ("auto", "onednn", "numpy", "c")

_FLOAT32 = np.dtype(np.float32)
_BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
#: below this many elements a NumPy call is cheaper than binding a primitive's buffers
MIN_ELEMENTS = 16384

_mode: str | None = None
_active: bool | None = None
_reason: str | None = None


def _binding():
    import opweave_onednn

    return opweave_onednn


def set_path(path: str | None) -> None:
    """Use ``path`` (``auto``, ``onednn``, ``numpy`` or ``c``) from now on; None re-reads ``$OPWEAVE_CPU_KERNELS``."""
    global _mode, _active, _reason
    if path is not None and path not in PATHS:
        raise ValueError(f"{ENV}: expected one of {', '.join(PATHS)}, got {path!r}")
    _mode, _active, _reason = path, None, None
    from . import _c_path

    _c_path.reset()


def path() -> str:
    """The requested path: ``auto``, ``onednn``, ``numpy`` or ``c`` (``$OPWEAVE_CPU_KERNELS``, default ``auto``)."""
    global _mode
    if _mode is None:
        value = os.environ.get(ENV, "auto").strip().lower() or "auto"
        _mode = value if value in PATHS else "auto"
    return _mode


def active() -> bool:
    """Whether the oneDNN kernels run (the path is not ``numpy`` and the library loads)."""
    global _active, _reason
    if _active is None:
        if path() in ("numpy", "c"):  # c: compiled C kernels, NumPy elsewhere (see _c_path)
            _active, _reason = False, f"{ENV}={path()}"
        else:
            try:
                available, why = _binding().availability()
            except ImportError as exc:  # the binding's package or cffi is missing
                available, why = False, str(exc)
            _active, _reason = available, why
    return _active


def describe() -> str:
    """One line: which CPU kernel paths are active, and why oneDNN and the C kernels are not when they are not."""
    from . import _c_path

    if path() == "c":
        return f"{_c_path.describe()}; NumPy elsewhere (oneDNN off: {ENV}=c)"
    return f"{_describe_onednn()}; {_c_path.describe()}"


def _describe_onednn() -> str:
    raw = os.environ.get(ENV)
    note = f" ({ENV}={raw!r} is not one of {', '.join(PATHS)}: using auto)" if raw and raw.lower() not in PATHS else ""
    if active():
        lib = _binding().library()
        return (
            f"oneDNN {'.'.join(map(str, lib.version))} ({lib.isa_name}) for float32 convolution (also transposed), "
            "softmax, log_softmax, layer_norm, gelu and blocked attention (bfloat16 too for softmax, "
            f"layer_norm and gelu); NumPy elsewhere{note}"
        )
    return f"NumPy only ({_reason}){note}"


def supports(dtype: np.dtype, size: int = MIN_ELEMENTS) -> bool:
    """Whether the oneDNN path takes ``size`` elements of this NumPy dtype.

    float32, and bfloat16 where the CPU has AVX512-BF16 (oneDNN computes it in float32 and rounds once),
    at least ``MIN_ELEMENTS`` of them."""
    if size < MIN_ELEMENTS or not active():
        return False
    return dtype == _FLOAT32 or (dtype == _BFLOAT16 and _binding().isa_has_bf16(_binding().library().isa))


def cached(build):
    """``build(*key)`` memoised in an LRU cache; a oneDNN build error gives None (callers use NumPy)."""

    @functools.lru_cache(maxsize=256)
    def get(*key):
        dnnl = _binding()
        try:
            return build(*key)
        except dnnl.OneDNNError:
            return None

    get.__doc__ = build.__doc__
    return get


def strides_of(a: np.ndarray) -> tuple:
    """Element strides of ``a``."""
    item = a.itemsize
    return tuple(s // item for s in a.strides)


# -- primitives -------------------------------------------------------------------------------------


@cached
def eltwise_primitive(algorithm: int, shape: tuple, dtype: str, alpha: float, beta: float):
    """An elementwise primitive over a C-contiguous array."""
    d = _binding()
    md = d.memory_desc(shape, dtype)
    return d.Primitive(d.eltwise_desc(algorithm, md, md, alpha, beta), {d.ARG_SRC: md, d.ARG_DST: md})


def eltwise(algorithm: int, x: np.ndarray, alpha: float = 0.0, beta: float = 0.0, out: np.ndarray | None = None):
    """``algorithm`` applied to ``x`` (float32) into a new C-contiguous array (or ``out``); None if oneDNN can't."""
    x = np.ascontiguousarray(x)
    p = eltwise_primitive(algorithm, x.shape, x.dtype, float(alpha), float(beta))
    if p is None:
        return None
    y = np.empty_like(x) if out is None else out
    d = _binding()
    p.run({d.ARG_SRC: x, d.ARG_DST: y})
    return y


def gelu_algorithm(tanh: bool) -> int:
    """The eltwise algorithm of gelu, exact (erf) or its tanh approximation."""
    d = _binding()
    return d.ELTWISE_GELU_TANH if tanh else d.ELTWISE_GELU_ERF


def exp_algorithm() -> int:
    """The eltwise algorithm of exp."""
    return _binding().ELTWISE_EXP


@cached
def matmul_primitive(a_shape, a_strides, b_shape, b_strides, c_shape, c_strides, dtype):
    """A (batched) matmul primitive over strided operands and result."""
    d = _binding()
    a, b = d.memory_desc(a_shape, dtype, a_strides), d.memory_desc(b_shape, dtype, b_strides)
    c = d.memory_desc(c_shape, dtype, c_strides)
    return d.Primitive(d.matmul_desc(a, b, None, c, d.attributes()), {d.ARG_SRC: a, d.ARG_WEIGHTS: b, d.ARG_DST: c})


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None):
    """``a @ b`` of same-rank float32 arrays (2-d, or 3-d with one batch size) into a new array or ``out``; or None.

    ``out`` may be any strided view (a block of a larger result)."""
    shape = a.shape[:-1] + b.shape[-1:]
    c = np.empty(shape, a.dtype) if out is None else out
    p = matmul_primitive(a.shape, strides_of(a), b.shape, strides_of(b), shape, strides_of(c), a.dtype)
    if p is None:
        return None
    d = _binding()
    p.run({d.ARG_SRC: a, d.ARG_WEIGHTS: b, d.ARG_DST: c})
    return c


@cached
def softmax_primitive(log: bool, shape: tuple, dtype: str, axis: int):
    """A softmax or log-softmax primitive over a C-contiguous array."""
    d = _binding()
    md = d.memory_desc(shape, dtype)
    algorithm = d.SOFTMAX_LOG if log else d.SOFTMAX_ACCURATE
    return d.Primitive(d.softmax_desc(algorithm, md, md, axis), {d.ARG_SRC: md, d.ARG_DST: md})


def softmax(x: np.ndarray, axis: int, log: bool, out: np.ndarray | None = None):
    """(log-)softmax of ``x`` along ``axis`` into a new C-contiguous array (or ``out``); None if oneDNN can't."""
    x = np.ascontiguousarray(x)
    p = softmax_primitive(bool(log), x.shape, x.dtype, int(axis))
    if p is None:
        return None
    y = np.empty_like(x) if out is None else out
    d = _binding()
    p.run({d.ARG_SRC: x, d.ARG_DST: y})
    return y


@cached
def layer_norm_primitive(rows: int, width: int, dtype: str, eps: float, flags: int):
    """A layer normalization primitive over a C-contiguous (rows, width) array."""
    d = _binding()
    md = d.memory_desc((rows, width), dtype)
    descs = {d.ARG_SRC: md, d.ARG_DST: md}
    vec = d.memory_desc((width,), np.float32)
    if flags & d.USE_SCALE:
        descs[d.ARG_SCALE] = vec
    if flags & d.USE_SHIFT:
        descs[d.ARG_SHIFT] = vec
    return d.Primitive(d.layer_norm_desc(md, md, None, eps, flags), descs)


def layer_norm(x: np.ndarray, width: int, eps: float, weight: np.ndarray | None, bias: np.ndarray | None):
    """Layer norm of ``x`` over its last ``width`` elements (float32 weight and bias or None); None if oneDNN can't."""
    d = _binding()
    shape = x.shape
    x2 = np.ascontiguousarray(x).reshape(-1, width)
    flags = (d.USE_SCALE if weight is not None else 0) | (d.USE_SHIFT if bias is not None else 0)
    p = layer_norm_primitive(x2.shape[0], width, x2.dtype, float(eps), flags)
    if p is None:
        return None
    y = np.empty_like(x2)
    buffers = {d.ARG_SRC: x2, d.ARG_DST: y}
    if weight is not None:
        buffers[d.ARG_SCALE] = np.ascontiguousarray(weight.reshape(-1), np.float32)
    if bias is not None:
        buffers[d.ARG_SHIFT] = np.ascontiguousarray(bias.reshape(-1), np.float32)
    p.run(buffers)
    return y.reshape(shape)


class _Convolution:
    """A forward convolution with the layouts oneDNN prefers, and the reorders into and out of them."""

    def __init__(self, x_shape, w_shape, y_shape, dtype, strides, dilates, padding_l, padding_r, bias: bool):
        d = _binding()
        self.x_md, self.w_md, self.y_md = (d.memory_desc(s, dtype) for s in (x_shape, w_shape, y_shape))
        any_x, any_w, any_y = (d.memory_desc_any(s, dtype) for s in (x_shape, w_shape, y_shape))
        b_md = d.memory_desc((y_shape[1],), dtype) if bias else None
        pd = d.convolution_desc(any_x, any_w, b_md, any_y, strides, dilates, padding_l, padding_r, d.attributes())
        self.qx, self.qw, self.qy = (d.query_md(pd, q) for q in (d.QUERY_SRC_MD, d.QUERY_WEIGHTS_MD, d.QUERY_DST_MD))
        descs = {d.ARG_SRC: self.qx, d.ARG_WEIGHTS: self.qw, d.ARG_DST: self.qy}
        if bias:
            descs[d.ARG_BIAS] = b_md
        self.conv = d.Primitive(pd, descs)
        self.to_x = self._reorder(self.x_md, self.qx)
        self.to_w = self._reorder(self.w_md, self.qw)
        self.from_y = self._reorder(self.qy, self.y_md)
        self.sizes = tuple(d.desc_size(m) for m in (self.qx, self.qw, self.qy))
        self.y_shape = y_shape

    @staticmethod
    def _reorder(src, dst):
        d = _binding()
        if d.desc_equal(src, dst):
            return None
        return d.Primitive(d.reorder_desc(src, dst), {d.ARG_SRC: src, d.ARG_DST: dst})

    def _into(self, reorder, array, size):
        if reorder is None:
            return array
        d = _binding()
        out = d.aligned_empty(size)
        reorder.run({d.ARG_SRC: array, d.ARG_DST: out})
        return out

    def __call__(self, x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
        d = _binding()
        y = np.empty(self.y_shape, x.dtype)
        bx = self._into(self.to_x, x, self.sizes[0])
        bw = self._into(self.to_w, w, self.sizes[1])
        by = y if self.from_y is None else d.aligned_empty(self.sizes[2])
        buffers = {d.ARG_SRC: bx, d.ARG_WEIGHTS: bw, d.ARG_DST: by}
        if b is not None:
            buffers[d.ARG_BIAS] = b
        self.conv.run(buffers)
        if self.from_y is not None:
            self.from_y.run({d.ARG_SRC: by, d.ARG_DST: y})
        return y


class _TransposedConvolution(_Convolution):
    """A transposed convolution: oneDNN's backward-data of the forward convolution from output to input."""

    def __init__(self, x_shape, w_shape, y_shape, dtype, strides, dilates, padding_l, padding_r, bias: bool):
        d = _binding()
        self.x_md, self.w_md, self.y_md = (d.memory_desc(s, dtype) for s in (x_shape, w_shape, y_shape))
        any_x, any_w, any_y = (d.memory_desc_any(s, dtype) for s in (x_shape, w_shape, y_shape))
        geometry = (strides, dilates, padding_l, padding_r)
        hint = d.convolution_desc(any_y, any_w, None, any_x, *geometry, d.attributes(), d.FORWARD_TRAINING)
        pd = d.convolution_backward_data_desc(any_y, any_w, any_x, *geometry, hint, d.attributes())
        self.qx, self.qw, self.qy = (
            d.query_md(pd, q) for q in (d.QUERY_DIFF_DST_MD, d.QUERY_WEIGHTS_MD, d.QUERY_DIFF_SRC_MD)
        )
        self.conv = d.Primitive(pd, {d.ARG_DIFF_DST: self.qx, d.ARG_WEIGHTS: self.qw, d.ARG_DIFF_SRC: self.qy})
        self.to_x = self._reorder(self.x_md, self.qx)
        self.to_w = self._reorder(self.w_md, self.qw)
        self.from_y = self._reorder(self.qy, self.y_md)
        self.sizes = tuple(d.desc_size(m) for m in (self.qx, self.qw, self.qy))
        self.y_shape = y_shape
        self.bias = bias

    def __call__(self, x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
        d = _binding()
        y = np.empty(self.y_shape, x.dtype)
        bx = self._into(self.to_x, x, self.sizes[0])
        bw = self._into(self.to_w, w, self.sizes[1])
        by = y if self.from_y is None else d.aligned_empty(self.sizes[2])
        self.conv.run({d.ARG_DIFF_DST: bx, d.ARG_WEIGHTS: bw, d.ARG_DIFF_SRC: by})
        if self.from_y is not None:
            self.from_y.run({d.ARG_SRC: by, d.ARG_DST: y})
        if b is not None:
            y += b.reshape((-1,) + (1,) * (y.ndim - 2))
        return y


@cached
def transposed_convolution_primitive(x_shape, w_shape, y_shape, dtype, strides, dilates, padding_l, padding_r):
    """A cached :class:`_TransposedConvolution` (C-contiguous input, weight and output)."""
    return _TransposedConvolution(x_shape, w_shape, y_shape, dtype, strides, dilates, padding_l, padding_r, False)


def transposed_convolution(x, w, b, stride, padding, dilation, output_padding, groups: int):
    """PyTorch's grouped N-d (1-3) transposed convolution of float32 arrays; None if oneDNN can't.

    ``w`` is (C_in, C_out / groups, *K), the output (N, C_out, *O) with
    ``O = (S - 1) stride - 2 padding + dilation (K - 1) + output_padding + 1``.
    """
    n, c_in = x.shape[:2]
    ks = w.shape[2:]
    c_out = w.shape[1] * groups
    sizes = tuple(
        (s - 1) * st - 2 * p + dl * (k - 1) + op + 1
        for s, st, p, dl, k, op in zip(x.shape[2:], stride, padding, dilation, ks, output_padding)
    )
    if any(s <= 0 for s in sizes) or 0 in x.shape or 0 in w.shape:
        return None
    # oneDNN's weights of the forward convolution (output -> input): (G, C_in / G, C_out / G, *K)
    w_shape = w.shape if groups == 1 else (groups, c_in // groups, c_out // groups, *ks)
    # the forward convolution's right padding that makes its output exactly the input's size
    right = tuple(
        (s - 1) * st + dl * (k - 1) + 1 - o - p
        for s, st, dl, k, o, p in zip(x.shape[2:], stride, dilation, ks, sizes, padding)
    )
    conv = transposed_convolution_primitive(
        tuple(x.shape),
        tuple(w_shape),
        (n, c_out, *sizes),
        x.dtype,
        tuple(stride),
        tuple(dl - 1 for dl in dilation),
        tuple(padding),
        right,
    )
    if conv is None:
        return None
    return conv(
        np.ascontiguousarray(x),
        np.ascontiguousarray(w).reshape(w_shape),
        None if b is None else np.ascontiguousarray(b),
    )


@cached
def convolution_primitive(x_shape, w_shape, y_shape, dtype, strides, dilates, padding_l, padding_r, bias):
    """A cached :class:`_Convolution` (C-contiguous input, weight and output)."""
    return _Convolution(x_shape, w_shape, y_shape, dtype, strides, dilates, padding_l, padding_r, bias)


def convolution(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride, padding, dilation, groups: int):
    """Grouped N-d (1-3) cross-correlation of float32 arrays, PyTorch's shapes; None if oneDNN can't."""
    n = x.shape[0]
    c_out, ks = w.shape[0], w.shape[2:]
    sizes = tuple(
        (s + 2 * p - dl * (k - 1) - 1) // st + 1 for s, p, dl, k, st in zip(x.shape[2:], padding, dilation, ks, stride)
    )
    if any(s <= 0 for s in sizes) or 0 in x.shape or 0 in w.shape:
        return None
    y_shape = (n, c_out, *sizes)
    w_shape = w.shape if groups == 1 else (groups, c_out // groups, *w.shape[1:])
    conv = convolution_primitive(
        tuple(x.shape),
        tuple(w_shape),
        y_shape,
        x.dtype,
        tuple(stride),
        tuple(dl - 1 for dl in dilation),
        tuple(padding),
        tuple(padding),
        b is not None,
    )
    if conv is None:
        return None
    return conv(
        np.ascontiguousarray(x),
        np.ascontiguousarray(w).reshape(w_shape),
        None if b is None else np.ascontiguousarray(b),
    )
