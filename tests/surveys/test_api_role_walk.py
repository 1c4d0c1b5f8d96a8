"""The organizer API's authorization walk: every operation of the schema, with a read token and a
read-and-write token of each of a workspace's owner, editor and viewer, an outsider and staff, on the
workspace's open survey with reports.

The API must never allow more than the pages, and must let each role do what the pages let it do:

- Each operation's need (``NEEDS``) is its page's (tests/surveys/test_role_walk.py): the builder's
  pages need ``edit``, deleting a survey ``manage``, results ``view``, raw-report downloads
  ``export``. Roles grant needs as on the pages (the page walk's ``GRANTED``: staff may read and
  export every survey's results and change nothing).
- **0 leaks**: whoever lacks an operation's need gets 403 or 404, and the answer names neither the
  survey, its questions nor its workspace; a read token's writes get 403 whatever its owner may do.
- **0 unauthorized changes**: after every refused request the survey, its questions, matrices,
  invitations, webhooks and their deliveries, languages and translations, the workspace's members
  and audit log, and the count of surveys are exactly as before.
- whoever has the need gets the owner's answer, and the owner's answers are successes (2xx) but for
  the lifecycle refusals this open survey with reports must get (``OWNER_CONFLICTS``). Each allowed
  write runs in a transaction rolled back after it, so every role starts from the same state.

An operation the tables below do not classify (added later) fails ``test_every_operation_is_classified``,
as an unclassified page route fails the page walk; so does a new export file name.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from django.db import transaction
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from surveys.api.results import EXPORTS
from surveys.integrations import Webhook, WebhookDelivery
from surveys.models import AuditEntry, Invitation, Matrix, Membership, Question, Survey, Workspace
from surveys.translations import SurveyLanguage, Translation
from tests.base import make_question, make_survey, make_user
from tests.languages import make_bilingual
from tests.surveys.test_api import call, make_token, operations, schema
from tests.surveys.test_role_walk import GRANTED  # what each role may do: the page walk's table
from tests.teams import make_team

ROLES = ("owner", "editor", "viewer", "outsider", "staff")
S = "/api/v1/surveys/{survey_id}"
#: Each operation's need, from its page's: ``own`` operations touch only the token owner's own things.
NEEDS = {
    ("get", "/api/v1/surveys"): "own",  # one's own surveys and one's workspaces' (any role)
    ("post", "/api/v1/surveys"): "own",  # a new personal survey, as survey_create
    ("get", S): "view",  # the survey as GET /surveys lists it; its results page and workspace page show it
    ("patch", S): "edit",  # survey_settings
    ("delete", S): "manage",  # survey_delete
    ("post", f"{S}/open"): "edit",
    ("post", f"{S}/close"): "edit",
    ("get", f"{S}/questions"): "edit",  # the builder lists the questions
    ("post", f"{S}/questions"): "edit",
    ("get", f"{S}/questions/{{question_id}}"): "edit",  # question_card
    ("patch", f"{S}/questions/{{question_id}}"): "edit",
    ("delete", f"{S}/questions/{{question_id}}"): "edit",
    ("post", f"{S}/matrices"): "edit",
    ("post", f"{S}/pairs"): "edit",
    ("get", f"{S}/rounds"): "edit",  # survey_recurrence
    ("put", f"{S}/recurrence"): "edit",
    ("post", f"{S}/rounds"): "edit",  # survey_next_round
    ("get", f"{S}/invitations"): "edit",  # the invitations page
    ("post", f"{S}/invitations/links"): "edit",
    ("post", f"{S}/invitations/emails"): "edit",
    ("post", f"{S}/invitations/reminders"): "edit",
    ("get", f"{S}/webhooks"): "edit",
    ("post", f"{S}/webhooks"): "edit",
    ("post", f"{S}/webhooks/{{webhook_id}}/test"): "edit",
    ("delete", f"{S}/webhooks/{{webhook_id}}"): "edit",
    ("get", f"{S}/estimates"): "view",  # survey_results
    ("get", f"{S}/transparency"): "view",  # public for an open survey; viewers read it
    ("get", f"{S}/languages"): "edit",  # survey_languages
    ("post", f"{S}/languages"): "edit",
    ("patch", f"{S}/languages/{{language}}"): "edit",  # survey_translations
    ("delete", f"{S}/languages/{{language}}"): "edit",
    ("get", f"{S}/exports/{{name}}"): "by name",  # EXPORT_NEEDS below
}
#: Each download's need: estimates are results (export_estimates); the rest are raw reports.
EXPORT_NEEDS = {
    "estimates.csv": "view",
    "estimates.json": "view",
    "reports.csv": "export",
    "reports.json": "export",
    "reports.sav": "export",
    "reports.dta": "export",
    "analysis.R": "export",
}
#: What the owner's own request gets on this open survey with reports, when it is not a success.
OWNER_CONFLICTS = {
    ("post", f"{S}/rounds"): 409,  # not recurring
}


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Webhook tests post to a fake receiver: no request leaves the machine."""
    monkeypatch.setattr("surveys.webhooks.http_post", lambda url, body, headers: 204)


