"""Free text with a Count Mean Sketch over hashed strings (ldp.freetext)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ldp.freetext import HadamardTextSketch, TextSketch
from ldp.mechanisms.reports import InvalidReport
from ldp.privacy import worst_case_log_ratio
from ldp.text import normalize_text


def test_a_row_enumerated_over_every_cell_and_report_has_worst_log_ratio_epsilon():
    sketch = TextSketch(epsilon=1.5, hash_count=2, width=4)
    keep = sketch.keep_probability
    reports = np.array(list(itertools.product([0, 1], repeat=4)))
    table = [np.prod(np.where(reports == (np.arange(4) == cell), keep, 1 - keep), axis=1) for cell in range(4)]
    assert math.isclose(worst_case_log_ratio(table), 1.5, rel_tol=1e-12)
    assert math.isclose(sketch.worst_case_log_ratio(), 1.5, rel_tol=1e-12)


def test_randomized_reports_and_simulated_counts_agree_and_count_the_answers():
    # Both are queried for the same population; their estimates must each lie within 4 of
    # their own standard errors of the truth (2000 / 500 / 0 writers).
    sketch = TextSketch(epsilon=3.0, hash_count=16, width=64)
    texts = [normalize_text(t) for t in ["Seoul", "Busan", "Daegu"]]
    population = [texts[0]] * 2000 + [texts[1]] * 500
    rows, bits = sketch.randomize(population, rng=1)
    reports = [sketch.parse_report({"row": int(j), "bits": b.tolist()}) for j, b in zip(rows, bits, strict=True)]
    packed = np.frombuffer(b"".join(reports), dtype=np.uint8).reshape(len(reports), -1)
    assert sketch.unpack_report(reports[0]) == {"row": int(rows[0]), "bits": bits[0].tolist()}
    from_reports = sketch.query(sketch.tally(packed), texts)
    assert np.array_equal(sketch.tally_reports(rows, bits).totals, sketch.tally(packed).totals)
    simulated = sketch.query(sketch.simulate_counts(texts, [2000, 500, 0], rng=2), texts)
    for result in (from_reports, simulated):
        assert np.all(np.abs(result.counts - [2000, 500, 0]) <= 4 * result.standard_errors)
        assert result.n == 2500


def test_reports_are_validated():
    sketch = TextSketch(epsilon=1.0, hash_count=4, width=8)
    assert sketch.parse_report({"row": 3, "bits": [0, 1, 0, 0, 0, 0, 0, 1]}) == b"\x03\x00\x41"
    for report, message in (
        ({"row": 4, "bits": [0] * 8}, "row must lie"),
        ({"row": 0, "bits": [0] * 7}, "bits must have 8 entries"),
        ({"row": 0, "bits": [0] * 7 + [3]}, "must be 0 or 1"),
        ({"row": 0}, "exactly the fields"),
    ):
        with pytest.raises(InvalidReport, match=message):
            sketch.parse_report(report)


def test_queries_refuse_bad_input():
    sketch = TextSketch(epsilon=1.0)
    counts = sketch.simulate_counts(["a"], [10], rng=1)
    with pytest.raises(ValueError, match="non-empty list of distinct"):
        sketch.query(counts, [])
    with pytest.raises(ValueError, match="distinct"):
        sketch.query(counts, ["a", "a"])
    narrow = TextSketch(epsilon=1.0, hash_count=1, width=2)
    shared = [t for t in ("a", "b", "c", "d") if narrow.cell(0, t) == narrow.cell(0, "a")][:2]
    with pytest.raises(ValueError, match="cannot be counted apart"):
        narrow.query(narrow.simulate_counts(["a"], [10], rng=1), shared)
    with pytest.raises(ValueError, match="alpha"):
        sketch.query(counts, ["a"], alpha=0)
    with pytest.raises(ValueError, match="zero reports"):
        sketch.query(sketch.simulate_counts(["a"], [0], rng=1), ["a"])
    with pytest.raises(ValueError, match="width"):
        TextSketch(epsilon=1.0, width=1)


@pytest.mark.statistical
@pytest.mark.parametrize("kind", [TextSketch, HadamardTextSketch], ids=["cms", "hcms"])
@pytest.mark.slow
def test_intervals_cover_and_findings_stay_within_the_false_discovery_level(kind):
    """Zipf(1.1) over 100 strings plus 100 decoys, n = 100,000, epsilon = 2, K = 64, m = 128.

    30 seeded surveys. Bands at 95 % must cover the truth for 93-97 % of the 200 x 30 candidates
    (randomization plus the collision term); the false-discovery rate must average at most 0.05;
    the 8 most common strings (each >= 2,373 writers) must be found in >= 95 % of surveys; the
    sketch's estimate of F2 = sum of squared counts must average within 5 % of the truth.
    """
    sketch = kind(epsilon=2.0, hash_count=64, width=128)
    written = [f"답변 {i}" for i in range(100)]
    candidates = written + [f"decoy {i}" for i in range(100)]
    shares = 1 / np.arange(1, 101) ** 1.1
    shares /= shares.sum()
    rng = np.random.default_rng(17)
    covered, false_rates, top, moments = [], [], [], []
    for _ in range(30):
        true = np.concatenate([rng.multinomial(100_000, shares), np.zeros(100, dtype=np.int64)])
        counts = sketch.simulate_counts(candidates, true, rng=rng)
        result = sketch.query(counts, candidates)
        moments.append(sketch.second_moment(counts) / np.sum(true.astype(float) ** 2))
        low, high = result.interval()
        covered.append(np.mean((low <= true) & (true <= high)))
        found = np.flatnonzero(result.found)
        false_rates.append(np.mean(true[found] == 0) if found.size else 0.0)
        top.append(result.found[:8].mean())
    assert 0.93 <= np.mean(covered) <= 0.97
    assert np.mean(false_rates) <= 0.05
    assert np.mean(top) >= 0.95
    assert abs(np.mean(moments) - 1) <= 0.05


def test_a_hadamard_report_enumerated_over_cells_indices_and_bits_has_worst_log_ratio_epsilon():
    sketch = HadamardTextSketch(epsilon=1.5, hash_count=1, width=8)
    keep = sketch.keep_probability
    signs = np.array([[1 if bin(i & cell).count("1") % 2 == 0 else -1 for i in range(8)] for cell in range(8)])
    # Report (index i, bit b): P = 1/m (keep if b matches H[i, cell] else 1 - keep); rows are uniform.
    table = [
        np.concatenate([np.where(row > 0, keep, 1 - keep), np.where(row > 0, 1 - keep, keep)]) / 8 for row in signs
    ]
    assert math.isclose(worst_case_log_ratio(table), 1.5, rel_tol=1e-12)
    assert math.isclose(sketch.worst_case_log_ratio(), 1.5, rel_tol=1e-12)


def test_hadamard_reports_are_validated_packed_tallied_and_counted():
    sketch = HadamardTextSketch(epsilon=3.0, hash_count=16, width=64)
    assert sketch.parse_report({"row": 15, "index": 63, "bit": 1}) == b"\x0f\x00\x3f\x00\x01"
    assert sketch.unpack_report(b"\x0f\x00\x3f\x00\x01") == {"row": 15, "index": 63, "bit": 1}
    for report, message in (
        ({"row": 16, "index": 0, "bit": 1}, "row must lie"),
        ({"row": 0, "index": 64, "bit": 1}, "index must lie"),
        ({"row": 0, "index": 0, "bit": 2}, "bit must lie"),
        ({"row": 0, "bits": [1]}, "exactly the fields"),
    ):
        with pytest.raises(InvalidReport, match=message):
            sketch.parse_report(report)
    with pytest.raises(ValueError, match="power of 2"):
        HadamardTextSketch(epsilon=1.0, width=100)
    texts = ["seoul", "busan", "daegu"]
    rows, indices, bits = sketch.randomize([texts[0]] * 3000 + [texts[1]] * 1000, rng=5)
    packed = np.frombuffer(
        b"".join(
            sketch.parse_report({"row": int(j), "index": int(i), "bit": int(b)})
            for j, i, b in zip(rows, indices, bits, strict=True)
        ),
        dtype=np.uint8,
    )
    from_reports = sketch.query(sketch.tally(packed), texts)
    simulated = sketch.query(sketch.simulate_counts(texts, [3000, 1000, 0], rng=6), texts)
    for result in (from_reports, simulated):
        assert np.all(np.abs(result.counts - [3000, 1000, 0]) <= 4 * result.standard_errors)


@pytest.mark.parametrize("kind", [TextSketch, HadamardTextSketch], ids=["cms", "hcms"])
def test_found_means_significant_at_the_level_asked_with_bonferroni(kind):
    sketch = kind(epsilon=2.0, hash_count=32, width=64)
    texts = ["a", "b", "c", "d"]
    counts = sketch.simulate_counts(texts, [4000, 300, 100, 0], rng=8)
    for alpha in (0.5, 0.05, 1e-6):
        result = sketch.query(counts, texts, alpha=alpha)
        z = result.counts / result.standard_errors
        assert result.found.tolist() == (z > stats.norm.isf(alpha / 4)).tolist()


@pytest.mark.parametrize("kind", [TextSketch, HadamardTextSketch])
def test_one_report_is_counted_without_dividing_by_a_zero_error(kind):
    # One report gives a zero plug-in variance; the query must not divide by it nor claim a finding.
    sketch = kind(epsilon=1.0)
    counts = sketch.simulate_counts(["a", "b"], [1, 0], rng=3)
    with np.errstate(all="raise"):
        result = sketch.query(counts, ["a", "b"])
    assert result.n == 1
    assert np.all(np.isfinite(result.counts)) and np.all(result.standard_errors >= 0)
    assert not result.found[result.standard_errors == 0].any()
