"""Manipulation detection and robust estimates for frequency questions.

Fake reports (Cao, Jia, Gong 2021) are reports that did not come from the mechanism applied to
some respondent's true answer. This module tests a tally for them and, when the tests reject,
estimates how many there are, which options they favor, and what the genuine reports say.

**Model.** n reports, a share beta of them fake. In the estimate's space the unbiased estimate is
a mixture (Sun et al. 2024, section IV):

    f_hat = (1 - beta) f + beta phi + noise,   f on the probability simplex,

where phi = A^-1 m is the "frequency" the fakes' mean statistic m yields. An attack that favors a
set T of options gives every other option the same background value phi_v = c (it names the
other options uniformly or not at all), and c is never below the *floor* L: the expected
contribution to option v of a report that does not support v, the rest of it drawn like an honest
report (:func:`support_floor`; e.g. k-RR: L = -q / (p - q)).

**Tests** (each has level alpha under every genuine f, asymptotically; combined by Bonferroni so
that the false-alarm rate stays at most alpha):

1. *Weight test* (unary encodings, dBitFlip, CMS): the number of 1 bits of one honest report has
   the same distribution whatever the answer (:func:`~ldp.report_weights.weight_distribution`), so
   the count of each weight in the histogram (:func:`~ldp.report_weights.weight_profile`, kept as
   extra tally cells by the survey app) is exactly binomial; the most over-filled weight's exact
   binomial tail, Bonferroni over the weights (:func:`~ldp.weight_tests.weight_excess_test`). (It used to be
   Pearson's chi-square, :func:`~ldp.weight_tests.weight_test`, which spreads its power over every weight.)
1b. *Bit-contrast test* (unary encodings, dBitFlip): given its weight, an honest report's bits follow
   a law affine in the same f for every weight, so each weight row of the bits-by-weight table
   estimates f independently; the largest one-sided excess of one row's estimate of one option over
   the other rows' pooled one, Bonferroni over rows and options (:func:`~ldp.weight_tests.bit_contrast_test`). Fakes
   crafted on one weight with the target's bit set (every attack of ref. 1) show here even when padded
   to the honest mean weight.
2. *Below-zero test* (every mechanism): for each option, H0: f_v >= 0. Under f_v = 0,
   Var(f_hat_v) = sum_{t != v} f_t V[v, t] / n <= max_{t != v} V[v, t] / n (V the mechanism's
   ``unit_variances``; the covariance is affine in f), so z_v = f_hat_v / s_v with that worst-case
   s_v gives p_v = Phi(z_v); over the k options, Bonferroni: min(1, k min_v p_v).
3. *Sum test* (mechanisms whose estimate does not sum to 1 by construction: unary encodings, OLH,
   CMS, Hadamard): E[1^T f_hat] = 1 for every genuine f, Var(1^T f_hat) <= max_t 1^T U_t 1 / n
   (U_t the per-answer covariance of one report), a two-sided z test.

**Fake share.** The smallest share the estimate requires: f_v >= 0 and phi_v >= L give
f_hat_v >= beta L, so beta_floor = max_v f_hat_v / L (exact when some option has no genuine
respondent and the fakes support it no more than an honest report that does not name it). For
weighted reports, fakes crowd a few weights S (an attacker crafts one pattern; S is the most
over-represented weight and any other more than EXCESS_Z standard deviations above its expectation,
:func:`fake_weights`): the other cells hold only genuine reports, (n - h_S) = (1 - beta) n (1 - pi_S),
so beta_weight = 1 - (n - h_S) / (n (1 - pi_S)) (its binomial standard error gives an interval).
The estimate is the larger of the two; its 95 % interval is the chosen estimator's +/- 1.96
standard errors, clipped to [0, 1].

**Recovery.** For unary encodings and dBitFlip whose fakes were found by their weight (all in S,
as every attack of ref. 1 crafts one pattern), the other weights hold genuine reports only:
:func:`clean_estimate` estimates f from them, with the exact law of (weight, bit) of an honest
report (:func:`~ldp.report_weights.weight_bit_law`), and :func:`favored_buckets` reads the options
the fakes favor from the rows S of the bits-by-weight table (those whose bit at least half of the
fakes set). This assumes nothing about which options the fakes favor.
dBitFlip with d = 1 whose fakes fill weight 1 has no one-bits outside it: the weight-0 reports'
sampled buckets (from the tally) give the estimate instead (:func:`zero_bit_estimate`).

Otherwise (k-RR, subset selection, OLH; our derivation in the spirit of LDPRecover's constraint
inference, ref. 2): a fake that supports one favored option and is otherwise drawn like an honest
report gives every other option the background c and sums to Phi over all options
(:func:`fake_model`). Then g = (f_hat - beta c) / (1 - beta) = f + beta (phi - c) / (1 - beta)
exceeds f only on the favored options, by R = beta (Phi - k c) / (1 - beta) in total (a constant
of the model, not the noisy sum(g) - 1). Fakes concentrate on few options (ref. 1: one target, or
a handful), so R is removed from the fewest options that can hold it: the top m of g, m smallest
with their sum at least R, leveled down to a common value (:func:`remove_favored`). Fakes spread
evenly over the options break this assumption (and then the recovery takes mass from the most
popular options); for these mechanisms such fakes are indistinguishable from honest reports of
random answers and are not detected anyway.

Either result is projected onto the simplex (Norm-Sub). Without significance the recovered
estimate is the plain projection.

**What the page may show.** :data:`CAPABILITIES` (:func:`capability`) records, per mechanism, how often
Cao et al.'s maximal-gain attack was flagged and whether the recovered estimate came closer to the
truth, as measured by ``python -m ldp.experiments poisoning`` (docs/integrity.md): dBitFlip, OUE and
SUE recover; k-RR and subset selection cannot even detect it (a fake report of theirs is one an honest
respondent could send, and the poisoned tally is the honest tally of another population); OLH detects
it rarely and does not recover. The results page shows a recovered estimate only where it recovers.

References
----------
1. X. Cao, J. Jia, N. Z. Gong. "Data poisoning attacks to local differential privacy protocols."
   USENIX Security 2021.
2. X. Sun, Q. Ye, H. Hu, J. Duan, T. Wo, J. Xu, R. Yang. "LDPRecover: recovering frequencies from
   poisoning attacks against local differential privacy." ICDE 2024.
3. K. Pearson. "On the criterion that a given system of deviations ... ." Phil. Mag. 50, 1900.

>>> import numpy as np
>>> from ldp.mechanisms import make_mechanism
>>> m = make_mechanism("oue", k=4, epsilon=1.0)
>>> honest = m.randomize(np.repeat(np.arange(4), 500), rng=1)
>>> assess(m, m.tally(honest), weight_profile(m, honest)).significant
False
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from scipy import stats

from ldp.mechanisms.base import MIXTURE_LIMIT, Mechanism, Tally
from ldp.mechanisms.bitflip import SampledUnaryEncoding
from ldp.mechanisms.krr import KRandomizedResponse
from ldp.mechanisms.local_hashing import OptimalLocalHashing
from ldp.mechanisms.subset import SubsetSelection
from ldp.mechanisms.symmetric import symmetric_inverse
from ldp.report_weights import (
    empty_profile,
    report_weights,
    weight_bit_law,
    weight_distribution,
    weight_profile,
)
from ldp.simplex import project_onto_simplex
from ldp.weight_tests import bit_contrast_test, weight_excess_test

# report_weights, weight_distribution and weight_profile (ldp.report_weights) stay part of this
# module's API: the survey app keeps weight profiles through it.
__all__ = [
    "Capability",
    "IntegrityResult",
    "assess",
    "capability",
    "report_weights",
    "support_floor",
    "weight_distribution",
    "weight_profile",
]

#: Level of the combined test: the false-alarm rate on honest data is at most this.
ALPHA = 0.05
#: A recovered estimate is shown only where, under the maximal-gain attack, it was measured within this
#: (3 points) of the truth on the attack's target (ldp.experiments.poisoning.recovery_verdicts).
RECOVERY_TOLERANCE = 0.03
#: Largest fake share reported (the estimate's algebra divides by 1 - beta).
MAX_SHARE = 0.95


@dataclass(frozen=True)
class Capability:
    """What the check can do against Cao et al.'s maximal-gain attack with one mechanism, as measured.

    ``detection`` pairs each measured share of fake reports with the share of surveys flagged
    (k = 5, epsilon = 1, 2000 genuine respondents; ``python -m ldp.experiments poisoning``);
    ``recovers`` says whether the recovered estimate, in the surveys flagged, was within
    RECOVERY_TOLERANCE of the truth on the attack's target and closer than the plain estimate at every
    measured share (:func:`ldp.experiments.poisoning.recovery_verdicts`). Only then does the results
    page show it.
    """

    recovers: bool
    detection: tuple[tuple[float, float], ...] = ()

    @property
    def detects(self) -> bool:
        """Whether the largest measured attack was flagged in at least half of the surveys."""
        return bool(self.detection) and max(self.detection)[1] >= 0.5


#: Measured by ``python -m ldp.experiments poisoning`` (ldp.experiments.poisoning.run_automatic, seed 26;
#: 500 attacked surveys per share, 1000 honest ones): every mechanism "Automatic" can pick for a choice
#: question (k-RR, subset selection, dBitFlip) and OUE, SUE, OLH. A mechanism not listed (Hadamard
#: response, CMS, HCMS, the randomized-response designs) was not measured and gets no recovered estimate.
#: tests/ldp/test_poisoning.py re-derives the verdicts from the experiment.
CAPABILITIES: dict[str, Capability] = {
    "krr": Capability(False, ((0.05, 0.0), (0.10, 0.0))),
    "subset": Capability(False, ((0.05, 0.0), (0.10, 0.0))),
    "dbitflip": Capability(True, ((0.05, 0.842), (0.10, 1.0))),  # d = 5; d = 1: 0.974 and 1.0
    "oue": Capability(True, ((0.05, 1.0), (0.10, 1.0))),
    "sue": Capability(True, ((0.05, 0.85), (0.10, 1.0))),
    "olh": Capability(False, ((0.05, 0.086), (0.10, 0.348))),
}


def capability(mechanism: Mechanism) -> Capability:
    """The measured :class:`Capability` of ``mechanism``'s kind; unmeasured: no detection, no recovery.

    >>> capability(KRandomizedResponse(k=3, epsilon=1.0)).recovers
    False
    """
    return CAPABILITIES.get(mechanism.name, Capability(False))


def zero_bit_case(mechanism: SampledUnaryEncoding, mask: np.ndarray) -> bool:
    """dBitFlip with d = 1 whose fakes crowd weight 1: :func:`zero_bit_estimate` recovers from weight 0."""
    return mechanism.d == 1 and np.asarray(mask, dtype=bool).tolist() == [False, True]


def kept_weights_inform(mechanism: SampledUnaryEncoding, mask: np.ndarray) -> bool:
    """Whether the weights outside ``mask`` tell the answers apart: alpha - gamma over them is not ~0.

    :func:`clean_estimate` divides by alpha - gamma summed over the kept weights. Some weights carry
    no information: with OUE and k = 2 a report of weight 0 or 2 is as likely whatever the answer
    (alpha_2 = gamma_2 = p1 p0), so when the fakes crowd weight 1 nothing is left to recover from.
    Kept weights holding under a millionth of the whole contrast (d / k)(p1 - p0) count as none.

    >>> from ldp.mechanisms.bitflip import OptimizedUnaryEncoding
    >>> oue = OptimizedUnaryEncoding(k=2, epsilon=1.0)
    >>> kept_weights_inform(oue, np.array([False, True, False]))
    False
    >>> kept_weights_inform(oue, np.array([True, False, True]))
    True
    """
    alpha_w, gamma_w = weight_bit_law(mechanism)
    keep = ~np.asarray(mask, dtype=bool)
    whole = alpha_w.sum() - gamma_w.sum()
    return bool(alpha_w[keep].sum() - gamma_w[keep].sum() > 1e-6 * whole)


def clean_estimate(
    mechanism: SampledUnaryEncoding, profile: np.ndarray, excluded: np.ndarray
) -> tuple[np.ndarray, float]:
    """Frequencies from the reports whose weight is not in the mask ``excluded``, and their number.

    If every fake has a weight in S, the other weights hold genuine reports only: n_g (1 - pi_S)
    of them, and O_v = sum over w not in S of the reports of weight w with bit v set has mean
    n_g (f_v alpha + (1 - f_v) gamma) with alpha, gamma the sums of :func:`weight_bit_law` over
    w not in S. So n_g_hat = (n - h_S) / (1 - pi_S) and f_v = (O_v / n_g_hat - gamma) / (alpha - gamma),
    whatever the fakes favor.
    """
    law = weight_distribution(mechanism)
    assert law is not None  # every unary encoding has weights
    alpha_w, gamma_w = weight_bit_law(mechanism)
    keep = ~excluded
    genuine = profile[keep, 0].sum() / law[keep].sum()
    alpha, gamma = alpha_w[keep].sum(), gamma_w[keep].sum()
    ones = profile[keep, 1:].sum(axis=0)
    return (ones / genuine - gamma) / (alpha - gamma), float(genuine)


def zero_bit_estimate(mechanism: SampledUnaryEncoding, tally: Tally, profile: np.ndarray) -> tuple[np.ndarray, float]:
    """dBitFlip with d = 1 when the fakes crowd weight 1: frequencies from the weight-0 reports alone.

    A d = 1 report samples one bucket and sends its bit, so the weight-0 reports that sampled bucket v
    number z_v = sampled_v - (weight-1 reports with bit v set) (both in the tally). From n_g genuine
    reports, E[z_v] = n_g (f_v (1 - p1) + (1 - f_v)(1 - p0)) / k, with n_g = h_0 / pi_0:
    f_v = (k z_v / n_g - (1 - p0)) / (p0 - p1). The weight-1 reports, where the fakes are, are not read.
    """
    law = weight_distribution(mechanism)
    assert law is not None
    k, p1, p0 = mechanism.k, mechanism.true_bit_probability, mechanism.other_bit_probability
    zeros = tally.counts[:k] - profile[1, 1:]
    genuine = profile[0, 0] / law[0]
    return (k * zeros / max(genuine, 1.0) - (1 - p0)) / (p0 - p1), float(genuine)


def clean_errors(
    mechanism: SampledUnaryEncoding, excluded: np.ndarray, shares: np.ndarray, genuine: float
) -> np.ndarray:
    """Standard errors of :func:`clean_estimate`: O_v counts n_g reports' indicators of mean
    P_v = f_v alpha + (1 - f_v) gamma, so SE_v ~ sqrt(P_v (1 - P_v) / n_g) / (alpha - gamma)
    (n_g_hat taken as known; at most the binomial variance for a mixed population). Conservative:
    OUE, k = 4, eps = 1, 1500 genuine and 300 maximal-gain fakes, 300 runs: 99 % of the +/- 1.96 SE
    intervals of the recovered estimate held the truth."""
    alpha_w, gamma_w = weight_bit_law(mechanism)
    alpha, gamma = alpha_w[~excluded].sum(), gamma_w[~excluded].sum()
    mean = shares * alpha + (1 - shares) * gamma
    return np.sqrt(mean * (1 - mean) / max(genuine, 1.0)) / (alpha - gamma)


def fake_model(mechanism: Mechanism, weight: int = 1) -> tuple[float, float] | None:
    """(c, Phi) of a fake report that supports one option and is otherwise drawn like an honest one.

    c is the expected unbiased estimate (A^-1 z)_v it yields at an option v it does not support (the
    *background*), Phi the expected sum over all options of its estimate. With A = (p - q) I + q 11^T
    and A^-1 = a I + b 11^T (:func:`~ldp.mechanisms.symmetric.symmetric_inverse`), a statistic z yields
    a z_v + b sum(z) at v and (a + k b) sum(z) in all:

    - k-RR: z names the option: c = b = -q / (p - q), Phi = 1;
    - subset selection: a set of omega holding the option: c = b omega, Phi = (a + k b) omega = 1;
    - OLH: a random hash and the option's hash value; every other option collides with probability
      c2: c = a c2 + b (1 + (k - 1) c2), Phi = (a + k b)(1 + (k - 1) c2);
    - unary encodings and dBitFlip (estimate k / d (bit - p0 sampled) / (p1 - p0), A = I): the
      option's bucket sampled with its bit set, d - 1 other buckets sampled at random and ``weight``
      - 1 of their bits set at random (Cao et al.'s padding; ``weight`` 1 sets none), so another
      bucket has E[bit] = (weight - 1) / (k - 1), E[sampled] = (d - 1) / (k - 1):
      c = k ((weight - 1) - p0 (d - 1)) / (d (k - 1)(p1 - p0)), Phi = k (weight - p0 d) / (d (p1 - p0)).

    Other mechanisms: None (the tests still run; no fake share from the floor, no recovery).

    >>> fake_model(KRandomizedResponse(k=3, epsilon=math.log(2)))
    (-1.0, 1.0)
    """
    k = mechanism.k
    named: float  # options a report names: the same number for every report, or its mean (OLH)
    if isinstance(mechanism, SampledUnaryEncoding):
        d, p1, p0 = mechanism.d, mechanism.true_bit_probability, mechanism.other_bit_probability
        background = k * ((weight - 1) - p0 * (d - 1)) / (d * (k - 1) * (p1 - p0))
        return background, k * (weight - p0 * d) / (d * (p1 - p0))
    if isinstance(mechanism, KRandomizedResponse):
        (a, b), named, collision = symmetric_inverse(mechanism.keep_probability, mechanism.other_probability, k), 1, 0.0
    elif isinstance(mechanism, SubsetSelection):
        a, b = symmetric_inverse(mechanism.in_probability, mechanism._other_probability, k)
        named, collision = mechanism.omega, 0.0
    elif isinstance(mechanism, OptimalLocalHashing):
        a, b = symmetric_inverse(mechanism.keep_probability, mechanism._off_diagonal, k)
        collision, _ = mechanism._collisions
        named = 1 + (k - 1) * collision
    else:
        return None
    return a * collision + b * named, (a + k * b) * named


def support_floor(mechanism: Mechanism) -> float | None:
    """L, the background c of :func:`fake_model` for a fake that sets no bit beyond its option's."""
    model = fake_model(mechanism)
    return None if model is None else model[0]


class ShareInterval(NamedTuple):
    """Lower and upper ends of a 95 % interval for the fakes' share, within [0, 1]."""

    low: float
    high: float


@dataclass(frozen=True, eq=False)
class IntegrityResult:
    """What :func:`assess` finds in one tally.

    ``p_values`` maps each test run ("weights", "below_zero", "sum") to its p-value; ``p_value``
    is their Bonferroni combination and ``significant`` whether it is below ``alpha``.
    ``fake_share`` (with ``fake_share_interval``) and ``favored`` (option indices) describe the
    fakes; ``plain`` is the Norm-Sub projection of the unbiased estimate and ``recovered`` the
    estimate with the fakes removed (equal to ``plain`` unless significant).
    """

    n: int
    p_values: dict[str, float]
    p_value: float
    significant: bool
    fake_share: float
    fake_share_interval: ShareInterval
    favored: tuple[int, ...]
    plain: np.ndarray
    recovered: np.ndarray
    recovered_errors: np.ndarray | None = None
    """Approximate standard errors of ``recovered`` (None when it is the plain projection)."""
    alpha: float = ALPHA
    weight_reports: int = 0
    """Reports in the weight histogram (reports stored before it was kept are not in it)."""
    recovery: str = ""
    """How ``recovered`` was made: "weights" (from the reports outside the fakes' weights),
    "concentrated" (fakes assumed to favor few options), or "" (not recovered)."""
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def recovery_shift(self) -> np.ndarray:
        """recovered - plain, per option."""
        return self.recovered - self.plain


def zero_share_errors(mechanism: Mechanism, n: int) -> np.ndarray:
    """s_v: worst-case standard error of f_hat_v over genuine populations with f_v = 0."""
    variances = np.array(mechanism.unit_variances, dtype=float, copy=True)
    np.fill_diagonal(variances, -np.inf)
    return np.sqrt(np.maximum(variances.max(axis=1), 0.0) / n)


def sum_error(mechanism: Mechanism, n: int) -> float | None:
    """Worst-case standard error of sum(f_hat) over the simplex; None if the sum is fixed at 1 or k is large."""
    if mechanism.k > MIXTURE_LIMIT:
        return None
    per_answer = mechanism.unit_covariances.sum(axis=(1, 2))
    worst = float(per_answer.max())
    return None if worst < 1e-12 else math.sqrt(worst / n)


#: A weight cell more than this many standard deviations above its expectation also holds fakes.
EXCESS_Z = 3.0


def fake_weights(distribution: np.ndarray, histogram: np.ndarray) -> np.ndarray:
    """Mask of the weights S taken to hold fakes (an attack crafts one pattern; a fake that samples
    buckets at random, as in dBitFlip, may land on two).

    S starts with the most over-represented weight, by (h_w - n pi_w) / sqrt(n pi_w); then, with
    n_g = (n - h_S) / (1 - pi_S) the genuine reports the other cells imply, any weight with
    (h_w - n_g pi_w) / sqrt(n_g pi_w) > EXCESS_Z joins S, until none does.
    """
    total = float(histogram.sum())
    mask = np.zeros(histogram.size, dtype=bool)
    genuine = total
    while True:
        expected = genuine * distribution
        standardized = np.where(mask, -np.inf, (histogram - expected) / np.sqrt(np.maximum(expected, 1e-12)))
        w = int(np.argmax(standardized))
        if mask.any() and not standardized[w] > EXCESS_Z or mask.all():
            return mask
        mask[w] = True
        if mask.all():
            return mask
        genuine = (total - histogram[mask].sum()) / (1 - distribution[mask].sum())


def excess_weight_share(distribution: np.ndarray, histogram: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """(beta_weight, its standard error): fakes only in the masked weights S.

    The other weights hold (n - h_S) = (1 - beta) n (1 - pi_S) genuine reports, so
    beta = 1 - (n - h_S) / (n (1 - pi_S)), with the binomial standard error of (n - h_S) / n.
    """
    total = int(histogram.sum())
    rest = (total - histogram[mask].sum()) / total
    outside = 1 - distribution[mask].sum()
    return float(1 - rest / outside), float(math.sqrt(rest * (1 - rest) / total) / outside)


def favored_buckets(
    mechanism: SampledUnaryEncoding, profile: np.ndarray, mask: np.ndarray, shares: np.ndarray, genuine: float
) -> tuple[int, ...]:
    """Buckets whose bit at least half of the fakes set, read from the fakes' weight rows S.

    Those rows hold sum over S of (h_w - n_g pi_w) fakes; bucket v's ones there exceed the genuine
    n_g sum over S of (f_v alpha_w + (1 - f_v) gamma_w) by the fakes that set it.
    """
    law = weight_distribution(mechanism)
    assert law is not None  # every unary encoding has weights
    alpha, gamma = weight_bit_law(mechanism)
    fakes = profile[mask, 0].sum() - genuine * law[mask].sum()
    if fakes <= 0:
        return ()
    honest = genuine * (shares * alpha[mask].sum() + (1 - shares) * gamma[mask].sum())
    setting = profile[mask, 1:].sum(axis=0) - honest
    return tuple(int(v) for v in np.flatnonzero(setting >= fakes / 2))


def remove_favored(g: np.ndarray, excess: float) -> tuple[np.ndarray, tuple[int, ...]]:
    """Take ``excess`` of mass from the fewest top options that hold it, leveled down together.

    The top m options of g, m smallest with sum >= excess, are lowered to one common level
    tau = max(0, (sum of the top m - excess) / m) (water filling from the top).

    >>> values, favored = remove_favored(np.array([0.7, 0.2, 0.1]), 0.5)
    >>> values.round(12).tolist(), favored
    ([0.2, 0.2, 0.1], (0,))
    """
    if excess <= 0:
        return g.copy(), ()
    order = np.argsort(-g, kind="stable")
    cumulative = np.cumsum(g[order])
    m = min(int(np.searchsorted(cumulative, excess)) + 1, g.size)
    # With m smallest, the first m - 1 hold less than the excess, so tau < g of the m-th: all m are lowered.
    tau = max(0.0, float(cumulative[m - 1] - excess) / m)
    out = g.copy()
    out[order[:m]] = tau
    lowered = order[:m]
    return out, tuple(sorted(int(v) for v in lowered))


def assess(
    mechanism: Mechanism, tally: Tally, profile: np.ndarray | None = None, alpha: float = ALPHA
) -> IntegrityResult:
    """Test one question's tally for fake reports, estimate their share, and recover the estimate.

    ``profile`` is the weight histogram of (any subset of) the reports, chosen independently of their
    content; by default the tally's own, if it keeps one. See the module docstring for every formula.
    """
    if tally.n == 0:
        raise ValueError("cannot assess zero reports")
    profile = tally.profile if profile is None else profile
    unbiased = mechanism.estimate(tally).proportions
    plain = project_onto_simplex(unbiased)
    errors = zero_share_errors(mechanism, tally.n)
    p_values = {"below_zero": float(min(1.0, mechanism.k * stats.norm.cdf(unbiased / errors).min()))}
    spread = sum_error(mechanism, tally.n)
    if spread is not None:
        p_values["sum"] = float(2 * stats.norm.sf(abs(unbiased.sum() - 1) / spread))
    distribution = weight_distribution(mechanism)
    weighted, expected = 0, empty_profile(mechanism)
    histogram: np.ndarray | None = None  # the profile's weights, when they are tested
    if profile is not None and distribution is not None and expected is not None and profile.shape == expected.shape:
        weighted = int(profile[:, 0].sum())
        if weighted:
            histogram = profile[:, 0]
            p_values["weights"] = weight_excess_test(distribution, histogram)
            if isinstance(mechanism, SampledUnaryEncoding):
                contrast = bit_contrast_test(mechanism, profile, tally)
                if contrast is not None:
                    p_values["bits"] = contrast
    p_value = float(min(1.0, len(p_values) * min(p_values.values())))
    significant = p_value < alpha

    floor = support_floor(mechanism)
    share, error = 0.0, 0.0
    detail: dict[str, Any] = {}
    if floor is not None and floor < 0:  # (dBitFlip with d = 1 has floor 0: no bound from it)
        ratios = unbiased / floor
        v = int(np.argmax(ratios))
        share, error = max(0.0, float(ratios[v])), float(errors[v] / -floor)
        detail["floor"] = floor
    mask: np.ndarray | None = None
    if histogram is not None and distribution is not None:  # "weights" in p_values
        mask = fake_weights(distribution, histogram)
        weight_share, weight_error = excess_weight_share(distribution, histogram, mask)
        detail["fake_weights"] = np.flatnonzero(mask).tolist()
        if weight_share > share:
            share, error = weight_share, weight_error
    share = min(share, MAX_SHARE)
    interval = ShareInterval(max(0.0, share - 1.96 * error), min(1.0, share + 1.96 * error))

    favored: tuple[int, ...] = ()
    recovered, recovery, recovered_errors = plain, "", None
    if (
        significant
        and isinstance(mechanism, SampledUnaryEncoding)
        and profile is not None
        and mask is not None
        and profile[~mask, 0].sum() > 0  # no report outside the fakes' weights: nothing to recover from
        and (zero_bit_case(mechanism, mask) or kept_weights_inform(mechanism, mask))
    ):
        # The fakes crowd one weight: estimate from the others, and read what the fakes set there.
        if zero_bit_case(mechanism, mask):
            clean, genuine = zero_bit_estimate(mechanism, tally, profile)
            recovered = project_onto_simplex(clean)
            p1, p0 = mechanism.true_bit_probability, mechanism.other_bit_probability
            zero_share = (recovered * (1 - p1) + (1 - recovered) * (1 - p0)) / mechanism.k
            recovered_errors = np.sqrt(zero_share * (1 - zero_share) / max(genuine, 1.0)) * mechanism.k / (p1 - p0)
        else:
            clean, genuine = clean_estimate(mechanism, profile, mask)
            recovered = project_onto_simplex(clean)
            recovered_errors = clean_errors(mechanism, mask, recovered, genuine)
        favored = favored_buckets(mechanism, profile, mask, recovered, genuine)
        recovery = "weights"
    elif significant and share > 0 and floor is not None:
        model = fake_model(mechanism)
        assert model is not None  # floor is not None: it is fake_model's
        background, total = model
        detail["background"] = background
        g = (unbiased - share * background) / (1 - share)
        excess = share * (total - mechanism.k * background) / (1 - share)
        lowered, favored = remove_favored(g, excess)
        recovered = project_onto_simplex(lowered)
        recovery = "concentrated"
        # The genuine reports' share of the plain noise, rescaled by 1 / (1 - beta).
        recovered_errors = np.sqrt(mechanism.report_variances(recovered) / (tally.n * (1 - share))) / (1 - share)
    return IntegrityResult(
        n=tally.n,
        p_values=p_values,
        p_value=p_value,
        significant=significant,
        fake_share=share,
        fake_share_interval=interval,
        favored=favored,
        plain=plain,
        recovered=recovered,
        recovered_errors=recovered_errors,
        alpha=alpha,
        weight_reports=weighted,
        recovery=recovery,
        detail=detail,
    )
