"""The public transparency page: every question's mechanism, parameters and version history, and
the digest of the specs in force, which the answer page shows too."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from html import unescape

import pytest
from django.urls import reverse

from surveys import actions
from surveys.models import Randomization
from surveys.transparency import spec_digest
from tests.base import make_open_survey, make_question, make_reports, make_survey
from tests.teams import make_team


@pytest.fixture
def survey(organizer):
    """Three mechanisms with parameters of their own, and a budget cap."""
    survey = make_survey(organizer, epsilon_cap=5.0)
    fruits = ["Apple", "Banana", "Cherry", "Durian", "Elder"]
    make_question(survey, text="Fruit?", options=fruits)
    make_question(survey, text="Cycle?", options=fruits, mechanism="subset", mechanism_params={"subset_size": 2})
    hcms = {"hash_count": 8, "width": 16, "hash_seed": 0}
    make_question(
        survey, text="Day?", options=["Mon", "Tue", "Wed"], epsilon=2.0, mechanism="hcms", mechanism_params=hcms
    )
    actions.do_open_survey(survey)
    return survey


def transparency_page(client, survey):
    response = client.get(reverse("transparency", args=[survey.slug]))
    assert response.status_code == 200
    return response.content.decode()


def answer_page(client, survey):
    response = client.get(reverse("respond", args=[survey.slug]))
    assert response.status_code == 200
    return response.content.decode()


def shown_digest(html):
    (digest,) = re.findall(r"<code data-spec-digest>([0-9a-f]{64})</code>", html)
    return digest


def json_script(html, element_id):
    match = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(unescape(match.group(1)))


def test_it_lists_every_questions_mechanism_parameters_and_spec(client, survey):
    html = transparency_page(client, survey)
    for text in ["Fruit?", "Cycle?", "Day?", "k-RR (randomized response)", "Subset selection", "Hadamard Count Mean"]:
        assert text in html
    assert "{&quot;subset_size&quot;: 2}" in html
    assert "{&quot;hash_count&quot;: 8, &quot;hash_seed&quot;: 0, &quot;width&quot;: 16}" in html
    specs = [json.loads(unescape(block)) for block in re.findall(r"<pre data-spec-json[^>]*>(.*?)</pre>", html, re.S)]
    expected = [q.current_randomization().build_mechanism().client_spec() for q in survey.questions.all()]
    assert [s["spec"] for s in specs] == expected
    assert specs[2]["spec"]["keep_probability"] == pytest.approx(1 / (1 + math.exp(-2.0)))


def test_its_digest_is_the_answer_pages_and_that_of_the_specs_the_page_sends(client, survey):
    answer = answer_page(client, survey)
    digest = shown_digest(transparency_page(client, survey))
    assert shown_digest(answer) == digest
    assert spec_digest(json_script(answer, "murmur-specs")) == digest
    assert f'href="{reverse("transparency", args=[survey.slug])}"' in answer


def test_the_answer_page_states_the_promise_the_browser_checks(client, survey):
    promise = json_script(answer_page(client, survey), "murmur-promise")
    questions = list(survey.questions.all())
    assert promise == {
        "total": 4.0,
        "cap": 5.0,
        "questions": {str(q.pk): {"epsilon": q.epsilon} for q in questions},
    }


def test_every_version_is_listed_and_the_digest_follows_the_parameters(client, survey):
    before = shown_digest(transparency_page(client, survey))
    question = survey.questions.get(text="Fruit?")
    values = {"text": question.text, "kind": question.kind, "options": question.options, "epsilon": 0.5}
    actions.do_update_question(question, {**values, "mechanism": "oue", "mechanism_params": {}})
    html = transparency_page(client, survey)
    after = shown_digest(html)
    assert after != before
    assert after == shown_digest(answer_page(client, survey))
    section = html.split(f'data-transparency-question="{question.pk}"')[1].split("</section>")[0]
    rows = re.findall(r'<tr data-version="(\d+)">(.*?)</tr>', section, re.S)
    assert [version for version, _ in rows] == ["1", "2"]
    assert "retired" in rows[0][1] and "k-RR" in rows[0][1]
    assert "in force" in rows[1][1] and "OUE" in rows[1][1]


def test_a_closed_survey_keeps_its_page_and_a_question_with_reports_its_versions(client, survey):
    make_reports(survey.questions.first(), [0, 1, 2, 3, 4] * 4)
    actions.do_close_survey(survey)
    html = transparency_page(client, survey)
    assert "Fruit?" in html and "in force" in html
    assert f'href="{reverse("respond", args=[survey.slug])}"' not in html  # no longer answerable


def test_it_shows_nothing_finer_than_the_hour(client, survey):
    created = dt.datetime(2026, 3, 4, 12, 34, 56, 789000, tzinfo=dt.UTC)
    Randomization.objects.filter(question__survey=survey).update(created_at=created)
    html = transparency_page(client, survey)
    assert html.count("<td data-created-hour>2026-03-04 12:00</td>") == 3
    assert "12:34" not in html and "34:56" not in html and ":56" not in html
    times = re.findall(r"\b\d{1,2}:\d{2}\b", html)
    assert times and all(t.endswith(":00") for t in times), times


@pytest.mark.parametrize("who", ("anonymous", "owner", "editor", "viewer", "outsider", "staff"))
def test_a_drafts_page_is_not_public_but_its_readers_see_it_marked_as_a_draft(client, db, who):
    """A draft's statement is not public: nothing is in force until it opens, and anonymous callers
    and outsiders get 404, as for a survey that does not exist. Whoever may read its results (its
    workspace's owners, editors and viewers; staff, who may read any) sees the page marked as a
    draft, kept out of shared caches and with no link to answer."""
    team = make_team()
    draft = make_survey(team.users["owner"], title="Unopened pulse", workspace=team.workspace)
    make_question(draft, text="Not yet asked?")
    if who != "anonymous":
        client.force_login(team.users[who])
    response = client.get(reverse("transparency", args=[draft.slug]))
    if who in ("anonymous", "outsider"):
        assert response.status_code == 404 and b"Not yet asked" not in response.content
        return
    html = response.content.decode()
    assert response.status_code == 200 and "Not yet asked?" in html and "data-draft-notice" in html
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]
    assert f'href="{reverse("respond", args=[draft.slug])}"' not in html


def test_an_open_surveys_page_is_public_and_says_nothing_of_drafts(client, organizer):
    survey = make_open_survey(organizer)
    html = transparency_page(client, survey)
    assert "data-draft-notice" not in html


def test_unknown_links_are_404_and_the_page_is_read_only(client, organizer):
    survey = make_open_survey(organizer)
    assert client.get(reverse("transparency", args=["nope"])).status_code == 404
    assert client.post(reverse("transparency", args=[survey.slug])).status_code == 405


def test_it_needs_no_login_and_names_no_organizer(client, organizer):
    survey = make_open_survey(organizer, questions=2)
    html = transparency_page(client, survey)
    assert "Question 1" in html and "Question 2" in html
    assert organizer.username not in html.replace('name="username"', "")


def test_the_spec_digest_is_canonical():
    entries = [{"question": 3, "version": 1, "spec": {"mechanism": "krr", "k": 2, "epsilon": 1.0}}]
    reordered = [{"spec": {"epsilon": 1.0, "k": 2, "mechanism": "krr"}, "version": 1, "question": 3}]
    assert spec_digest(entries) == spec_digest(reordered)
    assert spec_digest(entries) != spec_digest([{**entries[0], "version": 2}])


def test_a_drafts_preview_is_checked_by_the_browser_but_links_no_transparency_page(client, organizer):
    draft = make_survey(organizer, epsilon_cap=None)
    question = make_question(draft, epsilon=0.7)
    client.force_login(organizer)
    html = client.get(reverse("survey_preview", args=[draft.pk])).content.decode()
    promise = json_script(html, "murmur-promise")
    assert promise == {"total": 0.7, "cap": None, "questions": {str(question.pk): {"epsilon": 0.7}}}
    assert "data-spec-digest" not in html
    assert reverse("transparency", args=[draft.slug]) not in html


def test_every_stored_parameter_has_a_label_in_words():
    """Each parameter any mechanism stores (its ``params()``, built from epsilon alone) and a number's
    range has a label of its own, translated into Korean, so no page prints a raw name unfolded."""
    from django.utils import translation

    from ldp import registry
    from surveys.parameters import LABELS

    stored = {"lo", "hi"}
    for name in [n for family in registry.NAMES.values() for n in family] + list(registry.PHASE_TWO):
        mean = registry.family_of(name) == "mean"
        k = 2 if name in registry.TWO_OPTIONS else 4
        stored |= set(registry.build(name, k=k, epsilon=1.0, **({"lo": 0, "hi": 10} if mean else {})).params())
    assert stored <= set(LABELS), stored - set(LABELS)
    with translation.override("ko"):
        korean = {name: str(LABELS[name]) for name in stored}
    assert all(re.search(r"[가-힣]", label) for label in korean.values()), korean


def test_parameters_are_listed_in_korean_words_with_their_names_folded(client, survey):
    html = client.get(reverse("transparency", args=[survey.slug]), HTTP_ACCEPT_LANGUAGE="ko").content.decode()
    cells = re.findall(r"<td data-version-params>(.*?)</td>", html, re.S)
    assert len(cells) == 3
    words, _, folded = cells[1].partition('<details class="raw-params">')
    assert "보고하는 부분집합의 선택지 수: 2" in words and "subset_size" not in words
    assert "subset_size" in folded and "</details>" in folded
    words = cells[2].partition("<details")[0]
    assert "해시 함수 수: 8" in words and "스케치의 열 수: 16" in words
    assert not re.search(r"hash_count|hash_seed|width", words)
