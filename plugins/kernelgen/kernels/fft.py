"""FFT prims: ``fft_c2c``, ``fft_r2c``, ``fft_c2r`` for float32/float64 and complex64/complex128.

A transform over several dims is one pass per dim (kernels of ``codegen.fft``);
each pass reads any strides and writes a contiguous result. A power-of-two line
longer than ``DIRECT_MAX`` takes radix-2 Stockham stages (``O(n log n)``: all in
local memory in one launch up to ``codegen.fft.LOCAL_MAX`` points, one launch per
stage beyond);
another line from ``BLUESTEIN_MIN`` points Bluestein's chirp-z transform (a cyclic
convolution through power-of-two FFTs, ``O(n log n)``); shorter ones a direct DFT
(``O(n^2)`` work, one work item per output point). Twiddles come from a table the
device computes with exact angles. ``r2c`` transforms its last dim first (real to complex,
keeping ``n // 2 + 1`` points when ``onesided``), then the other dims; ``c2r``
transforms the other dims first, then the last one from its Hermitian half
spectrum (as ``scipy.fft.irfftn``). The normalization scale is applied by the
last pass. Nothing is handed to the CPU fallback except a batch that does not
fit ``MAX_RANK`` dims after merging.
"""

from __future__ import annotations

import math

import numpy as np
import opweave

from ..codegen import fft as gen
from ..codegen.common import MAX_RANK, coalesce
from ._common import buf, empty, kernel, launch, program_kernels, runtime_of

#: Power-of-two lines up to this length use the direct DFT (fewer launches than the radix-2 stages).
DIRECT_MAX = 32
#: Other lines from this length use Bluestein's algorithm (three power-of-two FFTs of length >= 2n - 1).
BLUESTEIN_MIN = 256


def _args_dtype(real) -> np.dtype:
    """The host layout of ``fft_args_t`` (``codegen.fft``) for a program computing in NumPy type ``real``."""
    longs = [(f, np.int64) for f in ("ioff", "ooff")]
    longs += [(f, np.int64, (MAX_RANK,)) for f in ("bshape", "ist", "ost")]
    longs += [(f, np.int64) for f in ("is_", "os", "n", "nin", "nout", "ns", "total")]
    tail = [("scale", real)] + [(f, np.int32) for f in ("bndim", "inmode", "outmode", "sign")]
    return np.dtype(longs + tail, align=True)


