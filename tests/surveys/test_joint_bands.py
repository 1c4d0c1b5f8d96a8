"""Bands that hold for all options at once, offered beside each option's own: on the
single-question cards, a declared pair's card and the post-hoc cross-tab (the organizer's and the public one)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.urls import reverse

from ldp.crosstab import declared_estimate, encode_pair
from surveys import actions
from surveys.models import Report
from tests.base import make_joint_reports, make_number_question, make_question, make_reports, make_survey

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


# -- cross-tabs: a declared pair's card and the post-hoc cross-tab page ------------------------

KOREAN = {"HTTP_ACCEPT_LANGUAGE": "ko"}
CELL = rf'data-cell="(\d)-(\d)">\s*{PERCENT} <small>\({PERCENT} – {PERCENT}\)</small>'
CONDITIONAL = rf"{PERCENT} chose “[^”]+” \({PERCENT} – {PERCENT}\)"
#: True joint shares of (fruit, weekend), related so that the conditional shares differ by row.
JOINT = np.array([[0.3, 0.1], [0.05, 0.25], [0.2, 0.1]])


def joint_answers(n, seed):
    cells = np.random.default_rng(seed).choice(JOINT.size, size=n, p=JOINT.ravel())
    return cells // 2, cells % 2


def cells(html):
    """{(row, column): (estimate, low, high)} of the joint table's cells, in percent."""
    return {(int(a), int(b)): tuple(map(float, numbers)) for a, b, *numbers in re.findall(CELL, html)}


def conditional_widths(html):
    return [float(high) - float(low) for _share, low, high in re.findall(CONDITIONAL, " ".join(html.split()))]


def chart(html):
    return html[html.index("<svg") : html.index("</svg>")]


@pytest.fixture
def paired(organizer_client, organizer):
    """A declared pair (fruit x weekend, k-RR over 6 combinations at epsilon 3) with 3,000 joint reports."""
    survey = make_survey(organizer, epsilon_cap=5.0, public_results=True)
    fruit = make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"], epsilon=1.0)
    weekend = make_question(survey, text="Weekend?", kind="yes_no", options=["Yes", "No"], epsilon=1.0)
    data = {"first": fruit.pk, "second": weekend.pk, "epsilon": "3", "mechanism": "krr"}
    assert organizer_client.post(reverse("pair_add", args=[survey.pk]), data).status_code == 302
    pair = survey.questions.get(kind="pair")
    actions.do_open_survey(survey)
    make_reports(pair, list(encode_pair(*joint_answers(3000, seed=4), 2)), seed=7)
    return survey, pair


def pair_estimate(pair):
    mechanism = pair.current_randomization().build_mechanism()
    packed = b"".join(bytes(p) for p in Report.objects.filter(question=pair).values_list("packed", flat=True))
    return declared_estimate(mechanism, mechanism.tally(mechanism.unpack_many(packed)), 3, 2)


def pair_card(client, survey, pair, **params):
    html = client.get(reverse("survey_results", args=[survey.pk]), params).content.decode()
    card = html[html.index(f'id="result-{pair.pk}"') :]
    return card[: card.index("</article>")]


