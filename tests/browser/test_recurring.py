"""A recurring survey in real Chromium: two rounds answered in one browser, the RAPPOR
short answer memoized from a device secret that never leaves the browser, the trend on the
dashboard, and both rounds in the respondent's ledger."""

from __future__ import annotations

import json
import logging
import math
from types import SimpleNamespace

import numpy as np
import pytest
from django.urls import reverse

from ldp.memo import memoized_one_bit, memoized_prr
from ldp.text import normalize_text
from surveys import actions
from surveys.models import Report, Survey
from surveys.series import rounds
from tests.base import (
    PASSWORD,
    make_number_question,
    make_question,
    make_reports,
    make_survey,
    make_text_question,
    make_text_reports,
    make_user,
)

ANSWER = "해운대 Zebra 7318"
CHANGED = "광안리 Okapi 2291"
SECRETS = [ANSWER, normalize_text(ANSWER), "Zebra", "zebra", "7318", CHANGED, "Okapi", "2291"]
RAPPOR_PARAMS = {"bits": 32, "hash_count": 2, "cohorts": 64, "f": 0.5}
#: The short answer's candidates ("how many wrote X?"), copied into every round: its trend follows them.
CANDIDATES = [normalize_text(word) for word in ("calm", "busy", "tired")]

#: The label a spec entry's permanent layer is keyed by: its question id and its spec digest.
KEY_OF = """async (entry) => {
  const memo = await import('/static/ldp/memo.js');
  return memo.memoQuestionKey(entry.memo.question, await memo.specDigest(entry.spec, entry.memo));
}"""

#: Recomputes, inside the page, the permanent layer of a value from this browser's device secret.
PERMANENT = """async ([entry, text]) => {
  const memo = await import('/static/ldp/memo.js');
  const { normalizeText } = await import('/static/ldp/text.js');
  const secret = memo.loadDeviceSecret();
  const key = memo.memoQuestionKey(entry.memo.question, await memo.specDigest(entry.spec, entry.memo));
  const { cohort, permanent } = await memo.memoizedPrr(secret, entry.memo.series, key, normalizeText(text), entry.spec);
  return { cohort, permanent };
}"""


#: Makes the instantaneous layer transparent: every uniform draw from 32-bit words is 1/2, and RAPPOR's
#: IRR sends 1 w.p. q = 0.75 where the permanent bit is 1 and p = 0.25 where it is 0, so each sent bit
#: *is* the permanent bit. Byte arrays (the device secret) stay random.
HALF_WORDS = """{
  const original = crypto.getRandomValues.bind(crypto);
  crypto.getRandomValues = (target) => target instanceof Uint32Array ? target.fill(0x80000000) : original(target);
}"""


@pytest.fixture
def survey(db):
    survey = make_survey(make_user("mina"), title="Weekly check-in")
    make_question(
        survey,
        text="How was your week?",
        options=["Good", "Fine", "Bad"],
        epsilon=1.0,
        mechanism="dbitflip",
        mechanism_params={"d": 2},
    )
    make_number_question(
        survey, lo=0, hi=10, text="Hours of sleep?", mechanism="1bitmean", epsilon=0.5, whole_numbers=False
    )
    make_text_question(
        survey,
        "rappor",
        text="One word for it?",
        epsilon=4 * math.log(5 / 3),
        mechanism_params=RAPPOR_PARAMS,
        candidates=CANDIDATES,
    )
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, "manual")
    survey.refresh_from_db()
    return survey


#: Recomputes, inside the page, the memoized dBitFlip buckets and bits of an option.
MEMOIZED_CHOICE = """async ([entry, value]) => {
  const memo = await import('/static/ldp/memo.js');
  const permanent = memo.permanentDBitFlipSpec(entry.spec, entry.memo.gamma);
  const key = memo.memoQuestionKey(entry.memo.question, await memo.specDigest(entry.spec, entry.memo));
  return memo.memoizedDBitFlip(memo.loadDeviceSecret(), entry.memo.series, key, value, permanent);
}"""


