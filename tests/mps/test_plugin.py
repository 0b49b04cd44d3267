"""The mps plugin where Metal is absent (Linux, Windows): unavailable with its reason, nothing else broken.

On macOS with a Metal GPU these tests skip; ``scripts/mps_check.sh`` is what runs there.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import opweave
import pytest
import tomllib
from opweave_mps import BACKEND, opweave_conformance_config

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(BACKEND.is_available(), reason="Metal is available: scripts/mps_check.sh tests it")


def test_status_and_the_device_module_say_why():
    reason = opweave.mps.unavailable_reason()
    if sys.platform != "darwin":
        assert reason.startswith("Metal requires macOS")
    row = next(r for r in opweave.backends.status() if r.name == "mps")
    assert not row.available and reason in str(row)
    assert opweave.mps.is_available() is False and opweave.mps.device_count() == 0
    for fn in (opweave.mps.synchronize, opweave.mps.current_allocated_memory, opweave.mps.driver_allocated_memory):
        with pytest.raises(RuntimeError, match=reason.split(" (")[0]):
            fn()


def test_a_tensor_on_mps_raises_runtime_error_and_other_devices_still_work():
    with pytest.raises(RuntimeError, match="device 'mps' is not available"):
        opweave.tensor([1.0, 2.0], device="mps")
    x = opweave.tensor([1.0, 2.0]) * 3
    np.testing.assert_array_equal(x.numpy(), [3.0, 6.0])


def test_memory_fraction_checks_its_argument_first():
    with pytest.raises(TypeError, match="must be float"):
        opweave.mps.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match=r"in \[0, 2\]"):
        opweave.mps.set_per_process_memory_fraction(2.5)
    with pytest.raises(RuntimeError):
        opweave.mps.set_per_process_memory_fraction(0.5)


def test_metal_has_no_double():
    assert opweave.float64 not in BACKEND.dtypes and opweave.complex128 not in BACKEND.dtypes
    assert {opweave.float16, opweave.bfloat16, opweave.float32, opweave.complex64} <= BACKEND.dtypes
    for dtype in (opweave.float64, opweave.complex128):
        with pytest.raises(TypeError, match=f"mps device has no {dtype.name}.*Metal has none"):
            BACKEND.check_dtype(dtype, "prims::full")
    config = opweave_conformance_config("mps")
    assert set(config["skip_dtypes"]) == {"float64", "complex128"}
    assert opweave_conformance_config("opencl") is None


def test_autocast_table_and_dlpack_device():
    assert opweave.get_autocast_dtype("mps") is opweave.float16
    policy = opweave.autocast_policy("mps")
    assert {"mm", "bmm", "linear", "conv2d"} <= set(policy.lower_precision)
    assert {"batch_norm", "layer_norm", "exp"} <= set(policy.fp32)
    assert BACKEND.dlpack_device_type == 8  # kDLMetal


def test_the_extra_installs_pyobjc_only_on_macos():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = project["optional-dependencies"]["mps"]
    assert {r.split(">=")[0] for r in extra} == {"pyobjc-framework-Metal", "pyobjc-framework-MetalPerformanceShaders"}
    assert all(r.endswith('; sys_platform == "darwin"') for r in extra)
    assert "mps" in project["optional-dependencies"]["all"][0]
    assert project["entry-points"]["opweave.backends"]["mps"] == "opweave_mps"
