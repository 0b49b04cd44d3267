"""The Python code blocks of docs/kernelgen.md run as written (top to bottom, one interpreter)."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "kernelgen.md"


def blocks() -> list[str]:
    """The document's ```python blocks."""
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def test_the_doc_has_a_complete_backend_and_a_dialect():
    code = "\n".join(blocks())
    assert "class TinyRuntime(CRuntime)" in code and "register_kernels" in code and "class CudaLike(Dialect)" in code


def test_the_doc_code_runs():
    code = "\n\n".join(blocks())
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
