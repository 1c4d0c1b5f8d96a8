"""Stored reports -> ldp estimates, for the dashboard and the exports.

Results are computed from each randomization's running tally, never by scanning reports: the
cost of a question's results is O(number of options), whatever the number of responses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from django.utils.translation import gettext_lazy as _

from ldp.advisor import expected_half_width
from ldp.estimates import FrequencyEstimate
from ldp.mechanisms import HadamardResponse, Mechanism
from ldp.mechanisms.bitflip import SampledUnaryEncoding
from surveys.models import Question, Randomization, Survey, Tally

EstimateKind = Literal["consistent", "unbiased"]
ESTIMATE_KINDS: tuple[EstimateKind, ...] = ("consistent", "unbiased")

#: Below this many reports, or while the expected error exceeds an even share, no estimate is shown.
MIN_REPORTS = 10


@dataclass(frozen=True)
class QuestionResult:
    question: Question
    randomization: Randomization
    mechanism: Mechanism
    n: int
    raw_counts: np.ndarray
    """Per option, the mechanism's raw statistic (see :func:`raw_counts`)."""
    unbiased: FrequencyEstimate | None
    consistent: FrequencyEstimate | None
    expected_half_width: float | None
    """Expected 95 % half-width at the current n (evenly spread answers); None before any report."""

    @property
    def raw_count_label(self) -> str:
        return str(RAW_COUNT_LABELS[self.mechanism.name])

    @property
    def enough(self) -> bool:
        """Whether the estimate means something: MIN_REPORTS reports, and error below an even share."""
        return (
            self.unbiased is not None
            and self.n >= MIN_REPORTS
            and self.expected_half_width is not None
            and self.expected_half_width <= 1 / self.mechanism.k
        )

    @property
    def reports_needed(self) -> int:
        """Reports needed for an expected half-width of one even share (1/k); error ~ 1/sqrt(n)."""
        target = 1 / self.mechanism.k
        at_one = expected_half_width(self.mechanism, 1)
        return int(np.ceil((at_one / target) ** 2))

    @property
    def adjustment_label(self) -> str:
        """The consistency adjustment chosen for this tally, by name."""
        method = self.consistent.method if self.consistent is not None else ""
        return str(ADJUSTMENT_LABELS.get(method, method))

    def estimate(self, kind: EstimateKind) -> FrequencyEstimate | None:
        return self.consistent if kind == "consistent" else self.unbiased


ADJUSTMENT_LABELS = {"norm-sub": _("Norm-Sub"), "clip": _("clipping and rescaling")}

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
}


def raw_counts(mechanism: Mechanism, counts: np.ndarray) -> np.ndarray:
    """The per-option number a reader can relate to the reports (see RAW_COUNT_LABELS).

    Unary encodings tally sampled and one-bits: the second half. Hadamard response tallies report
    indices: the reports in each option's half are summed from them.
    """
    if isinstance(mechanism, SampledUnaryEncoding):
        return counts[mechanism.k :]
    if isinstance(mechanism, HadamardResponse):
        return (counts @ mechanism.membership.T).astype(np.int64)
    return counts


def reporting_randomization(question: Question) -> tuple[Randomization, Tally] | None:
    """The randomization whose reports the results show: the newest that has any, else the newest.

    A question's randomization is frozen once it has reports, so at most one version has them.
    """
    tallies = sorted(
        Tally.objects.filter(randomization__question=question).select_related("randomization"),
        key=lambda t: (t.n > 0, t.randomization.version),
    )
    if not tallies:
        return None
    return tallies[-1].randomization, tallies[-1]


def question_result(question: Question) -> QuestionResult | None:
    found = reporting_randomization(question)
    if found is None:
        return None
    randomization, tally = found
    mechanism = randomization.build_mechanism()
    ldp_tally = tally.as_ldp()
    unbiased = mechanism.estimate(ldp_tally) if ldp_tally.n else None
    return QuestionResult(
        question=question,
        randomization=randomization,
        mechanism=mechanism,
        n=ldp_tally.n,
        raw_counts=raw_counts(mechanism, ldp_tally.counts),
        unbiased=unbiased,
        consistent=mechanism.consistent_estimate(ldp_tally, "auto") if unbiased is not None else None,
        expected_half_width=expected_half_width(mechanism, ldp_tally.n) if ldp_tally.n else None,
    )


def survey_results(survey: Survey) -> list[QuestionResult]:
    return [r for r in (question_result(q) for q in survey.questions.all()) if r is not None]


def tally_signature(survey: Survey) -> str:
    """A short string that changes whenever any of the survey's tallies does (for polling)."""
    rows = Tally.objects.filter(randomization__question__survey=survey).order_by("pk").values_list("pk", "n")
    return ".".join(f"{pk}-{n}" for pk, n in rows)
