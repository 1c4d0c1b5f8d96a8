"""Randomizations: the frozen parameters a question's reports were made with, and the ldp mechanism
they build.

A :class:`Randomization` is an immutable snapshot; every report points to the one it was made with
(:class:`surveys.models.Report`), so it can always be read. :func:`build_mechanism` turns stored
parameters into the ldp mechanism (through :func:`ldp.registry.build`, the only place that knows
mechanisms), once per process. Imported by ``surveys/models.py``, from which both stay importable.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, cast

from django.db import models

from ldp import memo, registry
from ldp.mechanisms import Mechanism
from ldp.multiselect import PaddingAndSampling, SetUnaryEncoding
from ldp.numeric import NumericMechanism
from ldp.textreports import TextReports

AnyMechanism = Mechanism | NumericMechanism | TextReports | SetUnaryEncoding | PaddingAndSampling


@lru_cache(maxsize=1024)
def _cached_mechanism(name: str, k: int, epsilon: float, params_json: str) -> AnyMechanism:
    # The registry builds every family's (:func:`ldp.registry.build`), and only those classes.
    return cast(AnyMechanism, registry.build(name, k=k, epsilon=epsilon, **json.loads(params_json)))


#: The memoized layer's flip probability a new randomization of a recurring survey stores
#: (``Randomization.memo_gamma``), per mechanism with a flip: :data:`ldp.memo.DEFAULT_MEMO_GAMMA`.
#: Changing them affects new randomizations only.
DEFAULT_MEMO_GAMMA = memo.DEFAULT_MEMO_GAMMA


def build_mechanism(name: str, k: int, epsilon: float, params: dict[str, Any]) -> AnyMechanism:
    """The ldp mechanism for these parameters, built once per process.

    Mechanisms are immutable, and building one can cost (CMS derives its hash table and
    collision matrix), so every request with the same parameters shares one instance. Numeric
    mechanisms (``ldp.numeric``) keep their range in ``params`` (``lo``, ``hi``), so a
    randomization's snapshot alone says how to read its reports; ``k`` is then not used. So do
    free-text mechanisms (``ldp.textreports``: the sketch's rows and width, or RAPPOR's Bloom filter
    and probabilities); their k is 0. Multi-select mechanisms (``ldp.multiselect``) keep the
    maximum number of options a respondent may choose, ``max_choices`` (l; k when unlimited).
    """
    return _cached_mechanism(name, k, epsilon, json.dumps(params, sort_keys=True))


class Randomization(models.Model):
    """An immutable snapshot of one question's randomization parameters.

    Respondents' browsers randomize with the client spec of a randomization and send its
    version back with each report; a report is stored against the randomization it names.
    A question has at most one randomization in force; editing its parameters *retires* it (under
    a row lock that every submission to it shares, see ``surveys.responding.submissions``), and a retired
    randomization accepts no more reports.
    """

    question = models.ForeignKey("surveys.Question", on_delete=models.CASCADE, related_name="randomizations")
    version = models.PositiveIntegerField()
    mechanism = models.CharField(max_length=20)
    k = models.PositiveSmallIntegerField()
    epsilon = models.FloatField()
    params = models.JSONField(default=dict)
    memo_gamma = models.FloatField(null=True, blank=True)
    """In a recurring survey, the flip probability of the memoized layer of dBitFlip and 1BitMean
    (``surveys.series.rounds``): stored with the parameters when the randomization is created (or the
    survey becomes recurring), sent in the memo block, never changed, so a later default cannot
    reinterpret a round's reports. None: not memoized."""
    retired = models.BooleanField(default=False)
    retuned_after = models.PositiveIntegerField(null=True, blank=True)
    """Set on the version a two-phase design's re-tune chose (``surveys.kinds.adaptive``): the number
    of phase-1 reports it was chosen from. The version before it stays in force for respondents
    whose page carried it, and both are estimated together. None: not a re-tuned version."""
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question", "version"]
        constraints = [
            models.UniqueConstraint(fields=["question", "version"], name="unique_randomization_version"),
            models.UniqueConstraint(
                fields=["question"], condition=models.Q(retuned_after__isnull=False), name="one_retune_per_question"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.question} v{self.version}"

    def key(self) -> tuple[str, int, float, dict[str, Any]]:
        return (self.mechanism, self.k, self.epsilon, dict(self.params))

    def build_mechanism(self) -> AnyMechanism:
        """The ldp mechanism of these (immutable) parameters, kept on the instance once built."""
        mechanism = self.__dict__.get("_mechanism")
        if mechanism is None:
            mechanism = self.__dict__["_mechanism"] = build_mechanism(self.mechanism, self.k, self.epsilon, self.params)
        return mechanism
