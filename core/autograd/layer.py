"""The Autograd dispatch layer.

Tensors that require grad carry the Autograd key, so every op with such an input
reaches this layer first (a plain tensor's calls never do: the layer costs them
nothing). For an op with a derivative formula (every differentiable prim, and the
canonical ops registered in :mod:`.formulas`) the layer's kernel for that op runs the op
below Autograd and records a :class:`FormulaNode`. For any other canonical op the
layer's boxed fallback runs the op's decomposition with the Autograd key still set, so
the prims it is made of record themselves: every canonical op is differentiable on
every backend through its decomposition.

Kernels are registered through ``opweave.library`` (``"Autograd"`` key).
"""

from __future__ import annotations

from .. import _keys
from .._dispatcher import DISPATCHER
from .._state import local
from .._tensor import Tensor
from ..library import core_library
from .grad_mode import AUTOGRAD_BIT
from .graph import FREED_MESSAGE, Node, SavedTensor, _sequence, gradient_edge, requires_grad, set_history

_BELOW = ~_keys.layers_at_and_above(_keys.Layer.Autograd)
_STATE = local()
LIBRARY = core_library("opweave.autograd")

_LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."


class TensorMeta:
    """What a formula knows of an input it did not save: shape, dtype, device."""

    __slots__ = ("shape", "dtype", "device", "_tensor_stride", "_offset")

    def __init__(self, t: Tensor, strides: bool = False):
        self.shape, self.dtype, self.device = t.shape, t.dtype, t.device
        self._tensor_stride, self._offset = (t.stride() if strides else t._stride), t._offset

    def stride(self) -> tuple:
        """The strides the tensor had when it was recorded (kept for the ops in ``STRIDED_METAS``)."""
        if self._tensor_stride is None:
            raise RuntimeError("autograd: this formula's op does not record its inputs' strides (STRIDED_METAS)")
        return self._tensor_stride

    def storage_offset(self) -> int:
        """The storage offset the tensor had when it was recorded."""
        return self._offset

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def numel(self) -> int:
        """Number of elements."""
        return self.shape.numel()

    def dim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def size(self, dim=None):
        """The shape, or one size."""
        return self.shape if dim is None else self.shape[dim]


#: Ops whose formulas read the strides of inputs they do not save (computing strides costs a call).
STRIDED_METAS = {"prims::as_strided"}


def is_differentiable_dtype(dtype) -> bool:
    """Floating and complex dtypes carry gradients."""
    return dtype.is_floating_point or dtype.is_complex


class FormulaContext:
    """What a derivative formula receives: the op's arguments (saved tensors unpacked), outputs, needs."""

    def __init__(self, op, args: tuple, save, save_out: bool, outputs: tuple, needs: tuple, metas=None):
        self.op = op
        if save is not None and callable(save):
            save = save(needs)
        name = _NODE_NAMES.get(op) or _node_name(op)
        saved = list(args)
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                if save is None or i in save:
                    saved[i] = SavedTensor(a, name, i)
                else:
                    m = metas[i] if metas is not None else None
                    saved[i] = m if m is not None else TensorMeta(a, op.name in STRIDED_METAS)
        self._args = saved
        if save_out:
            self._outputs = tuple(SavedTensor(o, name, i) for i, o in enumerate(outputs))
        else:
            self._outputs = tuple(TensorMeta(o) for o in outputs)
        self.needs_input_grad = needs
        self.released = False

    @property
    def args(self) -> list:
        """The op's arguments; saved tensors unpacked (version-checked), the rest as ``TensorMeta``."""
        if self.released:
            raise RuntimeError(FREED_MESSAGE)
        return [a.unpack() if isinstance(a, SavedTensor) else a for a in self._args]

    @property
    def outputs(self) -> tuple:
        """The op's outputs (saved ones unpacked, the others as ``TensorMeta``)."""
        if self.released:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(o.unpack() if isinstance(o, SavedTensor) else o for o in self._outputs)

    @property
    def out(self):
        """The first output."""
        return self.outputs[0]

    def output_metas(self) -> tuple:
        """Shape, dtype and device of every output."""
        return tuple(o if isinstance(o, TensorMeta) else TensorMeta(o.tensor) for o in self._outputs)

    def release(self) -> None:
        """Drop the saved tensors (after a backward without retain_graph); the outputs' metadata stays."""
        self.released = True
        self._args = ()
        outputs = self._outputs
        for o in outputs:
            if isinstance(o, SavedTensor):
                self._outputs = tuple(TensorMeta(o.tensor) if isinstance(o, SavedTensor) else o for o in outputs)
                break


