"""The shipped ``.pyi`` stubs are what ``scripts/gen_stubs.py`` generates from the schemas today."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_committed_stubs_are_up_to_date():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_stubs.py"), "--check"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_stubs_cover_the_public_namespaces_and_ship_with_the_package():
    init = (ROOT / "core" / "__init__.pyi").read_text()
    tensor = (ROOT / "core" / "_tensor.pyi").read_text()
    # one def per distinct overload, ATen types mapped to Python's
    assert "@overload\ndef add(self: Tensor, other: Tensor, *, alpha: Number = ...) -> Tensor: ..." in init
    assert "def add(self: Tensor, other: Number, alpha: Number = ...) -> Tensor: ..." in init
    assert "def where(condition: Tensor, self: Tensor, other: Tensor) -> Tensor: ..." in init
    assert "    def view(self, *size: _int) -> Tensor: ..." in tensor  # varargs sizes
    assert "    def shape(self) -> Size: ..." in tensor
    assert "dtype: _DType | None = ..." in init
    for stub in ("linalg.pyi", "fft.pyi", "special.pyi", "nn/functional.pyi"):
        assert (ROOT / "core" / stub).stat().st_size > 1000, stub
    assert "def norm(" in (ROOT / "core" / "linalg.pyi").read_text()
    assert (ROOT / "core" / "py.typed").exists()
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'opweave = ["py.typed", "*.pyi"]' in pyproject and '"opweave.nn" = ["*.pyi"]' in pyproject
