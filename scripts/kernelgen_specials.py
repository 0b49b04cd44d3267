"""Run every generated elementwise prim on special values and compare with the CPU backend.

For each elementwise prim the kernel generator emits (``kernels.elementwise``,
``kernels.elementwise_extra``, ``kernels.special``: unary, binary and ternary), the inputs
are the special values below (every pair for binary prims, every triple for ternary
ones), in float32 and float64 (float16 where the device's dialect computes it). Each
target runs them:

- ``opencl``: the OpenCL backend (PoCL);
- ``ccpu``: the generator's C dialect (``examples/compiler_backend``), if installed;
- ``cpu-c``: the CPU backend with the compiled C kernels forced on (``set_kernel_path("c")``).

and the result is compared element by element with the CPU backend's NumPy kernels
(``set_kernel_path("numpy")``): nan-ness, and the sign of zeros and infinities,
exactly; other values within ``--ulps`` units in the last place. One line per prim
with mismatches, then a few of them (inputs, expected, actual)::

    python scripts/kernelgen_specials.py [--targets opencl,ccpu,cpu-c] [--ops sign,clamp] [--ulps 4]

Needs no torch.
"""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
import opweave

SPECIALS = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 0.75]
SUBNORMAL = {"float16": np.float16(2**-24), "float32": np.float32(2**-149), "float64": np.float64(5e-324)}
BIG = {d: np.finfo(d).max for d in ("float16", "float32", "float64")}
_INT = {"float16": np.int16, "float32": np.int32, "float64": np.int64}
SKIP = {"polygamma", "mvlgamma"}  # integer arguments, not elementwise over tensors of one dtype


def values(dtype: str) -> np.ndarray:
    """The special values of ``dtype``: nan, -nan, ±inf, ±0, ±1, smallest subnormal, largest finite, ordinary ones."""
    t = np.dtype(dtype)
    vals = [t.type(v) for v in SPECIALS] + [SUBNORMAL[dtype], -SUBNORMAL[dtype], BIG[dtype], -BIG[dtype]]
    out = np.array(vals, dtype=t)
    bits = out.view(_INT[dtype])
    bits[1] = bits[0] ^ np.array(1, _INT[dtype]) << (8 * t.itemsize - 1)  # -nan: nan with the sign bit set
    return out


def prims() -> dict:
    """prim name -> arity, for every elementwise prim of the generator's tables."""
    from opweave_kernelgen.kernels import elementwise, elementwise_extra, special

    out = {n: 1 for n in elementwise.UNARY} | {n: 2 for n in elementwise.BINARY}
    out |= {n: spec[0] for n, spec in elementwise_extra.OPS.items()}
    out |= {n: 1 for n in special.UNARY} | {n: 2 for n in special.BINARY}
    return {n: a for n, a in sorted(out.items()) if n not in SKIP}


def inputs(dtype: str, arity: int) -> list:
    """Every ``arity``-tuple of the special values, as ``arity`` flat arrays."""
    v = values(dtype)
    idx = np.array(list(itertools.product(range(len(v)), repeat=arity)), dtype=np.int64)
    return [v[idx[:, i]] for i in range(arity)]


