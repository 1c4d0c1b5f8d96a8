"""What anyone may audit about a survey's randomization: the specs in force and their digest.

The answer page sends each question's client spec (``{"question", "version", "spec"}``, with ``"skip"``,
the option a skip sends, when the question offers "Prefer not to say"), and the
public transparency page lists the same specs with every earlier version. Both show

    digest = SHA-256 of the canonical JSON of the list of those entries, in question order,

where canonical JSON is ``json.dumps(..., sort_keys=True, separators=(",", ":"),
ensure_ascii=True, allow_nan=False)``: the same specs always give the same digest, so a
respondent, or anyone who kept an earlier digest, can see that the page they answer uses exactly
the parameters published, and notice when they change.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.utils.translation import gettext as _

from ldp import registry
from ldp.branching import fill_kind
from surveys.kinds import adaptive, skip_index
from surveys.models import Question, Randomization, Survey
from surveys.responding.submissions import randomizations_in_force
from surveys.series.rounds import memo_block


def spec_entry(question: Question, randomization: Randomization, survey: Survey | None = None) -> dict[str, Any]:
    """One question's entry as the answer page sends it to the browser (with its memo block in a
    recurring survey: :func:`surveys.series.rounds.memo_block`; with the option a skip sends, when it
    offers "Prefer not to say": :func:`surveys.kinds.skip_index`)."""
    spec = randomization.build_mechanism().client_spec()
    memo = memo_block(survey, question, spec, randomization.memo_gamma) if survey is not None else None
    return entry_of(question.pk, randomization.version, spec, memo, skip_index(question))


def entry_of(
    question: int, version: int, spec: dict[str, Any], memo: dict[str, Any] | None, skip: int | None
) -> dict[str, Any]:
    """A spec entry as the digest reads it: ``memo`` and ``skip`` only when there are some (the answer
    page's entries and :func:`spec_entry`'s must be the same dicts, or the digests would differ)."""
    entry: dict[str, Any] = {"question": question, "version": version, "spec": spec}
    return entry | ({"memo": memo} if memo else {}) | ({"skip": skip} if skip is not None else {})


def skip_words(record: QuestionRecord) -> str:
    """What the question sends when a respondent leaves it empty or never sees it, in one sentence
    (empty: no spec in force). The entry's ``skip`` (its "Prefer not to say") when shown and skipped,
    else the fill of :data:`ldp.families.FILLS` (:func:`ldp.branching.fill_kind`); nothing for a
    question asked directly (static/surveys/direct.js sends it only when answered)."""
    question, entry = record.question, record.current
    if entry is None:
        return ""
    if record.direct:
        return _("Left empty, nothing is sent for it: it is not randomized, and neither is whether it was answered.")
    fake = fill_kind(entry["spec"]["mechanism"]) == "fake"
    fill = (
        _("the randomized report of a fake answer drawn uniformly from its options (or its range)")
        if fake
        else _("the randomized report of an empty answer (no option chosen, or no text), which counts for nothing")
    )
    if "skip" in entry and 0 <= entry["skip"] < len(question.options):
        return _(
            "Left empty by a respondent who sees it, it sends the randomized report of “%(option)s”, exactly "
            "as choosing that option does. Not shown on the respondent's path, or not drawn for them, it "
            "sends %(fill)s."
        ) % {"option": question.options[entry["skip"]], "fill": fill}
    return _("Left empty, not shown on the respondent's path, or not drawn for them, it sends %(fill)s.") % {
        "fill": fill
    }


def spec_digest(entries: list[dict[str, Any]]) -> str:
    """SHA-256 (hex) of the canonical JSON of the answer page's spec entries.

    >>> spec_digest([])
    '4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945'
    """
    canonical = json.dumps(entries, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return hashlib.sha256(canonical.encode("ascii")).hexdigest()


def created_hour(moment: datetime) -> datetime:
    """The UTC hour a randomization was created in: nothing finer is ever shown."""
    return moment.astimezone(UTC).replace(minute=0, second=0, microsecond=0)


@dataclass(frozen=True)
class VersionRow:
    """One version of a question's randomization, as the transparency page lists it."""

    version: int
    mechanism: str
    k: int
    epsilon: float
    params: dict[str, Any]
    in_force: bool
    retired: bool
    created_hour: datetime
    retuned_after: int | None = None
    """Chosen by a two-phase design's re-tune after this many reports (:mod:`surveys.kinds.adaptive`)."""

    @property
    def params_json(self) -> str:
        return json.dumps(self.params, sort_keys=True)

    @property
    def mechanism_label(self) -> str:
        return str(Question.MechanismName(self.mechanism).label)


@dataclass(frozen=True)
class QuestionRecord:
    """A question, the spec its answer page sends now (None: none in force) and its history."""

    question: Question
    current: dict[str, Any] | None
    versions: list[VersionRow]
    direct: bool = False
    """Asked directly (:func:`ldp.registry.randomized` is False): not randomized, no spec is sent."""
    design_words: str = ""
    """A two-phase design in words (:func:`surveys.kinds.adaptive.transparency_words`)."""


@dataclass(frozen=True)
class SurveyRecord:
    questions: list[QuestionRecord]
    entries: list[dict[str, Any]]

    @property
    def digest(self) -> str:
        return spec_digest(self.entries)


def survey_record(survey: Survey) -> SurveyRecord:
    """Every question's current spec and all its randomization versions, retired or not."""
    in_force = randomizations_in_force(survey)
    history: dict[int, list[Randomization]] = {}
    for randomization in Randomization.objects.filter(question__survey=survey).order_by("question_id", "version"):
        history.setdefault(randomization.question_id, []).append(randomization)
    records, entries = [], []
    for question in survey.questions.all():
        current = in_force.get(question.pk)
        entry = spec_entry(question, current, survey) if current is not None else None
        direct = current is not None and not registry.randomized(current.mechanism)
        if entry is not None and not direct:  # a question asked directly has no spec on the answer page
            entries.append(entry)
        versions = [
            VersionRow(
                version=r.version,
                mechanism=r.mechanism,
                k=r.k,
                epsilon=r.epsilon,
                params=r.params,
                in_force=current is not None and r.pk == current.pk,
                retired=r.retired,
                created_hour=created_hour(r.created_at),
                retuned_after=r.retuned_after,
            )
            for r in history.get(question.pk, [])
        ]
        words = adaptive.transparency_words(question, history.get(question.pk, []))
        records.append(
            QuestionRecord(question=question, current=entry, versions=versions, direct=direct, design_words=words)
        )
    return SurveyRecord(questions=records, entries=entries)
