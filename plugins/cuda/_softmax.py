"""CUDA's own row softmax: ``softmax``/``log_softmax`` over the last dim of a contiguous float32/float64 tensor.

One 256-thread block per row, three passes over the row: the maximum (NaN propagates), the sum of
``exp(x - max)``, then ``exp(x - max) / sum`` (or ``x - max - log(sum)``). Each pass strides the row
by the block (coalesced), and each block-wide reduction is a warp-shuffle tree then one warp over
the warps' results. The second and third passes read the row again from the L1/L2 caches (a row of
8192 floats is 32 KiB), so DRAM sees about one read and one write per element, which is what a
softmax of 8192×8192 needs to approach the device-to-device copy bandwidth. The generator's path
(``amax``, ``sub``, ``exp``, ``sum``, ``div`` as separate launches) moves several times as many bytes.
Other cases (another dim, non-contiguous, other dtypes, a dtype conversion) decline to it.
"""

from __future__ import annotations

import numpy as np
import opweave
from opweave.backends.kernel import Decline

THREADS = 256

_BODY = r"""
__device__ inline {t} ow_row_max({t} a, {t} b) {{ return (b > a || isnan(b)) ? b : a; }}

__device__ inline {t} ow_block_max({t} v, {t}* shared) {{
    for (int o = 16; o > 0; o >>= 1) v = ow_row_max(v, __shfl_down_sync(0xffffffffu, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = (threadIdx.x < (blockDim.x >> 5)) ? shared[lane] : ({t})(-INFINITY);
    if (warp == 0) for (int o = 16; o > 0; o >>= 1) v = ow_row_max(v, __shfl_down_sync(0xffffffffu, v, o));
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    v = shared[0];
    __syncthreads();
    return v;
}}

__device__ inline {t} ow_block_sum({t} v, {t}* shared) {{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = (threadIdx.x < (blockDim.x >> 5)) ? shared[lane] : ({t})0;
    if (warp == 0) for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if (threadIdx.x == 0) shared[0] = v;
    __syncthreads();
    v = shared[0];
    __syncthreads();
    return v;
}}

extern "C" __global__ void {name}({t}* __restrict__ out, const {t}* __restrict__ x, long xo, long rows, long n) {{
    __shared__ {t} shared[32];
    long r = blockIdx.x;
    if (r >= rows) return;
    const {t}* row = x + xo + r * n;
    {t}* dst = out + r * n;
    {t} m = -INFINITY;
    for (long i = threadIdx.x; i < n; i += blockDim.x) m = ow_row_max(m, row[i]);
    m = ow_block_max(m, shared);
    {t} s = 0;
    for (long i = threadIdx.x; i < n; i += blockDim.x) s += exp(row[i] - m);
    s = ow_block_sum(s, shared);
{finish}
}}
"""

_SOFTMAX = "    for (long i = threadIdx.x; i < n; i += blockDim.x) dst[i] = exp(row[i] - m) / s;"
_LOG_SOFTMAX = (
    "    {t} ls = log(s);\n    for (long i = threadIdx.x; i < n; i += blockDim.x) dst[i] = (row[i] - m) - ls;"
)


def source(dtype: str) -> str:
    """The ``softmax_rows_<dtype>`` and ``log_softmax_rows_<dtype>`` kernels (``dtype``: float32 or float64)."""
    t = {"float32": "float", "float64": "double"}[dtype]
    soft = _BODY.format(t=t, name=f"softmax_rows_{dtype}", finish=_SOFTMAX)
    log = _BODY.format(t=t, name=f"log_softmax_rows_{dtype}", finish=_LOG_SOFTMAX.format(t=t))
    # the helpers are defined once: the second copy of them is dropped
    helpers_end = log.index('extern "C"')
    return soft + log[helpers_end:]


def _kernel(packet_name: str, log: bool, internal: bool):
    name = "log_softmax_rows" if log else "softmax_rows"

    def kernel(self, dim, third=None):
        converts = bool(third) if internal else third is not None and third is not self.dtype
        d = self.dtype.name
        if (
            converts
            or d not in ("float32", "float64")
            or self.ndim == 0
            or self.numel() == 0
            or dim not in (-1, self.ndim - 1)
            or not self.is_contiguous()
        ):
            raise Decline("cuda: not a contiguous float32/float64 softmax over the last dim")
        backend = self.untyped_storage().backend
        rt = backend.runtime(self.device)
        n = self.shape[-1]
        rows = self.numel() // n
        out = backend.empty_strided(tuple(self.shape), tuple(self.stride()), self.dtype, self.device)
        k = rt.compile(source(d))[f"{name}_{d}"]
        args = (
            out.untyped_storage().handle.buffer,
            self.untyped_storage().handle.buffer,
            np.int64(self.storage_offset()),
            np.int64(rows),
            np.int64(n),
        )
        rt.launch(k, (rows,), (THREADS,), args)
        return out

    kernel.__name__ = kernel.__qualname__ = f"cuda_{packet_name}"
    kernel.__doc__ = (
        f"``{packet_name}`` of a contiguous float32/float64 CUDA tensor along its last dim (one block a row)."
    )
    return kernel


OPS = (("softmax", False, False), ("log_softmax", True, False), ("_softmax", False, True), ("_log_softmax", True, True))


def register(registry, backend) -> None:
    """Register the row softmax kernels for ``backend`` (after the generator's, so these run first)."""
    for packet, log, internal in OPS:
        packet_ops = getattr(opweave.ops, packet)
        op = packet_ops.default if internal else packet_ops.int
        registry.impl(op.name, _kernel(packet, log, internal), backend=backend.name)
