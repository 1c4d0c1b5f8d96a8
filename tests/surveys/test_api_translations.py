"""The organizer API's languages and translations: what the builder's languages and translations
pages do, with the same checks, the same refusal to open, and the same audit entries."""

from __future__ import annotations

import pytest
from django.urls import reverse

from surveys.models import AuditEntry, SurveyLanguage, Translation
from tests.base import make_question, make_survey
from tests.surveys.test_api import call, make_token
from tests.teams import make_team


@pytest.fixture
def draft(organizer):
    survey = make_survey(organizer, title="주간 설문")
    make_question(survey, text="기분은?", options=["좋음", "나쁨"])
    return survey


def languages_path(survey) -> str:
    return f"/api/v1/surveys/{survey.pk}/languages"


def test_a_survey_is_translated_opened_and_read_in_the_new_language(client, organizer, draft):
    token = make_token(organizer)
    assert call(client, token, "get", languages_path(draft)).json() | {"strings": []} == {
        "base": None, "strings": [], "languages": []}  # fmt: skip
    added = call(client, token, "post", languages_path(draft), {"language": "en", "base": "ko"})
    assert added.status_code == 201
    body = added.json()
    keys = [s["key"] for s in body["strings"]]
    question = draft.questions.get()
    assert keys == ["survey:title", f"q:{question.pk}:text", f"q:{question.pk}:option:0", f"q:{question.pk}:option:1"]
    assert body["base"] == "ko"
    assert [(x["code"], x["base"], x["complete"], x["missing"]) for x in body["languages"]] == [
        ("ko", True, True, []),
        ("en", False, False, keys),
    ]
    # A missing translation keeps the survey from opening, through the API as on the pages.
    refused = call(client, token, "post", f"/api/v1/surveys/{draft.pk}/open")
    assert refused.status_code == 409 and "English" in refused.json()["detail"]
    texts = dict(zip(keys, ["Weekly survey", "Mood?", "Good", "Bad"], strict=True))
    saved = call(client, token, "patch", f"{languages_path(draft)}/en", {"texts": texts})
    assert saved.status_code == 200
    (english,) = [x for x in saved.json()["languages"] if x["code"] == "en"]
    assert (english["complete"], english["missing"], english["texts"]) == (True, [], texts)
    assert call(client, token, "post", f"/api/v1/surveys/{draft.pk}/open").status_code == 200
    page = client.get(reverse("respond", args=[draft.slug]), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Mood?" in page and "기분은?" not in page


def test_a_partial_save_keeps_the_other_strings_and_confirms_only_its_own(client, organizer, draft):
    token = make_token(organizer)
    call(client, token, "post", languages_path(draft), {"language": "en", "base": "ko"})
    question = draft.questions.get()
    texts = {"survey:title": "Weekly", f"q:{question.pk}:text": "Mood?"}
    texts |= {f"q:{question.pk}:option:0": "Good", f"q:{question.pk}:option:1": "Bad"}
    call(client, token, "patch", f"{languages_path(draft)}/en", {"texts": texts})
    edited = call(client, token, "patch", f"/api/v1/surveys/{draft.pk}", {"title": "새 주간 설문"})
    assert edited.status_code == 200
    text_key = f"q:{question.pk}:text"
    call(client, token, "patch", f"{languages_path(draft)}/en", {"texts": {text_key: "How is your mood?"}})
    (english,) = [x for x in call(client, token, "get", languages_path(draft)).json()["languages"] if not x["base"]]
    assert english["outdated"] == ["survey:title"]  # saving another string does not confirm the title
    assert english["texts"] == texts | {text_key: "How is your mood?"}
    assert call(client, token, "post", f"/api/v1/surveys/{draft.pk}/open").status_code == 409


def test_the_builders_checks_refuse_and_store_nothing(client, organizer, draft):
    token = make_token(organizer)
    question = draft.questions.get()
    assert call(client, token, "post", languages_path(draft), {"language": "en"}).status_code == 422  # no base
    same = call(client, token, "post", languages_path(draft), {"language": "ko", "base": "ko"})
    assert same.status_code == 422 and "language" in same.json()["fields"]
    unknown = call(client, token, "post", languages_path(draft), {"language": "xx-not", "base": "ko"})
    assert unknown.status_code == 422
    assert not SurveyLanguage.objects.filter(survey=draft).exists()
    call(client, token, "post", languages_path(draft), {"language": "en", "base": "ko"})
    assert call(client, token, "post", languages_path(draft), {"language": "en"}).status_code == 422  # twice
    options = {f"q:{question.pk}:option:0": "Same", f"q:{question.pk}:option:1": "same"}
    twins = call(client, token, "patch", f"{languages_path(draft)}/en", {"texts": options})
    assert twins.status_code == 422 and f"q:{question.pk}:option:1" in twins.json()["fields"]
    stranger = call(client, token, "patch", f"{languages_path(draft)}/en", {"texts": {"q:999999:text": "?"}})
    assert stranger.status_code == 422
    assert call(client, token, "patch", f"{languages_path(draft)}/ko", {"texts": {}}).status_code == 404  # the base
    assert call(client, token, "delete", f"{languages_path(draft)}/fr").status_code == 404
    assert not Translation.objects.filter(survey=draft).exists()
    assert call(client, token, "delete", f"{languages_path(draft)}/en").status_code == 204
    assert not SurveyLanguage.objects.filter(survey=draft).exists()  # the last one: one language again


def test_a_tokens_language_changes_are_in_the_workspace_audit_log(client, db):
    team = make_team()
    token = make_token(team.users["editor"], name="translator")
    path = languages_path(team.survey)
    assert call(client, token, "post", path, {"language": "en", "base": "ko"}).status_code == 201
    texts = {"survey:title": "Shared pulse, in English"}
    assert call(client, token, "patch", f"{path}/en", {"texts": texts}).status_code == 200
    assert call(client, token, "delete", f"{path}/en").status_code == 204
    assert call(client, token, "get", path).status_code == 200  # a read logs nothing
    entries = AuditEntry.objects.filter(workspace=team.workspace).order_by("pk")
    assert [(e.actor_name, e.action, e.detail, e.api_token) for e in entries] == [
        ("eddie", "edited", "added the language en", "translator"),
        ("eddie", "edited", "translated into en", "translator"),
        ("eddie", "edited", "removed the language en", "translator"),
    ]
