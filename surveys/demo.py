"""The demo organizer and survey that `make run` loads, so there is something to look at."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from surveys import actions
from surveys.models import Survey

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "murmur-demo"
DEMO_TITLE = "Workplace pulse (demo)"

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
    return survey, True
