"""Property-based fuzzing of the submit endpoint (Hypothesis): whatever the body, never a 5xx.

Bodies are drawn from every family that broke or could break parsing: arbitrary bytes, text that
is not UTF-8, arbitrary JSON of every type, nesting from hundreds to 100,000 levels, long arrays,
duplicate keys, NaN and huge numbers, invitation tokens never made, valid submissions with one
field of one report replaced by a value of another type, garbled tokens, and tokens properly
signed (as by someone holding the key) around payloads that are not the object the server signs.
Each answer must be a 4xx with a JSON sentence saying why, and a refused body must store nothing;
a body that happens to be valid may be stored once (201). How many bodies is the Hypothesis
profile's (tests/conftest.py): 300 in make test ("dev"), 10,000 in make test-all and CI ("ci").
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from django.core import signing
from django.db import connection
from django.test import Client
from django.urls import reverse
from hypothesis import given
from hypothesis import strategies as st

from surveys import actions
from surveys.models import HourlyResponses, Report, Submission, TallyCell
from surveys.responding.submissions import TOKEN_SALT, new_token
from tests.base import make_number_question, make_question, make_survey


@pytest.fixture
def survey(organizer, settings):
    settings.RATE_LIMITS_ENABLED = False  # thousands of posts from one client
    survey = make_survey(organizer, allow_repeat_responses=True)
    make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"])
    make_question(survey, text="Cycle?", kind="yes_no", options=["Yes", "No"], mechanism="oue")
    make_question(
        survey,
        text="Day?",
        options=["Mon", "Tue", "Wed", "Thu"],
        mechanism="cms",
        mechanism_params={"hash_count": 4, "width": 8, "hash_seed": 0},
    )
    make_question(survey, text="Pet?", options=["Cat", "Dog", "Fish", "Bird", "Frog"], mechanism="olh")
    make_question(survey, text="Rate us", kind="rating", options=["1", "2", "3", "4", "5"], scale="1-5")
    make_number_question(survey, text="Age?", lo=18, hi=90)
    actions.do_open_survey(survey)
    return survey


def valid_items(survey: Any) -> list[dict[str, Any]]:
    items = []
    for question in survey.questions.all():
        randomization = question.current_randomization()
        mechanism = randomization.build_mechanism()
        value = randomization.question.range_low if randomization.question.kind == "numeric" else 0
        packed = mechanism.randomize(np.array([value]), rng=0)[0].tobytes()
        items.append(
            {"question": question.pk, "version": randomization.version, "report": mechanism.unpack_report(packed)}
        )
    return items


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=6), st.dictionaries(st.text(max_size=12), children, max_size=6)
    ),
    max_leaves=30,
)


def deep(depth: int, opening: str, closing: str, inner: str = "0") -> bytes:
    return (opening * depth + inner + closing * depth).encode()


deep_bodies = st.builds(
    deep,
    st.sampled_from([200, 999, 1_000, 1_001, 5_000, 100_000]),
    st.sampled_from(["[", '{"a":', '{"token":"x","reports":[']),
    st.sampled_from(["]", "}", "]}"]),
)
#: Balanced deep nesting in the slot where a report goes.
deep_report = st.integers(min_value=2, max_value=3_000).map(lambda depth: {"__deep__": depth})

non_utf8 = st.one_of(
    st.binary(max_size=200),
    st.text(min_size=1, max_size=40).map(lambda text: json.dumps({"token": text, "reports": []}).encode("utf-16")),
    st.sampled_from([b'{"token": "\xff", "reports": []}', b"\xc3\x28", b"\xed\xa0\x80", b'"\xf8\x88\x80\x80\x80"']),
)
raw_json_text = st.sampled_from(
    [
        b'{"token": NaN, "reports": []}',
        b'{"token": "a", "reports": [Infinity]}',
        b'{"token": "a", "reports": [-Infinity]}',
        b"1" * 5_000,
        b'{"token": "a", "reports": [' + b"1" * 5_000 + b"]}",
        b"[" + b"0," * 60_000 + b"0]",
        b'{"token": "\\ud800", "reports": []}',
        b"",
        b"null",
        b"\x00",
        b"{",
        b'{"token": "a", "token": "b", "reports": []}',
    ]
)


@st.composite
def submissions(draw: Any, survey: Any, items: list[dict[str, Any]]) -> bytes:
    """A valid submission (``items``: every question's valid report, made once per run) with one part
    replaced by something else, serialized or spliced as text."""
    token = new_token(survey)
    token_kind = draw(st.sampled_from(["valid", "garbled", "forged", "other"]))
    if token_kind == "garbled":
        position = draw(st.integers(0, len(token) - 1))
        token = token[:position] + draw(st.text(min_size=0, max_size=3)) + token[position + 1 :]
    elif token_kind == "forged":
        # Signed with the real key and salt (a leaked key, another deployment's token...) around a
        # payload that is not {"survey": id, "nonce": text}.
        payload = draw(
            st.one_of(
                json_values,
                st.fixed_dictionaries({"survey": json_values, "nonce": json_values}),
                st.fixed_dictionaries({"survey": st.just(survey.pk)}),
                st.fixed_dictionaries({"survey": st.just(survey.pk), "nonce": json_values, "extra": json_values}),
            )
        )
        token = signing.dumps(payload, salt=TOKEN_SALT)
    elif token_kind == "other":
        token = draw(json_values)
    chosen = draw(st.lists(st.integers(0, len(items) - 1), unique=True, max_size=len(items)))
    reports: Any = [items[i] for i in chosen]
    part = draw(st.sampled_from(["report", "question", "version", "item", "reports", "extra", "none"]))
    if reports and part in ("report", "question", "version"):
        index = draw(st.integers(0, len(reports) - 1))
        replacement = draw(st.one_of(json_values, deep_report))
        if part == "report" and isinstance(reports[index]["report"], dict) and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(reports[index]["report"])))
            replacement = {**reports[index]["report"], key: replacement}
        reports[index] = {**reports[index], part: replacement}
    elif reports and part == "item":
        reports[draw(st.integers(0, len(reports) - 1))] = draw(json_values)
    elif part == "reports":
        reports = draw(json_values)
    payload: dict[str, Any] = {"token": token, "reports": reports}
    if part == "extra":
        payload[draw(st.text(max_size=8))] = draw(json_values)
    if draw(st.booleans()) and draw(st.booleans()):
        # An invitation token that was never made (or is not even text).
        payload["invite"] = draw(st.one_of(json_values, st.text(min_size=16, max_size=64)))
    text = json.dumps(payload, allow_nan=False)
    if '{"__deep__": ' in text:
        start = text.index('{"__deep__": ')
        end = text.index("}", start) + 1
        depth = json.loads(text[start:end])["__deep__"]
        text = text[:start] + "[" * depth + "1" + "]" * depth + text[end:]
    if draw(st.booleans()) and draw(st.booleans()):
        # The same key twice, spliced in as text (json.dumps never writes it).
        key = draw(st.sampled_from(["token", "reports"]))
        text = f'{{"{key}": {json.dumps(payload.get(key))}, {text[1:]}'
    return text.encode()


def bodies(survey: Any) -> st.SearchStrategy[bytes]:
    items = valid_items(survey)
    return st.one_of(
        submissions(survey, items),
        submissions(survey, items),
        submissions(survey, items),
        json_values.map(lambda value: json.dumps(value).encode()),
        deep_bodies,
        non_utf8,
        raw_json_text,
    )


def stored_counts() -> tuple[int, ...]:
    """How many submissions, reports, tally cells and hourly counts are stored, in one query (the
    fuzz asks twice per body)."""
    tables = [model._meta.db_table for model in (Submission, Report, TallyCell, HourlyResponses)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {table})" for table in tables))
        return tuple(cursor.fetchone())


def check_body(client: Any, survey: Any, body: bytes) -> None:
    before = stored_counts()
    response = client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")
    assert response.status_code < 500, body[:300]
    if response.status_code == 201:
        assert Submission.objects.count() == before[0] + 1
        return
    assert 400 <= response.status_code < 500, (response.status_code, body[:300])
    assert response["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert isinstance(error, str) and error.strip()
    assert stored_counts() == before, body[:300]


@pytest.mark.first
def test_malformed_bodies_are_refused_cleanly(client, survey):
    @given(body=bodies(survey))
    def fuzz(body: bytes) -> None:
        check_body(client, survey, body)

    fuzz()


@pytest.mark.parametrize(
    "body",
    [
        deep(100_000, "[", "]"),
        deep(40_000, '{"a":', "}"),  # 240 kB, under the 256 kB limit
        b'{"token": "x", "reports": [' + deep(100_000, "[", "]") + b"]}",
    ],
    ids=["array", "object", "inside-reports"],
)
def test_a_body_nested_tens_of_thousands_of_levels_is_a_400_saying_so(client, survey, body):
    response = client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"] == "The submission is nested too deeply."
    assert stored_counts() == (0, 0, 0, 0)


def test_duplicate_keys_are_refused(client, survey):
    token = json.dumps(new_token(survey))
    body = f'{{"token": {token}, "token": {token}, "reports": {json.dumps(valid_items(survey))}}}'
    response = client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")
    assert response.status_code == 400
    assert "same field twice" in response.json()["error"]
    assert stored_counts() == (0, 0, 0, 0)


@pytest.mark.parametrize(
    "payload",
    [
        [1, 2],
        "text",
        7,
        None,
        {"survey": "PK"},
        {"nonce": "n"},
        {"survey": True, "nonce": "n"},
        {"survey": "PK", "nonce": 5},
        {"survey": "PK", "nonce": "n", "more": 1},
    ],
)
def test_a_signed_token_whose_payload_is_not_the_expected_object_is_a_400(client, survey, payload):
    if isinstance(payload, dict) and payload.get("survey") == "PK":
        payload = {**payload, "survey": survey.pk}
    body = json.dumps({"token": signing.dumps(payload, salt=TOKEN_SALT), "reports": valid_items(survey)})
    response = client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"] in ("The page token is not valid.", "The page token belongs to another survey.")
    assert stored_counts() == (0, 0, 0, 0)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b'{"token": "\\ud800:a:b", "reports": []}', "The page token is not valid."),
        ("{}".encode("utf-16"), "The submission is not UTF-8 text."),
        (b'{"token": NaN, "reports": []}', "The submission is not valid JSON."),
        (b"[" + b"9" * 5_000 + b"]", "The submission is not valid JSON."),
    ],
    ids=["surrogate-token", "utf-16", "nan", "5000-digit-number"],
)
def test_odd_text_is_a_400_with_a_sentence(client, survey, body, message):
    response = client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")
    assert (response.status_code, response.json()["error"]) == (400, message)
    assert stored_counts() == (0, 0, 0, 0)


def test_an_unknown_link_gets_a_json_404(client, survey):
    response = client.post(reverse("submit", args=["no-such-survey"]), b"{}", content_type="application/json")
    assert response.status_code == 404
    assert response.json()["error"]


def test_a_submission_without_its_csrf_token_gets_a_json_403(survey):
    client = Client(enforce_csrf_checks=True)
    body = json.dumps({"token": new_token(survey), "reports": valid_items(survey)})
    response = client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")
    assert response.status_code == 403
    assert response.json()["error"] == "This page expired for your security. Reload it and answer again."
    assert stored_counts() == (0, 0, 0, 0)


def test_the_fuzzers_starting_point_is_a_valid_submission(client, survey):
    """Every mutation starts from this body, so the fuzz probes just past what is accepted."""
    body = json.dumps({"token": new_token(survey), "reports": valid_items(survey)})
    response = client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json")
    assert response.status_code == 201, response.content
    assert stored_counts()[1] == survey.questions.count() == 6
