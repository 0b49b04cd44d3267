"""``gradcheck`` and ``gradgradcheck``: analytical gradients against central finite differences.

The numerical Jacobian perturbs each real coordinate of each input that requires grad
(real and imaginary parts of complex inputs) by ``±eps`` and differences the outputs.
For every output element and every unit ``grad_output`` v (also ``1j * v`` for complex
outputs), the analytical vector-Jacobian product from ``autograd.grad`` must match the
derivative of the real function ``Re(sum(conj(v) * output))`` — PyTorch's convention.
"""

from __future__ import annotations

import numpy as np

from .._tensor import Tensor
from .graph import requires_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when gradients do not match."""


def _as_tuple(x) -> tuple:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def _host(t: Tensor) -> np.ndarray:
    return np.array(t.detach().cpu().numpy(force=True) if hasattr(t, "cpu") else t.numpy(), copy=True)


def _outputs(func, inputs) -> tuple:
    out = func(*inputs)
    return tuple(o for o in _as_tuple(out) if isinstance(o, Tensor))


def _differentiable_outputs(outs) -> list:
    return [i for i, o in enumerate(outs) if o.dtype.is_floating_point or o.dtype.is_complex]


def _numerical(func, inputs: tuple, index: int, eps: float, diff_outs: list) -> list:
    """Per real coordinate of input ``index``: the change of each differentiable output (complex arrays)."""
    from .._factories import from_numpy

    base = inputs[index]
    array = _host(base)
    coords = [(k, 1.0) for k in range(array.size)]
    if np.iscomplexobj(array):
        coords += [(k, 1j) for k in range(array.size)]
    columns = []
    for k, unit in coords:
        values = []
        for sign in (1.0, -1.0):
            perturbed = array.copy().reshape(-1)
            perturbed[k] = perturbed[k] + sign * eps * unit
            t = from_numpy(perturbed.reshape(array.shape)).to(base.device).requires_grad_(True)
            args = list(inputs)
            args[index] = t
            outs = _outputs(func, args)
            values.append([_host(outs[i]).astype(np.complex128) for i in diff_outs])
        columns.append((k, unit, [(p - m) / (2 * eps) for p, m in zip(*values)]))
    return columns


def gradcheck(
    func,
    inputs,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked=None,
) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences (use float64 inputs)."""
    from .. import ops
    from .engine import grad as run_grad

    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: forward-mode and batched checks are not supported")
    inputs = _as_tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and requires_grad(x)]
    if not wrt:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have")
    for i in wrt:
        if inputs[i].dtype not in _precise():
            import warnings

            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or complex.",
                stacklevel=2,
            )
    outs = _outputs(func, inputs)
    diff_outs = _differentiable_outputs(outs)
    if not check_backward_ad:
        return True
    numerical = {i: _numerical(func, inputs, i, eps, diff_outs) for i in wrt}
    wrt_tensors = [inputs[i] for i in wrt]
    for slot, oi in enumerate(diff_outs):
        out = outs[oi]
        if not requires_grad(out):
            for i in wrt:
                if any(np.abs(col[2][slot]).max(initial=0.0) > atol for col in numerical[i]):
                    return _fail(
                        raise_exception,
                        f"Jacobian mismatch for output {oi} with respect to input {i}: the output does not "
                        "require grad but its numerical gradient is nonzero",
                    )
            continue
        units = [1.0, 1j] if out.dtype.is_complex else [1.0]
        for k in range(out.numel()):
            for unit in units:
                v = np.zeros(out.numel(), dtype=np.complex128 if out.dtype.is_complex else np.float64)
                v[k] = unit
                v_t = ops.canonical.reshape(_from(v, out), list(out.shape))
                grads = run_grad((out,), wrt_tensors, (v_t,), retain_graph=True, allow_unused=True)
                for i, g in zip(wrt, grads):
                    analytical = np.zeros(inputs[i].numel(), dtype=np.complex128)
                    if g is not None:
                        analytical = _host(g).astype(np.complex128).reshape(-1)
                    numeric = np.zeros_like(analytical)
                    for idx, du, cols in numerical[i]:
                        d = np.real(np.conj(v).reshape(-1) @ cols[slot].reshape(-1))
                        numeric[idx] += d * (1.0 if du == 1.0 else 1j)
                    if not np.allclose(analytical, numeric, rtol=rtol, atol=atol, equal_nan=True):
                        return _fail(
                            raise_exception,
                            f"Jacobian mismatch for output {oi} with respect to input {i},\n"
                            f"numerical:{numeric}\nanalytical:{analytical}\n",
                        )
    return True


def _precise():
    from .._dtype import complex128, float64

    return (float64, complex128)


def _from(array: np.ndarray, like: Tensor) -> Tensor:
    from .._factories import from_numpy

    return from_numpy(array.astype(like.dtype.numpy)).to(like.device)


def _fail(raise_exception: bool, message: str) -> bool:
    if raise_exception:
        raise GradcheckError(message)
    return False


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """Check second derivatives: gradcheck of ``(inputs, v) -> grad(func(inputs), inputs, v, create_graph=True)``."""
    from .._factories import from_numpy
    from .engine import grad as run_grad

    inputs = _as_tuple(inputs)
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and requires_grad(x)]
    outs = _outputs(func, inputs)
    diff = [o for o in outs if o.dtype.is_floating_point or o.dtype.is_complex]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = []
        for o in diff:
            values = rng.standard_normal(tuple(o.shape))
            if o.dtype.is_complex:
                values = values + 1j * rng.standard_normal(tuple(o.shape))
            grad_outputs.append(from_numpy(np.asarray(values, dtype=o.dtype.numpy)).to(o.device).requires_grad_())
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        xs, vs = args[:n], args[n:]
        ys = [o for o in _outputs(func, xs) if o.dtype.is_floating_point or o.dtype.is_complex]
        targets = [xs[i] for i in wrt]
        grads = run_grad(ys, targets, vs, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
    )