def _node_name(op) -> str:
    name = _NODE_NAMES.get(op)
    if name is None:
        base = op.name.split("::")[-1].split(".")[0].rstrip("_")
        name = _NODE_NAMES[op] = "".join(part[:1].upper() + part[1:] for part in base.split("_")) + "Backward0"
    return name


_NODE_NAMES: dict = {}


class FormulaNode(Node):
    """A recorded op with a derivative formula: ``formula(ctx, grads)`` gives one gradient per Tensor argument."""

    def __init__(
        self,
        op,
        formula,
        ctx: FormulaContext,
        edges: tuple,
        positions: tuple,
        metas: tuple,
        materialize: bool = True,
        differentiable: tuple | None = None,
    ):
        # Node.__init__ inlined (one node per recorded op)
        self._name, self.next_functions, self.num_outputs = _node_name(op), edges, len(ctx._outputs)
        self.sequence_nr = next(_sequence)
        self.op, self.formula, self.ctx, self.positions, self.input_metas = op, formula, ctx, positions, metas
        if differentiable is None:
            differentiable = tuple(is_differentiable_dtype(m.dtype) for m in ctx.output_metas())
        self.differentiable_outputs = differentiable
        self.materialize = materialize

    def apply(self, grad_outputs: list) -> tuple:
        if self.ctx.released:
            raise RuntimeError(FREED_MESSAGE)
        grads = list(grad_outputs)
        if self.materialize:
            for g in grads:
                if g is None:  # identity: ``in`` would compare tensors
                    self._materialize(grads)
                    break
        result = self.formula(self.ctx, grads[0] if len(grads) == 1 else grads)
        if not isinstance(result, (tuple, list)):
            result = (result,)
        n = len(result)
        out = []
        for (node, _), meta, position in zip(self.next_functions, self.input_metas, self.positions):
            g = result[position] if position < n else None
            out.append(None if node is None or g is None else fit_gradient(g, meta))
        return tuple(out)

    def _materialize(self, grads: list) -> None:
        from .. import ops

        metas = self.ctx.output_metas()
        for i, (g, m, diff) in enumerate(zip(grads, metas, self.differentiable_outputs)):
            if g is None and diff:
                grads[i] = ops.canonical.zeros(list(m.shape), dtype=m.dtype, device=m.device)

    def release(self) -> None:
        self.ctx.release()


class NotImplementedNode(Node):
    """The node of an op without a derivative: backward through it raises."""

    def __init__(self, op, edges: tuple, num_outputs: int):
        super().__init__(_node_name(op), edges, num_outputs)
        self.op = op

    def apply(self, grad_outputs: list) -> tuple:
        raise RuntimeError(f"the derivative for '{self.op.name}' is not implemented.")


def fit_gradient(g: Tensor, meta) -> Tensor:
    """``g`` made to match an input: real part for a real input, summed to its shape, its dtype and device."""
    if g.dtype is meta.dtype and g.shape == meta.shape and g.device == meta.device:
        return g  # the common case: nothing to fit
    from .. import ops

    c = ops.canonical
    if g.dtype.is_complex and not meta.dtype.is_complex:
        g = c.real(g)
    if tuple(g.shape) != tuple(meta.shape):
        g = sum_to_shape(g, tuple(meta.shape))
    if g.dtype != meta.dtype:
        g = c.to(g, meta.dtype)
    if g.device != meta.device:
        g = c.to(g, meta.device)
    return g


def sum_to_shape(g: Tensor, shape: tuple) -> Tensor:
    """Sum ``g`` over the dimensions broadcasting added or expanded to reach ``shape``."""
    from .. import ops

    c = ops.canonical
    lead = g.ndim - len(shape)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1]
    if dims:
        g = c.sum.dim_IntList(g, dims, True)
    if lead:
        g = c.reshape(g, list(shape))
    return g


# -- recording ---------------------------------------------------------------------------------


def _tensor_positions(op) -> tuple:
    cached = _POSITIONS.get(op)
    if cached is None:
        cached = _POSITIONS[op] = tuple(
            i for i, a in enumerate(op.schema.arguments) if a.type.name == "Tensor" and not a.type.is_list
        )
    return cached


