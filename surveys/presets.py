"""Ready questions for sensitive topics, in Korean and English, each with its epsilon and mechanism.

A first-time organizer picks one in the builder ("Start from a template") and gets the question
form filled in: the wording, the options or scale, a fixed epsilon and the mechanism, with one
line on why. Everything stays editable; nothing is saved until the organizer adds the question.

The choices follow the advisor (:mod:`ldp.advisor`, :mod:`ldp.numeric.advisor`) at a few hundred
respondents: k-RR for yes/no and short option lists at these epsilons, Hybrid for a mean rating. A
smaller epsilon for the most sensitive topics (drug use), where a report should say least; a larger
one for low-stakes scales (NPS), where precision matters more. The expected half-widths quoted in
the reasons are the advisor's at 500 respondents (k-RR: 8.4 points for yes/no at epsilon 1, 17.3 at
0.5, 10.6 for 3 options at 1, 5.2 for 5 options at 2, 6.4 for 11 points at 2; Hybrid: 0.18 on a
1-5 scale at 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _


@dataclass(frozen=True)
class Preset:
    """One ready question: what the builder's question form is filled with."""

    key: str
    title: Promise
    """Its name in the template list."""
    text: Promise
    kind: str
    epsilon: float
    mechanism: str
    reason: Promise
    """Why this epsilon and mechanism, in one line."""
    options: tuple[Promise, ...] = ()
    fields: dict[str, Any] = field(default_factory=dict)
    """Other form fields (a rating's scale, labels and estimate)."""

    def initial(self) -> dict[str, Any]:
        """The question form's initial values, in the active language."""
        return {
            "text": str(self.text),
            "kind": self.kind,
            "options_text": "\n".join(str(option) for option in self.options),
            "budget": "fixed",
            "epsilon": self.epsilon,
            "mechanism": self.mechanism,
            **{name: str(value) if isinstance(value, Promise) else value for name, value in self.fields.items()},
        }


def _rating(scale: str, low: Promise, high: Promise, estimate: str = "shares") -> dict[str, Any]:
    return {"scale": scale, "low_label": low, "high_label": high, "rating_estimate": estimate}


PRESETS: tuple[Preset, ...] = (
    Preset(
        "health",
        _("Health: a diagnosis"),
        _("In the past 12 months, has a doctor told you that you have a mental health condition?"),
        "yes_no",
        1.0,
        "krr",
        _(
            # xgettext:no-python-format ("73 %" is a percentage, not a placeholder)
            "Yes/no with randomized response (k-RR) at ε = 1: each report is the true answer 73 % of the time."
        ),
    ),
    Preset(
        "drugs",
        _("Drug use"),
        _("In the past 30 days, have you used an illegal drug?"),
        "yes_no",
        0.5,
        "krr",
        _("Very sensitive, so a small ε = 0.5 with k-RR: a report says little about anyone; ask several hundred."),
    ),
    Preset(
        "harassment",
        _("Harassment at work"),
        _("In the past 12 months, have you experienced harassment at work?"),
        "single",
        1.0,
        "krr",
        _("Three options with k-RR at ε = 1: about ± 11 points for each share with 500 respondents."),
        options=(_("No"), _("Yes, once"), _("Yes, more than once")),
    ),
    Preset(
        "salary",
        _("Salary band"),
        _("What is your annual salary before tax?"),
        "single",
        2.0,
        "krr",
        _("Bands, not an exact number: five options with k-RR at ε = 2 keep each share within about ± 5 points."),
        options=(
            _("Under 30,000"),
            _("30,000 to 49,999"),
            _("50,000 to 79,999"),
            _("80,000 to 119,999"),
            _("120,000 or more"),
        ),
    ),
    Preset(
        "enps",
        _("eNPS: would you recommend working here?"),
        _("How likely are you to recommend this organization as a place to work?"),
        "rating",
        2.0,
        "krr",
        _("The 0–10 scale gives the employee Net Promoter Score; k-RR at ε = 2 keeps each point within ± 7 points."),
        fields=_rating("0-10", _("Not at all likely"), _("Extremely likely")),
    ),
    Preset(
        "nps",
        _("NPS: would you recommend us?"),
        _("How likely are you to recommend us to a friend or colleague?"),
        "rating",
        2.0,
        "krr",
        _("The 0–10 scale gives the Net Promoter Score; k-RR at ε = 2 keeps each point within ± 7 points."),
        fields=_rating("0-10", _("Not at all likely"), _("Extremely likely")),
    ),
    Preset(
        "satisfaction",
        _("Satisfaction"),
        _("Overall, how satisfied are you?"),
        "rating",
        2.0,
        "hybrid",
        _("A mean rating on 1–5 with Hybrid, the most precise for a mean at ε = 2: about ± 0.2 points."),
        fields=_rating("1-5", _("Very dissatisfied"), _("Very satisfied"), "mean"),
    ),
)

BY_KEY = {preset.key: preset for preset in PRESETS}


def preset(key: str) -> Preset | None:
    return BY_KEY.get(key)
