"""Plain words first, details on request: the answer page's privacy text and the receipt."""

from __future__ import annotations

import numpy as np
from django.utils import translation

from ldp.numeric import make_numeric_mechanism
from surveys.kinds import summary_of
from tests.base import make_open_survey


def test_the_receipt_says_why_a_randomized_number_lies_outside_the_range():
    mechanism = make_numeric_mechanism("piecewise", lo=0, hi=100, epsilon=1.0)
    outside = int(np.argmax(mechanism.decode))  # the report farthest above the range
    with translation.override("en"):
        text = summary_of("piecewise").describe(mechanism, [], {"index": outside})
    assert text.startswith("a randomized number: ")
    assert "even outside 0–100: that is normal" in text
    with translation.override("ko"):
        assert "정상" in summary_of("piecewise").describe(mechanism, [], {"index": outside})


def test_the_answer_page_folds_what_the_server_keeps(client, organizer):
    survey = make_open_survey(organizer)
    html = client.get(survey.get_share_url()).content.decode()
    folded = html[html.index('<details class="privacy-details"') : html.index("</details>")]
    assert "data-server-keeps" in folded and "data-spec-digest" in folded
    assert html.index("How your answers stay private") < html.index("data-privacy-details") < html.index("<legend>")


def test_a_number_card_with_few_reports_says_where_the_mean_lies_within_its_range(organizer_client, organizer):
    import re

    from django.urls import reverse

    from tests.surveys.test_feasible_results import build

    survey = build(organizer, 10, 0)
    html = organizer_client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    found = re.search(r"the mean lies between ([\d.,-]+) and ([\d.,-]+) hours", html)
    assert found, "no few-reports sentence on the number card"
    low, high = (float(value.replace(",", "")) for value in found.groups())
    assert 0 <= low <= high <= 40
