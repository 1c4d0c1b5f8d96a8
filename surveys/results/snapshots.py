"""A live survey's tallies, read at most once per version and per interval, by one job at a time.

A results page needs every tally of the survey (O(cells x shards) rows), its estimates and its
charts. Done on every request of an open survey, that is the cost of every view, poll and 304,
and each new report makes every viewer re-read, re-estimate and redraw at once. Here a survey's
tallies are kept in the cache as a :class:`Snapshot` labelled with the survey's version
(:func:`surveys.responding.versions.survey_version`, a read of at most ``TALLY_SHARDS`` rows):

- younger than ``RESULTS_REFRESH_SECONDS``: served as it is, the version unread (a page drawn reads
  it for its freshness note: the snapshot's age and how many responses it lacks);
- older, the version unchanged: served as it is; the version is read at most once per interval
  while it stays so (the "checked" key);
- older: still served as it is, and a ``refresh_results`` job is queued (one per survey at a
  time: the job key) that reads the tallies, computes the estimates, draws the default page's
  charts and then publishes the new snapshot (:func:`surveys.results.refresh.run_refresh`). No request waits for it.

Only the first view of a survey with no snapshot reads the tallies itself, and publishes them once
its page is drawn.

A snapshot is kept under two keys: its head (version, time, each tally's digest, the hourly
counts: O(questions + hours) bytes) and its tallies (O(cells): 65,536 for a count sketch, 8,256
for a short answer), under a key named by the digests. A 304 or a poll needs only the head (the
page's signature is the digests'); the tallies are read from the cache when a page first asks
for one (:attr:`Snapshot.tallies`). Should they be gone from the cache while the head is not,
they are read now and published again. Estimates and charts are cached by the tallies' digests
(:func:`surveys.results.estimates.cached_estimates`, :func:`surveys.results.charts.cached_chart`).
Exports and jobs read the tallies themselves (``SurveyState.read`` without ``live``), never a snapshot.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache

import ldp
from surveys.models import Randomization, Survey
from surveys.responding import tallies
from surveys.responding.versions import survey_version, version_of

#: How long a snapshot stays in the cache at most (a quiet survey's is simply reused).
SNAPSHOT_SECONDS = 24 * 3600


@dataclass
class Snapshot:
    """Every tally of a survey as read at ``version`` (``computed_at``: ``time.time()`` then).

    The tallies themselves are fetched from the cache on first use (:attr:`tallies`)."""

    survey_id: int
    version: int
    computed_at: float
    digests: dict[int, str]
    hourly: list[tuple[datetime, int]]
    """The hourly response counts read with the tallies (the responses-over-time chart)."""
    current: int | None = None
    """The survey's version when this snapshot was served (None: not read yet, see :meth:`latest`)."""
    pending: bool = False
    """Read by this request, and published (:func:`publish`) once its page is drawn."""
    loaded: dict[int, ldp.Tally] | None = field(default=None, repr=False, compare=False)
    """The tallies, once read (never stored with the head)."""

    def latest(self) -> int:
        """The survey's version now: read once, when first asked for (a 304 or a poll never asks)."""
        if self.current is None:
            self.current = version_of(self.survey_id)
        return self.current

    @property
    def behind(self) -> int:
        """Responses stored since the snapshot was read (0: it is current)."""
        return max(0, self.latest() - self.version)

    @property
    def age(self) -> int:
        """Whole seconds since the snapshot was read."""
        return int(time.time() - self.computed_at)

    @property
    def tallies_key(self) -> str:
        """Where the tallies are cached: named by their digests, so equal tallies share one entry."""
        material = repr(sorted(self.digests.items())).encode()
        return f"murmur:snapshot-tallies:{self.survey_id}:{hashlib.blake2b(material, digest_size=12).hexdigest()}"

    @property
    def tallies(self) -> dict[int, ldp.Tally]:
        """Every tally of the snapshot: from the cache the first time one is asked for."""
        if self.loaded is None:
            found: dict[int, ldp.Tally] | None = cache.get(self.tallies_key)
            if found is None or set(found) != set(self.digests):
                found = self._read_again()
            self.loaded = found
        return self.loaded

    def _read_again(self) -> dict[int, ldp.Tally]:
        """The head outlived its tallies in the cache: read them now, and publish them with the page."""
        read = tallies.read_tallies(Randomization.objects.filter(pk__in=list(self.digests)))
        self.digests = {pk: tallies.tally_digest(t) for pk, t in read.items()}
        self.pending = True
        return read


def _key(survey: Survey) -> str:
    return keys_of(survey.pk)[0]


def _checked_key(survey: Survey) -> str:
    return keys_of(survey.pk)[1]


def keys(survey: Survey) -> list[str]:
    """The cache keys :func:`read` looks at (fetched with others in one ``get_many`` by a 304)."""
    return keys_of(survey.pk)


