"""Memoization for recurring surveys: the Python mirror of ``static/ldp/memo.js``.

A respondent who answers the same question every week must not leak more every week. RAPPOR
(ref. 1) and Microsoft's telemetry (ref. 2) split each report into two layers:

* a **permanent** layer, computed once per (survey series, question, true value) and reused (the
  app's "question" label also carries a digest of the question's parameters, so changed parameters
  start a new layer: ``static/ldp/memo.js`` ``memoQuestionKey``):
  RAPPOR's PRR B', dBitFlip's bits for its sampled buckets, 1BitMean's bit for the grid point
  that alpha-point rounding gives (seed 004, formulas 3-5);
* an **instantaneous** layer drawn fresh for every round on top of it: RAPPOR's IRR (p, q), and
  for dBitFlip and 1BitMean a flip of each memoized bit with probability gamma (seed 004,
  formula 5), so that an observer cannot tell from two rounds whether the answer changed.

The browser keeps no table of memoized responses: it derives them from a **device secret**
(32 random bytes that never leave the browser) with HMAC-SHA-256, so the same secret and the same
(series, question, value) always give the same permanent layer, and a new value gives a fresh,
independent one. :class:`HmacStream` turns
HMAC(secret, encode_fields("murmur-memo-v1", purpose, series, question, *extra) || counter) for
counters 0, 1, ... into uniform 32-bit words (128 by default, plus two per bit for RAPPOR's PRR and
dBitFlip's bits, one per bucket for dBitFlip's buckets), consumed exactly as ``static/ldp/randomize.js``
consumes a random source (rejection for integers, 53 bits for a uniform number), so Python and
the browser derive identical responses; to anyone without the secret they are draws from the
mechanism's distribution (HMAC as a pseudorandom function). Per-respondent choices that must not
depend on the value are keyed without it: RAPPOR's cohort, dBitFlip's sampled buckets, the
alpha threshold.

Privacy (exact, :mod:`ldp.privacy`):

* one round: the two layers composed (:func:`dbitflip_round_epsilon`, :func:`one_bit_round_epsilon`,
  :meth:`ldp.mechanisms.rappor.Rappor.epsilon_one_report`);
* r rounds of one value: :func:`ldp.privacy.memoized_bit_log_ratios` per bit, which tends to
* epsilon_inf, the permanent layer's epsilon (the mechanism's own, or RAPPOR's 2h ln((1 - f/2)/(f/2))),
  whatever the number of rounds. A respondent whose answer takes several values spends
  epsilon_inf for each distinct value (distinct grid point for 1BitMean); without memoization r
  rounds spend r times the one-round epsilon (sequential composition).

References
----------
1. U. Erlingsson, V. Pihur, A. Korolova. "RAPPOR." CCS 2014, sections 3 and 4.
2. B. Ding, J. Kulkarni, S. Yekhanin. "Collecting telemetry data privately." NeurIPS 2017,
   sections 3-4 (alpha-point rounding, memoization, output perturbation).
3. Seed 004 (Jeong, Hong, Seo 2020), section 3.3, formulas (3)-(5).
4. H. Krawczyk, M. Bellare, R. Canetti. "HMAC." RFC 2104, 1997.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from typing import Any

import numpy as np

from ldp.mechanisms.base import Tally
from ldp.mechanisms.bitflip import DBitFlip
from ldp.mechanisms.rappor import Rappor
from ldp.numeric.base import MeanEstimate
from ldp.numeric.one_bit import OneBitMean
from ldp.privacy import memoized_bit_log_ratios
from ldp.text import encode_fields

__all__ = [
    "MEMO_DOMAIN",
    "HmacStream",
    "dbitflip_epsilon_after_rounds",
    "dbitflip_round_epsilon",
    "dbitflip_round_shares",
    "flip_bits",
    "memoized_cohort",
    "memoized_dbitflip",
    "memoized_one_bit",
    "memoized_prr",
    "one_bit_epsilon_after_rounds",
    "one_bit_round_mean",
    "one_bit_round_epsilon",
]

MEMO_DOMAIN = "murmur-memo-v1"
#: Words a stream holds unless told otherwise: 16 HMAC blocks.
DEFAULT_WORDS = 128
TWO_POW_32 = 2**32
TWO_POW_53 = 2**53


class StreamExhausted(RuntimeError):
    """More words were asked of an HmacStream than it holds (below 2^-60 with the lengths used here)."""


class HmacStream:
    """Deterministic uniform 32-bit words from a device secret and a label (see the module docstring).

    >>> stream = HmacStream(bytes(32), "cohort", "series-1", "q1")
    >>> stream.uniform_int(64)
    63
    """

    def __init__(
        self, secret: bytes, purpose: str, series: str, question: str, *extra: str | int, words: int = DEFAULT_WORDS
    ) -> None:
        if not isinstance(secret, bytes) or len(secret) < 16:
            raise ValueError("secret must be at least 16 bytes")
        message = encode_fields(MEMO_DOMAIN, purpose, series, question, *extra)
        count = -(-words // 8)  # HMAC-SHA-256 blocks of 8 words, counters 0, 1, ...
        blocks = b"".join(
            hmac.new(secret, message + block.to_bytes(4, "big"), hashlib.sha256).digest() for block in range(count)
        )
        self._words = [int.from_bytes(blocks[i : i + 4], "big") for i in range(0, len(blocks), 4)]
        self._next = 0

    def word(self) -> int:
        if self._next >= len(self._words):
            raise StreamExhausted("the memo stream ran out of words")
        self._next += 1
        return self._words[self._next - 1]

    def uniform_int(self, bound: int) -> int:
        """Uniform in [0, bound), bound <= 2^32, by rejection: randomize.js's uniformInt."""
        limit = TWO_POW_32 - TWO_POW_32 % bound
        while True:
            word = self.word()
            if word < limit:
                return word % bound

    def uniform_integer(self, bound: int) -> int:
        """Uniform in [0, bound), bound <= 2^53: numeric.js's uniformInteger."""
        if bound <= TWO_POW_32:
            return self.uniform_int(bound)
        limit = TWO_POW_53 - TWO_POW_53 % bound
        while True:
            value = (self.word() >> 11) * TWO_POW_32 + self.word()
            if value < limit:
                return value % bound

    def uniform_unit(self) -> float:
        """A uniform number in [0, 1) from 53 bits: randomize.js's uniformUnit."""
        high, low = self.word() >> 5, self.word() >> 6
        return (high * 67108864 + low) / TWO_POW_53


