"""``torch.special`` aliases that the other families do not define: softmax, log_softmax, logsumexp.

Each is the same computation as its torch-namespace op and decomposes into it.
"""

from __future__ import annotations

from .._ops import canonical as ops
from ._utils import define_with_variants


def special_softmax(self, dim, dtype=None):
    """Alias of ``softmax``: ``exp(x) / sum(exp(x))`` along ``dim``."""
    return ops.softmax.int(self, dim, dtype)


def special_log_softmax(self, dim, dtype=None):
    """Alias of ``log_softmax`` along ``dim``."""
    return ops.log_softmax.int(self, dim, dtype)


def special_logsumexp(self, dim, keepdim=False):
    """Alias of ``logsumexp``: ``log(sum(exp(self)))`` over ``dim``, computed stably."""
    return ops.logsumexp(self, dim, keepdim)


def _define():
    define_with_variants(
        "special_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
        special_softmax,
        inplace=False,
        out=False,
    )
    define_with_variants(
        "special_log_softmax(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
        special_log_softmax,
        inplace=False,
        out=False,
    )
    define_with_variants(
        "special_logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",
        special_logsumexp,
        tags=("reduction",),
        inplace=False,
        out=True,
    )


_define()
