"""The demo organizer and survey that `make run` loads, so there is something to look at."""

from __future__ import annotations

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from surveys import actions
from surveys.models import Report, Survey
from surveys.submissions import add_to_tally, record_submissions

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "murmur-demo"
DEMO_TITLE = "Workplace pulse (demo)"

#: Simulated respondents, and the share of each option among their (hidden) true answers.
DEMO_RESPONDENTS = 600
TRUE_SHARES = [
    [0.05, 0.15, 0.25, 0.40, 0.15],
    [0.3, 0.7],
    [0.35, 0.25, 0.1, 0.2, 0.1],
]

QUESTIONS = [
    {
        "text": "How satisfied are you with your team?",
        "kind": "single",
        "options": ["Very dissatisfied", "Dissatisfied", "Neutral", "Satisfied", "Very satisfied"],
        "epsilon": 1.0,
        "mechanism": "krr",
        "mechanism_params": {},
    },
    {
        "text": "Have you considered leaving in the last month?",
        "kind": "yes_no",
        "options": ["Yes", "No"],
        "epsilon": 0.5,
        "mechanism": "krr",
        "mechanism_params": {},
    },
    {
        "text": "Which change would help you most?",
        "kind": "single",
        "options": ["Fewer meetings", "Clearer goals", "Better tools", "More flexibility", "Higher pay"],
        "epsilon": 2.0,
        "mechanism": "dbitflip",
        "mechanism_params": {"d": 5},
    },
]


@transaction.atomic
def load_demo() -> tuple[Survey, bool]:
    """Create the demo organizer and open demo survey unless they exist; return (survey, created)."""
    user_model = get_user_model()
    user, created_user = user_model.objects.get_or_create(username=DEMO_USERNAME)
    if created_user:
        user.set_password(DEMO_PASSWORD)
        user.save(update_fields=["password"])
    existing = Survey.objects.filter(owner=user, title=DEMO_TITLE).first()
    if existing is not None:
        return existing, False
    survey = Survey.objects.create(
        owner=user,
        title=DEMO_TITLE,
        description="A three-question pulse survey. Every answer is randomized in your browser.",
        expected_respondents=500,
        epsilon_cap=5.0,
    )
    for question in QUESTIONS:
        actions.do_add_question(survey, question)
    actions.do_open_survey(survey)
    simulate_responses(survey, DEMO_RESPONDENTS, seed=2026)
    return survey, True


@transaction.atomic
def simulate_responses(survey: Survey, respondents: int, seed: int) -> None:
    """Store reports of simulated respondents, randomized exactly as their browsers would."""
    rng = np.random.default_rng(seed)
    submissions = record_submissions(survey, [None] * respondents)
    for question, shares in zip(survey.questions.all(), TRUE_SHARES, strict=True):
        randomization = actions.sync_randomization(question)
        truth = rng.choice(len(shares), size=respondents, p=shares)
        packed = [row.tobytes() for row in randomization.build_mechanism().randomize(truth, rng=rng)]
        Report.objects.bulk_create(
            Report(submission=submission, question=question, randomization=randomization, packed=report)
            for submission, report in zip(submissions, packed, strict=True)
        )
        add_to_tally(randomization, packed)
