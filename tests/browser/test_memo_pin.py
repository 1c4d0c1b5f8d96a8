"""A server that changes a memoized question's parameters between rounds, in real Chromium: the
answer page says so before sending, the new parameters get a permanent layer of their own, the
ledger counts two streams whose bounds add up, and neither the device secret nor the pins leave
the browser."""

from __future__ import annotations

import json
import math

import pytest
from django.db import transaction
from django.urls import reverse

from surveys import actions
from surveys.models import Question
from surveys.series import rounds
from tests.base import make_question, make_survey, make_user

#: Makes the flip transparent: every uniform draw from 32-bit words is 1/2, never below gamma, so each
#: sent dBitFlip report is the memoized buckets and bits. Byte arrays (the device secret) stay random.
HALF_WORDS = """{
  const original = crypto.getRandomValues.bind(crypto);
  crypto.getRandomValues = (target) => target instanceof Uint32Array ? target.fill(0x80000000) : original(target);
}"""


#: The memoized buckets and bits of "Yes" under a spec entry, keyed by its question id and spec digest.
MEMOIZED = """async (entry) => {
  const memo = await import('/static/ldp/memo.js');
  const permanent = memo.permanentDBitFlipSpec(entry.spec, entry.memo.gamma);
  const key = memo.memoQuestionKey(entry.memo.question, await memo.specDigest(entry.spec, entry.memo));
  return memo.memoizedDBitFlip(memo.loadDeviceSecret(), entry.memo.series, key, 0, permanent);
}"""


def epsilon_infinity(epsilon: float, gamma: float = 0.1) -> float:
    """dBitFlip (d = 2) memoized: 2 ln(p1 / (1 - p1)), p1 = (p1' - gamma) / (1 - 2 gamma),
    p1' = e^(eps/2) / (1 + e^(eps/2))."""
    served = math.exp(epsilon / 2) / (1 + math.exp(epsilon / 2))
    p1 = (served - gamma) / (1 - 2 * gamma)
    return 2 * math.log(p1 / (1 - p1))


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("jun"), title="Pulse")
    make_question(
        survey, text="Slept well?", options=["Yes", "No"], epsilon=1.0, mechanism="dbitflip", mechanism_params={"d": 2}
    )
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, "manual")
    survey.refresh_from_db()
    return survey


def answer(page, live_server, round_survey):
    """Answer "Yes" on a round's page: (the warnings shown before sending, the spec entry, the report sent)."""
    posts = []
    page.on("request", lambda request: request.method == "POST" and posts.append(request))
    page.goto(f"{live_server.url}{round_survey.get_share_url()}")
    page.wait_for_selector("[data-submit]:enabled")
    warnings = [" ".join(t.split()) for t in page.locator("[data-memo-changed]").all_inner_texts()]
    (entry,) = json.loads(page.text_content("#murmur-specs"))
    page.locator("[data-question-id]").first.locator("[data-option-index='0']").check()
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert len(posts) == 1
    return warnings, entry, json.loads(posts[0].post_data)["reports"][0]["report"]


def test_changed_parameters_are_shown_before_sending_and_counted_as_a_second_stream(live_server, page, survey):
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.add_init_script(HALF_WORDS)
    first_warnings, first, first_report = answer(page, live_server, survey)
    second_round = rounds.do_open_next_round(survey)
    second_warnings, second, second_report = answer(page, live_server, second_round)
    assert first_warnings == second_warnings == [] and first_report == second_report

    # The server changes the question's parameters for round 3 (epsilon 1 -> 2), keeping its id in the series.
    third_round = rounds.do_open_next_round(second_round)
    question = third_round.questions.get()
    Question.objects.filter(pk=question.pk).update(epsilon=2.0)
    question.refresh_from_db()
    with transaction.atomic():  # sync_randomization locks the version in force (FOR UPDATE on PostgreSQL)
        actions.sync_randomization(question)
    third_warnings, third, third_report = answer(page, live_server, third_round)
    assert third["memo"]["question"] == first["memo"]["question"] and third["spec"]["epsilon"] == 2.0
    assert len(third_warnings) == 1
    assert "randomization changed since you last answered it" in third_warnings[0]
    assert f"ε∞ = {epsilon_infinity(2.0):.2f} more" in third_warnings[0]  # 2.64
    # Each randomization has a permanent layer of its own, keyed by the question's id and its digest
    # (two bits a round: each check alone would miss another key one time in four or so).
    assert page.evaluate(MEMOIZED, first) == first_report and page.evaluate(MEMOIZED, third) == third_report
    fourth_warnings, fourth, fourth_report = answer(page, live_server, rounds.do_open_next_round(third_round))
    assert fourth_warnings == [] and fourth_report == third_report

    # The ledger: stream 1 (rounds 1-2, eps 1, eps_inf 1.265, V = 2): min(2, 2 x 1.265) = 2; stream 2
    # (rounds 3-4, eps 2, eps_inf 2.637): min(4, 2 x 2.637) = 4. One stream would have said min(6, 2 x 2.637) = 5.27.
    ledger = json.loads(page.evaluate("localStorage.getItem('murmur-epsilon-ledger-v1')"))
    assert len({entry["memo"]["digest"] for entry in ledger}) == 2
    page.goto(f"{live_server.url}{reverse('ledger')}")
    page.wait_for_selector("[data-ledger]:not([hidden])")
    assert page.inner_text("[data-ledger-total]") == "ε = 6"
    assert page.inner_text("[data-ledger-memoized]") == "ε = 6"

    # Nothing of the secret or the pins reached the server.
    secret = page.evaluate("localStorage.getItem('murmur-device-secret-v1')")
    pins = json.loads(page.evaluate("localStorage.getItem('murmur-memo-pins-v1')"))
    (digests,) = pins.values()
    assert len(digests) == 2
    leaks = [secret, *digests, "murmur-memo-pins", "murmur-device-secret"]
    for request in requests:
        sent = " ".join([request.url, request.post_data or "", json.dumps(request.headers)])
        assert all(leak not in sent for leak in leaks)
    assert all(leak not in c["value"] for c in page.context.cookies() for leak in leaks)
