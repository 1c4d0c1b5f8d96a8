"""The organizer API: tokens, the builder's rules through the API, and who may reach what."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.apps import apps
from django.core import serializers
from django.db import connection
from django.test import Client
from openapi_spec_validator import validate

from surveys.api import api
from surveys.integrations import ApiToken, Webhook, WebhookDelivery, new_token, token_hash
from surveys.models import Question, Survey
from tests.base import make_open_survey, make_question, make_reports, make_survey, read_body


def make_token(user: Any, scope: str = "write", name: str = "script") -> str:
    token = new_token()
    ApiToken.objects.create(owner=user, name=name, scope=scope, prefix=token[:8], token_hash=token_hash(token))
    return token


def call(client: Client, token: str | None, method: str, path: str, body: Any = None) -> Any:
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
    data = json.dumps(body) if body is not None else None
    response = getattr(client, method.lower())(path, data=data, content_type="application/json", **headers)
    if response.streaming:  # an export file: read to its end, which closes it (no file left open)
        response.body = read_body(response)
    return response


def schema() -> dict[str, Any]:
    return json.loads(json.dumps(api.get_openapi_schema()))


def test_the_schema_is_valid_openapi_3_and_served_at_a_stable_url(client):
    validate(schema())
    response = client.get("/api/v1/openapi.json")
    assert response.status_code == 200
    assert response.json()["openapi"].startswith("3.")


def test_the_docs_page_lists_every_operation_without_external_scripts(client):
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    page = response.content.decode()
    for path in schema()["paths"]:
        assert path in page
    assert not re.search(r"<script[^>]+src=\"https?://", page)


@pytest.mark.django_db
def test_a_script_builds_opens_and_reads_a_survey(client, organizer):
    token = make_token(organizer)
    response = call(client, token, "post", "/api/v1/surveys", {"title": "Pulse"})
    assert response.status_code == 201, response.content
    survey_id = response.json()["id"]
    question = {"text": "Mood?", "kind": "single", "options": ["Good", "Fine", "Bad"], "epsilon": 1.0}
    response = call(client, token, "post", f"/api/v1/surveys/{survey_id}/questions", question)
    assert response.status_code == 201, response.content
    added = response.json()
    assert added["mechanism_chosen_automatically"] and added["mechanism"] in dict(Question.MechanismName.choices)
    response = call(client, token, "post", f"/api/v1/surveys/{survey_id}/open")
    assert response.status_code == 200 and response.json()["status"] == "open"
    questions = call(client, token, "get", f"/api/v1/surveys/{survey_id}/questions").json()
    assert questions[0]["randomization"]["version"] == 1
    response = call(client, token, "get", f"/api/v1/surveys/{survey_id}/transparency")
    assert response.status_code == 200 and len(response.json()["digest"]) == 64


@pytest.mark.django_db
def test_the_api_refuses_what_the_builder_refuses(client, organizer):
    token = make_token(organizer)
    survey = make_survey(organizer, epsilon_cap=2.0)
    path = f"/api/v1/surveys/{survey.pk}/questions"
    too_few = call(client, token, "post", path, {"text": "One option", "options": ["Only"]})
    assert too_few.status_code == 422 and "options" in too_few.json()["fields"]
    over_cap = call(client, token, "post", path, {"text": "Big", "options": ["a", "b"], "epsilon": 3.0})
    assert over_cap.status_code == 422 and "epsilon" in over_cap.json()["fields"]
    no_range = call(client, token, "post", path, {"text": "Hours?", "kind": "numeric"})
    assert no_range.status_code == 422
    assert not survey.questions.exists()


@pytest.mark.django_db
def test_a_question_with_reports_keeps_its_randomization(client, organizer):
    token = make_token(organizer)
    survey = make_open_survey(organizer)
    question = survey.questions.get()
    make_reports(question, [0, 1, 2] * 5)
    path = f"/api/v1/surveys/{survey.pk}/questions/{question.pk}"
    refused = call(client, token, "patch", path, {"epsilon": 2.0})
    assert refused.status_code == 422 and "epsilon" in refused.json()["fields"]
    reworded = call(client, token, "patch", path, {"text": "How are you today?"})
    assert reworded.status_code == 200 and reworded.json()["text"] == "How are you today?"
    assert call(client, token, "delete", path).status_code == 409


@pytest.mark.django_db
def test_invitation_links_are_shown_once_and_never_listed(client, organizer):
    token = make_token(organizer)
    survey = make_open_survey(organizer, invite_only=True)
    response = call(client, token, "post", f"/api/v1/surveys/{survey.pk}/invitations/links", {"count": 3})
    assert response.status_code == 201 and response["Cache-Control"] == "no-store"
    links = response.json()["links"]
    assert len(links) == 3
    listed = call(client, token, "get", f"/api/v1/surveys/{survey.pk}/invitations")
    assert listed.json() == {"total": 3, "used": 0, "unused": 3, "with_email": 0}
    for link in links:
        assert link.split("#invite=")[1] not in listed.content.decode()


# -- authorization --------------------------------------------------------------------------------


def operations() -> list[tuple[str, str, bool]]:
    """Every (method, path, needs a write token) of the schema."""
    found = []
    for path, item in schema()["paths"].items():
        for method, operation in item.items():
            writes = any("WriteToken" in scheme for scheme in operation["security"])
            found.append((method, path, writes))
    return found


def minimal_body(method: str, path: str) -> Any:
    """A body the operation would accept for its own survey (the refusal must not come from the body)."""
    bodies = {
        "/api/v1/surveys": {"title": "Mine"},
        "/api/v1/surveys/{survey_id}": {"title": "Renamed"},
        "/api/v1/surveys/{survey_id}/questions": {"text": "Q", "options": ["a", "b"]},
        "/api/v1/surveys/{survey_id}/questions/{question_id}": {"text": "Reworded"},
        "/api/v1/surveys/{survey_id}/matrices": {"title": "M", "items": ["x", "y"], "options": ["a", "b"]},
        "/api/v1/surveys/{survey_id}/pairs": {"first": 1, "second": 2},
        "/api/v1/surveys/{survey_id}/recurrence": {"recurrence": "manual"},
        "/api/v1/surveys/{survey_id}/invitations/links": {"count": 1},
        "/api/v1/surveys/{survey_id}/invitations/emails": {"emails": ["x@example.com"]},
        "/api/v1/surveys/{survey_id}/webhooks": {"url": "https://example.com/hook"},
        "/api/v1/surveys/{survey_id}/languages": {"language": "en", "base": "ko"},
        "/api/v1/surveys/{survey_id}/languages/{language}": {"texts": {}},
    }
    return bodies.get(path) if method != "get" else None


def fill(path: str, survey: Survey, question: Question) -> str:
    hook = Webhook.objects.filter(survey=survey).first()
    return (
        path.replace("{survey_id}", str(survey.pk))
        .replace("{question_id}", str(question.pk))
        .replace("{webhook_id}", str(hook.pk if hook else 1))
        .replace("{name}", "estimates.json")
        .replace("{language}", "en")
    )


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Webhook tests post to a fake receiver: no request leaves the machine."""
    monkeypatch.setattr("surveys.webhooks.http_post", lambda url, body, headers: 204)


