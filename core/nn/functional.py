"""``opweave.nn.functional``: PyTorch's ``torch.nn.functional`` over the canonical ops.

A function whose PyTorch signature is its ATen schema's is the op packet itself
(``conv2d`` is ``opweave.ops.conv2d``); the others (``inplace=`` flags, string
``reduction`` arguments, Python-level conveniences such as ``interpolate``) are
thin wrappers that translate their arguments and call canonical ops. Layers
(convolution, pooling, resampling) live in :mod:`._layers`; activations,
normalization, dropout, losses, embeddings, distances and attention in :mod:`._misc`.
"""

from __future__ import annotations

from . import _layers, _linear, _misc
from ._layers import *  # noqa: F403
from ._linear import *  # noqa: F403
from ._misc import *  # noqa: F403

__all__ = sorted(set(_layers.__all__) | set(_misc.__all__) | set(_linear.__all__))
