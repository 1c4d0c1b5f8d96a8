"""Time zones: organizers enter and read dates in their own zone, with its name."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse

from surveys.models import Survey
from surveys.timezones import COOKIE
from tests.base import make_open_survey, make_survey

UTC = dt.UTC


def settings_post(survey, **changes):
    data = {
        "title": survey.title,
        "description": "",
        "expected_respondents": 100,
        "epsilon_cap": "",
        "closes_at": "",
        "response_limit": "",
        **changes,
    }
    return data


@pytest.mark.parametrize(
    ("zone", "stored_utc"),
    [
        ("Asia/Seoul", dt.datetime(2030, 12, 1, 9, 0, tzinfo=UTC)),
        ("America/New_York", dt.datetime(2030, 12, 1, 23, 0, tzinfo=UTC)),
    ],
)
def test_a_close_date_is_read_in_the_browsers_zone(organizer_client, organizer, zone, stored_utc):
    survey = make_survey(organizer)
    organizer_client.cookies[COOKIE] = zone
    response = organizer_client.post(
        reverse("survey_settings", args=[survey.pk]), settings_post(survey, closes_at="2030-12-01T18:00")
    )
    assert response.status_code == 302
    survey.refresh_from_db()
    assert survey.closes_at == stored_utc
    page = organizer_client.get(survey.get_absolute_url()).content.decode()
    # The form shows it back as it was entered, and says in which zone.
    assert 'value="2030-12-01T18:00"' in page
    assert f"In your time zone, {zone}" in page


def test_korean_pages_default_to_seoul_and_an_unknown_zone_is_ignored(organizer_client, organizer):
    survey = make_open_survey(organizer, closes_at=dt.datetime(2030, 12, 1, 9, 0, tzinfo=UTC))
    organizer_client.cookies[COOKIE] = "Mars/Olympus_Mons"
    english = organizer_client.get(survey.get_absolute_url()).content.decode()
    assert "(UTC)" in english and "9 a.m." in english
    korean = organizer_client.get(survey.get_absolute_url(), headers={"accept-language": "ko"}).content.decode()
    assert "(Asia/Seoul)" in korean and "18:00" in korean


def test_respondents_read_the_close_time_in_a_time_element_the_browser_localizes(client, organizer):
    when = dt.datetime(2030, 12, 1, 9, 0, tzinfo=UTC)
    survey = make_open_survey(organizer, closes_at=when)
    page = client.get(reverse("respond", args=[survey.slug])).content.decode()
    assert f'<time datetime="{when.isoformat()}" data-local>' in page
    # The answer page never asks the browser to remember its zone in a cookie.
    assert "data-remember-zone" not in page
    assert "data-remember-zone" in client.get(reverse("home")).content.decode()
    assert Survey.objects.count() == 1
