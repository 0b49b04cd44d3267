"""The distribution ships every package of the source tree (``pip install .`` without ``-e`` works)."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_folder_is_listed_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = set()
    for name, folder in config["package-dir"].items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            found.add(".".join((name, *relative.parts)))
    assert found - listed == set(), "packages missing from pyproject.toml's [tool.setuptools] packages"
    assert listed - found == set(), "packages listed in pyproject.toml that do not exist"
