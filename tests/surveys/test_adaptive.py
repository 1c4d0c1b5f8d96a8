"""Two-phase (adaptive) designs in the app: builder, the re-tune job, the served spec, submit, pooled results, words.

The survey of these tests: one single-choice question of k = 10 options at epsilon = 1 that starts
with k-RR (chosen by hand) and re-tunes after 15 % of 2,000 expected respondents (300 reports). With
answers concentrated on one option (60 %), ldp.adaptive.retune_from_tally moves it to subset
selection of size 3 (probed: expected largest error 0.078 against k-RR's above 0.082).
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import translation

from ldp.adaptive import design_candidates
from surveys import actions
from surveys.forms.question import QuestionForm
from surveys.jobs.records import Job
from surveys.kinds import adaptive, summary_for
from surveys.models import Question, Randomization, Report
from surveys.responding import retune
from surveys.responding.submissions import new_token
from surveys.results.estimates import SurveyState
from surveys.transparency import survey_record
from tests.base import bulk_reports, make_question, make_survey, stored_tally
from tests.base import make_reports as store_reports

K, EPSILON, EXPECTED, PERCENT = 10, 1.0, 2000, 15
TRUTH = np.r_[0.6, np.full(K - 1, 0.4 / (K - 1))]


def two_phase_survey(owner, **fields):
    survey = make_survey(owner, expected_respondents=EXPECTED, **fields)
    options = [f"Option {i}" for i in range(K)]
    question = make_question(survey, text="Which?", options=options, epsilon=EPSILON, adaptive_percent=PERCENT)
    actions.do_open_survey(survey)
    return survey, question


def answers(count, seed):
    return np.random.default_rng(seed).choice(K, size=count, p=TRUTH).tolist()


def phase_one(question, seed=1):
    store_reports(question, answers(adaptive.threshold(question), seed), seed=seed + 100)


def test_the_builder_stores_the_share_and_refuses_what_cannot_re_tune(organizer):
    survey = make_survey(organizer, expected_respondents=EXPECTED)
    data = {
        "text": "Which?",
        "kind": "single",
        "options_text": "A\nB\nC\nD",
        "epsilon": "1",
        "budget": "fixed",
        "weight": "1",
        "mechanism": "auto",
        "adaptive": "on",
        "adaptive_percent": "20",
    }
    form = QuestionForm(data, survey=survey)
    assert form.is_valid(), form.errors
    question = actions.do_add_question(survey, form.cleaned_data)
    assert question.adaptive_percent == 20
    assert adaptive.threshold(question) == 400  # ceil(20 % of 2,000)
    direct = QuestionForm({**data, "mechanism": "hadamard"}, survey=survey)
    assert not direct.is_valid() and "adaptive" in direct.errors
    small = make_survey(organizer, expected_respondents=100)
    few = QuestionForm(data, survey=small)  # 20 % of 100 = 20 reports: too few to tell a shape
    assert not few.is_valid() and "adaptive_percent" in few.errors
    numeric = QuestionForm({**data, "kind": "numeric", "range_low": "0", "range_high": "9"}, survey=survey)
    if numeric.is_valid():  # a kind that does not adapt ignores the box
        assert numeric.cleaned_data["adaptive_percent"] is None


def test_it_waits_for_the_threshold_then_switches_once_and_a_retried_job_changes_nothing(organizer):
    survey, question = two_phase_survey(organizer)
    store_reports(question, answers(adaptive.threshold(question) - 1, 1), seed=7)
    assert retune.retune_question(question.pk) == {"waiting": 299}
    store_reports(question, answers(1, 2), seed=8)
    decided = retune.retune_question(question.pk)
    assert decided == {"after": 300, "mechanism": "subset", "params": {"subset_size": 3}}
    assert retune.retune_question(question.pk) == {"decided": "before"}  # the job retried
    versions = list(question.randomizations.order_by("version"))
    assert [(r.version, r.mechanism, r.retuned_after, r.retired) for r in versions] == [
        (1, "krr", None, False),
        (2, "subset", 300, False),
    ]
    question.refresh_from_db()
    assert question.current_randomization() == versions[1]
    assert question.retuned_after == 300


def test_the_choice_reads_the_phase_one_tally_alone(organizer, django_assert_max_num_queries):
    """Two questions whose stored reports are the same bytes, from different true answers (one's
    are the other's reversed: randomized differently, then replaced by the first's reports), make the
    same choice; and the job reads no report row, only tally cells."""
    survey, first = two_phase_survey(organizer)
    second = make_question(survey, text="Other?", options=first.options, epsilon=EPSILON, adaptive_percent=PERCENT)
    phase_one(first)
    version = actions.sync_randomization(second)
    store_reports(second, [K - 1 - a for a in answers(300, 1)], seed=5)
    assert stored_tally(version).counts.tolist() != stored_tally(first.current_randomization()).counts.tolist()
    Report.objects.filter(question=second).delete()
    from surveys.models import TallyCell

    TallyCell.objects.filter(randomization=version).delete()
    store_reports_as(second, version, Report.objects.filter(question=first))
    with connection.execute_wrapper(refuse_report_reads):
        a, b = retune.retune_question(first.pk), retune.retune_question(second.pk)
    assert (a["mechanism"], a["params"]) == (b["mechanism"], b["params"]) == ("subset", {"subset_size": 3})


def refuse_report_reads(execute, sql, params, many, context):
    assert not (sql.lstrip().upper().startswith("SELECT") and '"surveys_report"' in sql), sql
    return execute(sql, params, many, context)


def store_reports_as(question, randomization, reports):
    """The same packed reports stored again under another question's randomization, with its tally."""
    from surveys.responding.writes import add_to_tally, record_submissions

    packed = [bytes(r.packed) for r in reports]
    submissions = record_submissions(question.survey, [None] * len(packed))
    bulk_reports(question, randomization, submissions, packed)
    add_to_tally(randomization, packed)


