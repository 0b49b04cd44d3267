"""An installed device plugin whose device this machine lacks (no GPU driver, not macOS) fails with its reason."""

from __future__ import annotations

import warnings

import opweave
import pytest


@pytest.mark.parametrize("device", ["cuda", "mps"])
@pytest.mark.parametrize(
    "make",
    [
        lambda d: opweave.zeros(2, device=d),
        lambda d: opweave.full((2,), 1.5, device=d),
        lambda d: opweave.arange(3, device=d),
        lambda d: opweave.empty(3, device=d),
        lambda d: opweave.tensor([1.0], device=d),
        lambda d: opweave.ones(2).to(d),
    ],
)
def test_a_device_this_machine_lacks_is_named_with_the_reason(device, make):
    """Factories, ``tensor`` and ``to`` on an installed but unavailable device raise RuntimeError with its reason."""
    if opweave.backends.is_available(device):
        pytest.skip(f"{device} is available here")
    reason = opweave.backends.get(device).unavailable_reason()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "running it on the CPU" on the way to the error
        with pytest.raises(RuntimeError, match=f"device '{device}' is not available: ") as info:
            make(device)
    assert reason.splitlines()[0] in str(info.value)
