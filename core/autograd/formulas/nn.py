"""Derivatives of the convolution and pooling prims."""

from __future__ import annotations

import math

import numpy as np

from ..._factories import from_numpy
from ._common import C, conj, formula, node_names, row_starts


def _conv_weight_grad(inp, gout, stride, padding, dilation, kernel_shape):
    """d(conv)/d(weight) for groups=1: a convolution of the input (channels as batch) with the output gradient."""
    x = C.transpose(inp, 0, 1)
    g = C.transpose(gout, 0, 1)
    w = C.convolution(x, g, None, list(dilation), list(padding), list(stride), False, [0] * len(stride), 1)
    w = C.transpose(w, 0, 1)
    for d, k in enumerate(kernel_shape):
        if w.shape[2 + d] != k:
            w = C.narrow(w, 2 + d, 0, k)
    return w


def _conv2d_weight_grad_im2col(inp, gout, stride, padding, dilation, kernel_shape):
    """d(conv2d)/d(weight) for one group: Σₙ gout[n] (Cout, L) times the input's columns[n]ᵀ (L, Cin·kh·kw).

    The columns are ``im2col`` (``F.unfold``) of the input with the convolution's geometry, so
    L is the output's number of positions; one batched product reads both operands in place
    (no transposed copies) and a sum over the batch adds the per-sample products.
    """
    n = inp.shape[0]
    cout = gout.shape[1]
    cols = C.im2col(inp, list(kernel_shape), list(dilation), list(padding), list(stride))  # (N, Cin·k, L)
    per_sample = C.bmm(C.reshape(gout, [n, cout, -1]), C.transpose(cols, 1, 2))  # (N, Cout, Cin·k)
    return C.reshape(C.sum.dim_IntList(per_sample, [0]), [cout, inp.shape[1]] + list(kernel_shape))


def _convolution_grads(need, x, w, b, g, stride, padding, dilation, transposed, groups):
    """(input, weight, bias) gradients of a convolution, each where ``need`` asks for it.

    The output is linear in the input and in the weight, so each gradient reads the other operand
    conjugated (PyTorch's convention for complex tensors).
    """
    spatial = x.ndim - 2
    x, w = conj(x), conj(w)
    gx = gw = gb = None
    if need[0]:
        if transposed:
            gx = C.convolution(g, w, None, stride, padding, dilation, False, [0] * spatial, groups)
        else:
            k = [dilation[d] * (w.shape[2 + d] - 1) + 1 for d in range(spatial)]
            op = [x.shape[2 + d] - ((g.shape[2 + d] - 1) * stride[d] - 2 * padding[d] + k[d]) for d in range(spatial)]
            gx = C.convolution(g, w, None, stride, padding, dilation, True, op, groups)
    if need[1]:
        ksize = list(w.shape[2:])
        xs = C.chunk(x, groups, 1) if groups > 1 else (x,)
        gs = C.chunk(g, groups, 1) if groups > 1 else (g,)
        parts = []
        im2col = not transposed and spatial == 2 and not x.dtype.is_complex
        for xi, gi in zip(xs, gs):
            if im2col:
                parts.append(_conv2d_weight_grad_im2col(xi, gi, stride, padding, dilation, ksize))
            elif transposed:
                parts.append(_conv_weight_grad(gi, xi, stride, padding, dilation, ksize))
            else:
                parts.append(_conv_weight_grad(xi, gi, stride, padding, dilation, ksize))
        gw = C.cat(parts, 0) if len(parts) > 1 else parts[0]
    if b is not None and need[2]:
        # the batch first: adding whole (C, *spatial) planes is one vectorised pass, where a sum over
        # (0, 2, ...) at once walks the tensor in short runs; then each channel's positions
        gb = C.sum.dim_IntList(C.sum.dim_IntList(g, [0]), list(range(1, g.ndim - 1)))
    return (gx, gw, gb)


@formula("prims::convolution", save=(0, 1))
def _convolution(ctx, g):
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = ctx.args
    return _convolution_grads(ctx.needs_input_grad, x, w, b, g, stride, padding, dilation, transposed, groups)


