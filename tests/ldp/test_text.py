"""Free-text normalization (ldp.text) and its JavaScript twin's case-folding table."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

from ldp.text import WHITESPACE, casefold_runs, encode_fields, normalize_text

TEXT_JS = Path(__file__).resolve().parents[2] / "static" / "ldp" / "text.js"
#: text.js imports WHITESPACE from the generated constants (tests/js/make_specs.py).
CONSTANTS_JS = TEXT_JS.with_name("constants.js")


def js_array(name: str) -> list:
    source = TEXT_JS.read_text()
    body = re.search(rf"export const {name} = \[\n(.*?)\n\];", source, re.S)
    assert body, f"{name} not found in text.js"
    return json.loads("[" + body.group(1).rstrip().rstrip(",") + "]")


def test_the_javascript_case_folding_table_is_pythons():
    runs, multi = casefold_runs()
    assert js_array("CASEFOLD_RUNS") == [list(run) for run in runs]
    assert js_array("CASEFOLD_MULTI") == [list(item) for item in multi]


def test_the_runs_reproduce_casefold_on_every_code_point():
    runs, multi = casefold_runs()
    table = {code + i * step: chr(code + i * step + delta) for code, count, delta, step in runs for i in range(count)}
    table.update(dict(multi))
    changed = {code: chr(code).casefold() for code in range(0x110000) if chr(code).casefold() != chr(code)}
    assert table == changed


def test_the_javascript_whitespace_is_pythons():
    source = CONSTANTS_JS.read_text()
    escaped = re.search(r'export const WHITESPACE = "(.*?)";', source).group(1)
    assert escaped.encode().decode("unicode_escape") == WHITESPACE


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("  Straße\u3000 서울 ", "strasse 서울"),
        ("\u1100\u1161\u11a8", "각"),  # conjoining jamo (NFD, as macOS sends) -> the syllable
        ("ΟΔΟΣ", "οδοσ"),  # case folding, not lowercasing: no final sigma
        ("ﬁle\tname\n", "file name"),
        ("e\u0301\u00a0CAFÉ", "é café"),
        ("\ufeffABC\u2003def", "abc def"),
        ("ǰ", "ǰ"),  # folds to j + combining caron, recomposed by the second NFC
        ("", ""),
        ("   ", ""),
    ],
)
def test_normalization_composes_folds_and_collapses_whitespace(text, normalized):
    assert normalize_text(text) == normalized
    assert unicodedata.is_normalized("NFC", normalize_text(text))


def test_korean_in_either_normal_form_normalizes_alike():
    answer = "강의가 좋았어요"
    assert normalize_text(unicodedata.normalize("NFD", answer)) == normalize_text(answer) == answer


def test_field_encoding_is_length_prefixed_and_refuses_other_types():
    assert encode_fields("서", 12) == b"\0\0\0\x03" + "서".encode() + b"\0\0\0\x0212"
    assert encode_fields("ab", "c") != encode_fields("a", "bc")
    with pytest.raises(ValueError, match="string or an integer"):
        encode_fields(1.5)
    with pytest.raises(ValueError, match="text must be a string"):
        normalize_text(None)
