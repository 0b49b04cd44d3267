"""The conformance suite as a pytest plugin: one test item per op, the same checks as the CLI.

Usage::

    pytest -p opweave_conformance.plugin --opweave-backend NAME [--opweave-ops PATTERN]
           [--opweave-profile quick|full] [--opweave-seed N] [--opweave-report FILE.json] [--opweave-only]

Items are named ``opweave-conformance[NAME]::<op>`` (``prims::add`` becomes
``prims.add``), so ``-k`` selects ops too. A failing op fails its item with the
check, the dtype, the message and the replayable sample; an xfail from the
backend's config is an xfail; "not implemented" and "skip" are skips; "no
oracle" passes (its checks ran) and is counted separately in the summary table
printed at the end, with the xpasses. ``--opweave-only`` collects nothing else
(no test files), for running the suite from a vendor's repository.
"""

from __future__ import annotations

import json

import pytest

from .report import Report


def pytest_addoption(parser):
    """The plugin's options."""
    group = parser.getgroup("opweave-conformance", "opweave conformance suite")
    group.addoption("--opweave-backend", default=None, help="device type to check; no conformance items without it")
    group.addoption("--opweave-ops", default=None, help="comma-separated fnmatch patterns on op names")
    group.addoption("--opweave-profile", default="quick", choices=["quick", "full"], help="samples per op")
    group.addoption("--opweave-seed", type=int, default=0, help="base seed of the sample generators")
    group.addoption("--opweave-report", default=None, help="write the JSON report to this file")
    group.addoption("--opweave-only", action="store_true", help="collect only the conformance items")


def pytest_configure(config):
    """Activate the suite when ``--opweave-backend`` is given."""
    backend = config.getoption("opweave_backend")
    if backend:
        config.pluginmanager.register(ConformanceSession(config, backend), "opweave-conformance-session")


class ConformanceFailure(Exception):
    """An op failed its checks (carries the :class:`~.report.OpResult`)."""

    def __init__(self, result):
        super().__init__(result.reason)
        self.result = result


class ConformanceCollector(pytest.Collector):
    """The parent node of the conformance items."""

    def collect(self):
        return []


class ConformanceItem(pytest.Item):
    """One op of the catalog checked on the backend."""

    def __init__(self, *, op: str, state, **kwargs):
        super().__init__(**kwargs)
        self.op = op
        self.state = state

    def runtest(self):
        result = self.state.runner.run_op(self.op)
        self.state.results.append(result)
        self.user_properties.append(("conformance", result.status))
        if result.status == "fail":
            raise ConformanceFailure(result)
        if result.status == "xfail":
            pytest.xfail(result.reason or "expected to fail")
        if result.status in ("not-implemented", "skip"):
            pytest.skip(f"{result.status}: {result.reason}")

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, ConformanceFailure):
            return format_failure(excinfo.value.result)
        return super().repr_failure(excinfo, style)

    def reportinfo(self):
        return self.path, None, f"conformance of {self.state.backend}: {self.op}"


def format_failure(result) -> str:
    """A failing op's first failure: dtype, check, message, evidence and the replayable sample."""
    d = result.first_failure
    lines = [f"{result.name} on the backend: {result.reason}"]
    if d is not None:
        lines.append(f"dtype {d.dtype or 'default'}, sample {d.sample_index}, seed {d.seed}")
        if d.details:
            lines.append("details: " + json.dumps(d.details)[:2000])
        if d.inputs:
            lines.append("inputs: " + json.dumps(d.inputs)[:2000])
    return "\n".join(lines)


class ConformanceSession:
    """Per-session state: the runner, the items, and the results for the summary."""

    def __init__(self, config, backend: str):
        self.config = config
        self.backend = backend
        self.results = []
        self._runner = None

    @property
    def runner(self):
        """The :class:`~.runner.Runner` (created on first use)."""
        if self._runner is None:
            from .runner import Runner

            cfg = self.config
            self._runner = Runner(
                self.backend,
                cfg.getoption("opweave_ops"),
                cfg.getoption("opweave_profile"),
                cfg.getoption("opweave_seed"),
            )
        return self._runner

    def pytest_ignore_collect(self, collection_path, config):
        """With ``--opweave-only``, no test files are collected."""
        return True if config.getoption("opweave_only") else None

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session, config, items):
        """Add one item per selected op (before ``-k``/``-m`` deselection runs)."""
        parent = ConformanceCollector.from_parent(session, name=f"opweave-conformance[{self.backend}]")
        for op in self.runner.names:
            items.append(ConformanceItem.from_parent(parent, name=op.replace("::", "."), op=op, state=self))

    def pytest_terminal_summary(self, terminalreporter):
        """The per-family table (and the JSON report when asked for)."""
        if not self.results:
            return
        report = Report(self.backend, self.runner.profile, self.runner.seed, [], list(self.results))
        report.seconds = sum(r.seconds for r in self.results)
        terminalreporter.section("opweave conformance")
        terminalreporter.write_line(report.table())
        path = self.config.getoption("opweave_report")
        if path:
            report.write_json(path)
            terminalreporter.write_line(f"JSON report: {path}")
