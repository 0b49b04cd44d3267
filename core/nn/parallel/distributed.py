"""``DistributedDataParallel``: data-parallel training over the ranks of a process group.

Each rank runs the same model on its share of the batch; DDP makes the gradients after
``backward()`` the average over the ranks, so every rank takes the same optimizer step.
How (``docs/distributed.md``): the constructor broadcasts the parameters and buffers
from rank 0; a post-accumulate-grad hook on each parameter hands its gradient to the
:class:`~opweave.distributed._reducer.Reducer`, which all-reduces a bucket of gradients
asynchronously as soon as it is full, while backward goes on; a callback queued for the
end of backward waits for the buckets and writes the averaged gradients into ``.grad``.
"""

from __future__ import annotations

import dataclasses
import inspect
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..._tensor import Tensor
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ..modules.module import Module

#: the first bucket's size limit: small, so that the first all_reduce starts early (PyTorch's 1 MB)
FIRST_BUCKET_CAP_MB = 1.0
_WHO = "DistributedDataParallel"


class DistributedDataParallel(Module):
    """Data-parallel training of ``module`` over a process group (``torch.nn.parallel.DistributedDataParallel``).

    Every rank constructs it around the same model (the parameters and buffers of rank 0
    are broadcast to the others) and feeds it its own share of each batch; after
    ``loss.backward()`` every parameter's ``.grad`` holds the gradient averaged over the
    ranks. ``no_sync()`` skips the averaging (gradients accumulate locally, the next
    synchronised backward averages the sum); ``find_unused_parameters=True`` lets forward
    leave some parameters out; ``register_comm_hook`` replaces the all-reduce (see
    ``opweave.distributed.algorithms.ddp_comm_hooks``). ``module`` is the wrapped model;
    ``state_dict()`` keys begin with ``module.``, as PyTorch's.
    """

    def __init__(
        self,
        module: Module,
        device_ids: list | None = None,
        output_device=None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        init_sync: bool = True,
        process_group=None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        delay_all_reduce_named_params=None,
        param_to_hook_all_reduce=None,
        mixed_precision=None,
        device_mesh=None,
        skip_all_reduce_unused_params: bool = False,
    ) -> None:
        super().__init__()
        import opweave.distributed as dist

        from ...distributed import _group
        from ...distributed._reducer import Reducer, sync_tensors

        if not isinstance(module, Module):
            raise TypeError(f"{_WHO}: module must be an opweave.nn.Module, got {type(module).__name__}")
        unsupported = {
            "delay_all_reduce_named_params": delay_all_reduce_named_params,
            "param_to_hook_all_reduce": param_to_hook_all_reduce,
            "mixed_precision": mixed_precision,
            "device_mesh": device_mesh,
        }
        for name, value in unsupported.items():
            if value is not None:
                raise NotImplementedError(f"{_WHO}: {name} is not supported")
        if skip_all_reduce_unused_params:
            raise NotImplementedError(f"{_WHO}: skip_all_reduce_unused_params is not supported")
        if bucket_cap_mb is None:
            bucket_cap_mb = 25.0
        if bucket_cap_mb <= 0:
            raise ValueError(f"{_WHO}: bucket_cap_mb must be positive, got {bucket_cap_mb}")
        group = _group.resolve(process_group, _WHO)
        if group is None:
            raise RuntimeError(f"{_WHO}: this rank is not a member of process_group")

        ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        named = [(n, p) for n, p in module.named_parameters() if n not in ignore and p.requires_grad]
        if not named:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter that requires a "
                "gradient."
            )
        devices = {p.device for _, p in named}
        if device_ids or output_device is not None:
            if len(devices) > 1 or next(iter(devices)).type == "cpu":
                raise ValueError(
                    "DistributedDataParallel device_ids and output_device arguments only work with "
                    "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                    f"{device_ids}, output_device {output_device}, and module parameters {devices}."
                )
            if device_ids is not None and len(device_ids) != 1:
                raise ValueError("device_ids can only be None or contain a single element.")

        self.module = module
        self.process_group = group
        self.device_ids = list(device_ids) if device_ids else None
        self.output_device = output_device if output_device is not None else (device_ids[0] if device_ids else None)
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.bucket_bytes_cap = int(bucket_cap_mb * 2**20)
        self.parameters_to_ignore = ignore
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._param_names = [n for n, _ in named]
        self._params = [p for _, p in named]
        self._index_of = {id(p): i for i, p in enumerate(self._params)}
        self._world_size = group.size()
        self._rank = group.rank()
        self._comm_hook_registered = False
        self._require_finalize = False
        self._expect_hooks = False
        self._hooks_seen = False
        self._unused_now: list[int] = []
        self._static_unused: list[int] | None = None

        self._verify_same_model(dist, group)
        if init_sync and self._world_size > 1:
            states = self._params + self._synced_buffers()
            sync_tensors(states, src=group.ranks[0], group=process_group)

        self.reducer = Reducer(
            self._params,
            bucket_cap_mb,
            process_group,
            first_bucket_cap_mb=min(FIRST_BUCKET_CAP_MB, bucket_cap_mb),
            find_unused_parameters=find_unused_parameters or static_graph,
        )
        ref = weakref.ref(self)
        self._hook_handles = [p.register_post_accumulate_grad_hook(_hook(ref, i)) for i, p in enumerate(self._params)]
        if gradient_as_bucket_view:
            with no_grad():
                for i, p in enumerate(self._params):
                    if p.grad is not None:
                        view = self.reducer.bucket_view(i)
                        view.copy_(p.grad)
                        p.grad = view

    # -- construction ---------------------------------------------------------------------------

    def _synced_buffers(self) -> list[Tensor]:
        ignore = self.parameters_to_ignore
        return [b for n, b in self.module.named_buffers() if n not in ignore]

    def _verify_same_model(self, dist, group) -> None:
        """Every rank must wrap the same parameters (count, shapes, dtypes), as PyTorch checks."""
        if self._world_size == 1:
            return
        mine = [(tuple(p.shape), str(p.dtype)) for p in self._params]
        everyone: list = [None] * self._world_size
        dist.all_gather_object(everyone, mine, group=None if group is dist.GroupMember.WORLD else group)
        first = everyone[0]
        for rank, theirs in enumerate(everyone):
            if len(theirs) != len(first):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {rank} has {len(theirs)} params, while "
                    f"rank 0 has inconsistent {len(first)} params."
                )
            for i, (a, b) in enumerate(zip(theirs, first)):
                if a != b:
                    raise RuntimeError(
                        f"DDP expects same model across all ranks, but parameter {self._param_names[i]!r} "
                        f"(index {i}) has shape {list(a[0])} and dtype {a[1]} on rank {rank} and shape "
                        f"{list(b[0])} and dtype {b[1]} on rank 0."
                    )

    @staticmethod
    def _set_params_and_buffers_to_ignore_for_model(module: Module, params_and_buffers_to_ignore) -> None:
        """Leave these fully qualified parameter and buffer names out of synchronisation (call before wrapping)."""
        module._ddp_params_and_buffers_to_ignore = list(params_and_buffers_to_ignore)

    # -- forward --------------------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        """Run the wrapped module (after broadcasting rank 0's buffers) and prepare the gradient reduction."""
        grad = is_grad_enabled()
        if grad:
            self._ensure_prior_reduction_finished()
        if self.require_forward_param_sync and self.broadcast_buffers and self._world_size > 1:
            buffers = self._synced_buffers()
            if buffers:
                from ...distributed._reducer import sync_tensors

                sync_tensors(buffers, src=self.process_group.ranks[0], group=self._group_arg())
        if self.device_ids:
            inputs, kwargs = _to_device(inputs, self.device_ids[0]), _to_device(kwargs, self.device_ids[0])
        output = self.module(*inputs, **kwargs)
        if grad and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self.reducer.prepare()
            self._require_finalize = True
            self._expect_hooks = True
            self._hooks_seen = False
            if self.static_graph:
                if self._static_unused is None:
                    self._static_unused = self._find_unused(output)
                self._unused_now = self._static_unused
            elif self.find_unused_parameters:
                self._unused_now = self._find_unused(output)
            else:
                self._unused_now = []
        else:
            self.require_forward_param_sync = False
            self._expect_hooks = False
        return output

    def _group_arg(self):
        from ...distributed import GroupMember

        return None if self.process_group is GroupMember.WORLD else self.process_group

    def _find_unused(self, output) -> list[int]:
        """Indices of the parameters that the autograd graph of ``output`` does not reach."""
        from ...autograd.graph import AccumulateGrad

        reached: set[int] = set()
        seen: set[int] = set()
        stack = []
        for t in _find_tensors(output):
            fn = t.grad_fn
            if fn is not None:
                stack.append(fn)
            elif t.requires_grad:
                reached.add(id(t))
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, AccumulateGrad):
                reached.add(id(node.variable))
            stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
        return [i for i, p in enumerate(self._params) if id(p) not in reached]

    def _ensure_prior_reduction_finished(self) -> None:
        if not self._require_finalize:
            return
        missing = self.reducer.pending()
        self.reducer.abandon()
        self._require_finalize = self._expect_hooks = False
        if not missing:
            return
        names = ", ".join(self._param_names[i] for i in missing)
        hint = (
            ""
            if self.find_unused_parameters
            else "You can enable unused parameter detection by passing the keyword argument "
            "`find_unused_parameters=True` to `opweave.nn.parallel.DistributedDataParallel`, and by \n"
        )
        raise RuntimeError(
            "Expected to have finished reduction in the prior iteration before starting a new one. This error "
            "indicates that your module has parameters that were not used in producing loss. "
            + hint
            + "making sure all `forward` function outputs participate in calculating loss. \n"
            "If you already have done the above, then the distributed data parallel module wasn't able to locate "
            "the output tensors in the return value of your module's `forward` function. Please include the loss "
            "function and the structure of the return value of `forward` of your module when reporting this "
            "issue (e.g. list, dict, iterable).\n"
            f"Parameter indices which did not receive grad for rank {self._rank}: "
            + " ".join(map(str, missing))
            + f"\nParameters which did not receive grad for rank {self._rank}: {names}"
        )

    # -- backward -------------------------------------------------------------------------------

    def _autograd_hook(self, index: int, param: Tensor) -> None:
        if not self._expect_hooks:
            return
        if not self._hooks_seen:
            from ...autograd.engine import queue_callback

            self._hooks_seen = True
            queue_callback(self._finalize_backward)
            for j in self._unused_now:
                self.reducer.mark_ready(j, self._params[j].grad, used=False)
        self.reducer.mark_ready(index, param.grad)

    def _finalize_backward(self) -> None:
        self._expect_hooks = False
        if not self.reducer.all_launched():
            return  # a gradient never came: reported by the next forward, as PyTorch does
        with no_grad():
            grads = self.reducer.finalize()
            for p, g in zip(self._params, grads):
                if g is not None:  # None: no rank used the parameter; its .grad is left as it is
                    p.grad = g if self.gradient_as_bucket_view else g.clone()
        self._require_finalize = False

    # -- the public extras ----------------------------------------------------------------------

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside, backward accumulates gradients locally; the first synchronised backward after averages them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state: object, hook: Callable) -> None:
        """Reduce each gradient bucket with ``hook(state, bucket) -> Future`` instead of the default all-reduce.

        ``bucket`` is a ``GradBucket`` (``buffer()``, ``gradients()``, ``parameters()``,
        ``index()``, ``is_last()``); the Future's value is the reduced flat buffer (averaged
        over the ranks: the hook divides). Call it once, before training. Ready-made hooks:
        ``opweave.distributed.algorithms.ddp_comm_hooks.default_hooks``.
        """
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        params = [p for p in inspect.signature(hook).parameters.values() if p.kind is not p.VAR_KEYWORD]
        if len(params) < 2 and not any(p.kind is p.VAR_POSITIONAL for p in params):
            raise ValueError("Communication hook must take two arguments: (state, bucket).")
        if self._comm_hook_registered:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        if self._require_finalize:
            raise RuntimeError("register_comm_hook must be called before a forward whose backward is still to come")
        self.reducer.register_comm_hook(state, hook)
        self._comm_hook_registered = True

    def _set_static_graph(self) -> None:
        """Declare the graph static (the same parameters take part in every iteration)."""
        self.static_graph = True
        self.reducer.find_unused_parameters = True

    def extra_repr(self) -> str:
        return ""


def _hook(ref, index: int):
    def hook(param: Tensor) -> None:
        ddp = ref()
        if ddp is not None:
            ddp._autograd_hook(index, param)

    return hook


def _find_tensors(obj: Any) -> list[Tensor]:
    """The tensors inside a forward's output (nested lists, tuples, dicts and dataclasses)."""
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in _find_tensors(item)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in _find_tensors(item)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [t for f in dataclasses.fields(obj) for t in _find_tensors(getattr(obj, f.name))]
    return []


def _to_device(obj: Any, device) -> Any:
    """``obj`` with its tensors moved to ``device`` (nested lists, tuples and dicts)."""
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_to_device(v, device) for v in obj))
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_device(v, device) for v in obj)
    if isinstance(obj, dict):
        return {k: _to_device(v, device) for k, v in obj.items()}
    return obj
