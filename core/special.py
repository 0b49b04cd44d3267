"""``opweave.special``: special functions (PyTorch's torch.special).

``opweave.special.NAME`` is the canonical op ``special_NAME`` (``opweave.ops.special_NAME``).
"""

from ._namespaces import prefixed

__getattr__, __dir__ = prefixed("opweave.special", "special_")
