"""Forms validate; views and actions assign."""

from __future__ import annotations

import copy
import operator
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.core.validators import validate_email
from django.utils import timezone
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _

import ldp
from ldp.advisor import recommend
from ldp.mechanisms.local_hashing import optimal_range_size
from ldp.mechanisms.subset import optimal_subset_size
from ldp.numeric import make_numeric_mechanism
from ldp.numeric.advisor import recommend_mean
from ldp.privacy import EPSILON_MAX, EPSILON_MIN
from ldp.textreports import make_text_mechanism
from surveys.costs import cost_of
from surveys.kinds import (
    CATEGORICAL_MECHANISMS,
    MADE_ELSEWHERE,
    KindError,
    clean_candidates,
    clean_option_lines,
    kind_of,
)
from surveys.models import (
    MAX_OPTIONS,
    MIN_OPTIONS,
    Matrix,
    Question,
    Report,
    Survey,
    asked_jointly,
    build_mechanism,
    spent_epsilon,
)
from surveys.series import memoization

#: The client spec carries hash_count x k hash values; more would bloat the answer page.
#: The builder's default mechanism choice: the advisor's pick, stored as the concrete mechanism.
AUTOMATIC = "auto"
MAX_HASH_COUNT = 1024
MAX_SKETCH_WIDTH = 4096
#: A cap larger than this could not be spent: 64 questions x the largest epsilon is far less.
MAX_EPSILON_CAP = 1000.0
#: A new survey's total-ε cap. Above it a respondent's answers are barely protected: with ε = 5 a
#: report is up to e^5 ≈ 148 times likelier under one answer than another.
DEFAULT_EPSILON_CAP = 5.0
#: "Automatic" for a short-answer question: Apple's Count Mean Sketch over the hashed text, which at
#: the usual budgets (ε from 1 to 4) gives a smaller error per report than its one-bit Hadamard variant.
DEFAULT_TEXT_MECHANISM = "text-cms"

#: ``_("...%(x)s") % values`` on a lazy string translates at import time, in the default language;
#: this defers the whole interpolation to when the text is shown.
interpolate_lazy = lazy(operator.mod, str)

AUTOMATIC_HELP = _(
    # xgettext:no-python-format ("95 %" is a percentage, not a placeholder)
    "Automatic picks, for this question's options and ε and the survey's expected respondents, "
    "the mechanism whose widest 95 % error band is narrowest."
)
AUTOMATIC_HELP_RECURRING = _(
    # xgettext:no-python-format ("95 %" is a percentage, not a placeholder)
    "This survey recurs, so Automatic picks among the mechanisms memoized across rounds (dBitFlip for "
    "choices, 1BitMean for numbers, RAPPOR for short answers) the one whose widest 95 % error band is "
    "narrowest; where none is memoized at this ε, the narrowest of all, whose ε then adds up every round."
)


def explain_automatic(form: forms.Form, survey: Survey) -> None:
    """Say in the mechanism field's help what "Automatic" picks in a recurring survey."""
    if survey.series_id is not None:
        form.fields["mechanism"].help_text = AUTOMATIC_HELP_RECURRING


