"""Manipulation check of a question's reports, for the dashboard and the estimates export.

The science is :func:`ldp.integrity.assess`: whether the reports are consistent with the
mechanism, the estimated share of fake reports and the options they favor, and an estimate with
them removed. Here it is computed once per (randomization, tally) and cached like the estimates
(keyed by the tally's digest and, for bit-vector mechanisms, the weight histogram's, which the
digest does not cover), and labeled with the question's options when a page is drawn.

Whether a recovered estimate is shown at all is the mechanism's measured
:func:`ldp.integrity.capability`: only where the poisoning experiment found it closer to the truth
than the plain estimate under the maximal-gain attack; elsewhere the page says that this
randomization cannot undo (or detect) such fakes, and the export leaves "recovered" empty.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.core.cache import cache

import ldp
from ldp import integrity

#: Bump when ldp.integrity changes, so results cached by older code are not served.
INTEGRITY_VERSION = 4
#: Cached results never go stale (the key names the exact tally); this only bounds memory.
CACHE_SECONDS = 7 * 24 * 3600
#: Fewer reports than this are not checked (the tests' normal approximations need some).
MIN_REPORTS = 10


@dataclass(frozen=True)
class IntegrityRow:
    label: str
    plain: float
    recovered: float
    low: float | None = None
    high: float | None = None
    """The recovered estimate's approximate 95 % interval, clipped to [0, 1]."""


@dataclass(frozen=True)
class IntegrityCheck:
    """One question's manipulation check, labeled for the page (see :func:`ldp.integrity.assess`)."""

    significant: bool
    p_value: float
    fake_share: float
    fake_share_low: float
    fake_share_high: float
    favored: list[str]
    rows: list[IntegrityRow]
    weight_reports: int
    recovery: str
    """"weights" or "concentrated" (see :class:`ldp.integrity.IntegrityResult`), or ""."""
    recovers: bool = False
    """Whether this mechanism's recovered estimate was measured to undo the maximal-gain attack
    (:func:`ldp.integrity.capability`); if not, ``rows`` carry no recovered values and none is shown."""
    detects: bool = False
    """Whether the check was measured to flag the maximal-gain attack at 10 % fakes at least half the time."""


def cached_assessment(mechanism: Any, tally: ldp.Tally, key: str) -> integrity.IntegrityResult | None:
    """:func:`ldp.integrity.assess` of a frequency question's tally, once per ``key`` and histogram.

    The mechanism is one of choices (:attr:`surveys.kinds.base.Summary.choice_reports`: its caller
    checks); None below MIN_REPORTS reports.
    """
    if tally.n < MIN_REPORTS:
        return None
    profile = hashlib.blake2b(digest_size=8)
    if tally.profile is not None:
        profile.update(np.ascontiguousarray(tally.profile, dtype=np.int64).tobytes())
    cache_key = f"murmur:integrity:{INTEGRITY_VERSION}:{key}:{profile.hexdigest()}"
    result = cache.get(cache_key)
    if result is None:
        result = integrity.assess(mechanism, tally)
        cache.set(cache_key, result, CACHE_SECONDS)
    return result


def labeled(
    result: integrity.IntegrityResult | None, options: list[str], capability: integrity.Capability | None = None
) -> IntegrityCheck | None:
    """The check with the question's option labels, or None if there is none.

    Without ``capability.recovers`` the rows' recovered values are the plain ones, without an interval,
    and no favored options are named (both come from a recovery that was not measured to work).
    """
    if result is None:
        return None
    capability = capability or integrity.Capability(False)
    if not capability.recovers:
        result = dataclasses.replace(result, recovered=result.plain, recovered_errors=None, favored=(), recovery="")
    low, high = result.fake_share_interval
    errors = result.recovered_errors
    rows = [
        IntegrityRow(
            label,
            float(result.plain[i]),
            float(result.recovered[i]),
            None if errors is None else max(0.0, float(result.recovered[i] - 1.96 * errors[i])),
            None if errors is None else min(1.0, float(result.recovered[i] + 1.96 * errors[i])),
        )
        for i, label in enumerate(options[: result.plain.size])
    ]
    return IntegrityCheck(
        significant=result.significant,
        p_value=result.p_value,
        fake_share=result.fake_share,
        fake_share_low=low,
        fake_share_high=high,
        favored=[options[i] for i in result.favored if i < len(options)],
        rows=rows,
        weight_reports=result.weight_reports,
        recovery=result.recovery,
        recovers=capability.recovers,
        detects=capability.detects,
    )


def check(question_options: list[str], mechanism: Any, tally: ldp.Tally, key: str) -> IntegrityCheck | None:
    """The labeled, cached manipulation check of one randomization's tally."""
    return labeled(cached_assessment(mechanism, tally, key), question_options, integrity.capability(mechanism))


def export_fields(check: IntegrityCheck | None, option: int) -> dict[str, object]:
    """The check's columns for one option's row of the estimates export (empty without a check)."""
    if check is None:
        return dict.fromkeys(EXPORT_FIELDS)
    return {
        "manipulation_p_value": check.p_value,
        "manipulation_significant": check.significant,
        "fake_share": check.fake_share,
        "fake_share_low": check.fake_share_low,
        "fake_share_high": check.fake_share_high,
        "favored_by_fakes": check.rows[option].label in check.favored,
        "recovered": check.rows[option].recovered if check.recovers else None,
    }


EXPORT_FIELDS = [
    "manipulation_p_value",
    "manipulation_significant",
    "fake_share",
    "fake_share_low",
    "fake_share_high",
    "favored_by_fakes",
    "recovered",
]
