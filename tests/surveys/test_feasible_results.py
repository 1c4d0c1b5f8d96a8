"""Every number a reader is shown lies in its feasible range: shares in [0, 100 %], counts in [0, n],
means in the question's range, in every card, chart axis, trend and export.

One survey holds every kind (single choice, yes/no, a number's mean and its bins, a rating's shares
with its mean and NPS, multi-select, a matrix, a declared pair, free text with candidates), given
0, 1, 10 or 20 seeded reports of lopsided answers: the answers that push unbiased estimates below
zero. Cards are filled as the page fills them once shown (:meth:`surveys.kinds.base.Summary.card`),
in both views and both band kinds. The "unbiased" view and the export's ``unbiased*`` columns keep
the raw unbiased numbers (the page says they can be negative; pooling needs them): they are not
checked here, every other number is.
"""

from __future__ import annotations

import csv
import io
import re

import numpy as np
import pytest
from django.urls import reverse

from surveys import actions
from surveys.kinds.base import MIN_REPORTS
from surveys.results.cards import result_view
from surveys.results.estimates import SurveyState
from surveys.results.trends import series_trends
from tests.base import (
    make_multi_question,
    make_number_question,
    make_question,
    make_reports,
    make_set_reports,
    make_survey,
    make_text_question,
    make_text_reports,
)

SIZES = (0, 1, 10, 20)
SEEDS = (0, 1)
TOLERANCE = 1e-9


def build(owner, n: int, seed: int):
    survey = make_survey(owner, epsilon_cap=100, expected_respondents=20)
    single = make_question(survey, text="Single", options=["A", "B", "C", "D", "E"])
    yes_no = make_question(survey, text="Yes?", kind="yes_no", options=["Yes", "No"], epsilon=0.5)
    mean = make_number_question(survey, lo=0, hi=40)
    bins = make_question(
        survey,
        text="Bins",
        kind="numeric",
        options=["0–15", "15–30", "30–45", "45–60"],
        bins=4,
        range_low=0,
        range_high=60,
    )
    rating = make_question(survey, text="Rate", kind="rating", scale="0-10", options=[str(i) for i in range(11)])
    multi = make_multi_question(survey)
    item = {
        "kind": "matrix",
        "epsilon": 0.5,
        "mechanism": "krr",
        "mechanism_params": {},
        "options": ["No", "Maybe", "Yes"],
    }
    matrix = actions.do_add_matrix(survey, "Matrix", [{**item, "text": "Item 1"}, {**item, "text": "Item 2"}])
    first = make_question(survey, text="First", options=["A", "B"])
    second = make_question(survey, text="Second", options=["X", "Y", "Z"])
    pair = actions.do_declare_pair(
        first, second, {"text": "First × Second", "epsilon": 1.5, "mechanism": "krr", "mechanism_params": {}}
    )
    text = make_text_question(survey, epsilon=1.0, candidates=["coffee", "tea", "water", "juice"])
    actions.do_open_survey(survey)
    if n:
        rng = np.random.default_rng(seed)
        for question in (single, bins, yes_no, *matrix.items.all()):
            make_reports(question, [0] * n, seed=seed)
        make_reports(mean, [40] * n, seed=seed)
        make_reports(rating, [10] * n, seed=seed)
        make_reports(pair, [0] * n, seed=seed)
        sets = np.zeros((n, 5), dtype=bool)
        sets[:, 0] = True
        make_set_reports(multi, sets, seed=seed)
        make_text_reports(text, ["coffee"] * n if rng.random() < 0.5 else ["other"] * n, seed=seed)
    return survey


def share(where: str, value: float) -> list[str]:
    return [] if -TOLERANCE <= value <= 1 + TOLERANCE else [f"{where}: share {value!r}"]


def within(where: str, value: float, lo: float, hi: float) -> list[str]:
    return [] if lo - TOLERANCE <= value <= hi + TOLERANCE else [f"{where}: {value!r} outside [{lo}, {hi}]"]