def snapshot(survey_id: int) -> str:
    """Everything stored about a survey, to compare before and after."""
    survey = Survey.objects.filter(pk=survey_id)
    questions = Question.objects.filter(survey_id=survey_id)
    invitations = [i for s in survey for i in s.invitations.all()]
    hooks = list(Webhook.objects.filter(survey_id=survey_id))
    deliveries = list(WebhookDelivery.objects.filter(webhook__survey_id=survey_id))
    return serializers.serialize("json", [*survey, *questions, *invitations, *hooks, *deliveries])


@pytest.mark.django_db
def test_no_route_lets_one_owner_read_or_change_anothers_survey(client, organizer, other_organizer):
    theirs = make_open_survey(other_organizer, title="Bob's")
    Webhook.objects.create(survey=theirs, url="https://example.com/bob")
    make_question(theirs, text="Second")
    question = theirs.questions.first()
    make_reports(question, [0, 1] * 5)
    mine = make_token(organizer)
    before = snapshot(theirs.pk)
    walked = 0
    for method, path, _writes in operations():
        if "{survey_id}" not in path:
            continue
        response = call(client, mine, method, fill(path, theirs, question), minimal_body(method, path))
        assert response.status_code == 404, (method, path, response.status_code)
        assert "Bob" not in response.content.decode()
        walked += 1
    assert walked >= 24
    assert snapshot(theirs.pk) == before
    listed = call(client, mine, "get", "/api/v1/surveys").json()
    assert [s["title"] for s in listed] == []


