"""Free-text mechanisms behind the report interface every stored question uses.

A survey stores, for every question, packed reports and a running :class:`~ldp.mechanisms.base.Tally`
(the number of reports and a flat vector of integer counts that add up). The free-text
mechanisms keep richer sufficient statistics (:class:`~ldp.mechanisms.rappor.BitCounts`,
:class:`~ldp.freetext.SketchCounts`); :class:`TextReports` lays them out as one flat count
vector, so that they are kept, summed and read exactly like every other question's tally:

* ``rappor``: the reports per cohort j (``cohorts`` cells), then the set bits per (cohort j,
  bit i) (``cohorts x bits`` cells, row-major);
* ``text-cms``: the reports per row j (``hash_count`` cells), then per (row j, cell l) the reports
  with +1 there (``hash_count x width``); the signed totals are U = 2 plus - R_j;
* ``text-hcms``: the reports per row j, then per (row j, index i) the signed bits (``hash_count x
  width``, sums of +-1, so they may be negative); U = signed H (Hadamard transform per row).

A report adds 1 + (its ones) cells for RAPPOR and CMS, 2 for HCMS: a constant-cost write.

Queries (:meth:`TextReports.query`) answer "how many wrote X?" for candidate strings X, already
normalized (:func:`ldp.text.normalize_text`). RAPPOR decodes with
:func:`ldp.mechanisms.rappor.decode` (weighted least squares on every queried candidate, one-sided
z-tests at alpha / M: Bonferroni, which controls the false-discovery rate too). The sketches use
:meth:`ldp.freetext.TextSketch.query` (counts and standard errors) with one-sided z-tests of
"count = 0" and the Benjamini-Hochberg step-up procedure at level alpha (ref. 1): the false
discovery rate stays below alpha for independent or positively dependent tests.

A question's epsilon is the epsilon of one report. For the sketches it is a parameter; for RAPPOR
:func:`rappor_for_epsilon` picks the instantaneous layer (p = 1 - q) from it at the seed's Bloom
filter (32 bits, 2 hashes, 64 cohorts, f = 0.5; seed 004, Fig. 3).

References
----------
1. Y. Benjamini, Y. Hochberg. "Controlling the false discovery rate: a practical and powerful
   approach to multiple testing." JRSS B 57(1), 1995.
2. Seed 004 (Jeong, Hong, Seo 2020), section 3.1-3.2.
3. T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Skoric, N. Li. "Locally differentially private frequency
   estimation with consistency." NDSS 2020 (clipping, Norm-Sub).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ldp.families import Candidate, Family, Recommendation, names
from ldp.freetext import HadamardTextSketch, SketchCounts, TextSketch
from ldp.mechanisms.base import Tally
from ldp.mechanisms.rappor import BitCounts, Rappor, decode
from ldp.privacy import check_epsilon

__all__ = [
    "DEFAULT_PARAMS",
    "TEXT_MECHANISMS",
    "CandidateCounts",
    "TextReports",
    "benjamini_hochberg",
    "make_text_mechanism",
    "rappor_for_epsilon",
    "recommend_text",
]

#: The "text" family of :data:`ldp.registry.NAMES`.
TEXT_MECHANISMS = names("text")

#: The seed's parameters (seed 004): sketches of 64 rows x 128 cells; RAPPOR's Fig. 3 Bloom filter.
DEFAULT_PARAMS: dict[str, dict[str, Any]] = {
    "text-cms": {"hash_count": 64, "width": 128},
    "text-hcms": {"hash_count": 64, "width": 128},
    "rappor": {"bits": 32, "hash_count": 2, "cohorts": 64, "f": 0.5},
}


def rappor_for_epsilon(
    epsilon: float, bits: int = 32, hash_count: int = 2, cohorts: int = 64, f: float = 0.5
) -> Rappor:
    """RAPPOR whose one report has exactly ``epsilon``: symmetric IRR p = 1 - q chosen from it.

    With p = 1 - q, p* = 1 - q* and epsilon_1 = 2h ln(q* / (1 - q*)), so q* = 1 / (1 + e^(-epsilon/(2h)))
    and q = 1/2 + (q* - 1/2) / (1 - f). That needs q <= 1, i.e. f <= 2 (1 - q*). When f is smaller
    the given f is kept (q < 1); otherwise (epsilon at or above epsilon_inf(f): 4.39 for the seed's
    f = 0.5 and h = 2) the permanent layer is lightened to f = 1 - q*, so that every report still
    carries fresh noise: q = 1/2 + (q* - 1/2) / q* < 1, p > 0, and epsilon_inf = 2h ln((1 + q*) /
    (1 - q*)) > epsilon.

    >>> r = rappor_for_epsilon(2 * 2 * math.log(5 / 3))  # seed 004, Fig. 3: p = 0.25, q = 0.75
    >>> round(r.p, 12), round(r.q, 12), round(r.epsilon_one_report(), 12) == round(4 * math.log(5 / 3), 12)
    (0.25, 0.75, True)
    """
    epsilon = check_epsilon(epsilon)
    q_star = 1 / (1 + math.exp(-epsilon / (2 * hash_count)))
    if f >= 2 * (1 - q_star):
        f = 1 - q_star
    q = 0.5 + (q_star - 0.5) / (1 - f)
    return Rappor(bits=bits, hash_count=hash_count, cohorts=cohorts, f=f, p=1 - q, q=q)


class CandidateInterval(NamedTuple):
    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True, eq=False)
class CandidateCounts:
    """How many wrote each candidate: counts, standard errors, one-sided p-values, findings.

    ``found`` marks the candidates significant under ``method`` ("bonferroni" or
    "benjamini-hochberg") at level ``alpha``. Counts are in respondents; shares are counts / n.
    """

    candidates: tuple[str, ...]
    counts: np.ndarray
    standard_errors: np.ndarray
    p_values: np.ndarray
    found: np.ndarray
    n: int
    alpha: float
    method: str

    def interval(self, level: float = 0.95) -> CandidateInterval:
        """count +- z standard error per candidate (NaN where a candidate could not be estimated)."""
        if not 0 < level < 1:
            raise ValueError(f"level must lie in (0, 1), got {level!r}")
        z = float(stats.norm.isf((1 - level) / 2))
        return CandidateInterval(self.counts - z * self.standard_errors, self.counts + z * self.standard_errors)

    def confidence_interval(self, level: float = 0.95) -> CandidateInterval:
        """:meth:`interval`, by the name every family's estimate uses (:class:`ldp.registry.Estimate`)."""
        return self.interval(level)

    @property
    def consistent_counts(self) -> np.ndarray:
        """The counts projected onto the feasible range: clip(count, 0, n).

        No more than all n respondents, and no fewer than none, wrote a candidate, so the projection
        onto [0, n] is never farther from the true count than the unbiased count is (the
        interval is convex); it is the "clipping" post-processing of Wang et al. (ref. 3).
        """
        return np.clip(self.counts, 0, self.n)

    def consistent_interval(self, level: float = 0.95) -> CandidateInterval:
        """:meth:`interval` intersected with [0, n]: [clip(low, 0, n), clip(high, 0, n)].

        The true count lies in [0, n], so the intersection covers it exactly when the normal
        interval does: the coverage is unchanged and the band is never wider.
        """
        low, high = self.interval(level)
        return CandidateInterval(np.clip(low, 0, self.n), np.clip(high, 0, self.n))


