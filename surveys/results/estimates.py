"""Stored reports -> ldp estimates, for the dashboard and the exports.

Results are computed from each randomization's tally, summed over its shards in the database
(``surveys.responding.tallies``), never by scanning reports: a question's results cost O(cells x shards).
Every randomization that holds reports is shown, so no accepted report is ever left out; the
estimates of a (randomization, tally) pair are computed once and then served from Django's cache
(:func:`cached_estimates`), keyed by the tally's digest, which changes with every new report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from django.core.cache import cache
from django.utils.translation import gettext_lazy as _

import ldp
from ldp.estimates import FrequencyEstimate, Interval
from ldp.intervals import containing
from ldp.multiselect import SharesEstimate
from ldp.numeric import MeanEstimate
from ldp.textreports import CandidateCounts
from surveys.kinds import (  # noqa: F401  (read here by the results and exports)
    CACHE_SECONDS,
    ESTIMATES_VERSION,
    MEAN_PRECISION,
    MIN_REPORTS,
    READABLE_SHARE,
    TEXT_ALPHA,
    UNCOUNTABLE,
    Estimates,
    QuestionKind,
    Summary,
    Synthetic,
    adaptive,
    cached_text_query,
    kind_of,
    randomization_digest,
    summary_for,
    summary_of,
    synthetic,
)
from surveys.models import Question, Randomization, Survey
from surveys.responding import tallies
from surveys.responding.versions import survey_version
from surveys.results import integrity, snapshots
from surveys.sampling import Pool, pool_of

EstimateKind = Literal["consistent", "unbiased"]
ESTIMATE_KINDS: tuple[EstimateKind, ...] = ("consistent", "unbiased")
#: Which 95 % bands a results page draws: each option's own, or bands that hold for all at once.
BAND_CHOICES = ("option", "joint")


@dataclass(frozen=True)
class QuestionResult:
    question: Question
    randomization: Randomization
    mechanism: Any
    n: int
    raw_counts: np.ndarray
    """Per option, the mechanism's raw statistic (see :func:`raw_counts`)."""
    unbiased: FrequencyEstimate | None
    consistent: FrequencyEstimate | None
    expected_half_width: float | None
    digest: str = ""
    """The tally's digest: the results of this randomization change exactly when it does."""
    earlier: bool = False
    """Reports of an earlier version of the question's randomization (shown beside the newest)."""
    integrity: integrity.IntegrityCheck | None = None
    """The manipulation check of these reports (:mod:`surveys.results.integrity`)."""
    mean: MeanEstimate | None = None
    """Numeric mechanisms: the unbiased mean with its standard error (shares are then None)."""
    joint: Interval | None = None
    """Bands that hold for all options at once (shares only)."""
    text: CandidateCounts | None = None
    """Free text: the question's candidate strings counted (:func:`cached_text_query`)."""
    text_error: str = ""
    """Free text: why the candidates could not be counted (empty: they were, or there are none)."""
    multi: SharesEstimate | None = None
    """Multi-select: each option's share with its bands, and the mean number of options chosen."""
    sampled: tuple[int, int] | None = None
    """(m, q): the question was asked of a random m of q respondents' questions (:mod:`surveys.sampling`)."""
    pooled: tuple[Randomization, ...] = ()
    """A two-phase question's versions estimated together, oldest first (:mod:`surveys.kinds.adaptive`);
    ``randomization`` is then the newest, whose raw counts the card shows."""

    @property
    def design_note(self) -> str:
        """What the card says of a two-phase design: that it changed after N respondents and to what,
        or that the re-tune kept it (empty for any other question)."""
        if len(self.pooled) == 2:
            return adaptive.change_note(*self.pooled)
        return adaptive.kept_note(self.question)

    @property
    def question_kind(self) -> QuestionKind:
        """The question's kind description (:func:`surveys.kinds.kind_of`)."""
        return kind_of(self.question.kind)

    @property
    def summary(self) -> Summary:
        """How this randomization's reports are summarized (:func:`surveys.kinds.summary_for`)."""
        return summary_for(self.question.kind, self.randomization.mechanism)

    @property
    def raw_count_label(self) -> str:
        return self.summary.raw_count_label(self.randomization.mechanism)

    @property
    def mechanism_label(self) -> str:
        return str(Question.MechanismName(self.randomization.mechanism).label)

    @property
    def enough(self) -> bool:
        """Whether the estimate means something: MIN_REPORTS reports, and its error small enough
        (:meth:`surveys.kinds.base.Summary.enough`: below an even share; a mean's within
        MEAN_PRECISION of the range)."""
        return self.summary.enough(self)

    @property
    def target(self) -> float:
        """The largest expected 95 % half-width at which the page shows the estimate (:meth:`Summary.target`)."""
        return self.summary.target(self)

    @property
    def reports_needed(self) -> int:
        """Reports needed for the expected half-width :attr:`enough` asks for; error ~ 1/sqrt(n)."""
        return self.summary.reports_needed(self)

    @property
    def shown_half_width(self) -> float | None:
        """:attr:`expected_half_width` as the page prints it: a share's at most 100 points (its band,
        cut to [0, 1], is never wider); a mean's as it is."""
        half_width = self.expected_half_width
        if half_width is None or not self.summary.percent:
            return half_width
        return min(half_width, 1.0)

    @property
    def adjustment_label(self) -> str:
        """The consistency adjustment chosen for this tally, by name."""
        method = self.consistent.method if self.consistent is not None else ""
        return str(ADJUSTMENT_LABELS.get(method, method))

    def estimate(self, which: EstimateKind) -> FrequencyEstimate | None:
        """The consistent or the unbiased shares (an estimate kind, not a question's)."""
        return self.consistent if which == "consistent" else self.unbiased

    def bands(self, kind: EstimateKind, bands: str) -> Interval:
        """The 95 % bands drawn: each option's own (``estimate(kind)``'s), or the joint ones."""
        estimate = self.estimate(kind)
        assert estimate is not None
        if bands == "joint" and self.joint is not None:
            return containing(self.joint, estimate.proportions)  # the point shown stays inside its band
        return Interval(*estimate.confidence_interval(0.95))


