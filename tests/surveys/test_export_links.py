"""The results pages offer the raw-report downloads only to readers who may take them.

Viewers read results, not reports (:mod:`surveys.access`): the export routes refuse them, so their
pages must not offer the links either, while owners, editors and staff get every link, each of
which answers them.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.base import read_body
from tests.teams import make_team

RAW = ("export_reports", "export_workbook", "exports", "export_sav", "export_dta", "export_r")


def raw_links(survey_pk: int) -> list[str]:
    urls = [reverse("export_reports", args=[survey_pk, fmt]) for fmt in ("csv", "json")]
    return urls + [reverse(name, args=[survey_pk]) for name in RAW[1:]]


@pytest.mark.parametrize("who, offered", [("owner", True), ("editor", True), ("staff", True), ("viewer", False)])
@pytest.mark.parametrize("page", ["survey_results", "question_results"])
def test_raw_report_links_follow_the_role(client, db, who, offered, page):
    team = make_team()
    client.force_login(team.users[who])
    args = [team.survey.pk] if page == "survey_results" else [team.survey.pk, team.question.pk]
    response = client.get(reverse(page, args=args))
    assert response.status_code == 200
    html = response.content.decode()
    assert reverse("export_estimates", args=[team.survey.pk, "csv"]) in html or page == "question_results"
    shown = [url for url in raw_links(team.survey.pk) if f'href="{url}"' in html]
    if page == "survey_results":
        assert shown == (raw_links(team.survey.pk) if offered else [])
    else:
        assert offered or shown == []
    for url in shown:  # every link offered is one the reader may follow
        followed = client.get(url)
        read_body(followed)  # an export file, read to its end (which closes it)
        assert followed.status_code in (200, 202), url


def test_a_viewer_promoted_to_editor_gets_the_links_on_the_next_page(client, db):
    team = make_team()
    client.force_login(team.users["viewer"])
    url = reverse("survey_results", args=[team.survey.pk])
    first = raw_links(team.survey.pk)[0]
    assert f'href="{first}"' not in client.get(url).content.decode()
    membership = team.membership("viewer")
    membership.role = "editor"
    membership.save()
    assert f'href="{first}"' in client.get(url).content.decode()  # not the viewer's rendering, kept
