"""Surveys, questions, and the randomized reports respondents' browsers send.

A stored value is a *report*, never an answer: the true answer stays in the browser.
Every report points to the immutable randomization it was made with
(:class:`surveys.randomizations.Randomization`), so it can always be interpreted, and a question's
randomization is frozen once it has reports.
"""

from __future__ import annotations

import math
import secrets
from typing import Any

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from ldp.sampling import submission_epsilon

# The frozen randomizations and the ldp mechanisms they build live in their own module; importable from here.
from surveys.randomizations import DEFAULT_MEMO_GAMMA, AnyMechanism, Randomization, build_mechanism  # noqa: F401

MIN_OPTIONS = 2
MAX_OPTIONS = 64
#: Most candidate strings an organizer queries on one free-text question.
MAX_CANDIDATES = 200


def asked_jointly(questions: list[Any]) -> dict[int, tuple[Any, str]]:
    """Per question id asked in a declared pair: (the pair's question, "first" or "second")."""
    members: dict[int, tuple[Any, str]] = {}
    for question in questions:
        if question.pair_first_id is not None:
            members[question.pair_first_id] = (question, "first")
            members[question.pair_second_id] = (question, "second")
    return members


def spent_epsilon(questions: list[Any], pool: Any = None) -> float:
    """The epsilon a respondent answering all these questions spends: a declared pair's members spend none,
    and of a sampled ``pool`` (:class:`surveys.sampling.Pool`) only the m largest count
    (:func:`ldp.sampling.submission_epsilon`: the other pooled questions send fakes).

    A question asked directly (epsilon infinite, :data:`ldp.registry.NOT_RANDOMIZED`) is not
    randomized at all: it is counted apart (:func:`asked_directly`), not in this sum."""
    members = asked_jointly(questions)
    counted = [q for q in questions if q.pk not in members and math.isfinite(q.epsilon)]
    pooled = [q.epsilon for q in counted if pool is not None and q.pk in pool]
    others = [q.epsilon for q in counted if pool is None or q.pk not in pool]
    return submission_epsilon(others, pooled, min(pool.m, len(pooled)) if pooled else 1)


def asked_directly(questions: list[Any]) -> list[Any]:
    """The questions asked directly (not randomized: epsilon infinite), in order."""
    return [q for q in questions if not math.isfinite(q.epsilon)]


def hour_now() -> Any:
    """The current time, truncated to the hour."""
    return timezone.now().replace(minute=0, second=0, microsecond=0)


#: Smallest random id: above every id an autoincrement ever gave, so re-keyed rows cannot collide.
RANDOM_ID_FLOOR = 2**32


def random_id() -> int:
    """A random 63-bit primary key: ids carry no arrival order.

    Collisions are vanishingly rare (2^-63 per pair) and, if one ever happens, the unique primary
    key refuses the row and the transaction rolls back whole.
    """
    return RANDOM_ID_FLOOR + secrets.randbelow(2**63 - RANDOM_ID_FLOOR)


def new_slug() -> str:
    """An unguessable share-link slug: 16 random bytes, URL-safe (22 characters)."""
    return secrets.token_urlsafe(16)


def new_series_key() -> str:
    """A recurring series' public id: 16 random bytes, URL-safe. Browsers key memoized responses by it."""
    return secrets.token_urlsafe(16)


class Series(models.Model):
    """A recurring survey: its rounds are surveys that share this series (``Survey.series``).

    Each round is a survey of its own (own share link, reports, tallies and results) whose questions
    are copies of the previous round's with the same frozen randomization, so estimates are
    comparable across rounds (:mod:`surveys.series.rounds`). ``key`` is public: respondents' browsers key
    the permanent layer of memoized reports by (series key, question memo key, true value).
    """

    class Recurrence(models.TextChoices):
        MANUAL = "manual", _("When I open the next round")
        WEEKLY = "weekly", _("Every week")
        MONTHLY = "monthly", _("Every month")

    key = models.CharField(max_length=32, unique=True, default=new_series_key, editable=False)
    recurrence = models.CharField(_("new rounds"), max_length=10, choices=Recurrence.choices, default=Recurrence.MANUAL)
    next_round_at = models.DateTimeField(_("next round opens at"), null=True, blank=True)

    class Meta:
        verbose_name_plural = "series"

    def __str__(self) -> str:
        return f"series {self.key}"


