"""No import cycle among the core's modules.

Every module under ``core/`` is parsed (never imported); each ``import`` and ``from ... import``
— at module level and inside functions alike, but not under ``if TYPE_CHECKING:`` — is an edge
from the importing module to the core module it names. ``from . import x`` names the submodule
``x`` when there is one, else the package. The test fails on any strongly connected component
with more than one module (or a module importing itself), printing one cycle through it. A
function-local import marked ``# deferred: <why>`` (one that defers a heavy optional part such as
MPI to its first use) is not counted. The submodules ``opweave`` imports on first use (PEP 562:
``opweave.nn``, ``opweave.optim`` ...) are not imported by the package, so their ``import opweave``
closes no cycle.

The layer order these edges must follow is described in ``docs/architecture.md``.
``KNOWN_EDGES`` lists the edges of cycles that remain in the core (today none); the list may
only shrink: an edge inside a cycle that is not listed fails the test, and a listed edge that no
longer exists (or is no longer in a cycle) fails it too, so that the list is kept exact.
"""

from __future__ import annotations

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "core"
PACKAGE = "opweave"

# (importer, imported): the edges inside the remaining import cycles. Must only shrink; none is left.
KNOWN_EDGES: frozenset[tuple[str, str]] = frozenset()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(CORE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([PACKAGE, *parts])


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(CORE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, lines: list[str]):
    """Yield every Import/ImportFrom node outside ``if TYPE_CHECKING:`` blocks.

    A function-local import whose line says ``# deferred: <why>`` is skipped: it defers a heavy,
    optional part (MPI, SciPy) to its first use, and is not a dependency of the importing layer.
    """
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    while stack:
        node, local = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend((child, local) for child in node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if not (local and "# deferred:" in lines[node.lineno - 1]):
                yield node
        local = local or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        stack.extend((child, local) for child in ast.iter_child_nodes(node))


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest core module that ``name`` is or lies in."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph() -> dict[str, set[str]]:
    """Map each core module to the set of core modules it imports."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        package = module if is_package else module.rpartition(".")[0]
        source = path.read_text()
        for node in _imports(ast.parse(source, str(path)), source.splitlines()):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                if node.level:
                    base = package
                    for _ in range(node.level - 1):
                        base = base.rpartition(".")[0]
                    base = f"{base}.{node.module}" if node.module else base
                else:
                    base = node.module or ""
                # `from pkg import name` names the submodule pkg.name when there is one, else pkg
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names
                ]
            for target in targets:
                found = _resolve(target, modules)
                if found is not None and found != module:
                    graph[module].add(found)
        # importing a package's submodule runs the package's __init__ first; that is an
        # edge of the interpreter, not of the code, and is not counted
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        found.append(sorted(component))
    return found


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest cycle through the component's first module, for the message."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return [start, start]


def cycle_edges(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    edges = set()
    for component in strongly_connected(graph):
        members = set(component)
        edges |= {(a, b) for a in component for b in graph[a] & members}
    return edges


def test_the_graph_sees_local_imports_and_skips_type_checking_blocks(tmp_path, monkeypatch):
    pkg = tmp_path / "core"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "b.py").write_text("from .c import thing\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\nimport opweave.a\n"
    )
    (pkg / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
        "def f():\n    from . import b  # deferred: heavy\n"
    )
    monkeypatch.setitem(globals(), "CORE", pkg)
    graph = import_graph()
    assert graph["opweave.a"] == {"opweave.b"}
    assert graph["opweave.b"] == {"opweave.c"}
    assert graph["opweave.c"] == {"opweave.a"}
    assert graph["opweave.d"] == set()
    [component] = strongly_connected(graph)
    assert component == ["opweave.a", "opweave.b", "opweave.c"]
    assert one_cycle(graph, component) == ["opweave.a", "opweave.b", "opweave.c", "opweave.a"]


def test_no_new_import_cycle_in_core():
    graph = import_graph()
    edges = cycle_edges(graph)
    new = edges - KNOWN_EDGES
    if new:
        lines = []
        for component in strongly_connected(graph):
            if any(a in component for a, _ in new):
                lines.append(" -> ".join(one_cycle(graph, component)) + f"   ({len(component)} modules)")
        lines += [f"  new edge: {a} -> {b}" for a, b in sorted(new)]
        raise AssertionError("import cycle(s) in core/:\n" + "\n".join(lines))


def test_known_cycle_edges_are_exact():
    gone = KNOWN_EDGES - cycle_edges(import_graph())
    assert not gone, "edges no longer in a cycle; remove them from KNOWN_EDGES:\n" + "\n".join(
        f"  {a} -> {b}" for a, b in sorted(gone)
    )
