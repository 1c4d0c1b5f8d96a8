"""Recurring surveys: rounds, their schedule, per-round tallies and results, trends, memo blocks."""

from __future__ import annotations

import csv
import io
import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.core.management import call_command
from django.urls import reverse

from ldp.text import normalize_text
from surveys import actions
from surveys.models import Question, Report, Series, Submission, Survey, TallyCell
from surveys.responding.submissions import new_token
from surveys.series import memoization, rounds
from surveys.transparency import survey_record
from tests.base import (
    make_multi_question,
    make_number_question,
    make_question,
    make_reports,
    make_set_reports,
    make_survey,
    make_text_question,
    make_text_reports,
    stored_tally,
    with_stand_ins,
)

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}
#: Seed 004's RAPPOR shape at epsilon_1 = 4 ln(5/3): f = 0.5, so epsilon_inf = 4 ln 3.
RAPPOR_PARAMS = {"bits": 32, "hash_count": 2, "cohorts": 64, "f": 0.5}
EPSILON_ONE = 4 * math.log(5 / 3)


@pytest.fixture
def recurring(organizer):
    """Round 1 of a weekly series, open: a choice question and a RAPPOR short answer."""
    survey = make_survey(organizer, title="Weekly pulse")
    make_question(survey, text="Mood?", options=["Good", "Fine", "Bad"], epsilon=2.0)
    make_text_question(survey, "rappor", epsilon=EPSILON_ONE, text="One word?", mechanism_params=RAPPOR_PARAMS)
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, Series.Recurrence.MANUAL)
    survey.refresh_from_db()
    return survey


def test_making_a_survey_recurring_makes_it_round_one(organizer_client, organizer):
    survey = make_survey(organizer)
    make_question(survey)
    response = organizer_client.post(reverse("survey_recurrence", args=[survey.pk]), {"recurrence": "weekly"})
    assert response.status_code == 302
    survey.refresh_from_db()
    assert survey.round_number == 1 and survey.series.recurrence == "weekly"
    assert survey.series.next_round_at is not None
    html = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert 'data-round="1"' in html and "data-next-round" in html
    assert "data-next-round-button" not in html  # a draft has no next round yet


def test_an_unknown_schedule_is_refused(organizer_client, organizer):
    survey = make_survey(organizer)
    organizer_client.post(reverse("survey_recurrence", args=[survey.pk]), {"recurrence": "hourly"})
    survey.refresh_from_db()
    assert survey.series is None


def test_the_next_round_copies_the_questions_and_their_randomization_and_closes_the_last(organizer_client, recurring):
    first_questions = list(recurring.questions.all())
    response = organizer_client.post(reverse("survey_next_round", args=[recurring.pk]))
    second = Survey.objects.get(series=recurring.series, round_number=2)
    assert response.status_code == 302 and response["Location"] == second.get_absolute_url()
    recurring.refresh_from_db()
    assert recurring.status == "closed" and second.status == "open"
    assert second.slug != recurring.slug and second.title == recurring.title
    for old, new in zip(first_questions, second.questions.all(), strict=True):
        assert new.pk != old.pk and new.memo_key == old.memo_key == str(old.pk)
        assert new.current_randomization().key() == old.current_randomization().key()
    # Only the latest round may open again.
    assert "A later round of this survey exists" in " ".join(actions.open_problems(recurring))
    with pytest.raises(actions.LifecycleError):
        actions.do_open_survey(recurring)
    third = rounds.do_open_next_round(recurring)  # from any round: the series' next
    assert third.round_number == 3
    assert [s.round_number for s in rounds.rounds_of(recurring)] == [1, 2, 3]


def test_a_draft_has_no_next_round(organizer):
    survey = make_survey(organizer)
    make_question(survey)
    rounds.do_make_recurring(survey, "manual")
    with pytest.raises(actions.LifecycleError):
        rounds.do_open_next_round(survey)


def test_a_weekly_schedule_opens_one_round_when_due_by_a_fixed_clock(recurring):
    start = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    series = rounds.do_make_recurring(recurring, "weekly", now=start)
    assert series.next_round_at == start + timedelta(days=7)
    assert rounds.open_due_rounds(now=start + timedelta(days=6, hours=23)) == []
    opened = rounds.open_due_rounds(now=start + timedelta(days=7))
    assert [s.round_number for s in opened] == [2]
    series.refresh_from_db()
    assert series.next_round_at == start + timedelta(days=14)
    # Three weeks late: one round opens, and the schedule moves past the present.
    opened = rounds.open_due_rounds(now=start + timedelta(days=35, hours=1))
    assert [s.round_number for s in opened] == [3]
    series.refresh_from_db()
    assert series.next_round_at == start + timedelta(days=42)
    assert rounds.open_if_due(series.pk, now=start + timedelta(days=36)) is None


def test_a_monthly_schedule_keeps_the_day_or_the_months_last(recurring):
    series = rounds.do_make_recurring(recurring, "monthly", now=datetime(2026, 1, 31, 8, tzinfo=UTC))
    assert series.next_round_at == datetime(2026, 2, 28, 8, tzinfo=UTC)
    assert rounds.add_month(datetime(2026, 12, 15, tzinfo=UTC)) == datetime(2027, 1, 15, tzinfo=UTC)


def test_a_due_round_opens_when_anyone_visits_an_old_link(client, recurring):
    series = rounds.do_make_recurring(recurring, "weekly")
    Series.objects.filter(pk=series.pk).update(next_round_at=datetime(2020, 1, 1, tzinfo=UTC))
    html = client.get(reverse("respond", args=[recurring.slug])).content.decode()
    second = Survey.objects.get(series=series, round_number=2)
    assert "not accepting responses" in html and second.get_share_url() in html
    assert client.get(second.get_share_url()).status_code == 200


def test_the_management_command_opens_due_rounds(recurring):
    Series.objects.filter(pk=recurring.series_id).update(
        recurrence="weekly", next_round_at=datetime(2020, 1, 1, tzinfo=UTC)
    )
    out = io.StringIO()
    call_command("open_due_rounds", stdout=out)
    assert "Opened round 2" in out.getvalue()
    call_command("open_due_rounds", stdout=out)
    assert "No round was due." in out.getvalue()


