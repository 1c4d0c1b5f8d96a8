"""Choosing the consistent estimator per tally by cross-fitting: no assumption on the answers' shape.

Every consistent estimator wins on some answers and loses on others: empirical-Bayes shrinkage
(``"eb"``) halves the error on evenly spread answers and pulls a skewed tally's large shares toward
the bulk; clipping wins where noise swamps every share; Norm-Sub where one answer dominates; the
iterative Bayesian update (``"ibu"``) on skewed answers at large k. The rule that used to choose
(the earlier "auto") assumed a shape (evenly spread unless a chi-square test rejected it), and
lost on every skewed shape the test could not tell from even. This module instead *estimates each
candidate's error on this tally* from the tally alone, and picks the smallest:

1. **Split the tally in two** (:func:`split_tallies`). The tally is a sum over reports, so a random
   half of the reports has a tally that is a random "sub-tally" of it: for a tally of report counts
   (k-RR, Hadamard response: counts c_y of each possible report, summing to n) the counts of a
   uniformly random half of n_A reports are multivariate hypergeometric given c, exactly; for a
   tally of per-option support counts (subset selection, OLH: c_v of the n reports support option
   v) each option's count in the half is hypergeometric(c_v, n - c_v, n_A), exactly per option
   (its dependence across options, which the tally does not record, is not reproduced); for the
   unary encodings each bit's sampled and one counts likewise. The two halves A and B (B = the
   rest) are the tallies of two disjoint sets of respondents' reports, which the mechanism
   randomized independently, so the estimates from A and from B are independent given who is in
   which half (for the per-option splits: up to the cross-option dependence above, an O(1/k)
   correlation between A's count of one option and B's of another). A binomial thinning of each
   count (c_v -> Bin(c_v, 1/2)), the usual "data thinning" for Poisson counts, is *not* used:
   the counts here are binomial, not Poisson, and thinning them makes A_v and B_v negatively
   correlated (correlation -pi/(2 - pi) for an option supported by a share pi of reports: -1/3 for
   subset selection's typical pi = 1/2), which biases the score below toward noisy estimators.
   The split is seeded by the tally itself (:func:`tally_seed`), so the same tally always gets the
   same choice.
2. **Score each candidate against the other half** (cross-fitting; Stone 1974, Geisser 1975; for
   estimator selection in sequence models, e.g. Efron 2004): with g(A) a candidate's estimate from
   half A and u(B) the unbiased estimate from half B,

       E ||g(A) - u(B)||^2 = E ||g(A) - f||^2 + E ||u(B) - f||^2       (A, B independent; E u(B) = f)

   so the squared distance to the other half's unbiased estimate is the candidate's squared error
   at n_A reports plus a term that is the same for every candidate: comparing candidates by it is
   comparing their risks, whatever the answers are. It is averaged over both directions (A scored
   on B, B on A) and over ``splits`` independent splits, which lowers the noise of the choice
   (the halves overlap between splits; the differences between candidates, scored on the same
   halves, are paired).
3. **Apply the winner to the whole tally.** The risks are those of half-size tallies; where the
   best estimator changes with n, the choice is the one for n/2 (measured:
   docs/experiments/estimator-selection.md).

Two scores (``loss``). ``"l2"``: the squared distance above, an unbiased comparison of the
candidates' squared errors. ``"largest"`` (the default), for the largest error over the options
that the benchmarks report, which admits no unbiased estimate (the other half's noise does not
separate from the candidate's error inside a maximum): per option, the cross-fitted mean square
minus the other half's analytic variance (at the whole tally's Norm-Sub plug-in) estimates the
candidate's mean squared error m_v, and the score is E max_v |Z_v| for independent
Z_v ~ N(0, m_v) (:func:`expected_largest`). Measured on k = 20 and 64, neither score makes a
better default than "auto"'s rule: where "auto" loses on skewed answers the tally does not tell
skewed from even answers (docs/experiments/estimator-selection.md). Post-processing of the tally
only: no privacy cost.

References
----------
1. M. Stone. "Cross-validatory choice and assessment of statistical predictions." JRSS B 36, 1974.
2. B. Efron. "The estimation of prediction error: covariance penalties and cross-validation."
   JASA 99, 2004.
3. A. Neufeld, A. Dharamshi, L. Gao, D. Witten. "Data thinning for convolution-closed
   distributions." JMLR 25, 2024. (Thinning Poisson counts; why binomial counts need the
   hypergeometric split instead.)
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
from scipy import special

from ldp.consistency import CONSISTENCY_ADJUSTMENTS, empirical_bayes_shares
from ldp.ibu import SUPPORT_COUNT_MECHANISMS, support_bayesian_update
from ldp.mechanisms import HadamardResponse, KRandomizedResponse, Mechanism, Tally
from ldp.mechanisms.bitflip import SampledUnaryEncoding
from ldp.simplex import project_onto_simplex

__all__ = [
    "CANDIDATES",
    "SPLITS",
    "apply_estimator",
    "choose_estimators",
    "select",
    "cross_fit_risks",
    "split_tallies",
    "supports_selection",
    "tally_seed",
]

#: The estimators "auto" chooses among (where the mechanism's tally supports them).
CANDIDATES = ("norm-sub", "clip", "eb", "ibu")
#: Independent splits per tally, each scored in both directions.
SPLITS = 4
#: Mechanisms whose tally counts, per option, the reports that support it.
SUPPORT_TALLIES = ("subset", "olh")


def supports_selection(mechanism: Mechanism) -> bool:
    """Whether :func:`split_tallies` knows how to split this mechanism's tally."""
    return isinstance(mechanism, (KRandomizedResponse, HadamardResponse, SampledUnaryEncoding)) or (
        mechanism.name in SUPPORT_TALLIES
    )


