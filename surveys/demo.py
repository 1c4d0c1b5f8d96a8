"""The demo organizer and surveys that `make run` loads, so there is something to look at.

Two surveys with the same shape, one written in English and one in Korean, each with simulated
respondents whose reports were randomized exactly as their browsers would have randomized them:
three choice questions, a number question (hours, Hybrid), a 0-10 rating (NPS, k-RR), a small
matrix (three items on a three-point scale), a short answer (free text, Count Mean Sketch) with
candidate answers to count, and a multi-select question (choose up to three, padding-and-sampling
with k-RR). The first two questions (satisfaction, and whether one considered leaving) are a
declared pair: randomized together, so the dashboard shows their cross-tab. A third survey has the
Korean one's shape in both languages (Korean its base, English offered; :data:`BILINGUAL`): its
respondents, whichever language they read, pool into one tally per question.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from ldp.numeric import make_numeric_mechanism
from ldp.text import normalize_text
from ldp.textreports import make_text_mechanism
from surveys import actions, languages
from surveys.kinds import kind_of
from surveys.models import Report, Survey
from surveys.responding.writes import add_to_tally, record_submissions
from surveys.teams.demo import load_demo_workspace

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "murmur-demo"

#: Simulated respondents per survey.
DEMO_RESPONDENTS = 600


@dataclass(frozen=True)
class DemoSurvey:
    title: str
    description: str
    questions: list[dict[str, Any]]
    #: Per question, the share of each option among the simulated respondents' (hidden) true answers;
    #: for a number question, the (mean, standard deviation) of their values (clipped to the range);
    #: for a short answer, the share of each text (the rest write texts of their own, each different).
    true_shares: list[Any]
    seed: int
    matrix: DemoMatrix
    #: The declared pair of the first two questions: P(second question's first option | each first option).
    pair_conditional: list[float]


@dataclass(frozen=True)
class DemoMatrix:
    """A matrix block: its title, items and shared options, and each item's true shares."""

    title: str
    items: list[str]
    options: list[str]
    shares: list[list[float]]


#: Each matrix item's epsilon and mechanism; the declared pair's (it spends the two questions' 1.0 + 0.5).
MATRIX_ITEM = {"kind": "matrix", "epsilon": 0.5, "mechanism": "krr", "mechanism_params": {}}
PAIR = {"epsilon": 1.5, "mechanism": "krr", "mechanism_params": {}}


def _questions(
    texts: list[str], options: list[list[str]], unit: str, labels: tuple[str, str], candidates: list[str]
) -> list[dict[str, Any]]:
    """The demo's seven questions in one language: 5-option k-RR, yes/no k-RR, 5-option 5BitFlip,
    hours per week on [0, 80] (Hybrid), a 0-10 rating estimated as shares (k-RR, epsilon 2: eleven
    points need it for 600 respondents), a short answer (text-cms, epsilon 1.5) and a 5-option
    multi-select question, at most 3 chosen (padding-krr, epsilon 2: what "Automatic" picks)."""
    hours = make_numeric_mechanism("hybrid", lo=0, hi=80, epsilon=1.0)
    sketch = make_text_mechanism("text-cms", epsilon=1.5)
    shapes = [
        {"kind": "single", "epsilon": 1.0, "mechanism": "krr", "mechanism_params": {}},
        {"kind": "yes_no", "epsilon": 0.5, "mechanism": "krr", "mechanism_params": {}},
        {"kind": "single", "epsilon": 2.0, "mechanism": "dbitflip", "mechanism_params": {"d": 5}},
        {
            "kind": "numeric",
            "epsilon": 1.0,
            "mechanism": "hybrid",
            "mechanism_params": {"lo": 0.0, "hi": 80.0, **hours.params()},
            "range_low": 0,
            "range_high": 80,
            "unit": unit,
        },
        {
            "kind": "rating",
            "epsilon": 2.0,
            "mechanism": "krr",
            "mechanism_params": {},
            "scale": "0-10",
            "low_label": labels[0],
            "high_label": labels[1],
        },
        {
            "kind": "text",
            "epsilon": sketch.epsilon,
            "mechanism": "text-cms",
            "mechanism_params": sketch.params(),
            "candidates": [normalize_text(c) for c in candidates],
        },
        {"kind": "multi_select", "epsilon": 2.0, "mechanism": "padding-krr", "mechanism_params": {"max_choices": 3}},
    ]
    options = [*options[:3], [], [str(point) for point in range(11)], [], options[3]]
    return [
        {"text": text, "options": choices, **shape} for text, choices, shape in zip(texts, options, shapes, strict=True)
    ]


