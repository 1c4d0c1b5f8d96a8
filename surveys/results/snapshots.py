"""A live survey's tallies, read at most once per version and per interval, by one worker at a time.

A results page needs every tally of the survey (O(cells x shards) rows). Read on every request of an
open survey, that is the cost of every view, poll and 304, and each new report makes every viewer
re-read and re-estimate at once. Here a survey's tallies are kept in the cache as a
:class:`Snapshot` labelled with the survey's version (:func:`surveys.responding.versions.survey_version`,
a read of at most ``TALLY_SHARDS`` rows):

- the version unchanged: the snapshot is served as it is (nothing is read but the version);
- changed, but the snapshot younger than ``RESULTS_REFRESH_SECONDS``: served as it is, with its age
  and how many responses it lacks, so the page can say so;
- older: one request re-reads the tallies (single flight: a lock key taken with ``cache.add``)
  and draws its page, while the others serve the previous snapshot with its age; then it
  publishes the new one (:func:`publish`).

Estimates and charts are cached by the tallies' digests (:func:`surveys.results.estimates.cached_estimates`,
:func:`surveys.results.charts.cached_chart`), so they too are recomputed at most once per snapshot.
Exports and jobs read the tallies themselves (``SurveyState.read(..., live=False)``), never a snapshot.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.cache import cache

import ldp
from surveys.models import Randomization, Survey
from surveys.responding import tallies
from surveys.responding.versions import survey_version

#: How long a snapshot stays in the cache at most (a quiet survey's is simply reused).
SNAPSHOT_SECONDS = 24 * 3600
#: How long a worker may hold the recompute lock before another may take it (it died).
LOCK_SECONDS = 60


@dataclass
class Snapshot:
    """Every tally of a survey as read at ``version`` (``computed_at``: ``time.time()`` then)."""

    version: int
    computed_at: float
    tallies: dict[int, ldp.Tally]
    digests: dict[int, str]
    hourly: list[tuple[datetime, int]]
    """The hourly response counts read with the tallies (the responses-over-time chart)."""
    current: int = 0
    """The survey's version when this snapshot was served."""
    pending: bool = False
    """Read by this request, and published (:func:`publish`) once its page is drawn."""

    @property
    def behind(self) -> int:
        """Responses stored since the snapshot was read (0: it is current)."""
        return max(0, self.current - self.version)

    @property
    def age(self) -> int:
        """Whole seconds since the snapshot was read."""
        return int(time.time() - self.computed_at)


def _key(survey: Survey) -> str:
    return f"murmur:snapshot:{survey.pk}"


def read(survey: Survey, randomizations: list[Randomization]) -> Snapshot:
    """The survey's tallies from a fresh enough snapshot, or read now (see the module's rules).

    ``randomizations`` are every randomization of the survey (a version added since the snapshot
    holds no reports yet: it gets an empty tally). A snapshot read now is ``pending``: the others
    keep serving the previous one, whose estimates and charts are drawn, until this request has
    drawn its page and calls :func:`publish` (or its lock expires, if it died).
    """
    version = survey_version(survey)
    snapshot: Snapshot | None = cache.get(_key(survey))
    if snapshot is not None:
        snapshot.current = version
        fresh_enough = time.time() - snapshot.computed_at < settings.RESULTS_REFRESH_SECONDS
        if snapshot.version == version or fresh_enough:
            return _filled(snapshot, randomizations)
        if not cache.add(_key(survey) + ":lock", 1, LOCK_SECONDS):  # another worker is reading
            return _filled(snapshot, randomizations)
    else:  # nothing to serve meanwhile: every reader reads
        cache.add(_key(survey) + ":lock", 1, LOCK_SECONDS)
    read_now = tallies.read_tallies(randomizations)
    digests = {pk: tallies.tally_digest(t) for pk, t in read_now.items()}
    hourly = tallies.hourly_counts(survey)
    return Snapshot(version, time.time(), read_now, digests, hourly, current=version, pending=True)


def publish(survey: Survey, snapshot: Snapshot | None) -> None:
    """Make a snapshot this request read the one every reader gets, and let the next refresh happen."""
    if snapshot is None or not snapshot.pending:
        return
    snapshot.pending = False
    cache.set(_key(survey), snapshot, SNAPSHOT_SECONDS)
    cache.delete(_key(survey) + ":lock")


def _filled(snapshot: Snapshot, randomizations: list[Randomization]) -> Snapshot:
    """The snapshot with the tally of any randomization made since it was read (read now: rare)."""
    missing = [r for r in randomizations if r.pk not in snapshot.tallies]
    if missing:
        read_now = tallies.read_tallies(missing)
        snapshot.tallies.update(read_now)
        snapshot.digests.update({pk: tallies.tally_digest(t) for pk, t in read_now.items()})
    return snapshot
