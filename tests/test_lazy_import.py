"""``import opweave`` stays light: what it must not import, and what still works lazily.

Each check runs in a fresh interpreter (the test process has imported everything long ago).
The checks are structural (which modules are in ``sys.modules``); the time itself is measured
by ``bench/import_time.py``, never asserted.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

# Modules that ``import opweave`` must leave for their first use.
NOT_AT_IMPORT = [
    "opweave.nn",
    "opweave.nn.functional",
    "opweave.optim",
    "opweave.profiler",
    "opweave.linalg",
    "opweave.fft",
    "opweave.special",
    "opweave.signal",
    "opweave.masked",
    "opweave.utils",
    "opweave.serialization",
    "opweave.safetensors",
    "opweave.distributed",
    "opweave.quantization.observers",
    "opweave.quantization._flow",
    "opweave_cpu",
    "opweave_opencl",
    "opweave_x86quant",
    "opweave_vendor_example",
    "scipy",
    "pyopencl",
    "mpi4py",
    "importlib.metadata",
]


def run(code: str, **env: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object on its last line."""
    environment = dict(os.environ, **env)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=environment, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_import_leaves_heavy_modules_and_plugins_unimported():
    out = run(
        """
        import json, sys
        import opweave
        print(json.dumps(sorted(sys.modules)))
        """
    )
    imported = set(out)
    assert "opweave" in imported
    assert [m for m in NOT_AT_IMPORT if m in imported] == []


def test_entry_points_are_generated_on_first_call():
    out = run(
        """
        import json
        import opweave
        from opweave._ops import catalog
        before = sum(1 for op in catalog() if "_entry" in vars(op))
        op = opweave.ops.atan2.default
        had = "_entry" in vars(op)
        x = opweave.tensor([1.0, -2.0]).atan2(opweave.tensor([3.0, 4.0]))
        print(json.dumps({"before": before, "total": len(catalog()), "had": had, "has": "_entry" in vars(op),
                          "values": x.tolist()}))
        """
    )
    assert out["before"] < out["total"] // 10  # only the Python operators' ops (+, *, ==, ...) are built eagerly
    assert not out["had"] and out["has"]
    expected = [float(v) for v in __import__("numpy").arctan2([1.0, -2.0], [3.0, 4.0])]
    assert out["values"] == pytest.approx(expected, rel=1e-6)


def test_lazy_submodules_load_on_first_use_and_are_listed():
    out = run(
        """
        import json, sys
        import opweave
        names = dir(opweave)
        listed = all(n in names for n in ("nn", "optim", "profiler", "linalg", "fft", "save", "load", "__version__"))
        from opweave import nn
        import opweave.optim as optim
        same = nn is opweave.nn and optim is opweave.optim and nn is sys.modules["opweave.nn"]
        linear = nn.Linear(3, 2)
        sgd = optim.SGD(linear.parameters(), lr=0.1)
        print(json.dumps({
            "listed": listed,
            "same": same,
            "save": opweave.save.__module__,
            "observer": opweave.quantization.MinMaxObserver.__name__,
            "linalg": type(opweave.linalg.norm).__name__,
            "version": isinstance(opweave.__version__, str),
            "sgd": type(sgd).__name__,
        }))
        """
    )
    assert out == {
        "listed": True,
        "same": True,
        "save": "opweave.serialization",
        "observer": "MinMaxObserver",
        "linalg": "OpPacket",
        "version": True,
        "sgd": "SGD",
    }


def test_unknown_attribute_still_raises_attribute_error():
    out = run(
        """
        import json
        import opweave
        try:
            opweave.no_such_thing
        except AttributeError as exc:
            print(json.dumps({"error": str(exc), "hasattr": hasattr(opweave, "no_such_thing")}))
        """
    )
    assert "no_such_thing" in out["error"] and out["hasattr"] is False


def test_cpu_plugin_loads_at_the_first_op_that_needs_it():
    out = run(
        """
        import json, sys
        import opweave
        before = "opweave_cpu" in sys.modules
        meta = opweave.ones(2, device="meta") + 1
        after_meta = "opweave_cpu" in sys.modules
        value = (opweave.ones(2) * 3).tolist()
        print(json.dumps({"before": before, "after_meta": after_meta, "after": "opweave_cpu" in sys.modules,
                          "value": value, "meta": list(meta.shape)}))
        """
    )
    assert out == {"before": False, "after_meta": False, "after": True, "value": [3.0, 3.0], "meta": [2]}


def test_status_lists_every_plugin_without_loading_them():
    out = run(
        """
        import json, sys
        import opweave
        rows = {row.name: row.state for row in opweave.backends.status(load_all=False)}
        print(json.dumps({"rows": rows, "cpu_imported": "opweave_cpu" in sys.modules}))
        """
    )
    assert out["rows"]["cpu"] == "not loaded" and out["rows"]["opencl"] == "not loaded"
    assert out["rows"]["meta"] == "available"
    assert out["cpu_imported"] is False


def test_threads_racing_to_the_first_op_see_every_plugin_once():
    out = run(
        """
        import json, threading
        import opweave
        from opweave import backends

        results, errors = [], []

        def work():
            try:
                value = (opweave.ones(2) + 1).tolist()
                names = [r.name for r in backends.plugins()]
                results.append((value, sorted(names)))
            except Exception as exc:
                errors.append(repr(exc))

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(json.dumps({"errors": errors, "results": results}))
        """
    )
    assert out["errors"] == []
    assert len(out["results"]) == 8
    values = {tuple(v) for v, _ in out["results"]}
    plugin_lists = {tuple(names) for _, names in out["results"]}
    assert values == {(2.0, 2.0)}
    assert len(plugin_lists) == 1  # every thread saw the same, complete list
    [names] = plugin_lists
    assert "cpu" in names
