"""The builder's blocks: matrices (several items on the same options) and declared pairs (two
questions asked jointly). Each is added by its own form and then reloads the builder, since cards,
budget plan and status all change; loaded, like every builder view, through :mod:`surveys.access`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect, reswap, retarget

from surveys import actions
from surveys.access import get_matrix_for_owner, get_survey_for_owner
from surveys.forms.matrix import MatrixEditForm, MatrixForm
from surveys.forms.pair import PairForm
from surveys.http import HtmxHttpRequest
from surveys.models import Survey
from surveys.views.author import builder_cards, render_builder

# -- declared pairs ---------------------------------------------------------------------------


@login_required
@require_POST
def pair_add(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """Declare two choice questions a pair asked jointly (one randomized answer, one epsilon)."""
    survey = get_survey_for_owner(request.user, survey_id)
    form = PairForm(request.POST, survey=survey)
    return add_block(
        request,
        survey,
        form,
        "add-pair",
        lambda data: actions.do_declare_pair(data["first_question"], data["second_question"], data["pair"]),
    )


def add_block(request: HtmxHttpRequest, survey: Survey, form: Any, fragment: str, do: Any) -> HttpResponse:
    """Validate a block's form (a matrix, a pair) and store it with ``do(cleaned_data)``, or show the errors."""
    if not form.is_valid():
        response = render_builder(request, survey, fragment, {f"{fragment.removeprefix('add-')}_form": form})
        return reswap(retarget(response, f"#{fragment}"), "outerHTML") if request.htmx else response
    do(form.cleaned_data)
    if request.htmx:
        # Cards, budget and the status box all change: reload the builder.
        return HttpResponseClientRedirect(survey.get_absolute_url())
    return redirect(survey)


# -- matrices ---------------------------------------------------------------------------------


@login_required
@require_POST
def matrix_add(request: HtmxHttpRequest, survey_id: int) -> HttpResponse:
    """Add a matrix block: one choice question per item, on the shared options, each with the block's ε."""
    survey = get_survey_for_owner(request.user, survey_id)
    form = MatrixForm(request.POST, survey=survey)
    return add_block(
        request, survey, form, "add-matrix", lambda data: actions.do_add_matrix(survey, data["title"], data["items"])
    )


@login_required
@require_POST
def matrix_move(request: HtmxHttpRequest, survey_id: int, matrix_id: int) -> HttpResponse:
    """Move a whole matrix past its neighbour above or below."""
    matrix = get_matrix_for_owner(request.user, survey_id, matrix_id)
    first = matrix.items.order_by("position", "id").first()
    if first is not None:
        actions.do_move_question(first, request.POST.get("direction", ""), whole_matrix=True)
    if not request.htmx:
        return redirect(matrix.survey)
    return render_builder(request, matrix.survey, "question-list", {"cards": builder_cards(matrix.survey)})


@login_required
@require_POST
def matrix_edit(request: HtmxHttpRequest, survey_id: int, matrix_id: int) -> HttpResponse:
    """Retitle a matrix and reword its shared options (kept on every item), even after reports arrived."""
    matrix = get_matrix_for_owner(request.user, survey_id, matrix_id)
    form = MatrixEditForm(request.POST, matrix=matrix)
    if form.is_valid():
        actions.do_update_matrix(matrix, form.cleaned_data["title"], form.cleaned_data["options_text"])
    else:
        messages.error(request, " ".join(str(e) for errors in form.errors.values() for e in errors))
    if request.htmx:
        return HttpResponseClientRedirect(matrix.survey.get_absolute_url())
    return redirect(matrix.survey)


@login_required
@require_POST
def matrix_delete(request: HtmxHttpRequest, survey_id: int, matrix_id: int) -> HttpResponse:
    matrix = get_matrix_for_owner(request.user, survey_id, matrix_id)
    survey = matrix.survey
    try:
        actions.do_delete_matrix(matrix)
    except actions.LifecycleError as error:
        messages.error(request, str(error))
    if request.htmx:
        return HttpResponseClientRedirect(survey.get_absolute_url())
    return redirect(survey)