def _per_dim(value, d: int) -> list:
    """A ``SymInt[d]`` argument as ``d`` ints (one int, or a one-element list, stands for every dim)."""
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    return values * d if len(values) == 1 else values


def _register_conv_nd(d: int) -> None:
    """``convNd`` (int padding, batched floating input) in one node, as PyTorch's ``ConvolutionBackward0``.

    Its decomposition records the same ``prims::convolution`` node, but runs the canonical op's
    argument checks in Python on every call; recorded here, the op runs below Autograd as it
    does without grad (the CPU's direct kernel plan).
    """

    def applies(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1) -> bool:
        return input.ndim == d + 2 and (input.dtype.is_floating_point or input.dtype.is_complex)

    def conv_nd(ctx, g):
        x, w, b, stride, padding, dilation, groups = (list(ctx.args) + [None, 1, 0, 1, 1][len(ctx.args) - 2 :])[:7]
        stride, padding, dilation = (_per_dim(v, d) for v in (stride, padding, dilation))
        return _convolution_grads(ctx.needs_input_grad, x, w, b, g, stride, padding, dilation, False, groups)

    name = f"conv{d}d"
    formula(name, save=(0, 1), applies=applies)(conv_nd)
    node_names()[getattr(C, name).default] = "ConvolutionBackward0"


for _d in (1, 2, 3):
    _register_conv_nd(_d)


def _disjoint_windows(kernel, stride, padding, dilation) -> bool:
    """Whether no two max-pooling windows share an input position (every index names one window's max)."""
    stride = list(stride) or list(kernel)
    return all(s >= dl * (k - 1) + 1 for k, s, dl in zip(kernel, stride, dilation))


def _pool_indices_grad(ctx, grads):
    """Max pooling: the values' gradient added at the flat positions the indices name (one ``index_add``).

    The indices count within a spatial plane; each plane's offset makes them positions of the
    whole input, so one 1-D ``index_add`` does every plane (and sums windows that overlap).
    2-D windows that never overlap (stride ≥ window span, the usual pooling) are ``max_unpool2d``:
    the gradient written once at the indices into zeros, no input copy and no accumulation.
    """
    x = ctx.args[0]
    spatial = len(ctx.args[1])
    unpool = ctx.op.name == "prims::max_pool" and _disjoint_windows(*ctx.args[1:5])
    return (_indices_grad(x, grads[0], ctx.outputs[1], spatial, unpool),)


def _indices_grad(x, gv, indices, spatial: int, disjoint: bool):
    """The gradient of a max pooling's input from its values' gradient ``gv`` and ``indices``."""
    if spatial == 2 and x.ndim in (3, 4) and disjoint:
        return C.max_unpool2d(gv, indices, list(x.shape[x.ndim - 2 :]))
    lead = list(x.shape[: x.ndim - spatial])
    plane = math.prod(x.shape[len(lead) :])
    rows = math.prod(lead)
    flat_i = C.reshape(indices, [rows, -1])
    if rows > 1:
        flat_i = flat_i + row_starts(rows, plane, indices.dtype, indices.device)
    total = C.zeros([rows * plane], dtype=gv.dtype, device=gv.device)
    flat = C.index_add(total, 0, C.reshape(flat_i, [-1]), C.reshape(gv, [-1]))
    return C.reshape(flat, list(x.shape))


formula("prims::max_pool", save=(), save_out=True)(_pool_indices_grad)


def _register_max_pool_nd(d: int) -> None:
    """``max_poolNd_with_indices`` of a floating input in one node (PyTorch's ``MaxPool2DWithIndicesBackward0``).

    As for convolution, recording the canonical op skips its decomposition's Python argument
    checks on every call with grad; the gradient is the prim's (the indices name the maxima).
    """

    def applies(self, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False) -> bool:
        return self.dtype.is_floating_point

    def max_pool_nd(ctx, grads):
        x, kernel, stride, padding, dilation = (list(ctx.args) + [[], 0, 1][len(ctx.args) - 2 :])[:5]
        kernel, padding, dilation = (_per_dim(v, d) for v in (kernel, padding, dilation))
        stride = _per_dim(stride, d) or kernel
        disjoint = _disjoint_windows(kernel, stride, padding, dilation)
        return (_indices_grad(x, grads[0], ctx.outputs[1], d, disjoint),)

    name = f"max_pool{d}d_with_indices"
    formula(name, save=(), save_out=True, applies=applies)(max_pool_nd)
    node_names()[getattr(C, name).default] = f"MaxPool{d}DWithIndicesBackward0"


