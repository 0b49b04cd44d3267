"""opweave's conformance suite: tells a backend author, op by op, whether the backend is right.

Run it as ``opweave conformance --backend NAME`` (or ``python -m opweave_conformance``),
as a pytest plugin (``pytest -p opweave_conformance.plugin --opweave-backend NAME``),
or from Python::

    import opweave_conformance as conformance
    report = conformance.run("cpu", ops="add.*", profile="quick")
    print(report.table())

See ``docs/conformance.md``.
"""

from __future__ import annotations

from . import opdb
from .checks import CheckFailure, Context, NotImplementedKernel
from .opdb import Arr, ErrorInput, OpInfo, SampleInput
from .replay import replay
from .report import Report
from .runner import PROFILES, Config, Runner, run, select

__all__ = [
    "PROFILES",
    "Arr",
    "CheckFailure",
    "Config",
    "Context",
    "ErrorInput",
    "NotImplementedKernel",
    "OpInfo",
    "Report",
    "Runner",
    "SampleInput",
    "opdb",
    "replay",
    "run",
    "select",
]