def keys_of(survey_id: int) -> list[str]:
    """:func:`keys` from the survey's id alone (read before the survey's row is): the head, then when
    it was last checked."""
    return [f"murmur:snapshot-head:{survey_id}", f"murmur:snapshot-checked:{survey_id}"]


def read(
    survey: Survey, randomizations: Callable[[], list[Randomization]], found: dict[str, Any] | None = None
) -> Snapshot:
    """The survey's tallies from its snapshot, or read now the first time (see the module's rules).

    ``randomizations()`` are every randomization of the survey, read only when there is no snapshot
    (a version added since the snapshot holds no reports yet: :func:`filled` gives it an empty
    tally); ``found``, the cache's entries under :func:`keys`
    if already fetched. The survey's version is read only once the snapshot is
    ``RESULTS_REFRESH_SECONDS`` old, and then at most once per interval while it stays the
    snapshot's (the "checked" key): a 304 or a poll within the interval reads nothing but the cache.
    A stale snapshot is served as it is, and a ``refresh_results`` job is queued (one at a time per
    survey) to read the new tallies, compute the estimates, draw the charts and publish them. With
    no snapshot at all the request reads the tallies itself (``pending``) and publishes them once
    its page is drawn (:func:`publish`).
    """
    found = cache.get_many(keys(survey)) if found is None else found
    snapshot: Snapshot | None = found.get(_key(survey))
    if snapshot is None:
        return read_now(survey, randomizations(), survey_version(survey))
    interval = settings.RESULTS_REFRESH_SECONDS
    if time.time() - snapshot.computed_at < interval or found.get(_checked_key(survey)) == snapshot.version:
        return snapshot
    version = snapshot.current = survey_version(survey)
    if version != snapshot.version:
        from surveys.jobs import queue

        queue.enqueue("refresh_results", survey, key=f"refresh:{survey.pk}", params={})
        refreshed: Snapshot | None = cache.get(_key(survey))  # the synchronous transport has run it
        if refreshed is not None and refreshed.version != snapshot.version:
            refreshed.current = version
            return refreshed
    if interval:  # unchanged, or its refresh queued: the version is not read again for an interval
        cache.set(_checked_key(survey), snapshot.version, interval)
    return snapshot


#: How many times :func:`read_now` reads the tallies again while submissions keep landing between
#: its reads of the hourly counts.
CONSISTENT_READS = 3


def read_now(survey: Survey, randomizations: list[Randomization], version: int) -> Snapshot:
    """The tallies and hourly counts read now, as a pending snapshot labelled ``version``.

    The tallies are read between two reads of the hourly counts, again (up to CONSISTENT_READS times)
    until the two agree: every submission adds to both in one statement, so equal counts before and
    after mean the tallies hold exactly the responses the page counts (otherwise a submission landing
    between the reads showed "53 responses" above a card of n = 52 until the next snapshot). If
    submissions never pause, the last read's counts are kept, a few responses ahead of the tallies.
    """
    hourly = tallies.hourly_counts(survey)
    for _ in range(CONSISTENT_READS):
        read = tallies.read_tallies(randomizations)
        after = tallies.hourly_counts(survey)
        if after == hourly:
            break
        hourly = after
    digests = {pk: tallies.tally_digest(t) for pk, t in read.items()}
    return Snapshot(survey.pk, version, time.time(), digests, hourly, current=version, pending=True, loaded=read)


def publish(survey: Survey, snapshot: Snapshot | None) -> None:
    """Make a snapshot this request read the one every reader gets, and let the next refresh happen."""
    if snapshot is None or not snapshot.pending:
        return
    snapshot.pending = False
    head = replace(snapshot, loaded=None, current=None)
    # The tallies first: a reader who finds the head finds them too (set_many keeps this order).
    cache.set_many({snapshot.tallies_key: snapshot.tallies, _key(survey): head}, SNAPSHOT_SECONDS)


def signature_of(digests: dict[int, str], wanted: Iterable[int]) -> str:
    """Changes whenever the tally of any randomization ``wanted`` does (a page's polls and ETags)."""
    digest = hashlib.blake2b(digest_size=8)
    for pk in sorted(wanted):
        digest.update(f"{pk}:{digests[pk]};".encode())
    return digest.hexdigest()


def filled(snapshot: Snapshot, randomizations: list[Randomization]) -> Snapshot:
    """The snapshot with the tally of any randomization made since it was read (read now: rare)."""
    missing = [r for r in randomizations if r.pk not in snapshot.digests]
    if missing:
        read_now = tallies.read_tallies(missing)
        snapshot.tallies.update(read_now)
        snapshot.digests.update({pk: tallies.tally_digest(t) for pk, t in read_now.items()})
    return snapshot
