"""Stored reports -> ldp estimates, for the dashboard and the exports.

Results are computed from each randomization's tally, summed over its shards in the database
(``surveys.responding.tallies``), never by scanning reports: a question's results cost O(cells x shards).
Every randomization that holds reports is shown, so no accepted report is ever left out; the
estimates of a (randomization, tally) pair are computed once and then served from Django's cache
(:func:`cached_estimates`), keyed by the tally's digest, which changes with every new report.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from django.core.cache import cache
from django.utils.translation import gettext_lazy as _

import ldp
from ldp.advisor import Z_95, expected_half_width
from ldp.estimates import FrequencyEstimate, Interval
from ldp.mechanisms import HadamardResponse, Mechanism
from ldp.mechanisms.bitflip import SampledUnaryEncoding
from ldp.multiselect import PaddingAndSampling, SetUnaryEncoding, SharesEstimate
from ldp.multiselect.advisor import reference_variance
from ldp.numeric import MeanEstimate, NumericMechanism, modips
from ldp.textreports import CandidateCounts, TextReports
from surveys.costs import respondents_for
from surveys.kinds import family
from surveys.models import Question, Randomization, Survey
from surveys.responding import tallies
from surveys.results import integrity

EstimateKind = Literal["consistent", "unbiased"]
ESTIMATE_KINDS: tuple[EstimateKind, ...] = ("consistent", "unbiased")
#: Which 95 % bands a results page draws: each option's own, or bands that hold for all at once.
BAND_CHOICES = ("option", "joint")

#: Below this many reports, or while the expected error exceeds an even share, no estimate is shown.
MIN_REPORTS = 10

#: A mean is shown once its expected 95 % half-width is at most this share of the question's range.
MEAN_PRECISION = 0.10

#: Bump when the estimators change, so cached estimates from older code are not served.
ESTIMATES_VERSION = 6
#: Cached estimates never go stale (their key names the exact tally); this only bounds memory.
CACHE_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class Estimates:
    """What a tally yields; computed once per (randomization, tally digest) and cached."""

    unbiased: FrequencyEstimate | None
    consistent: FrequencyEstimate | None
    expected_half_width: float | None
    """Expected 95 % half-width at the current n (evenly spread answers); None before any report.

    For a numeric mechanism: of the mean, in the question's units (worst case over values)."""
    mean: MeanEstimate | None = None
    joint: Interval | None = None
    """95 % bands that hold for all options at once (``Mechanism.simultaneous_bands``: Šidák's level)."""
    multi: SharesEstimate | None = None
    """Multi-select: each option's share, their bands and the mean number of options chosen."""