def test_a_pairs_card_draws_the_bands_chosen_for_its_cells_conditional_and_own_shares(organizer_client, paired):
    survey, pair = paired
    expected = pair_estimate(pair)
    own = pair_card(organizer_client, survey, pair)
    joint = pair_card(organizer_client, survey, pair, bands="joint")
    own_cells, joint_cells = cells(own), cells(joint)
    assert len(own_cells) == len(joint_cells) == 6
    for (a, b), (_estimate, low, high) in joint_cells.items():
        assert low == pytest.approx(100 * expected.simultaneous.low[a, b], abs=0.051)
        assert high == pytest.approx(100 * expected.simultaneous.high[a, b], abs=0.051)
        assert high - low > own_cells[a, b][2] - own_cells[a, b][1]
        assert own_cells[a, b][1] == pytest.approx(100 * expected.bands.low[a, b], abs=0.051)
    own_widths, joint_widths = conditional_widths(own), conditional_widths(joint)
    assert len(own_widths) == len(joint_widths) == 12
    assert all(j > o for j, o in zip(joint_widths, own_widths, strict=True))
    marginal = joint[joint.index('data-marginal="0"') :]
    low = re.search(rf'data-option="2">\s*<th[^>]*>Cherry</th>\s*<td>{PERCENT}</td>\s*<td>{PERCENT} –', marginal)
    assert float(low.group(2)) == pytest.approx(
        100 * expected.marginal("first", simultaneous=True).bands.low[2], abs=0.051
    )
    # Every part of the card says which bands it shows; the heatmap is drawn (and cached) per choice.
    assert "95 % band of each cell on its own" in own and "95 % bands for all cells at once" in joint
    assert "95 % bands for all cells at once" not in own
    assert "not adjusted to hold together" in own and "hold for all of its shares at once" in joint
    assert "95 % band of each option on its own" in own and "95 % bands for all options at once" in joint
    assert chart(own) != chart(joint)


def test_a_pairs_card_on_the_public_page_says_which_bands_in_plain_words(client, paired):
    survey, pair = paired
    url = reverse("public_results", args=[survey.slug])
    own, joint = client.get(url).content.decode(), client.get(url, {"bands": "joint"}).content.decode()
    assert "Each range in this table holds its own true share with 95 % confidence" in own
    assert "every range in this table holds its true share, all at the same time" in joint
    assert "all the ranges in each list below hold their shares at the same time" in joint
    korean = client.get(url, {"bands": "joint"}, **KOREAN).content.decode()
    assert "이 표의 모든 범위" in korean and "every range in this table" not in korean


@pytest.fixture
def crossed(organizer):
    """Fruit (k-RR) and weekend (OUE) asked on their own and answered together by 4,000; results public."""
    survey = make_survey(organizer, title="Crossed", public_results=True)
    fruit = make_question(survey, text="Fruit?", options=["Apple", "Banana", "Cherry"], epsilon=3.0)
    weekend = make_question(survey, text="Weekend?", kind="yes_no", options=["Yes", "No"], epsilon=3.0, mechanism="oue")
    actions.do_open_survey(survey)
    make_joint_reports([fruit, weekend], np.column_stack(joint_answers(4000, seed=1)), seed=10)
    return survey, fruit, weekend


def crosstab_url(survey, fruit, weekend, public=False):
    url = reverse("public_crosstab", args=[survey.slug]) if public else reverse("survey_crosstab", args=[survey.pk])
    return url + f"?first={fruit.pk}&second={weekend.pk}"


def test_the_post_hoc_cross_tab_draws_the_bands_chosen_and_its_etag_names_them(organizer_client, crossed):
    survey, fruit, weekend = crossed
    own = organizer_client.get(crosstab_url(survey, fruit, weekend))
    joint = organizer_client.get(crosstab_url(survey, fruit, weekend) + "&bands=joint")
    expected = joint.context["crosstab"].estimate
    own_cells, joint_cells = cells(own.content.decode()), cells(joint.content.decode())
    assert len(joint_cells) == 6
    for (a, b), (_estimate, low, high) in joint_cells.items():
        assert low == pytest.approx(100 * expected.simultaneous.low[a, b], abs=0.051)
        assert high == pytest.approx(100 * expected.simultaneous.high[a, b], abs=0.051)
        assert high - low > own_cells[a, b][2] - own_cells[a, b][1]
    assert all(
        j > o
        for j, o in zip(
            conditional_widths(joint.content.decode()), conditional_widths(own.content.decode()), strict=True
        )
    )
    assert "95 % bands for all cells at once" in joint.content.decode()
    assert "95 % band of each cell on its own" in own.content.decode()
    assert chart(own.content.decode()) != chart(joint.content.decode())
    assert own["ETag"] != joint["ETag"]
    again = organizer_client.get(
        crosstab_url(survey, fruit, weekend) + "&bands=joint", HTTP_IF_NONE_MATCH=joint["ETag"]
    )
    assert again.status_code == 304