def test_other_organizers_get_404_on_every_round_view(client, other_organizer, recurring):
    client.force_login(other_organizer)
    for name in ("survey_recurrence", "survey_next_round"):
        assert client.post(reverse(name, args=[recurring.pk]), {"recurrence": "weekly"}).status_code == 404
    assert client.get(reverse("survey_results", args=[recurring.pk])).status_code == 404
    assert Survey.objects.filter(series=recurring.series).count() == 1


def test_anonymous_visitors_are_sent_to_log_in(client, recurring):
    response = client.post(reverse("survey_next_round", args=[recurring.pk]))
    assert response.status_code == 302 and "login" in response["Location"]
    assert Survey.objects.filter(series=recurring.series).count() == 1


def rounds_with_reports(survey, shares_by_round, texts_by_round):
    """Open rounds after ``survey`` and store seeded reports in each (round 1 is ``survey``)."""
    made = [survey]
    for _ in shares_by_round[1:]:
        made.append(rounds.do_open_next_round(made[-1]))
    for i, (current, values, texts) in enumerate(zip(made, shares_by_round, texts_by_round, strict=True)):
        choice, text = current.questions.all()
        make_reports(choice, values, seed=i)
        make_text_reports(text, [normalize_text(t) for t in texts], seed=i)
    return made


def test_each_round_has_its_own_tallies_and_results(organizer_client, recurring):
    made = rounds_with_reports(recurring, [[0] * 300 + [2] * 100, [0] * 100 + [2] * 300], [["a"] * 20, ["b"] * 30])
    for current, n in zip(made, (400, 400), strict=True):
        choice, text = current.questions.all()
        assert stored_tally(choice.current_randomization()).n == n
        assert choice.current_randomization().question.survey_id == current.pk
    first_text = made[0].questions.get(kind="text")
    second_text = made[1].questions.get(kind="text")
    assert stored_tally(first_text.current_randomization()).n == 20
    assert stored_tally(second_text.current_randomization()).n == 30
    html = organizer_client.get(reverse("survey_results", args=[made[0].pk])).content.decode()
    assert "400 responses so far" in " ".join(html.split()) or "<strong data-responses>420</strong>" in html


def test_the_dashboard_shows_trends_and_the_difference_of_two_rounds(organizer_client, recurring):
    # Round 1: 75 % "Good"; round 2: 25 %. k-RR at epsilon 2 on 3 options, n = 2,000 each.
    first = [0] * 1500 + [1] * 250 + [2] * 250
    second = [0] * 500 + [1] * 250 + [2] * 1250
    made = rounds_with_reports(recurring, [first, second], [["x"] * 10, ["x"] * 10])
    url = reverse("survey_results", args=[made[1].pk])
    html = organizer_client.get(url).content.decode()
    assert "data-trends" in html and "Trends across rounds" in html
    trend_html = html.split("data-trends")[1]
    assert trend_html.count("<svg") >= 1 and "Round 1" in trend_html and "Round 2" in trend_html
    assert "Change from round 1 to round 2" in " ".join(trend_html.split())
    assert "variances" in trend_html
    found, _signature = rounds_trends(made)
    choice = found[0]
    rows = choice.difference(1, 2)
    good = rows[0]
    # The difference is -0.5 in truth; its standard error is the two rounds' added in quadrature.
    first_se, second_se = choice.round(1).standard_errors[0], choice.round(2).standard_errors[0]
    assert good.standard_error == pytest.approx(math.hypot(first_se, second_se))
    assert abs(good.value + 0.5) < 4 * good.standard_error
    assert good.clear and good.high < 0
    # Another pair of rounds by query: the same round twice gives zero change.
    html = organizer_client.get(url, {"from": 2, "to": 2}).content.decode()
    assert "Change from round 2 to round 2" in " ".join(html.split())


def rounds_trends(made):
    from surveys.results.trends import series_trends

    return series_trends(made)


def test_a_one_off_survey_has_no_trends(organizer_client, organizer):
    survey = make_survey(organizer)
    make_question(survey)
    actions.do_open_survey(survey)
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert "data-trends" not in html


def test_exports_name_the_round(organizer_client, recurring):
    made = rounds_with_reports(recurring, [[0] * 50, [1] * 50], [["a"] * 5, ["a"] * 5])
    second = made[1]
    rows = list(
        csv.DictReader(
            io.StringIO(
                organizer_client.get(reverse("export_estimates", args=[second.pk, "csv"])).content.decode("utf-8-sig")
            )
        )
    )
    assert rows and {row["round"] for row in rows} == {"2"}
    payload = organizer_client.get(reverse("export_estimates", args=[second.pk, "json"])).json()
    assert payload["round"] == 2 and all(row["round"] == 2 for row in payload["estimates"])
    raw = b"".join(organizer_client.get(reverse("export_reports", args=[second.pk, "json"])).streaming_content)
    data = json.loads(raw)
    assert data["round"] == 2 and {r["round"] for r in data["reports"]} == {2}
    memo = {r["mechanism"]: r["memo"] for r in data["randomizations"]}
    assert memo == {"krr": "", "rappor": "memoized-prr+irr"}
    raw_csv = b"".join(organizer_client.get(reverse("export_reports", args=[second.pk, "csv"])).streaming_content)
    reader = list(csv.reader(io.StringIO(raw_csv.decode("utf-8-sig"))))
    assert reader[0][0] == "round" and {row[0] for row in reader[1:]} == {"2"}


def specs_of(html):
    return json.loads(html.split('id="murmur-specs" type="application/json">')[1].split("</script>")[0])


def promise_of(html):
    return json.loads(html.split('id="murmur-promise" type="application/json">')[1].split("</script>")[0])


