from __future__ import annotations

import json
import math
from typing import Any

from tests.js import make_specs

#: Floating-point results may differ in the last bits between CPUs (numpy's SIMD kernels for exp
#: and log differ by a few units in the last place); the JS tests' own tolerances are far wider.
RELATIVE_TOLERANCE = 1e-12


def _differences(written: Any, current: Any, path: str = "") -> list[str]:
    """Where two decoded JSON documents differ: structure and strings exactly, numbers to 1e-12."""
    if isinstance(written, dict) and isinstance(current, dict):
        if written.keys() != current.keys():
            return [f"{path}: keys {sorted(written)} != {sorted(current)}"]
        return [d for key in written for d in _differences(written[key], current[key], f"{path}/{key}")]
    if isinstance(written, list) and isinstance(current, list):
        if len(written) != len(current):
            return [f"{path}: length {len(written)} != {len(current)}"]
        pairs = enumerate(zip(written, current, strict=True))
        return [d for i, (w, c) in pairs for d in _differences(w, c, f"{path}[{i}]")]
    numbers = (int, float)
    if isinstance(written, numbers) and isinstance(current, numbers) and not isinstance(written, bool):
        if math.isclose(written, current, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-300):
            return []
    elif written == current and type(written) is type(current):
        return []
    return [f"{path}: {written!r} != {current!r}"]


def assert_current(path: Any, rendered: str) -> None:
    differences = _differences(json.loads(path.read_text()), json.loads(rendered))
    assert not differences, f"run: python -m tests.js.make_specs ({len(differences)} differ: {differences[:3]})"


def test_the_javascript_tests_use_the_specs_ldp_makes_now():
    assert_current(make_specs.PATH, make_specs.render())


def test_the_javascript_tests_use_the_numeric_tables_ldp_makes_now():
    assert_current(make_specs.TABLES_PATH, make_specs.render_tables())


def test_the_javascript_privacy_table_is_what_ldp_states_now():
    assert_current(make_specs.PRIVACY_PATH, make_specs.render_privacy())


def test_the_javascript_tests_use_the_memo_tables_ldp_makes_now():
    assert_current(make_specs.MEMO_PATH, make_specs.render_memo())


def test_the_javascript_tests_use_the_multiselect_specs_ldp_makes_now():
    expected = make_specs.render_multiselect()
    assert_current(make_specs.MULTISELECT_PATH, expected)


def test_the_javascript_tests_use_the_design_tables_ldp_makes_now():
    assert_current(make_specs.DESIGN_TABLES_PATH, make_specs.render_design_tables())


def test_the_browser_constants_are_what_ldp_defines_now():
    assert make_specs.CONSTANTS_PATH.read_text() == make_specs.render_constants(), "run: python -m tests.js.make_specs"


def _mechanisms_in(document: Any) -> set[str]:
    """Every spec's ``mechanism`` in a decoded JSON document, at any depth (oracles included)."""
    if isinstance(document, dict):
        found = {document["mechanism"]} if isinstance(document.get("mechanism"), str) else set()
        return found.union(*(_mechanisms_in(value) for value in document.values()))
    if isinstance(document, list):
        return set().union(*(_mechanisms_in(value) for value in document))
    return set()


def test_every_ldp_mechanism_has_a_javascript_fixture():
    fixtures = (
        make_specs.PATH,
        make_specs.TABLES_PATH,
        make_specs.PRIVACY_PATH,
        make_specs.MEMO_PATH,
        make_specs.MULTISELECT_PATH,
    )
    covered = set().union(*(_mechanisms_in(json.loads(path.read_text())) for path in fixtures))
    for family, names in make_specs.mechanism_families().items():
        missing = sorted(set(names) - covered)
        assert not missing, f"{family} mechanisms without a spec in tests/js/*.json: {missing}"
