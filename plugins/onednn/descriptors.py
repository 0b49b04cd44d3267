"""Memory descriptors, attributes and primitive descriptors of oneDNN, made from NumPy shapes and strides.

Memory descriptors are plain (NumPy shapes and element strides, no format tags) unless the
primitive is asked to choose (:func:`memory_desc_any`). Every oneDNN object is destroyed when
its Python wrapper is collected.
"""

from __future__ import annotations

import numpy as np

from ._library import (
    CONVOLUTION_DIRECT,
    DATA_TYPES,
    ELTWISE_RELU,
    FORMAT_ANY,
    FORWARD_INFERENCE,
    QUERY_IMPL_INFO,
    SCRATCHPAD_USER,
    library,
)


def data_type(dtype) -> int:
    """oneDNN data type of a NumPy dtype (f16, bf16, f32, s32, s8, u8); KeyError for any other."""
    return DATA_TYPES[np.dtype(dtype)]


def memory_desc(shape, dtype, strides=None):
    """A plain memory descriptor; ``strides`` in elements (C-contiguous when None)."""
    L = library()
    shape = [int(s) for s in shape]
    if strides is None:
        strides, step = [0] * len(shape), 1
        for i in range(len(shape) - 1, -1, -1):
            strides[i] = step
            step *= max(shape[i], 1)
    md = L.ffi.new("dnnl_memory_desc_t *")
    dims = L.ffi.new("int64_t[]", shape)
    L.check(
        L.lib.dnnl_memory_desc_create_with_strides(
            md, len(shape), dims, data_type(dtype), L.ffi.new("int64_t[]", [int(s) for s in strides])
        ),
        "dnnl_memory_desc_create_with_strides",
    )
    return L.ffi.gc(md[0], L.lib.dnnl_memory_desc_destroy)


def memory_desc_any(shape, dtype):
    """A memory descriptor whose layout the primitive chooses (``format_tag_any``)."""
    L = library()
    md = L.ffi.new("dnnl_memory_desc_t *")
    dims = L.ffi.new("int64_t[]", [int(s) for s in shape])
    L.check(
        L.lib.dnnl_memory_desc_create_with_tag(md, len(shape), dims, data_type(dtype), FORMAT_ANY),
        "dnnl_memory_desc_create_with_tag",
    )
    return L.ffi.gc(md[0], L.lib.dnnl_memory_desc_destroy)