_POSITIONS: dict = {}
_RANGES = [tuple(range(n)) for n in range(64)]


def _range(n: int) -> tuple:
    return _RANGES[n] if n < 64 else tuple(range(n))


def check_inplace(op, args: tuple) -> None:
    """PyTorch's ``RuntimeError`` for an out= op with an argument (the out tensor included) that requires grad,
    and for an in-place op on a leaf that requires grad."""
    mutated = _MUTATED.get(op)
    if mutated is None:
        mutated = _MUTATED[op] = op.schema.mutated_arguments
    if not mutated:
        return
    schema = op.schema
    if schema.is_out and not schema.is_inplace:
        for value in args:
            if isinstance(value, Tensor) and requires_grad(value):
                raise RuntimeError(
                    f"{_base_name(op)}(): functions with out=... arguments don't support automatic "
                    "differentiation, but one of the arguments requires grad."
                )
        return
    for arg, value in zip(schema.arguments, args):
        if arg.name in mutated and isinstance(value, Tensor):
            ag = value._ag
            if ag is not None and ag.requires_grad and ag.grad_fn is None:
                raise RuntimeError(_LEAF_INPLACE)


_MUTATED: dict = {}


def _base_name(op) -> str:
    return op.name.split("::")[-1].split(".")[0]


def strip(out, args: tuple) -> None:
    """Outputs that record nothing lose the Autograd key (a view carries its base's keys)."""
    for t in out if isinstance(out, (tuple, list)) else (out,):
        if isinstance(t, Tensor) and t._keys & AUTOGRAD_BIT and not requires_grad(t):
            t._keys &= ~AUTOGRAD_BIT


def run_below(op, keyset: int, args: tuple):
    """Run ``op`` below the Autograd layer, with Autograd excluded for everything it calls."""
    state = _STATE
    saved = state.excluded
    state.excluded = saved | AUTOGRAD_BIT
    try:
        return op.redispatch(keyset & _BELOW, *args)
    finally:
        state.excluded = saved


def record(
    op, args: tuple, out, formula, save, save_out: bool, materialize: bool = True, nondifferentiable: tuple = ()
) -> None:
    """Attach a FormulaNode to the differentiable outputs of ``op`` if an input requires grad.

    ``materialize``: missing output gradients reach the formula as zeros (else as None);
    ``nondifferentiable``: output positions that never require grad (PyTorch's ``output_differentiability``).
    """
    positions = _POSITIONS.get(op) or _tensor_positions(op)
    n = len(args)
    edges, metas = [], []
    needs_by_arg = [False] * n
    metas_by_arg = [None] * n
    wanted = False
    for i in positions:
        a = args[i]
        edge = None
        if isinstance(a, Tensor):
            meta = metas_by_arg[i] = TensorMeta(a)
            if a._keys & AUTOGRAD_BIT:
                edge = gradient_edge(a)
                if edge is not None:
                    needs_by_arg[i] = wanted = True
        else:
            meta = None
        edges.append(edge or _NO_EDGE)
        metas.append(meta)
    if isinstance(out, Tensor):
        outputs = (out,)
        differentiable = (is_differentiable_dtype(out._dtype),)
    else:
        outputs = tuple(out)
        differentiable = tuple(isinstance(o, Tensor) and is_differentiable_dtype(o.dtype) for o in outputs)
    if not wanted or True not in differentiable:
        strip(out, args)
        return
    ctx = FormulaContext(
        op, args, save, save_out, outputs, tuple(needs_by_arg), None if op.name in STRIDED_METAS else metas_by_arg
    )
    node = FormulaNode(
        op, formula, ctx, tuple(edges), _range(len(positions)), tuple(metas), materialize, differentiable
    )
    for nr, o in enumerate(outputs):
        if isinstance(o, Tensor):
            if differentiable[nr] and nr not in nondifferentiable:
                set_history(o, node, nr)
            elif o._keys & AUTOGRAD_BIT and not requires_grad(o):
                o._keys &= ~AUTOGRAD_BIT


_NO_EDGE = (None, 0)


