"""What a results page's 304 and poll need, read in O(1) whatever the number of questions.

A 304 or a poll compares the page's signature (the tallies' digests, from the snapshot's head:
:mod:`surveys.results.snapshots`) and what else the page prints. Reading the survey's questions,
randomizations and sample for that costs three queries, O(questions) rows and about two model
objects per question, on every request. They are kept in the cache instead, as a :class:`Structure`
(each question's randomization ids and one digest of everything the pages print about them), under
a key named by the survey's ``revision``: :func:`changed` adds 1 to it, in the transaction that
saves or deletes one of the survey's questions, matrices, randomizations or its sample (the
models' signals, :func:`connect`; bulk updates call it themselves). The survey's row, which the
access check reads anyway, carries the revision, so a 304 or a poll is the session and user
(Django's), the survey, and one cache read (the snapshot's head and this entry together).

An entry is written when it is missing (the three queries, once per revision) and again by
each refresh of the snapshot and each page drawn, from what they read anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import F
from django.db.models.signals import post_delete, post_save

from surveys.access import access_changed
from surveys.models import Matrix, Question, Randomization, Survey
from surveys.results import snapshots
from surveys.results.cards import short_digest
from surveys.results.estimates import SurveyState
from surveys.sampling import Pool, QuestionSample, pool_of

#: How long an entry is kept (a new revision names a new entry anyway).
STRUCTURE_SECONDS = 3600


@dataclass(frozen=True)
class Structure:
    """The survey's questions as results pages print them, at one revision."""

    digest: str
    """Every field of every question, its matrix's title, its randomizations and the sample."""
    randomizations: dict[int, tuple[int, ...]]
    """Per question id, the ids of its randomizations."""

    def ids(self, question_id: int | None = None) -> list[int]:
        """Every randomization's id, or the question's."""
        if question_id is not None:
            return list(self.randomizations.get(question_id, ()))
        return [pk for ids in self.randomizations.values() for pk in ids]


@dataclass
class Stamp:
    """What a results page's ETag and poll compare: its signature and the words' digest."""

    snapshot: snapshots.Snapshot
    signature: str
    """The tallies' signature (:attr:`surveys.results.estimates.SurveyState.signature`)."""
    words: str
    """The structure's digest, and the hourly counts' (the responses and their chart)."""


def structure_of(
    questions: list[Question], randomizations: dict[int, list[Randomization]], pool: Pool | None
) -> Structure:
    """The structure of these questions (their matrices selected with them) and randomizations."""
    question_fields = Question._meta.concrete_fields
    randomization_fields = Randomization._meta.concrete_fields
    rows = [
        (
            [getattr(q, f.attname) for f in question_fields],
            q.matrix.title if q.matrix_id is not None and q.matrix is not None else None,
            [[getattr(r, f.attname) for f in randomization_fields] for r in randomizations.get(q.pk, [])],
        )
        for q in questions
    ]
    digest = short_digest(repr((rows, (pool.questions, pool.m) if pool is not None else None)))
    return Structure(digest, {q.pk: tuple(r.pk for r in randomizations.get(q.pk, [])) for q in questions})


def _key(survey: Survey) -> str:
    return _key_of(survey.pk)


def _key_of(survey_id: int) -> str:
    return f"murmur:structure:{survey_id}"


def _label(survey: Survey) -> tuple[str, int]:
    """Which survey (a reused id is another survey) and revision an entry was read at."""
    return f"{survey.created_at.timestamp():.6f}", survey.revision


def keys_of(survey_id: int) -> list[str]:
    """Every cache key :func:`read` looks at, from the survey's id alone: a 304 or a poll fetches
    them with its access entry (:func:`surveys.access.get_survey_to_read`) in one read."""
    return [*snapshots.keys_of(survey_id), _key_of(survey_id)]


def remember(survey: Survey, structure: Structure) -> Structure:
    """Keep ``structure`` as the survey's at the revision the survey was read with."""
    cache.set(_key(survey), (_label(survey), structure), STRUCTURE_SECONDS)
    return structure


def read_structure(survey: Survey) -> Structure:
    """The structure read now (three queries, as :meth:`SurveyState.read` reads them), and kept."""
    questions = list(survey.questions.select_related("matrix", "pair_first", "pair_second"))
    by_question: dict[int, list[Randomization]] = {q.pk: [] for q in questions}
    for randomization in Randomization.objects.filter(question__in=questions).order_by("question_id", "-version"):
        by_question[randomization.question_id].append(randomization)
    return remember(survey, structure_of(questions, by_question, pool_of(survey, [q.pk for q in questions])))


def read(survey: Survey, question_id: int | None = None, found: dict[str, Any] | None = None) -> Stamp:
    """The stamp of the survey's results page (or of one question's page): one cache read (none if
    ``found`` holds the entries under :func:`keys_of` already), plus the snapshot's rules
    (:func:`surveys.results.snapshots.read`) and, once per revision, the structure."""
    key = _key(survey)
    found = cache.get_many(keys_of(survey.pk)) if found is None else found
    entry = found.get(key)
    structure: Structure = entry[1] if entry is not None and entry[0] == _label(survey) else read_structure(survey)

    def every() -> list[Randomization]:
        return list(Randomization.objects.filter(question__survey=survey))

    snapshot = snapshots.read(survey, every, found)
    missing = [pk for pk in structure.ids() if pk not in snapshot.digests]
    if missing:  # a randomization made since the snapshot was read (rare)
        snapshots.filled(snapshot, list(Randomization.objects.filter(pk__in=missing)))
    signature = snapshots.signature_of(snapshot.digests, structure.ids(question_id))
    return Stamp(snapshot, signature, _words(structure, snapshot))


def state_of(survey: Survey, stamp: Stamp) -> SurveyState:
    """The whole survey's state from the stamp's snapshot, for a page drawn; its structure, read
    anyway, is kept again (so an entry never outlives a change its revision missed by more than a page)."""
    state = SurveyState.read(survey, live=True, snapshot=stamp.snapshot)
    remember(survey, structure_of(state.questions, state.randomizations, state.pool))
    return state


def of_state(state: SurveyState) -> Stamp:
    """The stamp of a whole survey's state already read (a page that reads it anyway)."""
    assert state.snapshot is not None, "a live state"
    structure = structure_of(state.questions, state.randomizations, state.pool)
    return Stamp(state.snapshot, state.signature, _words(structure, state.snapshot))


def _words(structure: Structure, snapshot: snapshots.Snapshot) -> str:
    return f"{structure.digest}:{short_digest(repr(snapshot.hourly)) if snapshot.hourly else ''}"


# -- the revision -------------------------------------------------------------------------------


def changed(survey_id: int | None) -> None:
    """Add 1 to the survey's revision: what its results pages print besides its own row has changed."""
    if survey_id is not None:
        Survey.objects.filter(pk=survey_id).update(revision=F("revision") + 1)
        access_changed(survey_id)  # the cached row's revision (surveys.access)


def _part_changed(sender: Any, instance: Any, **_: Any) -> None:
    if isinstance(instance, Randomization):
        changed(Question.objects.filter(pk=instance.question_id).values_list("survey_id", flat=True).first())
    else:
        changed(instance.survey_id)


def connect() -> None:
    """Every save and delete of a question, matrix, randomization or sample changes the revision."""
    for model in (Question, Matrix, Randomization, QuestionSample):
        post_save.connect(_part_changed, sender=model, dispatch_uid=f"stamps_{model.__name__}_saved")
        post_delete.connect(_part_changed, sender=model, dispatch_uid=f"stamps_{model.__name__}_deleted")
