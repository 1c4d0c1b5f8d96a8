"""Organizers' views: their surveys, the survey builder, the survey lifecycle.

Every view loads the survey through :mod:`surveys.access`, so only its owner reaches it.
htmx requests get the fragment they target (``page.html#fragment``); plain form posts get a
redirect or the full page, so the builder also works without JavaScript.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import Http404, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, reswap, retarget

from surveys import actions
from surveys.access import get_question_for_owner, get_survey_for, get_survey_for_owner, needs_granted, surveys_for
from surveys.accounts import email_unconfirmed, send_confirmation
from surveys.forms.accounts import SignUpForm
from surveys.forms.matrix import MatrixEditForm, MatrixForm
from surveys.forms.pair import PairForm
from surveys.forms.question import QuestionForm, mechanisms_if_recurring, question_cost
from surveys.forms.survey import DEFAULT_EPSILON_CAP, SurveyForm
from surveys.http import HtmxHttpRequest
from surveys.kinds import kind_of
from surveys.models import Account, Matrix, Question, Survey, asked_jointly
from surveys.presets import PRESETS
from surveys.qr import qr_svg
from surveys.responding.ratelimits import rate_limited
from surveys.series import rounds
from surveys.views.budget import budget_context, needs_confirmation

BUILDER = "surveys/survey_detail.html"


@dataclass(frozen=True)
class Card:
    """One question as the builder shows it."""

    question: Question
    cost: Any
    report_count: int
    facts: dict[str, Any]
    """The kind's extra figures (:meth:`surveys.kinds.QuestionKind.builder_facts`): a pair's two errors."""
    pair: Question | None = None
    """The declared pair this question is asked in, if any: then it spends no budget of its own."""
    frozen_by_earlier_round: bool = False
    """A recurring survey's question without reports of its own whose randomization another round's
    reports froze (:meth:`surveys.models.Question.randomization_frozen`)."""
    rounds_adding_up: int = 0
    """A recurring survey's question that is not memoized (:func:`surveys.series.rounds.question_memoized`): the
    series' number of rounds so far, over which its epsilon adds up for whoever answers each; else 0."""

    @property
    def frozen(self) -> bool:
        return self.report_count > 0

    @property
    def epsilon_over_rounds(self) -> float:
        """What a respondent of every round so far spends on this question (sequential composition)."""
        return self.question.epsilon * self.rounds_adding_up


def make_card(
    question: Question, joint: dict[int, tuple[Question, str]] | None = None, round_count: int | None = None
) -> Card:
    """The question's builder card; ``joint`` and ``round_count`` (the series' rounds) are read if not given."""
    if joint is None:
        joint = asked_jointly(list(question.survey.questions.all()))
    pair = joint.get(question.pk)
    report_count = question.reports.count()
    recurring = question.survey.series_id is not None
    adds_up = recurring and pair is None and not rounds.question_memoized(question)
    if adds_up and round_count is None:
        round_count = len(rounds.rounds_of(question.survey))
    return Card(
        question=question,
        cost=question_cost(question),
        report_count=report_count,
        facts=kind_of(question.kind).builder_facts(question, question.survey.expected_respondents),
        pair=pair[0] if pair else None,
        frozen_by_earlier_round=not report_count and recurring and question.randomization_frozen(),
        rounds_adding_up=(round_count or 0) if adds_up else 0,
    )


@dataclass(frozen=True)
class MatrixCard:
    """A matrix block as the builder shows it: one card holding its items' cards."""

    matrix: Matrix
    items: list[Card]

    @property
    def edit_form(self) -> MatrixEditForm:
        return MatrixEditForm(matrix=self.matrix)

    @property
    def total_epsilon(self) -> float:
        return sum(card.question.epsilon for card in self.items)

    @property
    def options(self) -> list[str]:
        return self.items[0].question.options

    @property
    def frozen(self) -> bool:
        return any(card.frozen for card in self.items)


