"""opweave.distributed: real multi-process jobs (``opweave run``, MPICH from the ``mpich`` wheel) and the pieces.

The collectives job (``_job_collectives.py``) checks every collective, dtype and
reduction against NumPy on 2 and 4 ranks in one launch each; the failure jobs check
that a rank that raises, or a collective past its timeout, ends the whole job.
Each job is bounded by a subprocess timeout so that a hang fails the test instead
of stalling CI.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import opweave as ow
import pytest

pytest.importorskip("mpi4py", reason='opweave.distributed needs pip install "opweave[distributed]"')

from opweave.distributed import ReduceOp, _launch_env, _mpi, run  # noqa: E402

HERE = Path(__file__).parent
JOB_LIMIT_S = 600  # a hung job fails the test rather than stalling CI


def launch(n: int, script: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "opweave.distributed.run", "-n", str(n), str(HERE / script), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=JOB_LIMIT_S)


@pytest.mark.parametrize("ranks", [2, 4])
def test_every_collective_against_numpy(ranks):
    seed = str(np.random.SeedSequence().entropy % 2**31)
    done = launch(ranks, "_job_collectives.py", seed)
    report = done.stdout + done.stderr
    assert done.returncode == 0, f"SEED={seed}\n{report}"
    assert f"on {ranks} ranks" in done.stdout and "OK" in done.stdout, report


def _processes_with(token: str) -> list[int]:
    """Ids of live processes whose command line contains ``token``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="looks for leftover processes in /proc")
@pytest.mark.parametrize("mode", ["raise", "timeout"])
def test_a_failing_rank_ends_the_job(mode):
    token = f"opweave-test-{uuid.uuid4().hex}"
    done = launch(2, "_job_failures.py", mode, token)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "unreachable" not in done.stdout
    if mode == "raise":
        assert "[rank 1]: ValueError: planted failure on rank 1" in done.stderr, done.stderr
        assert "[rank 1]: Traceback" in done.stderr
    else:
        assert "all_reduce timed out after 2 s" in done.stderr, done.stderr
    assert _processes_with(token) == [], "ranks of the failed job are still running"


# -- the pieces, in this process (MPI is not started here) --------------------------------------


def test_import_opweave_does_not_load_distributed_or_mpi():
    code = "import sys, opweave; print('opweave.distributed' in sys.modules, 'mpi4py' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=JOB_LIMIT_S)
    assert out.stdout.split() == ["False", "False"], out.stdout + out.stderr


def test_collectives_are_ops_of_the_catalog():
    names = {op.name for op in ow.ops.catalog()}
    for name in ["all_reduce", "all_reduce_", "all_gather_into_tensor", "reduce_scatter_tensor", "broadcast"]:
        assert f"c10d::{name}" in names
    assert "c10d::all_to_all_single" in names and "c10d::wait_tensor" in names
    schema = str(ow.ops.c10d.all_reduce.default.schema)
    assert schema == "c10d::all_reduce(Tensor input, str reduce_op, str group_name) -> Tensor"
    listed = subprocess.run(
        [sys.executable, "-m", "opweave.cli", "ops"], capture_output=True, text=True, timeout=JOB_LIMIT_S
    )
    assert "c10d::reduce_scatter_tensor(Tensor input, str reduce_op, int group_size, str group_name)" in listed.stdout


def test_without_a_process_group_collectives_raise():
    import opweave.distributed as dist

    assert not dist.is_initialized()
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.all_reduce(ow.ones(2))
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        ow.ops.c10d.all_reduce(ow.ones(2), "sum", "0")
    with pytest.raises(RuntimeError, match="NCCL"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="unknown backend"):
        dist.init_process_group("gloo")


def test_reduce_op_names():
    assert ReduceOp.parse("SUM", "t") is ReduceOp.SUM and ReduceOp.parse(ReduceOp.BXOR, "t") is ReduceOp.BXOR
    assert [op.value for op in ReduceOp] == ["sum", "avg", "product", "min", "max", "band", "bor", "bxor"]
    with pytest.raises(ValueError, match="unknown reduce op 'mean'"):
        ReduceOp.parse("mean", "t")


FLOATING = [ow.float32, ow.float64, ow.float16, ow.bfloat16]
INTEGER = [ow.uint8, ow.int8, ow.int16, ow.int32, ow.int64]


