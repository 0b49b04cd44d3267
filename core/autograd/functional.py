"""``opweave.autograd.functional``: Jacobian-level helpers with ``torch.autograd.functional``'s API.

``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp`` take a function of tensors and
the point to differentiate at. Everything is built on the reverse-mode engine: forward-mode
products (``jvp``, ``hvp``) come from the *double-vjp trick*. For ``g(u) = Jᵀu`` computed with
``create_graph=True``, ``g`` is linear in ``u`` and its own vjp with ``v`` is ``J·v``. So the
derivative rules of the prims, written with canonical ops, give forward mode too; no backend
code is involved. There is no dual-number (``forward_ad``) API: ``strategy="forward-mode"``,
``outer_jacobian_strategy="forward-mode"`` and ``vectorize=True`` raise ``NotImplementedError``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._tensor import Tensor
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

TensorOrTensors = Tensor | tuple[Tensor, ...]
Func = Callable[..., Any]


def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    """Whether ``inp`` was a tuple, and ``inp`` as a tuple of Tensors (a TypeError otherwise)."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but {where} "
                f"has type {type(el)}."
            )
    return is_tuple, items


def _untuple(res: tuple, to_unpack: bool | tuple[bool, bool]) -> Any:
    """Undo :func:`_as_tuple` on a result (two levels for Jacobians: outputs, then inputs)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
        return res
    return res if to_unpack else res[0]


def _grad_preprocess(inputs: tuple[Tensor, ...], create_graph: bool, need_graph: bool) -> tuple[Tensor, ...]:
    """Fresh tensor objects for the inputs: differentiable views with create_graph, detached leaves otherwise.

    A new object either way, so the inputs handed to ``func`` differ from the same tensors captured
    by its closure (PyTorch's choice).
    """
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(res: tuple, create_graph: bool) -> tuple:
    """Detach the results (recursively through nested tuples) unless create_graph asked for their history."""
    if res and not isinstance(res[0], Tensor):
        return tuple(_grad_postprocess(el, create_graph) for el in res)
    return res if create_graph else tuple(t.detach() for t in res)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_requires_grad(tensors: Sequence[Tensor | None], kind: str, strict: bool) -> None:
    """In strict mode, PyTorch's errors for outputs, gradients or Jacobians that do not depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(
                f"The output of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode."
            )
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is independent of the "
                "input. This is not allowed in strict mode. You should ensure that your function is thrice "
                "differentiable and that the hessian depends on the inputs."
            )
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided function with respect "
                f"to input {i} is independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is twice differentiable and that the jacobian depends on the inputs (this "
                "would be violated by a linear function for example)."
            )
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the user-provided "
                "function. This is not allowed in strict mode."
            )
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The outputs must be computed "
            "in a differentiable manner from the input when running in strict mode."
        )


def _autograd_grad(
    outputs: tuple[Tensor | None, ...],
    inputs: tuple[Tensor, ...],
    grad_outputs: tuple[Tensor | None, ...] | None = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> tuple[Tensor | None, ...]:
    """``autograd.grad`` that skips outputs which are None or do not require grad (all None if none is left)."""
    from . import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs = tuple(o for o, _ in pairs)
    gouts = tuple(g for _, g in pairs)
    return tuple(grad(outs, inputs, gouts, allow_unused=True, create_graph=create_graph, retain_graph=retain_graph))


_STRICT_NONE = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict mode.",
    "back_trick": (
        "The gradient with respect to the input is independent of entry {i} in the grad_outputs when using the "
        "double backward trick to compute forward mode gradients. This is not allowed in strict mode."
    ),
    "double_back": (
        "The jacobian of the user-provided function is independent of input {i}. This is not allowed in strict mode."
    ),
    "double_back_trick": (
        "The hessian of the user-provided function is independent of entry {i} in the grad_jacobian. This is not "
        "allowed in strict mode as it prevents from using the double backward trick to replace forward mode AD."
    ),
}


def _fill_in_zeros(
    grads: tuple[Tensor | None, ...], refs: tuple[Tensor, ...], strict: bool, create_graph: bool, stage: str
) -> tuple[Tensor, ...]:
    """Zeros shaped like ``refs[i]`` for each missing gradient, or (strict) PyTorch's error for that stage."""
    from .. import zeros_like

    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STRICT_NONE[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input {i}. "
                "This is not allowed in strict mode when create_graph=True."
            )
        res.append(g)
    return tuple(res)


