"""The house's layering, read from the code's imports (no database, nothing imported).

``ldp`` is a framework-free library: it imports nothing of Django or ``surveys``. And no module of
``ldp`` or ``surveys`` reaches itself again through imports, at module level or inside functions
(an import made only for type checking, under ``if TYPE_CHECKING:``, never runs, but makes no circle
either: a lower layer reads a higher one's objects through a Protocol of its own).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ldp", "surveys")


def modules() -> dict[str, Path]:
    """Every module of ldp/ and surveys/ (migrations aside), by dotted name."""
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run: every one but those under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _every_import(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement, those made only for the type checker too."""
    return [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)]


def imported_names(path: Path, module: str, typing: bool = False) -> set[str]:
    """Dotted names a module imports at run time (``from a import b`` gives ``a.b``: the module a.b,
    or the name b of module a, which :func:`import_graph` then reads as a)."""
    names: set[str] = set()
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    statements = _every_import if typing else _runtime_imports
    for node in statements(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def import_graph(typing: bool = False) -> dict[str, set[str]]:
    """Module -> the project modules it imports (a name that is not a module counts as its package);
    with ``typing``, also those it imports only for the type checker."""
    every = modules()
    graph: dict[str, set[str]] = {}
    for module, path in every.items():
        targets = set()
        for name in imported_names(path, module, typing):
            while name and name not in every:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return found


def test_ldp_imports_nothing_of_django_or_surveys():
    offenders = {
        module: sorted(n for n in imported_names(path, module) if n.split(".")[0] in {"django", "surveys"})
        for module, path in modules().items()
        if module.split(".")[0] == "ldp"
    }
    assert {m: names for m, names in offenders.items() if names} == {}


def test_no_module_reaches_itself_through_imports():
    assert cycles(import_graph()) == []


def test_no_module_reaches_itself_even_for_the_type_checker():
    """A layer names a higher one not even in an annotation: it reads it through a Protocol of its own
    (``surveys.kinds.base.ResultView`` for the results' ``QuestionResult``)."""
    assert cycles(import_graph(typing=True)) == []


def test_the_cycle_finder_finds_a_cycle_and_ignores_a_chain():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_type_checking_imports_do_not_count(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import surveys.models\n"
        "def f():\n    from surveys import kinds\n"
    )
    assert imported_names(source, "ldp.m") == {"typing.TYPE_CHECKING", "surveys.kinds"}
