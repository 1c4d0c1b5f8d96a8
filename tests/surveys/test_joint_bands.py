"""Bands that hold for all options at once (issue 15, item 4), offered beside each option's own."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.urls import reverse

from surveys import actions
from tests.base import make_number_question, make_question, make_reports, make_survey

PERCENT = r"(-?[\d.]+) %"


@pytest.fixture
def answered(organizer):
    survey = make_survey(organizer, public_results=True)
    question = make_question(survey, options=list("ABCDEFGH"), epsilon=2.0)
    actions.do_open_survey(survey)
    make_reports(question, list(np.repeat(np.arange(8), [400, 200, 120, 80, 60, 60, 40, 40])), seed=4)
    return survey


def intervals(html):
    return [(float(a), float(b)) for a, b in re.findall(rf"<td data-interval>{PERCENT} – {PERCENT}</td>", html)]


@pytest.mark.parametrize("estimate", ["consistent", "unbiased"])
def test_joint_bands_are_wider_than_each_options_own_and_the_page_says_which(organizer_client, answered, estimate):
    url = reverse("survey_results", args=[answered.pk])
    own = organizer_client.get(url, {"estimate": estimate}).content.decode()
    joint = organizer_client.get(url, {"estimate": estimate, "bands": "joint"}).content.decode()
    own_bands, joint_bands = intervals(own), intervals(joint)
    assert len(own_bands) == len(joint_bands) == 8
    for (low, high), (joint_low, joint_high) in zip(own_bands, joint_bands, strict=True):
        assert joint_high - joint_low > high - low
    assert "95 % band of each option on its own" in own
    assert "95 % bands for all options at once" in joint
    assert "every option's true share" in joint


def test_the_choice_is_part_of_the_etag_and_of_every_link(organizer_client, answered):
    url = reverse("survey_results", args=[answered.pk])
    own = organizer_client.get(url)
    joint = organizer_client.get(url, {"bands": "joint"})
    assert own["ETag"] != joint["ETag"]
    assert "bands=joint&amp;" not in own.content.decode()
    assert "estimate=unbiased&amp;bands=joint" in joint.content.decode()


def test_the_public_page_offers_both_in_plain_words(client, answered):
    url = reverse("public_results", args=[answered.slug])
    own = client.get(url).content.decode()
    joint = client.get(url, {"bands": "joint"}).content.decode()
    assert "Each option's band holds its own true share with 95 % confidence" in own
    assert "hold for all options at once" in joint
    low_own = [float(a) for a, _ in re.findall(rf"Between {PERCENT} and {PERCENT} chose", own)]
    low_joint = [float(a) for a, _ in re.findall(rf"Between {PERCENT} and {PERCENT} chose", joint)]
    assert len(low_own) == 8 and all(j <= o for j, o in zip(low_joint, low_own, strict=True))


def test_an_unknown_band_choice_falls_back_to_each_options_own(organizer_client, answered):
    page = organizer_client.get(reverse("survey_results", args=[answered.pk]), {"bands": "nonsense"})
    assert page.status_code == 200
    assert "95 % band of each option on its own" in page.content.decode()


def test_mean_cards_are_the_same_under_either_choice(organizer_client, organizer):
    survey = make_survey(organizer)
    question = make_number_question(survey, lo=0, hi=10, epsilon=4.0)
    actions.do_open_survey(survey)
    make_reports(question, [3.0] * 600 + [7.0] * 400, seed=2)
    url = reverse("survey_results", args=[survey.pk])

    def mean_rows(params):
        html = organizer_client.get(url, params).content.decode()
        return re.findall(r"<td data-interval>([^<]+)</td>", html)

    own, joint = mean_rows({}), mean_rows({"bands": "joint"})
    assert len(own) == 1 and own == joint