def _prepare_v(
    v: Any, refs: tuple[Tensor, ...], is_refs_tuple: bool, create_graph: bool, fn: str, none_msg: str
) -> tuple[Tensor, ...] | None:
    """``v`` as a tuple matching ``refs`` in number and sizes; None is allowed for a single one-element ref."""
    if v is None:
        if len(refs) != 1 or refs[0].nelement() != 1:
            raise RuntimeError(none_msg)
        return None
    _, vs = _as_tuple(v, "v", fn)
    vs = _grad_preprocess(vs, create_graph=create_graph, need_graph=False)
    _validate_v(vs, refs, is_refs_tuple)
    return vs


_V_NONE_INPUT = (
    "The vector v can only be None if the input to the user-provided function is a single Tensor with a single element."
)
_V_NONE_OUTPUT = (
    "The vector v can only be None if the user-provided function returns a single Tensor with a single element."
)


def _prologue(
    func: Func, inputs: Any, fn: str, create_graph: bool, strict: bool, v: Any = None, v_like: str | None = None
) -> tuple[bool, tuple[Tensor, ...], bool, tuple[Tensor, ...], tuple[Tensor, ...] | None]:
    """The common start (call it under ``enable_grad``): inputs as fresh tensors that record, ``func`` run on them.

    Returns ``(is_inputs_tuple, inputs, is_outputs_tuple, outputs, v)``. ``v_like`` says what ``v`` must
    match: ``"inputs"`` (checked before ``func`` runs), ``"outputs"`` (after), or None (no ``v``).
    """
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", fn)
    ins = _grad_preprocess(ins, create_graph=create_graph, need_graph=True)
    vs = None
    if v_like == "inputs":
        vs = _prepare_v(v, ins, is_inputs_tuple, create_graph, fn, _V_NONE_INPUT)
    is_outputs_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", fn)
    _check_requires_grad(outs, "outputs", strict)
    if v_like == "outputs":
        vs = _prepare_v(v, outs, is_outputs_tuple, create_graph, fn, _V_NONE_OUTPUT)
    return is_inputs_tuple, ins, is_outputs_tuple, outs, vs