@pytest.mark.django_db
def test_a_read_token_cannot_write_anything(client, organizer):
    survey = make_survey(organizer)
    question = make_question(survey)
    Webhook.objects.create(survey=survey, url="https://example.com/alice")
    reader = make_token(organizer, scope="read")
    before = snapshot(survey.pk)
    for method, path, writes in operations():
        response = call(client, reader, method, fill(path, survey, question), minimal_body(method, path))
        if writes:
            assert response.status_code == 403, (method, path, response.status_code)
        else:
            assert response.status_code == 200, (method, path, response.status_code, response.content[:200])
    assert snapshot(survey.pk) == before
    assert Survey.objects.filter(owner=organizer).count() == 1


@pytest.mark.django_db
def test_a_revoked_token_is_refused_at_once(client, organizer):
    token = make_token(organizer)
    assert call(client, token, "get", "/api/v1/surveys").status_code == 200
    client.force_login(organizer)
    row = ApiToken.objects.get()
    assert client.post(f"/accounts/tokens/{row.pk}/revoke/").status_code == 302
    response = call(client, token, "get", "/api/v1/surveys")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Bearer"


@pytest.mark.django_db
def test_the_database_holds_no_token_in_clear(client, organizer):
    client.force_login(organizer)
    response = client.post("/accounts/tokens/", {"name": "nightly", "scope": "read"})
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    token = re.search(r"mur_[A-Za-z0-9_-]{43}", response.content.decode()).group(0)
    assert call(client, token, "get", "/api/v1/surveys").status_code == 200
    tables = set(connection.introspection.table_names())
    for model in apps.get_models():  # every table of every app (django-rq's dashboard model has none)
        if model._meta.db_table not in tables:
            continue
        stored = serializers.serialize("json", model._default_manager.all())
        assert token not in stored and token[8:] not in stored, model
    page = client.get("/accounts/tokens/").content.decode()
    assert token not in page and "nightly" in page


@pytest.mark.django_db
def test_someone_elses_token_cannot_be_revoked(client, organizer, other_organizer):
    make_token(other_organizer)
    client.force_login(organizer)
    row = ApiToken.objects.get()
    assert client.post(f"/accounts/tokens/{row.pk}/revoke/").status_code == 404
    row.refresh_from_db()
    assert row.revoked_at is None


@pytest.mark.django_db
def test_wrong_tokens_are_throttled_like_passwords(client, organizer, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "api_auth": [(3, 900)]}
    good = make_token(organizer)
    for _ in range(3):
        assert call(client, "mur_wrong", "get", "/api/v1/surveys").status_code == 401
    assert call(client, "mur_wrong", "get", "/api/v1/surveys").status_code == 429
    refused = call(client, good, "get", "/api/v1/surveys")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0


@pytest.mark.django_db
def test_each_token_has_its_own_request_budget(client, organizer, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "api": [(2, 60)]}
    first, second = make_token(organizer), make_token(organizer)
    assert [call(client, first, "get", "/api/v1/surveys").status_code for _ in range(3)] == [200, 200, 429]
    assert call(client, second, "get", "/api/v1/surveys").status_code == 200


@pytest.mark.django_db
def test_a_patch_changes_only_what_it_names_and_null_empties(client, organizer):
    token = make_token(organizer)
    survey = make_survey(organizer, epsilon_cap=5.0, invite_only=True)
    path = f"/api/v1/surveys/{survey.pk}"
    renamed = call(client, token, "patch", path, {"title": "Renamed"}).json()
    assert (renamed["title"], renamed["epsilon_cap"], renamed["invite_only"]) == ("Renamed", 5.0, True)
    assert call(client, token, "patch", path, {"epsilon_cap": None}).json()["epsilon_cap"] is None
    question = call(
        client,
        token,
        "post",
        f"{path}/questions",
        {"text": "Hours?", "kind": "numeric", "range_low": 0, "range_high": 40, "bins": 4},
    ).json()
    assert question["bins"] == 4 and len(question["options"]) == 4
    patched = call(client, token, "patch", f"{path}/questions/{question['id']}", {"bins": None}).json()
    assert patched["bins"] is None and patched["options"] == [] and patched["range_high"] == 40