def card_problems(result, view) -> list[str]:
    """Every number of a filled card outside its range."""
    name = f"{result.question.text} n={result.n}"
    found = []
    for row in view.get("rows", []):
        for key in ("estimate", "share", "low", "high"):
            if key in row:
                found += share(f"{name} {row.get('label', '')} {key}", row[key])
        for cell in row.get("cells", []):
            for key in ("estimate", "low", "high"):
                found += share(f"{name} {row['label']} × {cell['column']} {key}", cell[key])
    for row in view.get("candidates", []):
        for key in ("share", "share_low", "share_high"):
            found += share(f"{name} {row['label']} {key}", row[key])
        for key in ("count", "low", "high"):
            found += within(f"{name} {row['label']} {key}", row[key], 0, result.n)
    for row in view.get("few", []):  # a card with too few reports: its bands, however wide
        for key in ("low", "high"):
            found += share(f"{name} few {row['label']} {key}", row[key])
        for key in ("count_low", "count_high"):
            if key in row:
                found += within(f"{name} few {row['label']} {key}", row[key], 0, result.n)
        if row["low"] > row["high"]:
            found.append(f"{name} few {row['label']}: band {row['low']!r} > {row['high']!r}")
    for marginal in view.get("marginals", []):
        for row in marginal["rows"]:
            for key in ("estimate", "low", "high"):
                found += share(f"{name} marginal {row['label']} {key}", row[key])
    if "mean" in view:
        lo, hi = result.mechanism.lo, result.mechanism.hi
        for key in ("value", "low", "high"):
            found += within(f"{name} mean {key}", view["mean"][key], lo, hi)
    for statistic, value in view.get("summaries", {}).items():
        lo, hi = (-1, 1) if statistic == "nps" else (0, 10)
        for key in ("value", "low", "high"):
            found += within(f"{name} {statistic} {key}", value[key], lo, hi)
    return found + chart_problems(name, view.get("chart", ""))


PERCENT_TICK = re.compile(r"<text[^>]*>\s*([−-]?\d+(?:\.\d+)?)%\s*</text>")


def chart_problems(name: str, svg: str) -> list[str]:
    """Percent tick labels of a chart's axis outside [0, 100 %]."""
    ticks = [float(t.replace("−", "-")) for t in PERCENT_TICK.findall(svg)]
    return [f"{name} chart axis tick {t} %" for t in ticks if not 0 <= t <= 100]


def page_problems(html: str) -> list[str]:
    """Shares printed on the page below 0 % or above 100 %, and negative respondent counts in a
    free-text card's candidate table."""
    values = re.findall(r"([−-]?\d+(?:[.,]\d+)?)\s?%", html)
    found = [f"page shows {v} %" for v in values if not 0 <= float(v.replace("−", "-").replace(",", ".")) <= 100]
    for row in re.findall(r"<tr data-candidate.*?</tr>", html, flags=re.DOTALL):
        cells = re.findall(r"<td data-(?:estimate|interval)>([^<]*)</td>", row)
        found += [f"candidate count {v}" for cell in cells for v in re.findall(r"[−-]\s?\d", cell)]
    return found


def export_problems(rows, n_of) -> list[str]:
    found = []
    for row in rows:
        statistic = row["statistic"]
        name = f"export {row['question']} {row.get('option')} {statistic}"
        for key in ("consistent", "consistent_low", "consistent_high"):
            value = row.get(key)
            if value in (None, ""):
                continue
            value = float(value)
            if statistic == "count":
                found += within(f"{name} {key}", value, 0, float(row["n"]))
            elif statistic == "mean":
                found += within(f"{name} {key}", value, *n_of(row))
            elif statistic == "nps":
                found += within(f"{name} {key}", value, -1, 1)
            elif statistic != "mean_count":
                found += share(f"{name} {key}", value)
        if statistic == "count" and row.get("consistent") in (None, ""):
            found.append(f"{name}: no feasible count exported")
    return found


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", SIZES)
def test_every_view_chart_trend_and_export_stays_feasible(organizer_client, organizer, n, seed):
    survey = build(organizer, n, seed)
    state = SurveyState.read(survey)
    problems = []
    ranges = {}
    for result in state.all_results():
        if result.summary.name == "mean":
            ranges[result.question.pk] = (result.mechanism.lo, result.mechanism.hi)
        elif result.question.scale:
            ranges[result.question.pk] = (0, 10)
        if not result.n:
            continue
        for bands in ("option", "joint"):
            view = result_view(result, "consistent", bands)
            if not view.get("rows") and not view.get("candidates") and "mean" not in view:
                result.summary.card(result, "consistent", view)  # what the card shows once it is shown
            problems += card_problems(result, view)
    for bands in ("option", "joint"):
        url = reverse("survey_results", args=[survey.pk]) + f"?estimate=consistent&bands={bands}"
        problems += page_problems(organizer_client.get(url).content.decode())
    trends, _signature = series_trends([survey])
    for trend in trends:
        for estimate in trend.rounds:
            lo, hi = (0, 1) if trend.percent else ranges[trend.question.pk]
            for key in ("values", "low", "high"):
                for value in np.atleast_1d(getattr(estimate, key)):
                    problems += within(f"trend {trend.question.text} {key}", float(value), lo, hi)
    data = organizer_client.get(reverse("export_estimates", args=[survey.pk, "json"])).json()
    rows = data["estimates"] if isinstance(data, dict) else data
    problems += export_problems(rows, lambda row: ranges[row["question_id"]])
    response = organizer_client.get(reverse("export_estimates", args=[survey.pk, "csv"]))
    text = b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()
    problems += export_problems(
        list(csv.DictReader(io.StringIO(text.lstrip("\ufeff")))), lambda r: ranges[int(r["question_id"])]
    )
    assert not problems, "\n".join(problems[:40])