def test_the_answer_page_memoizes_rappor_and_states_both_epsilons(client, recurring):
    html = client.get(reverse("respond", args=[recurring.slug])).content.decode()
    choice, text = recurring.questions.all()
    specs = {s["question"]: s for s in specs_of(html)}
    assert "memo" not in specs[choice.pk]
    assert specs[text.pk]["memo"] == {
        "series": recurring.series.key,
        "question": str(text.pk),
        "layers": "memoized-prr+irr",
    }
    promise = promise_of(html)["questions"]
    assert promise[str(text.pk)]["epsilon_infinity"] == pytest.approx(4 * math.log(3), abs=1e-12)
    assert "epsilon_infinity" not in promise[str(choice.pk)]
    assert f'data-series="{recurring.series.key}"' in html and 'data-round="1"' in html
    words = " ".join(html.split())
    assert "ε∞ = 4.39" in words and "spends another ε = 2" in words
    # The transparency page publishes the same entries, memo blocks included, and the same digest.
    record = survey_record(recurring)
    assert record.entries == specs_of(html)
    assert record.digest in html


def test_memo_keys_stay_the_same_in_the_next_round(client, recurring):
    second = rounds.do_open_next_round(recurring)
    assert 'id="murmur-specs"' not in client.get(recurring.get_share_url()).content.decode()  # round 1 is closed
    second_specs = specs_of(client.get(second.get_share_url()).content.decode())
    text = recurring.questions.get(kind="text")
    assert second_specs[1]["memo"] == {
        "series": recurring.series.key,
        "question": str(text.pk),
        "layers": "memoized-prr+irr",
    }


def test_the_layers_match_the_browser_check():
    source = (Path(settings.BASE_DIR) / "static/ldp/epsilon.js").read_text(encoding="utf-8")
    for mechanism, layers in rounds.MEMO_LAYERS.items():
        assert f'{mechanism}: "{layers}"' in source or f'"{mechanism}": "{layers}"' in source


def post(client, survey, reports, **headers):
    body = json.dumps({"token": new_token(survey), "reports": reports})
    return client.post(reverse("submit", args=[survey.slug]), body, content_type="application/json", **headers)


def text_item(survey, report):
    question = survey.questions.get(kind="text")
    return {"question": question.pk, "version": question.current_randomization().version, "report": report}


def nothing_stored():
    return not (Submission.objects.exists() or Report.objects.exists() or TallyCell.objects.exists())


def test_a_round_takes_a_rappor_report(client, recurring):
    response = post(
        client, recurring, with_stand_ins(recurring, [text_item(recurring, {"cohort": 3, "bits": [0, 1] * 16})])
    )
    assert response.status_code == 201, response.content
    assert stored_tally(recurring.questions.get(kind="text").current_randomization()).counts[3] == 1


@pytest.mark.parametrize(
    ("report", "reason"),
    [
        ({"cohort": 64, "bits": [0] * 32}, "cohort must lie in [0, 63]"),
        ({"cohort": 0, "bits": [0] * 31}, "bits must have 32 entries"),
        ({"cohort": 0, "bits": [0] * 33}, "bits must have 32 entries"),
        ({"cohort": 0, "bits": "01" * 16}, "bits must be a list"),
        ({"cohort": 0, "bits": [0] * 31 + [0.5]}, "must be 0 or 1"),
        ({"cohort": 0, "bits": [0] * 32, "permanent": [0] * 32}, "exactly the fields"),
    ],
)
def test_a_malformed_bloom_filter_report_to_a_round_is_refused_and_nothing_is_stored(client, recurring, report, reason):
    response = post(client, recurring, [text_item(recurring, report)])
    assert response.status_code == 400
    assert reason in response.json()["error"]
    assert nothing_stored()


def test_a_report_for_a_closed_round_is_refused_with_a_sentence(client, recurring):
    report = with_stand_ins(recurring, [text_item(recurring, {"cohort": 0, "bits": [1] * 32})])
    rounds.do_open_next_round(recurring)
    response = post(client, recurring, report)
    assert response.status_code == 400
    assert response.json()["error"].startswith("Round 1 of this survey is closed")
    assert nothing_stored()
    response = post(client, recurring, report, **KOREAN)
    assert response.status_code == 400 and "1회차" in response.json()["error"]


def test_round_pages_speak_korean(client, organizer_client, recurring):
    made = rounds_with_reports(recurring, [[0] * 200, [1] * 200], [["a"] * 10, ["a"] * 10])
    builder = organizer_client.get(reverse("survey_detail", args=[made[1].pk]), **KOREAN).content.decode()
    assert "반복 설문" in builder and "2회차" in builder and "다음 회차 열기" in builder
    results = organizer_client.get(reverse("survey_results", args=[made[1].pk]), **KOREAN).content.decode()
    assert "회차별 추이" in results
    answer = client.get(made[1].get_share_url(), **KOREAN).content.decode()
    assert "2회차" in answer and "ε∞" in answer
    old = client.get(made[0].get_share_url(), **KOREAN).content.decode()
    assert "지금 열려 있는 2회차에 응답하기" in " ".join(old.split())


def test_a_duplicate_of_a_round_starts_outside_the_series(recurring):
    copy = actions.do_duplicate_survey(recurring)
    assert copy.series is None and copy.round_number is None
    assert all(q.series_question == "" for q in copy.questions.all())


def test_deleting_a_question_in_a_later_round_keeps_the_others_matched(recurring):
    choice, text = recurring.questions.all()
    second = rounds.do_open_next_round(recurring)
    assert [q.memo_key for q in second.questions.all()] == [str(choice.pk), str(text.pk)]
    assert [q.series_question for q in recurring.questions.all()] == ["", ""]
    actions.do_delete_question(second.questions.get(kind="single"))
    third = rounds.do_open_next_round(second)
    (kept,) = third.questions.all()
    assert kept.memo_key == str(text.pk) and kept.kind == "text"
    (trend,), _signature = rounds_trends([recurring, second, third])
    assert trend.key == str(text.pk)  # the deleted question has no trend, the kept one stays matched


