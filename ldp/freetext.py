"""Free-text answers with Apple's Count Mean Sketch over hashed strings, and candidate queries.

A free-text answer ("other: ___", a short answer) is normalized in the browser
(:func:`ldp.text.normalize_text`) and reported with a sketch whose cells are hashes of the
string, so the server never needs a list of possible answers in advance; afterwards the
organizer asks "how many wrote X?" for candidate strings X. RAPPOR
(:mod:`ldp.mechanisms.rappor`) does the same with a Bloom filter; this module is the CMS
alternative (seed 004, Fig. 5-7), the same client as :mod:`ldp.mechanisms.cms` with the option
table replaced by a string hash.

Hash (identical in ``static/ldp/freetext.js``): h_j(s) = the first 4-byte big-endian word of
SHA-256(encode_fields("murmur-sketch-v1", j, s)) modulo ``width``.

Client: j uniform in [0, K); v = -1 in R^m with v[h_j(s)] = +1; every entry kept with probability
e^(epsilon/2) / (e^(epsilon/2) + 1), flipped otherwise; the report is (j, v as 0/1 bits). Two
strings change at most two entries: epsilon exactly, as for CMS.

Tally: per row j the number of reports R_j and, per cell, how many reports had +1 there (P[j, l]).

Query (seed 004, formula of Fig. 7): with c = (e^(epsilon/2) + 1) / (e^(epsilon/2) - 1), each report r
contributes z_r = m/(m - 1) (c/2 v_r[h_{j_r}(x)] + 1/2 - 1/m) to the count of x, so

    count(x) = N+ a + (n - N+) b,  a = m/(m-1) (c/2 + 1/2 - 1/m),  b = m/(m-1) (1/2 - c/2 - 1/m),

with N+ = sum_j P[j, h_j(x)]. Given the hash functions it is unbiased up to collisions: another
string s adds G[x, s] = m/(m-1) (share of rows where h_j(s) = h_j(x) - 1/m) per writer. Among the
candidates queried together these are known, so :meth:`TextSketch.query` solves G n = count for
all of them at once (as :mod:`ldp.mechanisms.cms` does for a finite option list). Strings outside
the candidate list still add G[x, s] per writer, zero on average over hash functions (SHA-256
behaves as a random function of the strings) with variance (m/(m-1))^2 (1/m)(1 - 1/m)/K per writer
squared. The standard error of count(x) therefore has two parts, carried through G^-1:

* randomization: z_r takes two values, so n times their sample variance is (a - b)^2 N+ (n - N+) / n;
* outside collisions: (m/(m-1))^2 (1/m)(1 - 1/m)/K times F2 minus the candidates' squared counts,
  F2 = sum_s n_s^2 estimated from the sketch itself (:meth:`TextSketch.second_moment`), clipped at 0.
  It is a normal approximation of a skewed sum: a popular string left out of the candidate list
  can make a candidate sharing one of its cells look found.

A candidate is *found* when count / standard error exceeds the one-sided normal quantile at
alpha / M over the M candidates queried together (Bonferroni).

References
----------
1. Apple Differential Privacy Team. "Learning with privacy at scale." Apple ML Journal, 2017.
2. Seed 004 (Jeong, Hong, Seo 2020), section 3.2.1, Fig. 5-7, Table 1.
3. N. Alon, Y. Matias, M. Szegedy. "The space complexity of approximating the frequency moments."
   JCSS 58(1), 1999. (Second moments from sketches.)
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ldp.mechanisms.hadamard import hadamard_signs
from ldp.mechanisms.reports import require_bits, require_fields, require_int
from ldp.privacy import binary_keep_probability, check_epsilon
from ldp.text import encode_fields

__all__ = ["HadamardTextSketch", "SketchCounts", "TextCount", "TextSketch"]

HASH_DOMAIN = "murmur-sketch-v1"
MAX_WIDTH = 1024
MAX_HASH_COUNT = 4096


class TextInterval(NamedTuple):
    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True, eq=False)
class SketchCounts:
    """Reports per row (K) and signed cell totals U (K x m); they add up with ``+``.

    U[j, l] sums, over the reports of row j, the +-1 each report puts in cell l: its entry v[l]
    for CMS; y H[index, l] for HCMS (the Hadamard transform of the signed bits per index).
    """

    reports: np.ndarray
    totals: np.ndarray

    @property
    def n(self) -> int:
        return int(self.reports.sum())

    def __add__(self, other: SketchCounts) -> SketchCounts:
        if self.totals.shape != other.totals.shape:
            raise ValueError(f"cannot add sketch counts of shapes {self.totals.shape} and {other.totals.shape}")
        return SketchCounts(self.reports + other.reports, self.totals + other.totals)


@dataclass(frozen=True)
class TextCount:
    """Estimated counts of candidate strings with standard errors and Bonferroni findings."""

    candidates: tuple[str, ...]
    counts: np.ndarray
    standard_errors: np.ndarray
    found: np.ndarray
    n: int

    def interval(self, level: float = 0.95) -> TextInterval:
        """count +- z standard error, per candidate."""
        if not 0 < level < 1:
            raise ValueError(f"level must lie in (0, 1), got {level!r}")
        z = float(stats.norm.isf((1 - level) / 2))
        return TextInterval(self.counts - z * self.standard_errors, self.counts + z * self.standard_errors)


@dataclass(frozen=True, eq=False)
class TextSketch:
    """Count Mean Sketch over hashed strings (see the module docstring).

    >>> sketch = TextSketch(epsilon=4.0, hash_count=64, width=128)
    >>> counts = sketch.simulate_counts(["서울", "부산"], [3000, 1000], rng=1)
    >>> result = sketch.query(counts, ["서울", "부산", "대구"])
    >>> result.found.tolist()
    [True, True, False]
    """

    name: ClassVar[str] = "text-cms"
    epsilon: float
    hash_count: int = 64
    width: int = 128

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        for name, value, low, high in (
            ("hash_count", self.hash_count, 1, MAX_HASH_COUNT),
            ("width", self.width, 2, MAX_WIDTH),
        ):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= value <= high:
                raise ValueError(f"{name} must be an integer in [{low}, {high}], got {value!r}")

    @property
    def keep_probability(self) -> float:
        return binary_keep_probability(self.epsilon / 2)

    @property
    def scale(self) -> float:
        """c = (e^(epsilon/2) + 1) / (e^(epsilon/2) - 1)."""
        return 1 / math.tanh(self.epsilon / 4)

    @property
    def debias(self) -> tuple[float, float]:
        """(alpha, beta): alpha w + beta is unbiased for [cell is the string's], w the report's +-1 there.

        CMS: (c/2, 1/2), Apple's x = K (c/2 v + 1/2) per row.
        """
        return self.scale / 2, 0.5

    def client_spec(self) -> dict[str, Any]:
        return {
            "mechanism": self.name,
            "epsilon": self.epsilon,
            "hash_count": self.hash_count,
            "width": self.width,
            "keep_probability": self.keep_probability,
        }

    def worst_case_log_ratio(self) -> float:
        """Two strings change at most two entries, each by e^(epsilon/2): epsilon."""
        keep = self.keep_probability
        return 2 * math.log(keep / (1 - keep))

    def cell(self, row: int, text: str) -> int:
        """h_j(s): the first SHA-256 word of encode_fields(domain, j, s) modulo width.

        >>> TextSketch(epsilon=1.0, width=128).cell(0, "서울")
        31
        """
        digest = hashlib.sha256(encode_fields(HASH_DOMAIN, row, text)).digest()
        return int.from_bytes(digest[:4], "big") % self.width

    def cells(self, text: str) -> np.ndarray:
        """h_j(s) for every row j."""
        return np.array([self.cell(j, text) for j in range(self.hash_count)])

    # -- reports -------------------------------------------------------------------------------
    @property
    def report_width(self) -> int:
        """Bytes of a packed report: the row (2, little-endian) and the bits (packed, big-endian)."""
        return 2 + (self.width + 7) // 8

    def parse_report(self, obj: Any) -> bytes:
        """Validate ``{"row": j, "bits": [0/1 x width]}`` and pack it; raise InvalidReport."""
        report = require_fields(obj, {"row", "bits"})
        row = require_int(report["row"], "row", 0, self.hash_count - 1)
        bits = np.array(require_bits(report["bits"], "bits", self.width), dtype=np.uint8)
        return row.to_bytes(2, "little") + np.packbits(bits).tobytes()

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        row = np.frombuffer(packed, dtype=np.uint8)
        return {"row": int(row[0]) | int(row[1]) << 8, "bits": np.unpackbits(row[2:])[: self.width].tolist()}

    def tally(self, packed: ArrayLike) -> SketchCounts:
        """Sketch counts of packed reports (n x report_width)."""
        rows = np.asarray(packed, dtype=np.uint8).reshape(-1, self.report_width)
        row = rows[:, 0].astype(np.int64) | rows[:, 1].astype(np.int64) << 8
        if (row >= self.hash_count).any():
            raise ValueError(f"a packed report names a row outside [0, {self.hash_count})")
        return self.tally_reports(row, np.unpackbits(rows[:, 2:], axis=1)[:, : self.width])

    def tally_reports(self, rows: ArrayLike, bits: ArrayLike) -> SketchCounts:
        """Sketch counts of reports given as their rows (n) and bits (n x width)."""
        row_array = np.asarray(rows, dtype=np.int64)
        bit_array = np.asarray(bits, dtype=np.int64).reshape(-1, self.width)
        totals = np.zeros((self.hash_count, self.width), dtype=np.int64)
        np.add.at(totals, row_array, 2 * bit_array - 1)
        return SketchCounts(np.bincount(row_array, minlength=self.hash_count), totals)

    def randomize(self, texts: Sequence[str], *, rng: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """(rows, bits) of reports of normalized strings, as browsers would send them."""
        rng = np.random.default_rng(rng)
        rows = rng.integers(0, self.hash_count, size=len(texts))
        onehot = np.zeros((len(texts), self.width), dtype=np.uint8)
        onehot[np.arange(len(texts)), [self.cell(int(j), t) for j, t in zip(rows, texts, strict=True)]] = 1
        flip = rng.random(onehot.shape) >= self.keep_probability
        return rows, onehot ^ flip.astype(np.uint8)

    def writers_per_cell(self, texts: Sequence[str], true_counts: ArrayLike, rng: np.random.Generator) -> np.ndarray:
        """How many of the ``true_counts[s]`` writers of each ``texts[s]`` fall in each (row, cell), rows uniform."""
        counts = np.asarray(true_counts, dtype=np.int64)
        if counts.shape != (len(texts),) or (counts < 0).any():
            raise ValueError(f"true_counts must be {len(texts)} non-negative integers")
        per_row = np.array([rng.multinomial(c, np.full(self.hash_count, 1 / self.hash_count)) for c in counts])
        hits = np.zeros((self.hash_count, self.width), dtype=np.int64)
        for s, text in enumerate(texts):
            np.add.at(hits, (np.arange(self.hash_count), self.cells(text)), per_row[s])
        return hits

    def simulate_counts(self, texts: Sequence[str], true_counts: ArrayLike, *, rng: Any = None) -> SketchCounts:
        """Sketch counts of a population without making the reports (their exact distribution).

        ``true_counts[s]`` respondents wrote ``texts[s]``; rows are uniform; per (row, cell) the
        +1 count is Binomial(hits, keep) + Binomial(R_j - hits, 1 - keep).
        """
        rng = np.random.default_rng(rng)
        hits = self.writers_per_cell(texts, true_counts, rng)
        reports = hits.sum(axis=1)
        keep = self.keep_probability
        plus = rng.binomial(hits, keep) + rng.binomial(reports[:, None] - hits, 1 - keep)
        return SketchCounts(reports, 2 * plus - reports[:, None])

    # -- queries -------------------------------------------------------------------------------
    def second_moment(self, counts: SketchCounts) -> float:
        """An estimate of F2 = sum_s n_s^2 over the strings written, from the sketch alone.

        Y_jl = alpha U_jl + beta R_j is unbiased for the number of row-j reports whose string hashes
        to l (:attr:`debias`); subtracting the reports' variances, T = sum_jl Y_jl^2 - noise n
        estimates sum_jl (row-j writers in cell l)^2 = sum_j [sum_s n_sj^2 + same-cell pairs], and
        the pairs average (1/m)(R_j^2 - sum_s n_sj^2) over hash functions: sum_j sum_s n_sj^2 ~
        (T - sum_j R_j^2 / m) / (1 - 1/m). Rows are uniform, so E sum_j n_sj^2 = n_s^2 / K +
        n_s (1 - 1/K), and F2 ~ K (that - n (1 - 1/K)).
        """
        (alpha, beta), m = self.debias, self.width
        reports = counts.reports[:, None].astype(float)
        cells = alpha * counts.totals + beta * reports
        # Per report, sum over cells of Var(alpha w + beta): m alpha^2 - (1 - beta)^2 - (m - 1) beta^2.
        noise = m * alpha**2 - (1 - beta) ** 2 - (m - 1) * beta**2
        total = np.sum(cells**2) - noise * counts.n
        within_rows = (total - np.sum(reports**2) / m) / (1 - 1 / m)
        return max(0.0, self.hash_count * (within_rows - counts.n * (1 - 1 / self.hash_count)))

    def query(self, counts: SketchCounts, candidates: Sequence[str], *, alpha: float = 0.05) -> TextCount:
        """How many wrote each candidate (normalized strings), with standard errors and findings."""
        names = tuple(candidates)
        if not names or len(set(names)) != len(names):
            raise ValueError("candidates must be a non-empty list of distinct strings")
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
        n = counts.n
        if n == 0:
            raise ValueError("cannot query zero reports")
        m, (slope, offset) = self.width, self.debias  # not "alpha": that is the test's level
        stretch = m / (m - 1)
        a, b = stretch * (slope + offset - 1 / m), stretch * (offset - slope - 1 / m)
        cells = np.array([self.cells(x) for x in names])  # M x K
        # Reports whose +-1 at the candidate's cell is +1.
        plus = (n + counts.totals[np.arange(self.hash_count), cells].sum(axis=1)) / 2
        sketched = plus * a + (n - plus) * b
        # Collisions among the candidates are known: E[sketched] = G n with
        # G[x, s] = m/(m-1) (share of rows where h_j(x) = h_j(s) - 1/m), G[x, x] = 1.
        shared = (cells[:, None, :] == cells[None, :, :]).mean(axis=2)
        collision = stretch * (shared - 1 / m)
        try:
            inverse = np.linalg.inv(collision)
        except np.linalg.LinAlgError:
            raise ValueError("some candidates share their cell in every row and cannot be counted apart") from None
        estimate = inverse @ sketched
        randomization = (a - b) ** 2 * plus * (n - plus) / n
        outside = max(self.second_moment(counts) - float(np.sum(np.maximum(estimate, 0) ** 2)), 0.0)
        variances = randomization + stretch**2 * (1 / m) * (1 - 1 / m) / self.hash_count * outside
        errors = np.sqrt(np.einsum("xs,s,xs->x", inverse, variances, inverse))
        # A zero standard error (one report, or every report alike) measures nothing: no finding.
        found = (errors > 0) & (estimate > stats.norm.isf(alpha / len(names)) * errors)
        return TextCount(names, estimate, errors, found, n)


@dataclass(frozen=True, eq=False)
class HadamardTextSketch(TextSketch):
    """Apple's Hadamard Count Mean Sketch over hashed strings: one bit per report.

    Client (seed 004, section 3.2.2): row j uniform, cell l = h_j(s) (the same hash as
    :class:`TextSketch`), index i uniform in [0, m) (m a power of 2), w = H[i, l] = (-1)^popcount(i & l),
    kept with probability e^epsilon / (e^epsilon + 1) and flipped otherwise; the report is
    (j, i, bit) with bit 1 for +1. Two strings change the law of one +-1: epsilon exactly.

    Server: per row the signed bits per index, Hadamard-transformed, are the cells' signed totals
    U; with c = (e^epsilon + 1) / (e^epsilon - 1), c y H[i, l] is unbiased for [l is the string's
    cell], so :attr:`debias` is (c, 0) and every query of :class:`TextSketch` applies.

    >>> sketch = HadamardTextSketch(epsilon=4.0, hash_count=64, width=128)
    >>> counts = sketch.simulate_counts(["서울", "부산"], [3000, 1000], rng=1)
    >>> sketch.query(counts, ["서울", "부산", "대구"]).found.tolist()
    [True, True, False]
    """

    name: ClassVar[str] = "text-hcms"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.width & (self.width - 1):
            raise ValueError(f"width must be a power of 2 for the Hadamard transform, got {self.width}")

    @property
    def keep_probability(self) -> float:
        return binary_keep_probability(self.epsilon)

    @property
    def scale(self) -> float:
        """c = (e^epsilon + 1) / (e^epsilon - 1)."""
        return 1 / math.tanh(self.epsilon / 2)

    @property
    def debias(self) -> tuple[float, float]:
        return self.scale, 0.0

    @cached_property
    def signs(self) -> np.ndarray:
        """The Hadamard matrix H[a, b] = (-1)^popcount(a & b), m x m (symmetric)."""
        return hadamard_signs(np.arange(self.width)[:, None], np.arange(self.width)[None, :])

    def worst_case_log_ratio(self) -> float:
        """One +-1 whose law two strings change by e^epsilon: epsilon."""
        keep = self.keep_probability
        return math.log(keep / (1 - keep))

    @property
    def report_width(self) -> int:
        """Bytes of a packed report: row and index (2 bytes each, little-endian) and the bit."""
        return 5

    def parse_report(self, obj: Any) -> bytes:
        """Validate ``{"row": j, "index": i, "bit": 0 or 1}`` and pack it; raise InvalidReport."""
        report = require_fields(obj, {"row", "index", "bit"})
        row = require_int(report["row"], "row", 0, self.hash_count - 1)
        index = require_int(report["index"], "index", 0, self.width - 1)
        bit = require_int(report["bit"], "bit", 0, 1)
        return row.to_bytes(2, "little") + index.to_bytes(2, "little") + bytes([bit])

    def unpack_report(self, packed: bytes) -> dict[str, Any]:
        return {"row": packed[0] | packed[1] << 8, "index": packed[2] | packed[3] << 8, "bit": packed[4]}

    def tally(self, packed: ArrayLike) -> SketchCounts:
        rows = np.asarray(packed, dtype=np.int64).reshape(-1, 5)
        row, index = rows[:, 0] | rows[:, 1] << 8, rows[:, 2] | rows[:, 3] << 8
        if (row >= self.hash_count).any() or (index >= self.width).any():
            raise ValueError("a packed report names a row or index outside the sketch")
        return self.tally_reports(row, index, rows[:, 4])

    def tally_reports(  # type: ignore[override]  # an HCMS report is (row, index, bit), not (row, bits)
        self, rows: ArrayLike, indices: ArrayLike, bits: ArrayLike
    ) -> SketchCounts:
        """Sketch counts of reports given as rows, indices and bits (n each)."""
        row_array = np.asarray(rows, dtype=np.int64)
        signed = np.zeros((self.hash_count, self.width), dtype=np.int64)
        np.add.at(signed, (row_array, np.asarray(indices, dtype=np.int64)), 2 * np.asarray(bits, dtype=np.int64) - 1)
        return SketchCounts(np.bincount(row_array, minlength=self.hash_count), signed @ self.signs)

    def randomize(  # type: ignore[override]  # an HCMS report is (row, index, bit), not (row, bits)
        self, texts: Sequence[str], *, rng: Any = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, indices, bits) of reports of normalized strings, as browsers would send them."""
        rng = np.random.default_rng(rng)
        rows = rng.integers(0, self.hash_count, size=len(texts))
        indices = rng.integers(0, self.width, size=len(texts))
        cells = np.array([self.cell(int(j), t) for j, t in zip(rows, texts, strict=True)], dtype=np.int64)
        sign = hadamard_signs(indices, cells)
        kept = rng.random(len(texts)) < self.keep_probability
        return rows, indices, (np.where(kept, sign, -sign) > 0).astype(np.int64)

    def simulate_counts(self, texts: Sequence[str], true_counts: ArrayLike, *, rng: Any = None) -> SketchCounts:
        """Sketch counts of a population without making the reports (their exact distribution).

        Per row and cell the writers' indices are multinomial over [0, m); per (row, index) the
        reports whose true sign H[i, l] is +1 send bit 1 with the keep probability, the others
        with its complement.
        """
        rng = np.random.default_rng(rng)
        hits = self.writers_per_cell(texts, true_counts, rng)
        spread = rng.multinomial(hits, np.full(self.width, 1 / self.width))  # K x cell x index
        positive = np.einsum("jli,li->ji", spread, (self.signs > 0).astype(np.int64))
        negative = spread.sum(axis=1) - positive
        keep = self.keep_probability
        ones = rng.binomial(positive, keep) + rng.binomial(negative, 1 - keep)
        signed = 2 * ones - spread.sum(axis=1)
        return SketchCounts(hits.sum(axis=1), signed @ self.signs)
