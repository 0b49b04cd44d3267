"""Run the conformance suite: every selected op × dtype on one backend, with deterministic seeds.

:class:`Runner` selects ops (fnmatch patterns on qualified names), asks the
backend's plugin for its expectations (the ``opweave_conformance_config`` hook),
runs each op's samples through :mod:`.checks`, and returns a :class:`~.report.Report`.
A run is replayable: the samples of (op, dtype) come from
``numpy.random.default_rng(seed_for(seed, op, dtype))``, and the first failing
sample of each op is recorded with its seed, index and inputs. The full profile
then searches with Hypothesis (:mod:`.strategies`, seeded with the same seed); a
failure it finds is recorded with ``sample_index`` ``"hypothesis"`` and its inputs.
"""

from __future__ import annotations

import fnmatch
import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import opweave as ow
from opweave import dispatch as ow_dispatch

from . import checks, opdb, probes
from .checks import CheckFailure, Context, NotImplementedKernel
from .opdb._core import ALL, OpInfo, seed_for, take
from .report import BackendCheck, DtypeResult, OpResult, Report
from .tensors import encode_sample

#: Samples per (op, dtype): hand-written entries / generated (schema-driven) entries, and the number of
#: examples the Hypothesis search (:mod:`.strategies`) tries per hand-written functional op and dtype.
#: ``gradients``: how many ops (a seeded choice) get a gradient check (:mod:`.gradients`); None: every one.
#: ``double_gradients``: whether a backend with float64 also runs gradcheck (finite differences) on the device.
PROFILES = {
    "quick": {"samples": 5, "generated": 1, "search": 0, "gradients": 48, "double_gradients": False},
    "full": {"samples": 16, "generated": 3, "search": 8, "gradients": None, "double_gradients": True},
}
#: The extra checks: "rerun" runs every functional sample twice (bits compared), the others are the
#: probe kinds of :mod:`.probes` the runner adds after each functional op's samples.
PROBES = (
    "rerun",
    "limits",
    "precision",
    "specials",
    "signed-zeros",
    "nonfinite",
    "negative-index",
    "determinism",
    "index-errors",
)
#: The dtypes the search runs in (one per category: layouts, shapes and special values are what it varies).
SEARCH_DTYPES = frozenset({"bool", "int64", "float16", "float32", "complex64"})


@dataclass
class Config:
    """A backend's expectations (from its ``opweave_conformance_config`` hook)."""

    tolerances: dict = field(default_factory=dict)  # dtype name -> (rtol, atol)
    xfail: dict = field(default_factory=dict)  # op pattern -> reason, or {"reason": str, "dtypes": [names]}
    skip_dtypes: frozenset = frozenset()

    @classmethod
    def from_hook(cls, backend: str) -> Config:
        """The config the backend's plugin returns (defaults if it implements no hook)."""
        ow.backends.get(backend)  # load the plugin so that its hook implementation is registered
        ow.backends.load()  # and feature plugins (a quantized engine) that state expectations for this backend
        raw = ow.backends.plugin_manager().hook.opweave_conformance_config(backend=backend) or {}
        return cls.from_dict(raw)

    @classmethod
    def from_dict(cls, raw: dict) -> Config:
        """Validate and normalise a config dict."""
        unknown = set(raw) - {"tolerances", "xfail", "skip_dtypes"}
        if unknown:
            raise ValueError(f"opweave_conformance_config: unknown keys {sorted(unknown)}")
        tolerances = {str(k): (float(v[0]), float(v[1])) for k, v in raw.get("tolerances", {}).items()}
        return cls(tolerances, dict(raw.get("xfail", {})), frozenset(raw.get("skip_dtypes", ())))

    def xfail_reason(self, op: str, dtype) -> str | None:
        """Why ``op`` is expected to fail for ``dtype`` (None if it is not)."""
        for pattern, value in self.xfail.items():
            if not fnmatch.fnmatchcase(op, pattern):
                continue
            if isinstance(value, dict):
                dtypes = value.get("dtypes")
                if dtypes is None or (dtype is not None and dtype.name in dtypes):
                    return value.get("reason", "expected to fail")
                continue
            return str(value)
        return None


