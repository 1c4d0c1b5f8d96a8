"""Hypothesis over the organizer API's OpenAPI schema: for every operation, requests drawn from the
schema (and arbitrary JSON beside it) never get a 5xx, never a status the schema does not list, and
never a JSON body that breaks the schema it documents for that status."""

from __future__ import annotations

import datetime
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from surveys.api import api
from surveys.api.results import EXPORTS
from surveys.integrations import Webhook
from tests.base import make_open_survey, make_question, make_reports, make_survey
from tests.languages import make_bilingual
from tests.surveys.test_api import call, make_token, no_network  # noqa: F401 (an autouse fixture)

SCHEMA = json.loads(json.dumps(api.get_openapi_schema()))
COMPONENTS = SCHEMA["components"]["schemas"]
EXAMPLES = max(10, min(100, hypothesis_settings.default.max_examples // 30))


def resolve(node: Any) -> Any:
    """The schema with every ``#/components/schemas/X`` reference replaced by X itself."""
    if isinstance(node, dict):
        if "$ref" in node:
            return resolve(COMPONENTS[node["$ref"].rsplit("/", 1)[-1]])
        return {key: resolve(value) for key, value in node.items()}
    if isinstance(node, list):
        return [resolve(value) for value in node]
    return node


json_values: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values of the JSON Schema subset pydantic writes (objects, anyOf, enums, bounds, date-times);
    optional properties are sometimes left out. (hypothesis-jsonschema does not run on our Hypothesis.)"""
    if "anyOf" in schema:
        return st.one_of([from_schema(option) for option in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "object":
        properties = schema.get("properties", {})
        required = set(schema.get("required", []))
        fixed = {name: from_schema(sub) for name, sub in properties.items() if name in required}
        optional = {name: from_schema(sub) for name, sub in properties.items() if name not in required}
        return st.fixed_dictionaries(fixed, optional=optional)
    if kind == "array":
        items = from_schema(schema.get("items", {}))
        return st.lists(items, min_size=schema.get("minLength", schema.get("minItems", 0)), max_size=8)
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum")) | st.integers()
    if kind == "number":
        return st.floats(allow_nan=False) | st.integers(-(10**6), 10**6)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "string":
        if schema.get("format") == "date-time":
            return st.datetimes(timezones=st.just(datetime.UTC)).map(lambda d: d.isoformat()) | st.text()
        return st.text(max_size=40) | st.sampled_from(["single", "numeric", "rating", "auto", "krr", "1-5", "a\nb"])
    return json_values


OPERATIONS = [(method, path, operation) for path, item in SCHEMA["paths"].items() for method, operation in item.items()]


@pytest.fixture
def world(organizer, other_organizer):
    """Ids worth hitting: the token owner's draft and open surveys and questions, and a stranger's."""
    draft = make_survey(organizer, title="Draft")
    make_question(draft, text="Draft question")
    make_bilingual(draft, base="ko", other="en")  # a language to translate and to remove
    opened = make_open_survey(organizer, questions=2, title="Open")
    make_reports(opened.questions.first(), [0, 1, 2] * 4)
    theirs = make_open_survey(other_organizer, title="Theirs")
    hooks = [Webhook.objects.create(survey=s, url="https://example.com/hook").pk for s in (opened, theirs)]
    surveys = [draft.pk, opened.pk, theirs.pk]
    questions = [q.pk for s in (draft, opened, theirs) for q in s.questions.all()]
    return {"token": make_token(organizer), "surveys": surveys, "questions": questions, "hooks": hooks}


def path_values(path: str, world: dict[str, Any]) -> st.SearchStrategy[str]:
    ids = st.integers(min_value=1, max_value=2**63 - 1)
    survey = st.sampled_from(world["surveys"]) | ids
    question = st.sampled_from(world["questions"]) | ids
    hook = st.sampled_from(world["hooks"]) | ids
    name = st.sampled_from(sorted(EXPORTS)) | st.text(
        st.characters(codec="ascii", exclude_characters="/?#%"), min_size=1, max_size=12
    )
    language = st.sampled_from(["en", "ko", "ja"]) | st.text(
        st.characters(codec="ascii", exclude_characters="/?#%"), min_size=1, max_size=12
    )
    return st.builds(
        lambda s, q, h, n, code: (
            path.replace("{survey_id}", str(s))
            .replace("{question_id}", str(q))
            .replace("{webhook_id}", str(h))
            .replace("{name}", n)
            .replace("{language}", code)
        ),
        survey,
        question,
        hook,
        name,
        language,
    )


def check(operation: dict[str, Any], response: Any) -> None:
    status = response.status_code
    assert status < 500, response.content[:500]
    documented = operation["responses"]
    assert str(status) in documented, (status, response.content[:300])
    content = documented[str(status)].get("content", {})
    if "application/json" in content:
        body = response.json()
        Draft202012Validator(resolve(content["application/json"]["schema"])).validate(body)


@pytest.mark.parametrize(("method", "path", "operation"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS])
@pytest.mark.django_db
def test_no_request_drawn_from_the_schema_breaks_the_api(client, world, method, path, operation, settings):
    settings.RATE_LIMITS_ENABLED = False  # hundreds of requests from one token, on purpose
    body_schema = (
        resolve(operation["requestBody"]["content"]["application/json"]["schema"])
        if "requestBody" in operation
        else None
    )
    bodies = st.none() if body_schema is None else from_schema(body_schema) | json_values

    @hypothesis_settings(max_examples=EXAMPLES)
    @given(target=path_values(path, world), body=bodies)
    def run(target: str, body: Any) -> None:
        check(operation, call(client, world["token"], method, target, body))

    run()


#: A question of each kind the API adds, "Prefer not to say" where offered, as a script would write it.
QUESTIONS = [
    {"text": "Fruit?", "kind": "single", "options": ["Apple", "Pear"], "prefer_not_to_say": True},
    {"text": "Smoke?", "kind": "yes_no", "prefer_not_to_say": True},
    {"text": "Hours?", "kind": "numeric", "range_low": 0, "range_high": 40, "unit": "hours"},
    {"text": "Mood?", "kind": "rating", "scale": "1-5", "low_label": "Low", "high_label": "High"},
    {"text": "Tools?", "kind": "multi_select", "options": ["A", "B", "C"]},
    {"text": "Word?", "kind": "text", "candidates": ["yes"]},
]


@pytest.mark.django_db
@pytest.mark.parametrize("question", QUESTIONS, ids=[q["kind"] for q in QUESTIONS])
def test_a_question_read_from_the_api_is_taken_back_as_it_is(client, organizer, question):
    """What the API emits for a question, its writable fields (QuestionOut's that QuestionIn and
    QuestionPatch take), matches the request schemas and is accepted: a PATCH of them all changes
    nothing, and a POST of them into another survey makes the same question."""
    token = make_token(organizer)
    survey, other = make_survey(organizer), make_survey(organizer, title="Copy")
    created = call(client, token, "post", f"/api/v1/surveys/{survey.pk}/questions", question)
    assert created.status_code == 201, created.content
    read = created.json()
    writable = set(COMPONENTS["QuestionIn"]["properties"]) & set(COMPONENTS["QuestionOut"]["properties"])
    body = {name: read[name] for name in writable}
    for schema in ("QuestionIn", "QuestionPatch"):
        Draft202012Validator(resolve(COMPONENTS[schema])).validate(body)
    patched = call(client, token, "patch", f"/api/v1/surveys/{survey.pk}/questions/{read['id']}", body)
    copied = call(client, token, "post", f"/api/v1/surveys/{other.pk}/questions", body)
    assert (patched.status_code, copied.status_code) == (200, 201), (patched.content, copied.content)
    same = writable - {"mechanism"}  # written back by name, the mechanism is no longer "chosen automatically"
    for answer in (patched.json(), copied.json()):
        assert {name: answer[name] for name in same} == {name: read[name] for name in same}
