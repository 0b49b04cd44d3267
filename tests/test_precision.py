"""Float32 matmul precision: the setting, the per-device ``allow_tf32`` view of it, and what backends declare."""

from __future__ import annotations

import threading

import numpy as np
import opweave
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opweave.backends import Backend


@pytest.fixture(autouse=True)
def _restore_precision():
    """Every test starts and ends at the default precision."""
    opweave.set_float32_matmul_precision("highest")
    yield
    opweave.set_float32_matmul_precision("highest")


def test_default_is_highest():
    assert opweave.get_float32_matmul_precision() == "highest"
    assert opweave.backends.cuda.matmul.allow_tf32 is False


@pytest.mark.parametrize("precision", ["highest", "high", "medium"])
def test_set_and_get(precision):
    opweave.set_float32_matmul_precision(precision)
    assert opweave.get_float32_matmul_precision() == precision


@pytest.mark.parametrize("bad", ["low", "HIGH", "", "tf32"])
def test_unknown_precision_raises_valueerror(bad):
    opweave.set_float32_matmul_precision("medium")
    with pytest.raises(ValueError, match=r"set_float32_matmul_precision\(\): precision must be one of"):
        opweave.set_float32_matmul_precision(bad)
    assert opweave.get_float32_matmul_precision() == "medium", "a rejected value must not change the setting"


def test_non_string_raises_typeerror():
    with pytest.raises(TypeError, match="precision must be str"):
        opweave.set_float32_matmul_precision(None)


@pytest.mark.parametrize(("precision", "allowed"), [("highest", False), ("high", True), ("medium", True)])
def test_allow_tf32_reads_the_precision_for_any_device_name(precision, allowed):
    opweave.set_float32_matmul_precision(precision)
    for name in ("cuda", "cpu", "opencl", "some_vendor_npu"):
        assert getattr(opweave.backends, name).matmul.allow_tf32 is allowed


def test_allow_tf32_is_one_setting_shared_by_all_devices():
    opweave.backends.cuda.matmul.allow_tf32 = True
    assert opweave.get_float32_matmul_precision() == "high"
    assert opweave.backends.opencl.matmul.allow_tf32 is True
    opweave.backends.opencl.matmul.allow_tf32 = False
    assert opweave.get_float32_matmul_precision() == "highest"
    assert opweave.backends.cuda.matmul.allow_tf32 is False
    opweave.set_float32_matmul_precision("medium")
    opweave.backends.cuda.matmul.allow_tf32 = True  # "medium" already allows it; setting True means "high"
    assert opweave.get_float32_matmul_precision() == "high"


def test_flags_objects_reject_typos_and_non_bools():
    with pytest.raises(AttributeError, match="allow_tf23"):
        opweave.backends.cuda.matmul.allow_tf23 = True
    with pytest.raises(TypeError, match=r"backends\.cuda\.matmul\.allow_tf32.*must be bool"):
        opweave.backends.cuda.matmul.allow_tf32 = 1
    assert opweave.backends.cuda is opweave.backends.cuda, "one flags object per device type"
    assert "allow_tf32=False" in repr(opweave.backends.cuda.matmul)


def test_backends_module_still_raises_for_private_names():
    with pytest.raises(AttributeError):
        opweave.backends._no_such_thing  # noqa: B018
    with pytest.raises(AttributeError):
        opweave.backends.__wrapped__  # noqa: B018
    assert callable(opweave.backends.status), "real attributes are not shadowed"


def test_setting_is_process_global():
    opweave.set_float32_matmul_precision("medium")
    seen = []
    worker = threading.Thread(target=lambda: seen.append(opweave.get_float32_matmul_precision()))
    worker.start()
    worker.join()
    assert seen == ["medium"]


class _Tf32Backend(Backend):
    name = "tf32dev"
    float32_matmul_modes = {"high": "tf32"}


class _FullBackend(Backend):
    name = "bfdev"
    float32_matmul_modes = {"high": "bf16x3", "medium": "bf16"}


@pytest.fixture
def declared_backends():
    from opweave import _backends

    added = {b.name: b for b in (_Tf32Backend(), _FullBackend())}
    saved = {name: _backends._backends.get(name) for name in added}
    _backends._backends.update(added)
    yield
    for name, previous in saved.items():
        if previous is None:
            _backends._backends.pop(name, None)
        else:
            _backends._backends[name] = previous


@pytest.mark.parametrize(
    ("precision", "expected"),
    [
        ("highest", {"cpu": "ieee", "tf32dev": "ieee", "bfdev": "ieee"}),
        ("high", {"cpu": "ieee", "tf32dev": "tf32", "bfdev": "bf16x3"}),
        ("medium", {"cpu": "ieee", "tf32dev": "tf32", "bfdev": "bf16"}),
    ],
)
def test_backends_declare_what_each_precision_means(declared_backends, precision, expected):
    opweave.set_float32_matmul_precision(precision)
    assert {name: opweave.backends.float32_matmul_mode(name) for name in expected} == expected


def test_cpu_declares_nothing():
    assert dict(opweave.backends.get("cpu").float32_matmul_modes) == {}
    assert dict(Backend.float32_matmul_modes) == {}


@settings(max_examples=20, deadline=None)
@given(
    m=st.integers(1, 6),
    k=st.integers(1, 6),
    n=st.integers(1, 6),
    precision=st.sampled_from(["highest", "high", "medium"]),
    seed=st.integers(0, 2**16),
)
def test_cpu_matmul_is_ieee_float32_at_every_precision(m, k, n, precision, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    opweave.set_float32_matmul_precision("highest")
    reference = (opweave.from_numpy(a) @ opweave.from_numpy(b)).numpy()
    opweave.set_float32_matmul_precision(precision)
    got = (opweave.from_numpy(a) @ opweave.from_numpy(b)).numpy()
    assert got.dtype == np.float32
    assert got.tobytes() == reference.tobytes(), "the CPU ignores the setting: results are identical"
    np.testing.assert_allclose(got, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-5)
