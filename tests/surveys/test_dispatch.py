"""Only surveys/kinds/ knows what a kind, a summary family or a mechanism is.

Every other module asks the kind (``surveys.kinds.kind_of``) or its summary
(``surveys.kinds.summary_for``): adding a kind is then one module under surveys/kinds/, its
templates and its tests. This walks the syntax tree of every surveys module outside
surveys/kinds/ and surveys/migrations/ and fails on a dispatch by name:

- a comparison (==, !=, in, not in) with ``kind``, ``family``, ``summary``, ``mechanism`` or
  ``estimate_family`` on one side (a name, an attribute or a ``data["kind"]`` subscript) and a
  string literal, a literal collection or a module constant (``MEMO_LAYERS``) on the other;
- a comparison with a string that names a kind, a mechanism or a family, or with
  ``Question.Kind.<X>``;
- ``isinstance(x, C)`` where C is an ``ldp`` mechanism class or a family's base class;
- a dict, tuple, list or set literal of two or more keys/elements that all name mechanisms,
  families or kinds (a lookup table on names).

Comparing two values of one axis (a question's kind with its saved kind, an advisor candidate's
mechanism with the question's own) names no kind, so it is not a dispatch and passes.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import ldp
from ldp import registry
from ldp.mechanisms import Mechanism
from ldp.multiselect.base import StoredReports
from ldp.numeric import NumericMechanism
from ldp.textreports import TextReports

ROOT = Path(__file__).resolve().parents[2] / "surveys"
EXEMPT = ("kinds", "migrations")

WATCHED = {"kind", "family", "summary", "mechanism", "estimate_family"}

# The kind values of surveys.models.Question.Kind, spelled here so the test needs no Django.
KIND_VALUES = {"single", "yes_no", "numeric", "rating", "text", "multi_select", "matrix", "pair"}
NAMES = set(registry.names()) | set(registry.NOT_RANDOMIZED) | set(registry.FAMILIES) | {"pair"} | KIND_VALUES


def _mechanism_classes() -> set[str]:
    bases = (Mechanism, NumericMechanism, StoredReports, TextReports)
    found: set[str] = set()
    pending = list(bases)
    while pending:
        cls = pending.pop()
        found.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    found.update(name for name, obj in vars(ldp).items() if inspect.isclass(obj) and issubclass(obj, bases))
    return found


CLASSES = _mechanism_classes()


def _watched(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return node.id in WATCHED
    if isinstance(node, ast.Attribute):
        return node.attr in WATCHED
    if isinstance(node, ast.Subscript):
        key = node.slice
        return isinstance(key, ast.Constant) and key.value in WATCHED
    return False


# Module constants that name no kind, family or mechanism: the builder's "Automatic" choice is a
# sentinel value of the mechanism field (surveys.forms.question.AUTOMATIC), resolved by the advisor.
NOT_NAMES = {"AUTOMATIC"}


def _constant(node: ast.AST) -> bool:
    """A literal, a literal collection, or a module constant (an UPPER_CASE name)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
        return True
    return isinstance(node, ast.Name) and node.id.isupper() and node.id not in NOT_NAMES


def _named(node: ast.AST) -> bool:
    """A string literal naming a kind/mechanism/family, or a collection made only of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value in NAMES
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_named(e) for e in node.elts)
    return False


def _kind_member(node: ast.AST) -> bool:
    """``Question.Kind.NUMERIC`` and the like."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "Kind"


def _violations(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    where = path.relative_to(ROOT.parent)
    found = []
    for node in ast.walk(tree):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Compare) and any(
            isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops
        ):
            sides = [node.left, *node.comparators]
            if any(_watched(side) for side in sides) and any(_constant(side) for side in sides):
                found.append(f"{line}: compares a kind, family, summary or mechanism with a name")
            elif any(_named(side) or _kind_member(side) for side in sides):
                found.append(f"{line}: compares with a kind, mechanism or family name")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            kinds = node.args[1] if len(node.args) == 2 else None
            elts = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
            names = {e.id if isinstance(e, ast.Name) else getattr(e, "attr", "") for e in elts if e is not None}
            if names & CLASSES:
                found.append(f"{line}: isinstance on a mechanism class {sorted(names & CLASSES)}")
        elif isinstance(node, ast.Dict) and len(node.keys) > 1:
            keys = [k for k in node.keys if k is not None]
            if len(keys) > 1 and all(_named(k) or _kind_member(k) for k in keys):
                found.append(f"{line}: a table keyed on kind, mechanism or family names")
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)) and len(node.elts) > 1 and _named(node):
            found.append(f"{line}: a list of kind, mechanism or family names")
    return found


def _modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if p.relative_to(ROOT).parts[0] not in EXEMPT)


def test_the_walk_sees_every_module() -> None:
    assert len(_modules()) > 30
    assert "Mechanism" in CLASSES and "PiecewiseMean" in CLASSES


@pytest.mark.parametrize(
    "source",
    [
        "x = question.kind == Question.Kind.NUMERIC",
        "x = data['kind'] != 'rating'",
        "x = q.mechanism in ('krr', 'oue')",
        "x = family(m) == 'mean'",
        "x = isinstance(m, NumericMechanism)",
        "x = kind in (Question.Kind.MATRIX, Question.Kind.PAIR)",
        "x = spec['mechanism'] in MEMO_LAYERS",
        "x = {'mean': 1, 'text': 2}[name]",
        "x = name == 'dbitflip'",
    ],
)
def test_it_catches_a_dispatch_by_name(source: str, tmp_path: Path) -> None:
    probe = ROOT / "_dispatch_probe.py"
    try:
        probe.write_text(source + "\n")
        assert _violations(probe)
    finally:
        probe.unlink()


def test_no_module_outside_kinds_dispatches_on_names() -> None:
    found = [v for path in _modules() for v in _violations(path)]
    assert not found, f"{len(found)} dispatches by name outside surveys/kinds/:\n" + "\n".join(found)