#: Recomputes, inside the page, the memoized 1BitMean grid point and bit of a value.
MEMOIZED_NUMBER = """async ([entry, value]) => {
  const memo = await import('/static/ldp/memo.js');
  const permanent = memo.permanentOneBitSpec(entry.spec, entry.memo.gamma);
  const key = memo.memoQuestionKey(entry.memo.question, await memo.specDigest(entry.spec, entry.memo));
  return memo.memoizedOneBit(memo.loadDeviceSecret(), entry.memo.series, key, value, permanent);
}"""


def answer(page, live_server, survey, text, option=1, hours=7.3):
    """Answer both questions of a round: (the one POST body sent, the RAPPOR and dBitFlip spec entries)."""
    posts = []
    page.on("request", lambda request: request.method == "POST" and posts.append(request))
    page.goto(f"{live_server.url}{survey.get_share_url()}")
    entries = {e["spec"]["mechanism"]: e for e in json.loads(page.text_content("#murmur-specs"))}
    page.locator("[data-question-id]").nth(0).locator(f"[data-option-index='{option}']").check()
    page.locator("[data-question-id]").nth(1).locator("[data-number-input]").fill(str(hours))
    page.locator("[data-question-id]").nth(2).locator("[data-text-input]").fill(text)
    page.click("[data-submit]")
    page.wait_for_selector("[data-receipt]:not([hidden])")
    assert len(posts) == 1
    return json.loads(posts[0].post_data), entries


def report_of(body, entry):
    return next(r["report"] for r in body["reports"] if r["question"] == entry["question"])


