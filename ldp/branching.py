"""Branching that leaks nothing: conditions, paths, the constant wire, and estimates among those asked.

A survey may show a question only when an earlier answer meets a *condition* ("show question 5
when question 3 is one of a, b"; "... when question 2 lies between 3 and 7"). The browser decides
on the true answers, so whether a question was asked depends on an answer. If the wire depended
on it too (a report for question 5 only when it was shown), the mere presence of the report
would tell the server the answer to question 3, outside any epsilon. Murmur never lets the wire
depend on the path:

* every submission carries exactly one report for every question of the survey;
* a question that was not shown, or that the respondent skipped, sends its mechanism's report of
  a *fill* answer drawn independently of every true answer (:data:`ldp.families.FILLS`): for the
  shares and mean families a *fake* answer drawn uniformly from the domain (a uniform option,
  a uniform value in [lo, hi]; the "fake data" of RS+FD, Arcolezi et al. 2021), for multi-select
  the empty set and for free text the empty string, which add 0 to every share and count;
* except that a choice question offering "Prefer not to say", shown and skipped, sends the report
  of that option (its last), exactly what choosing it sends: a fixed input, again independent of
  every true answer, so the bound below holds unchanged (``skips`` of :func:`respondent_inputs`).

Privacy of the whole submission. Question j's report is M_j applied to an input drawn from a
distribution w_j: a point mass on the true answer when it was asked and answered, the fill
distribution otherwise; the inputs of different questions are drawn independently given the true
answers, and each mechanism draws fresh randomness. So

    P[body = (y_1..y_q) | respondent] = prod_j sum_v w_j(v) P_j[y_j | v],

and each factor is a mixture of rows of P_j, whose ratio to any other mixture is at most
e^(epsilon_j). Hence any two respondents, whatever their answers, skips and paths, give body
distributions within a factor e^(sum_j epsilon_j): the survey's total epsilon, exactly the figure
the answer page and the ledger state (every question counts, as every question sends a report).
:func:`worst_body_log_ratio` checks this by enumeration for small surveys.

Estimates among those asked. For a question Q shown when the branching question B is in a set
S of options, the cross-tab of B and Q (:func:`ldp.crosstab.posthoc_estimate`) estimates
F[a, b] = P(B = a, Q = b) from every submission. For a in S the respondents were asked Q, so

    share asked       pi = sum_{a in S} sum_b F[a, b]
    among those asked c_b = sum_{a in S} F[a, b] / pi

(fill reports sit only in the rows a outside S and are never read; a skip of Q by someone asked
sits in a row of S: in "Prefer not to say" where Q offers it, which c then counts, or
spread evenly over Q's options as a fake where it does not). :func:`among_asked` gives
both with delta-method 95 % bands, the gradient of c_b in the summed cells g being (e_b - c)/pi.
A branching question must be answered (the browser asks for it), so that "B in S" is exactly
"asked Q".

References
----------
1. H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao. "Random Sampling Plus Fake Data:
   Multidimensional Frequency Estimates With Local Differential Privacy". CIKM 2021.
2. Seed documents in ../shared/seeds/: sequential composition of epsilon over reports.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from ldp.crosstab import JointEstimate
from ldp.estimates import Interval
from ldp.families import FILLS, Family, family_of

#: The condition operators: "in" (the answer's option index is one of ``values``) and "between"
#: (the answer's value lies in [low, high], both ends included).
OPERATORS = ("in", "between")
#: At most this many conditions per survey: the builder enumerates every path (2^conditions).
MAX_CONDITIONS = 12


@dataclass(frozen=True)
class Condition:
    """Show a question when question ``question`` was answered and its answer meets the operator."""

    question: int
    operator: str
    values: tuple[int, ...] = ()
    low: float = 0.0
    high: float = 0.0

    def holds(self, answer: Mapping[str, Any] | None) -> bool:
        """Whether the answer ({"index": i, "value": v}; None when skipped or not shown) meets it."""
        if answer is None:
            return False
        if self.operator == "in":
            return answer.get("index") in self.values
        value = answer.get("value")
        return value is not None and self.low <= float(value) <= self.high

    def as_json(self) -> dict[str, Any]:
        if self.operator == "in":
            return {"question": self.question, "in": list(self.values)}
        return {"question": self.question, "between": [self.low, self.high]}


def parse_condition(obj: Any) -> Condition:
    """A condition from its stored JSON ({"question": id, "in": [...]} or {"question": id,
    "between": [lo, hi]}); raise ValueError naming what is wrong."""
    if not isinstance(obj, dict) or len(obj) != 2 or "question" not in obj:
        raise ValueError(f"a condition is {{'question': id, 'in' or 'between': ...}}, got {obj!r}")
    question = obj["question"]
    if isinstance(question, bool) or not isinstance(question, int):
        raise ValueError(f"condition question must be an integer id, got {question!r}")
    if "in" in obj:
        values = obj["in"]
        if not isinstance(values, list) or not values or not all(type(v) is int and v >= 0 for v in values):
            raise ValueError(f"'in' must be a non-empty list of option indices, got {values!r}")
        return Condition(question, "in", tuple(sorted(set(values))))
    if "between" in obj:
        bounds = obj["between"]
        if (
            not isinstance(bounds, list)
            or len(bounds) != 2
            or not all(isinstance(b, int | float) and not isinstance(b, bool) and math.isfinite(b) for b in bounds)
            or bounds[0] > bounds[1]
        ):
            raise ValueError(f"'between' must be [low, high] with low <= high, got {bounds!r}")
        return Condition(question, "between", low=float(bounds[0]), high=float(bounds[1]))
    raise ValueError(f"a condition's operator must be one of {OPERATORS}, got {sorted(obj)!r}")


Answers = Mapping[int, Mapping[str, Any] | None]


def shown_questions(order: Sequence[int], conditions: Mapping[int, Condition], answers: Answers) -> list[int]:
    """The questions the respondent sees, in order: those without a condition, and those whose
    condition's question was itself shown and answered so that the condition holds."""
    shown: list[int] = []
    for question in order:
        condition = conditions.get(question)
        if condition is None or (condition.question in shown and condition.holds(answers.get(condition.question))):
            shown.append(question)
    return shown


