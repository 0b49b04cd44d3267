"""nn.functional: activations, normalization, dropout, losses, embeddings, distances, attention."""

from __future__ import annotations

__all__: list[str] = []
