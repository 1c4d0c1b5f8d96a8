"""A live survey's tallies, read at most once per version and per interval, by one job at a time.

A results page needs every tally of the survey (O(cells x shards) rows), its estimates and its
charts. Done on every request of an open survey, that is the cost of every view, poll and 304,
and each new report makes every viewer re-read, re-estimate and redraw at once. Here a survey's
tallies are kept in the cache as a :class:`Snapshot` labelled with the survey's version
(:func:`surveys.responding.versions.survey_version`, a read of at most ``TALLY_SHARDS`` rows):

- the version unchanged: the snapshot is served as it is (nothing is read but the version);
- changed, but the snapshot younger than ``RESULTS_REFRESH_SECONDS``: served as it is, with its age
  and how many responses it lacks, so the page can say so;
- older: still served as it is, and a ``refresh_results`` job is queued (one per survey at a
  time: the job key) that reads the tallies, computes the estimates, draws the default page's
  charts and then publishes the new snapshot (:func:`surveys.results.refresh.run_refresh`). No request waits for it.

Only the first view of a survey with no snapshot reads the tallies itself, and publishes them once
its page is drawn. Estimates and charts are cached by the tallies' digests
(:func:`surveys.results.estimates.cached_estimates`, :func:`surveys.results.charts.cached_chart`).
Exports and jobs read the tallies themselves (``SurveyState.read`` without ``live``), never a snapshot.
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
    """The survey's tallies from its snapshot, or read now the first time (see the module's rules).

    ``randomizations`` are every randomization of the survey (a version added since the snapshot
    holds no reports yet: it gets an empty tally). A stale snapshot is served as it is, and a
    ``refresh_results`` job is queued (one at a time per survey) to read the new tallies, compute
    the estimates, draw the charts and publish them. With no snapshot at all the request reads
    the tallies itself (``pending``) and publishes them once its page is drawn (:func:`publish`).
    """
    version = survey_version(survey)
    snapshot: Snapshot | None = cache.get(_key(survey))
    if snapshot is not None:
        snapshot.current = version
        if snapshot.version == version:
            return _filled(snapshot, randomizations)
        if time.time() - snapshot.computed_at >= settings.RESULTS_REFRESH_SECONDS:
            from surveys.jobs import queue

            queue.enqueue("refresh_results", survey, key=f"refresh:{survey.pk}", params={})
            refreshed: Snapshot | None = cache.get(_key(survey))  # the synchronous transport has run it
            if refreshed is not None and refreshed.version != snapshot.version:
                refreshed.current = version
                snapshot = refreshed
        return _filled(snapshot, randomizations)
    return read_now(survey, randomizations, version)


def read_now(survey: Survey, randomizations: list[Randomization], version: int) -> Snapshot:
    """The tallies and hourly counts read now, as a pending snapshot labelled ``version``."""
    read = tallies.read_tallies(randomizations)
    digests = {pk: tallies.tally_digest(t) for pk, t in read.items()}
    hourly = tallies.hourly_counts(survey)
    return Snapshot(version, time.time(), read, digests, hourly, current=version, pending=True)


def publish(survey: Survey, snapshot: Snapshot | None) -> None:
    """Make a snapshot this request read the one every reader gets, and let the next refresh happen."""
    if snapshot is None or not snapshot.pending:
        return
    snapshot.pending = False
    cache.set(_key(survey), snapshot, SNAPSHOT_SECONDS)


def _filled(snapshot: Snapshot, randomizations: list[Randomization]) -> Snapshot:
    """The snapshot with the tally of any randomization made since it was read (read now: rare)."""
    missing = [r for r in randomizations if r.pk not in snapshot.tallies]
    if missing:
        read_now = tallies.read_tallies(missing)
        snapshot.tallies.update(read_now)
        snapshot.digests.update({pk: tallies.tally_digest(t) for pk, t in read_now.items()})
    return snapshot
