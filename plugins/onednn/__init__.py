"""opweave's one binding of oneDNN (cffi, ABI mode): shared by the plugins that run oneDNN primitives.

Not a plugin (no entry point): the ``cpu`` plugin (float primitives: convolution, softmax, layer
norm, eltwise) and the ``x86quant`` plugin (int8 matmul and convolution) both import it, so the
library is found, loaded and given an engine once per process. See ``docs/onednn.md``.

- :func:`library` / :func:`availability`: the loaded :class:`Library` or why not (:class:`Unavailable`).
- :mod:`.descriptors`: memory descriptors from NumPy shapes and strides, attributes, primitive descriptors.
- :mod:`.primitive`: :class:`Primitive` runs a primitive on NumPy buffers; aligned buffers; reorders.
"""

from __future__ import annotations

from . import _library
from ._library import *  # noqa: F403
from .descriptors import (
    array_desc,
    attributes,
    clone_desc,
    convolution_backward_data_desc,
    convolution_desc,
    data_type,
    desc_equal,
    desc_size,
    eltwise_desc,
    impl_info,
    layer_norm_desc,
    matmul_desc,
    memory_desc,
    memory_desc_any,
    pooling_desc,
    query_md,
    reorder_desc,
    softmax_desc,
)
from .primitive import Primitive, aligned, aligned_array, aligned_empty, reorder

__all__ = _library.__all__ + [
    "Primitive",
    "aligned",
    "aligned_array",
    "aligned_empty",
    "array_desc",
    "attributes",
    "clone_desc",
    "convolution_backward_data_desc",
    "convolution_desc",
    "data_type",
    "desc_equal",
    "desc_size",
    "eltwise_desc",
    "impl_info",
    "layer_norm_desc",
    "matmul_desc",
    "memory_desc",
    "memory_desc_any",
    "pooling_desc",
    "query_md",
    "reorder",
    "reorder_desc",
    "softmax_desc",
]
