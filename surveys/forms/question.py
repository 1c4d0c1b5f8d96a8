"""A question's form: its text, options or range, epsilon and mechanism (or Automatic), checked
against the survey's cap and the parameters frozen by reports."""

from __future__ import annotations

import copy
from typing import Any, cast

from django import forms
from django.utils.translation import gettext_lazy as _

from ldp.privacy import EPSILON_MAX, EPSILON_MIN
from ldp.registry import NOT_RANDOMIZED
from surveys import budget as plans
from surveys.forms import interpolate_lazy
from surveys.kinds import (
    KindError,
    adaptive,
    adaptive_kinds,
    advise,
    build_randomization,
    cost_of,
    kind_of,
    knob_fields,
    misfit,
    prefer_not_kinds,
)
from surveys.kinds.choice import PREFER_NOT_FIELD
from surveys.kinds.designs import DESIGN_FIELDS, design_fields, design_initial
from surveys.models import MAX_OPTIONS, MIN_OPTIONS, Question, Survey, asked_jointly

#: The client spec carries hash_count x k hash values; more would bloat the answer page.
#: The builder's default mechanism choice: the advisor's pick, stored as the concrete mechanism.
AUTOMATIC = "auto"
MAX_HASH_COUNT = 1024
MAX_SKETCH_WIDTH = 4096

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
    budget = forms.ChoiceField(
        label=_("Privacy budget"),
        choices=[("plan", _("A share of the survey's total (recommended)")), ("fixed", _("A fixed ε"))],
        initial="plan",
        required=False,
        help_text=_("The survey's total is split over its questions; adding a question re-plans the others."),
    )
    weight = forms.FloatField(
        label=_("Weight in the plan"),
        initial=1.0,
        required=False,
        min_value=plans.WEIGHT_MIN,
        max_value=plans.WEIGHT_MAX,
        help_text=_("2 gives this question twice the ε of a question of weight 1, and a narrower error band."),
        widget=forms.NumberInput(attrs={"step": "0.1"}),
    )
    epsilon = forms.FloatField(
        label=_("Privacy budget ε"),
        initial=1.0,
        required=False,
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
        "prefer_not_to_say",
        "adaptive",
        "adaptive_percent",
        *DESIGN_FIELDS,
    )

    def __init__(
        self,
        *args: Any,
        survey: Survey,
        question: Question | None = None,
        respondents: int | None = None,
        check_budget: bool = True,
        **kwargs: Any,
    ) -> None:
        self.survey = survey
        self.question = question
        self.respondents = respondents or survey.expected_respondents
        """The n that costs and "Automatic" use: the survey's expected respondents unless a draft's."""
        self.check_budget = check_budget
        """Plan (or check) the question's ε against the survey's total; off for :func:`rebuilt`."""
        if question is not None and "initial" not in kwargs:
            kwargs["initial"] = initial_from_question(question)
        if question is not None:
            # The editor sits on the page beside the form that adds a question: its ids must differ.
            kwargs.setdefault("auto_id", f"id_q{question.pk}_%s")
        super().__init__(*args, **kwargs)
        self.fields.update(design_fields())  # the randomized-response designs' parameters (surveys.kinds.designs)
        self.fields["prefer_not_to_say"] = copy.deepcopy(PREFER_NOT_FIELD)  # choice kinds (surveys.kinds.choice)
        self.fields["adaptive"] = copy.deepcopy(adaptive.ADAPTIVE_FIELD)  # two-phase designs (surveys.kinds.adaptive)
        self.fields["adaptive_percent"] = copy.deepcopy(adaptive.PERCENT_FIELD)
        explain_automatic(self, survey)
        self.frozen = question is not None and question.randomization_frozen()
        # Matrix items and declared pairs are made by their own forms and keep their kind; no other
        # question takes one of those kinds.
        own = question.kind if question is not None and kind_of(question.kind).made_elsewhere else None
        cast(forms.ChoiceField, self.fields["kind"]).choices = [
            (value, label)
            for value, label in Question.Kind.choices
            if (value == own if own else not kind_of(value).made_elsewhere)
        ]
        if self.frozen:
            # The browser does not send disabled inputs; clean() fills them from the question and
            # refuses any value that differs.
            for name in self.RANDOMIZATION_FIELDS:
                self.fields[name].required = False
                self.fields[name].widget.attrs["disabled"] = True

    @property
    def adaptive_kinds(self) -> str:
        """The kinds for which the template shows the two-phase design's fields (``data-kinds``)."""
        return adaptive_kinds()

    @property
    def prefer_not_kinds(self) -> str:
        """The kinds for which the template shows "Offer “Prefer not to say”" (``data-kinds``)."""
        return prefer_not_kinds()

    @property
    def chooses_automatically(self) -> bool:
        """Whether the mechanism field says "Automatic" (so the cost panel explains the advisor's pick)."""
        if self.is_bound:
            return self.data.get("mechanism", AUTOMATIC) == AUTOMATIC
        if self.question is not None:
            return self.question.mechanism_chosen_automatically
        return self.initial.get("mechanism", self.fields["mechanism"].initial) == AUTOMATIC

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
        super().clean()  # Form.clean returns self.cleaned_data; the stubs allow None
        data = self.cleaned_data
        if self.frozen:
            self._keep_frozen_parameters(data)
        if self.errors:
            return data
        self._plan_epsilon(data)
        if self.errors:
            return data
        kind = kind_of(data["kind"])
        data["prefer_not_to_say"] = bool(data.get("prefer_not_to_say")) and kind.offers_prefer_not_to_say
        try:
            own = self.question is not None and kind_of(self.question.kind).made_elsewhere
            data["options"] = kind.options(data, self.question if self.frozen or own else None)
            value_range = kind.value_range(data)
            candidates = kind.candidates(data)
            if candidates is not None:
                data["candidates"] = candidates
        except KindError as error:
            self.add_error(error.field, error.message)
            return data
        estimate = kind.estimate_family(data)
        data["rating_estimate"] = data.get("rating_estimate") or Question.RatingEstimate.SHARES
        data["mechanism_chosen_automatically"] = data["mechanism"] == AUTOMATIC
        if data["mechanism"] == AUTOMATIC:
            frozen = self.question if self.frozen else None
            data["mechanism"] = frozen.mechanism if frozen is not None else self._advised_mechanism(data, value_range)
        if not kind.allows(data["mechanism"], estimate):
            self.add_error("mechanism", misfit(estimate))
            return data
        previous_seed = self.question.mechanism_params.get("hash_seed") if self.question else None
        try:
            params, built = build_randomization(kind, data, value_range, previous_seed)
        except KindError as error:  # a knob that does not fit (d above k, an HCMS width, colliding hashes)
            self.add_error(error.field, error.message)
            return data
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error
        data["mechanism_params"] = params
        data["built"] = built
        advice = self._advice(data)
        recurring = self.survey.series_id is not None
        data["cost"] = cost_of(built, self.respondents, data.get("unit", ""), advice, recurring)
        try:
            data["adaptive_percent"] = (
                self.question.adaptive_percent  # frozen with the reports, whatever the survey's settings now
                if self.frozen and self.question is not None
                else adaptive.clean_adaptive(kind, data, self.survey.expected_respondents, recurring)
            )
        except KindError as error:
            self.add_error(error.field, error.message)
            return data
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
        n = self.respondents
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
        recurring = self.survey.series_id is not None
        return advise(kind_of(data["kind"]), data, value_range, self.respondents, recurring)

    def _plan_epsilon(self, data: dict[str, Any]) -> None:
        """The question's ε: its share of the survey's plan, or the fixed ε given, which must leave every
        planned question at least the smallest ε (:mod:`surveys.budget`).

        Without a ``budget`` field (an older client, a test) a posted ε is fixed, as it always was.
        """
        mode = data.get("budget") or ("fixed" if self.data.get("epsilon") not in (None, "") else "plan")
        weight = data.get("weight") or 1.0
        data["planned_epsilon"], data["budget_weight"] = mode == "plan", weight
        if data.get("mechanism") in NOT_RANDOMIZED:  # asked directly: epsilon infinite, outside any plan
            data["planned_epsilon"] = False
            return
        if self.frozen:
            return
        if mode == "fixed" and data.get("epsilon") is None:
            self.add_error("epsilon", forms.Field.default_error_messages["required"])
            return
        if not self.check_budget:
            return
        if mode == "plan":
            plan = plans.planned_for(self.survey, self.question, weight)
            key = self.question.pk if self.question is not None else (plans.NEW, 0)
            data["epsilon"] = plan.epsilons[key]
        else:
            plan = self._fixed_plan(data["epsilon"], weight)
        if not plan.feasible:
            self.add_error("budget" if mode == "plan" else "epsilon", over_total(plan))

    def _fixed_plan(self, epsilon: float, weight: float) -> plans.Split:
        """The survey's plan with this question fixed at ``epsilon``. Asked in a declared pair, it spends the
        pair's epsilon; but deleting the pair gives it its own back, so that must fit too."""
        unit = plans.Unit(self.question.pk if self.question else plans.NEW, weight, epsilon)
        if self.question is None:
            return plans.preview(self.survey, add=[unit])
        joint = asked_jointly(list(self.survey.questions.all()))
        without = [joint[self.question.pk][0].pk] if self.question.pk in joint else []
        return plans.preview(self.survey, replace={self.question.pk: unit}, without=without)

    def _keep_frozen_parameters(self, data: dict[str, Any]) -> None:
        assert self.question is not None
        frozen = initial_from_question(self.question)
        relevant = {"kind", "epsilon", "mechanism", *kind_of(self.question.kind).frozen_fields}
        relevant |= knob_fields(self.question.mechanism)
        for name in relevant:
            # A disabled input is not sent: an unticked checkbox's absence says nothing either. The
            # frozen mechanism named (the API reads it by name) changes nothing: "Automatic" stays.
            unchanged = name == "mechanism" and data.get(name) == self.question.mechanism
            if data.get(name) in (None, "") or name not in self.data or unchanged:
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