@dataclass(frozen=True)
class QuestionResult:
    question: Question
    randomization: Randomization
    mechanism: Mechanism | NumericMechanism
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

    @property
    def summary(self) -> str:
        """ "shares" or "mean": how this randomization's reports are summarized (:func:`surveys.kinds.family`)."""
        return family(self.randomization.mechanism)

    @property
    def raw_count_label(self) -> str:
        return str(RAW_COUNT_LABELS[self.randomization.mechanism])

    @property
    def mechanism_label(self) -> str:
        return str(Question.MechanismName(self.randomization.mechanism).label)

    @property
    def enough(self) -> bool:
        """Whether the estimate means something: MIN_REPORTS reports, and error below an even share.

        For a mean: MIN_REPORTS reports, and an expected half-width within MEAN_PRECISION of the range.
        """
        if self.summary == "text":
            return self.n >= MIN_REPORTS
        if self.summary == "multi":
            return (
                self.multi is not None
                and self.n >= MIN_REPORTS
                and self.expected_half_width is not None
                and self.expected_half_width <= self.share_target
            )
        if self.summary == "mean":
            return (
                self.mean is not None
                and self.n >= MIN_REPORTS
                and self.expected_half_width is not None
                and self.expected_half_width <= self.mean_target
            )
        return (
            self.unbiased is not None
            and self.n >= MIN_REPORTS
            and self.expected_half_width is not None
            and self.expected_half_width <= 1 / self.mechanism.k
        )

    @property
    def mean_target(self) -> float:
        """The largest expected half-width of a mean that the page shows: MEAN_PRECISION of the range."""
        mechanism = self.mechanism
        assert isinstance(mechanism, NumericMechanism)
        return MEAN_PRECISION * (mechanism.hi - mechanism.lo)

    @property
    def share_target(self) -> float:
        """Multi-select: the largest expected half-width of each option's share that the page shows.

        An even share (1 / k) as for a single choice, or :data:`READABLE_SHARE` if that is wider:
        the shares of a multi-select question do not sum to 1, so many options do not make each one small.
        """
        return max(1 / self.mechanism.k, READABLE_SHARE)

    @property
    def reports_needed(self) -> int:
        """Reports needed for an expected half-width of one even share (1/k); error ~ 1/sqrt(n).

        For a mean: for an expected half-width of :attr:`mean_target`.
        """
        if isinstance(self.mechanism, NumericMechanism):
            target, at_one = self.mean_target, Z_95 * self.mechanism.expected_standard_error(1)
        elif isinstance(self.mechanism, TextReports):
            target, at_one = READABLE_SHARE, Z_95 * self.mechanism.share_standard_error(1)
        elif isinstance(self.mechanism, (SetUnaryEncoding, PaddingAndSampling)):
            target, at_one = self.share_target, Z_95 * float(np.sqrt(reference_variance(self.mechanism)))
        else:
            target, at_one = 1 / self.mechanism.k, expected_half_width(self.mechanism, 1)
        return respondents_for(at_one, target, 1)

    @property
    def adjustment_label(self) -> str:
        """The consistency adjustment chosen for this tally, by name."""
        method = self.consistent.method if self.consistent is not None else ""
        return str(ADJUSTMENT_LABELS.get(method, method))

    def estimate(self, kind: EstimateKind) -> FrequencyEstimate | None:
        return self.consistent if kind == "consistent" else self.unbiased

    def bands(self, kind: EstimateKind, bands: str) -> Interval:
        """The 95 % bands drawn: each option's own (``estimate(kind)``'s), or the joint ones."""
        if bands == "joint" and self.joint is not None:
            return self.joint
        estimate = self.estimate(kind)
        assert estimate is not None
        return Interval(*estimate.confidence_interval(0.95))


ADJUSTMENT_LABELS = {
    "norm-sub": _("Norm-Sub"),
    "clip": _("clipping and rescaling"),
    "eb": _("empirical-Bayes shrinkage"),
}

#: What :func:`raw_counts` counts, per mechanism, as the results table's column heading.
RAW_COUNT_LABELS = {
    "krr": _("Reports naming it"),
    "subset": _("Reports whose set holds it"),
    "olh": _("Reports hashing it to their value"),
    "hadamard": _("Reports in its half"),
    "cms": _("Reports with +1 at its cell"),
    "hcms": _("Reports agreeing with its sign"),
    "dbitflip": _("Reports with its bit = 1"),
    "sue": _("Reports with its bit = 1"),
    "oue": _("Reports with its bit = 1"),
    "set-sue": _("Reports with its bit = 1"),
    "set-oue": _("Reports with its bit = 1"),
    "padding-krr": _("Reports naming it"),
    "padding-olh": _("Reports hashing it to their value"),
}


def raw_counts(mechanism: Any, counts: np.ndarray) -> np.ndarray:
    """The per-option number a reader can relate to the reports (see RAW_COUNT_LABELS).

    Unary encodings tally sampled and one-bits: the second half. Hadamard response tallies report
    indices: the reports in each option's half are summed from them.
    """
    if isinstance(mechanism, SampledUnaryEncoding):
        return counts[mechanism.k :]
    if isinstance(mechanism, PaddingAndSampling):  # the options' items; the dummies' come after them
        return counts[: mechanism.k]
    if isinstance(mechanism, HadamardResponse):
        return (counts @ mechanism.membership.T).astype(np.int64)
    return counts