def test_the_cross_tab_page_offers_the_choice_and_the_dashboards_form_carries_its_own(
    organizer_client, crossed, htmx_headers
):
    survey, fruit, weekend = crossed
    page = organizer_client.get(crosstab_url(survey, fruit, weekend) + "&bands=joint").content.decode()
    choice = page[page.index('name="bands"') : page.index("</select>", page.index('name="bands"'))]
    assert re.search(r'value="joint"\s+selected', choice) and "Bands for all cells at once" in choice
    dashboard = organizer_client.get(reverse("survey_results", args=[survey.pk]), {"bands": "joint"}).content.decode()
    form = re.search(r"<form[^>]*data-crosstab-form[^>]*>.*?</form>", dashboard, re.S).group(0)
    assert '<input type="hidden" name="bands" value="joint"' in form
    fragment = organizer_client.get(crosstab_url(survey, fruit, weekend) + "&bands=joint", **htmx_headers)
    html = fragment.content.decode()
    assert html.lstrip().startswith('<div id="crosstab-body"') and "95 % bands for all cells at once" in html


def test_the_export_gives_the_conditional_shares_bands_both_ways(organizer_client, crossed):
    survey, fruit, weekend = crossed
    url = reverse("export_crosstab", args=[survey.pk]) + f"?first={fruit.pk}&second={weekend.pk}"
    record = organizer_client.get(url).json()
    own = np.array(record["conditional_high"]) - np.array(record["conditional_low"])
    joint = np.array(record["conditional_simultaneous_high"]) - np.array(record["conditional_simultaneous_low"])
    assert own.shape == joint.shape == (3, 2) and np.all(joint > own)


def test_the_public_cross_tab_shows_both_kinds_of_bands_in_plain_words(client, crossed, htmx_headers):
    survey, fruit, weekend = crossed
    results = client.get(reverse("public_results", args=[survey.slug]), {"bands": "joint"}).content.decode()
    url = reverse("public_crosstab", args=[survey.slug])
    form = re.search(r"<form[^>]*data-crosstab-form[^>]*>.*?</form>", results, re.S).group(0)
    assert f'action="{url}"' in form and f'hx-get="{url}"' in form and 'name="bands" value="joint"' in form
    own = client.get(crosstab_url(survey, fruit, weekend, public=True))
    joint = client.get(crosstab_url(survey, fruit, weekend, public=True) + "&bands=joint", **htmx_headers)
    assert own.status_code == joint.status_code == 200
    own_html, joint_html = own.content.decode(), joint.content.decode()
    assert "Each range in this table holds its own true share with 95 % confidence" in own_html
    assert "every range in this table holds its true share, all at the same time" in joint_html
    assert len(cells(joint_html)) == 6 and own["ETag"] != joint["ETag"]
    # Estimates only: no pair table, no export, no link into the organizer's pages.
    assert "export" not in own_html and reverse("survey_results", args=[survey.pk]) not in own_html
    korean = client.get(crosstab_url(survey, fruit, weekend, public=True), **KOREAN).content.decode()
    assert "교차표" in korean and "Cross-tabulation" not in korean and "Each range" not in korean


def test_the_public_cross_tab_is_only_for_published_results(client, crossed):
    survey, fruit, weekend = crossed
    survey.public_results = False
    survey.save(update_fields=["public_results"])
    assert client.get(crosstab_url(survey, fruit, weekend, public=True)).status_code == 404
    html = client.get(reverse("survey_results", args=[survey.pk])).content.decode()
    assert "data-crosstab-form" not in html