def formula_kernel(
    op, formula, save=None, save_out: bool = False, materialize: bool = True, nondifferentiable=(), applies=None
):
    """The Autograd-layer kernel of ``op``: run it below Autograd, then record ``formula``.

    ``applies(*args)``: whether the formula covers this call; where it does not, the op is
    differentiated as if it had no formula (through its decomposition).
    """
    nondifferentiable = tuple(nondifferentiable)

    def kernel(keyset, *args):
        if applies is not None and not applies(*args):
            return autograd_fallback(op, keyset, *args)
        check_inplace(op, args)
        out = run_below(op, keyset, args)
        record(op, args, out, formula, save, save_out, materialize, nondifferentiable)
        return out

    kernel.__name__ = f"autograd_{op.name}"
    return kernel


def _composite(op):
    stack = DISPATCHER.composite_implicit.get(op, {}).get(None)
    return stack[-1].fn if stack else op.decomposition


NONDIFFERENTIABLE: set = set()  # op names whose results never require grad (sampling, integer-valued steps)


def autograd_fallback(op, keyset: int, *args):
    """The Autograd layer for ops without a formula: decompose (canonical ops), else no derivative."""
    check_inplace(op, args)
    decomposition = _composite(op) if op.kind != "prim" else None
    if decomposition is not None:
        return decomposition(*args)
    out = run_below(op, keyset, args)
    if op.name in NONDIFFERENTIABLE:
        strip(out, args)
        return out
    positions = _tensor_positions(op)
    edges = [gradient_edge(args[i]) if isinstance(args[i], Tensor) else None for i in positions]
    outputs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if not any(edges) or not any(isinstance(o, Tensor) and is_differentiable_dtype(o.dtype) for o in outputs):
        strip(out, args)
        return out
    node = NotImplementedNode(op, tuple(e or (None, 0) for e in edges), len(outputs))
    for nr, o in enumerate(outputs):
        if isinstance(o, Tensor) and is_differentiable_dtype(o.dtype):
            set_history(o, node, nr)
    strip(out, args)
    return out


LIBRARY.fallback(autograd_fallback, "Autograd")


def register_formula(
    op,
    formula,
    *,
    save=None,
    save_out: bool = False,
    materialize: bool = True,
    nondifferentiable=(),
    applies=None,
    library=None,
):
    """Register ``formula(ctx, grad)`` as the derivative of ``op`` (an OpOverload or qualified name).

    ``formula`` returns one gradient (or None) per Tensor argument of ``op``, in schema order,
    written with opweave ops (so ``create_graph=True`` differentiates it again). ``save``: the
    argument positions whose tensors the formula reads (default: all); ``save_out``: whether it
    reads the outputs; ``materialize``: whether output gradients nobody sent arrive as zeros (else
    None); ``nondifferentiable``: output positions that never require grad; ``applies(*args)``: whether
    the formula covers a call (else the op's decomposition is differentiated). Registered at the
    ``Autograd`` key through ``opweave.library``.
    """
    from .. import _ops

    if isinstance(op, str):
        op = _ops.lookup(op)
    lib = library or LIBRARY
    return lib.impl(
        op,
        formula_kernel(op, formula, save, save_out, materialize, nondifferentiable, applies),
        "Autograd",
        with_keyset=True,
    )


def _detach_kernel(keyset, self):
    """``detach``: a view of the same storage that records nothing and does not require grad."""
    from .. import ops

    out = run_below(ops.canonical.detach.default, keyset, (self,))
    if out._ag is not None:
        out._ag = None
    out._keys &= ~AUTOGRAD_BIT
    return out


def _register_detach() -> None:
    from .. import ops

    LIBRARY.impl(ops.canonical.detach.default, _detach_kernel, "Autograd", with_keyset=True)


_register_detach()


def _nondifferentiable_kernel(op):
    def kernel(keyset, *args):
        check_inplace(op, args)
        out = run_below(op, keyset, args)
        strip(out, args)
        return out

    kernel.__name__ = f"autograd_nondifferentiable_{op.name}"
    return kernel


def register_nondifferentiable(op, library=None) -> None:
    """Run the canonical ``op`` below Autograd and record nothing: its results never require grad.

    For ops whose results carry no gradient in PyTorch (comparisons, ``*_like`` factories): the
    decomposition would record nothing either, but would run the op's Python reference on each call.
    """
    from .. import _ops

    if isinstance(op, str):
        op = _ops.lookup(op)
    (library or LIBRARY).impl(op, _nondifferentiable_kernel(op), "Autograd", with_keyset=True)
