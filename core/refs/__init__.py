"""The canonical ops: schemas with reference decompositions into prims.

Importing this package defines every canonical op (family modules below) and
derives their in-place and ``out=`` variants.
"""

from __future__ import annotations

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")

from ._varargs import mark as _mark_varargs  # noqa: E402
from .views import install_properties as _install_properties  # noqa: E402

_mark_varargs()
_install_properties()