#: Multi-select: the chance that a simulated respondent picks each option (independently; picks beyond
#: the maximum of three are dropped at random, so the true shares are a little lower).
MULTI_SHARES = (0.6, 0.3, 0.5, 0.2, 0.15)

#: Shares of the points 0..10 of the demo's rating among the simulated respondents.
RATING_SHARES = [0.02, 0.02, 0.03, 0.04, 0.05, 0.09, 0.1, 0.17, 0.2, 0.16, 0.12]


ENGLISH = DemoSurvey(
    title="Workplace pulse (demo)",
    description="A short pulse survey. Every answer is randomized in your browser.",
    questions=_questions(
        [
            "How satisfied are you with your team?",
            "Have you considered leaving in the last month?",
            "Which change would help you most?",
            "How many hours did you work last week?",
            "How likely are you to recommend this team to a friend?",
            "Which tool do you use most to talk with your team?",
            "Which of these helped you work last month? (up to three)",
        ],
        [
            ["Very dissatisfied", "Dissatisfied", "Neutral", "Satisfied", "Very satisfied"],
            ["Yes", "No"],
            ["Fewer meetings", "Clearer goals", "Better tools", "More flexibility", "Higher pay"],
            ["Focus time", "Pair work", "Written docs", "Stand-ups", "Mentoring"],
        ],
        unit="hours",
        labels=("Not at all likely", "Extremely likely"),
        candidates=["Slack", "Email", "Teams", "Phone"],
    ),
    true_shares=[
        [0.05, 0.15, 0.25, 0.40, 0.15],
        [0.3, 0.7],
        [0.35, 0.25, 0.1, 0.2, 0.1],
        (42.0, 8.0),
        RATING_SHARES,
        {"Slack": 0.45, "email": 0.25, "Zoom": 0.1},
        MULTI_SHARES,
    ],
    seed=2026,
    matrix=DemoMatrix(
        "How much do you agree?",
        ["I know what is expected of me", "I get the help I need", "My work is recognized"],
        ["Disagree", "Neutral", "Agree"],
        [[0.1, 0.2, 0.7], [0.2, 0.35, 0.45], [0.4, 0.3, 0.3]],
    ),
    pair_conditional=[0.8, 0.6, 0.35, 0.15, 0.1],
)

KOREAN = DemoSurvey(
    title="우리 팀 분위기 조사 (데모)",
    description="짧은 팀 분위기 설문입니다. 모든 답은 여러분의 브라우저에서 무작위화된 뒤 전송됩니다.",
    questions=_questions(
        [
            "지금 팀에 얼마나 만족하시나요?",
            "최근 한 달 사이에 이직을 고민한 적이 있나요?",
            "어떤 변화가 가장 도움이 될까요?",
            "지난주에 몇 시간 일하셨나요?",
            "이 팀을 친구에게 추천할 가능성은 얼마나 되나요?",
            "팀원과 이야기할 때 가장 많이 쓰는 도구는 무엇인가요?",
            "지난달 일하는 데 도움이 된 것을 모두 골라 주세요. (최대 세 개)",
        ],
        [
            ["매우 불만족", "불만족", "보통", "만족", "매우 만족"],
            ["예", "아니요"],
            ["회의 줄이기", "더 명확한 목표", "더 나은 업무 도구", "유연한 근무", "연봉 인상"],
            ["집중 시간", "짝 작업", "문서화", "아침 회의", "멘토링"],
        ],
        unit="시간",
        labels=("전혀 추천하지 않음", "매우 추천함"),
        candidates=["카카오톡", "슬랙", "이메일", "전화"],
    ),
    true_shares=[
        [0.04, 0.12, 0.34, 0.38, 0.12],
        [0.4, 0.6],
        [0.4, 0.15, 0.1, 0.25, 0.1],
        (45.0, 9.0),
        RATING_SHARES,
        {"카카오톡": 0.5, "슬랙": 0.2, "줌": 0.1},
        MULTI_SHARES,
    ],
    seed=2027,
    matrix=DemoMatrix(
        "다음 문장에 얼마나 동의하시나요?",
        ["내게 기대되는 일이 무엇인지 안다", "필요한 도움을 받는다", "내 일이 인정받는다"],
        ["동의하지 않음", "보통", "동의함"],
        [[0.15, 0.25, 0.6], [0.25, 0.35, 0.4], [0.35, 0.35, 0.3]],
    ),
    pair_conditional=[0.85, 0.65, 0.4, 0.2, 0.1],
)

DEMO_SURVEYS = [ENGLISH, KOREAN]
DEMO_TITLE = ENGLISH.title