class SignUpForm(UserCreationForm):
    """A username, a password and an email address (required, one account per address): password
    resets and the address check before a first survey opens need it."""

    email = forms.EmailField(
        label=_("Email address"),
        help_text=_("We send a link to confirm it; you can open surveys once it is confirmed."),
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")

    def clean_email(self) -> str:
        email = self.cleaned_data["email"]
        if get_user_model().objects.filter(email__iexact=email).exists():
            raise forms.ValidationError(_("An account with this email address already exists."))
        return email


class SurveyForm(forms.ModelForm):
    class Meta:
        model = Survey
        fields = [
            "title",
            "description",
            "expected_respondents",
            "epsilon_cap",
            "closes_at",
            "response_limit",
            "allow_repeat_responses",
            "invite_only",
            "public_results",
        ]
        widgets = {
            "description": forms.Textarea(attrs={"rows": 3}),
            "closes_at": forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is None:
            self.fields["epsilon_cap"].initial = DEFAULT_EPSILON_CAP
        self.fields["epsilon_cap"].help_text = interpolate_lazy(
            _(
                "The most ε one respondent may spend on the whole survey. New surveys start at %(cap)s: "
                "beyond that, randomization protects each answer only weakly. Raise it only knowingly; "
                "empty means no cap."
            ),
            {"cap": DEFAULT_EPSILON_CAP},
        )
        # Django reads and shows the date in the active zone (surveys.timezones): say which.
        self.fields["closes_at"].help_text = _("In your time zone, %(zone)s. Empty: open until you close it.") % {
            "zone": timezone.get_current_timezone_name()
        }

    def clean_expected_respondents(self) -> int:
        value = self.cleaned_data["expected_respondents"]
        if value < 1:
            raise forms.ValidationError(_("Expect at least one respondent."))
        return value

    def clean_epsilon_cap(self) -> float | None:
        cap = self.cleaned_data["epsilon_cap"]
        if cap is None:
            return None
        if not EPSILON_MIN <= cap <= MAX_EPSILON_CAP:
            raise forms.ValidationError(
                _("The cap must lie between %(low)s and %(high)s.") % {"low": EPSILON_MIN, "high": MAX_EPSILON_CAP}
            )
        if self.instance.pk and cap < self.instance.total_epsilon - 1e-9:
            raise forms.ValidationError(
                _("The questions already spend epsilon = %(total)s; lower their budgets first.")
                % {"total": f"{self.instance.total_epsilon:g}"}
            )
        return cap


#: Most invitations made or mailed in one request.
MAX_INVITATIONS = 5000


class InvitationLinksForm(forms.Form):
    count = forms.IntegerField(
        label=_("Number of links"),
        min_value=1,
        max_value=MAX_INVITATIONS,
        initial=10,
        help_text=_("Each link accepts exactly one response. Links are shown once: copy them before leaving the page."),
    )


class InvitationEmailsForm(forms.Form):
    emails = forms.CharField(
        label=_("Email addresses"),
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=_("One address per line (or separated by commas). Each is mailed its own link, once."),
    )

    def clean_emails(self) -> list[str]:
        raw = self.cleaned_data["emails"].replace(",", "\n").replace(";", "\n").split()
        addresses = sorted({a.strip().lower() for a in raw if a.strip()})
        invalid = [a for a in addresses if not _valid_email(a)]
        if invalid:
            raise forms.ValidationError(
                _("These are not email addresses: %(addresses)s") % {"addresses": ", ".join(invalid[:10])}
            )
        if not addresses:
            raise forms.ValidationError(_("Enter at least one email address."))
        if len(addresses) > MAX_INVITATIONS:
            raise forms.ValidationError(_("At most %(count)s addresses at a time.") % {"count": MAX_INVITATIONS})
        return addresses


def _valid_email(address: str) -> bool:
    try:
        validate_email(address)
    except forms.ValidationError:
        return False
    return True


class QuestionForm(forms.Form):
    """A question's text, options and randomization; knows the budget cap and frozen parameters.

    ``question`` is the question being edited (None when adding one). Its randomization is
    frozen when it has reports: then only the question text and option labels may change.
    """

    text = forms.CharField(label=_("Question"), max_length=500)
    kind = forms.ChoiceField(label=_("Kind"), choices=Question.Kind.choices, initial=Question.Kind.SINGLE_CHOICE)
    options_text = forms.CharField(
        label=_("Options"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=interpolate_lazy(
            _("One option per line, %(low)s to %(high)s options."), {"low": MIN_OPTIONS, "high": MAX_OPTIONS}
        ),
    )
    epsilon = forms.FloatField(
        label=_("Privacy budget ε"),
        initial=1.0,
        min_value=EPSILON_MIN,
        max_value=EPSILON_MAX,
        help_text=interpolate_lazy(
            _("Smaller is more private and less accurate; %(low)s to %(high)s."),
            {"low": EPSILON_MIN, "high": EPSILON_MAX},
        ),
        widget=forms.NumberInput(attrs={"step": "0.01"}),
    )
    mechanism = forms.ChoiceField(
        label=_("Mechanism"),
        choices=[(AUTOMATIC, _("Automatic: the lowest expected error (recommended)")), *Question.MechanismName.choices],
        initial=AUTOMATIC,
        help_text=AUTOMATIC_HELP,
    )
    d = forms.IntegerField(
        label=_("dBitFlip buckets per report (d)"),
        required=False,
        min_value=1,
        max_value=MAX_OPTIONS,
        help_text=_("1 to the number of options; d = 4 is 4BitFlip, d = 5 is 5BitFlip."),
    )
    hash_count = forms.IntegerField(
        label=_("CMS / HCMS hash functions"), required=False, min_value=1, max_value=MAX_HASH_COUNT, initial=512
    )
    width = forms.IntegerField(
        label=_("CMS / HCMS sketch width m"), required=False, min_value=2, max_value=MAX_SKETCH_WIDTH, initial=128
    )

    range_low = forms.FloatField(label=_("Lowest value"), required=False)
    range_high = forms.FloatField(
        label=_("Highest value"),
        required=False,
        help_text=_("Number questions: answers outside this range are refused; the range sets the noise."),
    )
    whole_numbers = forms.BooleanField(label=_("Whole numbers only"), required=False, initial=True)
    bins = forms.IntegerField(
        label=_("Histogram bins"),
        required=False,
        min_value=2,
        max_value=20,
        help_text=_(
            "Number questions: leave empty to estimate the mean; or give 2 to 20 bins to estimate the share "
            "of values in each equal-width range, with a mechanism for choices and honest bands."
        ),
    )
    unit = forms.CharField(label=_("Unit"), max_length=30, required=False, help_text=_("e.g. hours, years, km"))
    candidates_text = forms.CharField(
        label=_("Candidate answers (optional)"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_(
            "Short-answer questions: one per line, the answers you want counted (“how many wrote X?”). "
            "They are normalized like answers (case, spaces, Unicode) and can be changed after reports arrive."
        ),
    )
    max_choices = forms.IntegerField(
        label=_("Most options one may choose"),
        required=False,
        min_value=1,
        max_value=MAX_OPTIONS,
        help_text=_(
            "Multi-select questions: leave empty to let respondents choose any number of options. A small "
            "maximum makes each share more precise at the same ε."
        ),
    )
    scale = forms.ChoiceField(
        label=_("Rating scale"), choices=[("", "—"), *Question.Scale.choices], required=False, initial="1-5"
    )
    low_label = forms.CharField(label=_("Label of the lowest point"), max_length=60, required=False)
    high_label = forms.CharField(label=_("Label of the highest point"), max_length=60, required=False)
    rating_estimate = forms.ChoiceField(
        label=_("Estimate"),
        choices=Question.RatingEstimate.choices,
        initial=Question.RatingEstimate.SHARES,
        required=False,
        help_text=_("Rating questions: the share of each point (and NPS on 0–10), or the mean."),
    )

    RANDOMIZATION_FIELDS = (
        "kind",
        "epsilon",
        "mechanism",
        "d",
        "hash_count",
        "width",
        "range_low",
        "range_high",
        "bins",
        "scale",
        "rating_estimate",
        "max_choices",
    )

    def __init__(self, *args: Any, survey: Survey, question: Question | None = None, **kwargs: Any) -> None:
        self.survey = survey
        self.question = question
        if question is not None and "initial" not in kwargs:
            kwargs["initial"] = initial_from_question(question)
        super().__init__(*args, **kwargs)
        explain_automatic(self, survey)
        self.frozen = question is not None and question.randomization_frozen()
        # Matrix items and declared pairs are made by their own forms and keep their kind; no other
        # question takes one of those kinds.
        own = question.kind if question is not None and question.kind in MADE_ELSEWHERE else None
        self.fields["kind"].choices = [
            (value, label)
            for value, label in Question.Kind.choices
            if (value == own if own else value not in MADE_ELSEWHERE)
        ]
        if self.frozen:
            # The browser does not send disabled inputs; clean() fills them from the question and
            # refuses any value that differs.
            for name in self.RANDOMIZATION_FIELDS:
                self.fields[name].required = False
                self.fields[name].widget.attrs["disabled"] = True

    @property
    def chooses_automatically(self) -> bool:
        """Whether the mechanism field says "Automatic" (so the cost panel explains the advisor's pick)."""
        if self.is_bound:
            return self.data.get("mechanism", AUTOMATIC) == AUTOMATIC
        if self.question is not None:
            return self.question.mechanism_chosen_automatically
        return self.fields["mechanism"].initial == AUTOMATIC

    @property
    def preview_cost(self) -> Any:
        """What the form's current choice costs, or the saved question's, or None."""
        if self.is_bound:
            self.is_valid()
            return getattr(self, "cleaned_data", {}).get("cost")
        return question_cost(self.question) if self.question is not None else None

    def clean_options_text(self) -> list[str]:
        return [line.strip() for line in self.cleaned_data["options_text"].splitlines() if line.strip()]

    def clean_candidates_text(self) -> list[str]:
        return [line for line in self.cleaned_data["candidates_text"].splitlines() if line.strip()]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.frozen:
            self._keep_frozen_parameters(data)
        if self.errors:
            return data
        kind = kind_of(data["kind"])
        try:
            own = self.question is not None and self.question.kind in MADE_ELSEWHERE
            data["options"] = kind.options(data, self.question if self.frozen or own else None)
            value_range = kind.value_range(data)
            if data["kind"] == Question.Kind.FREE_TEXT:
                data["candidates"] = clean_candidates(data.get("candidates_text") or [])
        except KindError as error:
            self.add_error(error.field, error.message)
            return data
        estimate = kind.estimate_family(data)
        data["rating_estimate"] = data.get("rating_estimate") or Question.RatingEstimate.SHARES
        data["mechanism_chosen_automatically"] = data["mechanism"] == AUTOMATIC
        if data["mechanism"] == AUTOMATIC:
            data["mechanism"] = self.question.mechanism if self.frozen else self._advised_mechanism(data, value_range)
        if data["mechanism"] not in kind.mechanisms(estimate):
            self.add_error("mechanism", MECHANISM_FITS[estimate])
            return data
        params = kind.mechanism_params(data)  # None unless the kind fixes them (a multi-select question's l)
        fixed_by_kind = params is not None
        if params is None:
            if estimate == "text":
                params = {}
            elif value_range is None:
                params = self._clean_params(data)
                if params is None:
                    return data
            else:
                params = {"lo": value_range[0], "hi": value_range[1]}
        built: Any
        try:
            if fixed_by_kind:
                built = build_mechanism(data["mechanism"], len(data["options"]), data["epsilon"], params)
            elif estimate == "text":
                built = make_text_mechanism(data["mechanism"], epsilon=data["epsilon"])
                # The shape (and RAPPOR's probabilities, chosen from epsilon) are frozen with the question.
                params = built.params()
            elif value_range is None:
                built = ldp.make_mechanism(data["mechanism"], k=len(data["options"]), epsilon=data["epsilon"], **params)
            else:
                built = make_numeric_mechanism(data["mechanism"], epsilon=data["epsilon"], **params)
                params = {**params, **built.params()}  # the grid (and delta) are frozen with the range
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error
        data["mechanism_params"] = params
        data["built"] = built
        advice = self._advice(data)
        recurring = self.survey.series_id is not None
        data["cost"] = cost_of(built, self.survey.expected_respondents, data.get("unit", ""), advice, recurring)
        self._check_budget(data["epsilon"])
        self._check_frozen(data)
        self._check_pair(data)
        return data

    def _check_pair(self, data: dict[str, Any]) -> None:
        """A question asked in a declared pair keeps its kind and number of options while paired."""
        if self.question is None:
            return
        joint = asked_jointly(list(self.survey.questions.all()))
        if self.question.pk not in joint:
            return
        if data["kind"] != self.question.kind or len(data["options"]) != self.question.k:
            pair = joint[self.question.pk][0]
            self.add_error(
                "options_text",
                _(
                    "This question is asked jointly in “%(pair)s”: keep its kind and number of options, "
                    "or delete that pair first. You may still reword it."
                )
                % {"pair": pair.text},
            )

    def _advice(self, data: dict[str, Any]) -> str:
        """The kind's advice in one sentence (a rating: which estimate the advisor recommends)."""
        n = self.survey.expected_respondents
        return kind_of(data["kind"]).advice(data.get("scale") or "", len(data["options"]), data["epsilon"], n)

    def _advised_mechanism(self, data: dict[str, Any], value_range: tuple[float, float] | None) -> str:
        """The advisor's mechanism for these options (or range), epsilon and the expected n; sets its knobs."""
        mechanism, knobs = self.advised(data, value_range)
        data.update(knobs)
        return mechanism

    def advised(self, data: dict[str, Any], value_range: tuple[float, float] | None) -> tuple[str, dict[str, Any]]:
        """What "Automatic" (and "Recommend a mechanism") picks: (mechanism, its knobs d / hash_count / width).

        The advisor's lowest expected error for the options (or range), epsilon and the expected n; in a
        recurring survey, among the mechanisms it memoizes across rounds where one is available at this
        epsilon (:func:`surveys.series.memoization.memoized_choice`,
        :func:`~surveys.series.memoization.memoized_mean`, RAPPOR for a short answer), since any other is
        randomized afresh and spends its epsilon again every round.
        """
        n, epsilon = self.survey.expected_respondents, data["epsilon"]
        recurring = self.survey.series_id is not None
        advised = kind_of(data["kind"]).advised_mechanism(data, n)
        if advised is not None:
            return advised, {}  # a multi-select question: no mechanism for sets is memoized
        if value_range is not None:
            memoized = memoization.memoized_mean(*value_range, epsilon, n) if recurring else None
            return (memoized or recommend_mean(*value_range, epsilon, n).best).mechanism, {}
        if data["kind"] == Question.Kind.FREE_TEXT:
            return (memoization.RECURRING_TEXT_MECHANISM if recurring else DEFAULT_TEXT_MECHANISM), {}
        k = len(data["options"])
        best = (memoization.memoized_choice(k, epsilon, n) if recurring else None) or recommend(k, epsilon, n).best
        return best.mechanism, {name: best.params[name] for name in ("d", "hash_count", "width") if name in best.params}

    def _clean_params(self, data: dict[str, Any]) -> dict[str, Any] | None:
        k = len(data["options"])
        if data["mechanism"] == "dbitflip":
            d = data.get("d") or k
            if d > k:
                self.add_error("d", _("d cannot exceed the number of options (%(k)s).") % {"k": k})
                return None
            return {"d": d}
        if data["mechanism"] in ("cms", "hcms"):
            hash_count = data.get("hash_count") or 512
            width = data.get("width") or 128
            if data["mechanism"] == "hcms" and width & (width - 1):
                self.add_error("width", _("HCMS needs a power of 2 for the sketch width m (e.g. 64, 128, 256)."))
                return None
            seed = self._hash_seed(data["mechanism"], k, hash_count, width)
            return None if seed is None else {"hash_count": hash_count, "width": width, "hash_seed": seed}
        # Knobs chosen from k and epsilon are stored, so that reports stay tied to exact parameters.
        if data["mechanism"] == "olh":
            return {"range_size": optimal_range_size(k, data["epsilon"])}
        if data["mechanism"] == "subset":
            return {"subset_size": optimal_subset_size(k, data["epsilon"])}
        return {}

    def _hash_seed(self, mechanism: str, k: int, hash_count: int, width: int) -> int | None:
        """Keep the question's seed when it still works; else the first that tells options apart."""
        previous = self.question.mechanism_params.get("hash_seed") if self.question else None
        seeds = ([previous] if previous is not None else []) + list(range(32))
        for seed in seeds:
            try:
                ldp.make_mechanism(mechanism, k=k, epsilon=1.0, hash_count=hash_count, width=width, hash_seed=seed)
            except ValueError:
                continue
            return seed
        self.add_error("width", _("These options collide under every hash function; use more of them."))
        return None

    def _check_budget(self, epsilon: float) -> None:
        cap = self.survey.epsilon_cap
        if cap is None:
            return
        questions = list(self.survey.questions.all())
        joint = asked_jointly(questions)
        if self.question is not None and self.question.pk in joint:
            # Asked in a declared pair, it spends the pair's epsilon; but deleting the pair gives it its
            # own back, so that must fit too: count the survey as it would be without the pair.
            pair = joint[self.question.pk][0]
            questions = [q for q in questions if q.pk != pair.pk]
        own = next((q.epsilon for q in questions if self.question is not None and q.pk == self.question.pk), 0.0)
        others = spent_epsilon(questions) - own
        if others + epsilon > cap + 1e-9:
            self.add_error(
                "epsilon",
                _("This would bring the survey to ε = %(total)s, over its cap of %(cap)s.")
                % {"total": f"{others + epsilon:g}", "cap": f"{cap:g}"},
            )

    def _keep_frozen_parameters(self, data: dict[str, Any]) -> None:
        assert self.question is not None
        frozen = initial_from_question(self.question)
        relevant = {"kind", "epsilon", "mechanism", *kind_of(self.question.kind).frozen_fields} | {
            "dbitflip": {"d"},
            "cms": {"hash_count", "width"},
            "hcms": {"hash_count", "width"},
        }.get(self.question.mechanism, set())
        for name in relevant:
            if data.get(name) in (None, ""):
                data[name] = frozen[name]
            elif data[name] != frozen[name]:
                self.add_error(
                    name,
                    _(
                        "This question already has reports, so its randomization is frozen: changing "
                        "this would make the stored reports uninterpretable. You may still reword it."
                    ),
                )

    def _check_frozen(self, data: dict[str, Any]) -> None:
        if not self.frozen or self.question is None:
            return
        if len(data["options"]) != self.question.k:
            self.add_error(
                "options_text",
                _(
                    "This question already has reports, so its number of options is frozen at %(k)s; "
                    "you may still reword the options."
                )
                % {"k": self.question.k},
            )
        elif data["options"] != self.question.options and sorted(data["options"]) == sorted(self.question.options):
            # Reports (and a recurring survey's memoized answers) are kept by option position: the
            # same labels in a new order would silently swap what they mean.
            self.add_error(
                "options_text",
                _(
                    "This question already has reports, so its options keep their order; you may reword "
                    "them, but not move them."
                ),
            )


#: Most rows of one matrix.
MAX_MATRIX_ITEMS = 30


class MatrixForm(forms.Form):
    """A matrix block: a title, its items (rows) and their shared options, one epsilon per item.

    Every item becomes its own choice question with the same epsilon and mechanism (each is then
    edited on its own, like any question); the block spends the items' epsilons in sum, and that
    sum must fit under the survey's cap.
    """

    title = forms.CharField(label=_("Title"), max_length=500)
    items_text = forms.CharField(
        label=_("Items (rows)"),
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=interpolate_lazy(_("One item per line, 2 to %(high)s items."), {"high": MAX_MATRIX_ITEMS}),
    )
    options_text = QuestionForm.base_fields["options_text"]
    epsilon = copy.deepcopy(QuestionForm.base_fields["epsilon"])
    epsilon.label = _("Privacy budget ε of each item")
    epsilon.help_text = _(
        "Each row is randomized on its own with this ε; the block spends the sum. Edit a row to change its own."
    )
    mechanism = QuestionForm.base_fields["mechanism"]

    def __init__(self, *args: Any, survey: Survey, **kwargs: Any) -> None:
        self.survey = survey
        super().__init__(*args, **kwargs)
        explain_automatic(self, survey)

    def clean_items_text(self) -> list[str]:
        items = [line.strip() for line in self.cleaned_data["items_text"].splitlines() if line.strip()]
        if not 2 <= len(items) <= MAX_MATRIX_ITEMS:
            raise forms.ValidationError(
                _("Give between 2 and %(high)s items; you gave %(count)s.")
                % {"high": MAX_MATRIX_ITEMS, "count": len(items)}
            )
        if len({item.casefold() for item in items}) != len(items):
            raise forms.ValidationError(_("Each item may appear only once."))
        if any(len(item) > 500 for item in items):
            raise forms.ValidationError(_("Items are at most 500 characters long."))
        return items

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        # One item's question form validates the options and the mechanism for all: they are the same.
        probe = QuestionForm(
            {
                "text": data["items_text"][0],
                "kind": Question.Kind.SINGLE_CHOICE,
                "options_text": self.data.get("options_text", ""),
                "epsilon": data["epsilon"],
                "mechanism": data["mechanism"],
            },
            survey=self.survey,
        )
        if not probe.is_valid() and "built" not in getattr(probe, "cleaned_data", {}):
            for field, errors in probe.errors.items():
                for error in errors:
                    self.add_error(field if field in self.fields else None, error)
            return data
        cleaned = probe.cleaned_data
        items = data["items_text"]
        data["items"] = [{**cleaned, "text": item, "kind": Question.Kind.MATRIX} for item in items]
        data["cost"] = cleaned["cost"]
        data["total_epsilon"] = data["epsilon"] * len(items)
        cap, spent = self.survey.epsilon_cap, self.survey.total_epsilon
        if cap is not None and spent + data["total_epsilon"] > cap + 1e-9:
            self.add_error(
                "epsilon",
                _("These %(count)s items would bring the survey to ε = %(total)s, over its cap of %(cap)s.")
                % {"count": len(items), "total": f"{spent + data['total_epsilon']:g}", "cap": f"{cap:g}"},
            )
        return data


class MatrixEditForm(forms.Form):
    """A matrix's title and the wording of its shared options (their number stays: it is each item's k)."""

    title = forms.CharField(label=_("Title"), max_length=500)
    options_text = forms.CharField(label=_("Options"), widget=forms.Textarea(attrs={"rows": 4}))

    def __init__(self, *args: Any, matrix: Matrix, **kwargs: Any) -> None:
        self.matrix = matrix
        first = matrix.items.order_by("position", "id").first()
        self.k = first.k if first is not None else 0
        self.current = list(first.options) if first is not None else []
        kwargs.setdefault("initial", {"title": matrix.title, "options_text": "\n".join(first.options if first else [])})
        kwargs.setdefault("prefix", f"matrix-{matrix.pk}")  # several matrices' forms on one page
        super().__init__(*args, **kwargs)

    def clean_options_text(self) -> list[str]:
        lines = [line.strip() for line in self.cleaned_data["options_text"].splitlines() if line.strip()]
        try:
            options = clean_option_lines(lines)
        except KindError as error:
            raise forms.ValidationError(error.message) from None
        if len(options) != self.k:
            raise forms.ValidationError(
                _(
                    "Keep the %(k)s options: each item is randomized over that many. Reword them here; "
                    "for another number of options, delete the matrix and add it again."
                )
                % {"k": self.k}
            )
        reordered = options != self.current and sorted(options) == sorted(self.current)
        if reordered and Report.objects.filter(question__matrix=self.matrix).exists():
            # As a question's: reports are kept by option position, so moving the same labels would
            # silently swap what every item's reports mean.
            raise forms.ValidationError(
                _(
                    "This matrix already has reports, so its options keep their order; you may reword them, "
                    "but not move them."
                )
            )
        return options


class PairForm(forms.Form):
    """Declare two choice questions a pair asked jointly: one randomized answer over their k1 k2
    combinations, with one epsilon (and mechanism) that replaces the two questions' own budgets.

    Either question may be single choice, yes/no, a rating's shares or a number's histogram, not yet
    answered, not a matrix item and not in another pair; k1 k2 is at most MAX_OPTIONS.
    """

    first = forms.TypedChoiceField(label=_("First question (rows)"), coerce=int)
    second = forms.TypedChoiceField(label=_("Second question (columns)"), coerce=int)
    epsilon = copy.deepcopy(QuestionForm.base_fields["epsilon"])
    epsilon.label = _("Privacy budget ε of the pair")
    epsilon.help_text = _("Spent once for both answers, instead of the two questions' own ε.")
    mechanism = QuestionForm.base_fields["mechanism"]

    def __init__(self, *args: Any, survey: Survey, **kwargs: Any) -> None:
        self.survey = survey
        super().__init__(*args, **kwargs)
        explain_automatic(self, survey)
        self.eligible = pairable(survey)
        choices = [("", "—"), *((q.pk, q.text) for q in self.eligible)]
        self.fields["first"].choices = self.fields["second"].choices = choices

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        by_id = {q.pk: q for q in self.eligible}
        first, second = data["first_question"], data["second_question"] = by_id[data["first"]], by_id[data["second"]]
        if first.pk == second.pk:
            self.add_error("second", _("Choose two different questions."))
            return data
        cells = first.k * second.k
        if cells > MAX_OPTIONS:
            self.add_error(
                "second",
                _("A pair has at most %(high)s combinations of answers; these two have %(count)s.")
                % {"high": MAX_OPTIONS, "count": cells},
            )
            return data
        # The mechanism over the k1 k2 combinations is checked as a choice question's would be.
        probe = QuestionForm(
            {
                "text": "pair",
                "kind": Question.Kind.SINGLE_CHOICE,
                "options_text": "\n".join(str(i) for i in range(cells)),
                "epsilon": data["epsilon"],
                "mechanism": data["mechanism"],
            },
            survey=self.survey,
        )
        probe.is_valid()  # the probe's own budget check counts the two questions too: the pair's is below
        if "built" not in getattr(probe, "cleaned_data", {}):
            for field, errors in probe.errors.items():
                for error in errors:
                    self.add_error(field if field in self.fields and field != "epsilon" else None, error)
            return data
        data["pair"] = {**probe.cleaned_data, "text": f"{first.text} × {second.text}"[:500]}
        cap = self.survey.epsilon_cap
        total = self.survey.total_epsilon - first.epsilon - second.epsilon + data["epsilon"]
        if cap is not None and total > cap + 1e-9:
            self.add_error(
                "epsilon",
                _("This would bring the survey to ε = %(total)s, over its cap of %(cap)s.")
                % {"total": f"{total:g}", "cap": f"{cap:g}"},
            )
        return data


def pairable(survey: Survey) -> list[Question]:
    """The survey's questions that may be declared a pair: choice reports over their options, no
    reports yet, not matrix items, not pairs and not already in one."""
    questions = list(survey.questions.all())
    members = asked_jointly(questions)
    return [
        q
        for q in questions
        if q.kind not in MADE_ELSEWHERE
        and q.pk not in members
        and q.mechanism in CATEGORICAL_MECHANISMS
        and q.k >= MIN_OPTIONS
        and not q.has_reports()
    ]


class CandidatesForm(forms.Form):
    """The candidate answers of a short-answer question, edited on its results page at any time."""

    candidates_text = forms.CharField(
        label=_("Candidate answers"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=_("One per line. Each is normalized as the browsers normalize answers, then counted."),
    )

    def clean_candidates_text(self) -> list[str]:
        lines = [line for line in self.cleaned_data["candidates_text"].splitlines() if line.strip()]
        try:
            return clean_candidates(lines)
        except KindError as error:
            raise forms.ValidationError(error.message) from None


MECHANISM_FITS = {
    "shares": _("This estimate needs a mechanism for choices (k-RR, OUE, …), not one for numbers."),
    "mean": _("A mean needs a mechanism for numbers: Laplace, Gaussian, 1BitMean, Duchi et al., Piecewise or Hybrid."),
    "multi": _(
        "A multi-select question needs a mechanism for sets of options: a unary encoding of the set, or "
        "padding and sampling."
    ),
    "text": _(
        "A short answer needs a mechanism for text: a Count Mean Sketch of the text, its Hadamard variant, or RAPPOR."
    ),
}


def question_cost(question: Question) -> Any:
    """What a saved question's randomization costs at the survey's expected respondents."""
    n = question.survey.expected_respondents
    advice = kind_of(question.kind).advice(question.scale, question.k, question.epsilon, n)
    return cost_of(question.build_mechanism(), n, question.unit, advice, question.survey.series_id is not None)


def initial_from_question(question: Question) -> dict[str, Any]:
    return {
        "range_low": question.range_low,
        "range_high": question.range_high,
        "whole_numbers": question.whole_numbers,
        "unit": question.unit,
        "bins": question.bins,
        "scale": question.scale,
        "low_label": question.low_label,
        "high_label": question.high_label,
        "rating_estimate": question.rating_estimate,
        "text": question.text,
        "kind": question.kind,
        "options_text": "\n".join(question.options),
        "candidates_text": "\n".join(question.candidates),
        "epsilon": question.epsilon,
        "mechanism": AUTOMATIC if question.mechanism_chosen_automatically else question.mechanism,
        "d": question.mechanism_params.get("d"),
        "hash_count": question.mechanism_params.get("hash_count", 512),
        "width": question.mechanism_params.get("width", 128),
        "max_choices": limited_choices(question),
    }


def limited_choices(question: Question) -> int | None:
    """A multi-select question's maximum number of choices, or None when it has none (l = k)."""
    limit = question.mechanism_params.get("max_choices")
    return None if limit == question.k else limit