def test_two_rounds_share_the_permanent_layer_and_nothing_secret_leaves_the_browser(
    live_server, browser, page, survey, caplog
):
    caplog.set_level(logging.DEBUG)
    requests = []
    page.on("request", lambda request: requests.append(request))
    page.add_init_script(HALF_WORDS)
    text_question = survey.questions.get(kind="text")

    # Round 1.
    page.goto(f"{live_server.url}{survey.get_share_url()}")
    notes = [" ".join(note.split()) for note in page.locator("[data-memo-note]").all_text_contents()]
    assert "ε = 1; however" in notes[0] and "ε∞ = 1.265." in notes[0]  # dBitFlip, gamma = 0.1
    assert "ε = 0.5; however" in notes[1] and "ε∞ = 1.072." in notes[1]  # 1BitMean, gamma = 1/4
    assert "ε = 2.043; however" in notes[2] and "ε∞ = 4.394." in notes[2]  # RAPPOR, f = 0.5
    first_body, first_entries = answer(page, live_server, survey, ANSWER)
    entry, choice = first_entries["rappor"], first_entries["dbitflip"]
    assert choice["memo"]["layers"] == "memoized-bits+flip" and choice["memo"]["gamma"] == 0.1
    assert entry["memo"] == {
        "series": survey.series.key,
        "question": str(text_question.pk),
        "layers": "memoized-prr+irr",
    }
    first = page.evaluate(PERMANENT, [entry, ANSWER])
    first_report = next(r["report"] for r in first_body["reports"] if r["question"] == text_question.pk)
    assert first_report == {"cohort": first["cohort"], "bits": first["permanent"]}

    # The organizer opens round 2 from the builder.
    organizer = browser.new_context().new_page()
    organizer.goto(f"{live_server.url}{reverse('login')}")
    organizer.fill("[name=username]", "mina")
    organizer.fill("[name=password]", PASSWORD)
    organizer.click("main button[type=submit]")
    organizer.goto(f"{live_server.url}{survey.get_absolute_url()}")
    organizer.click("[data-next-round-button]")
    organizer.wait_for_selector("[data-round='2']")
    second_round = Survey.objects.get(series=survey.series, round_number=2)
    survey.refresh_from_db()
    assert survey.status == "closed" and second_round.status == "open"

    # Round 2, the same answer, in the same browser: the same cohort and permanent layer.
    second_text = second_round.questions.get(kind="text")
    second_body, second_entries = answer(page, live_server, second_round, ANSWER)
    entry_two, choice_two = second_entries["rappor"], second_entries["dbitflip"]
    second = page.evaluate(PERMANENT, [entry_two, ANSWER])
    second_report = next(r["report"] for r in second_body["reports"] if r["question"] == second_text.pk)
    assert entry_two["memo"]["question"] == entry["memo"]["question"]
    assert second == first and second_report == first_report
    # A changed answer has an independent permanent layer (the same cohort: it does not depend on the answer).
    changed = page.evaluate(PERMANENT, [entry, CHANGED])
    assert changed["cohort"] == first["cohort"] and changed["permanent"] != first["permanent"]
    third_round = rounds.do_open_next_round(second_round)
    third_body, third_entries = answer(page, live_server, third_round, CHANGED, option=2, hours=2.6)
    third_text = third_round.questions.get(kind="text")
    third_report = next(r["report"] for r in third_body["reports"] if r["question"] == third_text.pk)
    assert third_report == {"cohort": changed["cohort"], "bits": changed["permanent"]}
    # dBitFlip: the flip (probability 0.1) never fires under the fixed source, so each report is the
    # memoized buckets and bits: the same for "Fine" in rounds 1 and 2, those of "Bad" in round 3.
    fine = page.evaluate(MEMOIZED_CHOICE, [choice, 1])
    bad = page.evaluate(MEMOIZED_CHOICE, [choice, 2])
    assert report_of(first_body, choice) == report_of(second_body, choice_two) == fine
    assert report_of(third_body, third_entries["dbitflip"]) == bad and bad["buckets"] == fine["buckets"]
    assert choice_two["memo"]["question"] == choice["memo"]["question"] == str(choice["question"])
    # 1BitMean: alpha-point rounding with the kept alpha, then the memoized bit of that grid point (no flip).
    sleep = first_entries["1bitmean"]
    assert sleep["memo"]["layers"] == "memoized-bit+flip" and sleep["memo"]["gamma"] == 0.25
    seven = page.evaluate(MEMOIZED_NUMBER, [sleep, 7.3])
    assert report_of(first_body, sleep) == report_of(second_body, second_entries["1bitmean"]) == {"index": seven["bit"]}
    two = page.evaluate(MEMOIZED_NUMBER, [sleep, 2.6])
    assert report_of(third_body, third_entries["1bitmean"]) == {"index": two["bit"]}
    grid = sleep["spec"]["grid"]
    assert math.floor(7.3 / 10 * grid) <= seven["point"] <= math.ceil(7.3 / 10 * grid)
    assert math.floor(2.6 / 10 * grid) <= two["point"] <= math.ceil(2.6 / 10 * grid)
    # Python derives the same layers from the secret (read here by the test only; it is never sent),
    # keyed by the question's id and its spec digest.
    secret_hex = page.evaluate("localStorage.getItem('murmur-device-secret-v1')")
    mechanism = text_question.current_randomization().build_mechanism().inner
    text_key = page.evaluate(KEY_OF, entry)
    assert text_key.startswith(f"{text_question.pk}#")
    cohort, permanent = memoized_prr(
        bytes.fromhex(secret_hex), survey.series.key, text_key, normalize_text(ANSWER), mechanism
    )
    assert cohort == first["cohort"] and permanent.tolist() == first["permanent"]
    served = survey.questions.get(kind="numeric").current_randomization().build_mechanism()
    denominator, base, slope = rounds.permanent_one_bit_weights(sleep["spec"])
    stand_in = SimpleNamespace(round_to_grid=served.round_to_grid, denominator=denominator, base=base, slope=slope)
    memo = sleep["memo"]
    assert memoized_one_bit(bytes.fromhex(secret_hex), memo["series"], page.evaluate(KEY_OF, sleep), 7.3, stand_in) == (
        seven["point"],
        seven["bit"],
    )
    # The stored reports are the ones sent, under each round's own randomization.
    for body, current in ((first_body, survey), (second_body, second_round)):
        stored = {r.question_id: r for r in Report.objects.filter(submission__survey=current)}
        for item in body["reports"]:
            report = stored[item["question"]]
            assert report.randomization.question.survey_id == current.pk
            assert report.randomization.build_mechanism().parse_report(item["report"]) == bytes(report.packed)

    # The ledger lists the series once: each of the three rounds with what it spent, 1 + 0.5 + 4 ln(5/3)
    # = 3.543, then the series' totals; the device secret can be deleted there.
    page.goto(f"{live_server.url}{reverse('ledger')}")
    page.wait_for_selector("[data-ledger]:not([hidden])")
    rows = page.locator("[data-ledger-rows] tr")
    assert rows.count() == 4
    per_round = [rows.nth(i).locator("th, td").all_inner_texts() for i in range(3)]
    assert [cells[:2] for cells in per_round] == [["Weekly check-in", str(number)] for number in (1, 2, 3)]
    assert [cells[3:] for cells in per_round] == [["ε = 3.543", ""]] * 3
    total = rows.nth(3).locator("th, td").all_inner_texts()
    # Sequentially 3 x 3.543 = 10.63. Memoized, each question's three rounds cost at most min(3 epsilon,
    # min(3, V) epsilon_inf), as the ledger cannot know whether the answer stayed the same: no less here
    # (every epsilon_inf is above its round's epsilon).
    assert total == ["Weekly check-in", "all 3 rounds", "", "ε = 10.63", "ε = 10.63"]
    assert rows.nth(3).get_attribute("data-series-total") == survey.series.key
    assert page.inner_text("[data-ledger-total]") == "ε = 10.63"
    assert page.inner_text("[data-ledger-memoized]") == "ε = 10.63"
    ledger = json.loads(page.evaluate("localStorage.getItem('murmur-epsilon-ledger-v1')"))
    memoized = [e for e in ledger if e["memo"] is not None and e["memo"]["values"] is None]
    assert [e["round"] for e in memoized] == [1, 2, 3] and {e["question"] for e in memoized} == {str(text_question.pk)}
    assert memoized[0]["memo"]["epsilon_infinity"] == pytest.approx(4 * math.log(3), abs=1e-12)
    choices = [e for e in ledger if e["memo"] is not None and e["memo"]["values"] == 3]
    assert [e["round"] for e in choices] == [1, 2, 3] and choices[0]["epsilon"] == 1.0
    assert page.evaluate("localStorage.getItem('murmur-device-secret-v1')") is not None
    assert page.evaluate("localStorage.getItem('murmur-memo-pins-v1')") is not None
    page.click("[data-device-secret-forget]")
    assert page.evaluate("localStorage.getItem('murmur-device-secret-v1')") is None
    assert page.evaluate("localStorage.getItem('murmur-memo-pins-v1')") is None
    assert page.is_disabled("[data-device-secret-forget]")

    # Nothing true and nothing secret reached the server: requests, cookies, logs.
    cookies = page.context.cookies()
    leaks = [*SECRETS, secret_hex]
    for request in requests:
        sent = " ".join([request.url, request.post_data or "", json.dumps(request.headers, ensure_ascii=False)])
        assert all(leak not in sent for leak in leaks)
    assert all(leak not in c["value"] for c in cookies for leak in leaks)
    assert all(leak not in r.getMessage() for r in caplog.records for leak in leaks)
    assert "murmur-device-secret" not in " ".join(r.post_data or "" for r in requests)

    # The dashboard shows the trends of the choice question and of the short answer's candidates across
    # the two rounds (besides the browser's own reports: "calm" from 60 % to 20 %, "tired" from 10 % to 50 %).
    make_reports(survey.questions.get(kind="single"), list(np.repeat([0, 1, 2], [1200, 400, 400])), seed=1)
    make_reports(second_round.questions.get(kind="single"), list(np.repeat([0, 1, 2], [400, 400, 1200])), seed=2)
    for current, counts, seed in ((survey, [1200, 600, 200], 3), (second_round, [400, 600, 1000], 4)):
        make_text_reports(current.questions.get(kind="text"), list(np.repeat(CANDIDATES, counts)), seed=seed)
    organizer.goto(f"{live_server.url}{second_round.get_results_url()}?from=1&to=2")
    trend = organizer.locator(f"[data-trends] [data-trend='{survey.questions.get(kind='single').memo_key}']")
    assert trend.locator("svg").count() == 1
    assert "Round 1" in trend.inner_html() and "Round 2" in trend.inner_html()
    assert "Change from round 1 to round 2" in " ".join(trend.inner_text().split())
    assert trend.locator("[data-difference] tbody tr").count() == 3
    words = organizer.locator(f"[data-trends] [data-trend='{text_question.memo_key}']")
    assert words.locator("svg").count() == 1
    assert "Round 1" in words.inner_html() and "Round 2" in words.inner_html()
    changes = words.locator("[data-difference] tbody tr")
    assert changes.locator("th").all_inner_texts() == CANDIDATES
    calm, _busy, tired = (row.split() for row in changes.all_inner_texts())
    # In points: about -40 and +40, each with its interval.
    assert calm[0] == "calm" and float(calm[1]) < -20 and tired[0] == "tired" and float(tired[1]) > 20
    assert changes.nth(0).get_attribute("class") == changes.nth(2).get_attribute("class") == "clear-change"


