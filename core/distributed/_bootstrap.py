"""What each rank runs under ``mpiexec``: set torchrun's variables, run the script, end the job on a failure.

A rank whose script raises prints the traceback (each line prefixed with
``[rank N]:``) and calls ``MPI_Abort``, so the other ranks stop instead of
waiting for it in a collective, and the launcher exits nonzero.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
import traceback

from ._launch_env import torchrun_environment

#: Seconds a failing rank waits between flushing its output and ``MPI_Abort``: mpiexec stops
#: forwarding output once a rank aborts, so what the pipes still hold would be lost.
DRAIN_S = 1.0


def abort_job(code: int) -> None:
    """End every rank of the job with ``code``, after the output written so far has been forwarded."""
    sys.stdout.flush()
    sys.stderr.flush()
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        time.sleep(DRAIN_S)
        mpi.COMM_WORLD.Abort(code)
    os._exit(code)


def main(argv: list[str]) -> None:
    """Run ``argv[0]`` (a script path, or ``-m module``) with ``argv[1:]`` as its arguments."""
    os.environ.update(torchrun_environment())
    rank = os.environ["RANK"]
    if not argv:
        sys.stderr.write("usage: python -m opweave.distributed._bootstrap script.py [args...]\n")
        os._exit(2)
    module = argv[0] == "-m"
    target = argv[1] if module else argv[0]
    sys.argv = argv[1:] if module else list(argv)
    if not module:
        sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None or code == 0:
            return
        if not isinstance(code, int):
            sys.stderr.write(f"[rank {rank}]: {code}\n")
            code = 1
        sys.stderr.write(f"[rank {rank}]: exited with code {code}; stopping the job\n")
        abort_job(code)
    except BaseException:
        lines = traceback.format_exc().rstrip("\n").split("\n")
        sys.stderr.write("".join(f"[rank {rank}]: {line}\n" for line in lines))
        abort_job(1)


if __name__ == "__main__":
    main(sys.argv[1:])
