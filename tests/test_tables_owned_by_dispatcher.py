"""No registration table is written outside the dispatcher module (an AST check over the whole project).

Tables: every attribute of the ``Dispatcher`` (reached as ``DISPATCHER.<table>``), the
catalog alias ``_ops._all``, and the former per-op attributes ``_kernels``, ``_cache``,
``_deterministic_kernels``, ``_composite_explicit`` and the module global ``_fallbacks``.
A write is an assignment, augmented assignment or ``del`` of the table, of one of its
items, or a call of a mutating method on it (``clear``, ``pop``, ``update``, ...).
Registration goes through ``opweave.library`` / the Dispatcher's methods instead.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
OWNER = ROOT / "core" / "_dispatcher.py"
FORMER = frozenset({"_kernels", "_cache", "_caches", "_deterministic_kernels", "_composite_explicit", "_fallbacks"})
ALIASES = frozenset({"_all", "_plugin_rules", "_fallbacks"})  # module names bound to a (former) dispatcher table
MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "popitem", "remove", "clear", "update", "setdefault", "add", "discard"}
)


def _chain(node) -> list[str]:
    parts = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return parts[::-1]


def _is_table(node) -> bool:
    """Whether ``node`` (an expression written to) is a dispatcher table or an item of one."""
    chain = _chain(node)
    if not chain:
        return False
    if "DISPATCHER" in chain[:-1] or "DISPATCHER" in chain and isinstance(node, ast.Subscript):
        return True
    if any(part in FORMER for part in chain[1:]):
        return True
    return chain[0] in ALIASES and (len(chain) > 1 or isinstance(node, ast.Subscript))


def writes(path: pathlib.Path) -> list[str]:
    """Each table write in one file, as ``line: kind``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            if isinstance(t, (ast.Attribute, ast.Subscript)) and _is_table(t):
                found.append(f"{node.lineno}: store to {'.'.join(_chain(t))}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            base = node.func.value
            if isinstance(base, (ast.Attribute, ast.Subscript, ast.Name)) and (
                _is_table(base) or (isinstance(base, ast.Name) and base.id in ALIASES)
            ):
                found.append(f"{node.lineno}: {'.'.join(_chain(base))}.{node.func.attr}()")
    return sorted(found, key=lambda w: int(w.split(":")[0]))


def test_the_check_sees_each_kind_of_write(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "op._kernels[k] = v\n"
        "DISPATCHER.kernels.clear()\n"
        "_all['x'] = op\n"
        "del DISPATCHER.fallbacks[k]\n"
        "op._cache.clear()\n"
        "x = DISPATCHER.kernels.get(op)\n"
        "DISPATCHER.register_kernel(op)\n"
    )
    assert [w.split(":")[0] for w in writes(sample)] == ["1", "2", "3", "4", "5"]


def test_no_table_is_written_outside_the_dispatcher():
    found = {}
    for top in ("core", "plugins", "conformance", "examples", "tests"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == OWNER or path == pathlib.Path(__file__).resolve():
                continue
            w = writes(path)
            if w:
                found[str(path.relative_to(ROOT))] = w
    assert not found, found
