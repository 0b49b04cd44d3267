"""``opweave.linalg``: linear algebra (PyTorch's torch.linalg).

``opweave.linalg.NAME`` is the canonical op ``linalg_NAME`` (``opweave.ops.linalg_NAME``).
"""

from ._namespaces import prefixed

__getattr__, __dir__ = prefixed("opweave.linalg", "linalg_")