#: A valid body per kind the builder offers (matrix items and pairs have their own operations).
EVERY_KIND = {
    "single": {"options": ["Good", "Fine", "Bad"]},
    "yes_no": {"options": ["Yes", "No"]},
    "numeric": {"range_low": 0, "range_high": 40, "unit": "hours"},
    "rating": {"scale": "1-5", "low_label": "Poor", "high_label": "Great"},
    "text": {"epsilon": 4.0, "candidates": ["coffee", "tea"]},
    "multi_select": {"options": ["A", "B", "C", "D"], "max_choices": 2},
}


@pytest.mark.django_db
def test_every_kind_the_builder_offers_can_be_added_with_automatic_or_a_chosen_mechanism(client, organizer):
    from surveys.kinds import kind_of

    offered = {value for value, _ in Question.Kind.choices if not kind_of(value).made_elsewhere}
    assert offered == set(EVERY_KIND)
    token = make_token(organizer)
    survey = make_survey(organizer, epsilon_cap=None)
    path = f"/api/v1/surveys/{survey.pk}/questions"
    for kind, fields in EVERY_KIND.items():
        automatic = call(client, token, "post", path, {"text": kind, "kind": kind, **fields})
        assert automatic.status_code == 201, (kind, automatic.content)
        chosen = automatic.json()["mechanism"]
        again = call(client, token, "post", path, {"text": kind, "kind": kind, "mechanism": chosen, **fields})
        assert again.status_code == 201 and not again.json()["mechanism_chosen_automatically"]
    matrix = call(
        client,
        token,
        "post",
        f"/api/v1/surveys/{survey.pk}/matrices",
        {"title": "M", "items": ["x", "y"], "options": ["a", "b"]},
    )
    assert matrix.status_code == 201 and {q["kind"] for q in matrix.json()} == {"matrix"}
    first, second = (q["id"] for q in call(client, token, "get", path).json()[:2])
    pair = call(client, token, "post", f"/api/v1/surveys/{survey.pk}/pairs", {"first": first, "second": second})
    assert pair.status_code == 201 and pair.json()["kind"] == "pair"
    assert call(client, token, "post", f"/api/v1/surveys/{survey.pk}/open").json()["status"] == "open"


@pytest.mark.django_db
def test_a_raw_report_export_answers_202_until_its_job_has_written_the_file(client, organizer, settings):
    settings.JOBS_QUEUE = "db"  # as in production: the job waits for a worker
    survey = make_open_survey(organizer)
    make_reports(survey.questions.get(), [0, 1, 2, 1], seed=3)
    token = make_token(organizer, scope="read")
    path = f"/api/v1/surveys/{survey.pk}/exports/reports.csv"
    pending = call(client, token, "get", path)
    assert pending.status_code == 202 and pending.json()["retry_after"] > 0
    from surveys.jobs.worker import run_pending

    assert run_pending() == 1
    ready = call(client, token, "get", path)
    assert ready.status_code == 200
    rows = ready.body.decode("utf-8-sig").splitlines()
    assert len(rows) == 1 + 4  # the header and the four reports


def automatic_and_named(client: Client, organizer: Any) -> tuple[str, Survey, str, dict[str, Any], dict[str, Any]]:
    """An open survey (token, survey, questions path) with a question left on "auto" and one on OUE by name."""
    token = make_token(organizer)
    survey = make_survey(organizer)
    path = f"/api/v1/surveys/{survey.pk}/questions"
    body = {"text": "Mood?", "kind": "single", "options": ["Good", "Fine", "Bad"], "epsilon": 1.0}
    automatic = call(client, token, "post", path, body).json()
    named = call(client, token, "post", path, {**body, "text": "Named?", "mechanism": "oue"}).json()
    assert call(client, token, "post", f"/api/v1/surveys/{survey.pk}/open").status_code == 200
    return token, survey, path, automatic, named


