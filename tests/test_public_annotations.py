"""Every public function and method of the core's public namespaces is annotated.

Walks the names the public modules export (``__all__``, else their public names), and for
every function, and every public method or property of every class defined in opweave, checks
that each parameter (but ``self``/``cls``) and the return carry an annotation. The generated
stubs (``scripts/gen_stubs.py``) read these annotations, so a missing one shows up as ``Any``
to type checkers. Autograd's Python API (``opweave.autograd``, the grad-mode context managers,
``Tensor.backward``...) and ``opweave.nn``/``opweave.optim`` are left to their own issue.
"""

from __future__ import annotations

import importlib
import inspect

import opweave

MODULES = [
    "opweave",
    "opweave.backends",
    "opweave.backends.kernel",
    "opweave.library",
    "opweave.dispatch",
    "opweave.profiler",
    "opweave.random",
    "opweave.philox",
    "opweave.serialization",
    "opweave.safetensors",
    "opweave.quantization",
    "opweave.masked",
    "opweave.errors",
    "opweave.utils.deterministic",
    "opweave.return_types",
]
# Defined by autograd (issue 18), or a plain record whose fields the class docstring describes.
NOT_COVERED_MODULES = ("opweave.autograd",)
NOT_COVERED = {"opweave.dispatch.Explanation.__init__"}
METHODS = ("__init__", "__call__", "__enter__", "__exit__")


def _missing(fn) -> list[str]:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature
        return []
    missing = [
        name
        for name, p in signature.parameters.items()
        if name not in ("self", "cls") and p.annotation is inspect.Parameter.empty
    ]
    if signature.return_annotation is inspect.Signature.empty and fn.__name__ != "__init__":
        missing.append("return")
    return missing


def _members(obj):
    for name, value in vars(obj).items():
        if name.startswith("_") and name not in METHODS:
            continue
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, property):
            value = value.fget
        if inspect.isfunction(value):
            yield name, value


def unannotated() -> list[str]:
    """``"qualified name: missing parts"`` for every public callable lacking annotations."""
    found, seen = [], set()

    def check(fn, where: str) -> None:
        if id(fn) in seen or where in NOT_COVERED:
            return
        seen.add(id(fn))
        if (fn.__module__ or "").startswith(NOT_COVERED_MODULES):
            return
        missing = _missing(fn)
        if missing:
            found.append(f"{where}: {', '.join(missing)}")

    for module_name in MODULES:
        module = importlib.import_module(module_name)
        names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        for name in names:
            obj = getattr(module, name, None)
            if not str(getattr(obj, "__module__", "") or "").startswith("opweave"):
                continue
            if inspect.isfunction(obj):
                check(obj, f"{module_name}.{name}")
            elif inspect.isclass(obj):
                for attr, fn in _members(obj):
                    check(fn, f"{module_name}.{name}.{attr}")
    return found


def test_public_signatures_are_annotated():
    assert opweave.Tensor is not None
    assert unannotated() == []


def test_the_check_sees_a_missing_annotation():
    def typed(x: int) -> int:
        return x

    def untyped(x, y: int = 0):
        return x

    assert _missing(typed) == []
    assert _missing(untyped) == ["x", "return"]
