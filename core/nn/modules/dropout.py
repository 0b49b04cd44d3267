"""Dropout modules: active in training mode, the identity in eval mode."""

from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ["Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class _DropoutNd(Module):
    _fn = ""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        """Drop with probability ``p`` while training."""
        return getattr(F, self._fn)(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``."""

    _fn = "dropout"


class Dropout1d(_DropoutNd):
    """Zero whole channels of (N, C, L) or (C, L) inputs."""

    _fn = "dropout1d"


class Dropout2d(_DropoutNd):
    """Zero whole channels of (N, C, H, W) or (C, H, W) inputs."""

    _fn = "dropout2d"


class Dropout3d(_DropoutNd):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) inputs."""

    _fn = "dropout3d"


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's zero mean and unit variance."""

    _fn = "alpha_dropout"


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    _fn = "feature_alpha_dropout"