def candidates(mechanism: Mechanism) -> tuple[str, ...]:
    """The candidates that apply: IBU needs per-option support counts (not Hadamard response)."""
    usable = [c for c in CANDIDATES if c != "ibu" or mechanism.name in SUPPORT_COUNT_MECHANISMS]
    if mechanism.k < 3:  # two options: one free share, nothing for empirical Bayes to pool
        usable.remove("eb")
    return tuple(usable)


def tally_seed(counts: np.ndarray, n: int) -> int:
    """A seed that is a function of the tally alone (so a tally always splits the same way)."""
    return zlib.crc32(np.ascontiguousarray(np.asarray(counts, dtype=np.int64)).tobytes() + int(n).to_bytes(8, "little"))


def split_tallies(
    mechanism: Mechanism, counts: np.ndarray, n: int, splits: int, rng: np.random.Generator
) -> tuple[np.ndarray, int, np.ndarray, int]:
    """``splits`` random halves of one tally's reports: (A's counts (splits, size), n_A, B's counts, n_B).

    Exact for report-count tallies (multivariate hypergeometric); per option (or per bit) exact
    for support-count and unary-encoding tallies. See the module docstring.
    """
    c = np.asarray(counts, dtype=np.int64)
    n_a = n // 2
    if isinstance(mechanism, (KRandomizedResponse, HadamardResponse)):
        a = np.asarray(rng.multivariate_hypergeometric(c, n_a, size=splits), dtype=np.int64)
    elif isinstance(mechanism, SampledUnaryEncoding):
        k = mechanism.k
        sampled, ones = c[:k], c[k:]
        sampled_a = (
            rng.hypergeometric(sampled, n - sampled, n_a, size=(splits, k))
            if n_a > 0
            else np.zeros((splits, k), dtype=np.int64)
        )
        ones_a = np.where(
            sampled_a > 0,
            rng.hypergeometric(
                np.broadcast_to(ones, (splits, k)),
                np.broadcast_to(sampled - ones, (splits, k)),
                np.maximum(sampled_a, 1),
            ),
            0,
        )
        a = np.concatenate([sampled_a, ones_a], axis=1)
    elif mechanism.name in SUPPORT_TALLIES:
        a = (
            rng.hypergeometric(np.broadcast_to(c, (splits, c.size)), n - c, n_a)
            if n_a > 0
            else np.zeros((splits, c.size), dtype=np.int64)
        )
    else:
        raise ValueError(f"{mechanism.name}'s tally cannot be split; supports_selection() says which can")
    a = np.asarray(a, dtype=np.int64)
    return a, n_a, c[None, :] - a, n - n_a


def apply_estimator(
    mechanism: Mechanism, counts: np.ndarray, n: int, name: str, unbiased: np.ndarray | None = None
) -> np.ndarray:
    """A stack of tallies' estimates by one candidate (rows), from their counts and unbiased estimates."""
    rows = np.atleast_2d(counts)
    if unbiased is None:
        unbiased = unbiased_rows(mechanism, rows, n)
    if name == "ibu":
        return support_bayesian_update(mechanism, rows)
    if name == "eb":
        return np.array([empirical_bayes_shares(mechanism.unit_variances, u, n) for u in unbiased])
    return CONSISTENCY_ADJUSTMENTS[name](unbiased)


def unbiased_rows(mechanism: Mechanism, rows: np.ndarray, n: int) -> np.ndarray:
    """A^-1 z_bar for a stack of tally counts from n reports each."""
    return mechanism.observed_mean(Tally(n, rows)) @ np.linalg.inv(mechanism.response_matrix).T


