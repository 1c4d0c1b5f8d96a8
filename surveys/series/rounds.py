"""Recurring surveys: a series of rounds, opened by hand or on a schedule.

A round is a survey of its own (its own share link, reports, sharded tallies and results); the
rounds of one :class:`~surveys.models.Series` carry copies of the same questions with the same
frozen randomization parameters, so their estimates are comparable, and each question keeps one
id across rounds (:attr:`~surveys.models.Question.memo_key`). Opening the next round closes the
one before, so a series has at most one open round.

Schedules need no daemon: a weekly or monthly series stores when its next round is due, and the
round is opened by whoever comes first after that time: a respondent on any round's link, the
organizer's builder page (results pages only read, possibly from a replica), or
``manage.py open_due_rounds`` from cron (:func:`open_due_rounds`). However late that is, one round
opens and the due time moves past the present (missed periods are not opened retroactively).

Memoization (``ldp.memo``, ``static/ldp/memo.js``): for a question of a recurring survey whose
mechanism has a memoized form, the answer page's spec entry carries a ``memo`` block
(:func:`memo_block`) naming the series, the question's id in it and the layers of its reports;
the browser derives the permanent layer from a device secret it never sends.

Both memoized forms keep the server's side unchanged, because one round's reports have exactly the
stored mechanism's distribution:

* RAPPOR (``memoized-prr+irr``): the PRR memoized instead of drawn afresh is still the PRR; the
  question's epsilon is RAPPOR's one-report epsilon_1, and epsilon_inf = 2h ln((1 - f/2) / (f/2)).
* dBitFlip (``memoized-bits+flip``): the stored mechanism is dBitFlip at the question's epsilon,
  bit probabilities p1' and p0' = 1 - p1'. The browser memoizes bits with p1 = (p1' - gamma) /
  (1 - 2 gamma) and flips each with probability gamma every round, which gives back exactly p1'
  (``ldp.memo.dbitflip_round_epsilon``); the permanent bits' epsilon, dBitFlip's at p1, is
  epsilon_inf. It needs p1' < 1 - gamma, i.e. epsilon below 2 ln((1 - gamma) / gamma) (4.39 at
  gamma = 0.1; half that for d = 1); above it the question is randomized afresh every round.

* 1BitMean (``memoized-bit+flip``, gamma = 1/4, the only flip it takes): alpha-point rounding with
  a kept alpha, then the bit memoized per grid point with weights (2D, 4A - D, 4m)
  (:func:`permanent_one_bit_weights`), flipped with probability 1/4 every round, which gives back
  exactly the stored 1BitMean's (A + k m) / D. It needs 4A > D, i.e. epsilon below ln 3; above it
  the question is randomized afresh every round.

gamma is stored with each randomization (``Randomization.memo_gamma``, set when it is created in a
recurring survey or when the survey becomes recurring; defaults in
:data:`~surveys.models.DEFAULT_MEMO_GAMMA`) and sent in the memo block, so changing the default
later changes new randomizations only, never how an earlier round's reports were made.
"""

from __future__ import annotations

import calendar
import logging
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from ldp.memo import (  # noqa: F401  (the answer and transparency pages read them here)
    DEFAULT_MEMO_GAMMA,
    MEMO_LAYERS,
    memo_flip,
    memo_layers,
    memoizes,
    permanent_bit_probability,
    permanent_epsilon,
    permanent_one_bit_weights,
)
from surveys.actions import LifecycleError, copy_survey, do_close_survey, do_open_survey
from surveys.models import Question, Randomization, Series, Survey
from surveys.results import stamps

log = logging.getLogger(__name__)


def memo_block(
    survey: Survey, question: Question, spec: dict[str, Any], gamma: float | None = None
) -> dict[str, Any] | None:
    """The spec entry's ``memo`` block for a question of a recurring survey, or None (not memoized).

    ``gamma`` is the randomization's stored flip (``Randomization.memo_gamma``); None (an unsaved
    preview's randomization) takes :data:`~surveys.models.DEFAULT_MEMO_GAMMA`.
    """
    mechanism = spec["mechanism"]
    if survey.series_id is None or not memoizes(spec, gamma):
        return None
    series = survey.series
    assert series is not None  # series_id is set
    block: dict[str, Any] = {
        "series": series.key,
        "question": question.memo_key,
        "layers": memo_layers(mechanism),
    }
    flip = memo_flip(mechanism, gamma)
    if flip is not None:
        block["gamma"] = flip
    return block