def builder_cards(survey: Survey) -> list[Card | MatrixCard]:
    """The builder's cards in survey order, a matrix's consecutive items in one card."""
    cards: list[Card | MatrixCard] = []
    questions = list(survey.questions.select_related("matrix", "pair_first", "pair_second"))
    joint = asked_jointly(questions)
    round_count = len(rounds.rounds_of(survey))
    for question in questions:
        card = make_card(question, joint, round_count)
        last = cards[-1] if cards else None
        if question.matrix is None:
            cards.append(card)
        elif isinstance(last, MatrixCard) and last.matrix.pk == question.matrix_id:
            last.items.append(card)
        else:
            cards.append(MatrixCard(question.matrix, [card]))
    return cards


def lifecycle_context(request: HtmxHttpRequest, survey: Survey) -> dict[str, Any]:
    """What the status box shows: why the survey cannot open yet, or its share link."""
    share_url = request.build_absolute_uri(survey.get_share_url())
    return {
        "survey": survey,
        "open_problems": actions.open_problems(survey) if survey.status != Survey.Status.OPEN else [],
        "share_url": share_url,
        "share_qr": qr_svg(share_url) if survey.status != Survey.Status.DRAFT else "",
        "default_epsilon_cap": DEFAULT_EPSILON_CAP,
        "presets": PRESETS,
        **budget_context(survey),
    }


def builder_context(request: HtmxHttpRequest, survey: Survey, **extra: Any) -> dict[str, Any]:
    context = {
        **lifecycle_context(request, survey),
        **rounds.round_context(survey),
        "cards": builder_cards(survey),
        "settings_form": SurveyForm(instance=survey),
        "add_form": QuestionForm(survey=survey),
        "matrix_form": MatrixForm(survey=survey),
        "pair_form": PairForm(survey=survey),
        "recurring_changes": mechanisms_if_recurring(survey),
        "editing": None,
        # Deleting needs ``manage``: a workspace's editors build the survey but may not delete it.
        "may_delete": "manage" in needs_granted(request.user, survey),
    }
    context.update(extra)
    return context


def render_builder(request: HtmxHttpRequest, survey: Survey, fragment: str, context: dict[str, Any]) -> HttpResponse:
    """The fragment for htmx (with the status box's context, for out-of-band updates), the page otherwise."""
    if request.htmx:
        return render(request, f"{BUILDER}#{fragment}", {**lifecycle_context(request, survey), **context})
    return render(request, BUILDER, builder_context(request, survey, **context))


# -- accounts ---------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@rate_limited("signup")
def signup(request: HtmxHttpRequest) -> HttpResponse:
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        Account.objects.create(user=user, language=get_language())
        send_confirmation(request, user)
        login(request, user, backend="surveys.responding.ratelimits.LoginThrottleBackend")  # OIDC adds one
        messages.success(
            request,
            _(
                "Welcome to Murmur. We sent a link to %(email)s: open it to confirm your address. You can "
                "build surveys now and open them to respondents once it is confirmed."
            )
            % {"email": user.email},
        )
        return redirect("survey_list")
    return render(request, "registration/signup.html", {"form": form})


# -- surveys ----------------------------------------------------------------------------------