class Survey(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", _("Draft")
        OPEN = "open", _("Open")
        CLOSED = "closed", _("Closed")

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="surveys")
    title = models.CharField(_("title"), max_length=200)
    description = models.TextField(_("description"), blank=True)
    thank_you = models.TextField(
        _("thank-you message"),
        blank=True,
        help_text=_("Shown to respondents once their answers are sent (empty: Murmur's own thanks only)."),
    )
    slug = models.CharField(max_length=32, unique=True, default=new_slug, editable=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    epsilon_cap = models.FloatField(
        _("privacy budget cap"),
        null=True,
        blank=True,
        help_text=_("Largest total epsilon one respondent may spend on this survey (empty: no cap)."),
    )
    expected_respondents = models.PositiveIntegerField(
        _("expected respondents"),
        default=1000,
        help_text=_("Used to preview each question's error and to recommend mechanisms."),
    )
    closes_at = models.DateTimeField(_("closes at"), null=True, blank=True)
    response_limit = models.PositiveIntegerField(_("response limit"), null=True, blank=True)
    allow_repeat_responses = models.BooleanField(
        _("allow several responses per browser"),
        default=False,
        help_text=_("Off: a browser that has responded cannot respond again."),
    )
    invite_only = models.BooleanField(
        _("invitation only"),
        default=False,
        help_text=_("On: only people with a single-use invitation link can respond, once each."),
    )
    public_results = models.BooleanField(
        _("publish results"),
        default=False,
        help_text=_("On: anyone with the results link sees the estimated distributions (read-only)."),
    )
    created_at = models.DateTimeField(auto_now_add=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    series = models.ForeignKey(Series, on_delete=models.SET_NULL, null=True, blank=True, related_name="rounds")
    round_number = models.PositiveIntegerField(_("round"), null=True, blank=True)
    # Empty: a personal survey of its owner (surveys/teams/models.py; roles in surveys/access.py).
    workspace = models.ForeignKey(
        "surveys.Workspace", on_delete=models.PROTECT, null=True, blank=True, related_name="surveys"
    )
    # Counts changes to what results pages show besides the survey's own row (questions, matrices,
    # randomizations, sample): surveys.results.stamps adds 1 to it, and a 304 reads it here.
    revision = models.PositiveBigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["series", "round_number"], name="one_survey_per_round")]

    def __str__(self) -> str:
        return self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        """A full save never writes :attr:`revision` back: only stamps.changed adds to it (in SQL), and
        an instance read before that must not undo it."""
        if self.pk is not None and not self._state.adding and not (args or set(kwargs) - {"using"}):
            deferred = self.get_deferred_fields() | {"revision"}
            kwargs["update_fields"] = [
                f.name for f in self._meta.concrete_fields if not f.primary_key and f.attname not in deferred
            ]
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("survey_detail", args=[self.pk])

    def get_share_url(self) -> str:
        return reverse("respond", args=[self.slug])

    @property
    def total_epsilon(self) -> float:
        """Budget a respondent spends answering every question (sequential composition).

        A declared pair's epsilon is spent once for its two questions, which spend none of their own;
        of a sampled pool only m questions count (:mod:`surveys.sampling`).
        """
        questions = list(self.questions.all())
        return spent_epsilon(questions, pool_of(self, [q.pk for q in questions]))

    def accepting_responses(self, now: Any = None) -> bool:
        """Open, before its close date, and under its response limit."""
        if self.status != self.Status.OPEN:
            return False
        if self.closes_at is not None and (now or timezone.now()) >= self.closes_at:
            return False
        return self.response_limit is None or self.response_count() < self.response_limit

    def response_count(self) -> int:
        """Submissions so far, from the hourly counters (never a scan of the submissions)."""
        return int(self.hourly_responses.aggregate(total=models.Sum("count"))["total"] or 0)

    def get_results_url(self) -> str:
        return reverse("survey_results", args=[self.pk])

    def get_public_results_url(self) -> str:
        return reverse("public_results", args=[self.slug])


class Matrix(models.Model):
    """A block of choice questions on the same options, asked as one grid (LimeSurvey's "array").

    Its items are ordinary :class:`Question` rows of kind ``matrix`` pointing here, kept next to
    each other in the survey's order; each is randomized on its own, with its own epsilon and
    mechanism, so submissions, tallies, results and exports treat them as any choice question.
    """

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="matrices")
    title = models.CharField(_("title"), max_length=500)

    def __str__(self) -> str:
        return self.title


