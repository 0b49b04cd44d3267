"""``opweave conformance``: run the suite on a backend from the command line.

Hooked into the ``opweave`` command through the entry point group
``opweave.commands`` (``conformance = "opweave_conformance.cli:register"``);
``python -m opweave_conformance`` runs the same command standalone.

Exit status: 0 when nothing failed (xfail, xpass, not-implemented and no-oracle
do not fail a run), 1 when something failed, 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys

HELP = "check a backend against the op database (values, meta, views, in-place/out=, errors, RNG)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's options."""
    parser.add_argument("--backend", required=True, help="device type to check (e.g. cpu, opencl, a vendor's)")
    parser.add_argument("--ops", help="comma-separated fnmatch patterns on op names, e.g. 'add.*,prims::*'")
    parser.add_argument("--profile", choices=["quick", "full"], default="quick", help="samples per op (default quick)")
    parser.add_argument("--report", metavar="FILE.json", help="write the JSON report here")
    parser.add_argument("--seed", type=int, default=0, help="base seed of the sample generators (default 0)")
    parser.add_argument("--replay", metavar="FILE.json", help="re-run the failures recorded in a JSON report")
    parser.add_argument("--list", action="store_true", help="list the selected ops and where their entries come from")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    parser.add_argument(
        "--gradients",
        metavar="N",
        help="gradient checks for N ops (a seeded choice among the selected ones), 'all', or 0 for none "
        "(default: the profile's, 48 in quick, all in full)",
    )
    parser.add_argument(
        "--distributed",
        metavar="N",
        type=int,
        help="run the multi-process section instead: the backend's c10d:: collectives on N ranks (MPI)",
    )


def register(subparsers):
    """Add the ``conformance`` subcommand to ``opweave``'s parser; return its handler."""
    parser = subparsers.add_parser("conformance", help=HELP, description=HELP)
    add_arguments(parser)
    return handle


class Progress:
    """A one-line progress display on stderr (a line every 10% when stderr is not a terminal)."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.last = -1

    def __call__(self, i: int, total: int, name: str | None) -> None:
        if name is None:
            if self.tty:
                self.stream.write("\r" + " " * 79 + "\r")
                self.stream.flush()
            return
        if self.tty:
            self.stream.write(f"\r[{i + 1:>5}/{total}] {name[:60]:<60}")
            self.stream.flush()
        else:
            tenth = (10 * i) // max(total, 1)
            if tenth != self.last:
                self.last = tenth
                print(f"[{i + 1}/{total}] {name}", file=self.stream, flush=True)


def handle(args) -> int:
    """Run the command for parsed ``args``."""
    from . import opdb
    from .replay import replay
    from .runner import Runner, select

    if args.distributed is not None:
        from .distributed import launch

        try:
            return launch(args.backend, args.distributed, args.seed)
        except (RuntimeError, ValueError) as exc:
            print(f"opweave conformance: {exc}", file=sys.stderr)
            return 2
    if args.list:
        for name in select(args.ops):
            info = opdb.get(name)
            print(f"{name:<50} {'missing' if info is None else info.source}")
        return 0
    if args.replay:
        results = replay(args.replay, backend=args.backend, ops=args.ops)
        for r in results:
            print(r)
        return 1 if any(r.reproduced for r in results) else 0
    try:
        gradients = _gradients_arg(args.gradients)
        runner = Runner(
            args.backend, args.ops, args.profile, args.seed, None if args.quiet else Progress(), None, gradients
        )
    except (RuntimeError, ValueError) as exc:
        print(f"opweave conformance: {exc}", file=sys.stderr)
        return 2
    if not runner.names:
        print(f"opweave conformance: no op matches {args.ops!r}", file=sys.stderr)
        return 2
    report = runner.run()
    print(report.table())
    if args.report:
        report.write_json(args.report)
        print(f"JSON report: {args.report}")
    return 0 if report.ok else 1


def _gradients_arg(value):
    if value is None:
        return "profile"
    if value == "all":
        return None
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"--gradients must be a number or 'all', got {value!r}") from None
    if n < 0:
        raise ValueError(f"--gradients must not be negative, got {n}")
    return n


def main(argv=None) -> int:
    """``python -m opweave_conformance``."""
    parser = argparse.ArgumentParser(prog="opweave conformance", description=HELP)
    add_arguments(parser)
    return handle(parser.parse_args(argv))
