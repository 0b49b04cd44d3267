"""``prims::convolution`` as the direct kernel of ``codegen.conv`` (bfloat16, float32, float64, complex; float16
where the dialect computes it: CUDA, summed in float and rounded once).

Forward and transposed, 1-3 spatial dims, stride, padding, dilation, output
padding, groups and bias; input, weight and bias are read through their strides.
On a CPU device a large forward, ungrouped float32/float64 convolution with a
contiguous weight is instead ``im2col`` followed by the packed matrix product of
``kernels.linalg`` (the direct kernel is about 30 times slower there).
"""

from __future__ import annotations

import numpy as np
from opweave import ops

from ..codegen import conv as gen
from ._common import buf, dname, empty, kernel, launch, native_half, program_kernels, runtime_of
from .linalg import PACKED_MIN, bmm_into

P = ops.prims

_FLOATS = {"bfloat16", "float32", "float64", "complex64", "complex128"}


def _per_dim(values, d: int) -> list:
    values = list(values)
    return values * d if len(values) == 1 else values


def _pad(values, fill: int, size: int = 3) -> list:
    """``values`` behind leading ``fill`` entries, to ``size`` entries."""
    return [fill] * (size - len(values)) + list(values)


def _strides5(t) -> list:
    """The strides of ``t`` as (N, C, D, H, W), size-1 spatial dims inserted with stride 0."""
    st = list(t.stride())
    return st[:2] + _pad(st[2:], 0)


@kernel("convolution")
def convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """N-d convolution, PyTorch semantics (forward or transposed; groups, dilation, bias)."""
    if dname(x) not in _FLOATS and not native_half(x.dtype, x.device):  # float16: in float where the dialect can
        return NotImplemented
    from opweave.prims.conv import conv_output_size, conv_transpose_output_size

    d = x.ndim - 2
    ss, ps, dls, ops = (_per_dim(v, d) for v in (stride, padding, dilation, output_padding))
    sizes, ks = list(x.shape[2:]), list(weight.shape[2:])
    if transposed:
        c_out = weight.shape[1] * groups
        out_sizes = [conv_transpose_output_size(*a) for a in zip(sizes, ks, ss, ps, dls, ops)]
    else:
        c_out = weight.shape[0]
        out_sizes = [conv_output_size(*a) for a in zip(sizes, ks, ss, ps, dls)]
    out = empty((x.shape[0], c_out, *out_sizes), x.dtype, x.device)
    n = out.numel()
    if n == 0:
        return out
    values = {
        "in": _pad(sizes, 1),
        "out": _pad(out_sizes, 1),
        "k": _pad(ks, 1),
        "s": _pad(ss, 1),
        "p": _pad(ps, 0),
        "dl": _pad(dls, 1),
        "xst": _strides5(x),
        "wst": _strides5(weight),
        "xo": [x.storage_offset()],
        "wo": [weight.storage_offset()],
        "bo": [bias.storage_offset() if bias is not None else 0],
        "bst": [bias.stride()[0] if bias is not None else 0],
        "batch": [x.shape[0]],
        "cin": [x.shape[1]],
        "cout": [c_out],
        "groups": [groups],
        "has_bias": [int(bias is not None)],
        "transposed": [int(bool(transposed))],
        "n": [n],
    }
    packed = np.array([v for name, _ in gen.ARGS_FIELDS for v in values[name]], np.int64).tobytes()
    rt = runtime_of(x)
    dt = dname(x)
    k_volume = int(np.prod(ks))
    if (
        rt.is_cpu
        and dt in ("float32", "float64")
        and not transposed
        and groups == 1
        and weight.is_contiguous()
        and n * x.shape[1] * k_volume >= PACKED_MIN
    ):
        _im2col_conv(rt, dt, packed, x, weight, bias, out, x.shape[1] * k_volume)
        return out
    k = program_kernels(rt, ("conv", dt), lambda: gen.program(rt.dialect, dt))["conv"]
    launch(rt, k, n, buf(out), buf(x), buf(weight), buf(bias if bias is not None else x), packed)
    return out


def _im2col_conv(rt, dt: str, packed: bytes, x, weight, bias, out, ck: int) -> None:
    """A forward, ungrouped convolution as ``cols @ weight.T`` through the packed matmul (CPU devices)."""
    batch, cout = out.shape[0], out.shape[1]
    spatial = out.numel() // (batch * cout)
    rows = batch * spatial
    cols = empty((rows, ck), x.dtype, x.device)
    k = program_kernels(rt, ("im2col", dt), lambda: gen.im2col_program(rt.dialect, dt))["im2col"]
    launch(rt, k, rows, buf(cols), buf(x), packed, np.int64(rows))
    product = empty((rows, cout), x.dtype, x.device)
    bmm_into(product, cols, P.as_strided(weight, (ck, cout), (1, ck), weight.storage_offset()), 0, 0, 1)
    if bias is not None:
        product = P.add(product, P.as_strided(bias, (rows, cout), (0, bias.stride()[0]), bias.storage_offset()))
    by_channel = P.as_strided(product, (batch, cout, spatial), (spatial * cout, 1, cout), 0)
    P.copy_to(P.as_strided(out, (batch, cout, spatial), (cout * spatial, spatial, 1), 0), by_channel)
