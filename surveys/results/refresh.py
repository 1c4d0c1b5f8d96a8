"""The ``refresh_results`` job: a live survey's new snapshot read, estimated and drawn, then published.

See :mod:`surveys.results.snapshots` for when it is queued and what readers get meanwhile.
"""

from __future__ import annotations

from typing import Any

from surveys.jobs import guard
from surveys.models import Randomization
from surveys.responding import tallies
from surveys.responding.versions import survey_version
from surveys.results import snapshots
from surveys.results.cards import matrix_cards, responses_timeline, result_view
from surveys.results.estimates import SurveyState


def run_refresh(job: Any, progress: Any) -> dict[str, int]:
    """The ``refresh_results`` task: read a survey's tallies, compute its estimates and draw the
    results page's charts (consistent shares, each option's bands: the default page), then publish.

    Readers meanwhile get the previous snapshot, whose charts are drawn; after it, the new one's.
    """
    guard.off_request_path("Refreshing a survey's results")
    survey = job.survey
    tallies.fold_deltas(survey)  # its pending increments into the cells (readers add what is left)
    version = survey_version(survey)
    snapshot = snapshots.read_now(survey, list(Randomization.objects.filter(question__survey=survey)), version)
    state = SurveyState.read(survey, snapshot=snapshot)
    matrix_cards([result_view(r, "consistent", "option") for r in state.all_results()], "consistent", "option")
    responses_timeline(survey.pk, snapshot.hourly)
    snapshots.publish(survey, snapshot)
    return {"version": version}
