"""Plugins installed as separate distributions: discovery, lazy loading, isolation, autoload switch.

Each test installs fixture plugins as a distribution (a ``*.dist-info`` with an
``entry_points.txt`` in group ``opweave.backends``, as pip writes it) into a
temporary site directory and runs a fresh interpreter against it, so that
``import opweave`` sees them exactly as it would after ``pip install``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "plugin_fixtures"


@pytest.fixture
def site(tmp_path):
    """A site directory holding the distribution ``toy-backend`` with three entry points."""
    for module in ("toy_backend", "broken_import", "broken_register"):
        shutil.copy(FIXTURES / f"{module}.py", tmp_path / f"{module}.py")
    info = tmp_path / "toy_backend-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-backend\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[opweave.backends]\ntoy = toy_backend\nbrokenimp = broken_import\nhalfreg = broken_register\n"
    )
    return tmp_path


def run(site: Path, code: str, **env) -> dict:
    """Run ``code`` in a fresh interpreter with ``site`` on the path; it prints one JSON object."""
    environment = dict(os.environ, PYTHONPATH=str(site), **env)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=environment, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_discovered_lazily_and_dispatched_to(site):
    out = run(
        site,
        """
        import json, sys
        import opweave
        before = "toy_backend" in sys.modules
        lazy = {s.name: s.loaded for s in opweave.backends.status(load_all=False)}
        x = opweave.tensor([1.0, 2.0, 3.0], device="toy")
        y = opweave.ops.prims.add(x, x)
        import toy_backend
        why = str(opweave.dispatch.explain(opweave.ops.prims.add.default, x, x))
        print(json.dumps({"before": before, "lazy": lazy, "device": str(y.device),
                          "values": y.cpu().tolist(), "calls": toy_backend.CALLS["prims::add"], "why": why}))
        """,
    )
    assert out["before"] is False, "the plugin module must not be imported by `import opweave`"
    assert out["lazy"]["toy"] is False
    assert out["device"] == "toy:0", "tensors on indexed device types carry an index, as in PyTorch"
    assert out["values"] == [2.0, 4.0, 6.0]
    assert out["calls"] == 1
    assert "Dense×toy: kernel from toy" in out["why"]


def test_canonical_op_runs_through_decomposition_on_plugin_device(site):
    out = run(
        site,
        """
        import json
        import opweave, toy_backend
        x = opweave.tensor([1, 2, 3], dtype=opweave.int32, device="toy")
        y = x * x + x
        print(json.dumps({"values": y.cpu().tolist(), "dtype": str(y.dtype), "calls": dict(toy_backend.CALLS)}))
        """,
    )
    assert out["values"] == [2, 6, 12]
    assert out["dtype"] == "opweave.int32"
    assert out["calls"]["prims::add"] == 1 and out["calls"]["prims::mul"] == 1


def test_broken_plugins_are_isolated(site):
    out = run(
        site,
        """
        import json
        import opweave
        rows = {s.name: (s.available, s.reason) for s in opweave.backends.status()}
        errors = {}
        for device in ("brokenimp", "halfreg"):
            try:
                opweave.empty(2, device=device)
            except RuntimeError as exc:
                errors[device] = str(exc)
        ok = opweave.tensor([1.0]).tolist()
        print(json.dumps({"rows": rows, "errors": errors, "ok": ok}))
        """,
    )
    assert out["ok"] == [1.0]
    assert out["rows"]["brokenimp"][0] is False and "ImportError" in out["rows"]["brokenimp"][1]
    assert out["rows"]["halfreg"][0] is False and "firmware" in out["rows"]["halfreg"][1]
    assert "brokenimp" in out["errors"]["brokenimp"] and "cannot be imported" in out["errors"]["brokenimp"]
    assert "halfreg" in out["errors"]["halfreg"] and "firmware" in out["errors"]["halfreg"]
    assert out["rows"]["toy"][0] is True and out["rows"]["cpu"][0] is True


def test_autoload_off_then_register_by_hand(site):
    out = run(
        site,
        """
        import json
        import opweave
        names = [s.name for s in opweave.backends.status() if s.loaded]
        states = {s.name: s.state for s in opweave.backends.status()}
        try:
            opweave.tensor([1.0])
            error = None
        except RuntimeError as exc:
            error = str(exc)
        import opweave_cpu
        opweave.backends.register_plugin(opweave_cpu)
        value = opweave.tensor([1.5]).tolist()
        print(json.dumps({"names": names, "states": states, "error": error, "value": value}))
        """,
        OPWEAVE_AUTOLOAD="0",
    )
    assert out["names"] == ["meta"], "nothing is imported with OPWEAVE_AUTOLOAD=0"
    assert out["states"]["cpu"] == "not loaded" and out["states"]["toy"] == "not loaded"
    assert "'cpu'" in out["error"] and "OPWEAVE_AUTOLOAD=0" in out["error"]
    assert "opweave.backends.load('cpu')" in out["error"] and "register_plugin" in out["error"]
    assert out["value"] == [1.5]


def test_unknown_device_type_names_loaded_backends():
    import opweave

    with pytest.raises(RuntimeError, match="no backend provides device type 'nosuchdev'.*cpu"):
        opweave.empty(2, device="nosuchdev")


def test_the_core_is_hardware_free_with_autoload_off(site):
    out = run(
        site,
        """
        import json
        import opweave as ow
        m = ow.empty(2, 3, device="meta")
        results = {
            "add": [list((m + 1).shape), str((m + 1).dtype)],
            "rsub": str((1 - m.to(ow.int32)).dtype),
            "mul": str((m * 2.5).dtype),
            "where": list(ow.where(m > 0, m, 0.0).shape),
            "complex": str((m.sum() + 1j).dtype),
            "tensor": [list(ow.tensor([[1, 2]], device="meta").shape), str(ow.tensor([[1, 2]], device="meta").dtype)],
        }
        loaded = [s.name for s in ow.backends.status(load_all=False) if s.loaded]
        import opweave_vendor_example as vendor
        ow.backends.register_plugin(vendor)
        b = ow.backends.get("vnpu")
        x = ow.tensor([1.0, 2.0], device="vnpu")
        values = [b.copy_to_host(y).tolist() for y in (x + 1, 3 * x, x.to(ow.int32) - 1)]
        loaded_after = [s.name for s in ow.backends.status(load_all=False) if s.loaded]
        print(json.dumps({"results": results, "loaded": loaded, "values": values, "after": loaded_after}))
        """,
        OPWEAVE_AUTOLOAD="0",
    )
    assert out["loaded"] == ["meta"]
    assert out["results"]["add"] == [[2, 3], "opweave.float32"]
    assert out["results"]["rsub"] == "opweave.int32"
    assert out["results"]["mul"] == "opweave.float32"
    assert out["results"]["where"] == [2, 3]
    assert out["results"]["complex"] == "opweave.complex64"
    assert out["results"]["tensor"] == [[1, 2], "opweave.int64"]
    assert out["values"] == [[2.0, 3.0], [3.0, 6.0], [0, 1]]
    assert out["after"] == ["meta", "vnpu"], "Python scalars on a device need no CPU plugin"


def test_load_by_name_with_autoload_off_and_unknown_names(site):
    out = run(
        site,
        """
        import json
        import opweave as ow
        try:
            ow.backends.load("xpu")
            unknown = None
        except ValueError as exc:
            unknown = str(exc)
        before = {s.name: s.state for s in ow.backends.status(load_all=False)}
        record = ow.backends.load("toy")
        after = {s.name: s.state for s in ow.backends.status(load_all=False)}
        toy = ow.ops.prims.add(ow.tensor([1.0], device="toy"), ow.tensor([2.0], device="toy"))
        print(json.dumps({"unknown": unknown, "before": before, "after": after, "record": record.backends,
                          "toy": ow.backends.get("toy").copy_to_host(toy).tolist()}))
        """,
        OPWEAVE_AUTOLOAD="0",
    )
    assert "no plugin named 'xpu'" in out["unknown"]
    assert all(name in out["unknown"] for name in ("cpu", "toy", "brokenimp", "halfreg"))
    assert out["before"]["toy"] == "not loaded" and out["after"]["toy"] == "available"
    assert out["after"]["cpu"] == "not loaded", "load('toy') loads that plugin only"
    assert out["record"] == ["toy"]
    assert out["toy"] == [3.0]


def test_register_plugin_of_an_entry_point_module_is_idempotent():
    import opweave
    import opweave_cpu

    opweave.ones(1)
    record = opweave.backends.register_plugin(opweave_cpu)
    assert record.name == "cpu" and record.loaded
    assert repr(opweave.ones(2)) == "tensor([1., 1.])"


def test_device_modules():
    import numpy as np
    import opweave

    assert opweave.cpu.is_available() is True
    assert opweave.cpu.device_count() == 1
    assert opweave.cpu.current_device() == "cpu"
    opweave.cpu.synchronize()
    assert opweave.vnpu.device_count() == 2
    before = opweave.vnpu.memory_stats("vnpu:1")["allocated"]
    x = opweave.tensor(np.zeros(1000, np.float32), device="vnpu:1")
    assert opweave.vnpu.memory_allocated("vnpu:1") >= before + 4000
    assert opweave.vnpu.max_memory_allocated("vnpu:1") >= opweave.vnpu.memory_allocated("vnpu:1")
    del x
    expected = opweave.backends.get("opencl").device_count() if opweave.opencl.is_available() else 0
    assert opweave.opencl.device_count() == expected
    assert not hasattr(opweave, "nosuchdevice")
    with pytest.raises(AttributeError, match="x86quant.*registers no device module"):
        getattr(opweave, "x86quant")  # noqa: B009 - the attribute access is the test


def test_register_device_module_by_hand():
    import types

    import opweave

    module = types.ModuleType("handmade")
    module.device_count = lambda: 7
    opweave.backends.register_device_module("handmade_dev", module)
    assert opweave.handmade_dev.device_count() == 7
    with pytest.raises(RuntimeError, match="already registered"):
        opweave.backends.register_device_module("handmade_dev", module)
    with pytest.raises(ValueError, match="would hide opweave.linalg"):
        opweave.backends.register_device_module("linalg", module)
    with pytest.raises(ValueError, match="declare the backend 'elsewhere' first"):
        opweave.backends.Registry("someone").device_module("elsewhere", module)


def test_a_plugin_may_not_claim_a_device_type_the_core_or_another_plugin_holds():
    import opweave
    from opweave.backends import Backend, BackendClaimError, Registry

    class Meta(Backend):
        name = "meta"

    class Cpu(Backend):
        name = "cpu"

    opweave.ones(1)
    for backend, holder in ((Meta(), "core"), (Cpu(), "cpu")):
        with pytest.raises(BackendClaimError, match=f"plugin '{holder}'.*plugin 'intruder' may not declare it"):
            Registry("intruder").backend(backend)
    assert repr(opweave.ones(2)) == "tensor([1., 1.])"


def test_profiler_stacks_skip_every_loaded_plugin():
    import opweave
    from opweave import profiler

    opweave.ones(1, device="vnpu")
    internal = profiler._internal_dirs()
    import opweave_cpu
    import opweave_vendor_example

    for module in (opweave_cpu, opweave_vendor_example):
        folder = os.path.dirname(os.path.abspath(module.__file__)) + os.sep
        assert folder in internal


def test_set_device_makes_an_index_less_device_mean_that_device():
    import threading

    import opweave

    assert opweave.vnpu.current_device() == 0
    try:
        opweave.vnpu.set_device(1)
        assert opweave.vnpu.current_device() == 1
        assert opweave.backends.current_device_index("vnpu") == 1
        assert opweave.empty(2, device="vnpu").device == opweave.device("vnpu:1")
        assert opweave.ones(2).to("vnpu").device == opweave.device("vnpu:1")
        assert opweave.tensor([1.0], device="vnpu").device == opweave.device("vnpu:1")
        with opweave.device("vnpu"):
            assert opweave.zeros(2).device == opweave.device("vnpu:1")
        assert opweave.empty(2, device="vnpu:0").device == opweave.device("vnpu:0"), "an explicit index wins"
        seen = []
        worker = threading.Thread(target=lambda: seen.append(opweave.vnpu.current_device()))
        worker.start()
        worker.join()
        assert seen == [0], "the current device is per thread, as in PyTorch"
        with pytest.raises(RuntimeError, match="vnpu has 2 device"):
            opweave.vnpu.set_device(2)
        with pytest.raises(ValueError, match="expected a vnpu device"):
            opweave.vnpu.set_device("cpu")
        assert opweave.vnpu.current_device() == 1, "a refused call leaves the current device alone"
    finally:
        opweave.vnpu.set_device(0)


def test_doctor_with_autoload_off_lists_plugins_as_not_loaded(site):
    environment = dict(os.environ, PYTHONPATH=str(site), OPWEAVE_AUTOLOAD="0")
    proc = subprocess.run(
        [sys.executable, "-m", "opweave.cli", "doctor"], capture_output=True, text=True, env=environment, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert any("OPWEAVE_AUTOLOAD=0" in line and "opweave.backends.load" in line for line in lines)
    for name in ("cpu", "toy", "brokenimp"):
        row = next(line for line in lines if line.startswith(name + " "))
        assert "not loaded" in row and f"load('{name}')" in row
    assert "  meta: matmul of [3, 4] and [4, 5] has shape [3, 5]" in lines


def test_dir_lists_registered_device_modules():
    import opweave

    opweave.ones(1)
    assert "cpu" in dir(opweave) and "linalg" in dir(opweave)