@pytest.fixture
def team(db):
    team = make_team()
    # Two questions without reports yet, which may still be declared a pair.
    team.second = make_question(team.survey, text="A second question?", options=["Yes", "No"])
    team.third = make_question(team.survey, text="A third question?", options=["Often", "Rarely"])
    team.webhook = Webhook.objects.create(survey=team.survey, url="https://hooks.example.org/murmur")
    make_bilingual(team.survey, base="ko", other="en")  # a language to translate and to remove
    WebhookDelivery.objects.create(webhook=team.webhook, delivery_id="d1", hour=timezone.now(), test=True, ok=True)
    return team


def body_for(method: str, path: str, team) -> Any:
    """A body the owner's request succeeds with (so a refusal never comes from the body)."""
    if method in ("get", "delete"):
        return None
    bodies = {
        "/api/v1/surveys": {"title": "Mine"},
        S: {"title": "Renamed"},
        f"{S}/questions": {"text": "Q", "options": ["a", "b"]},
        f"{S}/questions/{{question_id}}": {"text": "Reworded"},
        f"{S}/matrices": {"title": "M", "items": ["x", "y"], "options": ["a", "b"]},
        f"{S}/pairs": {"first": team.second.pk, "second": team.third.pk},
        f"{S}/recurrence": {"recurrence": "manual"},
        f"{S}/invitations/links": {"count": 1},
        f"{S}/invitations/emails": {"emails": ["x@example.com"]},
        f"{S}/webhooks": {"url": "https://example.com/hook"},
        f"{S}/languages": {"language": "ja"},
        f"{S}/languages/{{language}}": {"texts": {"survey:title": "Shared pulse, reworded"}},
    }
    return bodies.get(path)


def calls(team) -> list[tuple[str, str, bool, str, str]]:
    """(method, schema path, needs a write token, url, need) of every call the walk makes."""
    found = []
    for method, path, writes in operations():
        url = (
            path.replace("{survey_id}", str(team.survey.pk))
            .replace("{question_id}", str(team.second.pk))  # without reports: it may still be deleted
            .replace("{webhook_id}", str(team.webhook.pk))
            .replace("{language}", "en")
        )
        if "{name}" in path:
            found += [(method, path, writes, url.replace("{name}", name), EXPORT_NEEDS[name]) for name in EXPORT_NEEDS]
        else:
            found.append((method, path, writes, url, NEEDS[(method, path)]))
    return found


def state(team) -> Any:
    """Everything a refused request must leave as it was."""
    survey = team.survey
    return (
        list(Survey.objects.filter(pk=survey.pk).values()),
        list(Question.objects.filter(survey=survey).order_by("pk").values()),
        list(Matrix.objects.filter(survey=survey).order_by("pk").values()),
        list(Invitation.objects.filter(survey=survey).order_by("pk").values()),
        list(Webhook.objects.filter(survey=survey).order_by("pk").values()),
        list(WebhookDelivery.objects.filter(webhook__survey=survey).order_by("pk").values()),
        list(SurveyLanguage.objects.filter(survey=survey).order_by("pk").values()),
        list(Translation.objects.filter(survey=survey).order_by("pk").values()),
        list(Membership.objects.filter(workspace=team.workspace).order_by("pk").values_list("user", "role")),
        list(AuditEntry.objects.order_by("pk").values_list("pk", flat=True)),
        Survey.objects.count(),
    )


def names_the_team(team, body: bytes) -> bool:
    questions = (team.question.text, team.second.text, team.third.text)
    words = (team.survey.title, *questions, team.workspace.name, team.survey.slug)
    return any(word.encode() in body for word in words)


def content(response: Any) -> bytes:
    return response.body if response.streaming else response.content


def answer(client: Client, token: str, method: str, url: str, body: Any) -> tuple[int, bytes]:
    """The answer to an allowed request, whose changes are then rolled back."""
    with transaction.atomic():
        response = call(client, token, method, url, body)
        transaction.set_rollback(True)
    return response.status_code, content(response)