def test_every_design_the_app_can_switch_to_is_one_ldp_tests_exactly():
    """tests/ldp/test_adaptive.py checks every design of design_candidates(k, epsilon) exactly (at
    k = 5; OLH in tests/ldp/test_privacy_exact.py); the app starts from and switches to those only,
    and here every one at k = 3 and 10 is enumerated again: max over reports and answer pairs of
    ln P[y | v] / P[y | v'] is epsilon."""
    rng = np.random.default_rng(3)
    for k, epsilon in [(3, 0.5), (10, 1.0), (20, 2.0)]:
        candidates = design_candidates(k, epsilon)
        tested = {(m.name, json.dumps(m.params(), sort_keys=True)) for m in candidates}
        assert adaptive.adaptive_mechanisms() == {name for name, _ in tested}
        for candidate in candidates:
            if k <= 10 and hasattr(candidate, "report_probabilities") and candidate.name != "olh":
                p = candidate.report_probabilities()
                assert np.log(p.max(axis=0) / p.min(axis=0)).max() == pytest.approx(epsilon, abs=1e-9)
            else:
                assert candidate.worst_case_log_ratio() == pytest.approx(epsilon)
        for shares in (np.full(k, 1 / k), rng.dirichlet(np.full(k, 0.3))):
            first = Randomization(mechanism="krr", k=k, epsilon=epsilon, params={})
            mechanism = first.build_mechanism()
            tally = mechanism.tally(mechanism.randomize(rng.choice(k, size=500, p=shares), rng=rng))
            design = adaptive.next_design(first, tally, 5000)
            if design is not None:
                assert (design[0], json.dumps(design[1], sort_keys=True)) in tested


@pytest.mark.django_db(transaction=True)
def test_concurrent_jobs_re_tune_exactly_once(organizer):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith("file:memorydb"):
        pytest.skip("in-memory SQLite shares one connection between threads; PostgreSQL runs this")
    survey, question = two_phase_survey(organizer)
    phase_one(question)
    outcomes, errors = [], []

    def run():
        try:
            outcomes.append(retune.retune_question(question.pk))
        except Exception as error:  # an integrity error would be a second re-tune refused late
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum("after" in o for o in outcomes) == 1
    assert Randomization.objects.filter(question=question, retuned_after__isnull=False).count() == 1


def submission_items(survey, question, randomization, answer, seed):
    mechanism = randomization.build_mechanism()
    packed = mechanism.randomize(np.array([answer]), rng=seed)[0].tobytes()
    report = {"question": question.pk, "version": randomization.version, "report": mechanism.unpack_report(packed)}
    return {"token": new_token(survey), "reports": [report]}


def post(client, survey, payload):
    return client.post(reverse("submit", args=[survey.slug]), json.dumps(payload), content_type="application/json")