def array_desc(a: np.ndarray):
    """The memory descriptor of a NumPy array as it lies in memory (its own strides)."""
    item = a.itemsize
    return memory_desc(a.shape, a.dtype, [s // item for s in a.strides])


def clone_desc(md):
    """An owned copy of a descriptor (queried descriptors live only as long as their primitive descriptor)."""
    L = library()
    out = L.ffi.new("dnnl_memory_desc_t *")
    L.check(L.lib.dnnl_memory_desc_clone(out, md), "dnnl_memory_desc_clone")
    return L.ffi.gc(out[0], L.lib.dnnl_memory_desc_destroy)


def desc_equal(a, b) -> bool:
    """Whether two memory descriptors describe the same layout."""
    return bool(library().lib.dnnl_memory_desc_equal(a, b))


def desc_size(md) -> int:
    """Bytes a memory of this descriptor needs."""
    return int(library().lib.dnnl_memory_desc_get_size(md))


def attributes(scales=(), zero_points=(), relu=False):
    """Primitive attributes: user scratchpad, runtime ``scales``/``zero_points`` as ``(arg, mask)`` pairs, a ReLU."""
    L = library()
    ffi, lib = L.ffi, L.lib
    attr = ffi.new("dnnl_primitive_attr_t *")
    L.check(lib.dnnl_primitive_attr_create(attr), "dnnl_primitive_attr_create")
    attr = ffi.gc(attr[0], lib.dnnl_primitive_attr_destroy)
    L.check(lib.dnnl_primitive_attr_set_scratchpad_mode(attr, SCRATCHPAD_USER), "set_scratchpad_mode")
    for arg, mask in scales:
        L.check(lib.dnnl_primitive_attr_set_scales_mask(attr, arg, mask), "dnnl_primitive_attr_set_scales_mask")
    for arg, mask in zero_points:
        L.check(
            lib.dnnl_primitive_attr_set_zero_points_mask(attr, arg, mask), "dnnl_primitive_attr_set_zero_points_mask"
        )
    if relu:
        post_ops = ffi.new("dnnl_post_ops_t *")
        L.check(lib.dnnl_post_ops_create(post_ops), "dnnl_post_ops_create")
        post_ops = ffi.gc(post_ops[0], lib.dnnl_post_ops_destroy)
        L.check(lib.dnnl_post_ops_append_eltwise(post_ops, ELTWISE_RELU, 0.0, 0.0), "dnnl_post_ops_append_eltwise")
        L.check(lib.dnnl_primitive_attr_set_post_ops(attr, post_ops), "dnnl_primitive_attr_set_post_ops")
    return attr


def _pd_out(L):
    return L.ffi.new("dnnl_primitive_desc_t *")


def matmul_desc(src, weights, bias, dst, attr):
    """A matmul primitive descriptor (``bias`` may be None)."""
    L = library()
    pd = _pd_out(L)
    bias = bias if bias is not None else L.ffi.NULL
    L.check(
        L.lib.dnnl_matmul_primitive_desc_create(pd, L.engine, src, weights, bias, dst, attr),
        "dnnl_matmul_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def convolution_desc(
    src, weights, bias, dst, strides, dilates, padding_l, padding_r, attr, prop_kind: int = FORWARD_INFERENCE
):
    """A forward direct convolution primitive descriptor (``dilates`` 0-based, as oneDNN counts).

    ``prop_kind`` is ``FORWARD_INFERENCE``, or ``FORWARD_TRAINING`` for the hint of a backward primitive."""
    L = library()
    pd = _pd_out(L)
    bias = bias if bias is not None else L.ffi.NULL

    def dims(values):
        return L.ffi.new("int64_t[]", [int(v) for v in values])

    L.check(
        L.lib.dnnl_convolution_forward_primitive_desc_create(
            pd,
            L.engine,
            prop_kind,
            CONVOLUTION_DIRECT,
            src,
            weights,
            bias,
            dst,
            dims(strides),
            dims(dilates),
            dims(padding_l),
            dims(padding_r),
            attr,
        ),
        "dnnl_convolution_forward_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def reorder_desc(src, dst):
    """A reorder primitive descriptor from layout ``src`` to layout ``dst``."""
    L = library()
    pd = _pd_out(L)
    L.check(
        L.lib.dnnl_reorder_primitive_desc_create(pd, src, L.engine, dst, L.engine, L.ffi.NULL),
        "dnnl_reorder_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def query_md(pd, what: int):
    """An owned copy of the memory descriptor ``what`` (``QUERY_*_MD``) of a primitive descriptor."""
    return clone_desc(library().lib.dnnl_primitive_desc_query_md(pd, what, 0))


def impl_info(pd) -> str:
    """The implementation oneDNN chose, e.g. ``brg:avx512_core_amx``."""
    L = library()
    out = L.ffi.new("char **")
    L.check(L.lib.dnnl_primitive_desc_query(pd, QUERY_IMPL_INFO, 0, out), "dnnl_primitive_desc_query")
    return L.ffi.string(out[0]).decode()


def _dims(L, values):
    return L.ffi.new("int64_t[]", [int(v) for v in values])


def convolution_backward_data_desc(diff_src, weights, diff_dst, strides, dilates, padding_l, padding_r, hint, attr):
    """A convolution backward-data (transposed convolution) primitive descriptor; ``hint`` is the forward one."""
    L = library()
    pd = _pd_out(L)
    L.check(
        L.lib.dnnl_convolution_backward_data_primitive_desc_create(
            pd,
            L.engine,
            CONVOLUTION_DIRECT,
            diff_src,
            weights,
            diff_dst,
            _dims(L, strides),
            _dims(L, dilates),
            _dims(L, padding_l),
            _dims(L, padding_r),
            hint,
            attr,
        ),
        "dnnl_convolution_backward_data_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def eltwise_desc(algorithm: int, src, dst, alpha: float = 0.0, beta: float = 0.0, attr=None):
    """An elementwise primitive descriptor (``ELTWISE_*`` algorithm, forward inference)."""
    L = library()
    pd = _pd_out(L)
    attr = L.ffi.NULL if attr is None else attr
    L.check(
        L.lib.dnnl_eltwise_forward_primitive_desc_create(
            pd, L.engine, FORWARD_INFERENCE, algorithm, src, dst, float(alpha), float(beta), attr
        ),
        "dnnl_eltwise_forward_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def softmax_desc(algorithm: int, src, dst, axis: int, attr=None):
    """A softmax (``SOFTMAX_ACCURATE``) or log-softmax (``SOFTMAX_LOG``) primitive descriptor along ``axis``."""
    L = library()
    pd = _pd_out(L)
    attr = L.ffi.NULL if attr is None else attr
    L.check(
        L.lib.dnnl_softmax_forward_primitive_desc_create(
            pd, L.engine, FORWARD_INFERENCE, algorithm, src, dst, int(axis), attr
        ),
        "dnnl_softmax_forward_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def layer_norm_desc(src, dst, stat, epsilon: float, flags: int, attr=None):
    """A layer normalization primitive descriptor over the last dim (``USE_SCALE``/``USE_SHIFT`` flags)."""
    L = library()
    pd = _pd_out(L)
    attr = L.ffi.NULL if attr is None else attr
    stat = L.ffi.NULL if stat is None else stat
    L.check(
        L.lib.dnnl_layer_normalization_forward_primitive_desc_create(
            pd, L.engine, FORWARD_INFERENCE, src, dst, stat, float(epsilon), int(flags), attr
        ),
        "dnnl_layer_normalization_forward_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)


def pooling_desc(algorithm: int, src, dst, strides, kernel, dilation, padding_l, padding_r, attr=None):
    """A pooling primitive descriptor (``POOLING_*``; ``dilation`` 0-based, as oneDNN counts)."""
    L = library()
    pd = _pd_out(L)
    attr = L.ffi.NULL if attr is None else attr
    L.check(
        L.lib.dnnl_pooling_forward_primitive_desc_create(
            pd,
            L.engine,
            FORWARD_INFERENCE,
            algorithm,
            src,
            dst,
            _dims(L, strides),
            _dims(L, kernel),
            _dims(L, dilation),
            _dims(L, padding_l),
            _dims(L, padding_r),
            attr,
        ),
        "dnnl_pooling_forward_primitive_desc_create",
    )
    return L.ffi.gc(pd[0], L.lib.dnnl_primitive_desc_destroy)