def question_memoized(question: Question) -> bool:
    """Whether the question, in a recurring survey, is memoized: its randomization in force (with its
    stored flip), or for a draft its parameters with the default flip."""
    randomization = question.current_randomization()
    if randomization is not None:
        return memoizes(randomization.build_mechanism().client_spec(), randomization.memo_gamma)
    return memoizes(question.build_mechanism().client_spec())


def memoized_randomizations(survey: Survey) -> Any:
    """The survey's randomizations with a memoized form that uses a flip (dBitFlip, 1BitMean)."""
    return Randomization.objects.filter(question__survey=survey, mechanism__in=list(DEFAULT_MEMO_GAMMA))


def add_month(moment: datetime) -> datetime:
    """The same day and time one calendar month later (the month's last day if it is shorter)."""
    year, month = (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
    return moment.replace(year=year, month=month, day=min(moment.day, calendar.monthrange(year, month)[1]))


def next_due(recurrence: str, after: datetime) -> datetime | None:
    """When a round opened at ``after`` is followed by the next one (None: by hand)."""
    if recurrence == Series.Recurrence.WEEKLY:
        return after + timedelta(days=7)
    if recurrence == Series.Recurrence.MONTHLY:
        return add_month(after)
    return None


def rounds_of(survey: Survey) -> list[Survey]:
    """The survey's series, round by round (the survey alone when it is not recurring)."""
    if survey.series_id is None:
        return [survey]
    return list(Survey.objects.filter(series_id=survey.series_id).order_by("round_number"))


def latest_round(series: Series) -> Survey | None:
    return series.rounds.order_by("-round_number").first()


@transaction.atomic
def do_make_recurring(survey: Survey, recurrence: str, now: datetime | None = None) -> Series:
    """Make the survey round 1 of a new series, or change its series' schedule.

    A weekly or monthly schedule counts from now: the next round is due one period later.
    """
    if recurrence not in Series.Recurrence.values:
        raise LifecycleError(_("Choose when new rounds open."))
    now = now or timezone.now()
    series = survey.series
    if series is None:
        series = Series.objects.create(recurrence=recurrence)
        survey.series, survey.round_number = series, 1
        survey.save(update_fields=["series", "round_number"])
        # From now on its memoized questions flip with the default gamma, stored with each randomization.
        for mechanism, gamma in DEFAULT_MEMO_GAMMA.items():
            memoized_randomizations(survey).filter(mechanism=mechanism, memo_gamma__isnull=True).update(
                memo_gamma=gamma
            )
        stamps.changed(survey.pk)  # updates send no signal
        readvise_automatic(survey)
    series.recurrence = recurrence
    series.next_round_at = next_due(recurrence, now)
    series.save(update_fields=["recurrence", "next_round_at"])
    return series


def readvise_automatic(survey: Survey) -> list[Question]:
    """Choose again, now that the survey recurs, for its questions left on "Automatic" whose
    randomization is not frozen: "Automatic" then picks among the memoized mechanisms
    (:meth:`surveys.forms.question.QuestionForm.advised`). A question with reports (in any round) keeps its
    randomization, as does one whose saved form no longer validates. Returns the questions changed.
    Call inside a transaction.
    """
    from surveys.actions import do_update_question
    from surveys.forms.question import QuestionForm, initial_from_question

    changed = []
    for question in survey.questions.filter(mechanism_chosen_automatically=True):
        if question.randomization_frozen():
            continue
        form = QuestionForm(initial_from_question(question), survey=survey, question=question)
        if not form.is_valid():
            log.warning("question %s: Automatic could not choose again: %s", question.pk, form.errors.as_json())
            continue
        cleaned = form.cleaned_data
        if (cleaned["mechanism"], cleaned["mechanism_params"]) != (question.mechanism, question.mechanism_params):
            changed.append(do_update_question(question, cleaned))
    return changed


@transaction.atomic
def do_open_next_round(survey: Survey, now: datetime | None = None) -> Survey:
    """Close the series' latest round and open the next: a copy of its settings and questions.

    The questions keep their randomization parameters (each round freezes its own snapshot of the
    same parameters) and their id in the series. Locks the series, so two triggers at once open one
    round, and the second caller gets the round the first opened.
    """
    if survey.series_id is None:
        raise LifecycleError(_("Make the survey recurring first."))
    series = Series.objects.select_for_update().get(pk=survey.series_id)
    now = now or timezone.now()
    return _open_next(series, now, base=now, opened_at=now)


def _open_next(series: Series, now: datetime, base: datetime, opened_at: datetime) -> Survey:
    """Open the next round at ``opened_at``; a schedule's next due time is one period after ``base``
    (and after now)."""
    latest = latest_round(series)
    if latest is None:
        raise LifecycleError(_("Every round of this survey was deleted."))
    if latest.status == Survey.Status.DRAFT:
        raise LifecycleError(_("Open the survey before starting its next round."))
    if latest.status == Survey.Status.OPEN:
        do_close_survey(latest)
    round_number = (latest.round_number or 1) + 1
    copy = copy_survey(
        latest, same_series=True, series=series, round_number=round_number, closes_at=None, opened_at=opened_at
    )
    do_open_survey(copy)
    # The round's own timestamps say when it opened, never when the visit that opened it came.
    Survey.objects.filter(pk=copy.pk).update(created_at=opened_at)  # stamps.changed below retires its access entries
    Randomization.objects.filter(question__survey=copy).update(created_at=opened_at)
    stamps.changed(copy.pk)
    series.next_round_at = next_due(series.recurrence, base)
    while series.next_round_at is not None and series.next_round_at <= now:
        series.next_round_at = next_due(series.recurrence, series.next_round_at)
    series.save(update_fields=["next_round_at"])
    return copy


def open_if_due(series_id: int | None, now: datetime | None = None) -> Survey | None:
    """Open the series' next round if its schedule says it is due (the new round, else None).

    Cheap when nothing is due (one indexed read); safe under concurrency (the series is locked and
    re-checked). A round that cannot open (its organizer has not confirmed their address, a
    question became invalid) is logged and its due time kept, so a later trigger tries again.
    """
    if series_id is None:
        return None
    now = now or timezone.now()
    if not Series.objects.filter(pk=series_id, next_round_at__lte=now).exists():
        return None
    try:
        with transaction.atomic():
            series = Series.objects.select_for_update().get(pk=series_id)
            if series.next_round_at is None or series.next_round_at > now:
                return None
            # Opened by whoever comes first, often a respondent: their visit's time is kept only to
            # the hour, as a report's (Submission.received_hour).
            hour = now.replace(minute=0, second=0, microsecond=0)
            return _open_next(series, now, base=series.next_round_at, opened_at=hour)
    except LifecycleError as error:
        log.warning("series %s: the next round could not open: %s", series_id, error)
        # A series whose rounds were all deleted has nothing to open: stop its schedule.
        Series.objects.filter(pk=series_id, rounds__isnull=True).update(next_round_at=None)
        return None


def open_due_rounds(now: datetime | None = None) -> list[Survey]:
    """Open every series' due round (``manage.py open_due_rounds``, e.g. hourly from cron)."""
    now = now or timezone.now()
    due = Series.objects.filter(next_round_at__lte=now).values_list("pk", flat=True)
    opened = [open_if_due(pk, now) for pk in list(due)]
    return [survey for survey in opened if survey is not None]


def run_open_due_rounds(job: Any, progress: Any) -> dict[str, list[int]]:
    """The hourly ``open_due_rounds`` job (:func:`surveys.jobs.loop.schedule`): every due round opened.

    Idempotent: a round opens only while its series is due, under the series' row lock, so a
    repeated job opens nothing twice.
    """
    from surveys.jobs import guard

    guard.off_request_path("Opening scheduled rounds")
    return {"opened": [survey.pk for survey in open_due_rounds()]}


def current_round(survey: Survey) -> Survey | None:
    """The series' open round other than this survey, if there is one (for links from old rounds)."""
    if survey.series_id is None:
        return None
    latest = Survey.objects.filter(series_id=survey.series_id).aggregate(last=Max("round_number"))["last"]
    if latest is None or latest == survey.round_number:
        return None
    return Survey.objects.filter(series_id=survey.series_id, round_number=latest, status=Survey.Status.OPEN).first()


def round_context(survey: Survey) -> dict[str, Any]:
    """What the builder's rounds box shows."""
    return {
        "series": survey.series,
        "rounds": rounds_of(survey) if survey.series_id is not None else [],
        "recurrence_choices": Series.Recurrence.choices,
    }