def allowed(who: str, need: str) -> bool:
    return need == "own" or need in GRANTED[who]


def iter_patterns(patterns: list[Any]) -> list[URLPattern]:
    """Every URL pattern under these, through nested includes."""
    found = []
    for entry in patterns:
        found += iter_patterns(entry.url_patterns) if isinstance(entry, URLResolver) else [entry]
    return found


def test_every_operation_is_classified():
    schema_operations = {(method, path) for method, path, _writes in operations()}
    assert schema_operations == set(NEEDS), schema_operations ^ set(NEEDS)
    assert set(EXPORTS) == set(EXPORT_NEEDS), set(EXPORTS) ^ set(EXPORT_NEEDS)
    assert set(NEEDS.values()) == {"own", "view", "edit", "manage", "by name"}
    # Every API route the URLconf serves is in the schema (an operation left out of it would escape
    # the walk): its names are the schema's operation ids, besides the schema and the API's root.
    (api_routes,) = [entry for entry in get_resolver().url_patterns if getattr(entry, "namespace", "") == "api-v1"]
    served = {pattern.name for pattern in iter_patterns(api_routes.url_patterns)}
    ids = {op["operationId"] for item in schema()["paths"].values() for op in item.values()}
    assert served - {"openapi-json", "api-root"} == ids, served ^ ids


@pytest.mark.slow  # about 4 s a role and scope: make test-all and CI (the delete and removal tests guard make test)
@pytest.mark.parametrize("scope", ("read", "write"))
@pytest.mark.parametrize("who", ROLES)
def test_the_api_walk(client, team, who, scope):
    owner = make_token(team.users["owner"])
    token = make_token(team.users[who], scope=scope, name=f"{who}-{scope}")
    leaks, changes, denied, owner_failures = [], [], [], []
    for method, path, writes, url, need in calls(team):
        body = body_for(method, path, team)
        expected, _ = answer(client, owner, method, url, body)
        if expected != OWNER_CONFLICTS.get((method, path), expected) or not (
            200 <= expected < 300 or (method, path) in OWNER_CONFLICTS
        ):
            owner_failures.append(f"{method.upper()} {url}: {expected}")
        may = allowed(who, need) and (scope == "write" or not writes)
        if may:
            status, _ = answer(client, token, method, url, body)
            if status != expected:
                denied.append(f"{method.upper()} {url}: {status}, owner {expected}")
            continue
        before = state(team)
        response = call(client, token, method, url, body)
        if response.status_code not in (403, 404) or names_the_team(team, content(response)):
            leaks.append(f"{method.upper()} {url}: {response.status_code}")
        if writes and scope == "read" and response.status_code != 403:
            leaks.append(f"{method.upper()} {url}: a read token's write got {response.status_code}")
        if state(team) != before:
            changes.append(f"{method.upper()} {url}")
    assert leaks == [] and changes == []
    assert denied == [] and owner_failures == []


@pytest.mark.parametrize("who", ROLES)
def test_the_survey_list_holds_every_survey_its_reader_may_read_and_no_other(client, team, who):
    """GET /surveys lists the surveys one may read: one's own personal surveys and the workspace's for
    a member of any role (viewers read its results), never someone else's personal survey nor a
    workspace one is not in. Staff may read any survey they ask for by id, but their list holds only
    their own work, like everyone's."""
    own = make_survey(team.users[who], title="My own")
    make_survey(make_user("nadia"), title="Someone else's")
    elsewhere = Workspace.objects.create(name="Another team")
    make_survey(make_user("nico"), title="Another team's", workspace=elsewhere)
    token = make_token(team.users[who], scope="read")
    listed = [survey["id"] for survey in call(client, token, "get", "/api/v1/surveys").json()]
    member = "view" in GRANTED[who] and who != "staff"
    assert sorted(listed) == sorted([own.pk, *([team.survey.pk] if member else [])])


@pytest.mark.parametrize("who", ("owner", "editor", "viewer"))
def test_each_listed_survey_offers_only_what_its_reader_may_do(client, team, who):
    """A listed survey says what the token may do on it (``access``) and links only the downloads its
    role allows: a viewer's list names no raw-report export, and every link it gives is served."""
    token = make_token(team.users[who], scope="read")
    response = call(client, token, "get", "/api/v1/surveys")
    (listed,) = response.json()
    assert set(listed["access"]) == GRANTED[who]
    allowed_files = {name for name, need in EXPORT_NEEDS.items() if need in GRANTED[who]}
    assert set(listed["exports"]) == allowed_files
    if who == "viewer":
        assert b"reports." not in response.content and b"analysis.R" not in response.content
    for url in listed["exports"].values():
        assert call(client, token, "get", urlsplit(url).path).status_code in (200, 202), url