def test_the_submission_that_reaches_the_threshold_queues_the_re_tune_and_new_pages_get_the_new_spec(
    organizer, django_capture_on_commit_callbacks
):
    survey, question = two_phase_survey(organizer, allow_repeat_responses=True)
    store_reports(question, answers(299, 1), seed=9)
    first = question.current_randomization()
    client = Client()
    served = client.get(reverse("respond", args=[survey.slug])).content.decode()
    assert '"version": 1' in served or '"version":1' in served
    with django_capture_on_commit_callbacks(execute=True):  # the job's "decided" mark, set on commit
        response = post(client, survey, submission_items(survey, question, first, 0, 1))
    assert response.status_code == 201
    receipt = response.json()["receipt"][0]
    assert "version 1" in receipt["design"] and "ε = 1" in receipt["design"]
    question.refresh_from_db()
    second = question.current_randomization()
    assert (second.version, second.mechanism, second.retuned_after) == (2, "subset", 300)
    page = client.get(reverse("respond", args=[survey.slug])).content.decode()
    assert '"mechanism": "subset"' in page or '"mechanism":"subset"' in page
    # A page served before the switch still sends version 1; a report is checked against that version.
    assert post(client, survey, submission_items(survey, question, first, 2, 2)).status_code == 201
    assert post(client, survey, submission_items(survey, question, second, 2, 3)).status_code == 201
    wrong = submission_items(survey, question, second, 2, 4)
    wrong["reports"][0]["version"] = 1  # a subset report under k-RR's version
    assert post(client, survey, wrong).status_code == 400
    receipt = post(client, survey, submission_items(survey, question, second, 1, 5)).json()["receipt"][0]
    assert "version 2" in receipt["design"] and "after 300" in receipt["design"]
    assert Randomization.objects.filter(question=question).count() == 2
    assert Job.objects.filter(task="retune").count() == 1  # later submissions queue nothing more


def test_a_survey_that_switches_mid_way_pools_both_versions_and_its_bands_cover(organizer):
    survey, question = two_phase_survey(organizer)
    phase_one(question, seed=11)
    retune.retune_question(question.pk)
    question.refresh_from_db()
    store_reports(question, answers(EXPECTED - 300, 12), seed=13)
    first, second = question.randomizations.order_by("version")
    [result] = SurveyState.read(survey).results(question)
    assert result.pooled == (first, second) and result.n == EXPECTED
    assert "after 300 respondents" in result.design_note and "Subset selection" in result.design_note
    # The pooled unbiased estimate within 4 analytic standard errors of the truth, option by option
    # (the combination's variance, (V f) / n at f = Norm-Sub(u): ldp.adaptive.combine).
    u, errors = result.unbiased.proportions, result.unbiased.standard_errors
    assert np.all(np.abs(u - TRUTH) <= 4 * errors)
    # It is neither version alone, and more precise than the phase-2 version by itself.
    alone = second.build_mechanism().estimate(stored_tally(second))
    assert not np.allclose(u, alone.proportions)
    assert np.all(errors < alone.standard_errors)
    # Bands honest: the joint 95 % bands hold the truth, and every shown point lies in its band.
    low, high = result.bands("consistent", "joint")
    assert np.all((low <= TRUTH) & (high >= TRUTH))
    for kind in ("consistent", "unbiased"):
        for bands in ("option", "joint"):
            low, high = result.bands(kind, bands)
            point = result.estimate(kind).proportions
            assert np.all((low <= point + 1e-12) & (point <= high + 1e-12))
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("question_results", args=[survey.pk, question.pk])).content.decode()
    assert "data-design-note" in page


@pytest.mark.parametrize(
    ("language", "words"),
    [("en", ("Two-phase design", "randomized reports only", "same ε")), ("ko", ("2단계 설계", "무작위화된 보고"))],
)
def test_the_transparency_page_and_the_ledger_state_it_in_both_languages(organizer, language, words):
    survey, question = two_phase_survey(organizer)
    phase_one(question)
    retune.retune_question(question.pk)
    question.refresh_from_db()
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    page = client.get(reverse("transparency", args=[survey.slug])).content.decode()
    assert "data-adaptive-note" in page and "data-retuned" in page
    for word in words:
        assert word in page
    ledger = client.get(reverse("ledger")).content.decode()
    assert "data-ledger-adaptive" in ledger
    with translation.override(language):
        record = survey_record(survey).questions[0]
        assert words[0] in record.design_words
        receipt = adaptive.receipt_words(question, question.current_randomization())
        assert receipt and receipt != adaptive.receipt_words(
            Question(adaptive_percent=15), Randomization(version=1, epsilon=1.0)
        )


def test_a_re_tuned_question_may_still_be_reworded_and_keeps_its_design(organizer):
    from surveys.forms.question import form_data

    survey, question = two_phase_survey(organizer)
    phase_one(question)
    retune.retune_question(question.pk)
    question.refresh_from_db()
    survey.expected_respondents = 50  # what the builder would now refuse for a new two-phase question
    survey.save(update_fields=["expected_respondents"])
    question.survey.refresh_from_db()
    form = QuestionForm({**form_data(question, EPSILON), "text": "Which one?"}, survey=survey, question=question)
    assert form.is_valid(), form.errors
    assert (form.cleaned_data["mechanism"], form.cleaned_data["adaptive_percent"]) == ("subset", PERCENT)
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert "Re-tuned after 300 reports; it now uses Subset selection." in page


def test_the_builder_card_says_when_a_question_will_re_tune(organizer):
    survey, question = two_phase_survey(organizer)
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("survey_detail", args=[survey.pk])).content.decode()
    assert "Re-tunes once after 300 reports (15 % of 2000 expected respondents)." in page