@dataclass(frozen=True)
class Path:
    """One way through the survey: the questions shown, and which conditions hold on it."""

    shown: tuple[int, ...]
    holding: tuple[int, ...]
    """The questions whose condition holds (shown because of it)."""


def paths(order: Sequence[int], conditions: Mapping[int, Condition]) -> list[Path]:
    """Every distinct path, from each combination of conditions holding or not (the builder's preview).

    A condition can hold only when its question is shown; combinations giving the same shown
    questions are one path. The order follows the combinations' (none holding first).
    """
    targets = [q for q in order if q in conditions]
    if len(targets) > MAX_CONDITIONS:
        raise ValueError(f"at most {MAX_CONDITIONS} conditions, got {len(targets)}")
    found: dict[tuple[int, ...], Path] = {}
    for outcome in itertools.product((False, True), repeat=len(targets)):
        wanted = dict(zip(targets, outcome, strict=True))
        shown: list[int] = []
        for question in order:
            condition = conditions.get(question)
            if condition is None or (condition.question in shown and wanted[question]):
                shown.append(question)
        key = tuple(shown)
        if key not in found:
            found[key] = Path(key, tuple(q for q in targets if q in shown))
    return list(found.values())


def fill_kind(mechanism: str) -> str:
    """What a question randomized by ``mechanism`` sends when not asked or skipped:
    "fake" or "not-asked" (:data:`ldp.families.FILLS`)."""
    return FILLS[family_of(mechanism)]


def fill_weights(family: Family, k: int) -> np.ndarray:
    """The fill answer's distribution over a categorical question's k inputs (for enumeration):
    uniform for a fake, the point mass on input 0 for a "not-asked" family whose input 0 is its
    neutral answer (the empty set, coded 0, in a set mechanism's table)."""
    if FILLS[family] == "fake":
        return np.full(k, 1.0 / k)
    weights = np.zeros(k)
    weights[0] = 1.0
    return weights


def body_distribution(tables: Sequence[np.ndarray], inputs: Sequence[np.ndarray]) -> np.ndarray:
    """P[body] over every combination of the questions' reports (flattened, question 1 slowest).

    ``tables[j][v, y]`` is P[report y | input v] of question j's mechanism; ``inputs[j]`` the
    distribution of the input it randomizes (a point mass on the answer, or the fill's)."""
    body = np.ones(1)
    for table, weights in zip(tables, inputs, strict=True):
        body = np.kron(body, np.asarray(weights, dtype=float) @ np.asarray(table, dtype=float))
    return body


def respondent_inputs(
    order: Sequence[int],
    conditions: Mapping[int, Condition],
    answers: Sequence[int | None],
    fills: Sequence[np.ndarray],
    values: Sequence[Sequence[float]],
    skips: Sequence[int | None] | None = None,
) -> list[np.ndarray]:
    """The input distribution of each question for one respondent of a categorical survey.

    ``answers[j]``: the option index chosen (None: skipped); ``values[j][i]``: option i's value
    (a rating's points), for "between" conditions; ``skips[j]``: the option a shown and skipped
    question sends (its "Prefer not to say"; None or no ``skips``: its fill). A question shown and
    answered randomizes its answer; one shown and skipped its skip option if it has one; any other
    its fill."""
    given = {
        q: (None if a is None else {"index": a, "value": values[j][a]})
        for j, (q, a) in enumerate(zip(order, answers, strict=True))
    }
    shown = set(shown_questions(order, conditions, given))
    inputs = []
    for j, (question, answer) in enumerate(zip(order, answers, strict=True)):
        skip = None if skips is None else skips[j]
        if question in shown and (answer is not None or skip is not None):
            weights = np.zeros(len(fills[j]))
            weights[answer if answer is not None else skip] = 1.0
            inputs.append(weights)
        else:
            inputs.append(np.asarray(fills[j], dtype=float))
    return inputs


