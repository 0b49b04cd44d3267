"""``import opweave`` next to ``import numpy`` and ``import torch``, and the cost of an op's first call.

Each import runs in a fresh interpreter under ``python -X importtime``; the figure is the
cumulative time of the top-level module (what ``python -X importtime -c "import opweave"``
prints on its last line), best and median of several runs, and the CPU seconds the import
takes (``time.process_time``, which load from other processes on the machine does not inflate).
Bytecode caches are written by a warm-up run first, as an installed package has them. The first
calls are timed in one more fresh interpreter: the first op on the CPU (which loads the CPU
plugin), then the first call of an op whose entry point has not been generated yet. Prints figures; asserts nothing.

Run: ``python bench/import_time.py [--runs N]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys

FIRST_CALLS = """
import json, time
t0 = time.perf_counter()
import opweave
t1 = time.perf_counter()
a = opweave.ones(4)
t2 = time.perf_counter()
b = opweave.atan2(a, a)
t3 = time.perf_counter()
c = opweave.hypot(a, b)
t4 = time.perf_counter()
d = opweave.hypot(a, c)
t5 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first op (loads the cpu plugin)": t2 - t1,
                  "first call of atan2": t3 - t2, "first call of hypot": t4 - t3, "second call of hypot": t5 - t4}))
"""


def _environment() -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode cached
    return env


def import_time(module: str) -> float:
    """Seconds ``import module`` takes in a fresh interpreter."""
    command = [sys.executable, "-X", "importtime", "-c", f"import {module}"]
    err = subprocess.run(command, capture_output=True, text=True, env=_environment(), check=True).stderr
    for line in err.splitlines():
        fields = line.split("|")
        if len(fields) == 3 and fields[2].strip() == module and not fields[2].startswith("  "):
            return int(fields[1]) / 1e6
    raise RuntimeError(f"python -X importtime printed no line for {module}")


def import_cpu_time(module: str) -> float:
    """CPU seconds ``import module`` takes in a fresh interpreter."""
    code = f"import time; t = time.process_time(); import {module}; print(time.process_time() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_environment(), check=True)
    return float(out.stdout.strip().splitlines()[-1])


def import_times(modules: list[str], runs: int) -> dict[str, tuple[list[float], list[float]]]:
    """``runs`` (wall, CPU) times of each import after a warm-up, the modules taking turns (so load on
    the machine falls on each alike)."""
    for module in modules:
        import_time(module)
    times: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in modules}
    for _ in range(runs):
        for module in modules:
            times[module][0].append(import_time(module))
            times[module][1].append(import_cpu_time(module))
    return times


def first_calls() -> dict:
    """Seconds of the import and of the first calls, measured inside one fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", FIRST_CALLS], capture_output=True, text=True, env=_environment(), check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per module (default 7)")
    runs = parser.parse_args().runs
    modules = ["opweave", "numpy"]
    if importlib.util.find_spec("torch") is not None:
        modules.append("torch")
    else:
        print("torch is not installed: its column is left out (pip install torch to compare)")
    results = import_times(modules, runs)
    print(f"{'import':<10}{'best s':>10}{'median s':>10}{'/ numpy':>10}{'CPU s':>10}{'/ numpy':>10}")
    numpy_best, numpy_cpu = min(results["numpy"][0]), min(results["numpy"][1])
    for module, (wall, cpu) in results.items():
        best, cpu_best = min(wall), min(cpu)
        print(
            f"{module:<10}{best:>10.3f}{statistics.median(wall):>10.3f}{best / numpy_best:>9.1f}x"
            f"{cpu_best:>10.3f}{cpu_best / numpy_cpu:>9.1f}x"
        )
    print()
    for name, seconds in first_calls().items():
        print(f"{name:<34}{seconds * 1e3:>9.2f} ms")


if __name__ == "__main__":
    main()
