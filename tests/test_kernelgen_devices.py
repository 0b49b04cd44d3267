"""``opweave_kernelgen.devices``: the device listing and device-module functions the OpenCL and CUDA plugins share."""

from __future__ import annotations

import threading

import opweave as ow
import pytest
from opweave_kernelgen.devices import DeviceFunctions, DeviceList


def test_device_list_discovers_once_and_keeps_the_reason():
    calls = []

    def discover():
        calls.append(1)
        return [], "no device here"

    listing = DeviceList(discover)
    threads = [threading.Thread(target=listing.devices) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert listing.devices() == [] and listing.unavailable_reason() == "no device here"
    assert len(calls) == 1
    found = DeviceList(lambda: (["rt0", "rt1"], "ignored when there are devices"))
    assert found.devices() == ["rt0", "rt1"] and found.unavailable_reason() is None


class _Backend:
    name = "opencl"

    def __init__(self):
        self.calls = []

    def is_available(self):
        return False

    def unavailable_reason(self):
        return "none here"

    def device_count(self):
        return 3

    def memory_stats(self, device):
        self.calls.append(("memory_stats", device))
        return {"allocated": 1, "reserved": 2, "peak": 3}

    def synchronize(self, device):
        self.calls.append(("synchronize", device))

    def empty_cache(self, device):
        self.calls.append(("empty_cache", device))


def test_device_functions_resolve_devices_as_torch_cuda_does():
    backend = _Backend()
    fns = DeviceFunctions(backend)
    assert not fns.is_available() and fns.unavailable_reason() == "none here" and fns.device_count() == 0
    assert fns.device() == ow.device("opencl", fns.current_device())
    assert fns.device(2) == ow.device("opencl", 2) and fns.index("opencl:1") == 1
    assert fns.device("opencl") == ow.device("opencl", fns.current_device())
    with pytest.raises(ValueError, match="expected a device of type 'opencl', got 'cpu'"):
        fns.synchronize("cpu")
    assert (fns.memory_allocated(1), fns.memory_reserved(1), fns.max_memory_allocated(1)) == (1, 2, 3)
    fns.empty_cache()
    fns.empty_cache(0)
    assert backend.calls[-2:] == [("empty_cache", None), ("empty_cache", ow.device("opencl", 0))]
    fns.synchronize(1)
    assert backend.calls[-1] == ("synchronize", ow.device("opencl", 1))


def test_both_plugins_take_the_shared_functions():
    import opweave_cuda.device_module as cuda_module
    import opweave_opencl.device_module as opencl_module

    for module in (cuda_module, opencl_module):
        for name in ("is_available", "device_count", "set_device", "memory_stats", "memory_allocated", "empty_cache"):
            fn = getattr(module, name)
            assert isinstance(fn.__self__, DeviceFunctions) and fn.__self__.backend is module.BACKEND, (module, name)