#: One survey in two languages: the Korean survey's shape and truths, written in Korean (its base) and
#: offered in English, worded as the English survey; its respondents pool into one tally per question.
BILINGUAL = replace(KOREAN, title="우리 팀 분위기 조사 (데모, 한국어와 영어)", seed=2028)
BILINGUAL_ENGLISH = {
    "survey:title": "Team mood survey (demo, Korean and English)",
    "survey:description": "A short team mood survey in Korean and English: both languages share one "
    "randomization and one tally per question.",
}


@transaction.atomic
def load_demo() -> list[tuple[Survey, bool]]:
    """Create the demo organizer and its open demo surveys unless they exist; return (survey, created) each."""
    user_model = get_user_model()
    user, created_user = user_model.objects.get_or_create(username=DEMO_USERNAME)
    if created_user:
        user.set_password(DEMO_PASSWORD)
        user.save(update_fields=["password"])
    loaded = []
    for demo in [*DEMO_SURVEYS, BILINGUAL]:
        existing = Survey.objects.filter(owner=user, title=demo.title).first()
        if existing is not None:
            loaded.append((existing, False))
            continue
        survey = _create_demo(user, demo, english=loaded[0][0] if demo is BILINGUAL else None)
        loaded.append((survey, True))
    load_demo_workspace(user, DEMO_PASSWORD, [survey for survey, _ in loaded])  # two members: owner, viewer
    return loaded


def _create_demo(user: Any, demo: DemoSurvey, english: Survey | None) -> Survey:
    """One open demo survey with its simulated reports; with ``english``, also offered in English,
    worded as that survey of the same shape (:data:`BILINGUAL`)."""
    survey = Survey.objects.create(
        owner=user,
        title=demo.title,
        description=demo.description,
        expected_respondents=500,
        epsilon_cap=11.5,
    )
    added = [actions.do_add_question(survey, question) for question in demo.questions[:5]]
    items = [{**MATRIX_ITEM, "text": item, "options": demo.matrix.options} for item in demo.matrix.items]
    actions.do_add_matrix(survey, demo.matrix.title, items)
    for question in demo.questions[5:]:
        actions.do_add_question(survey, question)
    pair = {**PAIR, "text": f"{added[0].text} × {added[1].text}"}
    actions.do_declare_pair(added[0], added[1], pair)
    if english is not None:
        ours, theirs = languages.source_strings(survey), languages.source_strings(english)
        languages.do_add_language(survey, "en", "ko")
        texts = {mine.key: other.text for mine, other in zip(ours, theirs, strict=True)}
        languages.do_save_translations(survey, "en", texts | BILINGUAL_ENGLISH)
    actions.do_open_survey(survey)
    simulate_responses(survey, demo, DEMO_RESPONDENTS, seed=demo.seed)
    return survey


def demo_truths(survey: Survey, demo: DemoSurvey) -> list[tuple[Any, Any]]:
    """(question, its true shares) for every question that gets reports, in the survey's order.

    The declared pair's truth is its joint distribution, flattened as first * k2 + second; its two
    questions get no reports of their own.
    """
    questions = list(survey.questions.all())
    first_shares = np.asarray(demo.true_shares[0])
    yes = np.asarray(demo.pair_conditional)
    joint = np.column_stack([first_shares * yes, first_shares * (1 - yes)]).ravel()
    # Each kind takes its truth from these (:meth:`surveys.kinds.base.QuestionKind.demo_truth`).
    sources = SimpleNamespace(plain=iter(demo.true_shares[2:]), matrix=iter(demo.matrix.shares), joint=list(joint))
    return [(question, kind_of(question.kind).demo_truth(sources)) for question in questions[2:]]


@transaction.atomic
def simulate_responses(survey: Survey, demo: DemoSurvey, respondents: int, seed: int) -> None:
    """Store reports of simulated respondents, randomized exactly as their browsers would."""
    rng = np.random.default_rng(seed)
    submissions = record_submissions(survey, [None] * respondents)
    for question, shares in demo_truths(survey, demo):
        randomization = actions.sync_randomization(question)
        mechanism = randomization.build_mechanism()
        # Randomized as the kind's browser widget would (:meth:`surveys.kinds.base.QuestionKind.demo_reports`).
        packed = kind_of(question.kind).demo_reports(question, mechanism, shares, respondents, rng)
        Report.objects.bulk_create(
            Report(survey=survey, submission=submission, question=question, randomization=randomization, packed=report)
            for submission, report in zip(submissions, packed, strict=True)
        )
        add_to_tally(randomization, packed)
