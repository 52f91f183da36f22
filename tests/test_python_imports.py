"""The Python package's module graph has no circle (beside the core's
rust/xstreams-core/tests/module_graph.rs).

Every import of a module of the package, at the top or inside a function (only those under
``if TYPE_CHECKING:`` are left out: they never run), is an edge; ``from . import name``
is an edge to the submodule ``name`` when there is one, else to the package (so a module
taking a name from the package root while the root imports that module, even lazily, is a
circle).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "xstreams"

# Circles known and owned elsewhere; each must still exist (a fixed one is removed here).
# None: the last one (spark <-> spark_source) went when the store-directory reading moved
# into spark_replay.
KNOWN: List[List[str]] = []


def _modules() -> Dict[str, Path]:
    """Every module of the package: its sources, and the extension by its stub."""
    mods = {}
    for path in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("_*.pyi")]:
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = path
    return mods


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> List[ast.AST]:
    found: List[ast.AST] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append(child)
            visit(child)

    visit(tree)
    return found


def graph() -> Dict[str, Set[str]]:
    mods = _modules()
    edges: Dict[str, Set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        is_pkg = path.name == "__init__.py"
        package = mod if is_pkg else mod.rpartition(".")[0]
        for node in _imports(ast.parse(path.read_text(), str(path))):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                assert isinstance(node, ast.ImportFrom)
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    prefix = ".".join(base)
                    base_mod = f"{prefix}.{node.module}" if node.module else prefix
                else:
                    base_mod = node.module or ""
                for alias in node.names:
                    sub = f"{base_mod}.{alias.name}"
                    targets.append(sub if sub in mods else base_mod)
            for target in targets:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != mod:
                    edges[mod].add(target)
    return edges


def cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    out: List[List[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return sorted(out)


def test_no_import_circle() -> None:
    found = cycles(graph())
    assert found == sorted(KNOWN), f"import circles in the xstreams package: {found}"


def test_the_client_package_imports_one_way() -> None:
    edges = graph()
    # The client package is below the asyncio module and above the exceptions.
    assert "xstreams.client.sync" in edges["xstreams.client.asyncio"]
    assert "xstreams.client.sync" not in edges["xstreams.client.pipeline"]
    assert not any(t.startswith("xstreams.client") for t in edges["xstreams.exceptions"])
    assert "xstreams" not in edges["xstreams.client.sync"]


def test_the_checker_finds_a_circle(tmp_path: Path) -> None:
    """The checker itself: a two-module circle through a function-level import, and one
    hidden under TYPE_CHECKING that is not a circle."""
    edges = {"a": {"b"}, "b": {"a"}, "c": set()}
    assert cycles(edges) == [["a", "b"]]
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    import x\n"
        "def f():\n    import y\n"
    )
    names = [n.names[0].name for n in _imports(tree) if isinstance(n, ast.Import)]
    assert names == ["y"]
