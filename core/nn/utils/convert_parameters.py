"""Flatten parameters into one vector and back (``torch.nn.utils.parameters_to_vector``)."""

from __future__ import annotations

from collections.abc import Iterable

import opweave

from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """One 1-D tensor holding every parameter's elements in order."""
    vec = []
    device = None
    for param in parameters:
        if device is None:
            device = param.device
        elif param.device != device:
            raise TypeError(
                "Found two parameters on different devices, this is currently not supported: "
                f"{device} and {param.device}"
            )
        vec.append(param.reshape(-1))
    return opweave.cat(vec)


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters`` (in place)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected Tensor, but got: {type(vec).__name__}")
    parameters = list(parameters)
    total = sum(p.numel() for p in parameters)
    if total != vec.numel():
        raise ValueError(f"vector_to_parameters: 'vec' has {vec.numel()} elements, the parameters {total}")
    pointer = 0
    with opweave.no_grad():
        for param in parameters:
            n = param.numel()
            param.copy_(vec[pointer : pointer + n].reshape(param.shape))
            pointer += n