def over_total(plan: plans.Split) -> str:
    """Why a plan does not fit its total, and the one way out: raising the total, with what that means."""
    needed = max(plan.spent, plan.fixed)
    return str(
        _(
            "This would bring the survey to ε = %(total)s, over its total of %(cap)s, or leave the planned "
            "questions too little. To spend more, raise the survey's total in the budget panel: with a total "
            "of ε = %(total)s, one respondent's reports could be up to %(ratio)s times likelier under one set "
            "of answers than under another."
        )
    ) % {"total": f"{needed:.4g}", "cap": f"{plan.total:g}", "ratio": plans.ratio(needed)}


def question_cost(question: Question) -> Any:
    """What a saved question's randomization costs at the survey's expected respondents."""
    n = question.survey.expected_respondents
    advice = kind_of(question.kind).advice(question.scale, question.k, question.epsilon, n)
    return cost_of(question.build_mechanism(), n, question.unit, advice, question.survey.series_id is not None)


def mechanisms_if_recurring(survey: Survey) -> list[tuple[Question, str, str]]:
    """(question, mechanism now, mechanism then) for every question whose mechanism "Automatic" would
    change if the survey became recurring (:func:`surveys.series.rounds.readvise_automatic` then does it):
    the builder says so before the organizer decides. Questions with reports keep theirs."""
    if survey.series_id is not None:
        return []
    changes = []
    for question in survey.questions.filter(mechanism_chosen_automatically=True):
        if question.randomization_frozen():
            continue
        cleaned = rebuilt(question, question.epsilon)
        if cleaned is None:
            continue
        kind = kind_of(cleaned["kind"])
        then, _knobs = advise(kind, cleaned, kind.value_range(cleaned), survey.expected_respondents, True)
        if then != question.mechanism:
            label = Question.MechanismName
            changes.append((question, str(label(question.mechanism).label), str(label(then).label)))
    return changes


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
        "options_text": "\n".join(question.written_options),
        "prefer_not_to_say": question.prefer_not_to_say,
        "adaptive": question.adaptive_percent is not None,
        "adaptive_percent": question.adaptive_percent or adaptive.DEFAULT_PERCENT,
        "candidates_text": "\n".join(question.candidates),
        "epsilon": question.epsilon,
        "budget": "plan" if question.planned_epsilon else "fixed",
        "weight": question.budget_weight,
        "mechanism": AUTOMATIC if question.mechanism_chosen_automatically else question.mechanism,
        "d": question.mechanism_params.get("d"),
        "hash_count": question.mechanism_params.get("hash_count", 512),
        "width": question.mechanism_params.get("width", 128),
        "max_choices": limited_choices(question),
        **design_initial(question),
    }


def limited_choices(question: Question) -> int | None:
    """A multi-select question's maximum number of choices, or None when it has none (l = k)."""
    limit = question.mechanism_params.get("max_choices")
    return None if limit == question.k else limit


def form_data(question: Question, epsilon: float) -> dict[str, Any]:
    """The question's builder form data at ``epsilon`` (its other fields as stored)."""
    data = {name: value for name, value in initial_from_question(question).items() if value is not None}
    return {**data, "epsilon": epsilon, "budget": "fixed", "weight": question.budget_weight}


def rebuilt(question: Question, epsilon: float, n: int | None = None) -> dict[str, Any] | None:
    """The question's form cleaned at ``epsilon`` (and n expected respondents), without budget checks;
    None if it does not validate there (a knob that no longer fits)."""
    form = QuestionForm(
        form_data(question, epsilon), survey=question.survey, question=question, respondents=n, check_budget=False
    )
    if not form.is_valid():
        return None
    return {**form.cleaned_data, "planned_epsilon": question.planned_epsilon}
