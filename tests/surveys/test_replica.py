"""Results pages may read from a streaming replica; everything else reads from the primary."""

from __future__ import annotations

from types import SimpleNamespace

from django.urls import reverse

from surveys import replica
from surveys.replica import REPLICA, ResultsReplicaRouter, results_reads
from tests.base import make_open_survey


def with_replica(monkeypatch):
    monkeypatch.setattr(replica, "settings", SimpleNamespace(DATABASES={"default": {}, REPLICA: {}}))


def test_reads_go_to_the_replica_only_inside_results(monkeypatch):
    router = ResultsReplicaRouter()
    assert router.db_for_read(object) is None  # no replica configured: Django's default
    with_replica(monkeypatch)
    assert router.db_for_read(object) is None
    with results_reads():
        assert router.db_for_read(object) == REPLICA
        assert router.db_for_write(object) == "default"
    assert router.db_for_read(object) is None
    assert router.allow_migrate(REPLICA, "surveys") is False


def test_results_views_read_from_the_replica_and_the_builder_does_not(organizer_client, organizer, monkeypatch):
    survey = make_open_survey(organizer)
    with_replica(monkeypatch)
    seen = []
    real = ResultsReplicaRouter.db_for_read

    def record(self, model, **hints):
        alias = real(self, model, **hints)
        seen.append(alias)
        return None  # the test database has no replica alias: record the choice, read the primary

    monkeypatch.setattr(ResultsReplicaRouter, "db_for_read", record)
    organizer_client.get(reverse("survey_results", args=[survey.pk]))
    assert REPLICA in seen
    seen.clear()
    organizer_client.get(reverse("survey_detail", args=[survey.pk]))
    assert seen and REPLICA not in seen


def test_the_cross_tabs_pair_table_is_read_where_the_tallies_are(organizer_client, organizer, monkeypatch):
    from surveys.models import PairCount
    from tests.base import make_joint_reports

    survey = make_open_survey(organizer, questions=2)
    first, second = survey.questions.all()
    make_joint_reports([first, second], [[0, 1], [2, 0], [1, 1]], seed=3)
    with_replica(monkeypatch)
    seen = []
    real = ResultsReplicaRouter.db_for_read

    def record(self, model, **hints):
        seen.append((model, real(self, model, **hints)))
        return None  # the test database has no replica alias: record the choice, read the primary

    monkeypatch.setattr(ResultsReplicaRouter, "db_for_read", record)
    query = f"?first={first.pk}&second={second.pk}"
    assert organizer_client.get(reverse("survey_crosstab", args=[survey.pk]) + query).status_code == 200
    assert (PairCount, REPLICA) in seen