def cross_fit_risks(
    mechanism: Mechanism,
    counts: np.ndarray,
    n: int,
    *,
    names: Sequence[str] | None = None,
    splits: int = SPLITS,
    seed: int | None = None,
    loss: str = "largest",
) -> dict[str, np.ndarray]:
    """Each candidate's cross-fitted risk, per tally (rows of ``counts``).

    ``loss="l2"``: the mean over splits and both directions of ||g_j(A) - u(B)||^2 (module
    docstring, step 2; the candidates' squared errors up to a common constant). ``"largest"``: the
    expected largest error of independent normals with the per-option mean squares minus the
    other half's variance (module docstring).
    ``seed`` (default: each tally's own, :func:`tally_seed`) seeds the splits.

    >>> from ldp import make_mechanism
    >>> m = make_mechanism("krr", k=4, epsilon=2.0)
    >>> risks = cross_fit_risks(m, np.array([700, 100, 100, 100]), 1000)
    >>> sorted(risks) == sorted(candidates(m))
    True
    """
    rows = np.atleast_2d(np.asarray(counts, dtype=np.int64))
    names = tuple(names or candidates(mechanism))
    halves_a, halves_b = [], []
    n_a = n_b = 0
    for row in rows:
        rng = np.random.default_rng(tally_seed(row, n) if seed is None else [seed, *row.tolist()])
        a, n_a, b, n_b = split_tallies(mechanism, row, n, splits, rng)
        halves_a.append(a)
        halves_b.append(b)
    a, b = np.concatenate(halves_a), np.concatenate(halves_b)
    u_a, u_b = unbiased_rows(mechanism, a, n_a), unbiased_rows(mechanism, b, n_b)
    # Variance of one half's unbiased estimate, per option, at the whole tally's Norm-Sub plug-in.
    plug_in = project_onto_simplex(unbiased_rows(mechanism, rows, n))
    variance = np.array([mechanism.report_variances(f) for f in plug_in]) * (1 / n_a + 1 / n_b) / 2
    risks = {}
    for name in names:
        g_a = apply_estimator(mechanism, a, n_a, name, u_a)
        g_b = apply_estimator(mechanism, b, n_b, name, u_b)
        squares = ((g_a - u_b) ** 2 + (g_b - u_a) ** 2) / 2
        squares = squares.reshape(rows.shape[0], splits, -1).mean(axis=1)
        if loss == "l2":
            risks[name] = squares.sum(axis=1)
        else:
            risks[name] = expected_largest(np.maximum(squares - variance, 0.0))
    return risks


def expected_largest(mean_squares: np.ndarray, points: int = 256) -> np.ndarray:
    """E max_v |Z_v| for independent Z_v ~ N(0, m_v), per row of m: int_0^inf 1 - prod_v erf(t / sqrt(2 m_v)) dt."""
    m = np.atleast_2d(mean_squares)
    top = np.sqrt(m.max(axis=1, keepdims=True)) * 7 + 1e-12
    t = np.linspace(0.0, 1.0, points)[None, :, None] * top[:, :, None]  # (rows, points, 1)
    sd = np.sqrt(m)[:, None, :]
    inside = special.erf(t / np.where(sd > 0, sd * np.sqrt(2), 1.0))
    inside = np.where(sd > 0, inside, 1.0)
    tail = 1.0 - np.prod(inside, axis=2)
    return np.trapezoid(tail, t[:, :, 0], axis=1)


def choose_estimators(mechanism: Mechanism, counts: np.ndarray, n: int, **kwargs: object) -> list[str]:
    """Per tally (rows of ``counts``), the candidate with the smallest cross-fitted risk.

    Ties go to the earlier candidate in :data:`CANDIDATES`.
    """
    risks = cross_fit_risks(mechanism, counts, n, **kwargs)  # type: ignore[arg-type]
    names = list(risks)
    table = np.stack([risks[name] for name in names], axis=1)
    return [names[i] for i in np.argmin(table, axis=1)]


def select(mechanism: Mechanism, counts: np.ndarray, n: int) -> np.ndarray:
    """The ``"cross-fit"`` estimate of each tally (rows): its chosen candidate applied to the whole tally.

    Mechanisms whose tally cannot be split (:func:`supports_selection`), and tallies of fewer than
    four reports, get Norm-Sub.
    """
    rows = np.atleast_2d(np.asarray(counts))
    unbiased = unbiased_rows(mechanism, rows, n)
    if not supports_selection(mechanism) or n < 4:
        return CONSISTENCY_ADJUSTMENTS["norm-sub"](unbiased)
    chosen = choose_estimators(mechanism, rows, n)
    result = np.empty_like(unbiased)
    for name in set(chosen):
        which = np.array([c == name for c in chosen])
        result[which] = apply_estimator(mechanism, rows[which], n, name, unbiased[which])
    return result
