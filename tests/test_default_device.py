"""The default device: factories honor ``set_default_device`` and ``with opweave.device(...)``; nesting; threads."""

from __future__ import annotations

import threading

import opweave
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

CPU, META = opweave.device("cpu"), opweave.device("meta")


@pytest.fixture(autouse=True)
def _restore_default_device():
    """Every test starts and ends on the CPU default."""
    opweave.set_default_device(None)
    yield
    opweave.set_default_device(None)


#: Factories that take no tensor argument, so the default device decides where they allocate.
FACTORIES = {
    "empty": lambda: opweave.empty(2, 3),
    "zeros": lambda: opweave.zeros(2, 3),
    "ones": lambda: opweave.ones(4),
    "full": lambda: opweave.full((2,), 1.5),
    "arange": lambda: opweave.arange(5),
    "linspace": lambda: opweave.linspace(0, 1, 4),
    "eye": lambda: opweave.eye(3),
    "empty_strided": lambda: opweave.empty_strided((2, 2), (1, 2)),
    "scalar_tensor": lambda: opweave.scalar_tensor(3.0),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_use_cpu_by_default(name):
    assert opweave.get_default_device() == CPU
    assert FACTORIES[name]().device == CPU


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_honor_set_default_device(name):
    opweave.set_default_device("meta")
    assert opweave.get_default_device() == META
    made = FACTORIES[name]()
    assert made.device == META and made.is_meta
    opweave.set_default_device("cpu")
    assert FACTORIES[name]().device == CPU


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_honor_the_device_context_manager(name):
    with opweave.device("meta"):
        assert FACTORIES[name]().device == META
    assert FACTORIES[name]().device == CPU


def test_explicit_device_argument_wins_over_the_default():
    with opweave.device("meta"):
        assert opweave.zeros(2, device="cpu").device == CPU
        assert opweave.tensor([1.0, 2.0], device="cpu").device == CPU
    opweave.set_default_device("meta")
    assert opweave.ones(2, device="cpu").device == CPU


def test_like_and_new_factories_follow_their_input_not_the_default():
    x = opweave.ones(2)
    with opweave.device("meta"):
        assert opweave.zeros_like(x).device == CPU
        assert x.new_empty((3,)).device == CPU
        assert opweave.empty_like(x, device="meta").device == META


def test_context_managers_nest_and_restore():
    with opweave.device("meta") as outer:
        assert outer == META
        with opweave.device("cpu"):
            assert opweave.get_default_device() == CPU
            with opweave.device("meta"):
                assert opweave.zeros(1).device == META
            assert opweave.zeros(1).device == CPU
        assert opweave.get_default_device() == META
    assert opweave.get_default_device() == CPU


def test_context_manager_restores_a_set_default_and_on_exceptions():
    opweave.set_default_device("meta")
    with pytest.raises(ZeroDivisionError):
        with opweave.device("cpu"):
            assert opweave.zeros(1).device == CPU
            1 / 0  # noqa: B018
    assert opweave.get_default_device() == META


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["cpu", "meta"]), min_size=1, max_size=6))
def test_any_nesting_restores_each_level(path):
    def enter(level):
        if level == len(path):
            return
        before = opweave.get_default_device()
        with opweave.device(path[level]):
            assert opweave.get_default_device() == opweave.device(path[level])
            assert opweave.empty(1).device.type == path[level]
            enter(level + 1)
            assert opweave.get_default_device() == opweave.device(path[level])
        assert opweave.get_default_device() == before

    enter(0)
    assert opweave.get_default_device() == CPU


def test_default_device_is_per_thread():
    opweave.set_default_device("meta")
    seen = {}
    inside, release = threading.Event(), threading.Event()

    def fresh_thread():
        seen["start"] = opweave.get_default_device()
        seen["made"] = opweave.zeros(1).device
        with opweave.device("meta"):
            inside.set()
            release.wait(10)
            seen["inside"] = opweave.zeros(1).device
        seen["end"] = opweave.get_default_device()

    worker = threading.Thread(target=fresh_thread)
    worker.start()
    inside.wait(10)
    opweave.set_default_device("cpu")  # the main thread's change does not reach the worker's block
    assert opweave.get_default_device() == CPU
    release.set()
    worker.join()
    assert seen == {"start": CPU, "made": CPU, "inside": META, "end": CPU}
    assert opweave.zeros(1).device == CPU


def test_bad_devices_raise():
    with pytest.raises(ValueError, match="invalid device string"):
        opweave.set_default_device("not a device")
    with pytest.raises(TypeError, match="bare int"):
        opweave.set_default_device(0)
    with pytest.raises(RuntimeError, match="no backend provides device type 'nosuchdev'"):
        with opweave.device("nosuchdev"):
            opweave.zeros(1)
    assert opweave.get_default_device() == CPU