@login_required
@require_GET
def survey_list(request: HtmxHttpRequest) -> HttpResponse:
    owner = cast(User, request.user)  # login_required: never AnonymousUser
    surveys = surveys_for(owner, "edit").prefetch_related("questions")
    context = {"surveys": surveys, "email_unconfirmed": email_unconfirmed(request.user)}
    return render(request, "surveys/survey_list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def survey_create(request: HtmxHttpRequest) -> HttpResponse:
    form = SurveyForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        survey = form.save(commit=False)
        survey.owner = request.user
        survey.save()
        return redirect(survey)
    return render(request, "surveys/survey_create.html", {"form": form})


@login_required
@require_GET
def survey_detail(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    if rounds.open_if_due(survey.series_id) is not None:
        survey.refresh_from_db()
    return render(request, BUILDER, builder_context(request, survey))


@login_required
@require_POST
def survey_settings(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    form = SurveyForm(request.POST, instance=survey)
    if form.is_valid():
        actions.do_save_settings(form)
        if not request.htmx:
            messages.success(request, _("Survey settings saved."))
            return redirect(survey)
        response = render_builder(request, survey, "settings", {"settings_form": form, "saved": True})
        # Question previews depend on the expected number of respondents: let them refresh.
        response["HX-Trigger"] = "surveySettingsChanged"
        return response
    survey.refresh_from_db()
    return render_builder(request, survey, "settings", {"settings_form": form})


@login_required
@require_POST
def survey_delete(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    actions.do_delete_survey(get_survey_for(request.user, survey_id, "manage"))
    messages.success(request, _("Survey deleted."))
    if request.htmx:
        return HttpResponseClientRedirect(reverse("survey_list"))
    return redirect("survey_list")


@login_required
@require_POST
def survey_duplicate(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    copy = actions.do_duplicate_survey(get_survey_for_owner(request.user, survey_id))
    messages.success(request, _("This is a copy, saved as a draft. Its reports and invitations start empty."))
    if request.htmx:
        return HttpResponseClientRedirect(copy.get_absolute_url())
    return redirect(copy)


@login_required
@require_POST
def survey_open(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    if survey.status != Survey.Status.OPEN and needs_confirmation(request, survey):
        messages.error(
            request,
            _("Every estimate of this survey is expected to be wider than ± 25 points: confirm to open it anyway."),
        )
        return HttpResponseClientRedirect(survey.get_absolute_url()) if request.htmx else redirect(survey)
    return _transition(request, survey_id, actions.do_open_survey, _("The survey is open. Share its link."))


@login_required
@require_POST
def survey_close(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    return _transition(request, survey_id, actions.do_close_survey, _("The survey is closed."))


def _transition(request: HtmxHttpRequest, survey_id: int, action: Any, success: str) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    try:
        action(survey)
    except actions.LifecycleError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, success)
    if request.htmx:
        # Status, budget, frozen questions and the share link all change: reload the page.
        return HttpResponseClientRedirect(survey.get_absolute_url())
    return redirect(survey)


# -- questions --------------------------------------------------------------------------------


@login_required
@require_POST
def question_add(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    survey = get_survey_for_owner(request.user, survey_id)
    if request.POST.get("action") == "recommend":
        form = recommended_form(request.POST, survey, None)
        return render_builder(request, survey, "add-question", {"add_form": form})
    form = QuestionForm(request.POST, survey=survey)
    if not form.is_valid():
        response = render_builder(request, survey, "add-question", {"add_form": form})
        if request.htmx:
            response = reswap(retarget(response, "#add-question"), "outerHTML")
        return response
    actions.do_add_question(survey, form.cleaned_data)
    if not request.htmx:
        return redirect(survey)
    # Adding re-plans the others: the whole list is redrawn (out of band) with the new card.
    return render_builder(
        request, survey, "question-added", {"cards": builder_cards(survey), "add_form": QuestionForm(survey=survey)}
    )


@login_required
@require_http_methods(["GET", "POST"])
def question_edit(request: HtmxHttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    question = get_question_for_owner(request.user, survey_id, question_id)
    survey = question.survey
    if request.method == "GET":
        form = QuestionForm(survey=survey, question=question)
        return render_builder(
            request, survey, "question-editor", {"form": form, "question": question, "editing": question.pk}
        )
    if request.POST.get("action") == "recommend":
        form = recommended_form(request.POST, survey, question)
        return render_builder(
            request, survey, "question-editor", {"form": form, "question": question, "editing": question.pk}
        )
    form = QuestionForm(request.POST, survey=survey, question=question)
    before = dict(survey.questions.exclude(pk=question.pk).values_list("pk", "epsilon"))
    if form.is_valid():
        try:
            actions.do_update_question(question, form.cleaned_data)
        except actions.LifecycleError as error:
            # Reports arrived between the form's check and the save: nothing was changed.
            question.refresh_from_db()
            form.add_error(None, str(error))
    if not form.is_valid():
        return render_builder(
            request, survey, "question-editor", {"form": form, "question": question, "editing": question.pk}
        )
    if not request.htmx:
        return redirect(survey)
    if before != dict(survey.questions.exclude(pk=question.pk).values_list("pk", "epsilon")):
        # The plan gave other questions a new ε too: reload the builder.
        return HttpResponseClientRedirect(survey.get_absolute_url())
    return render_builder(request, survey, "question-saved", {"card": make_card(question)})


@login_required
@require_GET
def question_card(request: HtmxHttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    question = get_question_for_owner(request.user, survey_id, question_id)
    if not request.htmx:
        return redirect(question.survey)
    return render_builder(request, question.survey, "question-card", {"card": make_card(question)})


@login_required
@require_POST
def question_delete(request: HtmxHttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    question = get_question_for_owner(request.user, survey_id, question_id)
    survey = question.survey
    try:
        replanned = actions.do_delete_question(question)
    except actions.LifecycleError as error:
        if request.htmx:
            return render_builder(request, survey, "question-card", {"card": make_card(question), "error": str(error)})
        messages.error(request, str(error))
        return redirect(survey)
    if not request.htmx:
        return redirect(survey)
    if replanned:  # the others' shares grew: reload the builder
        return HttpResponseClientRedirect(survey.get_absolute_url())
    return render_builder(request, survey, "question-deleted", {})


@login_required
@require_POST
def question_move(request: HtmxHttpRequest, survey_id: int, question_id: int) -> HttpResponse:
    question = get_question_for_owner(request.user, survey_id, question_id)
    survey = question.survey
    actions.do_move_question(question, request.POST.get("direction", ""))
    if not request.htmx:
        return redirect(survey)
    return render_builder(request, survey, "question-list", {"cards": builder_cards(survey)})


@login_required
@require_POST
def question_cost_preview(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """The live cost panel for the question form's current values (htmx, on every change).

    A POST, though it saves nothing: as a GET the draft's text and the form's CSRF token would
    travel in the URL, and so into every access log on the way.
    """
    survey = get_survey_for_owner(request.user, survey_id)
    question = None
    question_id = request.GET.get("question", "")
    if question_id:
        if not question_id.isdigit():
            raise Http404
        question = get_question_for_owner(request.user, survey_id, int(question_id))
    form = QuestionForm(request.POST, survey=survey, question=question)
    form.is_valid()
    cost = form.cleaned_data.get("cost") if hasattr(form, "cleaned_data") else None
    context = {
        "survey": survey,
        "cost": cost,
        "cost_form": form,
        "automatic": form.chooses_automatically,
        "in_form": True,
    }
    return render(request, f"{BUILDER}#cost", context)


def recommended_form(data: QueryDict, survey: Survey, question: Question | None) -> QuestionForm:
    """The posted form with the advisor's mechanism for its options, epsilon and expected n (in a recurring
    survey, among the memoized ones: :meth:`surveys.forms.question.QuestionForm.advised`)."""
    probe = QuestionForm(data, survey=survey, question=question)
    if not probe.is_valid() and "built" not in getattr(probe, "cleaned_data", {}):
        return probe
    cleaned = probe.cleaned_data
    mechanism, knobs = probe.advised(cleaned, kind_of(cleaned["kind"]).value_range(cleaned))
    updated = data.copy()
    updated["mechanism"] = mechanism
    for name, value in knobs.items():
        updated[name] = str(value)
    return QuestionForm(updated, survey=survey, question=question)
