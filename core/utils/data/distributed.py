"""``DistributedSampler``: each rank's share of a dataset's indices (``torch.utils.data.DistributedSampler``)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized


class DistributedSampler:
    """Yields the indices of ``dataset`` that rank ``rank`` of ``num_replicas`` should load, as PyTorch's does.

    Every rank sees the same permutation (seeded by ``seed + epoch``; call :meth:`set_epoch`
    at each epoch to reshuffle) and takes every ``num_replicas``-th index from its rank on.
    Without ``drop_last`` the list is padded by repeating its start so that every rank gets
    the same number of samples; with it the tail is dropped. ``num_replicas`` and ``rank``
    default to the default process group's.
    """

    def __init__(
        self,
        dataset: Sized,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = True,
        seed: int = 0,
        drop_last: bool = False,
    ):
        if num_replicas is None or rank is None:
            import opweave.distributed as dist

            if not dist.is_initialized():
                raise RuntimeError("DistributedSampler: give num_replicas and rank, or call init_process_group first")
            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if num_replicas < 1:
            raise ValueError(f"DistributedSampler: num_replicas must be positive, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        self.shuffle = shuffle
        self.seed = seed
        n = len(dataset)
        if drop_last and n % num_replicas:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self) -> Iterator[int]:
        n = len(self.dataset)
        if self.shuffle:
            import opweave

            g = opweave.Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = opweave.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            else:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        return iter(indices[self.rank : self.total_size : self.num_replicas])

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use ``epoch`` in the shuffle's seed (call it at the start of each epoch, on every rank)."""
        self.epoch = epoch