def worst_body_log_ratio(
    order: Sequence[int],
    conditions: Mapping[int, Condition],
    tables: Sequence[np.ndarray],
    fills: Sequence[np.ndarray],
    values: Sequence[Sequence[float]] | None = None,
    skips: Sequence[int | None] | None = None,
) -> float:
    """max over bodies and over every two respondents (every answer vector, every skip, hence every
    path) of ln(P[body | r] / P[body | r']), by enumeration: at most the sum of the epsilons.
    ``skips``: what a shown and skipped question sends (:func:`respondent_inputs`).

    >>> from ldp.mechanisms import make_mechanism
    >>> ms = [make_mechanism("krr", k=2, epsilon=1.0), make_mechanism("krr", k=3, epsilon=0.5)]
    >>> tables = [m.report_probabilities() for m in ms]
    >>> fills = [fill_weights("shares", 2), fill_weights("shares", 3)]
    >>> conditions = {2: Condition(1, "in", (1,))}
    >>> round(worst_body_log_ratio([1, 2], conditions, tables, fills), 12) <= 1.5
    True
    """
    k = [len(f) for f in fills]
    values = values or [list(range(size)) for size in k]
    bodies = np.array(
        [
            body_distribution(tables, respondent_inputs(order, conditions, answers, fills, values, skips))
            for answers in itertools.product(*[[*range(size), None] for size in k])
        ]
    )
    if np.any(bodies <= 0):
        return math.inf
    logs = np.log(bodies)
    return float(np.max(logs.max(axis=0) - logs.min(axis=0)))


@dataclass(frozen=True, eq=False)
class AmongAsked:
    """A branched question's shares among the respondents who were asked it, and the share asked.

    ``shares[b]`` (unbiased ratio estimate), ``bands`` their 95 % delta-method intervals clipped to
    [0, 1]; ``asked`` the share of all respondents who were asked, with ``asked_band``.
    """

    shares: np.ndarray
    standard_errors: np.ndarray
    bands: Interval
    asked: float
    asked_standard_error: float
    asked_band: tuple[float, float]
    n: int


def among_asked(joint: JointEstimate, rows: Sequence[int], level: float = 0.95) -> AmongAsked:
    """The second question's shares among those whose answer to the first is in ``rows``, from the
    cross-tab of the branching question (first) and the branched one (second): module docstring.

    >>> from ldp.crosstab import pair_tally, posthoc_estimate
    >>> from ldp.mechanisms import make_mechanism
    >>> b, q = make_mechanism("krr", k=2, epsilon=3.0), make_mechanism("krr", k=3, epsilon=3.0)
    >>> first = np.repeat([0, 1], 5000)
    >>> second = np.where(first == 1, np.tile([0, 0, 1, 2], 2500), np.tile([0, 1, 2], 3334)[:10000])
    >>> tally = pair_tally(b, q, b.randomize(first, rng=1), q.randomize(second, rng=2))
    >>> est = among_asked(posthoc_estimate(b, q, tally), [1])
    >>> [round(float(s), 1) for s in est.shares], round(est.asked, 1)
    ([0.5, 0.2, 0.3], 0.5)
    """
    k1, k2 = joint.shape
    chosen = sorted({int(r) for r in rows})
    if not chosen or chosen[0] < 0 or chosen[-1] >= k1:
        raise ValueError(f"rows must be option indices of the first question in [0, {k1}), got {list(rows)!r}")
    summing = np.zeros((k2, k1 * k2))
    for a in chosen:
        summing[:, a * k2 : (a + 1) * k2] = np.eye(k2)
    g = summing @ joint.cells.reshape(-1)
    cov = summing @ joint.covariance @ summing.T
    pi = float(g.sum())
    pi_se = math.sqrt(max(float(cov.sum()), 0.0))
    z = float(stats.norm.ppf(0.5 + level / 2))
    if pi <= 0:
        nan = np.full(k2, np.nan)
        return AmongAsked(nan, nan, Interval(nan, nan), pi, pi_se, (max(pi - z * pi_se, 0.0), pi + z * pi_se), joint.n)
    shares = g / pi
    gradient = (np.eye(k2) - shares[:, None]) / pi
    errors = np.sqrt(np.clip(np.einsum("bi,ij,bj->b", gradient, cov, gradient), 0.0, None))
    band = Interval(np.clip(shares - z * errors, 0.0, 1.0), np.clip(shares + z * errors, 0.0, 1.0))
    asked_band = (max(pi - z * pi_se, 0.0), min(pi + z * pi_se, 1.0))
    return AmongAsked(shares, errors, band, pi, pi_se, asked_band, joint.n)