class Question(models.Model):
    class Kind(models.TextChoices):
        SINGLE_CHOICE = "single", _("Single choice")
        YES_NO = "yes_no", _("Yes / no")
        NUMERIC = "numeric", _("Number")
        RATING = "rating", _("Rating scale")
        FREE_TEXT = "text", _("Short answer (free text)")
        MULTI_SELECT = "multi_select", _("Multi-select (choose all that apply)")
        MATRIX = "matrix", _("Matrix item")
        PAIR = "pair", _("Declared pair (two questions asked jointly)")

    class Scale(models.TextChoices):
        ONE_TO_FIVE = "1-5", _("1 to 5")
        ONE_TO_SEVEN = "1-7", _("1 to 7")
        ONE_TO_TEN = "1-10", _("1 to 10")
        NPS = "0-10", _("0 to 10 (Net Promoter Score)")

    class RatingEstimate(models.TextChoices):
        SHARES = "shares", _("Share of each point")
        MEAN = "mean", _("Mean rating")

    class MechanismName(models.TextChoices):
        KRR = "krr", _("k-RR (randomized response)")
        SUBSET = "subset", _("Subset selection")
        OUE = "oue", _("Optimized unary encoding (OUE)")
        OLH = "olh", _("Optimal local hashing (OLH)")
        HADAMARD = "hadamard", _("Hadamard response")
        SUE = "sue", _("Symmetric unary encoding (basic RAPPOR)")
        CMS = "cms", _("Count Mean Sketch (Apple)")
        HCMS = "hcms", _("Hadamard Count Mean Sketch (Apple)")
        DBITFLIP = "dbitflip", _("dBitFlip (Microsoft)")
        LAPLACE = "laplace", _("Laplace (discrete)")
        GAUSSIAN = "gaussian", _("Gaussian (μ-GDP, discrete)")
        ONE_BIT = "1bitmean", _("1BitMean (Microsoft)")
        DUCHI = "duchi", _("Duchi et al.")
        PIECEWISE = "piecewise", _("Piecewise")
        HYBRID = "hybrid", _("Hybrid (Duchi + Piecewise)")
        TEXT_CMS = "text-cms", _("Count Mean Sketch of the text (Apple)")
        TEXT_HCMS = "text-hcms", _("Hadamard Count Mean Sketch of the text (Apple)")
        RAPPOR = "rappor", _("RAPPOR (Google)")
        SET_SUE = "set-sue", _("Symmetric unary encoding of the chosen set")
        SET_OUE = "set-oue", _("Optimized unary encoding of the chosen set")
        PADDING_KRR = "padding-krr", _("Padding and sampling with k-RR")
        PADDING_OLH = "padding-olh", _("Padding and sampling with OLH")
        FORCED_RESPONSE = "forced-response", _("Forced response (Boruch)")
        UNRELATED_QUESTION = "unrelated-question", _("Unrelated question (Greenberg et al.)")
        WARNER = "warner", _("Warner's mirrored statement (yes / no)")
        CROSSWISE = "crosswise", _("Crosswise model (yes / no)")
        DIRECT = "direct", _("Asked directly: not randomized, stored as given")

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveIntegerField(default=0)
    text = models.CharField(_("question"), max_length=500)
    kind = models.CharField(_("kind"), max_length=20, choices=Kind.choices, default=Kind.SINGLE_CHOICE)
    options = models.JSONField(_("options"), default=list)
    epsilon = models.FloatField(_("epsilon"), default=1.0)
    mechanism = models.CharField(_("mechanism"), max_length=20, choices=MechanismName.choices, default="krr")
    mechanism_params = models.JSONField(default=dict, blank=True)
    mechanism_chosen_automatically = models.BooleanField(
        _("mechanism chosen automatically"),
        default=False,
        help_text=_("The builder's advisor chose the mechanism (ldp.advisor) when the question was saved."),
    )
    # The survey's budget plan (surveys.budget): a planned question's epsilon is its weight's share
    # of what the survey's total leaves after fixed questions; unplanned, it keeps the epsilon given.
    planned_epsilon = models.BooleanField(_("epsilon from the survey's plan"), default=False)
    budget_weight = models.FloatField(_("weight in the budget plan"), default=1.0)
    # Number questions: the range is the sensitivity, so it is required (surveys.kinds checks it).
    range_low = models.FloatField(_("lowest value"), null=True, blank=True)
    range_high = models.FloatField(_("highest value"), null=True, blank=True)
    whole_numbers = models.BooleanField(_("whole numbers only"), default=True)
    unit = models.CharField(_("unit"), max_length=30, blank=True)
    bins = models.PositiveSmallIntegerField(_("histogram bins"), null=True, blank=True)
    """Empty: the mean is estimated. A count: the shares of equal-width value ranges (a choice mechanism)."""
    # Rating questions: the scale, its end labels, and what the organizer wants estimated.
    scale = models.CharField(_("scale"), max_length=5, choices=Scale.choices, blank=True)
    low_label = models.CharField(_("label of the lowest point"), max_length=60, blank=True)
    high_label = models.CharField(_("label of the highest point"), max_length=60, blank=True)
    rating_estimate = models.CharField(
        _("estimate"), max_length=10, choices=RatingEstimate.choices, default=RatingEstimate.SHARES
    )
    # Free-text questions: the normalized strings the organizer asks about ("how many wrote X?").
    # Not part of the randomization, so they may change after reports arrive.
    candidates = models.JSONField(_("candidate answers"), default=list, blank=True)
    # Recurring surveys: the question's id across rounds (its first round's id; empty there).
    series_question = models.CharField(max_length=24, blank=True, editable=False)
    # Matrix items: the block (grid) the item belongs to; its options are the block's shared options.
    matrix = models.ForeignKey(Matrix, on_delete=models.CASCADE, null=True, blank=True, related_name="items")
    # Declared pairs: a question of kind "pair" randomizes the answers to these two questions as one
    # answer, first * k2 + second (ldp.crosstab.encode_pair); its options are the k1 k2 pairs. The two
    # are still shown and answered, but have no randomization and no budget of their own meanwhile.
    pair_first = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="pairs_as_first"
    )
    pair_second = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="pairs_as_second"
    )
    # How the answer page shows it, never part of the randomization (ldp.branching): "show_if", a
    # condition on an earlier answer ({"question": id, "in": [...]} or {..., "between": [lo, hi]});
    # "shuffle_options" and "keep_last", a per-respondent option order drawn in the browser.
    logic = models.JSONField(_("display logic"), default=dict, blank=True)
    # Choice questions (surveys.kinds: the kinds that offer it): the last option is a "Prefer not to
    # say" that Murmur adds, randomized like any other; a skip sends its report (ldp.branching).
    prefer_not_to_say = models.BooleanField(_("offers “Prefer not to say”"), default=False)
    # Two-phase design (surveys.kinds.adaptive): after this per cent of the survey's expected
    # respondents have reported, a job re-tunes the randomization from their reports (a new version);
    # empty: one design throughout. ``retuned_after``: the phase-1 reports the job decided on.
    adaptive_percent = models.PositiveSmallIntegerField(
        _("re-tune after this per cent of respondents"), null=True, blank=True
    )
    retuned_after = models.PositiveIntegerField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["position", "id"]

    def __str__(self) -> str:
        return self.text

    @property
    def k(self) -> int:
        return len(self.options)

    @property
    def prefer_not_index(self) -> int | None:
        """The index of its "Prefer not to say" option (always the last), or None when not offered."""
        return self.k - 1 if self.prefer_not_to_say and self.options else None

    @property
    def written_options(self) -> list[str]:
        """The options the organizer wrote: all but the "Prefer not to say" Murmur adds."""
        return list(self.options[:-1] if self.prefer_not_index is not None else self.options)

    def build_mechanism(self) -> AnyMechanism:
        """The ldp mechanism for the question's current parameters."""
        return build_mechanism(self.mechanism, self.k, self.epsilon, self.mechanism_params)

    def randomization_key(self) -> tuple[str, int, float, dict[str, Any]]:
        return (self.mechanism, self.k, self.epsilon, dict(self.mechanism_params))

    def has_reports(self) -> bool:
        """Whether it has reports, or a declared pair it belongs to has (its options are then frozen too)."""
        if self.reports.exists():
            return True
        return Report.objects.filter(
            models.Q(question__pair_first=self) | models.Q(question__pair_second=self)
        ).exists()

    def randomization_frozen(self) -> bool:
        """Whether the question's randomization is frozen: it has reports in this round or, in a
        recurring survey, in any round of its series (same :attr:`memo_key`).

        A later round's copy must stay what earlier rounds' reports mean: browsers reuse the memoized
        permanent layer per (series, question id, option index) whatever the parameters, so a changed
        epsilon, mechanism, number of options or range would break the stated epsilon_inf, and trends
        would compare different things.
        """
        if self.survey.series_id is None:
            return self.has_reports()
        siblings = Question.objects.filter(survey__series_id=self.survey.series_id).filter(
            models.Q(series_question=self.memo_key) | models.Q(pk=int(self.memo_key), series_question="")
        )
        return Report.objects.filter(question__in=siblings).exists()

    @property
    def memo_key(self) -> str:
        """The question's id in its series, the same in every round (browsers memoize by it)."""
        return self.series_question or str(self.pk)

    def current_randomization(self) -> Randomization | None:
        """The randomization in force (not retired), if it matches the current parameters."""
        latest = self.randomizations.filter(retired=False).order_by("-version").first()
        if latest is not None and latest.key() == self.randomization_key():
            return latest
        return None