def compute_estimates(mechanism: Any, tally: ldp.Tally) -> Estimates:
    if not tally.n:
        return Estimates(None, None, None)
    if isinstance(mechanism, (SetUnaryEncoding, PaddingAndSampling)):
        half_width = Z_95 * float(np.sqrt(reference_variance(mechanism) / tally.n))
        return Estimates(None, None, half_width, multi=mechanism.estimate(tally))
    if isinstance(mechanism, TextReports):  # counted per candidate instead (cached_text_query)
        return Estimates(None, None, Z_95 * mechanism.share_standard_error(tally.n))
    if isinstance(mechanism, NumericMechanism):
        half_width = Z_95 * mechanism.expected_standard_error(tally.n)
        return Estimates(None, None, half_width, mean=mechanism.estimate(tally))
    return Estimates(
        unbiased=mechanism.estimate(tally),
        consistent=mechanism.consistent_estimate(tally, "auto"),
        expected_half_width=expected_half_width(mechanism, tally.n),
        joint=mechanism.simultaneous_bands(tally),
    )


def cached_estimates(randomization: Randomization, tally: ldp.Tally, digest: str) -> Estimates:
    """:func:`compute_estimates`, once per (randomization, tally) across requests and processes."""
    key = f"murmur:estimates:{ESTIMATES_VERSION}:{randomization_digest(randomization)}:{digest}"
    estimates = cache.get(key)
    if estimates is None:
        estimates = compute_estimates(randomization.build_mechanism(), tally)
        cache.set(key, estimates, CACHE_SECONDS)
    return estimates


#: A free-text question's reports needed: a candidate's share known within ± 10 points (95 %).
READABLE_SHARE = 0.10
#: The false-discovery (or family-wise) level at which candidates are listed as found.
TEXT_ALPHA = 0.05


def cached_text_query(
    randomization: Randomization, tally: ldp.Tally, digest: str, candidates: list[str]
) -> tuple[CandidateCounts | None, str]:
    """(candidate counts, "") or (None, why not): :meth:`ldp.textreports.TextReports.query`, cached.

    Keyed by the randomization, the tally's digest and the candidates, which the organizer may
    change at any time (they are not part of the randomization).
    """
    if not candidates or not tally.n:
        return None, ""
    material = hashlib.blake2b(json.dumps(candidates).encode(), digest_size=8).hexdigest()
    key = f"murmur:text:{ESTIMATES_VERSION}:{randomization_digest(randomization)}:{digest}:{material}"
    made = cache.get(key)
    if made is None:
        mechanism = randomization.build_mechanism()
        assert isinstance(mechanism, TextReports)
        try:
            made = (mechanism.query(tally, candidates, alpha=TEXT_ALPHA), "")
        except (ValueError, np.linalg.LinAlgError):
            made = (None, str(UNCOUNTABLE))
        cache.set(key, made, CACHE_SECONDS)
    return made


UNCOUNTABLE = _(
    "These candidate answers cannot be counted apart with this question's sketch: some of them share "
    "every hash. Remove one of each such group."
)


@dataclass(frozen=True)
class Synthetic:
    """Modips synthetic records for a numeric tally (:mod:`ldp.numeric.modips`), as many as reports."""

    statistics: modips.SanitizedStatistics
    posterior_mean: float
    posterior_variance: float
    """Posterior means of mu and of 1 / lambda after burn-in (formula 6.9)."""
    records: np.ndarray
    interval: tuple[float, float]
    """The synthetic records' 95 % interval of the mean (formula 6.10)."""
    overlap: float
    """Formula 6.11 between the privatized estimate's interval and :attr:`interval`."""


def synthetic(result: QuestionResult) -> Synthetic | None:
    """Modips records for a numeric result with enough reports, once per tally (else None).

    Seeded by the tally's digest, so the page and every download of one tally show the same records.
    """
    mechanism = result.mechanism
    if not (isinstance(mechanism, NumericMechanism) and mechanism.output_size > 2 and result.enough):
        return None
    key = f"murmur:synthetic:{ESTIMATES_VERSION}:{randomization_digest(result.randomization)}:{result.digest}"
    made = cache.get(key)
    if made is None:
        tally = tallies.read_tallies([result.randomization])[result.randomization.pk]
        rng = np.random.default_rng(int(result.digest or "0", 16))
        statistics = modips.sanitized_statistics(mechanism, tally)
        posterior = modips.gibbs_normal_gamma(statistics, rng=rng)
        records = modips.synthesize(posterior, statistics.n, rng=rng)
        interval = modips.t_interval(records)
        made = Synthetic(
            statistics,
            float(posterior.mu.mean()),
            float((1 / posterior.precision).mean()),
            records,
            interval,
            modips.interval_overlap(statistics.mean_interval, interval),
        )
        cache.set(key, made, CACHE_SECONDS)
    return made


