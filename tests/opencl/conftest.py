"""Skip the OpenCL tests cleanly where pyopencl or an OpenCL device is missing."""

from __future__ import annotations

import pytest

pytest.importorskip("pyopencl")


@pytest.fixture(scope="session")
def ocl():
    """The ``opweave_opencl`` module, with the test skipped when no OpenCL device is usable."""
    import opweave_opencl

    if not opweave_opencl.is_available():
        pytest.skip(f"no OpenCL device: {opweave_opencl.unavailable_reason()}")
    return opweave_opencl