def benjamini_hochberg(p_values: ArrayLike, alpha: float) -> np.ndarray:
    """Which hypotheses the Benjamini-Hochberg step-up procedure rejects at level alpha (ref. 1).

    Reject the i smallest p-values for the largest i with p_(i) <= i alpha / M.

    >>> benjamini_hochberg([0.01, 0.03, 0.02, 0.5], 0.05).tolist()
    [True, True, True, False]
    """
    p = np.asarray(p_values, dtype=float)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    order = np.argsort(p, kind="stable")
    passing = np.flatnonzero(p[order] <= alpha * np.arange(1, p.size + 1) / p.size)
    rejected = np.zeros(p.size, dtype=bool)
    if passing.size:
        rejected[order[: passing[-1] + 1]] = True
    return rejected


@dataclass(frozen=True, eq=False)
class TextReports:
    """A free-text mechanism (``inner``) with the flat tally of the module docstring.

    >>> m = make_text_mechanism("text-cms", epsilon=4.0, hash_count=4, width=8)
    >>> packed = m.parse_report({"row": 1, "bits": [0, 1, 0, 0, 0, 0, 0, 1]})
    >>> tally = m.tally(m.unpack_many(packed))
    >>> tally.n, tally.counts[:4].tolist(), tally.counts[4 + 8 : 4 + 16].tolist()
    (1, [0, 1, 0, 0], [0, 1, 0, 0, 0, 0, 0, 1])

    Satisfies :class:`ldp.registry.LDPMechanism` (family "text"); its ``estimate`` is
    :meth:`query`.
    """

    family: ClassVar[Family] = "text"
    inner: TextSketch | Rappor
    k = 0
    """Free text has no option list."""

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def epsilon(self) -> float:
        """One report's epsilon (RAPPOR's epsilon_1)."""
        if isinstance(self.inner, Rappor):
            return self.inner.epsilon_one_report()
        return self.inner.epsilon

    def params(self) -> dict[str, Any]:
        """What, beside the name and epsilon, rebuilds the mechanism (:func:`make_text_mechanism`)."""
        if isinstance(self.inner, Rappor):
            return self.inner.params()
        return {"hash_count": self.inner.hash_count, "width": self.inner.width}

    def client_spec(self) -> dict[str, Any]:
        return self.inner.client_spec()

    def privacy_guarantee(self) -> tuple[float, float]:
        """(epsilon, 0): one report satisfies pure epsilon-LDP (RAPPOR's epsilon_1, seed 004)."""
        return self.epsilon, 0.0

    def worst_case_log_ratio(self) -> float:
        if isinstance(self.inner, Rappor):
            return self.inner.epsilon_one_report()
        return self.inner.worst_case_log_ratio()

    @property
    def rows(self) -> int:
        """Cohorts (RAPPOR) or sketch rows."""
        return self.inner.cohorts if isinstance(self.inner, Rappor) else self.inner.hash_count

    @property
    def columns(self) -> int:
        """Bloom bits (RAPPOR) or sketch width."""
        return self.inner.bits if isinstance(self.inner, Rappor) else self.inner.width

    @property
    def cell_count(self) -> int:
        return self.rows * (1 + self.columns)

    # -- reports ----------------------------------------------------------------------------------
    @property
    def report_width(self) -> int:
        return self.inner.report_width

    def parse_report(self, obj: Any) -> bytes:
        """Validate one report strictly (the inner mechanism's ``parse_report``); raise InvalidReport."""
        return self.inner.parse_report(obj)

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        return self.inner.unpack_report(packed)

    def unpack_many(self, buffer: bytes) -> np.ndarray:
        """Packed reports concatenated into ``buffer``, as an (n, report_width) uint8 array."""
        if len(buffer) % self.report_width:
            raise ValueError(f"buffer length {len(buffer)} is not a multiple of {self.report_width}")
        return np.frombuffer(buffer, dtype=np.uint8).reshape(-1, self.report_width)

    def randomize_reports(self, texts: Sequence[str], *, rng: Any = None) -> list[dict[str, Any]]:
        """Reports of normalized texts as browsers send them (JSON objects), for simulations and tests.

        RAPPOR's cohort is drawn uniformly per report, as ``static/surveys/respond.js`` does.
        """
        rng = np.random.default_rng(rng)
        inner = self.inner
        if isinstance(inner, Rappor):
            cohorts = rng.integers(0, inner.cohorts, size=len(texts))
            bits = inner.randomize(texts, cohorts, rng=rng)
            return [{"cohort": int(j), "bits": b.tolist()} for j, b in zip(cohorts, bits, strict=True)]
        if isinstance(inner, HadamardTextSketch):
            rows, indices, signs = inner.randomize(texts, rng=rng)
            return [
                {"row": int(j), "index": int(i), "bit": int(b)} for j, i, b in zip(rows, indices, signs, strict=True)
            ]
        rows, bit_rows = inner.randomize(texts, rng=rng)
        return [{"row": int(j), "bits": b.tolist()} for j, b in zip(rows, bit_rows, strict=True)]

    # -- tallies ----------------------------------------------------------------------------------
    def tally(self, packed: ArrayLike) -> Tally:
        """The flat tally of packed reports (module docstring)."""
        inner = self.inner
        if isinstance(inner, HadamardTextSketch):
            rows = np.asarray(packed, dtype=np.int64).reshape(-1, 5)
            row, index = rows[:, 0] | rows[:, 1] << 8, rows[:, 2] | rows[:, 3] << 8
            if (row >= inner.hash_count).any() or (index >= inner.width).any():
                raise ValueError("a packed report names a row or index outside the sketch")
            signed = np.zeros((inner.hash_count, inner.width), dtype=np.int64)
            np.add.at(signed, (row, index), 2 * rows[:, 4] - 1)
            per_row = np.bincount(row, minlength=inner.hash_count)
            return Tally(int(per_row.sum()), np.concatenate([per_row, signed.ravel()]))
        if isinstance(inner, Rappor):
            bit_counts = inner.tally(packed)
            return Tally(bit_counts.n, np.concatenate([bit_counts.reports, bit_counts.ones.ravel()]))
        sketch = inner.tally(packed)
        plus = (sketch.totals + sketch.reports[:, None]) // 2
        return Tally(sketch.n, np.concatenate([sketch.reports, plus.ravel()]).astype(np.int64))

    def empty_tally(self) -> Tally:
        return Tally(0, np.zeros(self.cell_count, dtype=np.int64))

    def counts(self, tally: Tally) -> BitCounts | SketchCounts:
        """The inner mechanism's sufficient statistics from a flat tally."""
        flat = np.asarray(tally.counts, dtype=np.int64)
        if flat.shape != (self.cell_count,):
            raise ValueError(f"a {self.name} tally has {self.cell_count} counts, got shape {flat.shape}")
        per_row, cells = flat[: self.rows], flat[self.rows :].reshape(self.rows, self.columns)
        if isinstance(self.inner, Rappor):
            return BitCounts(per_row, cells)
        if isinstance(self.inner, HadamardTextSketch):
            return SketchCounts(per_row, cells @ self.inner.signs)
        return SketchCounts(per_row, 2 * cells - per_row[:, None])

    def from_counts(self, counts: BitCounts | SketchCounts) -> Tally:
        """The flat tally of simulated counts (RAPPOR and CMS; tests and demos)."""
        if isinstance(counts, BitCounts):
            return Tally(counts.n, np.concatenate([counts.reports, counts.ones.ravel()]))
        if isinstance(self.inner, HadamardTextSketch):
            raise ValueError("HCMS counts keep only the transformed totals; tally its reports instead")
        plus = (counts.totals + counts.reports[:, None]) // 2
        return Tally(counts.n, np.concatenate([counts.reports, plus.ravel()]).astype(np.int64))

    # -- queries ----------------------------------------------------------------------------------
    def query(self, tally: Tally, candidates: Sequence[str], *, alpha: float = 0.05) -> CandidateCounts:
        """How many wrote each (normalized, distinct) candidate, with findings (module docstring)."""
        names = tuple(candidates)
        counts = self.counts(tally)
        if isinstance(self.inner, Rappor):
            decoded = decode(self.inner, counts, names, alpha=alpha, always=names)  # type: ignore[arg-type]  # BitCounts
            return CandidateCounts(
                names,
                decoded.counts,
                decoded.standard_errors,
                decoded.p_values,
                decoded.found,
                decoded.n,
                alpha,
                "bonferroni",
            )
        result = self.inner.query(counts, names, alpha=alpha)  # type: ignore[arg-type]  # a sketch's: SketchCounts
        p_values = stats.norm.sf(result.counts / result.standard_errors)
        found = benjamini_hochberg(p_values, alpha)
        return CandidateCounts(
            names, result.counts, result.standard_errors, p_values, found, result.n, alpha, "benjamini-hochberg"
        )

    def estimate(self, tally: Tally, candidates: Sequence[str] = (), *, alpha: float = 0.05) -> CandidateCounts:
        """:meth:`query`, by the name every family uses (:class:`ldp.registry.LDPMechanism`).

        Free text has no fixed list of answers to estimate: ``candidates`` are required.
        """
        return self.query(tally, candidates, alpha=alpha)

    def share_standard_error(self, n: int) -> float:
        """A bound on one candidate's share's standard error from n reports, other strings aside.

        Sketches: each report adds a or b to a count (:mod:`ldp.freetext`), so its variance is at
        most (a - b)^2 / 4 and the share's standard error at most (a - b) / (2 sqrt(n)). RAPPOR: each
        of the h bits of each cohort estimates the share with standard deviation at most
        sqrt(C / n) / (2 (q* - p*)); weighted together over C cohorts, 1 / (2 (q* - p*) sqrt(h n)).
        Collisions with strings not queried add to this (:meth:`ldp.freetext.TextSketch.query`).
        """
        if n <= 0:
            raise ValueError(f"n must be positive, got {n!r}")
        inner = self.inner
        if isinstance(inner, Rappor):
            p_star, q_star = inner.report_one
            return 1 / (2 * (q_star - p_star) * math.sqrt(inner.hash_count * n))
        slope = inner.debias[0]
        spread = inner.width / (inner.width - 1) * 2 * slope
        return spread / (2 * math.sqrt(n))


