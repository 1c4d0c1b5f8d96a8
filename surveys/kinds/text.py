"""A short answer: :class:`FreeTextKind` and its "text" summary (:mod:`ldp.textreports`).

Answers are reported as hashed, normalized strings (text-cms, text-hcms or RAPPOR); the organizer
queries candidate strings afterwards, each counted with its estimated count, a p-value and whether
it is found at the false-discovery level :data:`TEXT_ALPHA`.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from django.core.cache import cache
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

import ldp
from ldp.advisor import Z_95
from ldp.text import MAX_TEXT_LENGTH, candidate_list, normalize_text
from ldp.textreports import CandidateCounts
from surveys.costs import TextCost, respondents_for
from surveys.kinds.base import (
    BAND_KINDS,
    CACHE_SECONDS,
    ESTIMATES_VERSION,
    MIN_REPORTS,
    READABLE_SHARE,
    Estimates,
    Found,
    KindError,
    QuestionKind,
    ResultView,
    Summary,
    bars_chart,
    common_columns,
    randomization_digest,
)
from surveys.models import MAX_CANDIDATES, Question, Randomization
from surveys.series import memoization

#: The false-discovery (or family-wise) level at which candidates are listed as found.
TEXT_ALPHA = 0.05


class FreeTextKind(QuestionKind):
    """A short answer: no options; reported as a hashed, normalized string (``ldp.textreports``).

    The organizer may give candidate strings ("how many wrote X?") now or after reports arrive:
    they are normalized as the browser normalizes answers and do not change the randomization.
    """

    def options(self, data: dict[str, Any], question: Question | None) -> list[str]:
        return []

    def candidates(self, data: dict[str, Any]) -> list[str] | None:
        return clean_candidates(data.get("candidates_text") or [])

    def demo_reports(self, question: Question, mechanism: Any, truth: Any, size: int, rng: Any) -> list[bytes]:
        """``truth`` maps named texts to their shares; everyone else writes a text of their own."""
        named = list(truth)
        rest = 1 - sum(truth.values())
        drawn = rng.choice(len(named) + 1, size=size, p=[*truth.values(), rest])
        texts = [normalize_text(named[d]) if d < len(named) else f"other {i}" for i, d in enumerate(drawn)]
        return [mechanism.parse_report(r) for r in mechanism.randomize_reports(texts, rng=rng)]


def clean_candidates(lines: list[str]) -> list[str]:
    """Candidate strings, normalized (:func:`ldp.text.candidate_list`), at most MAX_CANDIDATES; raise KindError."""
    too_long = [line for line in lines if len(line) > MAX_TEXT_LENGTH]
    if too_long:
        message = _("Candidate answers are at most %(length)s characters long.") % {"length": MAX_TEXT_LENGTH}
        raise KindError("candidates_text", message)
    candidates = list(candidate_list(lines))
    if len(candidates) > MAX_CANDIDATES:
        raise KindError("candidates_text", _("Give at most %(count)s candidate answers.") % {"count": MAX_CANDIDATES})
    return candidates


UNCOUNTABLE = gettext_lazy(
    "These candidate answers cannot be counted apart with this question's sketch: some of them share "
    "every hash. Remove one of each such group."
)


def cached_text_query(
    randomization: Randomization, tally: ldp.Tally, digest: str, candidates: list[str]
) -> tuple[CandidateCounts | None, str]:
    """(candidate counts, "") or (None, why not): :meth:`ldp.textreports.TextReports.query`, cached.

    Keyed by the randomization, the tally's digest and the candidates, which the organizer may
    change at any time (they are not part of the randomization).
    """
    if not candidates or not tally.n:
        return None, ""
    material = hashlib.blake2b(json.dumps(candidates).encode(), digest_size=8).hexdigest()
    key = f"murmur:text:{ESTIMATES_VERSION}:{randomization_digest(randomization)}:{digest}:{material}"
    made = cache.get(key)
    if made is None:
        mechanism: Any = randomization.build_mechanism()
        try:
            made = (mechanism.query(tally, candidates, alpha=TEXT_ALPHA), "")
        except (ValueError, np.linalg.LinAlgError):
            made = (None, str(UNCOUNTABLE))
        cache.set(key, made, CACHE_SECONDS)
    return made


#: "Automatic" for a short-answer question: Apple's Count Mean Sketch over the hashed text, which at
#: the usual budgets (ε from 1 to 4) gives a smaller error per report than its one-bit Hadamard variant.
DEFAULT_TEXT_MECHANISM = "text-cms"


class TextSummary(Summary):
    name = "text"
    takes = "text"
    tally_export = "text_tallies"
    queries_candidates = True
    misfit = gettext_lazy(
        "A short answer needs a mechanism for text: a Count Mean Sketch of the text, its Hadamard variant, or RAPPOR."
    )
    keeps_built_params = True  # the shape (and RAPPOR's probabilities, chosen from epsilon) are frozen

    def advise(self, data: dict[str, Any], value_range: Any, n: int, recurring: bool) -> tuple[str, dict[str, Any]]:
        """A count-mean sketch; in a recurring survey RAPPOR, which is memoized
        (:data:`surveys.series.memoization.RECURRING_TEXT_MECHANISM`)."""
        return (memoization.RECURRING_TEXT_MECHANISM if recurring else DEFAULT_TEXT_MECHANISM), {}

    def estimates(self, mechanism: Any, tally: ldp.Tally) -> Estimates:
        """Only the expected error: candidates are counted when queried (:func:`cached_text_query`)."""
        return Estimates(None, None, Z_95 * mechanism.share_standard_error(tally.n))

    def text_query(self, randomization: Randomization, tally: ldp.Tally, digest: str, candidates: list[str]) -> Any:
        return cached_text_query(randomization, tally, digest, candidates)

    def enough(self, result: ResultView) -> bool:
        return result.n >= MIN_REPORTS

    def target(self, result: ResultView) -> float:
        """A candidate's share known within READABLE_SHARE (the reports needed; any n >= MIN_REPORTS is shown)."""
        return READABLE_SHARE

    def reports_needed(self, result: ResultView) -> int:
        return respondents_for(Z_95 * result.mechanism.share_standard_error(1), self.target(result), 1)

    def card(self, result: ResultView, kind: str, view: dict[str, Any]) -> None:
        """Each candidate answer's estimated count and share with 95 % intervals; the ones found listed."""
        rows = view["candidates"] = candidate_rows(result, kind)
        view["found"] = [row for row in rows if row["found"]]
        view["text_method"] = result.text.method if result.text is not None else ""
        if rows:
            columns = [(row["share"], row["share_low"], row["share_high"]) for row in rows]
            view["chart"] = bars_chart(result, "text-chart", [row["label"] for row in rows], columns, kind)

    def few(self, result: ResultView, view: dict[str, Any]) -> None:
        """Each candidate's 95 % band cut to its feasible range (counts in [0, n], shares in [0, 1]):
        however wide, it says "at most ... wrote it" (and "at least ..." once its low end leaves 0).

        With so few reports the query's standard error, estimated from the reports' own spread, can
        be far too small (from one report it is zero), so the band's half-width is the larger of it
        and the mechanism's bound on any share's error (:meth:`ldp.textreports.TextReports.share_standard_error`,
        the one the notice above quotes). Counts are rounded outward, so the sentence never claims
        more than the band; a candidate the sketch could not estimate gets the whole range.
        """
        text, n = result.text, result.n
        if text is None or not n:
            return
        bound = (result.expected_half_width or 0.0) * n
        rows = []
        for i, label in enumerate(text.candidates):
            count, half = float(text.counts[i]), max(Z_95 * float(text.standard_errors[i]), bound)
            low, high = (0.0, float(n)) if math.isnan(count + half) else (count - half, count + half)
            low, high = min(max(low, 0.0), n), min(max(high, 0.0), n)
            rows.append(
                {
                    "label": label,
                    "low": low / n,
                    "high": high / n,
                    "count_low": math.floor(low + 1e-9),
                    "count_high": min(n, math.ceil(high - 1e-9)),
                    "n": n,
                }
            )
        view["few"] = rows

    def export_rows(self, result: ResultView) -> Iterator[dict[str, Any]]:
        """One row per candidate answer: its estimated count (the unbiased columns; the consistent ones
        clipped to [0, n] with the band intersected with it), p-value and finding."""
        unbiased, consistent = candidate_rows(result, "unbiased"), candidate_rows(result, "consistent")
        for i, (row, clipped) in enumerate(zip(unbiased, consistent, strict=True)):
            yield {
                **common_columns(result),
                "statistic": "count",
                "option_index": i,
                "option": row["label"],
                "unbiased": row["count"],
                "standard_error": row["standard_error"],
                "unbiased_low": row["low"],
                "unbiased_high": row["high"],
                "unbiased_band": BAND_KINDS["unbiased"],
                "consistent": clipped["count"],
                "consistent_low": clipped["low"],
                "consistent_high": clipped["high"],
                "consistent_method": "clip",
                "consistent_band": BAND_KINDS["unbiased"],
                "p_value": row["p_value"],
                "found": row["found"],
                "found_by": result.text.method if result.text is not None else "",
            }

    def tally_record(self, question: Question, randomization: Randomization, tally: ldp.Tally) -> dict[str, Any]:
        """The sufficient statistics, enough to re-estimate any candidate's count.

        ``per_row`` counts the reports per sketch row (RAPPOR: per cohort); ``cells`` is, per row, the
        reports with +1 at each cell (text-cms), the signed bits per index (text-hcms) or the set bits
        per Bloom bit (RAPPOR): :class:`ldp.textreports.TextReports`'s flat tally, reshaped.
        """
        mechanism: Any = randomization.build_mechanism()
        rows = mechanism.rows
        return {
            "question_id": question.pk,
            "version": randomization.version,
            "mechanism": randomization.mechanism,
            "epsilon": randomization.epsilon,
            "params": randomization.params,
            "n": tally.n,
            "per_row": tally.counts[:rows].tolist(),
            "cells": tally.counts[rows:].reshape(rows, -1).tolist(),
        }

    def trend_labels(self, question: Question) -> list[str]:
        return list(question.candidates)

    def round_values(self, result: ResultView, labels: list[str], tally: ldp.Tally) -> Found:
        """Each candidate's count over n, standard error over n."""
        counts, _error = cached_text_query(result.randomization, tally, result.digest, labels)
        if counts is None:
            return None
        return np.asarray(counts.counts) / counts.n, np.asarray(counts.standard_errors) / counts.n

    def cost(self, mechanism: Any, n: int, unit: str, advice: str, recurring: bool) -> Any:
        return TextCost(mechanism, n, advice, recurring)

    def describe(self, mechanism: Any, options: list[str], report: dict[str, Any]) -> str:
        if mechanism.name == "rappor":
            return _("a randomized Bloom filter of your answer (cohort %(cohort)s), which alone names no answer") % {
                "cohort": report["cohort"]
            }
        return _("one randomized piece of a sketch of all answers' hashes, which alone names no answer")


def candidate_rows(result: ResultView, kind: str = "consistent") -> list[dict[str, Any]]:
    """Per candidate: count, share (count / n), standard error, 95 % interval, p-value, found.

    "consistent": the count clipped to [0, n] and its interval intersected with [0, n]
    (:meth:`ldp.textreports.CandidateCounts.consistent_interval`); "unbiased": as estimated.
    """
    text = result.text
    if text is None:
        return []
    if kind == "consistent":
        counts, (low, high) = text.consistent_counts, text.consistent_interval(0.95)
    else:
        counts, (low, high) = text.counts, text.interval(0.95)
    return [
        {
            "label": label,
            "count": float(counts[i]),
            "share": float(counts[i]) / text.n,
            "standard_error": float(text.standard_errors[i]),
            "low": float(low[i]),
            "high": float(high[i]),
            "share_low": float(low[i]) / text.n,
            "share_high": float(high[i]) / text.n,
            "p_value": float(text.p_values[i]),
            "found": bool(text.found[i]),
        }
        for i, label in enumerate(text.candidates)
    ]