class Submission(models.Model):
    """One respondent's set of reports for a survey. Nothing identifies the respondent.

    ``received_hour`` is the arrival time truncated to the hour (enough for a responses-over-time
    chart, too coarse to match a submission against an access log). ``nonce`` is the random
    one-time token of the answer page the reports came from; it makes a replayed request fail.
    The id is random (:func:`random_id`), so ids do not order submissions by arrival either.
    """

    id = models.BigIntegerField(primary_key=True, default=random_id, editable=False)
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="submissions")
    received_hour = models.DateTimeField(default=hour_now, db_index=True)
    nonce = models.CharField(max_length=64, unique=True, null=True, blank=True, editable=False)

    class Meta:
        # The raw-report export pages through a survey's submissions by id (surveys/results/export_files.py).
        indexes = [
            models.Index(fields=["survey", "id"], name="submission_survey_id"),
            models.Index(fields=["survey", "received_hour", "id"], name="submission_survey_hour"),
        ]

    def __str__(self) -> str:
        return f"submission {self.pk} to {self.survey}"


class HourlyResponses(models.Model):
    """How many submissions a survey received in one hour, in one of several shards.

    A submission adds 1 to the counter of its hour in a randomly chosen shard (an upsert), so
    concurrent respondents rarely wait on the same row; the hour's count is the sum of its shards.
    """

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="hourly_responses")
    hour = models.DateTimeField()
    shard = models.PositiveSmallIntegerField(default=0)
    count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["survey", "hour", "shard"]
        constraints = [
            models.UniqueConstraint(fields=["survey", "hour", "shard"], name="one_counter_per_survey_hour_shard")
        ]

    def __str__(self) -> str:
        return f"{self.survey} @ {self.hour} [{self.shard}]: {self.count}"


