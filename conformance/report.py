"""Results of a conformance run: per dtype, per op, per family; the terminal table and the JSON report.

Statuses of an op (worst first): ``fail``, ``xfail`` (failed, as the backend's
config or the op database expected, with the reason), ``not-implemented`` (the
backend has no kernel for something the op needs), ``xpass`` (expected to fail
but passed: remove the xfail), ``no-oracle`` (ran, matched the meta device and
the other semantic checks, but its values have no independent oracle), ``pass``
and ``skip`` (no dtype of the op runs on this backend). Independently of its
status, an op is marked "fallback" (``OpResult.fallback``: the prims it ran on the
CPU through the core's CPU fallback) when some of its work did not run on the backend.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field

from .checks import CheckFailure, NotImplementedKernel

STATUSES = ("pass", "no-oracle", "fail", "xfail", "xpass", "not-implemented", "skip")
_RANK = {s: i for i, s in enumerate(("fail", "xfail", "not-implemented", "xpass", "no-oracle", "pass", "skip"))}


@dataclass
class DtypeResult:
    """One op in one dtype: status, samples run, and the first failure (check, message, sample, details)."""

    dtype: str | None
    status: str
    seed: int = 0
    samples: int = 0
    check: str | None = None
    message: str | None = None
    details: dict = field(default_factory=dict)
    sample_index: object = None
    inputs: dict | None = None
    reason: str | None = None  # xfail reason
    notes: list = field(default_factory=list)  # remarks of passing checks (e.g. "raises in deterministic mode")

    def fail(self, check: str, message: str, **details) -> None:
        """Mark as failed."""
        self.status, self.check, self.message, self.details = "fail", check, message, details

    def record(self, exc, index, inputs) -> None:
        """Record the exception that stopped the checks of sample ``index`` (with its encoded inputs)."""
        self.sample_index, self.inputs = index, inputs
        if isinstance(exc, NotImplementedKernel):
            self.status, self.message = "not-implemented", str(exc)
        elif isinstance(exc, CheckFailure):
            self.fail(exc.check, exc.message, **exc.details)
        else:
            self.fail("harness", f"{type(exc).__name__}: {exc}")

    def finish(self, info, xfail: str | None) -> DtypeResult:
        """Apply "no oracle" and the expected-failure rules; return self."""
        if self.status == "pass" and not _has_oracle(info):
            self.status = "no-oracle"
        if xfail:
            if self.status == "fail":
                self.status, self.reason = "xfail", xfail
            elif self.status in ("pass", "no-oracle"):
                self.status, self.reason = "xpass", xfail
        return self

    def to_json(self) -> dict:
        """A JSON-able dict (only the fields that say something)."""
        out = {"dtype": self.dtype, "status": self.status, "seed": self.seed, "samples": self.samples}
        for key in ("check", "message", "reason", "sample_index", "inputs"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.details:
            out["details"] = self.details
        if self.notes:
            out["notes"] = self.notes
        return out


def _has_oracle(info) -> bool:
    base = info.functional or info
    return base.oracle is not None or base.random


@dataclass
class OpResult:
    """One op: its status over all dtypes, and the per-dtype results."""

    name: str
    family: str
    source: str
    variant: str | None
    status: str
    reason: str | None = None
    dtypes: list = field(default_factory=list)
    seconds: float = 0.0
    fallback: list = field(default_factory=list)  # prims that ran through the CPU fallback (see opweave._fallback)

    def aggregate(self) -> None:
        """The op's status: the worst of its dtypes' (``skip`` if none ran)."""
        ran = [d for d in self.dtypes if d.status != "skip"]
        if not ran:
            self.status, self.reason = "skip", "no dtype of this op runs on this backend"
            return
        worst = min(ran, key=lambda d: _RANK[d.status])
        self.status = worst.status
        if worst.status in ("xfail", "xpass"):
            self.reason = worst.reason
        elif worst.status == "not-implemented":
            missing = [d.dtype or "default" for d in ran if d.status == "not-implemented"]
            self.reason = f"{worst.message} (dtypes: {', '.join(missing)})"
        elif worst.status == "fail":
            self.reason = f"[{worst.dtype or 'default'}] {worst.check}: {worst.message}"

    @property
    def first_failure(self) -> DtypeResult | None:
        """The first failing dtype's result (xfails included)."""
        return next((d for d in self.dtypes if d.status in ("fail", "xfail")), None)

    def to_json(self) -> dict:
        """A JSON-able dict."""
        out = {
            "op": self.name,
            "family": self.family,
            "source": self.source,
            "status": self.status,
            "seconds": round(self.seconds, 4),
            "dtypes": [d.to_json() for d in self.dtypes],
        }
        if self.variant:
            out["variant"] = self.variant
        if self.fallback:
            out["fallback"] = self.fallback
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclass
class BackendCheck:
    """A backend-wide check (round trip, deterministic fill) for one dtype."""

    check: str
    dtype: str
    status: str
    message: str | None = None
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        """A JSON-able dict."""
        out = {"check": self.check, "dtype": self.dtype, "status": self.status}
        if self.message:
            out["message"] = self.message
        if self.details:
            out["details"] = self.details
        return out


