"""Question sampling with fake data (RS+FD): ask each respondent m of q questions, fake the rest.

Each respondent's browser draws m of the survey's q questions uniformly (without replacement),
randomizes the true answers to those at epsilon' each, and sends for each of the other q - m the
report of a *fake* answer drawn uniformly from the question's options (Arcolezi et al. 2021's
RS+FD; for k-RR the fake report is itself uniform). The wire carries one report per question, so
nothing says which questions were sampled.

Privacy of the whole submission. P[body | x] = (1 / C(q, m)) sum_S prod_{j in S} P_j[y_j | x_j]
prod_{j not in S} F_j(y_j), with F_j the fake report's distribution, a mixture of the rows of P_j.
Every term changes by at most e^(m epsilon') between two respondents, so the submission is
(m epsilon')-LDP, and the bound is reached (:func:`worst_sampled_log_ratio` enumerates it): Murmur
states epsilon = m epsilon' for the whole submission, and gives each sampled question
epsilon' = epsilon / m (:func:`sampled_epsilon`). Arcolezi et al. (Theorem 1) amplify further,
epsilon' = ln(q (e^epsilon - 1) + 1) for m = 1; that bound holds for each question's report taken
alone, not for the tuple of reports of one respondent, whose ratio at that epsilon' is e^epsilon'
(the enumeration shows it), so Murmur does not use it.

Estimation. Each question is sampled by a share r = m / q of respondents; its standard unbiased
estimate over all n reports, g_hat, has E[g_hat] = r f + (1 - r) u with u the uniform shares, so

    f_hat = (g_hat - (1 - r) u) / r,     Cov(f_hat) = Cov(g_hat) / r^2

(unbiased; :func:`sampled_estimate`). Cov(g_hat) is the mechanism's covariance at the mixture
g = r f + (1 - r) u plus the variance of which input each respondent randomizes,
(diag(g) - E[w w^T]) / n for w = r e_x + (1 - r) u (:func:`sampled_covariance`).

Against splitting epsilon over all q questions (each at epsilon / q, every respondent), sampling
one question at the full epsilon wins whenever the mechanism's error falls faster than 1 / r^2 as
epsilon grows: at small epsilon a k-RR share's variance is about k / (n epsilon^2), so splitting
pays q^2 and sampling q (Wang et al. 2019, Arcolezi et al. 2021). ``python -m ldp.experiments
sampling`` prints the table (docs/experiments.md).

References
----------
1. H. H. Arcolezi, J.-F. Couchot, B. Al Bouna, X. Xiao. "Random Sampling Plus Fake Data:
   Multidimensional Frequency Estimates With Local Differential Privacy". CIKM 2021.
2. N. Wang, X. Xiao, Y. Yang, J. Zhao, S. C. Hui, H. Shin, J. Shin, G. Yu. "Collecting and
   Analyzing Multidimensional Data with Local Differential Privacy". ICDE 2019.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from ldp.advisor import Z_95
from ldp.estimates import FrequencyEstimate
from ldp.mechanisms import Mechanism, Tally
from ldp.simplex import project_onto_simplex


def check_sample(m: int, q: int) -> None:
    if not isinstance(q, int) or q < 1:
        raise ValueError(f"q must be a positive integer, got {q!r}")
    if not isinstance(m, int) or not 1 <= m <= q:
        raise ValueError(f"m must be an integer in [1, q] = [1, {q}], got {m!r}")


def sampled_epsilon(total: float, m: int, q: int) -> float:
    """Each sampled question's epsilon' when the whole submission may spend ``total``: total / m.

    >>> sampled_epsilon(2.0, 1, 5), sampled_epsilon(2.0, 2, 5)
    (2.0, 1.0)
    """
    check_sample(m, q)
    if not total > 0:
        raise ValueError(f"total must be positive, got {total!r}")
    return total / m


def submission_epsilon(epsilons: Sequence[float], pooled: Sequence[float], m: int) -> float:
    """The whole submission's epsilon: the questions asked of everyone (``epsilons``) add up, and of
    the ``pooled`` questions only the m really answered spend, at most the m largest (the fakes carry
    no data; module docstring).

    >>> submission_epsilon([0.5, 0.5], [1.0, 1.0, 1.0], 2)
    3.0
    """
    pooled = sorted(pooled, reverse=True)
    if pooled:
        check_sample(m, len(pooled))
    return float(sum(epsilons) + sum(pooled[:m]))


def expected_sampled_half_width(mechanism: Mechanism, n: int, rate: float) -> float:
    """The widest 95 % half-width of a sampled question's corrected shares at n respondents with evenly
    spread answers (the analytic :func:`sampled_covariance`); ``rate`` = 1 is the unsampled question's.

    >>> from ldp.mechanisms import make_mechanism
    >>> from ldp.advisor import expected_half_width
    >>> mech = make_mechanism("krr", k=2, epsilon=1.0)
    >>> round(expected_sampled_half_width(mech, 1000, 1.0), 4) == round(expected_half_width(mech, 1000), 4)
    True
    """
    if not 0 < rate <= 1:
        raise ValueError(f"rate must lie in (0, 1], got {rate!r}")
    uniform = np.full(mechanism.k, 1.0 / mechanism.k)
    variances = np.diag(sampled_covariance(mechanism, uniform, n, rate)) / rate**2
    return float(Z_95 * np.sqrt(np.max(variances)))


def paper_epsilon(total: float, q: int) -> float:
    """Arcolezi et al.'s amplified epsilon' for m = 1: ln(q (e^epsilon - 1) + 1) (module docstring)."""
    return math.log(q * math.expm1(total) + 1)


def worst_sampled_log_ratio(tables: Sequence[np.ndarray], m: int) -> float:
    """max over bodies and two respondents of ln(P[body | x] / P[body | x']), by enumeration, for
    questions with report tables ``tables[j][v, y]`` and uniform fakes.

    >>> from ldp.mechanisms import make_mechanism
    >>> t = [make_mechanism("krr", k=2, epsilon=1.0).report_probabilities()] * 3
    >>> round(worst_sampled_log_ratio(t, 1), 12)
    1.0
    """
    q = len(tables)
    check_sample(m, q)
    fakes = [np.full(t.shape[0], 1.0 / t.shape[0]) @ t for t in tables]
    subsets = list(itertools.combinations(range(q), m))
    bodies = []
    for answers in itertools.product(*[range(t.shape[0]) for t in tables]):
        body = np.zeros(int(np.prod([t.shape[1] for t in tables])))
        for subset in subsets:
            term = np.ones(1)
            for j, table in enumerate(tables):
                term = np.kron(term, table[answers[j]] if j in subset else fakes[j])
            body += term / len(subsets)
        bodies.append(body)
    logs = np.log(np.array(bodies))
    return float(np.max(logs.max(axis=0) - logs.min(axis=0)))


def sampled_covariance(mechanism: Mechanism, frequencies: np.ndarray, n: int, rate: float) -> np.ndarray:
    """Cov(g_hat) of a question sampled by a share ``rate`` of n respondents with answer shares f."""
    f = np.asarray(frequencies, dtype=float)
    k = f.size
    u = np.full(k, 1.0 / k)
    g = rate * f + (1 - rate) * u
    second = (
        rate**2 * np.diag(f) + rate * (1 - rate) * (np.outer(f, u) + np.outer(u, f)) + (1 - rate) ** 2 * np.outer(u, u)
    )
    return mechanism.covariance(g, n) + (np.diag(g) - second) / n


def sampled_estimate(mechanism: Mechanism, tally: Tally, m: int, q: int) -> FrequencyEstimate:
    """The unbiased shares of a question asked of a share m / q of respondents, the others sending
    fake reports (module docstring), with covariance at a consistent plug-in.

    >>> from ldp.mechanisms import make_mechanism
    >>> mech = make_mechanism("krr", k=4, epsilon=2.0)
    >>> rng = np.random.default_rng(3)
    >>> truth = rng.choice(4, size=50_000, p=[0.4, 0.3, 0.2, 0.1])
    >>> inputs = np.where(rng.random(50_000) < 0.2, truth, rng.integers(0, 4, size=50_000))
    >>> est = sampled_estimate(mech, mech.tally(mech.randomize(inputs, rng=rng)), 1, 5)
    >>> [round(float(x), 1) for x in est.proportions]
    [0.4, 0.3, 0.2, 0.1]
    """
    check_sample(m, q)
    rate = m / q
    overall = mechanism.estimate(tally)
    k = mechanism.k
    shares = (overall.proportions - (1 - rate) / k) / rate
    plug_in = project_onto_simplex(shares)
    return FrequencyEstimate(shares, sampled_covariance(mechanism, plug_in, tally.n, rate) / rate**2, tally.n)


def expected_mse(mechanism: Mechanism, frequencies: np.ndarray, n: int, rate: float = 1.0) -> float:
    """The expected mean squared error per option of the (sampled) estimate: trace(Cov) / k."""
    f = np.asarray(frequencies, dtype=float)
    return float(np.trace(sampled_covariance(mechanism, f, n, rate)) / rate**2 / f.size)
