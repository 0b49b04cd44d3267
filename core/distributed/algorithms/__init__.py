"""``opweave.distributed.algorithms``: training algorithms over collectives (``torch.distributed.algorithms``)."""