def _epilogue(
    outs: tuple[Tensor, ...], is_outputs_tuple: bool, res: tuple, is_res_tuple: bool, create_graph: bool
) -> tuple[Any, Any]:
    """``(func_output, product)`` detached unless ``create_graph``, each back in the caller's structure."""
    outs = _grad_postprocess(outs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _untuple(outs, is_outputs_tuple), _untuple(res, is_res_tuple)


def vjp(
    func: Func,
    inputs: TensorOrTensors,
    v: TensorOrTensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """The vector-Jacobian product ``vᵀJ`` of ``func`` at ``inputs``: returns ``(func_output, vjp)``.

    ``v`` has the outputs' structure and may be omitted when the output is a single one-element
    tensor. ``vjp`` has the inputs' structure (zeros for inputs the outputs do not depend on,
    or a RuntimeError with ``strict=True``). ``create_graph=True`` keeps both results differentiable.
    """
    with enable_grad():
        is_inputs_tuple, ins, is_outputs_tuple, outs, vs = _prologue(
            func, inputs, "vjp", create_graph, strict, v, "outputs"
        )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _fill_in_zeros(
            _autograd_grad(outs, ins, vs, create_graph=create_graph), ins, strict, create_graph, "back"
        )
    return _epilogue(outs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def jvp(
    func: Func,
    inputs: TensorOrTensors,
    v: TensorOrTensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """The Jacobian-vector product ``J·v`` of ``func`` at ``inputs``: returns ``(func_output, jvp)``.

    Computed by the double-vjp trick: ``g(u) = Jᵀu`` with a graph, then ``J·v = ∂(g(u)·v)/∂u``.
    ``v`` has the inputs' structure (optional for a single one-element input); ``jvp`` has the outputs'.
    """
    from .. import zeros_like

    with enable_grad():
        is_inputs_tuple, ins, is_outputs_tuple, outs, vs = _prologue(
            func, inputs, "jvp", create_graph, strict, v, "inputs"
        )
        # g(u) is linear in u, so u's value does not matter (zeros: finite, no nan/inf).
        us = tuple(zeros_like(o).requires_grad_() for o in outs)
        grad_inputs = _autograd_grad(outs, ins, us, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _autograd_grad(grad_inputs, us, vs, create_graph=create_graph)
        res = _fill_in_zeros(res, outs, strict, create_graph, "back_trick")
    return _epilogue(outs, is_outputs_tuple, res, is_outputs_tuple, create_graph)


def _not_implemented(fn: str, arg: str) -> NotImplementedError:
    return NotImplementedError(
        f"opweave.autograd.functional.{fn}: {arg} is not supported: opweave has no forward-mode (dual number) "
        "AD and no vmap; use the default (reverse-mode, vectorize=False)."
    )


def jacobian(
    func: Func,
    inputs: TensorOrTensors,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of ``func`` at ``inputs``, one vjp per output element.

    For output ``i`` and input ``j`` the block has shape ``output_i.shape + input_j.shape``. The
    result is a Tensor for a single input and output, a tuple over the inputs (or outputs) when
    only one of them is a tuple, and a tuple (outputs) of tuples (inputs) when both are.
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has more '
            'outputs than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        raise _not_implemented("jacobian", 'strategy="forward-mode"')
    if vectorize:
        raise _not_implemented("jacobian", "vectorize=True")
    from .. import stack, zeros_like

    with enable_grad():
        is_inputs_tuple, ins, is_outputs_tuple, outs, _ = _prologue(func, inputs, "jacobian", create_graph, strict)

        jac: list[tuple[Tensor, ...]] = []
        for i, out in enumerate(outs):
            rows: list[list[Tensor]] = [[] for _ in ins]
            flat = out.reshape(-1)
            for k in range(out.nelement()):
                vj = _autograd_grad((flat[k],), ins, retain_graph=True, create_graph=create_graph)
                for j, (g, inp) in enumerate(zip(vj, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of input {j}. "
                                "This is not allowed in strict mode."
                            )
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(
                            f"The jacobian of the user-provided function is independent of input {i}. "
                            "This is not allowed in strict mode when create_graph=True."
                        )
                    rows[j].append(g)
            jac.append(
                tuple(
                    (stack(r, dim=0) if r else inp.new_zeros((0, *inp.shape))).reshape((*out.shape, *inp.shape))
                    for r, inp in zip(rows, ins)
                )
            )
        return _untuple(_grad_postprocess(tuple(jac), create_graph), (is_outputs_tuple, is_inputs_tuple))


def hessian(
    func: Func,
    inputs: TensorOrTensors,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a scalar-valued ``func`` at ``inputs``: the Jacobian of its gradient.

    Block ``(i, j)`` has shape ``input_i.shape + input_j.shape``; a Tensor for a single input,
    a tuple of tuples for a tuple of inputs.
    """
    is_inputs_tuple, ins = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if outer_jacobian_strategy == "forward-mode":
        raise _not_implemented("hessian", 'outer_jacobian_strategy="forward-mode"')
    if vectorize:
        raise _not_implemented("hessian", "vectorize=True")

    def single_output(*inp: Tensor) -> Tensor:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp: Tensor) -> tuple[Tensor, ...]:
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, ins, create_graph=create_graph, strict=strict)
    return _untuple(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(fn: str, outs: tuple[Tensor, ...], is_outputs_tuple: bool) -> None:
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn} should return a single Tensor")
    if outs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn} should contain a single element")


def vhp(
    func: Func,
    inputs: TensorOrTensors,
    v: TensorOrTensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """The vector-Hessian product ``vᵀH`` of a scalar-valued ``func``: returns ``(func_output, vhp)``."""
    with enable_grad():
        is_inputs_tuple, ins, is_outputs_tuple, outs, vs = _prologue(
            func, inputs, "vhp", create_graph, strict, v, "inputs"
        )
        _scalar_output("vhp", outs, is_outputs_tuple)
        jac = _autograd_grad(outs, ins, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _autograd_grad(jac, ins, vs, create_graph=create_graph)
        res = _fill_in_zeros(res, ins, strict, create_graph, "double_back")
    return _epilogue(outs, is_outputs_tuple, res, is_inputs_tuple, create_graph)


def hvp(
    func: Func,
    inputs: TensorOrTensors,
    v: TensorOrTensors | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """The Hessian-vector product ``H·v`` of a scalar-valued ``func``: returns ``(func_output, hvp)``.

    By the double-vjp trick on the gradient: ``H·v = ∂((Hᵀu)·v)/∂u``, as PyTorch does.
    """
    from .. import zeros_like

    with enable_grad():
        is_inputs_tuple, ins, is_outputs_tuple, outs, vs = _prologue(
            func, inputs, "hvp", create_graph, strict, v, "inputs"
        )
        _scalar_output("hvp", outs, is_outputs_tuple)
        jac = _autograd_grad(outs, ins, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        us = tuple(zeros_like(inp).requires_grad_() for inp in ins)
        double_back = _autograd_grad(jac, ins, us, create_graph=True)
        # PyTorch's hvp checks ``jac`` again here, labelled "hessian" (not ``double_back``): kept word for word,
        # so strict mode raises exactly where PyTorch's does (a linear func: the "jacobian" error above).
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _autograd_grad(double_back, us, vs, create_graph=create_graph)
        res = _fill_in_zeros(res, ins, strict, create_graph, "double_back_trick")
    return _epilogue(outs, is_outputs_tuple, res, is_inputs_tuple, create_graph)