def make_text_mechanism(name: str, epsilon: float, **params: Any) -> TextReports:
    """The free-text mechanism ``name`` (one of :data:`TEXT_MECHANISMS`) from stored parameters.

    RAPPOR's parameters (bits, hash_count, cohorts, f, p, q) fix its epsilon; ``epsilon`` must then
    agree with them (to 1e-9, relative). Without p and q they are chosen from epsilon
    (:func:`rappor_for_epsilon`).

    >>> make_text_mechanism("rappor", epsilon=2.0).params()["f"]
    0.5
    >>> make_text_mechanism("text-hcms", epsilon=1.0).params()
    {'hash_count': 64, 'width': 128}
    """
    if name not in TEXT_MECHANISMS:
        raise ValueError(f"mechanism must be one of {list(TEXT_MECHANISMS)}, got {name!r}")
    merged = {**DEFAULT_PARAMS[name], **params}
    if name == "rappor":
        if "p" in merged or "q" in merged:
            rappor = Rappor(**merged)
            actual = rappor.epsilon_one_report()
            if not math.isclose(actual, epsilon, rel_tol=1e-9):
                raise ValueError(f"epsilon {epsilon!r} does not match RAPPOR's parameters (epsilon_1 = {actual!r})")
            return TextReports(rappor)
        return TextReports(rappor_for_epsilon(epsilon, **merged))
    cls = HadamardTextSketch if name == "text-hcms" else TextSketch
    return TextReports(cls(epsilon=epsilon, **merged))


def recommend_text(epsilon: float, n: int) -> Recommendation:
    """The free-text mechanisms at their default shapes, by the half-width of one string's share.

    Each candidate's half-width is z_0.975 times :meth:`TextReports.share_standard_error` at n
    reports: a bound that leaves out collisions with strings not queried, which the sketches and
    RAPPOR's Bloom filter suffer alike. Ties go to the earlier mechanism of :data:`TEXT_MECHANISMS`.

    >>> [c.mechanism for c in recommend_text(2.0, 1000).ranking]
    ['text-cms', 'text-hcms', 'rappor']
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of respondents, got {n!r}")
    z = float(stats.norm.ppf(0.975))
    candidates = []
    for name in TEXT_MECHANISMS:
        mechanism = make_text_mechanism(name, epsilon=epsilon)
        candidates.append(Candidate(name, mechanism.params(), z * mechanism.share_standard_error(n)))
    ranking = tuple(sorted(candidates, key=lambda c: round(c.half_width, 12)))
    return Recommendation(ranking[0], ranking, estimator="unbiased")