def memoized_cohort(secret: bytes, series: str, question: str, cohorts: int) -> int:
    """The respondent's RAPPOR cohort for a question of a series (independent of the answer)."""
    return HmacStream(secret, "cohort", series, question).uniform_int(cohorts)


def memoized_prr(secret: bytes, series: str, question: str, value: str, mechanism: Rappor) -> tuple[int, np.ndarray]:
    """(cohort, B'): RAPPOR's permanent randomized response of ``value`` (normalized text).

    Per bit, u uniform in [0, 1): 1 if u < f/2, 0 if u < f, else the Bloom filter's bit.
    """
    cohort = memoized_cohort(secret, series, question, mechanism.cohorts)
    bloom = mechanism.bloom_filter(value, cohort)
    # Two words per bit, and the default's margin: a longer stream starts with the same words.
    stream = HmacStream(secret, "prr", series, question, value, words=DEFAULT_WORDS + 2 * mechanism.bits)
    permanent = np.empty(mechanism.bits, dtype=np.uint8)
    for i in range(mechanism.bits):
        u = stream.uniform_unit()
        permanent[i] = 1 if u < mechanism.f / 2 else 0 if u < mechanism.f else bloom[i]
    return cohort, permanent


def memoized_dbitflip(
    secret: bytes, series: str, question: str, value: int, mechanism: DBitFlip
) -> tuple[list[int], list[int]]:
    """(buckets, bits): dBitFlip's sampled buckets (fixed per respondent) and memoized bits for ``value``.

    Buckets: the first d of a partial Fisher-Yates shuffle, sorted (as randomizeDBitFlip draws them).
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < mechanism.k:
        raise ValueError(f"value must be an option index in [0, {mechanism.k}), got {value!r}")
    stream = HmacStream(secret, "buckets", series, question, words=DEFAULT_WORDS + mechanism.d)
    order = list(range(mechanism.k))
    for i in range(mechanism.d):
        swap = i + stream.uniform_int(mechanism.k - i)
        order[i], order[swap] = order[swap], order[i]
    buckets = sorted(order[: mechanism.d])
    stream = HmacStream(secret, "dbitflip", series, question, value, words=DEFAULT_WORDS + 2 * mechanism.d)
    p1, p0 = mechanism.true_bit_probability, mechanism.other_bit_probability
    bits = [int(stream.uniform_unit() < (p1 if bucket == value else p0)) for bucket in buckets]
    return buckets, bits


def memoized_alpha(secret: bytes, series: str, question: str) -> float:
    """The respondent's alpha-point threshold in [0, 1) for a question (independent of the answer)."""
    return HmacStream(secret, "alpha", series, question).uniform_unit()