ADJUSTMENT_LABELS = {
    "norm-sub": _("Norm-Sub"),
    "clip": _("clipping and rescaling"),
    "eb": _("empirical-Bayes shrinkage"),
}


def compute_estimates(mechanism: Any, tally: ldp.Tally) -> Estimates:
    """The tally's estimates, by the mechanism's summary (:meth:`surveys.kinds.base.Summary.estimates`)."""
    if not tally.n:
        return Estimates(None, None, None)
    return summary_of(mechanism.name).estimates(mechanism, tally)


def cached_estimates(
    randomization: Randomization, tally: ldp.Tally, digest: str, sampled: tuple[int, int] | None = None
) -> Estimates:
    """:func:`compute_estimates`, once per (randomization, tally) across requests and processes; for a
    question asked of a random m of q (``sampled`` = (m, q), :mod:`surveys.sampling`) the estimates
    corrected for the fake reports (:meth:`surveys.kinds.base.Summary.sampled_estimates`)."""
    tag = f":sampled-{sampled[0]}-of-{sampled[1]}" if sampled else ""
    key = f"murmur:estimates:{ESTIMATES_VERSION}:{randomization_digest(randomization)}:{digest}{tag}"
    estimates = cache.get(key)
    if estimates is None:
        mechanism = randomization.build_mechanism()
        if sampled and tally.n:
            estimates = summary_of(mechanism.name).sampled_estimates(mechanism, tally, *sampled)
        else:
            estimates = compute_estimates(mechanism, tally)
        cache.set(key, estimates, CACHE_SECONDS)
    return estimates