@pytest.mark.parametrize("who", ROLES)
def test_a_drafts_transparency_is_read_by_its_readers_and_marked_not_public(client, team, who):
    """A draft's transparency statement, as its page: not public (nothing is in force until it opens);
    whoever may read the survey's results gets it marked ``public: false``, anyone else 404."""
    draft = make_survey(team.users["owner"], title="Unopened pulse", workspace=team.workspace)
    make_question(draft, text="Not yet asked?")
    token = make_token(team.users[who], scope="read")
    response = call(client, token, "get", f"/api/v1/surveys/{draft.pk}/transparency")
    if "view" not in GRANTED[who]:
        assert response.status_code == 404 and b"Not yet asked" not in response.content
        return
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["public"], body["entries"]) == ("draft", False, [])
    opened = call(client, token, "get", f"/api/v1/surveys/{team.survey.pk}/transparency").json()
    assert (opened["status"], opened["public"]) == ("open", True) and opened["entries"]


@pytest.mark.parametrize("who", ROLES)
def test_whoever_may_read_the_survey_gets_it_by_id_as_listed_and_no_more(client, team, who):
    """GET /surveys/{id} gives whoever may read the survey's results (any member, staff) what the list
    gives them; its settings stay the builder's: a viewer's token may not change them (403 for a read
    token, 404 for a read-and-write one, as the settings page is a 404 to them), an outsider's gets 404."""
    path = f"/api/v1/surveys/{team.survey.pk}"
    reader = make_token(team.users[who], scope="read")
    response = call(client, reader, "get", path)
    if "view" not in GRANTED[who]:
        assert response.status_code == 404 and not names_the_team(team, response.content)
        return
    assert response.status_code == 200
    got = response.json()
    assert set(got["access"]) == GRANTED[who] and got["title"] == team.survey.title
    listed = {s["id"]: s for s in call(client, reader, "get", "/api/v1/surveys").json()}
    if who != "staff":  # staff's list holds only their own work; they read any survey by id
        assert listed[team.survey.pk] == got
    if "edit" in GRANTED[who]:
        return
    writer = make_token(team.users[who], scope="write", name="writer")
    before = state(team)
    assert call(client, reader, "patch", path, {"title": "Renamed"}).status_code == 403
    refused = call(client, writer, "patch", path, {"title": "Renamed"})
    assert refused.status_code == 404 and not names_the_team(team, refused.content)
    assert state(team) == before


def test_a_surveys_new_owner_is_the_tokens_never_the_workspace(client, team):
    """POST /surveys makes a personal survey of the token's owner, whatever their role elsewhere."""
    token = make_token(team.users["viewer"])
    response = call(client, token, "post", "/api/v1/surveys", {"title": "Vera's own"})
    assert response.status_code == 201
    made = Survey.objects.get(pk=response.json()["id"])
    assert (made.owner, made.workspace) == (team.users["viewer"], None)


def test_an_editors_token_cannot_delete_the_workspaces_survey_but_its_owners_can(client, team):
    editor, owner = make_token(team.users["editor"]), make_token(team.users["owner"])
    path = f"/api/v1/surveys/{team.survey.pk}"
    assert call(client, editor, "delete", path).status_code == 404
    assert Survey.objects.filter(pk=team.survey.pk).exists()
    assert call(client, owner, "delete", path).status_code == 204
    assert not Survey.objects.filter(pk=team.survey.pk).exists()


@pytest.mark.parametrize("scope", ("read", "write"))
def test_a_removed_member_loses_every_operation_at_once(client, team, scope):
    token = make_token(team.users["editor"], scope=scope)
    survey_path = f"/api/v1/surveys/{team.survey.pk}"
    assert call(client, token, "get", survey_path).status_code == 200
    team.membership("editor").delete()
    before = state(team)
    for method, path, writes, url, _need in calls(team):
        if "{survey_id}" not in path:
            continue
        response = call(client, token, method, url, body_for(method, path, team))
        refused = 403 if writes and scope == "read" else 404
        assert response.status_code == refused, (method, url, response.status_code)
        assert not names_the_team(team, content(response)), (method, url)
    assert state(team) == before
