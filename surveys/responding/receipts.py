"""The receipt a respondent gets after sending: what left the browser, in words.

Each row names the question, says what the stored report *is* in plain language (the option a
k-RR report names, the options a bit vector marks, the noisy number a numeric report decodes to)
and how much it says about the true answer: for k-RR the chance that the report is the true
answer (e^ε / (e^ε + k − 1), seed 001); otherwise the chance that someone who sees it guesses the
answer right (``Mechanism.guess_probability``). The exact report stays beside it for the curious.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils.formats import number_format
from django.utils.translation import gettext as _

from ldp.mechanisms import KRandomizedResponse
from ldp.multiselect import PaddingAndSampling, SetUnaryEncoding
from ldp.numeric import NumericMechanism
from ldp.textreports import TextReports
from surveys.responding.submissions import ParsedReport
from surveys.templatetags.murmur import percent


def receipt_rows(reports: Iterable[ParsedReport], version: int | None = None) -> list[dict[str, Any]]:
    """One JSON-ready row per stored report (``version`` overrides the randomization's: previews)."""
    rows = []
    for r in reports:
        mechanism = r.randomization.build_mechanism()
        stored = mechanism.unpack_report(r.packed)
        rows.append(
            {
                "question": r.question.pk,
                "text": r.question.text,
                "version": r.randomization.version if version is None else version,
                "mechanism": r.randomization.mechanism,
                "epsilon": r.randomization.epsilon,
                "stored": stored,
                "summary": describe(mechanism, list(r.question.options), stored),
                "chance": chance(mechanism),
            }
        )
    return rows


def describe(mechanism: Any, options: list[str], report: dict[str, Any]) -> str:
    """The stored report in words."""
    if isinstance(mechanism, NumericMechanism):
        grid_step = (mechanism.hi - mechanism.lo) / mechanism.grid
        value = mechanism.lo + float(mechanism.decode[report["index"]]) * grid_step
        return _("a randomized number: %(value)s") % {"value": number_format(round(value, 4))}
    name = mechanism.name
    if name == "rappor":
        return _("a randomized Bloom filter of your answer (cohort %(cohort)s), which alone names no answer") % {
            "cohort": report["cohort"]
        }
    if name in ("text-cms", "text-hcms"):
        return _("one randomized piece of a sketch of all answers' hashes, which alone names no answer")

    def labels(indexes: Iterable[int]) -> str:
        chosen = [f"“{options[i]}”" for i in indexes if 0 <= i < len(options)]
        return ", ".join(chosen) if chosen else _("none")

    if isinstance(mechanism, SetUnaryEncoding):
        marked = [i for i, bit in enumerate(report["bits"]) if bit]
        return _("a yes/no mark for every option, marked for: %(options)s") % {"options": labels(marked)}
    if isinstance(mechanism, PaddingAndSampling):
        return padded_item(mechanism, options, report, labels)
    if name == "krr":
        return _("the option %(option)s") % {"option": labels([report["value"]])}
    if name == "subset":
        return _("a set of options: %(options)s") % {"options": labels(report["subset"])}
    if name in ("oue", "sue"):
        marked = [i for i, bit in enumerate(report["bits"]) if bit]
        return _("a yes/no mark for every option, marked for: %(options)s") % {"options": labels(marked)}
    if name == "dbitflip":
        marked = [b for b, bit in zip(report["buckets"], report["bits"], strict=True) if bit]
        return _("marks for %(count)s options, marked for: %(options)s") % {
            "count": len(report["buckets"]),
            "options": labels(marked),
        }
    if name == "olh":
        return _("a hashed code: %(value)s of %(size)s") % {"value": report["value"] + 1, "size": mechanism.range_size}
    if name in ("cms", "hcms", "hadamard"):
        return _("one coded piece of a sketch of all answers, which alone names no option")
    return ""


def padded_item(mechanism: PaddingAndSampling, options: list[str], report: dict[str, Any], labels: Any) -> str:
    """Padding-and-sampling's report: one randomized item, an option or a blank (k-RR), or a hashed code."""
    if mechanism.oracle_name == "olh":
        size = mechanism.oracle.range_size  # type: ignore[attr-defined]
        return _("one hashed code of one of your choices or a blank, randomized: %(value)s of %(size)s") % {
            "value": report["value"] + 1,
            "size": size,
        }
    if report["value"] < len(options):
        return _("one option, randomized (not necessarily one you chose): %(option)s") % {
            "option": labels([report["value"]])
        }
    return _("a blank, randomized (it names no option)")


def chance(mechanism: Any) -> str:
    """How much the report says about the true answer, in one sentence (empty for numbers)."""
    if isinstance(mechanism, KRandomizedResponse):
        return _("Chance that this is your true answer: %(p)s") % {"p": percent(mechanism.keep_probability)}
    if isinstance(mechanism, (NumericMechanism, TextReports, SetUnaryEncoding, PaddingAndSampling)):
        return ""
    return _("Chance that someone who sees it guesses your answer: %(p)s (%(blind)s by pure chance)") % {
        "p": percent(guess_probability(mechanism)),
        "blind": percent(1 / mechanism.k),
    }


#: Per mechanism instance (``surveys.models.build_mechanism`` shares one per parameter set and
#: process): its guess probability, which costs milliseconds for OLH and CMS — too much to
#: recompute for every submission's receipt.
_GUESS: dict[int, tuple[Any, float]] = {}


def guess_probability(mechanism: Any) -> float:
    hit = _GUESS.get(id(mechanism))
    if hit is None or hit[0] is not mechanism:
        if len(_GUESS) >= 1024:
            _GUESS.clear()
        hit = _GUESS[id(mechanism)] = (mechanism, float(mechanism.guess_probability()))
    return hit[1]
