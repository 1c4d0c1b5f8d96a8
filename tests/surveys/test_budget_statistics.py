"""The budget panel's predicted errors are the errors a survey of that size gets.

A survey planned with the builder's defaults (a total of 5, split evenly) is simulated: every question's
mechanism, at the plan's epsilon, randomizes the answers of the expected respondents, many times over
(fixed seeds). The 95 % half-width the panel predicts (:func:`surveys.budget_panel.panel`) must match
z_0.975 times the simulated standard deviation of the estimate within 10 %: at R repetitions a standard
deviation is estimated within about 1 / sqrt(2 R) (1.6 % at R = 2000), and the widest of k options'
deviations is the statistic on both sides.

The panel predicts for the least favourable answers: evenly spread for a choice (the advisor's
reference, :mod:`ldp.advisor`), and for a mean the value whose report varies most
(:meth:`ldp.numeric.base.NumericMechanism.worst_case_variance`), so those are the answers simulated.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import ldp
from surveys import budget_panel
from tests.base import make_survey

Z = float(stats.norm.ppf(0.975))
REPETITIONS = 2000
RESPONDENTS = 600


def add(survey, **fields):
    from surveys import actions
    from surveys.forms.question import QuestionForm

    data = {"text": "Q", "budget": "plan", "weight": "1", "mechanism": "auto", "hash_count": 512, "width": 128}
    form = QuestionForm({**data, **fields}, survey=survey)
    assert form.is_valid(), form.errors
    actions.do_add_question(survey, form.cleaned_data)


@pytest.fixture
def planned(organizer):
    survey = make_survey(organizer, epsilon_cap=5.0, expected_respondents=RESPONDENTS)
    add(survey, text="Fruit?", kind="single", options_text="Apple\nBanana\nCherry")
    add(survey, text="Smoke?", kind="yes_no")
    add(survey, text="Mood?", kind="rating", scale="1-5", rating_estimate="shares")
    add(survey, text="Team size?", kind="single", options_text="\n".join(f"{i} people" for i in range(1, 9)))
    add(survey, text="Hours?", kind="numeric", range_low="0", range_high="40", whole_numbers="on")
    return survey


def simulated_half_width(mechanism, seed):
    rng = np.random.default_rng(seed)
    if hasattr(mechanism, "estimate_many"):  # a mean: every respondent at the most variable value
        worst = int(np.argmax(mechanism.grid_variances()))
        values = np.full(RESPONDENTS, mechanism.lo + worst * mechanism.step)
        means, _ = mechanism.estimate_many(mechanism.sample_tallies(values, REPETITIONS, rng=rng))
        return Z * float(np.std(means, ddof=1))
    true_counts = np.full(mechanism.k, RESPONDENTS // mechanism.k)
    true_counts[: RESPONDENTS - true_counts.sum()] += 1
    tallies = mechanism.sample_tallies(true_counts, REPETITIONS, rng=rng)
    estimates = np.array([mechanism.estimate(ldp.Tally(RESPONDENTS, row)).proportions for row in tallies])
    return Z * float(np.max(np.std(estimates, axis=0, ddof=1)))


@pytest.mark.slow
def test_the_panels_half_widths_match_simulated_ones_within_ten_percent(planned):
    panel = budget_panel.panel(planned)
    assert [row.epsilon for row in panel.rows] == [1.0] * 5
    for seed, row in enumerate(panel.rows):
        predicted = row.cost.half_width
        simulated = simulated_half_width(row.cost.mechanism, seed)
        assert simulated == pytest.approx(predicted, rel=0.10), (row.question.text, row.cost.mechanism.name)
