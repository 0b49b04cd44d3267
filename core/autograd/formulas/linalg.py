"""Derivatives of the matrix prims (mm, bmm) and the linear-algebra prims where the formula is standard."""

from __future__ import annotations

from ._common import C, conj, formula


def _h(t):
    """Conjugate transpose of the last two dimensions."""
    return conj(C.transpose(t, -2, -1))


@formula("prims::mm")
def _mm(ctx, g):
    a, b = ctx.args
    need = ctx.needs_input_grad
    return (C.mm(g, _h(b)) if need[0] else None, C.mm(_h(a), g) if need[1] else None)


@formula("prims::bmm")
def _bmm(ctx, g):
    a, b = ctx.args
    need = ctx.needs_input_grad
    return (C.bmm(g, _h(b)) if need[0] else None, C.bmm(_h(a), g) if need[1] else None)


@formula("prims::inverse", save=(), save_out=True)
def _inverse(ctx, g):
    y = ctx.out
    return (-C.matmul(_h(y), C.matmul(g, _h(y))),)


@formula("prims::det", save=(0,), save_out=True)
def _det(ctx, g):
    a = ctx.args[0]
    d = ctx.out
    scale = C.unsqueeze(C.unsqueeze(g * conj(d), -1), -1)
    return (scale * _h(C.linalg_inv(a)),)


@formula("prims::slogdet", save=(0,), save_out=True)
def _slogdet(ctx, grads):
    """g A^-H with g = g_logabsdet (real) or g_logabsdet + i Im(g_sign conj(sign)) (complex)."""
    a = ctx.args[0]
    g_sign, g_logabs = grads
    g = g_logabs
    if a.dtype.is_complex:
        sign = ctx.outputs[0]
        g = g_logabs.to(a.dtype) + 1j * C.imag(g_sign * conj(sign))
    return (C.unsqueeze(C.unsqueeze(g, -1), -1) * _h(C.linalg_inv(a)),)


@formula("prims::solve", save=(0,), save_out=True)
def _solve(ctx, g):
    a, b, left = ctx.args
    x = ctx.out
    vector = b.ndim == 1 or (left and b.ndim == a.ndim - 1)
    if vector:
        g2, x2 = C.unsqueeze(g, -1), C.unsqueeze(x, -1)
    else:
        g2, x2 = g, x
    gb = C.linalg_solve(_h(a), g2, left=left)
    ga = -C.matmul(gb, _h(x2)) if left else -C.matmul(_h(x2), gb)
    if vector:
        gb = C.squeeze(gb, -1)
    return (ga, gb)


@formula("prims::triangular_solve", save=(1,), save_out=True)
def _triangular_solve(ctx, g):
    b, a, upper, left, unitriangular = ctx.args
    x = ctx.out
    gb = C.linalg_solve_triangular(_h(a), g, upper=not upper, left=left, unitriangular=unitriangular)
    ga = -C.matmul(gb, _h(x)) if left else -C.matmul(_h(x), gb)
    ga = C.triu(ga, 1 if unitriangular else 0) if upper else C.tril(ga, -1 if unitriangular else 0)
    return (gb, ga)


@formula("prims::cholesky", save=(), save_out=True)
def _cholesky(ctx, g):
    upper = ctx.args[1]
    factor = ctx.out
    lower = _h(factor) if upper else factor
    gl = _h(g) if upper else g
    phi = C.matmul(_h(lower), gl)
    phi = C.tril(phi, -1) + 0.5 * C.diag_embed(C.diagonal(phi, 0, -2, -1))
    eye_solve = C.linalg_solve_triangular(_h(lower), phi, upper=True, left=True)
    ga = _h(C.linalg_solve_triangular(_h(lower), _h(eye_solve), upper=True, left=True))
    return (0.5 * (ga + _h(ga)),)


@formula("prims::eigh", save=(), save_out=True)
def _eigh(ctx, grads):
    """PyTorch's ``linalg_eig_backward`` for Hermitian input: V (VᴴgV / (λⱼ - λᵢ) + diag(gλ)) Vᴴ."""
    g_values, g_vectors = grads
    values, vectors = ctx.outputs
    n = values.shape[-1]
    eye = C.eye(n, device=values.device) > 0.5
    gaps = C.unsqueeze(values, -2) - C.unsqueeze(values, -1)
    inner = C.matmul(_h(vectors), g_vectors) / C.where(eye, 1.0, gaps).to(vectors.dtype)
    inner = C.where(eye, C.diag_embed(g_values).to(inner.dtype), inner)
    return (C.matmul(vectors, C.matmul(inner, _h(vectors))),)


def _householder_q(A, tau):
    """``householder_product`` written with differentiable ops: ``(H_1 ... H_k)[:, :n]``, ``H_i = I - τ_i v_i v_iᴴ``.

    ``v_i`` is column i of A below the diagonal with a unit diagonal entry; the reflectors are
    applied right to left to the first n columns of the identity.
    """
    m, n = A.shape[-2], A.shape[-1]
    eye = C.eye(m, n, dtype=A.dtype, device=A.device)
    V = C.tril(A, -1) + eye
    Q = C.expand(eye, list(A.shape))
    for i in reversed(range(tau.shape[-1])):
        v = C.narrow(V, -1, i, 1)
        w = C.matmul(conj(C.transpose(v, -2, -1)), Q)
        t = C.unsqueeze(C.unsqueeze(C.select(tau, -1, i), -1), -1)
        Q = Q - t * C.matmul(v, w)
    return Q


@formula("prims::householder_product")
def _householder_product(ctx, g):
    """The vector-Jacobian product of :func:`_householder_q`, recomputed with the reflectors as ops.

    Under ``create_graph`` the inputs that require grad take part directly (so the gradient is
    differentiable again); otherwise detached copies do.
    """
    from ..engine import grad
    from ..grad_mode import enable_grad, is_grad_enabled
    from ..graph import requires_grad

    A, tau = ctx.args
    need = ctx.needs_input_grad
    if tau.shape[-1] == 0:  # no reflector: Q is the identity's first columns, whatever A holds
        return (C.zeros_like(A) if need[0] else None, C.zeros_like(tau) if need[1] else None)
    higher = is_grad_enabled()
    with enable_grad():
        inputs = [
            x if higher and requires_grad(x) else x.detach().requires_grad_(bool(n))
            for x, n in ((A, need[0]), (tau, need[1]))
        ]
        wanted = [x for x, n in zip(inputs, need) if n]
        grads = iter(grad(_householder_q(*inputs), wanted, g, create_graph=higher, allow_unused=True))
    return tuple(next(grads) if n else None for n in need)
