"""2,000 simulated respondents with known answers submit through the endpoint; the estimate
from the stored reports covers the truth.

Each respondent's reports are made by ldp's randomizers from the very client specs the answer
page sends. One seeded draw: each option's 95 % band misses with probability 5 %, so this is a
check of the whole pipeline (spec -> report -> endpoint -> storage -> tally -> estimate), not
a coverage measurement; coverage itself is measured in tests/ldp/test_estimation_statistics.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from surveys import actions
from surveys.models import Report
from surveys.responding.submissions import new_token
from surveys.views.respond import answer_items
from tests.base import make_question, make_survey, stored_tally

pytestmark = [pytest.mark.statistical, pytest.mark.django_db]

RESPONDENTS = 2000
TRUE_SHARES = {
    "krr": [0.4, 0.3, 0.15, 0.1, 0.05],
    "cms": [0.1, 0.2, 0.3, 0.4],
    "dbitflip": [0.25, 0.25, 0.5],
}


@pytest.mark.slow
def test_the_reconstruction_from_stored_reports_covers_the_true_answers(organizer, settings):
    settings.RATE_LIMITS_ENABLED = False  # every respondent posts from the same test client
    survey = make_survey(organizer, allow_repeat_responses=True)
    make_question(survey, text="krr", options=list("ABCDE"), epsilon=2.0)
    make_question(
        survey,
        text="cms",
        options=list("ABCD"),
        epsilon=3.0,
        mechanism="cms",
        mechanism_params={"hash_count": 64, "width": 64, "hash_seed": 0},
    )
    make_question(
        survey, text="dbitflip", options=list("ABC"), epsilon=2.0, mechanism="dbitflip", mechanism_params={"d": 3}
    )
    actions.do_open_survey(survey)

    rng = np.random.default_rng(20261122)
    items = answer_items(survey)
    truths = {}
    reports_by_question = {}
    for item in items:
        shares = TRUE_SHARES[item.question.text]
        truth = rng.permutation(np.repeat(np.arange(len(shares)), np.round(np.array(shares) * RESPONDENTS).astype(int)))
        mechanism = item.question.current_randomization().build_mechanism()
        assert mechanism.client_spec() == item.spec  # the simulation randomizes with the page's spec
        truths[item.question.pk] = truth
        reports_by_question[item.question.pk] = (item, mechanism, mechanism.randomize(truth, rng=rng))

    client = Client()
    url = reverse("submit", args=[survey.slug])
    for respondent in range(RESPONDENTS):
        reports = [
            {"question": pk, "version": item.version, "report": mechanism.unpack_report(packed[respondent].tobytes())}
            for pk, (item, mechanism, packed) in reports_by_question.items()
        ]
        body = json.dumps({"token": new_token(survey), "reports": reports})
        assert client.post(url, body, content_type="application/json").status_code == 201

    for pk, (item, mechanism, _) in reports_by_question.items():
        tally = stored_tally(item.question.current_randomization())
        stored = b"".join(bytes(r.packed) for r in Report.objects.filter(question_id=pk).order_by("pk"))
        assert np.array_equal(tally.counts, mechanism.tally(mechanism.unpack_many(stored)).counts)
        estimate = mechanism.estimate(tally)
        low, high = estimate.confidence_interval(0.95)
        true_shares = np.bincount(truths[pk], minlength=mechanism.k) / RESPONDENTS
        assert np.all((low <= true_shares) & (true_shares <= high)), (item.question.text, estimate.proportions)
