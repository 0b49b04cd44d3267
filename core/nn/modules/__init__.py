"""The layers of ``opweave.nn``, one module per family."""

from __future__ import annotations

from . import (
    activation,
    container,
    conv,
    dropout,
    linear,
    loss,
    normalization,
    pooling,
    rnn,
    shape,
    sparse,
    transformer,
)
from .activation import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .dropout import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import Module, register_module_forward_hook, register_module_forward_pre_hook  # noqa: F401
from .normalization import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .shape import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403

__all__ = sorted(
    {"Module", "register_module_forward_hook", "register_module_forward_pre_hook"}
    | set().union(
        *(
            m.__all__
            for m in (
                activation,
                container,
                conv,
                dropout,
                linear,
                loss,
                normalization,
                pooling,
                rnn,
                shape,
                sparse,
                transformer,
            )
        )
    )
)
