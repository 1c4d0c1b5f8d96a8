"""What a question's privacy choice costs, in numbers an organizer or respondent can read."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ldp.advisor import expected_half_width
from ldp.mechanisms import KRandomizedResponse, Mechanism
from ldp.privacy import posterior_bound

#: The prior in the plain-language statement "someone who thought there was a 10 % chance...".
STATEMENT_PRIOR = 0.10


@dataclass(frozen=True)
class QuestionCost:
    """A mechanism's costs at n respondents; each figure is computed when first read.

    The answer page shows only the privacy figures, so it never pays for the variance behind
    ``half_width``.
    """

    mechanism: Mechanism
    n: int

    @property
    def k(self) -> int:
        return self.mechanism.k

    @property
    def epsilon(self) -> float:
        return self.mechanism.epsilon

    @cached_property
    def half_width(self) -> float:
        """Half-width of the 95 % band of each option's share at n respondents (evenly spread answers)."""
        return expected_half_width(self.mechanism, self.n)

    @cached_property
    def guess_probability(self) -> float:
        """Chance that an observer of one report guesses the answer right (1/k by blind guessing)."""
        return self.mechanism.guess_probability()

    @property
    def report_is_answer_probability(self) -> float | None:
        """k-RR only: chance that the report *is* the true answer."""
        mechanism = self.mechanism
        return mechanism.keep_probability if isinstance(mechanism, KRandomizedResponse) else None

    @property
    def posterior(self) -> float:
        """Most an observer's 10 % prior that the answer is X can rise to after one report."""
        return float(posterior_bound(STATEMENT_PRIOR, self.epsilon))

    @property
    def chance(self) -> float:
        return 1.0 / self.k

    @property
    def prior(self) -> float:
        return STATEMENT_PRIOR
