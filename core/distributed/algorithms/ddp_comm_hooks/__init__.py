"""DDP communication hooks (``torch.distributed.algorithms.ddp_comm_hooks``): ``default_hooks`` and their names."""

from __future__ import annotations

from enum import Enum
from functools import partial

from . import default_hooks


class DDPCommHookType(Enum):
    """The built-in hooks by name, as PyTorch's ``DDPCommHookType``."""

    ALLREDUCE = partial(default_hooks.allreduce_hook)
    FP16_COMPRESS = partial(default_hooks.fp16_compress_hook)
    BF16_COMPRESS = partial(default_hooks.bf16_compress_hook)


def register_ddp_comm_hook(comm_hook_type: DDPCommHookType, model, state=None) -> None:
    """Register the built-in hook ``comm_hook_type`` on the DistributedDataParallel ``model``."""
    if not isinstance(comm_hook_type, DDPCommHookType):
        raise TypeError(f"register_ddp_comm_hook: expected a DDPCommHookType, got {type(comm_hook_type).__name__}")
    model.register_comm_hook(state, comm_hook_type.value.func)


__all__ = ["DDPCommHookType", "default_hooks", "register_ddp_comm_hook"]