class SnapshotTallies(Mapping[int, ldp.Tally]):
    """The snapshot's tallies of the randomizations ``wanted``, fetched only when one is asked for:
    a 304 or a poll signs the page with the digests alone and never unpickles a tally."""

    def __init__(self, snapshot: snapshots.Snapshot, wanted: frozenset[int]) -> None:
        self.snapshot, self.wanted = snapshot, wanted

    def __getitem__(self, pk: int) -> ldp.Tally:
        if pk not in self.wanted:
            raise KeyError(pk)
        return self.snapshot.tallies[pk]

    def __iter__(self) -> Iterator[int]:
        return iter(self.wanted)

    def __len__(self) -> int:
        return len(self.wanted)


@dataclass
class SurveyState:
    """A survey's questions, every randomization and its tally, read in a fixed number of queries."""

    survey: Survey
    questions: list[Question]
    randomizations: dict[int, list[Randomization]]
    """Per question id, its randomizations, newest first."""
    tallies: Mapping[int, ldp.Tally]
    """Per randomization id, its tally (from a snapshot: fetched when first asked for)."""
    digests: dict[int, str] = field(default_factory=dict)
    snapshot: snapshots.Snapshot | None = None
    """Where a live read got its tallies: its age and how many responses it lacks (None: read now)."""
    pool: Pool | None = None
    """The survey's sampled questions (:mod:`surveys.sampling`): their estimates correct for fakes."""

    @classmethod
    def read(
        cls,
        survey: Survey,
        questions: list[Question] | None = None,
        live: bool = False,
        snapshot: snapshots.Snapshot | None = None,
    ) -> SurveyState:
        """The questions (all, or these), their randomizations and tallies.

        ``live`` (the results pages): the tallies come from the survey's snapshot
        (:mod:`surveys.results.snapshots`), re-read at most once per version and refresh interval;
        ``snapshot``: from this one; otherwise (exports, jobs) they are read now.
        """
        questions_given = questions
        questions = (
            list(survey.questions.select_related("matrix", "pair_first", "pair_second"))
            if questions is None
            else questions
        )
        by_question: dict[int, list[Randomization]] = {q.pk: [] for q in questions}
        rows = Randomization.objects.filter(question__in=questions).order_by("question_id", "-version")
        for randomization in rows:
            by_question[randomization.question_id].append(randomization)
        if live or snapshot is not None:
            own = [r for versions in by_question.values() for r in versions]

            def every() -> list[Randomization]:  # read only for a first snapshot of the whole survey
                return own if questions_given is None else list(Randomization.objects.filter(question__survey=survey))

            snapshot = snapshots.filled(snapshot or snapshots.read(survey, every), own)
            wanted = {r.pk for r in own}
            digests = {pk: digest for pk, digest in snapshot.digests.items() if pk in wanted}
            lazy = SnapshotTallies(snapshot, frozenset(digests))
            return cls(survey, questions, by_question, lazy, digests, snapshot, pool_of(survey))
        read = tallies.read_tallies(r for versions in by_question.values() for r in versions)
        digests = {pk: tallies.tally_digest(t) for pk, t in read.items()}
        return cls(survey, questions, by_question, read, digests, pool=pool_of(survey))

    def sampled(self, question: Question) -> tuple[int, int] | None:
        """(m, q) when the question is asked of a random m of q and its summary corrects for fakes."""
        if self.pool is None or question.pk not in self.pool:
            return None
        return (self.pool.m, self.pool.q) if summary_for(question.kind, question.mechanism).samples else None

    @property
    def signature(self) -> str:
        """Changes whenever any of the survey's tallies does (for polling and ETags)."""
        return snapshots.signature_of(self.digests, self.digests)

    @property
    def version(self) -> int:
        """The survey's version now (:mod:`surveys.responding.versions`): the live read's, or read now."""
        if self.snapshot is not None:
            return self.snapshot.latest()
        return survey_version(self.survey)

    @property
    def reports(self) -> int:
        """Reports stored for the survey, over every question and version."""
        return sum(t.n for t in self.tallies.values())

    def results(self, question: Question) -> list[QuestionResult]:
        """The question's results: every version that holds reports, newest first.

        A question's randomization is frozen once it has reports, so normally one version holds
        them all; should several ever hold reports, each is estimated and shown on its own (their
        reports were randomized differently and cannot be pooled into one tally), except a two-phase
        design's two versions, which are one result combined by inverse variance
        (:mod:`surveys.kinds.adaptive`). With no reports at all, the newest version is shown, empty.
        """
        versions = self.randomizations.get(question.pk, [])
        with_reports = [r for r in versions if self.tallies[r.pk].n > 0] or versions[:1]
        pooled = adaptive.pooled_versions(versions) if self.sampled(question) is None else []
        if pooled:  # a two-phase design: its versions are one estimate (surveys.kinds.adaptive)
            rest = [r for r in with_reports if r not in pooled]
            return [self._pooled_result(question, pooled)] + [self._result(question, r, earlier=True) for r in rest]
        return [self._result(question, r, earlier=i > 0) for i, r in enumerate(with_reports)]

    def _pooled_result(self, question: Question, pooled: list[Randomization]) -> QuestionResult:
        """One result of a two-phase question's versions: their estimates combined by inverse variance,
        cached by every version's parameters and tally digest; the newest version's raw counts."""
        newest = pooled[-1]
        parts = [(r.build_mechanism(), self.tallies[r.pk]) for r in pooled]
        digest = hashlib.sha256(":".join(self.digests[r.pk] for r in pooled).encode()).hexdigest()[:32]
        material = ":".join(randomization_digest(r) for r in pooled)
        key = f"murmur:estimates:{ESTIMATES_VERSION}:pooled:{material}:{digest}"
        summary = summary_for(question.kind, newest.mechanism)
        estimates = cache.get(key)
        if estimates is None:
            estimates = adaptive.pooled_estimates(parts, summary)
            cache.set(key, estimates, CACHE_SECONDS)
        mechanism, tally = parts[-1]
        return QuestionResult(
            question=question,
            randomization=newest,
            mechanism=mechanism,
            n=sum(t.n for _, t in parts),
            raw_counts=summary.raw_counts(mechanism, tally.counts),
            unbiased=estimates.unbiased,
            consistent=estimates.consistent,
            expected_half_width=estimates.expected_half_width,
            digest=digest,
            integrity=integrity.check(question.options, mechanism, tally, randomization_digest(newest) + digest)
            if summary.choice_reports and tally.n
            else None,
            joint=estimates.joint,
            pooled=tuple(pooled),
        )

    def _result(self, question: Question, randomization: Randomization, earlier: bool) -> QuestionResult:
        mechanism = randomization.build_mechanism()
        tally, digest = self.tallies[randomization.pk], self.digests[randomization.pk]
        estimates = cached_estimates(randomization, tally, digest, self.sampled(question))
        summary = summary_for(question.kind, randomization.mechanism)
        text, text_error = summary.text_query(randomization, tally, digest, list(question.candidates))
        return QuestionResult(
            question=question,
            randomization=randomization,
            mechanism=mechanism,
            n=tally.n,
            raw_counts=summary.raw_counts(mechanism, tally.counts),
            unbiased=estimates.unbiased,
            consistent=estimates.consistent,
            expected_half_width=estimates.expected_half_width,
            digest=digest,
            earlier=earlier,
            integrity=integrity.check(question.options, mechanism, tally, randomization_digest(randomization) + digest)
            if summary.choice_reports
            else None,
            mean=estimates.mean,
            joint=estimates.joint,
            text=text,
            text_error=text_error,
            multi=estimates.multi,
            sampled=self.sampled(question),
        )

    def all_results(self) -> list[QuestionResult]:
        return [r for q in self.questions for r in self.results(q)]


def tally_signature(survey: Survey) -> str:
    """A short string that changes whenever any of the survey's tallies does (for polling)."""
    return SurveyState.read(survey).signature