def memoized_one_bit(secret: bytes, series: str, question: str, value: float, mechanism: OneBitMean) -> tuple[int, int]:
    """(grid point, memoized bit): alpha-point rounding with the kept alpha, then 1BitMean's bit for that point.

    The bit is 1 iff a uniform integer in [0, D) falls below A + k m (:mod:`ldp.numeric.one_bit`).
    """
    alpha = memoized_alpha(secret, series, question)
    point = int(mechanism.round_to_grid([value], alpha=[alpha])[0])
    stream = HmacStream(secret, "1bitmean", series, question, point)
    bit = int(stream.uniform_integer(mechanism.denominator) < mechanism.base + point * mechanism.slope)
    return point, bit


def flip_bits(bits: Any, gamma: float, *, rng: Any = None) -> np.ndarray:
    """The instantaneous layer of dBitFlip and 1BitMean: each bit flipped with probability gamma."""
    check_gamma(gamma)
    rng = np.random.default_rng(rng)
    array = np.asarray(bits, dtype=np.uint8)
    return array ^ (rng.random(array.shape) < gamma).astype(np.uint8)


def check_gamma(gamma: float) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0 <= gamma < 0.5:
        raise ValueError(f"gamma must lie in [0, 0.5), got {gamma!r}")
    return float(gamma)


def _flipped(one: float, gamma: float) -> float:
    return (1 - gamma) * one + gamma * (1 - one)


def dbitflip_round_epsilon(mechanism: DBitFlip, gamma: float) -> float:
    """Exact epsilon of one round of memoized dBitFlip with flip probability gamma.

    Each sampled bit is 1 with probability p1' = (1 - gamma) p1 + gamma (1 - p1) for the answer's
    bucket and p0' likewise otherwise; as for dBitFlip itself, two answers differ in at most two
    bits (one when d = 1).
    """
    check_gamma(gamma)
    p1 = _flipped(mechanism.true_bit_probability, gamma)
    p0 = _flipped(mechanism.other_bit_probability, gamma)
    up, down = math.log(p1 / p0), math.log((1 - p0) / (1 - p1))
    return up + down if mechanism.d >= 2 else max(up, down)


def dbitflip_epsilon_after_rounds(mechanism: DBitFlip, gamma: float, rounds: int) -> float:
    """Exact epsilon of ``rounds`` rounds of one answer sharing its memoized bits; tends to epsilon."""
    check_gamma(gamma)
    permanent = (mechanism.other_bit_probability, mechanism.true_bit_probability)
    up, down = memoized_bit_log_ratios(permanent, (gamma, 1 - gamma), rounds)
    return up + down if mechanism.d >= 2 else max(up, down)


def one_bit_round_epsilon(mechanism: OneBitMean, gamma: float) -> float:
    """Exact epsilon of one round of memoized 1BitMean with flip probability gamma.

    The memoized bit is 1 with probability between A/D (grid point 0) and (D - A)/D (point G);
    flipped with probability gamma, the extremes are (1 - gamma) A/D + gamma (D - A)/D and its
    complement, whose log-ratio is the worst over every pair of values.
    """
    check_gamma(gamma)
    low = _flipped(mechanism.base / mechanism.denominator, gamma)
    return math.log((1 - low) / low)


