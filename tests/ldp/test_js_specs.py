from __future__ import annotations

from tests.js import make_specs


def test_the_javascript_tests_use_the_specs_ldp_makes_now():
    assert make_specs.PATH.read_text() == make_specs.render(), "run: python -m tests.js.make_specs"


def test_the_javascript_tests_use_the_numeric_tables_ldp_makes_now():
    assert make_specs.TABLES_PATH.read_text() == make_specs.render_tables(), "run: python -m tests.js.make_specs"


def test_the_javascript_privacy_table_is_what_ldp_states_now():
    assert make_specs.PRIVACY_PATH.read_text() == make_specs.render_privacy(), "run: python -m tests.js.make_specs"


def test_the_javascript_tests_use_the_memo_tables_ldp_makes_now():
    assert make_specs.MEMO_PATH.read_text() == make_specs.render_memo(), "run: python -m tests.js.make_specs"


def test_the_javascript_tests_use_the_multiselect_specs_ldp_makes_now():
    expected = make_specs.render_multiselect()
    assert make_specs.MULTISELECT_PATH.read_text() == expected, "run: python -m tests.js.make_specs"