def test_the_transparency_page_states_both_epsilons_of_a_memoized_question(client, recurring):
    html = " ".join(client.get(reverse("transparency", args=[recurring.slug])).content.decode().split())
    assert "Memoized across the rounds" in html and "together at most ε∞ = 4.39" in html
    assert "Not memoized: randomized afresh in every round of this recurring survey, so its ε adds up." in html
    assert "whoever answered the 1 round so far spent ε = 2 on it" in html
    html = " ".join(
        client.get(reverse("transparency", args=[rounds.do_open_next_round(recurring).slug])).content.decode().split()
    )
    assert "whoever answered all 2 rounds so far spent ε = 4 on it" in html
    korean = " ".join(client.get(reverse("transparency", args=[recurring.slug]), **KOREAN).content.decode().split())
    assert "ε∞ = 4.394를 넘지 않습니다" in korean


@pytest.mark.parametrize(("epsilon", "d"), [(1.0, 4), (0.5, 2), (2.0, 1), (3.5, 3)])
def test_a_dbitflip_question_is_memoized_with_a_flip_that_gives_back_its_round_epsilon(organizer, epsilon, d):
    """The permanent bits at p1 = (p1' - gamma) / (1 - 2 gamma), flipped with gamma, are exactly the stored
    dBitFlip (ldp.memo, exact); the stated epsilon_inf is the permanent bits' dBitFlip epsilon."""
    from ldp.mechanisms.bitflip import DBitFlip
    from ldp.memo import dbitflip_round_epsilon

    question, spec, memo = one_question_round(
        organizer,
        lambda survey: make_question(
            survey, options=list("abcde"), mechanism="dbitflip", epsilon=epsilon, mechanism_params={"d": d}
        ),
    )
    assert memo == {
        "series": question.survey.series.key,
        "question": str(question.pk),
        "layers": "memoized-bits+flip",
        "gamma": 0.1,
    }
    bound = rounds.permanent_epsilon(spec, memo)
    permanent = DBitFlip(k=5, epsilon=bound, d=d)
    assert permanent.true_bit_probability == pytest.approx(rounds.permanent_bit_probability(spec, 0.1), abs=1e-12)
    assert dbitflip_round_epsilon(permanent, 0.1) == pytest.approx(epsilon, rel=1e-9)
    assert bound > epsilon


def test_a_dbitflip_question_too_precise_for_the_flip_is_randomized_afresh(organizer):
    # d >= 2: p1' = e^(eps/2) / (1 + e^(eps/2)) must stay below 1 - gamma = 0.9, i.e. eps < 2 ln 9 = 4.39.
    _question, _spec, memo = one_question_round(
        organizer,
        lambda survey: make_question(
            survey, options=list("abcde"), mechanism="dbitflip", epsilon=4.5, mechanism_params={"d": 2}
        ),
    )
    assert memo is None


def test_the_answer_page_sends_the_dbitflip_memo_block_and_promises_its_bound(client, organizer):
    survey = make_survey(organizer)
    question = make_question(survey, options=list("abcd"), mechanism="dbitflip", epsilon=1.0, mechanism_params={"d": 2})
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, "manual")
    html = client.get(survey.get_share_url()).content.decode()
    (entry,) = specs_of(html)
    assert entry["memo"]["layers"] == "memoized-bits+flip" and entry["memo"]["gamma"] == 0.1
    # p1' = e^0.5 / (1 + e^0.5); p1 = (p1' - 0.1) / 0.8; epsilon_inf = 2 ln(p1 / (1 - p1)).
    p1 = (math.exp(0.5) / (1 + math.exp(0.5)) - 0.1) / 0.8
    assert promise_of(html)["questions"][str(question.pk)]["epsilon_infinity"] == pytest.approx(
        2 * math.log(p1 / (1 - p1))
    )
    assert "data-memo-note" in html


def test_a_schedule_whose_rounds_were_all_deleted_stops(recurring):
    series = rounds.do_make_recurring(recurring, "weekly")
    recurring.delete()
    Series.objects.filter(pk=series.pk).update(next_round_at=datetime(2020, 1, 1, tzinfo=UTC))
    assert rounds.open_due_rounds() == []
    series.refresh_from_db()
    assert series.next_round_at is None


def test_the_survey_list_names_each_round(organizer_client, recurring):
    rounds.do_open_next_round(recurring)
    html = organizer_client.get(reverse("survey_list")).content.decode()
    assert html.count("data-list-round") == 2 and "Round 2" in html


@pytest.mark.parametrize("epsilon", [0.2, 0.5, 1.0, 1.09])
def test_a_1bitmean_question_is_memoized_with_a_quarter_flip_that_gives_back_its_round_epsilon(organizer, epsilon):
    """Weights (2D, 4A - D, 4m) flipped with 1/4 are exactly the stored 1BitMean's (A + k m) / D, and the
    flipped round's epsilon (ldp.memo.one_bit_round_epsilon) is the question's."""
    from types import SimpleNamespace

    from ldp.memo import one_bit_round_epsilon

    question, spec, memo = one_question_round(
        organizer, lambda survey: make_number_question(survey, lo=0, hi=10, mechanism="1bitmean", epsilon=epsilon)
    )
    assert memo == {
        "series": question.survey.series.key,
        "question": str(question.pk),
        "layers": "memoized-bit+flip",
        "gamma": 0.25,
    }
    denominator, base, slope = rounds.permanent_one_bit_weights(spec)
    for k in range(spec["grid"] + 1):
        # 4 D' P(1 after the flip) = 3 (A' + k m') + D' - (A' + k m') = 4 D' (A + k m) / D, in integers.
        assert 2 * (base + k * slope) + denominator == 8 * (spec["base"] + k * spec["slope"])
    permanent = SimpleNamespace(base=base, denominator=denominator)
    assert one_bit_round_epsilon(permanent, 0.25) == pytest.approx(spec["epsilon"], rel=1e-9)
    assert rounds.permanent_epsilon(spec, memo) == pytest.approx(math.log((denominator - base) / base), rel=1e-15)


def test_a_1bitmean_question_at_or_above_ln_3_is_randomized_afresh(organizer):
    _question, _spec, memo = one_question_round(
        organizer, lambda survey: make_number_question(survey, lo=0, hi=10, mechanism="1bitmean", epsilon=1.2)
    )
    assert memo is None