@pytest.mark.parametrize("dtype", FLOATING + INTEGER + [ow.bool, ow.complex64, ow.complex128, ow.float8_e4m3fn])
@pytest.mark.parametrize("op", list(ReduceOp))
def test_reduction_plan_follows_pytorchs_rules(dtype, op):
    """Which (dtype, op) pairs reduce, and how: half types in float32, bool as logic, complex as pairs."""
    bitwise = op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)
    if dtype.is_complex and op not in (ReduceOp.SUM, ReduceOp.AVG):
        with pytest.raises(ValueError, match=f"all_reduce does not support {op} on complex tensors"):
            _mpi.reduction_plan(dtype, op, "all_reduce")
        return
    floating = dtype.is_floating_point
    if (floating and (bitwise or dtype.itemsize == 1)) or (op is ReduceOp.AVG and not (floating or dtype.is_complex)):
        with pytest.raises(TypeError, match="all_reduce"):
            _mpi.reduction_plan(dtype, op, "all_reduce")
        return
    wire, mpi_op, convert, divide = _mpi.reduction_plan(dtype, op, "all_reduce")
    assert divide == (op is ReduceOp.AVG)
    if dtype in (ow.float16, ow.bfloat16):
        assert wire == np.float32 and convert  # never reduced as raw 16-bit integers
    elif dtype.is_complex:
        assert wire == (np.float32 if dtype == ow.complex64 else np.float64) and mpi_op == "SUM"
    elif dtype == ow.bool:
        assert wire == np.uint8
        assert mpi_op == {"sum": "BOR", "max": "BOR", "bor": "BOR", "bxor": "BXOR"}.get(op.value, "BAND")
    else:
        assert wire == np.dtype(dtype.numpy) and not convert


def test_launcher_sets_torchrun_variables_from_mpi():
    hydra = {"PMI_RANK": "3", "PMI_SIZE": "4", "MPI_LOCALRANKID": "1", "MPI_LOCALNRANKS": "2", "MASTER_PORT": "1234"}
    env = _launch_env.torchrun_environment(hydra)
    assert env["RANK"] == "3" and env["WORLD_SIZE"] == "4" and env["LOCAL_RANK"] == "1"
    assert env["LOCAL_WORLD_SIZE"] == "2" and env["GROUP_RANK"] == "1"
    assert env["MASTER_ADDR"] == "127.0.0.1" and env["MASTER_PORT"] == "1234"
    ompi = {"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "8", "OMPI_COMM_WORLD_LOCAL_RANK": "0"}
    env = _launch_env.torchrun_environment(ompi)
    assert (env["RANK"], env["WORLD_SIZE"], env["LOCAL_RANK"]) == ("2", "8", "0")
    alone = _launch_env.torchrun_environment({})
    assert (alone["RANK"], alone["WORLD_SIZE"], alone["LOCAL_RANK"]) == ("0", "1", "0")


def test_launcher_finds_the_wheels_mpiexec(monkeypatch):
    monkeypatch.delenv("OPWEAVE_MPIEXEC", raising=False)
    path = run.find_mpiexec()
    assert os.access(path, os.X_OK), path
    cmd = run.command(3, ["job.py", "--flag"], mpiexec=path)
    assert cmd[:3] == [path, "-n", "3"] and cmd[-2:] == ["job.py", "--flag"]
    assert cmd[cmd.index(sys.executable) + 1 : cmd.index(sys.executable) + 3] == [
        "-m",
        "opweave.distributed._bootstrap",
    ]
    monkeypatch.setenv("OPWEAVE_MPIEXEC", "/opt/cluster/bin/mpiexec")
    assert run.find_mpiexec() == "/opt/cluster/bin/mpiexec"
    with pytest.raises(ValueError, match="-n must be at least 1"):
        run.launch(0, ["job.py"])


def test_conformance_section_catches_a_planted_bug():
    done = launch(2, "_job_planted.py")
    assert done.returncode != 0, done.stdout + done.stderr
    rows = {line.split()[0]: line.split()[-1] for line in done.stdout.splitlines() if line.startswith("c10d::")}
    report = done.stdout + done.stderr
    assert rows.get("c10d::all_reduce") == "FAIL", report
    assert rows.get("c10d::all_reduce_") == "pass" and rows.get("c10d::broadcast") == "pass", report


def test_opweave_run_is_a_subcommand():
    out = subprocess.run(
        [sys.executable, "-m", "opweave.cli", "run", "--help"], capture_output=True, text=True, timeout=JOB_LIMIT_S
    )
    assert out.returncode == 0, out.stderr
    assert "--nproc-per-node" in out.stdout and "--max-time" in out.stdout and "target" in out.stdout
