"""The ``quantized::`` operator library (``opweave.ops.quantized``) and its reference kernels.

Schemas follow PyTorch's ``aten/src/ATen/native/quantized/library.cpp``, except:
the packed-weight types are spelled ``LinearPackedParamsBase`` / ``Conv2dPackedParamsBase``;
``conv1d``/``conv2d`` (+``_relu``) are the packed-parameter form PyTorch calls ``.new``,
without an overload name; ``max_pool2d``'s pooling arguments have aten's defaults.

Every op here runs at the Quantized layer: its decomposition (reached when no argument
is quantized, e.g. ``linear_dynamic`` on a float activation or a prepack of float
tensors) re-enters the dispatcher with the Quantized bit set, so engines registered at
(Quantized, backend) serve these calls too. The reference kernels are registered at
(Quantized, every backend). The first quantized call loads the discovered plugins once
(so an engine plugin can register) and dispatches again.

The kernels for aten ops on quantized tensors (``relu``, ``hardswish``, ``sigmoid``, and
``max_pool2d``/``avg_pool2d``/``adaptive_avg_pool2d`` when the core defines them) are
registered here too.
"""

from __future__ import annotations

from .. import _keys
from .._keys import Layer
from .._ops import _all, define
from ..library import core_library
from . import _engine, reference

_Q = _keys.layer_bit(Layer.Quantized)

LIBRARY = (
    ("add(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc", reference.add),
    ("add_relu(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc", reference.add_relu),
    ("mul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc", reference.mul),
    ("linear_prepack(Tensor W, Tensor? B=None) -> LinearPackedParamsBase W_prepack", reference.linear_prepack),
    ("linear_unpack(LinearPackedParamsBase W_prepack) -> (Tensor W_origin, Tensor? B_origin)", reference.linear_unpack),
    (
        "linear(Tensor X, LinearPackedParamsBase W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor Y",
        reference.linear,
    ),
    (
        "linear_relu(Tensor X, LinearPackedParamsBase W_prepack, float Y_scale_i, int Y_zero_point_i) -> Tensor Y",
        reference.linear_relu,
    ),
    (
        "linear_dynamic(Tensor X, LinearPackedParamsBase W_prepack, bool reduce_range=False) -> Tensor Y",
        reference.linear_dynamic,
    ),
    (
        "conv1d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) "
        "-> Conv2dPackedParamsBase",
        reference.conv1d_prepack,
    ),
    (
        "conv2d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups) "
        "-> Conv2dPackedParamsBase",
        reference.conv2d_prepack,
    ),
    ("conv2d_unpack(Conv2dPackedParamsBase packed_weights) -> (Tensor unpacked_weights, Tensor? B_origin)", None),
    (
        "conv1d(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor",
        reference.conv1d,
    ),
    (
        "conv1d_relu(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point)"
        " -> Tensor",
        reference.conv1d_relu,
    ),
    (
        "conv2d(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point) -> Tensor",
        reference.conv2d,
    ),
    (
        "conv2d_relu(Tensor qx, Conv2dPackedParamsBase packed_weight, float output_scale, int output_zero_point)"
        " -> Tensor",
        reference.conv2d_relu,
    ),
    ("matmul(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc", reference.matmul),
    (
        "max_pool2d(Tensor qx, int[] kernel_size, int[] stride=[], int[] padding=0, int[] dilation=1, "
        "bool ceil_mode=False) -> Tensor",
        reference.max_pool2d,
    ),
    ("cat(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor", reference.cat),
    (
        "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, float eps, "
        "float output_scale, int output_zero_point) -> Tensor",
        reference.layer_norm,
    ),
    ("embedding_bag_byte_prepack(Tensor weight) -> Tensor", reference.embedding_bag_byte_prepack),
    (
        "embedding_bag_byte_rowwise_offsets(Tensor weight, Tensor indices, Tensor? offsets=None, "
        "bool scale_grad_by_freq=False, int mode=0, bool pruned_weights=False, Tensor? per_sample_weights=None, "
        "Tensor? compressed_indices_mapping=None, bool include_last_offset=False) -> Tensor",
        reference.embedding_bag_byte_rowwise_offsets,
    ),
)

#: aten ops that get a reference kernel at the Quantized layer when the core defines them.
ATEN_KERNELS = {
    "relu": reference.relu,
    "hardswish": reference.hardswish,
    "sigmoid": reference.sigmoid,
    "max_pool2d": reference.max_pool2d,
    "avg_pool2d": reference.avg_pool2d,
    "adaptive_avg_pool2d": reference.adaptive_avg_pool2d,
}


def _enter_quantized(op):
    """Decomposition of a ``quantized::`` op: dispatch again with the Quantized layer bit set."""

    def decomposition(*args):
        from .._dispatch import factory_keys
        from .._state import local
        from .._tensor import Tensor

        keyset = 0
        for value in args:
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, Tensor):
                    keyset |= item._keys
                elif isinstance(getattr(item, "weight", None), Tensor):  # packed parameters
                    keyset |= item.weight._keys
        if not keyset:
            keyset = factory_keys(op, args)
        state = local()
        return op.redispatch(((keyset | state.included) & ~state.excluded) | _Q, *args)

    decomposition.__doc__ = f"``{op.name}``: runs at the Quantized layer (see ``opweave.quantization``)."
    return decomposition


def _reference_kernel(op, fn):
    """The Quantized-layer kernel: loads plugins on the first quantized call, then runs ``fn``."""

    def kernel(keyset, *args):
        if not _engine.plugins_loaded and _engine.ensure_plugins_loaded():
            return op.redispatch(keyset, *args)
        return fn(*args)

    kernel.__doc__ = fn.__doc__
    kernel.reference = fn
    return kernel


#: ops whose reference reads tensor values on the host (the activation's range, bag offsets)
DATA_DEPENDENT = frozenset({"linear_dynamic", "embedding_bag_byte_rowwise_offsets"})


def _define(schema: str, fn):
    tags = ("data_dependent_output",) if schema.split("(")[0] in DATA_DEPENDENT else ()
    op = define("quantized::" + schema, lambda *args: None, tags=tags, doc=(fn or reference.conv_unpack).__doc__)
    op.decomposition = _enter_quantized(op)
    core_library("core").impl(op, _reference_kernel(op, fn or reference.conv_unpack), "Quantized", with_keyset=True)
    return op


def register() -> None:
    """Define the ``quantized::`` ops and register the reference kernels (aten ones included)."""
    for schema, fn in LIBRARY:
        _define(schema, fn)
    register_aten_kernels()


def _has_quantized_kernel(op) -> bool:
    from .._dispatch import DISPATCHER

    return DISPATCHER.kernel(op, Layer.Quantized, None) is not None


def register_aten_kernels() -> None:
    """Reference kernels for the aten ops of :data:`ATEN_KERNELS` that exist now (call again after defining more)."""
    for name, fn in ATEN_KERNELS.items():
        op = _all.get(name)
        if op is not None and not _has_quantized_kernel(op):
            core_library("core").impl(op, _reference_kernel(op, fn), "Quantized", with_keyset=True)
