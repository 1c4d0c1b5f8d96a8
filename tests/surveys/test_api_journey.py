"""A script's whole journey: build a survey through the API, collect 500 responses through the submit
API as browsers send them, and read through the API the very numbers the results page shows."""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.urls import reverse

from surveys.models import Survey
from surveys.responding.submissions import new_token
from tests.surveys.test_api import call, make_token
from tests.surveys.test_submit import valid_reports

RESPONSES = 500


@pytest.mark.slow
@pytest.mark.django_db
def test_estimates_read_through_the_api_are_the_results_pages(client, organizer, settings):
    settings.RATE_LIMITS_ENABLED = False
    token = make_token(organizer)
    created = call(client, token, "post", "/api/v1/surveys", {"title": "Commute", "allow_repeat_responses": True})
    survey_id = created.json()["id"]
    questions = f"/api/v1/surveys/{survey_id}/questions"
    choice = {"text": "Mode?", "options": ["Walk", "Bike", "Bus", "Car"], "epsilon": 1.5}
    number = {"text": "Minutes?", "kind": "numeric", "range_low": 0, "range_high": 60, "epsilon": 1.0}
    for body in (choice, number):
        assert call(client, token, "post", questions, body).status_code == 201
    assert call(client, token, "post", f"/api/v1/surveys/{survey_id}/open").status_code == 200

    survey = Survey.objects.get(pk=survey_id)
    rng = np.random.default_rng(20261127)
    modes = rng.choice(4, size=RESPONSES, p=[0.4, 0.3, 0.2, 0.1])
    minutes = np.clip(rng.normal(25, 10, size=RESPONSES).round(), 0, 60)
    submit = reverse("submit", args=[survey.slug])
    for mode, minute in zip(modes, minutes, strict=True):
        body = {"token": new_token(survey), "reports": valid_reports(survey, [mode, minute], seed=rng)}
        assert client.post(submit, json.dumps(body), content_type="application/json").status_code == 201

    api_rows = call(client, token, "get", f"/api/v1/surveys/{survey_id}/estimates").json()
    assert api_rows["reports"] == 2 * RESPONSES
    client.force_login(organizer)
    page = client.get(reverse("survey_results", args=[survey_id]))
    cards = {card["question"].pk: card for card in page.context["cards"]}
    compared = 0
    for row in api_rows["estimates"]:
        card = cards[row["question_id"]]
        assert row["n"] == card["result"].n == RESPONSES and row["enough"] == card["result"].enough
        if row["statistic"] == "share":
            shown = card["rows"][row["option_index"]]
            assert (row["consistent"], row["consistent_low"], row["consistent_high"]) == (
                shown["estimate"],
                shown["low"],
                shown["high"],
            )
        else:
            shown = card["mean"]
            assert (row["consistent"], row["consistent_low"], row["consistent_high"]) == (
                shown["value"],
                shown["low"],
                shown["high"],
            )
        compared += 1
    assert compared == 4 + 1