@dataclass
class Report:
    """A whole run: backend, profile, seed, backend-wide checks and every op's result."""

    backend: str
    profile: str
    seed: int
    backend_checks: list
    ops: list
    seconds: float = 0.0
    gradients: list = field(default_factory=list)  # gradients.GradientResult per op checked

    def counts(self) -> Counter:
        """Ops per status."""
        return Counter(r.status for r in self.ops)

    def families(self) -> dict:
        """Family -> Counter of statuses, sorted by family."""
        out: dict = {}
        for r in self.ops:
            out.setdefault(r.family, Counter())[r.status] += 1
        return dict(sorted(out.items()))

    @property
    def failures(self) -> list:
        """The failed ops."""
        return [r for r in self.ops if r.status == "fail"]

    @property
    def failed_backend_checks(self) -> list:
        """The failed backend-wide checks."""
        return [c for c in self.backend_checks if c.status == "fail"]

    @property
    def failed_gradients(self) -> list:
        """The failed gradient checks."""
        return [g for g in self.gradients if g.status == "fail"]

    @property
    def ok(self) -> bool:
        """Whether nothing failed (xfail, xpass, not-implemented and no-oracle do not fail a run)."""
        return not self.failures and not self.failed_backend_checks and not self.failed_gradients

    def to_json(self) -> dict:
        """The JSON report."""
        import opweave

        return {
            "backend": self.backend,
            "profile": self.profile,
            "seed": self.seed,
            "opweave": opweave.__version__,
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "seconds": round(self.seconds, 2),
            "ok": self.ok,
            "summary": dict(self.counts()),
            "families": {k: dict(v) for k, v in self.families().items()},
            "fallback": sorted(r.name for r in self.ops if r.fallback),
            "backend_checks": [c.to_json() for c in self.backend_checks],
            "gradients": [g.to_json() for g in self.gradients],
            "ops": [r.to_json() for r in self.ops],
        }

    def write_json(self, path) -> None:
        """Write the JSON report to ``path``."""
        with open(path, "w") as f:
            json.dump(self.to_json(), f, indent=1)
            f.write("\n")

    def table(self) -> str:
        """The terminal table: one row per family, counts per status, totals; then failures and xpasses."""
        cols = ("pass", "no-oracle", "fail", "xfail", "xpass", "not-implemented", "skip")
        heads = ("pass", "no-orcl", "fail", "xfail", "xpass", "not-impl", "skip", "total")
        families = self.families()
        width = max([len("family"), len("TOTAL")] + [len(f) for f in families])
        lines = [f"{'family':<{width}}  " + "  ".join(f"{h:>8}" for h in heads)]
        lines.append("-" * len(lines[0]))
        for fam, c in families.items():
            lines.append(f"{fam:<{width}}  " + "  ".join(f"{c.get(s, 0):>8}" for s in cols) + f"  {sum(c.values()):>8}")
        total = self.counts()
        lines.append("-" * len(lines[0]))
        lines.append(
            f"{'TOTAL':<{width}}  " + "  ".join(f"{total.get(s, 0):>8}" for s in cols) + f"  {len(self.ops):>8}"
        )
        lines += self._backend_lines() + self._gradient_lines() + self._detail_lines()
        verdict = "PASSED" if self.ok else "FAILED"
        lines.append(
            f"\nconformance of '{self.backend}' ({self.profile}, seed {self.seed}): {verdict} in {self.seconds:.1f}s"
        )
        return "\n".join(lines)

    def _backend_lines(self) -> list:
        if not self.backend_checks:
            return []
        c = Counter(b.status for b in self.backend_checks)
        lines = [
            f"\nbackend checks: {c.get('pass', 0)} pass, {c.get('fail', 0)} fail, {c.get('not-implemented', 0)} n/i"
        ]
        for b in self.backend_checks:
            if b.status != "pass":
                lines.append(f"  {b.status.upper():<6} {b.check} [{b.dtype}]: {b.message}")
        return lines

    def _gradient_lines(self) -> list:
        if not self.gradients:
            return []
        c = Counter(g.status for g in self.gradients)
        checks = "/".join(sorted({g.check for g in self.gradients}))
        counts = ", ".join(f"{c[s]} {s}" for s in ("pass", "fail", "xfail", "xpass", "not-implemented", "skip") if c[s])
        lines = [f"\ngradients ({checks}, {len(self.gradients)} ops): {counts}"]
        for g in self.gradients:
            if g.status in ("fail", "xpass", "xfail"):
                why = g.reason if g.status != "fail" else g.message
                lines.append(f"  {g.status.upper():<6} {g.op} [{g.check}, {g.dtype or 'default'}]: {why}")
                for e in (g.details or {}).get("examples", [])[:3]:
                    lines.append(f"      at {e['index']}: got {e['actual']}, expected {e['expected']}")
        return lines

    def _detail_lines(self) -> list:
        lines = []
        for status, title in (("fail", "failures"), ("xpass", "unexpected passes (remove these xfails)")):
            rows = [r for r in self.ops if r.status == status]
            if rows:
                lines.append(f"\n{title}:")
                for r in rows:
                    lines.append(f"  {r.name}: {r.reason}")
                    if status == "fail" and r.first_failure is not None:
                        lines += evidence_lines(r.first_failure)
        fallback = [r for r in self.ops if r.fallback]
        if fallback:
            prims = Counter(p for r in fallback for p in r.fallback)
            lines.append(
                f"\nfallback: {len(fallback)} ops ran prims on the CPU (copies in and out); prims (ops affected):"
            )
            lines += [f"  {k}: cpu fallback ({n} ops)" for k, n in prims.most_common(20)]
            if len(prims) > 20:
                lines.append(f"  ... and {len(prims) - 20} more prims (the JSON report lists every op)")
        missing = [r for r in self.ops if r.status == "not-implemented"]
        if missing:
            kernels = Counter(_missing_kernel(r.reason) for r in missing)
            lines.append(f"\nnot implemented: {len(missing)} ops; missing kernels (ops affected):")
            lines += [f"  {k}: no kernel ({n} ops)" for k, n in kernels.most_common(20)]
        return lines


