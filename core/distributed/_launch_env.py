"""Where ranks come from: the MPI launcher's environment, read into torchrun's variables."""

from __future__ import annotations

import os

#: (torchrun's variable, the launchers' variables that give it: MPICH/Hydra, Open MPI, PMIx, Slurm)
_SOURCES = (
    ("RANK", ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")),
    ("WORLD_SIZE", ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS")),
    ("LOCAL_RANK", ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")),
    ("LOCAL_WORLD_SIZE", ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE")),
)


def torchrun_environment(environ=None) -> dict[str, str]:
    """``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``MASTER_ADDR``/``PORT``.

    Read from the MPI launcher's variables (a value already set wins); a process
    started without a launcher is rank 0 of 1.
    """
    env = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name, sources in _SOURCES:
        value = env.get(name) or next((env[s] for s in sources if env.get(s)), None)
        if value is not None:
            out[name] = value
    out.setdefault("RANK", "0")
    out.setdefault("WORLD_SIZE", "1")
    out.setdefault("LOCAL_RANK", out["RANK"])
    out.setdefault("LOCAL_WORLD_SIZE", out["WORLD_SIZE"])
    local_size = max(int(out["LOCAL_WORLD_SIZE"]), 1)
    out.setdefault("GROUP_RANK", str(int(out["RANK"]) // local_size))
    out["MASTER_ADDR"] = env.get("MASTER_ADDR", "127.0.0.1")
    out["MASTER_PORT"] = env.get("MASTER_PORT", "29500")
    return out
