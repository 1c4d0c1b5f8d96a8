"""Cross-tabulation of two choice questions on the results page, post hoc (:mod:`ldp.crosstab`).

Any two questions whose reports are choices (single choice, yes/no, a rating's shares, a number's
histogram, matrix items) can be crossed after the fact: each submission that answered both sent
one report of each, randomized independently, and ``ldp.crosstab.posthoc_estimate`` turns the table
T of the report pairs' tally counts into the joint distribution's unbiased estimate.

T is never computed in a request: the ``count_pairs`` job keeps every crossable pair's table,
each closed hour counted once plus the open hours (:mod:`surveys.results.pair_counts`), and a page
reads its O(cells) rows. A cross-tab costs nothing more in privacy: it post-processes reports
already sent.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, cast

from django.core.cache import cache

from ldp.crosstab import (
    MAX_CELLS,
    ConditionalShares,
    JointEstimate,
    PairTally,
    crosses_post_hoc,
    posthoc_estimate,
    posthoc_expected_half_width,
)
from ldp.mechanisms import Mechanism
from surveys.costs import respondents_for
from surveys.kinds import summary_of
from surveys.models import Question, Randomization
from surveys.results import pair_counts
from surveys.results.crosstab_tables import (  # noqa: F401  (the cross-tab view reads its tables here)
    cell_bands,
    cell_rows,
    conditional_rows,
    conditionals,
    marginal_rows,
)
from surveys.results.estimates import CACHE_SECONDS, ESTIMATES_VERSION, MIN_REPORTS, SurveyState, randomization_digest


def pair_table(first: Randomization, second: Randomization) -> PairTally:
    """ldp's PairTally (n and T = sum_i c1_i c2_i^T) as the ``count_pairs`` job last stored it: O(cells).

    Read where the results pages read their tallies (the replica, if any: :mod:`surveys.replica`).
    """
    sizes = (_mechanism(first).empty_tally().counts.size, _mechanism(second).empty_tally().counts.size)
    return pair_counts.read_pair_tally(first, second, sizes)


def _mechanism(randomization: Randomization) -> Mechanism:
    return cast(Mechanism, randomization.build_mechanism())


@dataclass(frozen=True)
class Crosstab:
    """Two questions crossed: their randomizations, the pair table, and the joint estimate."""

    first: Question
    second: Question
    first_randomization: Randomization
    second_randomization: Randomization
    tally: PairTally
    estimate: JointEstimate | None
    expected_half_width: float | None
    """Expected half-width of the widest 95 % cell band at evenly spread answers (None: no pairs)."""
    digest: str = ""
    """Names the two randomizations and their tallies: the cross-tab changes exactly when it does."""

    @property
    def n(self) -> int:
        return self.tally.n

    @property
    def cells(self) -> int:
        return self.first.k * self.second.k

    @property
    def enough(self) -> bool:
        """Readable, by the single-question cards' rule: enough pairs, and cells known within an even share."""
        return (
            self.estimate is not None
            and self.n >= MIN_REPORTS
            and self.expected_half_width is not None
            and self.expected_half_width <= 1 / self.cells
        )

    @property
    def reports_needed(self) -> int:
        """Pairs of reports needed for an expected half-width of one even cell share, 1 / (k1 k2)."""
        at_one = posthoc_expected_half_width(
            self._mechanism(self.first_randomization), self._mechanism(self.second_randomization), 1
        )
        return respondents_for(at_one, 1 / self.cells, 1)

    def conditional(self, given: str = "first") -> ConditionalShares | None:
        return self.estimate.conditional(given) if self.estimate is not None else None

    @staticmethod
    def _mechanism(randomization: Randomization) -> Mechanism:
        return _mechanism(randomization)


def crossable(state: SurveyState) -> dict[int, Randomization]:
    """Per question id, the randomization a cross-tab reads: its newest with reports, of a choice mechanism.

    A question whose reports are not choices over its options (a mean, free text) is left out, and
    so are one without reports and one whose mechanism cannot be crossed post hoc (a sketch's
    statistic is affine in its counts: :func:`ldp.crosstab.crosses_post_hoc`).
    """
    found = {}
    for question in state.questions:
        for randomization in state.randomizations.get(question.pk, []):
            if state.tallies[randomization.pk].n == 0:
                continue
            mechanism: Any = randomization.build_mechanism()
            choices = summary_of(randomization.mechanism).choice_reports
            if choices and mechanism.k == question.k and crosses_post_hoc(mechanism):
                found[question.pk] = randomization
            break
    return found


def choices(state: SurveyState) -> list[Question]:
    """The questions a cross-tab selector offers, in the survey's order: :func:`crossable`'s."""
    found = crossable(state)
    return [q for q in state.questions if q.pk in found]


class CrosstabError(ValueError):
    """Two questions that cannot be crossed (the message says why)."""


def read_crosstab(state: SurveyState, first: Question, second: Question) -> Crosstab:
    """The post-hoc cross-tab of two crossable questions from their stored pair counts; the estimate
    is computed once per pair table (cached by its digest). No report is read.
    """
    randomizations = crossable(state)
    if first.pk not in randomizations or second.pk not in randomizations:
        raise CrosstabError("both questions need choice reports")
    if first.pk == second.pk:
        raise CrosstabError("a question cannot be crossed with itself")
    if first.k * second.k > MAX_CELLS:
        raise CrosstabError("too many cells")
    r1, r2 = randomizations[first.pk], randomizations[second.pk]
    tally = pair_table(r1, r2)
    parts = [randomization_digest(r1), randomization_digest(r2), pair_counts.pair_digest(tally)]
    digest = hashlib.blake2b(":".join(parts).encode(), digest_size=12).hexdigest()
    key = f"murmur:crosstab:{ESTIMATES_VERSION}:{digest}"
    made = cache.get(key)
    if made is None:
        m1, m2 = _mechanism(r1), _mechanism(r2)
        estimate = posthoc_estimate(m1, m2, tally) if tally.n else None
        half_width = posthoc_expected_half_width(m1, m2, tally.n) if tally.n else None
        made = (estimate, half_width)
        cache.set(key, made, CACHE_SECONDS)
    estimate, half_width = made
    return Crosstab(first, second, r1, r2, tally, estimate, half_width, digest)