class Report(models.Model):
    """One randomized report, packed as ldp's ``parse_report`` returns it (random id: no order).

    ``survey`` repeats its submission's survey so that every key leads with it: on PostgreSQL the
    table is ``PARTITION BY HASH (survey_id)`` (migration 0031, ``docs/deployment.md``), and a
    partitioned table's primary and unique keys must hold the partition key. Nothing may hold a
    ForeignKey to a report (Django cannot point one at a composite key).
    """

    pk = models.CompositePrimaryKey("survey", "id")
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="+", db_index=False)
    id = models.BigIntegerField(default=random_id, editable=False)
    submission = models.ForeignKey(Submission, on_delete=models.CASCADE, related_name="reports")
    question = models.ForeignKey(Question, on_delete=models.RESTRICT, related_name="reports")
    randomization = models.ForeignKey(Randomization, on_delete=models.RESTRICT, related_name="reports")
    packed = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["survey", "submission", "question"], name="one_report_per_question")
        ]

    def __str__(self) -> str:
        return f"report {self.id}"


class TallyCell(models.Model):
    """One cell of one shard of a randomization's running sufficient statistics.

    A randomization's tally (ldp's ``Tally``: the number of reports n and integer counts) is the
    sum over shards of its cells: ``cell`` indexes the mechanism's counts, :data:`N_CELL`
    holds n, and cells from :data:`PROFILE_CELL` down hold the histogram of report weights. A
    submission's reports reach the cells of one randomly chosen shard through a pending row
    (:class:`TallyDelta`), folded in with one ``INSERT ... ON CONFLICT DO UPDATE`` per batch;
    readers add what is still pending, so tallies are always exactly the sums of the stored
    reports, and results read O(cells x shards) rows plus the pending ones, never the reports.
    The key is the cell itself (no autoincrement id that would order the cells' first reports),
    led by the randomization's survey (denormalized): on PostgreSQL the table is partitioned by it,
    like :class:`Report`.
    """

    N_CELL = -1
    #: Cell PROFILE_CELL - i holds entry i of ``ldp.integrity.weight_profile`` (flattened row by row;
    #: reports by weight, and by weight and bit), for mechanisms whose reports are bit vectors.
    PROFILE_CELL = -2

    pk = models.CompositePrimaryKey("survey", "randomization", "shard", "cell")
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="+", db_index=False)
    randomization = models.ForeignKey(Randomization, on_delete=models.CASCADE, related_name="cells")
    shard = models.PositiveSmallIntegerField()
    cell = models.IntegerField()
    count = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.randomization} [{self.shard}, {self.cell}] = {self.count}"


