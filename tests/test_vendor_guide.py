"""The Python code blocks of docs/vendor-guide.md run as written (top to bottom, one interpreter)."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

GUIDE = pathlib.Path(__file__).resolve().parent.parent / "docs" / "vendor-guide.md"
EXCERPT = "# excerpt from "


def blocks() -> list[str]:
    """The guide's ```python blocks, excerpts (first line ``# excerpt from ...``) left out."""
    found = re.findall(r"^```python\n(.*?)^```", GUIDE.read_text(), flags=re.S | re.M)
    return [b for b in found if not b.startswith(EXCERPT)]


def test_the_guide_has_a_runnable_kernel_example():
    code = "\n".join(blocks())
    assert "K.allocate_outputs" in code and "K.Decline" in code and "register_plugin" in code


def test_the_guide_code_runs():
    code = "\n\n".join(blocks())
    env_code = "import os\nos.environ.setdefault('OPWEAVE_AUTOLOAD', '1')\n" + code
    done = subprocess.run([sys.executable, "-c", env_code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    assert "declined" in done.stdout
