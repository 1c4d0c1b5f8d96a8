"""The organizer API's request and response bodies (pydantic, through django-ninja).

Field names follow the builder's forms and the models; a question's kind-specific fields are all
optional here, and the builder's own form (:class:`surveys.forms.question.QuestionForm`) decides
which a kind needs, so the API refuses exactly what the builder refuses.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import Field


class Error(Schema):
    detail: str
    fields: dict[str, list[str]] = Field(default_factory=dict)
    """Per input field, why it was refused ("__all__": the request as a whole)."""


class Pending(Schema):
    detail: str
    retry_after: int
    """Seconds to wait before asking again."""


class SurveyIn(Schema):
    title: str
    description: str = ""
    thank_you: str = ""
    expected_respondents: int = 1000
    epsilon_cap: float | None = 5.0
    closes_at: datetime | None = None
    response_limit: int | None = None
    allow_repeat_responses: bool = False
    invite_only: bool = False
    public_results: bool = False


class SurveyPatch(Schema):
    title: str | None = None
    description: str | None = None
    thank_you: str | None = None
    expected_respondents: int | None = None
    epsilon_cap: float | None = None
    closes_at: datetime | None = None
    response_limit: int | None = None
    allow_repeat_responses: bool | None = None
    invite_only: bool | None = None
    public_results: bool | None = None


class SurveyOut(Schema):
    id: int
    title: str
    description: str
    thank_you: str
    status: Literal["draft", "open", "closed"]
    expected_respondents: int
    epsilon_cap: float | None
    total_epsilon: float
    closes_at: datetime | None
    response_limit: int | None
    allow_repeat_responses: bool
    invite_only: bool
    public_results: bool
    created_at: datetime
    opened_at: datetime | None
    round_number: int | None
    recurrence: str | None
    share_url: str
    transparency_url: str
    results_url: str
    responses: int
    access: list[Literal["view", "export", "edit", "manage"]]
    """What the token may do on the survey: ``view`` its results (estimates, transparency), ``export``
    its raw reports, ``edit`` it (its settings, questions, lifecycle, invitations), ``manage`` delete it."""
    exports: dict[str, str]
    """The downloads the token may fetch, by file name (a viewer's: the estimates only)."""


class RandomizationOut(Schema):
    version: int
    mechanism: str
    k: int
    epsilon: float
    params: dict[str, Any]
    retired: bool


class QuestionIn(Schema):
    """A question as the builder's form takes it; ``mechanism`` "auto" lets the advisor choose."""

    text: str
    kind: str = "single"
    options: list[str] = Field(default_factory=list)
    """The options; with ``prefer_not_to_say``, Murmur adds "Prefer not to say" last, so give them without
    it or, as the API reads them back, with it last (it is then taken as Murmur's, not doubled)."""
    epsilon: float = 1.0
    mechanism: str = "auto"
    d: int | None = None
    hash_count: int | None = None
    width: int | None = None
    range_low: float | None = None
    range_high: float | None = None
    whole_numbers: bool = True
    bins: int | None = None
    unit: str = ""
    candidates: list[str] = Field(default_factory=list)
    max_choices: int | None = None
    scale: str = ""
    low_label: str = ""
    high_label: str = ""
    rating_estimate: str = "shares"
    prefer_not_to_say: bool = False


class QuestionPatch(Schema):
    """Only the fields given change; the rest keep the question's values."""

    text: str | None = None
    kind: str | None = None
    options: list[str] | None = None
    epsilon: float | None = None
    mechanism: str | None = None
    d: int | None = None
    hash_count: int | None = None
    width: int | None = None
    range_low: float | None = None
    range_high: float | None = None
    whole_numbers: bool | None = None
    bins: int | None = None
    unit: str | None = None
    candidates: list[str] | None = None
    max_choices: int | None = None
    scale: str | None = None
    low_label: str | None = None
    high_label: str | None = None
    rating_estimate: str | None = None
    prefer_not_to_say: bool | None = None


class QuestionOut(Schema):
    id: int
    position: int
    text: str
    kind: str
    options: list[str]
    """Every option, "Prefer not to say" last when it is offered (write them back as they are)."""
    epsilon: float
    mechanism: str
    mechanism_params: dict[str, Any]
    mechanism_chosen_automatically: bool
    range_low: float | None
    range_high: float | None
    whole_numbers: bool
    unit: str
    bins: int | None
    scale: str
    low_label: str
    high_label: str
    rating_estimate: str
    prefer_not_to_say: bool
    """A single choice or yes/no question's last option is the "Prefer not to say" Murmur adds."""
    candidates: list[str]
    matrix_id: int | None
    pair_first_id: int | None
    pair_second_id: int | None
    frozen: bool
    """Whether reports froze its randomization: then only its wording may change."""
    randomization: RandomizationOut | None
    """The randomization in force (None: the survey is a draft, or the question was edited since)."""


class MatrixIn(Schema):
    title: str
    items: list[str]
    options: list[str]
    epsilon: float = 1.0
    mechanism: str = "auto"


class PairIn(Schema):
    first: int
    second: int
    epsilon: float = 1.0
    mechanism: str = "auto"


class RecurrenceIn(Schema):
    recurrence: Literal["manual", "weekly", "monthly"]


class RoundOut(Schema):
    id: int
    round_number: int | None
    status: str
    opened_at: datetime | None


class RoundsOut(Schema):
    recurrence: str | None
    next_round_at: datetime | None
    rounds: list[RoundOut]


class InvitationCounts(Schema):
    total: int
    used: int
    unused: int
    with_email: int


class InvitationLinksIn(Schema):
    count: int = Field(ge=1, le=5000)


class InvitationLinksOut(Schema):
    links: list[str]
    """The new links, shown in this response only: Murmur keeps nothing but their keyed hashes."""


class InvitationEmailsIn(Schema):
    emails: list[str] = Field(min_length=1, max_length=5000)


class Sent(Schema):
    sent: int


class EstimatesOut(Schema):
    survey_id: int
    round: int | None
    level: float
    reports: int
    signature: str
    """Changes whenever any of the survey's tallies does (poll it cheaply)."""
    estimates: list[dict[str, Any]]
    """The results page's numbers: one row per question version and option (or summary), with its
    verdict ``enough``; the columns of the estimates export (docs/api.md)."""


class TransparencyOut(Schema):
    survey_id: int
    status: Literal["draft", "open", "closed"]
    public: bool
    """Whether its page is public: once the survey has opened (a draft's holds nothing in force yet)."""
    digest: str
    entries: list[dict[str, Any]]
    versions: list[dict[str, Any]]


class WebhookIn(Schema):
    url: str
    min_new_reports: int = 20


class DeliveryOut(Schema):
    delivery_id: str
    hour: datetime
    test: bool
    reports: int
    attempt: int
    status_code: int | None
    ok: bool
    error: str


class WebhookOut(Schema):
    id: int
    url: str
    min_new_reports: int
    active: bool
    failures: int
    retry_after: datetime | None
    sent_hour: datetime | None
    deliveries: list[DeliveryOut]
    """The latest deliveries, newest first."""


class NewWebhookOut(WebhookOut):
    secret: str
    """The signing secret, in this response only: keep it where the receiver can read it."""


class SourceStringOut(Schema):
    key: str
    """Stable across edits of the text: ``survey:title``, ``q:<question id>:text``, ``q:<id>:option:<i>``…"""
    label: str
    """Where a respondent reads it ("Question 2: option 1")."""
    text: str
    """The base language's text."""


class LanguageOut(Schema):
    code: str
    name: str
    base: bool
    complete: bool
    """Every string translated: the answer page offers the language (opening needs every one complete)."""
    missing: list[str]
    outdated: list[str]
    """Keys translated before a later edit of the base text: opening is refused until they are saved again."""
    texts: dict[str, str]


class LanguagesOut(Schema):
    base: str | None
    """The language the survey is written in; null for a one-language survey."""
    strings: list[SourceStringOut]
    languages: list[LanguageOut]


class LanguageIn(Schema):
    language: str
    base: str | None = None
    """Required the first time: the language the survey is written in."""


class TranslationsIn(Schema):
    texts: dict[str, str]
    """Keys of ``strings``; the others keep their text; an empty text removes a translation."""