@pytest.mark.django_db(transaction=True)
def test_concurrent_submissions_across_the_threshold_re_tune_exactly_once(organizer, settings):
    if connection.vendor == "sqlite" and connection.settings_dict["NAME"].startswith("file:memorydb"):
        pytest.skip("in-memory SQLite shares one connection between threads; PostgreSQL runs this")
    settings.RATE_LIMITS_ENABLED = False
    survey, question = two_phase_survey(organizer, allow_repeat_responses=True)
    store_reports(question, [0] * 290, seed=101)  # everyone chooses one option: re-tuning switches
    first = question.current_randomization()
    payloads = [submission_items(survey, question, first, 0, 30 + i) for i in range(24)]
    statuses = []

    def send(chunk):
        client = Client()
        try:
            statuses.extend(post(client, survey, payload).status_code for payload in chunk)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(payloads[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert statuses == [201] * 24  # version 1 is still accepted after the switch
    outcomes = list(Job.objects.filter(task="retune").values_list("status", "result"))
    assert all(status == "done" for status, _ in outcomes)
    assert sum("after" in result for _, result in outcomes) == 1
    assert Randomization.objects.filter(question=question, retuned_after__isnull=False).count() == 1
    assert stored_tally(first).n == 314


@pytest.mark.slow  # a simulation of 600 surveys: CI and make test-all
def test_the_pooled_bands_cover_each_option_about_95_percent_of_the_time():
    """600 surveys that switch from k-RR (300 reports) to subset selection of 3 (1,700): each option's
    pooled 95 % band, unbiased and consistent, holds the truth in 95 % of them within 4 binomial
    standard errors (sqrt(0.95 x 0.05 / 600) = 0.0089); the joint bands hold all options at once at
    least 95 % of the time less the same; every consistent point lies in its band."""
    from ldp import make_mechanism
    from ldp.tally import Tally

    first, second = (
        make_mechanism("krr", k=K, epsilon=EPSILON),
        make_mechanism("subset", k=K, epsilon=EPSILON, subset_size=3),
    )
    sizes = (300, EXPECTED - 300)
    counts = [np.round(TRUTH * n).astype(int) for n in sizes]
    for c, n in zip(counts, sizes, strict=True):
        c[0] += n - c.sum()
    truth = sum(counts) / EXPECTED
    repetitions, rng = 600, np.random.default_rng(29)
    one, two = (m.sample_tallies(c, repetitions, rng=rng) for m, c in zip((first, second), counts, strict=True))
    covered = {"unbiased": np.zeros(K), "consistent": np.zeros(K)}
    jointly = 0
    for row_one, row_two in zip(one, two, strict=True):
        parts = [(first, Tally(sizes[0], row_one)), (second, Tally(sizes[1], row_two))]
        estimates = adaptive.pooled_estimates(parts, summary_for(Question.Kind.SINGLE_CHOICE, first.name))
        for name in covered:
            low, high = getattr(estimates, name).confidence_interval(0.95)
            covered[name] += (low <= truth) & (high >= truth)
        low, high = estimates.consistent.confidence_interval(0.95)
        point = estimates.consistent.proportions
        assert np.all((low <= point + 1e-12) & (point <= high + 1e-12))
        jointly += bool(np.all((estimates.joint.low <= truth) & (estimates.joint.high >= truth)))
    tolerance = 4 * np.sqrt(0.95 * 0.05 / repetitions)
    for name, hits in covered.items():
        assert np.all(np.abs(hits / repetitions - 0.95) <= tolerance), (name, hits / repetitions)
    assert jointly / repetitions >= 0.95 - tolerance


def test_a_survey_made_recurring_later_never_re_tunes(organizer):
    from surveys.series.rounds import do_make_recurring

    survey, question = two_phase_survey(organizer)
    do_make_recurring(survey, "weekly")
    phase_one(question)
    assert retune.retune_question(question.pk) == {"decided": "before"}
    assert not Randomization.objects.filter(question=question, retuned_after__isnull=False).exists()


def test_a_question_in_a_sampling_pool_never_re_tunes(organizer):
    """Its tally mixes answered and fake reports, and a pool's versions are shown apart, not pooled."""
    from surveys.sampling import QuestionSample

    survey, question = two_phase_survey(organizer)
    other = make_question(survey, text="And?", options=["A", "B", "C"], epsilon=EPSILON)
    third = make_question(survey, text="Also?", options=["A", "B", "C"], epsilon=EPSILON)
    QuestionSample.objects.create(survey=survey, size=1, questions=[question.pk, other.pk, third.pk])
    phase_one(question)
    assert retune.retune_question(question.pk) == {"decided": "before"}
    assert not Randomization.objects.filter(question=question, retuned_after__isnull=False).exists()
