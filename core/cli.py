"""The ``opweave`` command: ``doctor``, ``ops``, and subcommands from the ``opweave.commands`` entry points."""

from __future__ import annotations

import argparse
import collections
import sys


def doctor(args) -> int:
    """List every backend and plugin with its state and reason, and run a small program on each available device.

    Exits 1 when a plugin failed to load or was refused, or a device failed its check.
    """
    import opweave
    from opweave import backends

    print(f"opweave {opweave.__version__}")
    if not backends.autoload_enabled():
        print(f"{backends.AUTOLOAD_VARIABLE}=0: plugins are not loaded automatically (opweave.backends.load('name'))")
    rows = backends.status()
    print(rows)
    failures = 0
    for row in rows:
        if row.state in ("failed", "refused"):
            failures += 1
        if not row.available or row.name == "meta" or row.kind != "device":
            continue
        try:
            checked = _smoke(opweave, row.name)
        except Exception as exc:  # report, keep checking the other devices
            failures += 1
            checked = f"FAILED (plugin {row.plugin}): {type(exc).__name__}: {exc}"
        print(f"  {row.name}: {checked}")
        paths = getattr(getattr(opweave, row.name, None), "kernel_paths", None)
        if callable(paths):  # a device module may say which kernel paths run (the cpu's: oneDNN or NumPy)
            print(f"  {row.name} kernels: {paths()}")
    meta = opweave.ops.matmul(opweave.empty(3, 4, device="meta"), opweave.empty(4, 5, device="meta"))
    print(f"  meta: matmul of [3, 4] and [4, 5] has shape {list(meta.shape)}")
    for record in backends.plugins():
        if record.error and record.traceback and getattr(args, "verbose", False):
            print(f"\nplugin {record.describe()}:\n{record.traceback}")
    if failures:
        print(f"{failures} problem(s) found" + ("" if getattr(args, "verbose", False) else " (tracebacks: -v)"))
    return 1 if failures else 0


def _smoke(opweave, device_type: str) -> str:
    """A small program, checked against NumPy: an addition, then a reduction, a matmul and softmax.

    A backend that runs the addition but lacks a kernel for the rest is reported as partial, not failed.
    """
    import numpy as np

    a_np = np.arange(12, dtype=np.float32).reshape(3, 4) / 7
    b_np = np.linspace(-1, 1, 20, dtype=np.float32).reshape(4, 5)
    a = opweave.tensor(a_np, device=device_type)
    total = (a + a).cpu().numpy()
    if not np.array_equal(total, a_np + a_np):
        raise AssertionError(f"wrong result of a + a: {total} != {a_np + a_np}")
    b = opweave.tensor(b_np, device=device_type)
    try:
        c = opweave.softmax(a @ b + 1.5, dim=-1).sum(dim=0)
    except NotImplementedError as exc:
        return f"partial (a + a is right; softmax(a @ b + 1.5).sum(0): {exc})"
    logits = a_np @ b_np + 1.5
    expected = (np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).sum(0)
    got = c.cpu().numpy()
    if not np.allclose(got, expected, rtol=1e-5, atol=1e-6):
        raise AssertionError(f"wrong result: {got} != {expected}")
    return f"ok (softmax(a @ b + 1.5).sum(0) = {[round(float(x), 4) for x in got]})"


def ops_command(args) -> int:
    """Print the operator catalog with counts."""
    import opweave

    ops = opweave.ops.catalog(kind=args.kind, tag=args.tag)
    for op in ops:
        tags = ",".join(sorted(op.tags))
        print(f"{op.kind:<9} {str(op.schema)}  [{tags}]")
    kinds = collections.Counter(op.kind for op in ops)
    functional = sum(1 for op in ops if op.kind == "canonical" and op.variant is None)
    generated = sum(1 for op in ops if op.variant is not None)
    print(
        f"\n{len(ops)} overloads: {kinds.get('prim', 0)} prims, {kinds.get('canonical', 0)} canonical "
        f"({functional} functional, {generated} generated in-place/out= variants)"
    )
    return 0


def main(argv=None) -> int:
    """Entry point of the ``opweave`` command."""
    parser = argparse.ArgumentParser(prog="opweave", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    doctor_parser = sub.add_parser("doctor", help="list backends and run a small program on each available device")
    doctor_parser.add_argument("-v", "--verbose", action="store_true", help="print the tracebacks of broken plugins")
    ops = sub.add_parser("ops", help="list operators")
    ops.add_argument("--kind", choices=["prim", "canonical"])
    ops.add_argument("--tag")
    handlers = {"doctor": doctor, "ops": ops_command}
    handlers.update(_plugin_commands(sub))
    args = parser.parse_args(argv)
    return handlers[args.command](args)


def _plugin_commands(subparsers) -> dict:
    """Subcommands from the entry point group ``opweave.commands`` (e.g. ``conformance``).

    Each entry point is a function ``register(subparsers)`` that adds its parser and
    returns the handler ``handler(args) -> int``. A broken one is reported, not fatal.
    """
    import importlib.metadata

    handlers = {}
    for ep in importlib.metadata.entry_points(group="opweave.commands"):
        try:
            handlers[ep.name] = ep.load()(subparsers)
        except Exception as exc:  # isolation, as for backend plugins
            print(f"opweave: command '{ep.name}' is unavailable: {type(exc).__name__}: {exc}", file=sys.stderr)
    return handlers


if __name__ == "__main__":
    sys.exit(main())