def select(patterns=None) -> list[str]:
    """Catalog op names matching any of ``patterns`` (a comma-separated string or a list; None: all)."""
    names = opdb.names()
    if not patterns:
        return names
    if isinstance(patterns, str):
        patterns = [p.strip() for p in patterns.split(",") if p.strip()]
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


class Runner:
    """Runs the suite on ``backend`` (a device type) for the ops matching ``ops``.

    ``profile`` is "quick" or "full"; ``seed`` the base seed; ``progress(i, total, name)``
    is called before each op; ``config`` overrides the backend's hook.
    """

    def __init__(
        self,
        backend: str,
        ops=None,
        profile: str = "quick",
        seed: int = 0,
        progress=None,
        config=None,
        gradients: int | None | str = "profile",
    ):
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; expected one of {sorted(PROFILES)}")
        self.backend = backend
        self.backend_obj = ow.backends.get(backend)
        if not self.backend_obj.is_available():
            raise RuntimeError(f"backend '{backend}' is not available: {self.backend_obj.unavailable_reason()}")
        self.config = config if config is not None else Config.from_hook(backend)
        self.profile = profile
        self.seed = int(seed)
        self.progress: Callable | None = progress
        self.names = select(ops)
        self.gradients = PROFILES[profile]["gradients"] if gradients == "profile" else gradients
        stats = getattr(self.backend_obj, "memory_stats", None)
        memory = (lambda: stats(ow.device(backend))) if callable(stats) else None
        self.ctx = Context(backend, self.config.tolerances, memory)
        self._deterministic_checked: set = set()

    # -- dtypes ---------------------------------------------------------------------------------

    def dtypes_for(self, info: OpInfo) -> list:
        """The dtypes to run ``info`` in on this backend (None: the samples' own dtypes)."""
        supported = self.backend_obj.dtypes
        out = []
        for d in info.dtypes:
            if d is not None and (d.name in self.config.skip_dtypes or (supported is not None and d not in supported)):
                continue
            out.append(d)
        return out

    def _skipped(self, sample) -> bool:
        """Whether ``sample`` has a tensor, or asks for a result, in a dtype this backend skips or lacks."""
        supported = self.backend_obj.dtypes
        targets = [v for v in list(sample.args) + list(sample.kwargs.values()) if isinstance(v, ow.dtype)]
        for dtype in [a.dtype for a in sample.arrs()] + targets:
            if dtype.name in self.config.skip_dtypes or (supported is not None and dtype not in supported):
                return True
        return False

    # -- one op ------------------------------------------------------------------------------------

    def run_op(self, name: str) -> OpResult:
        """Run every check of the op named ``name`` and return its result."""
        start = time.perf_counter()
        info = opdb.get(name)
        op = ow.ops.lookup(name)
        family = opdb.family_of(op)
        if info is None:
            result = OpResult(name, family, "missing", op.variant, "fail", "no OpInfo and no generated sample")
            result.seconds = time.perf_counter() - start
            return result
        dtypes = self.dtypes_for(info)
        before = ow_dispatch.cpu_fallback_calls()
        results = [self._run_dtype(info, d) for d in dtypes]
        result = OpResult(name, info.family or family, info.source, info.variant, "skip", None, results)
        result.fallback = sorted(p for p, n in ow_dispatch.cpu_fallback_calls().items() if n > before.get(p, 0))
        result.aggregate()
        result.seconds = time.perf_counter() - start
        return result

    def _samples(self, info: OpInfo, dtype, rng) -> list:
        budget = PROFILES[self.profile]["generated" if info.source == "generated" else "samples"]
        return take(info.sample_inputs(rng, dtype, self.backend), budget)

    def _run_dtype(self, info: OpInfo, dtype) -> DtypeResult:
        label = dtype.name if dtype is not None else None
        seed = seed_for(self.seed, info.name, label)
        result = DtypeResult(label, "pass", seed=seed)
        xfail = info.known_failure_for(dtype) or self.config.xfail_reason(info.name, dtype)
        rng = np.random.default_rng(seed)
        try:
            samples = self._samples(info, dtype, rng)
        except Exception as exc:  # a broken generator is a failure of the suite, reported as such
            result.fail("harness", f"sample generation failed: {type(exc).__name__}: {exc}")
            return result.finish(info, xfail)
        for index, sample in enumerate(samples):
            if self._skipped(sample):
                continue
            outcome = self.run_sample(info, dtype, sample, index, result.notes)
            result.samples += 1
            if outcome is not None:
                result.record(outcome, index, encode_sample(sample))
                return result.finish(info, xfail)
        found = self._search(info, dtype, seed)
        if found is not None:
            sample, outcome = found
            result.samples += 1
            result.record(outcome, "hypothesis", encode_sample(sample))
            return result.finish(info, xfail)
        if info.variant is None:
            probe_rng = np.random.default_rng(seed_for(self.seed, info.name, label, "probes"))
            outcome = self._run_probes(info, dtype, samples, probe_rng, result)
            if outcome is None:
                outcome = self._run_errors(info, dtype, rng, samples, probe_rng)
            if outcome is not None:
                result.record(outcome[0], outcome[1], outcome[2])
        if not result.samples and result.status == "pass":
            result.status = "skip"
            result.message = "no sample runs on this backend's dtypes"
        return result.finish(info, xfail)

    def _search(self, info: OpInfo, dtype, seed: int):
        """The profile's Hypothesis search: ``(sample, failure)`` of the minimal failing sample, or None."""
        budget = PROFILES[self.profile].get("search", 0)
        if not budget or info.variant is not None or info.source != "opdb" or info.random or info.values_undefined:
            return None
        if dtype is not None and dtype.name not in SEARCH_DTYPES:
            return None
        from . import strategies

        def run(sample):
            return None if self._skipped(sample) else self.run_sample(info, dtype, sample, 1)

        return strategies.search(run, info, dtype, self.backend, budget, seed)

    def run_sample(self, info: OpInfo, dtype, sample, index: int, notes: list | None = None):
        """None if every check passes, else the exception that stopped them (``notes`` collects remarks)."""
        before = checks.allocated(self.ctx)
        try:
            if info.variant == "inplace":
                checks.check_inplace(self.ctx, info, sample)
            elif info.variant == "out":
                checks.check_out(self.ctx, info, sample, resize=index == 0)
            else:
                first = index == 0 and info.name not in self._deterministic_checked
                if first:
                    self._deterministic_checked.add(info.name)
                rerun = "rerun" in PROBES and (index == 0 or probes.accumulates(info))
                remarks = checks.check_functional(self.ctx, info, sample, first=first, rerun=rerun)
                if notes is not None:
                    notes.extend(remarks)
            checks.check_allocator(self.ctx, before)
        except (CheckFailure, NotImplementedKernel) as exc:
            return exc
        except Exception as exc:  # an oracle or harness error: still a failure, with the cause
            return CheckFailure("harness", f"{type(exc).__name__}: {exc}", traceback=checks.last_frames(exc))
        return None

    def _run_probes(self, info: OpInfo, dtype, samples: list, rng, result: DtypeResult):
        """The edge-case probes of :mod:`.probes`: ``(failure, label, inputs)`` of the first that fails, or None."""
        valued = [("limits", probes.limit_samples), ("precision", probes.precision_samples)]
        valued.append(("specials", probes.special_samples))
        valued.append(("signed-zeros", probes.signed_zero_samples))
        valued.append(("nonfinite", probes.nonfinite_samples))
        valued.append(("negative-index", probes.negative_index_samples))
        valued = [(k, m) for k, m in valued if k in PROBES]
        for kind, make in valued:
            for i, sample in enumerate(make(info, dtype, samples, rng)):
                if self._skipped(sample):
                    continue
                outcome = self.run_sample(info, dtype, sample, f"{kind}-{i}", result.notes)
                result.samples += 1
                if isinstance(outcome, CheckFailure) and outcome.check == "sample":
                    continue  # the reference backend rejects these values too: outside the op's domain
                if outcome is not None:
                    return outcome, f"{kind}-{i}", encode_sample(sample)
        wide = probes.determinism_samples(info, dtype, samples, rng) if "determinism" in PROBES else []
        for i, sample in enumerate(wide):
            if self._skipped(sample):
                continue
            before = checks.allocated(self.ctx)
            try:
                result.notes.extend(checks.check_determinism_probe(self.ctx, info, sample))
                checks.check_allocator(self.ctx, before)
            except (CheckFailure, NotImplementedKernel) as exc:
                return exc, f"determinism-{i}", encode_sample(sample)
            except Exception as exc:
                failure = CheckFailure("harness", f"{type(exc).__name__}: {exc}", traceback=checks.last_frames(exc))
                return failure, f"determinism-{i}", encode_sample(sample)
            result.samples += 1
        return None

    def _run_errors(self, info: OpInfo, dtype, rng, samples=(), probe_rng=None):
        declared = list(info.error_inputs(rng, dtype) or ()) if info.error_inputs is not None else []
        if probe_rng is not None and "index-errors" in PROBES:
            declared += probes.index_error_inputs(info, dtype, list(samples), probe_rng)
        for index, err in enumerate(declared):
            if self._skipped(err.sample):
                continue
            try:
                checks.check_error_input(self.ctx, info, err)
            except (CheckFailure, NotImplementedKernel) as exc:
                return exc, f"error-{index}", {**encode_sample(err.sample), "expected_error": err.error.__name__}
            except Exception as exc:
                return CheckFailure("harness", f"{type(exc).__name__}: {exc}"), f"error-{index}", None
        return None

    # -- backend-wide checks ---------------------------------------------------------------------

    def backend_checks(self) -> list[BackendCheck]:
        """Round trip of every dtype, and deterministic mode's filling of ``empty``."""
        out = []
        supported = self.backend_obj.dtypes
        for dtype in ALL:
            if dtype.name in self.config.skip_dtypes or (supported is not None and dtype not in supported):
                continue
            rng = np.random.default_rng(seed_for(self.seed, "round-trip", dtype.name))
            out.append(
                self._backend_check("round-trip", dtype, lambda d=dtype, r=rng: checks.check_round_trip(self.ctx, d, r))
            )
            if hasattr(ow, "use_deterministic_algorithms"):
                out.append(
                    self._backend_check(
                        "deterministic-fill", dtype, lambda d=dtype: checks.check_deterministic_fill(self.ctx, d)
                    )
                )
        return out

    def _backend_check(self, name, dtype, fn) -> BackendCheck:
        try:
            fn()
        except NotImplementedKernel as exc:
            return BackendCheck(name, dtype.name, "not-implemented", str(exc))
        except CheckFailure as exc:
            return BackendCheck(name, dtype.name, "fail", exc.message, exc.details)
        except Exception as exc:
            return BackendCheck(name, dtype.name, "fail", f"{type(exc).__name__}: {exc}")
        return BackendCheck(name, dtype.name, "pass")

    # -- gradients -------------------------------------------------------------------------------

    def gradient_checks(self) -> list:
        """The gradient checks of :mod:`.gradients` for ``self.gradients`` of the selected ops (0: none)."""
        if self.gradients == 0:
            return []
        from . import gradients

        supported = self.backend_obj.dtypes
        double = PROFILES[self.profile]["double_gradients"] and (supported is None or ow.float64 in supported)
        double = double and "float64" not in self.config.skip_dtypes
        with ow.autograd.enable_grad():
            return gradients.run_checks(self.ctx, self.names, self.gradients, self.seed, double, self.config)

    # -- everything --------------------------------------------------------------------------------

    def run(self, backend_checks: bool = True) -> Report:
        """Run the backend-wide checks and every selected op; return the report."""
        start = time.perf_counter()
        report = Report(self.backend, self.profile, self.seed, [], [])
        if backend_checks:
            report.backend_checks = self.backend_checks()
        try:
            for i, name in enumerate(self.names):
                if self.progress is not None:
                    self.progress(i, len(self.names), name)
                _freeze_survivors()
                report.ops.append(self.run_op(name))
        finally:
            gc.unfreeze()  # the frozen objects are collectable again once the run is over
        if self.progress is not None:
            self.progress(len(self.names), len(self.names), None)
        report.gradients = self.gradient_checks()
        report.seconds = time.perf_counter() - start
        return report


def run(
    backend: str, ops=None, profile: str = "quick", seed: int = 0, progress=None, config=None, gradients="profile"
) -> Report:
    """Run the suite on ``backend`` and return the :class:`~.report.Report` (see :class:`Runner`)."""
    return Runner(backend, ops, profile, seed, progress, config, gradients).run()


def _freeze_survivors() -> None:
    """Collect, then move what survives (the op catalog, plugins, caches) out of later collections.

    The allocator check collects garbage after a sample that left device memory behind; without
    this, each such collection would scan every object of the process again.
    """
    gc.collect()
    gc.freeze()