def run(name: str, arrays: list, target: str):
    """``prims::name`` over ``arrays`` on ``target``, as a NumPy array (or the exception raised)."""
    op = opweave.ops.lookup(f"prims::{name}")
    device = "cpu" if target.startswith("cpu") else target
    opweave.cpu.set_kernel_path("c" if target == "cpu-c" else "numpy")
    try:
        out = op(*[opweave.tensor(a).to(device) for a in arrays])
        return out.cpu().numpy()
    except Exception as e:  # noqa: BLE001 - a developer report: say what failed and go on
        return e
    finally:
        opweave.cpu.set_kernel_path(None)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Units in the last place between finite ``a`` and ``b`` of one float dtype (ordered integer images)."""
    it = _INT[a.dtype.name]
    ia, ib = (x.view(it).astype(np.int64) for x in (a, b))
    mask = np.int64(np.iinfo(it).max)  # every bit but the sign
    ia = np.where(ia < 0, -(ia & mask), ia)
    ib = np.where(ib < 0, -(ib & mask), ib)
    return np.abs(ia.astype(np.float64) - ib)


def mismatches(expected: np.ndarray, actual: np.ndarray, ulps: int) -> np.ndarray:
    """Mask of the elements where ``actual`` differs from ``expected`` beyond ``ulps`` (nan/±0/±inf exactly)."""
    if expected.dtype != actual.dtype:
        return np.ones(expected.shape, bool)
    if expected.dtype.kind != "f":
        return expected != actual
    en, an = np.isnan(expected), np.isnan(actual)
    bad = en != an
    special = ~en & ~an & ((expected == 0) | np.isinf(expected) | (actual == 0) | np.isinf(actual))
    bad |= special & ((expected != actual) | (np.signbit(expected) != np.signbit(actual)))
    ordinary = ~en & ~an & ~special
    bad |= ordinary & (ulp_distance(expected, actual) > ulps)
    return bad


def _fmt(x) -> str:
    return "-nan" if isinstance(x, np.floating) and np.isnan(x) and np.signbit(x) else repr(x.item())


def check(name: str, arity: int, dtype: str, target: str, ulps: int, show: int) -> str | None:
    """One report line (and examples) for ``name`` on ``target``, or None when everything matches."""
    arrays = inputs(dtype, arity)
    expected = run(name, arrays, "cpu")
    actual = run(name, arrays, target)
    if isinstance(expected, Exception):
        return None  # the CPU kernel takes no such input: nothing to compare
    if isinstance(actual, Exception):
        return f"{name:24s} {dtype:8s} {target:7s} raised {type(actual).__name__}: {actual}"
    bad = mismatches(expected, actual, ulps)
    if not bad.any():
        return None
    lines = [f"{name:24s} {dtype:8s} {target:7s} {int(bad.sum())}/{bad.size} mismatches"]
    for i in np.flatnonzero(bad)[:show]:
        args = ", ".join(_fmt(a[i]) for a in arrays)
        lines.append(f"    {name}({args}): expected {_fmt(expected[i])}, got {_fmt(actual[i])}")
    return "\n".join(lines)


def targets_available(names: list) -> list:
    """The targets of ``names`` this machine can run (says why it skips the others)."""
    out = []
    for t in names:
        if t == "cpu-c":
            out.append(t)
            continue
        try:
            opweave.zeros(1).to(t)
            out.append(t)
        except Exception as e:  # noqa: BLE001
            print(f"# skipping {t}: {type(e).__name__}: {e}")
    return out


def dtypes_of(target: str) -> list:
    """float32 and float64, and float16 where the target's dialect computes it."""
    out = ["float32", "float64"]
    if target != "cpu-c":
        from opweave_kernelgen.kernels._common import runtime_of

        if getattr(runtime_of(opweave.zeros(1).to(target)).dialect, "computes_float16", False):
            out.insert(0, "float16")
    return out


def main() -> None:
    """Parse the arguments, run every prim on every target and print the mismatches."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--targets", default="opencl,ccpu,cpu-c")
    p.add_argument("--ops", default="", help="comma-separated prim names (default: all)")
    p.add_argument("--ulps", type=int, default=4)
    p.add_argument("--show", type=int, default=6, help="examples printed per mismatching prim")
    args = p.parse_args()
    table = prims()
    if args.ops:
        table = {n: table[n] for n in args.ops.split(",")}
    found = 0
    for target in targets_available(args.targets.split(",")):
        for dtype in dtypes_of(target):
            for name, arity in table.items():
                line = check(name, arity, dtype, target, args.ulps, args.show)
                if line:
                    found += 1
                    print(line, flush=True)
    print(f"# {found} (prim, dtype, target) combinations with mismatches")


if __name__ == "__main__":
    main()
