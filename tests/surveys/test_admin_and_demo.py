"""Django admin lists surveys with counts; the demo loads once."""

from __future__ import annotations

from django.core.management import call_command
from django.urls import reverse

from surveys.demo import DEMO_RESPONDENTS, DEMO_TITLE, KOREAN
from surveys.models import Survey
from tests.base import make_open_survey, make_reports


def test_admin_lists_surveys_questions_and_report_counts(client, staff, organizer):
    survey = make_open_survey(organizer, questions=2)
    question = survey.questions.first()
    make_reports(question, [0, 1, 2, 0])
    client.force_login(staff)
    surveys_page = client.get(reverse("admin:surveys_survey_changelist")).content.decode()
    assert "Team pulse" in surveys_page
    assert '<td class="field-submission_count">4</td>' in surveys_page
    questions_page = client.get(reverse("admin:surveys_question_changelist")).content.decode()
    assert '<td class="field-report_count">4</td>' in questions_page
    change_page = client.get(reverse("admin:surveys_question_change", args=[question.pk])).content.decode()
    assert "packed" not in change_page


def test_admin_is_for_staff_only(client, organizer):
    client.force_login(organizer)
    response = client.get(reverse("admin:surveys_survey_changelist"))
    assert response.status_code == 302


def test_the_demo_short_answer_finds_its_frequent_texts(db):
    from surveys.results.estimates import SurveyState

    call_command("load_demo")
    for title in (DEMO_TITLE, KOREAN.title):
        state = SurveyState.read(Survey.objects.get(title=title))
        (result,) = state.results(state.questions[-2])
        assert result.n == DEMO_RESPONDENTS and result.text is not None
        # The two most written named texts (45 % / 25 %, 50 % / 20 % of 600) are found; the phone nobody named is not.
        assert result.text.found.tolist()[:2] == [True, True] and not result.text.found[-1]


def test_the_demo_multi_select_shares_are_near_the_simulated_truth(db):
    """Each option's expected share, enumerated over the 32 sets (picks beyond 3 dropped at random), lies
    within 4 standard errors (randomization and the simulated respondents' own sampling) of the estimate."""
    import itertools
    import math

    from surveys.demo import MULTI_SHARES
    from surveys.results.estimates import SurveyState

    truth = [0.0] * 5
    for picked in itertools.product((0, 1), repeat=5):
        chance = math.prod(p if x else 1 - p for p, x in zip(MULTI_SHARES, picked, strict=True))
        for j, x in enumerate(picked):
            truth[j] += chance * x * min(1.0, 3 / max(sum(picked), 1))
    call_command("load_demo")
    for title in (DEMO_TITLE, KOREAN.title):
        state = SurveyState.read(Survey.objects.get(title=title))
        (result,) = state.results(state.questions[-1])
        assert result.question.kind == "multi_select" and result.enough and result.multi is not None
        errors = result.multi.standard_errors
        for j, share in enumerate(truth):
            spread = math.sqrt(errors[j] ** 2 + share * (1 - share) / DEMO_RESPONDENTS)
            assert abs(result.multi.shares[j] - share) <= 4 * spread


def test_demo_loads_once(db, capsys):
    call_command("load_demo")
    call_command("load_demo")
    survey = Survey.objects.get(title=DEMO_TITLE)
    assert survey.status == "open"
    # Seven questions, the declared pair of the first two, and a matrix of three items before the short answer.
    assert [q.kind for q in survey.questions.all()] == [
        "single",
        "yes_no",
        "pair",
        "single",
        "numeric",
        "rating",
        "matrix",
        "matrix",
        "matrix",
        "text",
        "multi_select",
    ]
    assert survey.total_epsilon == 11.5
    assert "Found demo survey" in capsys.readouterr().out


def test_demo_has_a_korean_survey_beside_the_english_one_and_prints_both_links(db, capsys):
    call_command("load_demo", base_url="http://127.0.0.1:8000")
    out = capsys.readouterr().out
    korean = Survey.objects.get(title=KOREAN.title)
    assert korean.status == "open"
    texts = [q.text for q in korean.questions.exclude(kind__in=["pair", "matrix"])]
    assert texts == [q["text"] for q in KOREAN.questions]
    assert [q.text for q in korean.questions.filter(kind="matrix")] == KOREAN.matrix.items
    assert korean.response_count() == DEMO_RESPONDENTS
    for survey in Survey.objects.all():
        assert f"http://127.0.0.1:8000/s/{survey.slug}/" in out
    assert "demo / murmur-demo" in out


def test_the_demo_dashboards_show_the_declared_pairs_cross_tab_and_the_matrix(client, db):
    call_command("load_demo")
    client.login(username="demo", password="murmur-demo")
    for title in (DEMO_TITLE, KOREAN.title):
        survey = Survey.objects.get(title=title)
        html = client.get(reverse("survey_results", args=[survey.pk]), HTTP_ACCEPT_LANGUAGE="ko").content.decode()
        assert "data-joint" in html and "data-matrix-result" in html and "data-too-few" not in html
        pair = survey.questions.get(kind="pair")
        assert pair.reports.count() == DEMO_RESPONDENTS and not survey.questions.first().reports.exists()


def test_the_demo_workspace_has_two_members_and_the_demo_surveys(client, db, capsys):
    from surveys.models import Membership, Survey

    call_command("load_demo")
    call_command("load_demo")
    memberships = Membership.objects.select_related("user", "workspace")
    assert sorted((m.user.username, m.role) for m in memberships) == [("demo", "owner"), ("demo-viewer", "viewer")]
    workspace = memberships[0].workspace
    assert Survey.objects.filter(workspace=workspace).count() == Survey.objects.count() == 3
    assert "demo-viewer / murmur-demo" in capsys.readouterr().out
    client.login(username="demo-viewer", password="murmur-demo")
    survey = Survey.objects.first()
    assert client.get(survey.get_results_url()).status_code == 200
    assert client.get(survey.get_absolute_url()).status_code == 404