def one_bit_epsilon_after_rounds(mechanism: OneBitMean, gamma: float, rounds: int) -> float:
    """Exact epsilon of ``rounds`` rounds of one grid point sharing its memoized bit; tends to epsilon."""
    check_gamma(gamma)
    low = mechanism.base / mechanism.denominator
    up, down = memoized_bit_log_ratios((low, 1 - low), (gamma, 1 - gamma), rounds)
    return max(up, down)


def dbitflip_round_shares(mechanism: DBitFlip, gamma: float, tally: Tally) -> np.ndarray:
    """Unbiased answer shares from one round of memoized dBitFlip reports.

    The reports and their tally have dBitFlip's format; over respondents (independent secrets) a
    round's bits are dBitFlip's with p1' = (1 - gamma) p1 + gamma (1 - p1) and p0' likewise, so
    h(v) = k / (n d) (ones_v - p0' sampled_v) / (p1' - p0') (ref. 2, Theorem 3.2, with p1', p0').
    Rounds of one series share respondents' memoized bits, so two rounds' estimates are positively
    correlated: treating them as independent overstates the variance of their difference.
    """
    check_gamma(gamma)
    if tally.n == 0:
        raise ValueError("cannot estimate from zero reports")
    p1 = _flipped(mechanism.true_bit_probability, gamma)
    p0 = _flipped(mechanism.other_bit_probability, gamma)
    sampled, ones = tally.counts[: mechanism.k], tally.counts[mechanism.k :]
    return mechanism.k / (tally.n * mechanism.d) * (ones - p0 * sampled) / (p1 - p0)


def one_bit_round_mean(mechanism: OneBitMean, gamma: float, tally: Tally) -> MeanEstimate:
    """Unbiased mean from one round of memoized 1BitMean reports ({"index": bit}, the same tally).

    With the flip, P(1 | grid point k) = (A' + k m') / D, A' = gamma D + (1 - 2 gamma) A and
    m' = (1 - 2 gamma) m, so decode' = (-A' / m', (D - A') / m') in grid units and the mean is
    lo + step mean(decode'); the standard error is the decoded reports' sample deviation over
    sqrt(n), the expected one the worst grid point's (plus a quarter step squared for rounding).
    """
    check_gamma(gamma)
    if tally.n == 0:
        raise ValueError("cannot estimate from zero reports")
    total = mechanism.denominator
    base = gamma * total + (1 - 2 * gamma) * mechanism.base
    slope = (1 - 2 * gamma) * mechanism.slope
    decode = np.array([-base, total - base]) / slope
    mean = float(tally.counts @ decode) / tally.n
    second = float(tally.counts @ decode**2) / tally.n
    spread = max(second - mean**2, 0.0) * tally.n / max(tally.n - 1, 1)
    points = np.arange(mechanism.grid + 1)
    one = (base + points * slope) / total
    worst = float(np.max((1 - one) * decode[0] ** 2 + one * decode[1] ** 2 - points**2)) + 0.25
    return MeanEstimate(
        mean=mechanism.lo + mechanism.step * mean,
        standard_error=mechanism.step * math.sqrt(spread / tally.n),
        n=tally.n,
        expected_standard_error=mechanism.step * math.sqrt(worst / tally.n),
    )


#: The layers of a memoized report, per mechanism: RAPPOR's permanent randomized response (PRR,
#: memoized per series, question and true value) under a fresh instantaneous one (IRR) each round;
#: dBitFlip's bits and 1BitMean's bit, memoized and flipped with gamma each round (seed 004, formula 5).
MEMO_LAYERS = {"rappor": "memoized-prr+irr", "dbitflip": "memoized-bits+flip", "1bitmean": "memoized-bit+flip"}

#: The memoized layer's flip probability gamma a new randomization stores, per mechanism with a
#: flip: dBitFlip's bits flipped with 0.1 every round; 1BitMean's with 1/4, which keeps the
#: memoized bit's weights integers on a denominator of 2D (at most 2^53).
DEFAULT_MEMO_GAMMA = {"dbitflip": 0.1, "1bitmean": 0.25}