def test_a_dbitflip_pair_is_memoized_across_rounds_like_a_dbitflip_question(live_server, page, db):
    # The answer page promises a dBitFlip pair's longitudinal bound (its spec entry carries the memo
    # block), so the joint answer's buckets and bits must come from the device secret in every round.
    from surveys.forms.pair import PairForm

    survey = make_survey(make_user("jun"), title="Pairs each week")
    fruit = make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"], epsilon=1.0)
    day = make_question(survey, text="Day?", options=["Weekday", "Weekend"], epsilon=1.0)
    form = PairForm(
        {"first": fruit.pk, "second": day.pk, "epsilon": "1", "mechanism": "dbitflip", "d": "2"}, survey=survey
    )
    assert form.is_valid(), form.errors
    actions.do_declare_pair(fruit, day, form.cleaned_data["pair"])
    actions.do_open_survey(survey)
    rounds.do_make_recurring(survey, "manual")
    survey.refresh_from_db()
    page.add_init_script(HALF_WORDS)  # the flip never fires: each report is the memoized layer itself
    sent = []
    for number in (1, 2):
        current = survey if number == 1 else rounds.do_open_next_round(survey)
        posts = []
        page.on("request", lambda request, posts=posts: request.method == "POST" and posts.append(request))
        page.goto(f"{live_server.url}{current.get_share_url()}")
        (entry,) = json.loads(page.text_content("#murmur-specs"))
        assert entry["spec"]["mechanism"] == "dbitflip" and entry["memo"]["layers"] == "memoized-bits+flip"
        page.locator("[data-pair-role=first] [data-option-index='2']").check()
        page.locator("[data-pair-role=second] [data-option-index='1']").check()
        page.click("[data-submit]")
        page.wait_for_selector("[data-receipt]:not([hidden])")
        (report,) = json.loads(posts[0].post_data)["reports"]
        assert report["question"] == entry["question"]
        memoized = page.evaluate(MEMOIZED_CHOICE, [entry, 2 * 2 + 1])  # Cherry x Weekend: 2 k2 + 1
        sent.append(report["report"])
        assert report["report"] == {"buckets": memoized["buckets"], "bits": memoized["bits"]}
    assert sent[0] == sent[1]