def evidence_lines(result: DtypeResult, indent: str = "      ") -> list[str]:
    """What a vendor needs to act on a failure: the sample, up to five mismatching elements, the tolerance,
    and the last frames of a raising kernel's traceback."""
    d = result.details or {}
    lines = []
    if result.sample_index is not None:
        desc = (result.inputs or {}).get("desc") or ""
        lines.append(f"{indent}sample {result.sample_index}" + (f" ({desc})" if desc else ""))
    if "mismatched" in d:
        if "ulps" in d:
            tol = f"tolerance {d['ulps']} ulp"
        elif "rtol" in d:
            tol = f"tolerance rtol={d['rtol']:g} atol={d['atol']:g}"
        else:
            tol = "bit for bit"
        lines.append(f"{indent}{d['mismatched']} of {d['total']} elements differ ({tol}):")
    for e in d.get("examples", [])[:5]:
        where = f"[{', '.join(str(i) for i in e.get('index', []))}]"
        if "expected" in e:
            extra = f" ({e['ulps']} ulp)" if "ulps" in e else ""
            lines.append(f"{indent}  {where}: expected {e['expected']}, actual {e['actual']}{extra}")
        else:
            lines.append(f"{indent}  {where}: run 1 {e.get('run 1')}, run 2 {e.get('run 2')}")
    if "reason" in d:
        lines.append(f"{indent}{d['reason']}")
    frames = d.get("traceback") or []
    if frames:
        lines.append(f"{indent}traceback (last frames):")
        lines += [f"{indent}  {f}" for f in frames]
    return lines


def _missing_kernel(reason: str | None) -> str:
    text = reason or ""
    return text.split(": no kernel", 1)[0] if ": no kernel" in text else text[:80]