class TallyDelta(models.Model):
    """A submission's reports not yet added to the tally cells: pending increments, folded by a job.

    The submit statement appends one narrow row (the reports' randomizations and bytes,
    ``surveys.responding.tallies.delta_payload``) instead of updating a randomization's cells
    once per cell; ``surveys.responding.tallies.fold_deltas`` adds pending rows to the cells and
    deletes them in one transaction, off the request path. Readers add the pending rows of the
    survey to the cells in one statement (one snapshot), so a tally is always exactly the sum of
    the stored reports. Nothing here orders submissions: the id is random, there is no time, and
    a row lives only until it is folded.
    """

    pk = models.CompositePrimaryKey("survey", "id")  # its index serves readers, who filter by survey
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="+", db_index=False)
    id = models.BigIntegerField(default=random_id, editable=False)
    shard = models.PositiveSmallIntegerField()
    payload = models.BinaryField()

    def __str__(self) -> str:
        return f"pending tally increments of {self.survey_id}"


class Invitation(models.Model):
    """A single-use invitation to answer a survey, kept so that it can never identify an answer.

    Only a keyed hash of the link's token is stored (``surveys.responding.invitations.token_hash``), with a
    used flag. Nothing links an invitation to the submission it made: no shared id, no foreign key,
    and no time finer than the hour it was created. The address is kept only while reminders may
    still be sent (it is what a reminder goes to) and forgotten when the survey closes.
    """

    id = models.BigIntegerField(primary_key=True, default=random_id, editable=False)
    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="invitations")
    token_hash = models.BinaryField(max_length=32, unique=True, editable=False)
    used = models.BooleanField(default=False)
    email = models.EmailField(blank=True)
    created_hour = models.DateTimeField(default=hour_now, editable=False)
    reminders_sent = models.PositiveSmallIntegerField(default=0)

    def __str__(self) -> str:
        return f"invitation to {self.survey} ({'used' if self.used else 'unused'})"


class Account(models.Model):
    """What Murmur keeps about an organizer beside Django's user: whether the email address given
    at sign-up was confirmed, and the language Murmur's mail to them is written in.

    Sign-up creates one, unconfirmed; until its address is confirmed the account may build surveys
    but not open them. Users without one (made by staff, ``createsuperuser`` or the demo) are
    trusted as they are.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="account")
    email_confirmed = models.BooleanField(_("email address confirmed"), default=False)
    language = models.CharField(_("language of mail"), max_length=10, choices=settings.LANGUAGES, default="en")

    def __str__(self) -> str:
        return f"account of {self.user}"


from surveys.integrations import ApiToken, Webhook, WebhookDelivery  # noqa: E402, F401  (API tokens, webhooks)

# Models kept beside their code: jobs (surveys/jobs/), each survey's version counter, pair counts.
from surveys.jobs.records import Job  # noqa: E402, F401
from surveys.responding.versions import SurveyVersion  # noqa: E402, F401
from surveys.results.pair_models import OpenPairCount, PairCount, PairHour  # noqa: E402, F401
from surveys.sampling import QuestionSample, pool_of  # noqa: E402, F401  (question sampling, RS+FD)
from surveys.teams.models import AuditEntry, Membership, OIDCIdentity, Workspace, WorkspaceInvitation  # noqa: E402, F401
from surveys.translations import SurveyLanguage, Translation  # noqa: E402, F401  (a survey's languages)