@pytest.mark.django_db
def test_a_mechanism_named_through_the_api_is_chosen_by_hand_and_auto_leaves_it_to_the_advisor(client, organizer):
    """As in the builder: naming a mechanism pins it (``mechanism_chosen_automatically`` false, and the
    card stops saying "chosen automatically"); "auto", or no mechanism on a new question, leaves it to
    the advisor. In an open survey each change is a new randomization version that the transparency
    statement shows in force."""
    from django.urls import reverse

    token, survey, path, omitted, named = automatic_and_named(client, organizer)
    assert (omitted["mechanism_chosen_automatically"], named["mechanism_chosen_automatically"]) == (True, False)
    assert named["mechanism"] == "oue" and omitted["mechanism"] != "oue"
    client.force_login(organizer)

    def card(question_id: int) -> str:
        url = reverse("question_card", args=[survey.pk, question_id])
        html = client.get(url, HTTP_HX_REQUEST="true").content.decode()
        return html.split('class="params"', 1)[1].split("</p>", 1)[0]

    def in_force(question_id: int) -> tuple[int, str]:
        versions = call(client, token, "get", f"/api/v1/surveys/{survey.pk}/transparency").json()["versions"]
        (found,) = [
            (v["version"], v["mechanism"]) for v in versions if v["question_id"] == question_id and v["in_force"]
        ]
        return found

    assert "chosen automatically" in card(omitted["id"]) and "chosen automatically" not in card(named["id"])
    # Each direction in the open survey (no reports yet): by name, then back to "auto".
    pinned = call(client, token, "patch", f"{path}/{omitted['id']}", {"mechanism": "oue"}).json()
    assert (pinned["mechanism"], pinned["mechanism_chosen_automatically"]) == ("oue", False)
    assert in_force(omitted["id"]) == (pinned["randomization"]["version"], "oue")
    assert "chosen automatically" not in card(omitted["id"])
    freed = call(client, token, "patch", f"{path}/{named['id']}", {"mechanism": "auto"}).json()
    assert freed["mechanism_chosen_automatically"] and freed["mechanism"] == omitted["mechanism"]
    assert in_force(named["id"]) == (freed["randomization"]["version"], omitted["mechanism"])
    assert "chosen automatically" in card(named["id"])
    # A PATCH that leaves the mechanism out keeps how it was chosen.
    reworded = call(client, token, "patch", f"{path}/{named['id']}", {"text": "Reworded?"}).json()
    assert reworded["mechanism_chosen_automatically"] and reworded["randomization"] == freed["randomization"]


@pytest.mark.django_db
def test_a_frozen_question_written_back_as_read_keeps_its_mechanism_and_how_it_was_chosen(client, organizer):
    """Once reports froze a question, its mechanism cannot change, nor can how it was chosen (the
    builder's field is disabled): a client that writes the question back as it read it (the mechanism
    by name) only rewords it, whether Automatic chose the mechanism or the organizer did; asking for
    another mechanism, or for "auto" on one chosen by hand, is refused as the builder refuses it."""
    token, _survey, path, automatic, by_hand = automatic_and_named(client, organizer)
    for question in (automatic, by_hand):
        make_reports(Question.objects.get(pk=question["id"]), [0, 1, 2, 1])
    for question in (automatic, by_hand):
        read = call(client, token, "get", f"{path}/{question['id']}").json()
        written = {name: read[name] for name in ("kind", "options", "epsilon", "mechanism")}
        response = call(client, token, "patch", f"{path}/{question['id']}", {**written, "text": "Reworded?"})
        assert response.status_code == 200, response.content
        after = response.json()
        assert after["text"] == "Reworded?"
        for name in ("mechanism", "mechanism_chosen_automatically", "randomization"):
            assert after[name] == read[name], name
    other = "krr" if automatic["mechanism"] != "krr" else "oue"
    for question, mechanism in ((automatic, other), (by_hand, "krr"), (by_hand, "auto")):
        refused = call(client, token, "patch", f"{path}/{question['id']}", {"mechanism": mechanism})
        assert refused.status_code == 422 and "mechanism" in refused.json()["fields"]
