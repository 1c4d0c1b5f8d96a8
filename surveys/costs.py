"""What a question's privacy choice costs, in numbers an organizer or respondent can read."""

from __future__ import annotations

from dataclasses import dataclass

from ldp.advisor import expected_half_width
from ldp.mechanisms import KRandomizedResponse, Mechanism
from ldp.privacy import posterior_bound

#: The prior in the plain-language statement "someone who thought there was a 10 % chance...".
STATEMENT_PRIOR = 0.10


@dataclass(frozen=True)
class QuestionCost:
    n: int
    k: int
    epsilon: float
    half_width: float
    """Half-width of the 95 % band of each option's share at n respondents (evenly spread answers)."""
    guess_probability: float
    """Chance that an observer of one report guesses the answer right (1/k by blind guessing)."""
    report_is_answer_probability: float | None
    """k-RR only: chance that the report *is* the true answer."""
    posterior: float
    """Most an observer's 10 % prior that the answer is X can rise to after one report."""

    @property
    def chance(self) -> float:
        return 1.0 / self.k

    @property
    def prior(self) -> float:
        return STATEMENT_PRIOR


def question_cost(mechanism: Mechanism, n: int) -> QuestionCost:
    return QuestionCost(
        n=n,
        k=mechanism.k,
        epsilon=mechanism.epsilon,
        half_width=expected_half_width(mechanism, n),
        guess_probability=mechanism.guess_probability(),
        report_is_answer_probability=mechanism.keep_probability if isinstance(mechanism, KRandomizedResponse) else None,
        posterior=float(posterior_bound(STATEMENT_PRIOR, mechanism.epsilon)),
    )
