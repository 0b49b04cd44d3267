"""Compile every program the generator emits for a CUDA GPU all the way to cubins (sm_80 and sm_90), timing each.

What a GPU compiles on first use, checked here without one (NVRTC only; minutes on two cores).
The CI test (``tests/cuda/test_nvrtc_compile.py``) runs every program through NVRTC's front
end and a sample to cubins; this script is the full build. ``--arch 90`` limits it to one
architecture; ``--cache`` also stores the cubins in the kernel cache (a warm cache for a GPU run:
``--arch 90 --cache --jobs 16`` before the conformance run on an H100 or H200); ``--jobs N`` compiles
in N processes.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "cuda"))


def _compile(job) -> tuple:
    """``(arch, key, seconds, error or None)`` of one program (run in a worker process)."""
    arch, key, src, cache = job
    from opweave_cuda import _nvrtc, _runtime

    t = time.perf_counter()
    try:
        (_runtime.cached_cubin if cache else _nvrtc.compile_cubin)(src, arch)
        return arch, key, time.perf_counter() - t, None
    except RuntimeError as exc:
        return arch, key, time.perf_counter() - t, str(exc)


def main() -> int:
    """Compile and report; exit status 1 if any program fails."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--arch", type=int, action="append", help="sm_XY number (repeatable; default 80 and 90)")
    parser.add_argument("--cache", action="store_true", help="store the cubins in the kernel cache")
    parser.add_argument("--jobs", type=int, default=1, help="compile in this many processes")
    args = parser.parse_args()
    from kernel_sources import programs
    from opweave_cuda import _nvrtc
    from opweave_kernelgen.dialect.cuda import CUDA

    if _nvrtc.nvrtc()[0] is None:
        print(f"NVRTC is not available: {_nvrtc.nvrtc()[1]}")
        return 1
    jobs = [(arch, key, src, args.cache) for arch in args.arch or [80, 90] for key, src in programs(CUDA).items()]
    failed, total = 0, time.perf_counter()
    with ProcessPoolExecutor(max(args.jobs, 1)) as pool:
        for arch, key, seconds, error in pool.map(_compile, jobs):
            if error is None:
                print(f"sm_{arch} {key}: {seconds:.2f} s")
            else:
                failed += 1
                print(f"sm_{arch} {key}: FAILED\n{error}")
    print(f"{len(jobs)} programs, {failed} failed; {time.perf_counter() - total:.0f} s in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