def one_question_round(organizer, add):
    """Round 1 of a new series with the one question ``add(survey)`` makes: (question, its spec, its memo block)."""
    survey = make_survey(organizer)
    question = add(survey)
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, "manual")
    survey.refresh_from_db()
    spec = question.current_randomization().build_mechanism().client_spec()
    return question, spec, rounds.memo_block(survey, question, spec)


@pytest.mark.parametrize(("field", "value"), [("epsilon", "2.5"), ("options_text", "Good\nFine\nBad\nAwful")])
def test_a_later_round_keeps_the_randomization_of_reports_in_an_earlier_one(organizer_client, recurring, field, value):
    choice = recurring.questions.get(kind="single")
    make_reports(choice, [0, 1, 2])
    second = rounds.do_open_next_round(recurring)
    copy = second.questions.get(kind="single")
    assert not copy.has_reports()
    data = {"text": "Mood?", "kind": "single", "options_text": "Good\nFine\nBad", "epsilon": "2.0"}
    data |= {"mechanism": "krr", "action": "save", field: value}
    response = organizer_client.post(reverse("question_edit", args=[second.pk, copy.pk]), data)
    assert response.status_code == 200 and "frozen" in response.content.decode()
    copy.refresh_from_db()
    assert (copy.epsilon, copy.options, copy.randomization_key()) == (2.0, choice.options, choice.randomization_key())


def test_a_later_round_without_earlier_reports_may_still_change(organizer_client, recurring):
    second = rounds.do_open_next_round(recurring)
    copy = second.questions.get(kind="single")
    data = {"text": "Mood?", "kind": "single", "options_text": "Good\nFine\nBad", "epsilon": "2.5"}
    response = organizer_client.post(reverse("question_edit", args=[second.pk, copy.pk]), data | {"mechanism": "krr"})
    assert response.status_code == 302
    copy.refresh_from_db()
    assert copy.epsilon == 2.5


