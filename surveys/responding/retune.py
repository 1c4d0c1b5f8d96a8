"""The ``retune`` job: a two-phase question's second version, chosen once from its first version's reports.

A submission that brings a survey to a two-phase question's threshold (:func:`after_submit`) queues
the job; it never runs in the request (:mod:`surveys.jobs`). The job (:func:`run_retune`) locks the
question's row ``FOR UPDATE``, so concurrent or repeated jobs decide one at a time, and does
nothing once :attr:`~surveys.models.Question.retuned_after` is set: the decision, and the new
version when there is one, commit together, and a unique constraint allows one re-tuned version
per question. A retried job therefore changes nothing twice. What it reads is the first version's
tally of randomized reports (:func:`surveys.kinds.adaptive.next_design`); the first version is not
retired, so respondents whose page carried it may still send it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.cache import cache
from django.db import transaction
from django.db.models import Max

from surveys.jobs import guard, queue
from surveys.kinds import adaptive
from surveys.models import Question, Randomization, Survey
from surveys.responding import tallies
from surveys.responding.submissions import ParsedReport
from surveys.responding.versions import survey_version
from surveys.sampling import pool_of


def after_submit(survey: Survey, reports: Iterable[ParsedReport]) -> None:
    """Queue the re-tune of every two-phase question the survey's stored submissions have brought to
    its threshold. Costs nothing for a survey without one waiting (the reports' questions are in
    hand); else one read of the survey's submission count, an upper bound of a version's reports
    (the job checks the tally itself)."""
    if survey.series_id is not None:  # a recurring survey keeps one design across rounds
        return
    waiting = [r.question for r in reports if adaptive.pending(r.question) and r.randomization.retuned_after is None]
    if not waiting:
        return
    # The reports' questions may be a process's cached copies from before the decision: the mark
    # the job leaves in the shared cache spares them a job each meanwhile.
    decided = cache.get_many([decided_key(q.pk) for q in waiting])
    waiting = [q for q in waiting if decided_key(q.pk) not in decided]
    if not waiting:
        return
    submissions = survey_version(survey)
    for question in waiting:
        if submissions >= adaptive.phase_one_size(question.adaptive_percent or 0, survey.expected_respondents):
            queue.enqueue("retune", survey, key=f"retune:{question.pk}", params={"question": question.pk})


#: How long the shared cache remembers a decision (longer than any process caches the questions).
DECIDED_SECONDS = 24 * 3600


def decided_key(question_id: int) -> str:
    return f"murmur:retuned:{question_id}"


def not_retunable(question: Question) -> bool:
    """A recurring survey's question, or one in the survey's question-sampling pool."""
    pool = pool_of(question.survey)
    return question.survey.series_id is not None or (pool is not None and question.pk in pool)


def run_retune(job: Any, progress: Any) -> dict[str, Any]:
    """The ``retune`` task (params: ``question``); its result says what was decided."""
    guard.off_request_path("Re-tuning a question")
    return retune_question(job.params["question"])


@transaction.atomic
def retune_question(question_id: int) -> dict[str, Any]:
    """Decide a two-phase question's design for the respondents still to come, exactly once (never in a
    recurring survey, which the builder refuses and a survey made recurring later must not break:
    its rounds' memoized answers assume one design; nor in a question-sampling pool, whose tally
    mixes answered and fake reports and whose versions are not pooled)."""
    # The question's row only: submissions take the survey's, and a job holding it would deadlock them.
    question = Question.objects.select_for_update(of=("self",)).select_related("survey").filter(pk=question_id).first()
    if question is None or not adaptive.pending(question) or not_retunable(question):
        transaction.on_commit(lambda: cache.set(decided_key(question_id), True, DECIDED_SECONDS))
        return {"decided": "before"}
    first = question.current_randomization()
    if first is None or first.retuned_after is not None:
        return {"decided": "no version in force"}
    tally = tallies.read_tallies([first])[first.pk]
    if tally.n < adaptive.threshold(question):
        return {"waiting": tally.n}
    design = adaptive.next_design(first, tally, question.survey.expected_respondents)
    question.retuned_after = tally.n
    fields = ["retuned_after"]
    if design is not None:
        mechanism, params = design
        last = question.randomizations.aggregate(last=Max("version"))["last"] or 0
        Randomization.objects.create(
            question=question,
            version=last + 1,
            mechanism=mechanism,
            k=first.k,
            epsilon=first.epsilon,
            params=params,
            retuned_after=tally.n,
        )
        question.mechanism, question.mechanism_params = mechanism, params
        fields += ["mechanism", "mechanism_params"]
    question.save(update_fields=fields)
    transaction.on_commit(lambda: cache.set(decided_key(question_id), True, DECIDED_SECONDS))
    return {"after": tally.n, "mechanism": question.mechanism, "params": question.mechanism_params}