def memo_layers(mechanism: str) -> str:
    """The layers of the mechanism's memoized report (:data:`MEMO_LAYERS`); "" if it has no memoized form.

    >>> memo_layers("rappor"), memo_layers("krr")
    ('memoized-prr+irr', '')
    """
    return MEMO_LAYERS.get(mechanism, "")


def memo_flip(mechanism: str, gamma: float | None = None) -> float | None:
    """The flip gamma of the mechanism's memoized bits: ``gamma`` as stored, or the default
    (:data:`DEFAULT_MEMO_GAMMA`) when None; None for a mechanism without a flip (RAPPOR, one-layer ones).

    >>> memo_flip("dbitflip"), memo_flip("dbitflip", 0.2), memo_flip("rappor")
    (0.1, 0.2, None)
    """
    if mechanism not in DEFAULT_MEMO_GAMMA:
        return None
    return DEFAULT_MEMO_GAMMA[mechanism] if gamma is None else gamma


def memoizes(spec: dict[str, Any], gamma: float | None = None) -> bool:
    """Whether a report randomized with this client spec is memoized across a series' rounds.

    ``gamma`` is the randomization's stored flip; None: the default a new randomization gets. RAPPOR
    always is; dBitFlip while p1' < 1 - gamma; 1BitMean with a flip of 1/4 (the only one that keeps
    its weights integers) while 4A > D, i.e. epsilon below ln 3. Other mechanisms never are: they are
    randomized afresh every round.
    """
    mechanism = spec["mechanism"]
    if not memo_layers(mechanism):
        return False
    flip = memo_flip(mechanism, gamma)
    if mechanism == "dbitflip":
        return flip is not None and bool(spec["true_bit_probability"] < 1 - flip - 1e-9)
    if mechanism == "1bitmean":
        return flip == 0.25 and 4 * spec["base"] - spec["denominator"] >= 1
    return True


def permanent_one_bit_weights(spec: dict[str, Any]) -> tuple[int, int, int]:
    """(D', A', m'): 1BitMean's memoized bit is 1 with probability (A' + k m') / D', which the 1/4 flip
    turns into the spec's (A + k m) / D: D' = 2D, A' = 4A - D, m' = 4m (3/4 q + 1/4 (1 - q) = q/2 + 1/4)."""
    return 2 * spec["denominator"], 4 * spec["base"] - spec["denominator"], 4 * spec["slope"]


def permanent_bit_probability(spec: dict[str, Any], gamma: float) -> float:
    """dBitFlip's memoized bit probability p1 whose gamma flip gives the spec's p1'."""
    return (spec["true_bit_probability"] - gamma) / (1 - 2 * gamma)


def permanent_epsilon(spec: dict[str, Any], memo: dict[str, Any]) -> float:
    """epsilon_inf of a memoized report: its permanent layer's epsilon, whatever the number of rounds.

    RAPPOR: 2h ln((1 - f/2) / (f/2)) (ref. 1, section 4). dBitFlip: the permanent bits' epsilon,
    2 ln(p1 / (1 - p1)) (ln(p1 / (1 - p1)) when d = 1), p1 from :func:`permanent_bit_probability`.
    1BitMean: ln((D' - A') / A') of :func:`permanent_one_bit_weights` (seed 004, formulas 3-5).
    """
    if spec["mechanism"] == "rappor":
        return 2 * spec["hash_count"] * math.log((1 - spec["f"] / 2) / (spec["f"] / 2))
    if spec["mechanism"] == "dbitflip":
        p1 = permanent_bit_probability(spec, memo["gamma"])
        bit = math.log(p1 / (1 - p1))
        return bit if spec["d"] == 1 else 2 * bit
    if spec["mechanism"] == "1bitmean":
        denominator, base, _slope = permanent_one_bit_weights(spec)
        return math.log((denominator - base) / base)
    raise ValueError(f"no memoized form for mechanism {spec['mechanism']!r}")