def test_a_multi_select_question_has_a_trend_per_option(organizer_client, organizer):
    survey = make_survey(organizer)
    question = make_multi_question(survey)  # set-OUE at epsilon 2 over five options
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, Series.Recurrence.MANUAL)
    second = rounds.do_open_next_round(survey)
    # "Focus time" chosen by 80 % in round 1 and 20 % in round 2, "Pair work" by 50 % in both; n = 2,000.
    n = 2000
    before, after = np.zeros((n, 5), dtype=int), np.zeros((n, 5), dtype=int)
    before[: n * 8 // 10, 0] = after[: n * 2 // 10, 0] = 1
    before[: n // 2, 1] = after[: n // 2, 1] = 1
    make_set_reports(question, before, seed=1)
    make_set_reports(second.questions.get(), after, seed=2)
    (trend,), _signature = rounds_trends([survey, second])
    assert trend.labels == question.options and [r.round_number for r in trend.rounds] == [1, 2]
    focus, pair = trend.difference(1, 2)[:2]
    # Truth -0.6 and 0: each within 4 of its own standard errors (the rounds' added in quadrature).
    assert abs(focus.value + 0.6) < 4 * focus.standard_error and focus.clear
    assert abs(pair.value) < 4 * pair.standard_error
    html = organizer_client.get(reverse("survey_results", args=[second.pk])).content.decode()
    assert "Focus time" in html.split("data-trends")[1]


def test_a_rounds_public_results_page_says_which_round_it_is(client, recurring):
    Survey.objects.filter(pk=recurring.pk).update(public_results=True)
    second = rounds.do_open_next_round(recurring)
    for survey, number in ((recurring, 1), (second, 2)):
        html = client.get(reverse("public_results", args=[survey.slug])).content.decode()
        assert f'data-round-number="{number}"' in html and f"Results of round {number}" in html
    korean = client.get(reverse("public_results", args=[second.slug]), **KOREAN).content.decode()
    assert "2회차" in korean


def test_a_round_opened_by_a_visit_keeps_the_visits_time_only_to_the_hour(client, recurring):
    due = datetime(2026, 3, 9, 9, 0, tzinfo=UTC)
    Series.objects.filter(pk=recurring.series_id).update(recurrence="weekly", next_round_at=due)
    second = rounds.open_if_due(recurring.series_id, now=due + timedelta(hours=2, minutes=37, seconds=13))
    second.refresh_from_db()
    assert second.opened_at == second.created_at == due + timedelta(hours=2)
    assert {r.created_at for q in second.questions.all() for r in q.randomizations.all()} == {second.opened_at}
    by_hand = rounds.do_open_next_round(second, now=due + timedelta(days=1, minutes=5))
    assert by_hand.opened_at == due + timedelta(days=1, minutes=5)  # the organizer's own action


def test_a_frozen_questions_options_may_be_reworded_but_not_reordered(organizer_client, recurring):
    choice = recurring.questions.get(kind="single")
    make_reports(choice, [0, 1, 2])
    copy = rounds.do_open_next_round(recurring).questions.get(kind="single")
    url = reverse("question_edit", args=[copy.survey_id, copy.pk])
    data = {"text": "Mood?", "kind": "single", "epsilon": "2.0", "mechanism": "krr", "action": "save"}
    response = organizer_client.post(url, data | {"options_text": "Bad\nFine\nGood"})
    assert response.status_code == 200 and "keep their order" in response.content.decode()
    copy.refresh_from_db()
    assert copy.options == ["Good", "Fine", "Bad"]
    assert organizer_client.post(url, data | {"options_text": "Great\nFine\nBad"}).status_code == 302
    copy.refresh_from_db()
    assert copy.options == ["Great", "Fine", "Bad"]


def test_a_draft_refuses_its_next_round_in_the_glossarys_korean(organizer_client, organizer):
    survey = make_survey(organizer)
    make_question(survey)
    rounds.do_make_recurring(survey, "manual")
    response = organizer_client.post(reverse("survey_next_round", args=[survey.pk]), follow=True, **KOREAN)
    assert "먼저 설문을 시작하세요" in response.content.decode()  # "open a survey" is 설문 시작 (docs/glossary.md)


def test_the_next_round_button_says_which_round_it_closes(organizer_client, recurring):
    second = rounds.do_open_next_round(recurring)
    for survey in (recurring, second):  # from any round's builder, the latest round is the one closed
        html = " ".join(organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode().split())
        assert "This closes round 2 for good" in html
    korean = " ".join(
        organizer_client.get(reverse("survey_detail", args=[second.pk]), **KOREAN).content.decode().split()
    )
    assert "2회차가 마감됩니다" in korean


def test_a_recurring_survey_with_a_declared_pair_shows_its_results_and_trends(organizer_client, organizer):
    survey = make_survey(organizer, epsilon_cap=5.0)
    fruit = make_question(survey, text="Fruit?", options=["Apple", "Banana"], epsilon=1.0)
    weekend = make_question(survey, text="Weekend?", options=["Yes", "No"], epsilon=1.0)
    data = {"first": fruit.pk, "second": weekend.pk, "epsilon": "2", "mechanism": "krr"}
    assert organizer_client.post(reverse("pair_add", args=[survey.pk]), data).status_code == 302
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, Series.Recurrence.MANUAL)
    second = rounds.do_open_next_round(survey)
    for i, current in enumerate((survey, second)):
        make_reports(current.questions.get(kind="pair"), [0, 1, 2, 3] * 100, seed=i)
    response = organizer_client.get(reverse("survey_results", args=[second.pk]))
    assert response.status_code == 200 and "data-trends" in response.content.decode()
    (trend,), _signature = rounds_trends([survey, second])  # the pair's; its two questions are not asked alone
    assert trend.question.kind == "pair" and len(trend.labels) == 4 and [r.round_number for r in trend.rounds] == [1, 2]
    assert len(trend.difference(1, 2)) == 4


def test_the_builder_card_says_an_earlier_rounds_reports_froze_the_question(organizer_client, recurring):
    make_reports(recurring.questions.get(kind="single"), [0, 1, 2])
    second = rounds.do_open_next_round(recurring)
    html = " ".join(organizer_client.get(reverse("survey_detail", args=[second.pk])).content.decode().split())
    assert html.count("Another round of this survey has reports") == 1  # the choice question, not the text one
    korean = organizer_client.get(reverse("survey_detail", args=[second.pk]), **KOREAN).content.decode()
    assert "다른 회차" in korean


def test_an_invite_only_series_says_each_round_needs_its_own_invitations(organizer_client, recurring):
    Survey.objects.filter(pk=recurring.pk).update(invite_only=True)
    second = rounds.do_open_next_round(recurring)
    assert second.invite_only and not second.invitations.exists()
    html = " ".join(organizer_client.get(reverse("survey_detail", args=[second.pk])).content.decode().split())
    assert "an invitation belongs to one round" in html
    korean = organizer_client.get(reverse("survey_detail", args=[second.pk]), **KOREAN).content.decode()
    assert "초대" in korean.split("data-round-invitations")[1].split("</p>")[0]


def test_free_text_and_number_trends_match_ldp_round_by_round(organizer_client, organizer):
    """A RAPPOR short answer with candidates and a 1BitMean number, two rounds of seeded reports: each
    round's value and standard error on the trend, and the difference's interval, are ldp's own, recomputed
    here from the same seeds without the app (and each lies within 4 standard errors of the truth)."""
    from scipy import stats

    from ldp.numeric import make_numeric_mechanism
    from ldp.textreports import make_text_mechanism

    survey = make_survey(organizer, title="Weekly words")
    candidates = [normalize_text(t) for t in ("서울", "부산", "제주")]
    text = make_text_question(
        survey, "rappor", epsilon=EPSILON_ONE, text="Where?", mechanism_params=RAPPOR_PARAMS, candidates=candidates
    )
    number = make_number_question(survey, lo=0, hi=10, text="Hours?", mechanism="1bitmean", epsilon=1.0)
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, Series.Recurrence.MANUAL)
    second = rounds.do_open_next_round(survey)
    n = 3000
    # Round 1: 50 % Seoul, 30 % Busan, 20 % Jeju, mean 7 hours; round 2: 20 / 30 / 50 %, mean 5 hours.
    truth = {1: ([0.5, 0.3, 0.2], 7.0), 2: ([0.2, 0.3, 0.5], 5.0)}
    texts, hours = {}, {}
    for number_of_round, current in ((1, survey), (2, second)):
        shares, mean = truth[number_of_round]
        texts[number_of_round] = [c for c, share in zip(candidates, shares, strict=True) for _ in range(int(share * n))]
        hours[number_of_round] = [mean - 2.0, mean + 2.0] * (n // 2)
        make_text_reports(current.questions.get(kind="text"), texts[number_of_round], seed=10 + number_of_round)
        make_reports(current.questions.get(kind="numeric"), hours[number_of_round], seed=20 + number_of_round)

    # ldp alone, from the same seeds: the query of the candidates and the mean.
    rappor = make_text_mechanism("rappor", epsilon=EPSILON_ONE, **text.mechanism_params)
    one_bit = make_numeric_mechanism("1bitmean", epsilon=1.0, **number.mechanism_params)
    expected_text, expected_mean = {}, {}
    for r in (1, 2):
        sent = [rappor.parse_report(report) for report in rappor.randomize_reports(texts[r], rng=10 + r)]
        packed = np.frombuffer(b"".join(sent), dtype=np.uint8).reshape(len(sent), -1)
        counts = rappor.query(rappor.tally(packed), candidates, alpha=0.05)
        expected_text[r] = (counts.counts / counts.n, counts.standard_errors / counts.n)
        estimate = one_bit.estimate(one_bit.tally(one_bit.randomize(np.asarray(hours[r]), rng=20 + r)))
        expected_mean[r] = (estimate.mean, estimate.standard_error)

    found, _signature = rounds_trends([survey, second])
    by_kind = {trend.question.kind: trend for trend in found}
    text_trend, mean_trend = by_kind["text"], by_kind["numeric"]
    assert text_trend.summary == "text" and text_trend.labels == candidates
    assert mean_trend.summary == "mean" and [r.round_number for r in mean_trend.rounds] == [1, 2]
    z = stats.norm.ppf(0.975)
    for r in (1, 2):
        values, errors = expected_text[r]
        shown = text_trend.round(r)
        assert shown.n == len(texts[r])
        np.testing.assert_allclose(shown.values, values, rtol=1e-9)
        np.testing.assert_allclose(shown.standard_errors, errors, rtol=1e-9)
        assert np.all(np.abs(shown.values - truth[r][0]) < 4 * shown.standard_errors)
        mean, error = expected_mean[r]
        assert mean_trend.round(r).values[0] == pytest.approx(mean, rel=1e-12)
        assert mean_trend.round(r).standard_errors[0] == pytest.approx(error, rel=1e-12)
        assert abs(mean - truth[r][1]) < 4 * error
    for row, label, a, b in zip(
        text_trend.difference(1, 2), candidates, expected_text[1][0], expected_text[2][0], strict=True
    ):
        error = math.hypot(expected_text[1][1][candidates.index(label)], expected_text[2][1][candidates.index(label)])
        assert row.label == label and row.value == pytest.approx(b - a, rel=1e-9)
        assert row.standard_error == pytest.approx(error, rel=1e-9)
        assert (row.low, row.high) == (pytest.approx(b - a - z * error), pytest.approx(b - a + z * error))
    seoul, busan, jeju = text_trend.difference(1, 2)
    assert seoul.clear and seoul.high < 0 and jeju.clear and jeju.low > 0  # truth: -30 and +30 points
    assert abs(busan.value) < 4 * busan.standard_error  # truth: no change
    (hours_change,) = mean_trend.difference(1, 2)
    error = math.hypot(expected_mean[1][1], expected_mean[2][1])
    assert hours_change.value == pytest.approx(expected_mean[2][0] - expected_mean[1][0], rel=1e-9)
    assert (hours_change.low, hours_change.high) == (
        pytest.approx(hours_change.value - z * error),
        pytest.approx(hours_change.value + z * error),
    )
    assert hours_change.clear and abs(hours_change.value + 2.0) < 4 * error
    # The dashboard draws both trend cards with their difference tables.
    html = organizer_client.get(reverse("survey_results", args=[second.pk])).content.decode()
    for trend in (text_trend, mean_trend):
        card = html.split(f'data-trend="{trend.key}"')[1].split("</article>")[0]
        assert "<svg" in card and "data-difference" in card


def add_question(client, survey, **fields):
    """Add a question through the builder's form (Automatic, three options, epsilon 2 unless told)."""
    data = {"text": "Q?", "kind": "single", "options_text": "A\nB\nC", "epsilon": "2", "mechanism": "auto"}
    response = client.post(reverse("question_add", args=[survey.pk]), data | fields)
    assert response.status_code == 302, response.content.decode()[:3000]
    return survey.questions.order_by("-position").first()


NUMBER = {"kind": "numeric", "options_text": "", "range_low": "0", "range_high": "10"}
#: The builder's questions of test_automatic_*: (fields, what Automatic picks in a one-off survey, in a
#: recurring one). Choices and numbers get the memoized mechanism only where its memoized form exists at
#: their epsilon (dBitFlip below 2 ln 9 = 4.39 with d >= 2; 1BitMean below ln 3).
AUTOMATIC_PICKS = [
    ({"text": "Mood?"}, "krr", "dbitflip"),
    ({"text": "Mood, precisely?", "epsilon": "5"}, "krr", "krr"),
    ({"text": "One word?", "kind": "text", "options_text": ""}, "text-cms", "rappor"),
    ({"text": "Hours?", **NUMBER, "epsilon": "1"}, "hybrid", "1bitmean"),
    ({"text": "Hours, precisely?", **NUMBER, "epsilon": "1.5"}, "hybrid", "hybrid"),
    ({"text": "Which?", "kind": "multi_select", "options_text": "A\nB\nC\nD"}, "padding-krr", "padding-krr"),
]  # fmt: skip


@pytest.mark.parametrize("recurring", [False, True])
def test_automatic_picks_a_memoized_mechanism_in_a_recurring_survey(client, organizer_client, organizer, recurring):
    survey = make_survey(organizer, title="Pulse", epsilon_cap=None)
    if recurring:
        rounds.do_make_recurring(survey, Series.Recurrence.MANUAL)
    n = survey.expected_respondents
    added = [add_question(organizer_client, survey, **fields) for fields, _once, _again in AUTOMATIC_PICKS]
    picks = [question.mechanism for question in added]
    assert picks == [again if recurring else once for _fields, once, again in AUTOMATIC_PICKS]
    assert all(question.mechanism_chosen_automatically for question in added)
    if recurring:
        # The advisor's best-ranked dBitFlip whose memoized form exists: here d = 3 (SUE) at epsilon 2.
        assert added[0].mechanism_params == memoization.memoized_choice(3, 2.0, n).params == {"d": 3}
    actions.do_open_survey(survey)
    specs = {entry["question"]: entry for entry in specs_of(client.get(survey.get_share_url()).content.decode())}
    memoized = [question.text for question in added if "memo" in specs[question.pk]]
    assert memoized == (["Mood?", "One word?", "Hours?"] if recurring else [])
    builder = " ".join(organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode().split())
    # The non-memoized ones (epsilon too large for a memoized form; no memoized form for sets) say their
    # epsilon adds up; a one-off survey says nothing of rounds.
    assert builder.count("data-adds-up") == (3 if recurring else 0)
    assert ("over the 1 round so far, ε = 5 in all" in builder) is recurring
    assert (
        "This survey recurs, so Automatic picks among the mechanisms memoized across rounds" in builder
    ) is recurring
    assert ("This survey recurs, so Automatic picks RAPPOR" in builder) is recurring
    assert ("This survey recurs, so Automatic picks 1BitMean" in builder) is recurring
    assert ("At this ε no mechanism for choices is memoized" in builder) is recurring
    # The matrix and pair forms' help says what Automatic picks in a recurring survey.
    assert (
        "This survey recurs, so Automatic picks among the mechanisms memoized across rounds (dBitFlip" in builder
    ) is recurring


def test_recommend_a_mechanism_in_a_recurring_survey_recommends_a_memoized_one(organizer_client, organizer):
    survey = make_survey(organizer)
    rounds.do_make_recurring(survey, Series.Recurrence.MANUAL)
    data = {"text": "Q?", "kind": "single", "options_text": "A\nB\nC", "epsilon": "2", "mechanism": "krr"}
    html = organizer_client.post(reverse("question_add", args=[survey.pk]), data | {"action": "recommend"})
    assert '<option value="dbitflip" selected>' in html.content.decode()


def test_a_survey_made_recurring_chooses_again_for_its_automatic_questions_without_reports(
    client, organizer_client, organizer
):
    survey = make_survey(organizer, title="Pulse")
    choice = add_question(organizer_client, survey, text="Mood?")
    text = add_question(organizer_client, survey, text="One word?", kind="text", options_text="")
    chosen = add_question(organizer_client, survey, text="Team?", mechanism="krr")
    answered = add_question(organizer_client, survey, text="Week?")
    assert [q.mechanism for q in (choice, text, chosen, answered)] == ["krr", "text-cms", "krr", "krr"]
    actions.do_open_survey(survey)
    make_reports(answered, [0, 1, 2] * 10)
    response = organizer_client.post(reverse("survey_recurrence", args=[survey.pk]), {"recurrence": "weekly"})
    assert response.status_code == 302
    for question in (choice, text, chosen, answered):
        question.refresh_from_db()
    # Unfrozen and on Automatic: chosen again, memoized. Chosen by hand, or with reports: kept.
    assert [q.mechanism for q in (choice, text, chosen, answered)] == ["dbitflip", "rappor", "krr", "krr"]
    assert choice.current_randomization().version == 2 and choice.current_randomization().memo_gamma == 0.1
    assert answered.current_randomization().version == 1
    specs = {entry["question"]: entry for entry in specs_of(client.get(survey.get_share_url()).content.decode())}
    assert [("memo" in specs[q.pk]) for q in (choice, text, chosen, answered)] == [True, True, False, False]
    html = " ".join(organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode().split())
    assert html.count("data-adds-up") == 2
    # The next round keeps every randomization; the answered question's copy stays k-RR on Automatic.
    survey.refresh_from_db()
    second = rounds.do_open_next_round(survey)
    copy = second.questions.get(text="Week?")
    data = {"text": "This week?", "kind": "single", "options_text": "A\nB\nC", "epsilon": "2", "mechanism": "auto"}
    assert organizer_client.post(reverse("question_edit", args=[second.pk, copy.pk]), data).status_code == 302
    copy.refresh_from_db()
    assert (copy.text, copy.mechanism, copy.randomization_key()) == ("This week?", "krr", answered.randomization_key())


def test_the_builder_card_says_a_question_randomized_afresh_adds_up_over_the_rounds(organizer_client, recurring):
    second = rounds.do_open_next_round(recurring)
    html = " ".join(organizer_client.get(reverse("survey_detail", args=[second.pk])).content.decode().split())
    # The k-RR choice at epsilon 2 (chosen by hand), not the RAPPOR short answer (memoized).
    assert html.count("data-adds-up") == 1
    assert "its ε adds up for whoever answers again. Each round spends ε = 2; over the 2 rounds so far, ε = 4" in html
    korean = " ".join(
        organizer_client.get(reverse("survey_detail", args=[second.pk]), **KOREAN).content.decode().split()
    )
    assert "지금까지의 2개 회차를 모두 합치면 ε = 4입니다" in korean


def test_a_matrix_and_a_declared_pair_on_automatic_are_memoized_in_a_recurring_survey(organizer_client, organizer):
    survey = make_survey(organizer, epsilon_cap=None)
    rounds.do_make_recurring(survey, Series.Recurrence.MANUAL)
    data = {"title": "Agree?", "items_text": "Tools\nTeam", "options_text": "No\nMaybe\nYes", "epsilon": "1.5"}
    assert (
        organizer_client.post(reverse("matrix_add", args=[survey.pk]), data | {"mechanism": "auto"}).status_code == 302
    )
    fruit = add_question(organizer_client, survey, text="Fruit?", options_text="Apple\nBanana", mechanism="krr")
    day = add_question(organizer_client, survey, text="Day?", options_text="Weekday\nWeekend", mechanism="krr")
    data = {"first": fruit.pk, "second": day.pk, "epsilon": "2", "mechanism": "auto"}
    assert organizer_client.post(reverse("pair_add", args=[survey.pk]), data).status_code == 302
    items = list(survey.questions.filter(kind="matrix"))
    pair = survey.questions.get(kind="pair")
    n = survey.expected_respondents
    assert [(q.mechanism, q.mechanism_params) for q in items] == [
        ("dbitflip", memoization.memoized_choice(3, 1.5, n).params)
    ] * 2
    assert (pair.mechanism, pair.mechanism_params) == ("dbitflip", memoization.memoized_choice(4, 2.0, n).params)
    assert all(rounds.question_memoized(q) for q in (*items, pair))


def test_the_builder_names_the_mechanisms_recurring_would_change_before_it_happens(organizer_client):
    organizer_client.post(reverse("survey_create"), {"title": "Pulse", "expected_respondents": "1000"})
    survey = Survey.objects.get(title="Pulse")
    data = {"text": "Which fruit?", "kind": "single", "options_text": "Apple\nBanana\nCherry", "budget": "plan"}
    data |= {"weight": "1", "epsilon": "1.0", "mechanism": "auto", "action": "save"}
    organizer_client.post(reverse("question_add", args=[survey.pk]), data)
    question = survey.questions.get()
    assert question.mechanism_chosen_automatically
    before = question.mechanism
    html = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert "data-recurring-changes" in html
    assert "changes the mechanism of 1 question chosen automatically" in html  # the singular form
    assert "“Which fruit?”" in html
    organizer_client.post(reverse("survey_recurrence", args=[survey.pk]), {"recurrence": "weekly"})
    question.refresh_from_db()
    assert question.mechanism != before  # what the builder announced is what happened
    assert f"{Question.MechanismName(question.mechanism).label}" in html
    html = organizer_client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert "data-recurring-changes" not in html  # once recurring, nothing more to announce
