"""Free-text answers: the normalization a browser applies before hashing, and its byte encoding.

Two respondents who mean the same words must produce the same hash input, whatever their
keyboard or platform sends, so a free-text answer is normalized before it is hashed
(RAPPOR's Bloom filter, a text sketch) and before an organizer's candidate string is:

1. Unicode NFC (canonical composition: a Hangul syllable typed as conjoining jamo, as macOS
   sends it, becomes the precomposed syllable; "e" + combining acute becomes "é");
2. full case folding (``str.casefold``: "Straße" and "STRASSE" both become "strasse");
3. NFC again (folding can decompose: U+01F0 folds to "j" + combining caron);
4. whitespace collapsed: runs of :data:`WHITESPACE` become one space, ends trimmed.

``static/ldp/text.js`` does exactly the same. Browsers disagree with each other and with Python
about which Unicode version their ``toLowerCase`` follows, so the JavaScript does not call it:
it carries Python's case-folding table (Unicode 14.0, the version of Python 3.11's
``unicodedata``), written as runs by :func:`casefold_runs`, and a test checks that the table in
the JavaScript is the one this module computes. Whitespace is an explicit set for the same
reason (JavaScript's ``\\s`` and Python's ``str.isspace`` differ). NFC itself comes from each
platform; it is stable for every character assigned before Unicode 14.

Hash inputs are byte strings built by :func:`encode_fields`: each field's UTF-8 bytes preceded by
their length as 4 big-endian bytes, so no two different field lists share an encoding.

References
----------
1. The Unicode Standard, Annex #15 (normalization forms) and section 5.18 (case mappings).
"""

from __future__ import annotations

import re
import sys
import unicodedata

__all__ = ["WHITESPACE", "candidate_list", "casefold_runs", "encode_fields", "normalize_text"]

#: Characters treated as whitespace: Python's str.isspace set plus U+FEFF (a byte-order mark
#: or zero-width no-break space that some editors paste).
WHITESPACE = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_RUNS_OF_WHITESPACE = re.compile("[" + re.escape(WHITESPACE) + "]+")

#: Longest normalized answer, in characters: free text is for short answers ("other: ___").
MAX_TEXT_LENGTH = 200


def normalize_text(text: str) -> str:
    """NFC, case fold, NFC, collapse whitespace (see the module docstring).

    >>> normalize_text("  Straße\\u3000 서울 ")
    'strasse 서울'
    >>> normalize_text("\\u1100\\u1161") == normalize_text("가")  # conjoining jamo -> syllable
    True
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    folded = unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())
    return _RUNS_OF_WHITESPACE.sub(" ", folded).strip(" ")


def candidate_list(texts: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """An organizer's candidate strings, normalized, without empty strings or repeats, in order.

    >>> candidate_list(["Seoul", " seoul ", "", "부산"])
    ('seoul', '부산')
    """
    seen: dict[str, None] = {}
    for text in texts:
        normalized = normalize_text(text)
        if normalized and len(normalized) <= MAX_TEXT_LENGTH:
            seen.setdefault(normalized)
    return tuple(seen)


def encode_fields(*fields: str | int) -> bytes:
    """Length-prefixed UTF-8 of each field (integers written in decimal): an unambiguous hash input.

    >>> encode_fields("ab", 7).hex()
    '0000000261620000000137'
    """
    out = bytearray()
    for item in fields:
        if isinstance(item, bool) or not isinstance(item, (str, int)):
            raise ValueError(f"a hash field must be a string or an integer, got {item!r}")
        data = str(item).encode("utf-8")
        out += len(data).to_bytes(4, "big") + data
    return bytes(out)


def casefold_runs() -> tuple[list[tuple[int, int, int, int]], list[tuple[int, str]]]:
    """Python's full case folding as (start, count, delta, step) runs plus multi-character folds.

    A run maps code points start, start + step, ..., (count of them) to code point + delta; a
    multi-character fold maps one code point to a string. Every code point not listed folds to
    itself. ``static/ldp/text.js`` holds this table verbatim.

    >>> runs, multi = casefold_runs()
    >>> (0x41, 26, 32, 1) in runs, (0xDF, "ss") in multi
    (True, True)
    """
    single: list[tuple[int, int]] = []
    multi: list[tuple[int, str]] = []
    for code in range(sys.maxunicode + 1):
        folded = chr(code).casefold()
        if folded == chr(code):
            continue
        if len(folded) == 1:
            single.append((code, ord(folded) - code))
        else:
            multi.append((code, folded))
    runs: list[tuple[int, int, int, int]] = []
    i = 0
    while i < len(single):
        start, delta = single[i]
        j, step = i + 1, 0
        while j < len(single) and single[j][1] == delta:
            gap = single[j][0] - single[j - 1][0]
            if step == 0 and gap in (1, 2):
                step = gap
            elif gap != step:
                break
            j += 1
        runs.append((start, j - i, delta, step or 1))
        i = j
    return runs, multi
