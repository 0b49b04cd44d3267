"""Broken plugins, installed as real distributions: each is isolated, reported and named when its device is used.

Seven kinds: import error, hook raises, duplicate entry point name, a device type
claimed under another entry point name, a backend without prims, a kernel that
raises and a kernel that returns the wrong dtype. They are installed together
(``*.dist-info/entry_points.txt`` in a temporary site directory, as pip writes
them) beside the working ``toy`` plugin, and each check runs in a fresh
interpreter so that discovery takes the real entry point path.
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

# distribution -> (modules, entry points); "dup-toy" comes after "toy-backend" on the path, so its "toy" is second
DISTRIBUTIONS = {
    "toy_backend": (
        ["toy_backend", "broken_import", "broken_register", "host_memory"],
        "toy = toy_backend\nbrokenimp = broken_import\nhalfreg = broken_register\n",
    ),
    "more_broken": (
        ["fake_cpu", "no_prims", "raising_kernel", "wrong_dtype"],
        "fakecpu = fake_cpu\nnoprims = no_prims\nraising = raising_kernel\nwrongdtype = wrong_dtype\n",
    ),
    "dup_toy": (["dup_toy"], "toy = dup_toy\n"),
}


def _install(root: Path, dist: str, modules, entry_points: str) -> Path:
    site = root / dist
    site.mkdir()
    for module in modules:
        shutil.copy(FIXTURES / f"{module}.py", site / f"{module}.py")
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist.replace('_', '-')}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[opweave.backends]\n" + entry_points)
    return site


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> str:
    """A PYTHONPATH of three site directories holding the fixture distributions."""
    root = tmp_path_factory.mktemp("sites")
    return os.pathsep.join(str(_install(root, dist, *spec)) for dist, spec in DISTRIBUTIONS.items())


def _python(sites: str, args, **env) -> subprocess.CompletedProcess:
    environment = dict(os.environ, PYTHONPATH=sites, **env)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=environment, timeout=300)


def run(sites: str, code: str, **env) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object last."""
    proc = _python(sites, ["-c", textwrap.dedent(code)], **env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


USE_EVERY_DEVICE = """
    import json, sys
    import numpy as np
    import opweave as ow

    def attempt(fn):
        try:
            return {"ok": fn()}
        except Exception as exc:
            return {"type": type(exc).__name__, "message": str(exc)}

    def x(device):
        return ow.tensor([1.0, 2.0, 3.0], device=device)

    ow.ones(1)  # the CPU plugin first, so that halfreg's override of its prims::add would win if it stayed
    uses = {
        "brokenimp": attempt(lambda: ow.empty(2, device="brokenimp").tolist()),
        "halfreg": attempt(lambda: ow.empty(2, device="halfreg").tolist()),
        "fakecpu": attempt(lambda: ow.empty(2, device="fakecpu").tolist()),
        "duptoy": attempt(lambda: ow.empty(2, device="duptoy").tolist()),
        "noprims": attempt(lambda: (x("noprims") + x("noprims")).cpu().tolist()),
        "raising": attempt(lambda: ow.ops.prims.add(x("raising"), x("raising")).cpu().tolist()),
        "wrongdtype": attempt(lambda: ow.ops.prims.add(x("wrongdtype"), x("wrongdtype")).cpu().tolist()),
    }
    working = {
        "cpu": repr(ow.ones(3)),
        "cpu_values": (ow.arange(4.0) * 2 + 1).tolist(),
        "cpu_prim": ow.ops.prims.add(x("cpu"), x("cpu")).tolist(),
        "toy": ow.ops.prims.add(x("toy"), x("toy")).cpu().tolist(),
        "vnpu": (x("vnpu") * 2).cpu().tolist(),
        "meta": list((ow.empty(2, 3, device="meta") + 1).shape),
        "cpu_module": ow.cpu.device_count(),
    }
    rows = {f"{s.name}|{s.plugin}": {"state": s.state, "reason": s.reason} for s in ow.backends.status()}
    print(json.dumps({"uses": uses, "working": working, "rows": rows,
                      "dup_imported": "dup_toy" in sys.modules}))
"""


@pytest.fixture(scope="module")
def report(sites) -> dict:
    """Every broken device used once, the working ones checked, and the status rows, in one interpreter."""
    return run(sites, USE_EVERY_DEVICE)


@pytest.fixture(scope="module")
def doctor(sites) -> subprocess.CompletedProcess:
    """``opweave doctor`` with the broken plugins installed."""
    return _python(sites, ["-m", "opweave.cli", "doctor"])


def test_every_other_device_keeps_working(report):
    working = report["working"]
    assert working["cpu"] == "tensor([1., 1., 1.])", "a plugin claiming 'cpu' must not replace the CPU backend"
    assert working["cpu_values"] == [1.0, 3.0, 5.0, 7.0]
    assert working["cpu_prim"] == [2.0, 4.0, 6.0], "a kernel registered by a plugin whose hook then raised is undone"
    assert working["toy"] == [2.0, 4.0, 6.0]
    assert working["vnpu"] == [2.0, 4.0, 6.0]
    assert working["meta"] == [2, 3]
    assert working["cpu_module"] == 1


@pytest.mark.parametrize(
    "device, plugin, cause",
    [
        ("brokenimp", "brokenimp", "ImportError: broken_import: this plugin cannot be imported"),
        ("halfreg", "halfreg", "RuntimeError: broken_register: device firmware not found"),
        ("fakecpu", "fakecpu", "device type 'cpu' is already taken"),
        ("duptoy", "toy", "entry point name 'toy' is already used"),
        ("noprims", "noprims", "no kernel for key Dense×noprims"),
        ("raising", "raising", "OSError: device lost"),
        ("wrongdtype", "wrongdtype", "returned a float64 tensor"),
    ],
)
def test_using_the_broken_device_names_the_plugin_and_cause(report, device, plugin, cause):
    use = report["uses"][device]
    assert "ok" not in use, f"{device}: expected an error, got {use}"
    expected_type = "NotImplementedError" if device == "noprims" else ("KernelError", "RuntimeError")
    assert use["type"] in expected_type
    assert f"'{plugin}'" in use["message"] and cause in use["message"]


def test_kernel_errors_name_op_backend_and_plugin(report):
    for device in ("raising", "wrongdtype"):
        message = report["uses"][device]["message"]
        assert message.startswith("prims::add: ")
        assert f"backend '{device}' from plugin '{device}'" in message
    assert "dtype float32" in report["uses"]["wrongdtype"]["message"]


@pytest.mark.parametrize(
    "key, state, cause",
    [
        ("brokenimp|broken_import", "failed", "ImportError"),
        ("halfreg|broken_register", "failed", "device firmware not found"),
        ("fakecpu|fake_cpu", "refused", "taken: plugin 'cpu' "),
        ("fakecpu|fake_cpu", "refused", "plugin 'fakecpu' may not declare it"),
        ("toy|dup_toy", "refused", "already used by plugin 'toy' (toy_backend, distribution toy-backend)"),
        ("noprims|no_prims", "available", "registers no prim kernels"),
    ],
)
def test_status_names_the_culprit_and_cause(report, key, state, cause):
    row = report["rows"][key]
    assert row["state"] == state
    assert cause in row["reason"]


def test_refused_plugins_are_not_imported_and_the_first_claimant_is_kept(report):
    assert report["dup_imported"] is False, "an entry point whose name is taken is never imported"
    assert report["rows"]["cpu|opweave_cpu"]["state"] == "available"
    assert report["rows"]["toy|toy_backend"]["state"] == "available"


def test_doctor_names_every_broken_plugin(doctor):
    out = doctor.stdout
    assert doctor.returncode == 1, out
    for name, cause in [
        ("brokenimp", "ImportError"),
        ("halfreg", "firmware"),
        ("fakecpu", "already taken"),
        ("toy", "DuplicateEntryPoint"),
        ("noprims", "registers no prim kernels"),
    ]:
        line = next((li for li in out.splitlines() if li.startswith(name + " ") and cause in li), None)
        assert line is not None, f"no status line for {name} with {cause!r}:\n{out}"
    assert "raising: FAILED (plugin raising_kernel)" in out and "OSError: device lost" in out
    assert "wrongdtype: FAILED (plugin wrong_dtype)" in out and "float64" in out
    assert "noprims: FAILED (plugin no_prims): NotImplementedError" in out and "plugin 'noprims'" in out
    assert "  cpu: ok" in out and "  toy: partial" in out, "a backend with a few prims is partial, not failed"


def test_a_clash_is_refused_whichever_plugin_loads_first(sites):
    out = run(
        sites,
        """
        import json
        import opweave as ow
        try:
            ow.empty(1, device="fakecpu")
            first = None
        except RuntimeError as exc:
            first = str(exc)
        print(json.dumps({"first": first, "cpu": repr(ow.ones(2) + 1)}))
        """,
    )
    assert "plugin 'fakecpu' (fake_cpu" in out["first"] and "was refused" in out["first"]
    assert out["cpu"] == "tensor([2., 2.])"


def test_device_module_of_a_broken_plugin_names_it(sites):
    out = run(
        sites,
        """
        import json
        import opweave as ow
        try:
            ow.halfreg
            error = None
        except AttributeError as exc:
            error = str(exc)
        print(json.dumps({"error": error, "hasattr": hasattr(ow, "brokenimp")}))
        """,
    )
    assert out["hasattr"] is False
    assert "'halfreg' (broken_register" in out["error"] and "device firmware not found" in out["error"]


def test_load_by_name_raises_for_a_broken_plugin_and_for_an_unknown_name(sites):
    out = run(
        sites,
        """
        import json
        import opweave as ow
        errors = {}
        for name in ("halfreg", "xpu"):
            try:
                ow.backends.load(name)
            except (RuntimeError, ValueError) as exc:
                errors[name] = [type(exc).__name__, str(exc)]
        print(json.dumps(errors))
        """,
        OPWEAVE_AUTOLOAD="0",
    )
    assert out["halfreg"][0] == "RuntimeError" and "device firmware not found" in out["halfreg"][1]
    assert out["xpu"][0] == "ValueError"
    assert "no plugin named 'xpu'" in out["xpu"][1] and "cpu" in out["xpu"][1] and "toy" in out["xpu"][1]