def test_a_small_groups_trend_draws_each_round_that_has_ten_reports(organizer):
    """A round with MIN_REPORTS reports is drawn with its (wide, cut) band even where its card is not
    "enough" yet: a small group's trend says what it can instead of "not enough reports"."""
    survey = build(organizer, MIN_REPORTS, 0)
    state = SurveyState.read(survey)
    trends = {trend.question.pk: trend for trend in series_trends([survey])[0]}
    few = [
        result
        for result in state.all_results()
        if result.n >= MIN_REPORTS
        and not result.enough
        and result.question.pk in trends
        and result.summary.round_values(
            result, trends[result.question.pk].labels, state.tallies[result.randomization.pk]
        )
        is not None
    ]
    assert few, "the survey should have cards that are not 'enough' at ten reports"
    for result in few:
        (estimate,) = trends[result.question.pk].rounds
        assert estimate.n == MIN_REPORTS


def test_a_card_with_few_reports_says_what_its_bands_allow_and_no_error_over_100_points(organizer_client, organizer):
    survey = build(organizer, 10, 0)
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert html.count("data-few") >= 2 and "at most" in html  # a choice card and the multi-select card
    errors = [float(e.replace(",", "")) for e in re.findall(r"± ([\d.,]+) percentage points", html)]
    assert errors and max(errors) <= 100
    korean = organizer_client.get(reverse("survey_results", args=[survey.pk]), HTTP_ACCEPT_LANGUAGE="ko").content
    assert "많아야" in korean.decode()


@pytest.mark.parametrize("n", (2, 5, 9))
def test_a_free_text_card_with_few_reports_says_what_its_bands_allow(organizer_client, organizer, n):
    """Below MIN_REPORTS the candidates' bands are still shown, cut to [0, n] and rounded outward."""
    survey = make_survey(organizer, epsilon_cap=100)
    question = make_text_question(survey, epsilon=4.0, candidates=["coffee", "tea"])
    actions.do_open_survey(survey)
    make_text_reports(question, ["coffee"] * n, seed=n)
    (result,) = SurveyState.read(survey).results(question)
    assert not result.enough and result.text is not None
    view = result_view(result, "consistent")
    low, high = result.text.consistent_interval(0.95)
    # Never narrower than the query's own band, nor than the mechanism's bound the notice quotes.
    bound = result.expected_half_width * n
    assert [row["label"] for row in view["few"]] == ["coffee", "tea"]
    for i, row in enumerate(view["few"]):
        assert row["low"] * n <= low[i] + TOLERANCE and row["high"] * n >= high[i] - TOLERANCE
        count = result.text.counts[i]
        assert row["low"] * n <= min(max(count - bound, 0), n) + TOLERANCE
        assert row["high"] * n >= min(max(count + bound, 0), n) - TOLERANCE
        assert 0 <= row["count_low"] <= row["low"] * n <= row["high"] * n <= row["count_high"] <= n
        assert 0 <= row["low"] <= row["high"] <= 1
    html = organizer_client.get(reverse("question_results", args=[survey.pk, question.pk])).content.decode()
    assert "data-too-few" in html and html.count("wrote “") == 2 and "data-few" in html
    assert f"of {n}) wrote “coffee”" in html and f"of {n}) wrote “tea”" in html
    assert not page_problems(html)
    korean = organizer_client.get(reverse("question_results", args=[survey.pk, question.pk]), HTTP_ACCEPT_LANGUAGE="ko")
    assert "“tea”라고 쓴 비율은" in korean.content.decode()