class _Pass:
    """One-dim passes of one program (a real dtype on one device)."""

    def __init__(self, x):
        self.rt = runtime_of(x)
        real = x.dtype.to_real().name if x.dtype.is_complex else x.dtype.name
        fp64 = self.rt.has_fp64
        self.kernels = program_kernels(self.rt, ("fft", real, fp64), lambda: gen.program(self.rt.dialect, real, fp64))
        wide = fp64 or real == "float64"
        self.layout = _args_dtype(np.float64 if wide else np.float32)
        self.table_dtype = opweave.float64 if wide else opweave.float32
        self.complex_dtype = x.dtype if x.dtype.is_complex else x.dtype.to_complex()

    def run(self, src, dim: int, nout: int, inmode: int, outmode: int, forward: bool, scale: float, out_dtype):
        """Transform ``src`` along ``dim`` into a new contiguous tensor (``nout`` points along ``dim``)."""
        shape = list(src.shape)
        n = shape[dim] if inmode != gen.IN_HALF else nout
        oshape = shape[:dim] + [nout] + shape[dim + 1 :]
        out = empty(oshape, out_dtype, src.device)
        if out.numel() == 0:
            return out
        other = [d for d in range(len(shape)) if d != dim]
        bshape, (ist, ost) = coalesce(
            [shape[d] for d in other], [[src.stride()[d] for d in other], [out.stride()[d] for d in other]]
        )
        if len(bshape) > MAX_RANK:
            return None
        lines = math.prod(bshape)
        p = np.zeros((), self.layout)
        p["bshape"][: len(bshape)] = bshape
        p["bndim"] = len(bshape)
        p["sign"] = -1 if forward else 1
        p["nin"] = shape[dim]
        p["n"] = n
        if n > DIRECT_MAX and n & (n - 1) == 0:
            self._pow2(p, src, out, self._table(n, src.device), dim, ist, ost, lines, n, nout, inmode, outmode, scale)
            return out
        self._set(p, src, out, ist, ost, src.stride()[dim], out.stride()[dim], nout, inmode, outmode, scale)
        if n >= BLUESTEIN_MIN:
            self._bluestein(p, src, out, lines, n, nout)
            return out
        table = self._table(n, src.device)
        self._set(p, src, out, ist, ost, src.stride()[dim], out.stride()[dim], nout, inmode, outmode, scale)
        p["total"] = lines * nout
        launch(self.rt, self.kernels["dft"], lines * nout, buf(out), buf(src), buf(table), p.tobytes())
        return out

    def _table(self, n: int, device):
        """The twiddle table ``(cos, sin)(2 pi r / n)``, ``r < n``, computed on the device."""
        table = empty((2 * n,), self.table_dtype, device)
        launch(self.rt, self.kernels["twiddles"], n, buf(table), np.int64(n))
        return table

    def _bluestein(self, p, src, out, lines: int, n: int, nout: int):
        """Bluestein's transform of lines of length ``n`` (``p`` already describes ``src`` and ``out``)."""
        M = 1 << (2 * n - 2).bit_length()
        chirp = self._table(2 * n, src.device)
        roots = self._table(M, src.device)
        k = self.kernels
        p["ns"] = M
        p["total"] = lines * M
        a = empty((lines, M), self.complex_dtype, src.device)
        launch(self.rt, k["bs_pre"], lines * M, buf(a), buf(src), buf(chirp), p.tobytes())
        b = empty((1, M), self.complex_dtype, src.device)
        launch(self.rt, k["bs_filter"], M, buf(b), buf(b), buf(chirp), p.tobytes())
        a_hat, b_hat = self._pow2_lines(a, roots, -1), self._pow2_lines(b, roots, -1)
        launch(self.rt, k["bs_mul"], lines * M, buf(a_hat), buf(b_hat), buf(chirp), p.tobytes())
        conv = self._pow2_lines(a_hat, roots, 1)
        p["total"] = lines * nout
        launch(self.rt, k["bs_post"], lines * nout, buf(out), buf(conv), buf(chirp), p.tobytes())

    def _pow2_lines(self, x, roots, sign: int):
        """Unscaled FFT (``sign`` of the exponent) of each row of contiguous ``x`` (lines, M), M a power of two."""
        lines, M = x.shape
        out = empty((lines, M), self.complex_dtype, x.device)
        q = np.zeros((), self.layout)
        q["bshape"][0], q["bndim"], q["sign"], q["n"], q["nin"] = lines, 1, sign, M, M
        self._pow2(q, x, out, roots, 1, [M], [M], lines, M, M, gen.IN_COMPLEX, gen.OUT_COMPLEX, 1.0)
        return out

    @staticmethod
    def _set(p, src, out, ist, ost, along_in, along_out, nout, inmode, outmode, scale):
        """Fill the layout and mode fields of ``p`` for a launch reading ``src`` and writing ``out``."""
        p["ioff"], p["ooff"] = src.storage_offset(), out.storage_offset()
        p["ist"][:] = 0
        p["ost"][:] = 0
        p["ist"][: len(ist)] = ist
        p["ost"][: len(ost)] = ost
        p["is_"], p["os"] = along_in, along_out
        p["nout"], p["inmode"], p["outmode"], p["scale"] = nout, inmode, outmode, scale

    def _pow2(self, p, src, out, table, dim, ist, ost, lines, n, nout, inmode, outmode, scale):
        """A power-of-two transform: in local memory up to ``LOCAL_MAX`` points, else stage by stage."""
        if n > gen.LOCAL_MAX:
            self._stages(p, src, out, table, dim, ist, ost, lines, n, nout, inmode, outmode, scale)
            return
        self._set(p, src, out, ist, ost, src.stride()[dim], out.stride()[dim], nout, inmode, outmode, scale)
        p["total"] = lines
        kern = self.kernels["stockham_local"]
        launch(self.rt, kern, lines * gen.LOCAL, buf(out), buf(src), buf(table), p.tobytes(), local=gen.LOCAL)

    def _stages(self, p, src, out, table, dim, ist, ost, lines, n, nout, inmode, outmode, scale):
        """``log2 n`` radix-2 stages: input -> work buffers (ping-pong, line-major) -> output."""
        work = [empty((lines * n,), self.complex_dtype, src.device) for _ in range(2)]
        bshape = [int(v) for v in p["bshape"][: p["bndim"]]]
        wst = [0] * len(bshape)
        step = n
        for i in range(len(bshape) - 1, -1, -1):
            wst[i] = step
            step *= bshape[i]
        p["total"] = lines * (n // 2)
        ns, cur, cur_st, cur_along, which = 1, src, ist, src.stride()[dim], 0
        while ns < n:
            if 2 * ns == n:
                dst, dst_st, dst_along, o_mode, o_n, o_scale = out, ost, out.stride()[dim], outmode, nout, scale
            else:
                dst, dst_st, dst_along, o_mode, o_n, o_scale = work[which], wst, 1, gen.OUT_COMPLEX, n, 1.0
            mode = inmode if ns == 1 else gen.IN_COMPLEX
            self._set(p, cur, dst, cur_st, dst_st, cur_along, dst_along, o_n, mode, o_mode, o_scale)
            p["nin"] = src.shape[dim] if ns == 1 else n
            p["ns"] = ns
            launch(self.rt, self.kernels["stockham"], lines * (n // 2), buf(dst), buf(cur), buf(table), p.tobytes())
            cur, cur_st, cur_along, which = dst, wst, 1, 1 - which
            ns *= 2


def _scale(sizes, normalization: int) -> float:
    n = math.prod(sizes)
    return {0: 1.0, 1: 1 / math.sqrt(n), 2: 1 / n}[normalization]


def _wrap(dim, ndim):
    return [d % ndim for d in dim]


def _c2c_passes(pp, x, dims, forward, scale, final_scale_on_last=True):
    """Complex passes over ``dims`` (the last one applies ``scale``); None if a batch is too deep."""
    for i, d in enumerate(dims):
        s = scale if (i == len(dims) - 1 and final_scale_on_last) else 1.0
        x = pp.run(x, d, x.shape[d], gen.IN_COMPLEX, gen.OUT_COMPLEX, forward, s, pp.complex_dtype)
        if x is None:
            return None
    return x


@kernel("fft_c2c")
def fft_c2c(self, dim, normalization, forward):
    """Complex FFT over ``dim`` (forward or unscaled backward), then the normalization scale."""
    dims = _wrap(dim, self.ndim)
    pp = _Pass(self)
    scale = _scale([self.shape[d] for d in dims], normalization)
    if not dims:
        out = pp.run(self.unsqueeze(-1), self.ndim, 1, gen.IN_COMPLEX, gen.OUT_COMPLEX, True, 1.0, self.dtype)
        return NotImplemented if out is None else out.squeeze(-1).contiguous()
    out = _c2c_passes(pp, self, dims, forward, scale)
    return NotImplemented if out is None else out


@kernel("fft_r2c")
def fft_r2c(self, dim, normalization, onesided):
    """Real-to-complex forward FFT over ``dim``; the last dim of ``dim`` keeps ``n // 2 + 1`` points if ``onesided``."""
    dims = _wrap(dim, self.ndim)
    pp = _Pass(self)
    scale = _scale([self.shape[d] for d in dims], normalization)
    last = dims[-1]
    n = self.shape[last]
    nout = n // 2 + 1 if onesided else n
    rest = dims[:-1]
    x = pp.run(self, last, nout, gen.IN_REAL, gen.OUT_COMPLEX, True, 1.0 if rest else scale, pp.complex_dtype)
    if x is None or not rest:
        return NotImplemented if x is None else x
    out = _c2c_passes(pp, x, rest, True, scale)
    return NotImplemented if out is None else out


@kernel("fft_c2r")
def fft_c2r(self, dim, normalization, last_dim_size):
    """Complex-to-real backward FFT over ``dim`` from a Hermitian half spectrum (``last_dim_size`` real points)."""
    dims = _wrap(dim, self.ndim)
    pp = _Pass(self)
    last = dims[-1]
    scale = _scale([self.shape[d] for d in dims[:-1]] + [last_dim_size], normalization)
    x = self
    if dims[:-1]:
        x = _c2c_passes(pp, x, dims[:-1], False, 1.0, final_scale_on_last=False)
        if x is None:
            return NotImplemented
    out = pp.run(x, last, last_dim_size, gen.IN_HALF, gen.OUT_REAL, False, scale, self.dtype.to_real())
    return NotImplemented if out is None else out
