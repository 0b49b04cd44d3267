"""Run mypy on the shipped stubs and on ``examples/typed_usage.py``.

mypy finds a package by its directory's name, and opweave's sources live in ``core/``; the
check runs through a temporary link named ``opweave`` to that directory. The options are in
``pyproject.toml`` (``[tool.mypy]``): the implementation modules behind the stubs are not
followed, so the run takes seconds. Exit status: mypy's.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUBS = ("__init__.pyi", "_tensor.pyi", "linalg.pyi", "fft.pyi", "special.pyi", "nn/functional.pyi")


def main() -> int:
    """Type-check the stubs and the example; return mypy's exit status."""
    with tempfile.TemporaryDirectory() as tmp:
        link = Path(tmp) / "opweave"
        link.symlink_to(ROOT / "core", target_is_directory=True)
        env = {**os.environ, "MYPYPATH": tmp}
        files = [str(link / stub) for stub in STUBS] + [str(ROOT / "examples" / "typed_usage.py")]
        command = [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--no-incremental",
            *files,
        ]
        return subprocess.call(command, env=env, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main())
