"""``opweave.nn.parallel``: ``DistributedDataParallel`` (``torch.nn.parallel``).

Importing it does not import ``opweave.distributed`` or start MPI; constructing a
``DistributedDataParallel`` needs an initialized process group.
"""

from __future__ import annotations

from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