def randomization_digest(randomization: Randomization) -> str:
    """Names a randomization by id *and* parameters, so a reused id can never meet a stale entry."""
    material = json.dumps([randomization.pk, *randomization.key()], sort_keys=True)
    return hashlib.blake2b(material.encode(), digest_size=8).hexdigest()


@dataclass
class SurveyState:
    """A survey's questions, every randomization and its tally, read in a fixed number of queries."""

    survey: Survey
    questions: list[Question]
    randomizations: dict[int, list[Randomization]]
    """Per question id, its randomizations, newest first."""
    tallies: dict[int, ldp.Tally]
    digests: dict[int, str] = field(default_factory=dict)

    @classmethod
    def read(cls, survey: Survey, questions: list[Question] | None = None) -> SurveyState:
        questions = (
            list(survey.questions.select_related("matrix", "pair_first", "pair_second"))
            if questions is None
            else questions
        )
        by_question: dict[int, list[Randomization]] = {q.pk: [] for q in questions}
        rows = Randomization.objects.filter(question__in=questions).order_by("question_id", "-version")
        for randomization in rows:
            by_question[randomization.question_id].append(randomization)
        read = tallies.read_tallies(r for versions in by_question.values() for r in versions)
        digests = {pk: tallies.tally_digest(t) for pk, t in read.items()}
        return cls(survey, questions, by_question, read, digests)

    @property
    def signature(self) -> str:
        """Changes whenever any of the survey's tallies does (for polling and ETags)."""
        digest = hashlib.blake2b(digest_size=8)
        for pk in sorted(self.digests):
            digest.update(f"{pk}:{self.digests[pk]};".encode())
        return digest.hexdigest()

    @property
    def reports(self) -> int:
        """Reports stored for the survey, over every question and version."""
        return sum(t.n for t in self.tallies.values())

    def results(self, question: Question) -> list[QuestionResult]:
        """The question's results: every version that holds reports, newest first.

        A question's randomization is frozen once it has reports, so normally one version holds
        them all; should several ever hold reports, each is estimated and shown on its own (their
        reports were randomized differently and cannot be pooled into one tally). With no reports
        at all, the newest version is shown, empty.
        """
        versions = self.randomizations.get(question.pk, [])
        with_reports = [r for r in versions if self.tallies[r.pk].n > 0] or versions[:1]
        return [self._result(question, r, earlier=i > 0) for i, r in enumerate(with_reports)]

    def _result(self, question: Question, randomization: Randomization, earlier: bool) -> QuestionResult:
        mechanism = randomization.build_mechanism()
        tally, digest = self.tallies[randomization.pk], self.digests[randomization.pk]
        estimates = cached_estimates(randomization, tally, digest)
        text, text_error = None, ""
        if isinstance(mechanism, TextReports):
            text, text_error = cached_text_query(randomization, tally, digest, list(question.candidates))
        return QuestionResult(
            question=question,
            randomization=randomization,
            mechanism=mechanism,
            n=tally.n,
            raw_counts=raw_counts(mechanism, tally.counts),
            unbiased=estimates.unbiased,
            consistent=estimates.consistent,
            expected_half_width=estimates.expected_half_width,
            digest=digest,
            earlier=earlier,
            integrity=integrity.check(question.options, mechanism, tally, randomization_digest(randomization) + digest),
            mean=estimates.mean,
            joint=estimates.joint,
            text=text,
            text_error=text_error,
            multi=estimates.multi,
        )

    def all_results(self) -> list[QuestionResult]:
        return [r for q in self.questions for r in self.results(q)]


def tally_signature(survey: Survey) -> str:
    """A short string that changes whenever any of the survey's tallies does (for polling)."""
    return SurveyState.read(survey).signature
