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