for _d in (1, 2, 3):
    _register_max_pool_nd(_d)
formula("prims::adaptive_max_pool", save=(), save_out=True)(_pool_indices_grad)


def _window_matrix(n_in: int, n_out: int, starts, ends, divisors) -> np.ndarray:
    m = np.zeros((n_out, n_in))
    for i in range(n_out):
        m[i, starts[i] : ends[i]] = 1.0 / divisors[i]
    return m


def _apply_separable(g, matrices, x_meta):
    """Gradient of a separable linear pooling: contract each spatial dim of ``g`` with its matrix transposed."""
    spatial = len(matrices)
    nd = g.ndim
    for d, m in enumerate(matrices):
        dim = nd - spatial + d
        mt = from_numpy(np.ascontiguousarray(m.T)).to(dtype=g.dtype, device=g.device)
        g = C.movedim(C.matmul(C.movedim(g, dim, -1), C.transpose(mt, 0, 1)), -1, dim)
    return g


@formula("prims::avg_pool", save=())
def _avg_pool(ctx, g):
    x, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override = ctx.args
    spatial = len(kernel)
    matrices = []
    for d in range(spatial):
        n_in, n_out = x.shape[x.ndim - spatial + d], g.shape[g.ndim - spatial + d]
        starts, ends, divs = [], [], []
        for i in range(n_out):
            start = i * stride[d] - padding[d]
            end = min(start + kernel[d], n_in + padding[d])
            size = end - start
            start, end = max(start, 0), min(end, n_in)
            starts.append(start)
            ends.append(end)
            if divisor_override:
                divs.append(1.0)
            else:
                divs.append(size if count_include_pad else max(end - start, 1))
        matrices.append(_window_matrix(n_in, n_out, starts, ends, divs))
    gx = _apply_separable(g, matrices, x)
    if divisor_override:
        gx = gx / divisor_override
    return (gx,)


@formula("prims::adaptive_avg_pool", save=())
def _adaptive_avg_pool(ctx, g):
    x, output_size = ctx.args
    spatial = len(output_size)
    matrices = []
    for d in range(spatial):
        n_in, n_out = x.shape[x.ndim - spatial + d], output_size[d]
        starts = [(i * n_in) // n_out for i in range(n_out)]
        ends = [-((-(i + 1) * n_in) // n_out) for i in range(n_out)]
        matrices.append(_window_matrix(n_in, n_out, starts, ends, [e - s for s, e in zip(starts, ends)]))
    return (_apply_separable(g, matrices, x),)


@formula("embedding", save=(1,))
def _embedding(ctx, g):
    """``embedding_backward``: the output rows summed into their weight rows; ``padding_idx``'s row gets none.

    With ``scale_grad_by_freq`` each row's gradient is divided by how often its index occurs;
    ``sparse`` gives the same gradient, dense (there is no sparse layout).
    """
    weight, indices, padding_idx, scale_grad_by_freq, _ = ctx.args
    num, dim = weight.shape
    flat = C.reshape(indices, [-1]).to(weight.device)
    rows = C.reshape(g, [-1, dim])
    if padding_idx >= 0:
        rows = C.where(C.unsqueeze(flat == padding_idx, -1), C.zeros_like(rows), rows)
    if scale_grad_by_freq:
        counts = C.index_select(C.bincount(flat, minlength=num), 0, flat)
        rows = rows / C.unsqueeze(counts, -1).to(rows.dtype)
    return (C.index_add(C.zeros([num, dim], dtype=rows.dtype, device=rows.device), 0, flat, rows), None)
