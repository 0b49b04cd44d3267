"""The prim catalog: strict operators every device backend implements.

Importing this package defines every prim (family modules below); a prim's
schema, tags and meta function live side by side in its family module.
"""

from __future__ import annotations

import importlib
import pkgutil

for _info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
    if not _info.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_info.name}")
