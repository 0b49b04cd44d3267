"""DistributedSampler: each rank's share of the indices, as torch.utils.data.DistributedSampler gives it."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opweave.utils.data import DistributedSampler


@given(n=st.integers(0, 60), replicas=st.integers(1, 7), shuffle=st.booleans(), drop_last=st.booleans())
def test_shares_cover_the_dataset(n, replicas, shuffle, drop_last):
    if n == 0 and not drop_last:
        shares = [list(DistributedSampler(range(n), replicas, r, shuffle, 3, drop_last)) for r in range(replicas)]
        assert all(s == [] for s in shares)
        return
    samplers = [DistributedSampler(range(n), replicas, r, shuffle, 3, drop_last) for r in range(replicas)]
    shares = [list(s) for s in samplers]
    per_rank = (n // replicas) if drop_last else math.ceil(n / replicas)
    assert [len(s) for s in shares] == [per_rank] * replicas
    assert all(len(s) == per_rank for s in samplers)
    everything = [i for share in shares for i in share]
    assert all(0 <= i < n for i in everything)
    if drop_last:
        assert len(set(everything)) == len(everything) == per_rank * replicas  # no index twice
    else:
        assert set(everything) == set(range(n))  # every index, the first few twice
    if not shuffle:
        assert shares[0] == list(range(0, per_rank * replicas, replicas))[:per_rank] or drop_last or n < replicas


def test_shuffle_depends_on_seed_and_epoch_only():
    a, b = DistributedSampler(range(50), 2, 0, seed=7), DistributedSampler(range(50), 2, 0, seed=7)
    assert list(a) == list(b)
    first = list(a)
    a.set_epoch(1)
    other = DistributedSampler(range(50), 2, 1, seed=7)
    other.set_epoch(1)
    assert list(a) != first and sorted(list(a) + list(other)) == list(range(50))
    b.set_epoch(1)
    assert list(a) == list(b)


def test_bad_rank():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
