"""An R script that re-estimates a survey from its raw reports, in base R (no packages).

The script holds the survey's raw reports (the CSV export's ``question_id``, ``version`` and
``report`` columns) and, per version of each question's randomization, its design: mechanism, ε,
k, every parameter, the options, and the estimator in matrix form. It then recomputes, in R:

1. the tally, from the reports: the histogram of a one-number report field (k-RR's option index,
   a numeric mechanism's output index) or the column sums of a bit-vector field (unary encodings,
   set encodings); reports of other shapes (hashed or sketched: OLH, CMS, Hadamard, dBitFlip, ...)
   carry Murmur's tally counts instead, and the script says so;
2. the unbiased estimate from the tally. Shares of a linear mechanism (``ldp.mechanisms.base``):
   f = A^-1 z, with z = B c / n + b the mean per-report statistic (Wang et al., USENIX Security 2017,
   eq. 2 for pure protocols; A is the mechanism's ``response_matrix``, B and b are read off its
   ``observed_mean``); a numeric mechanism's mean (``ldp.numeric.base``): lo + step * sum(c * decode) / n
   with its standard error. Each number is printed beside Murmur's and the largest difference.

Which tally rule and which estimator fit is found by trying them on the randomization itself
(does the rule give ``mechanism.tally``'s counts on these reports, is ``observed_mean`` affine in
the counts, does the formula give the page's unbiased numbers to 1e-9), never by the mechanism's
name; a version none fits is listed with its tally and design but not re-estimated. The consistent
(Norm-Sub, clipped, empirical-Bayes) estimates and bands are Murmur's post-processing of these
unbiased ones (docs/statistics.md); the R packages ``rr`` and ``RRreg`` fit designs of k-RR's
shape, but base R keeps the script runnable on Debian's ``r-base-core`` alone.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from typing import Any

import numpy as np

import ldp
from surveys.models import Survey
from surveys.results.estimates import SurveyState
from surveys.results.exports import estimate_rows, report_records

#: Largest tally (counts per report) whose estimator matrix the script spells out.
MAX_TALLY = 4096
TOLERANCE = 1e-9


def r_string(text: str) -> str:
    """A double-quoted R string literal in ASCII (``\\u`` escapes), whatever the R session's locale."""
    out = []
    for char in str(text):
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 32 <= code < 127:
            out.append(char)
        elif code <= 0xFFFF:
            out.append(f"\\u{{{code:04x}}}")
        else:
            out.append(f"\\U{{{code:08x}}}")
    return '"' + "".join(out) + '"'


def r_numbers(values: Any) -> str:
    return "c(" + ", ".join(repr(float(v)) for v in np.ravel(values)) + ")"


def r_matrix(matrix: np.ndarray) -> str:
    rows, cols = matrix.shape
    return f"matrix({r_numbers(matrix)}, nrow = {rows}L, ncol = {cols}L, byrow = TRUE)"


def tally_rule(reports: list[dict[str, Any]], counts: np.ndarray) -> tuple[str, str] | None:
    """("histogram" | "bitsums", field) when that rule recomputes the tally's counts from the reports."""
    if not reports or any(len(report) != 1 for report in reports):
        return None
    (field,) = reports[0]
    values = [report.get(field) for report in reports]
    size = len(counts)
    numbers = all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < size for v in values)
    if numbers and np.array_equal(np.bincount(np.array(values, dtype=np.int64), minlength=size), counts):
        return "histogram", field
    vectors = all(isinstance(v, list) and len(v) == size for v in values)
    if vectors and np.array_equal(np.array(values, dtype=np.int64).sum(axis=0), counts):
        return "bitsums", field
    return None


def shares_design(mechanism: Any, tally: ldp.Tally) -> dict[str, Any] | None:
    """A, B and b with E[z] = A f and z = B c / n + b, when the mechanism's z is affine in c / n."""
    if not hasattr(mechanism, "response_matrix") or not hasattr(mechanism, "observed_mean"):
        return None
    size = len(tally.counts)
    if size > MAX_TALLY:
        return None
    try:
        offset = np.asarray(mechanism.observed_mean(ldp.Tally(1, np.zeros(size, dtype=np.int64))), dtype=float)
        columns = [
            np.asarray(mechanism.observed_mean(ldp.Tally(1, np.eye(size, dtype=np.int64)[j])), dtype=float) - offset
            for j in range(size)
        ]
        observed = np.asarray(mechanism.observed_mean(tally), dtype=float)
    except (ValueError, IndexError, TypeError):
        return None
    slope = np.column_stack(columns)
    if not np.allclose(slope @ (tally.counts / tally.n) + offset, observed, rtol=0, atol=1e-12):
        return None
    identity = slope.shape[0] == slope.shape[1] and np.array_equal(slope, np.eye(size)) and not offset.any()
    return {"A": np.asarray(mechanism.response_matrix, dtype=float), "B": None if identity else slope, "b": offset}


def mean_design(mechanism: Any) -> dict[str, Any] | None:
    if not all(hasattr(mechanism, name) for name in ("decode", "lo", "step")):
        return None
    return {
        "decode": np.asarray(mechanism.decode, dtype=float),
        "lo": float(mechanism.lo),
        "step": float(mechanism.step),
    }


def reproduce(design: dict[str, Any], counts: np.ndarray, n: int) -> np.ndarray:
    """What the R script computes, in numpy: to check that it gives Murmur's numbers before promising it."""
    if "A" in design:
        z = counts / n if design["B"] is None else design["B"] @ (counts / n) + design["b"]
        return np.asarray(np.linalg.solve(design["A"], z))
    decoded = float(counts @ design["decode"]) / n
    return np.array([design["lo"] + design["step"] * decoded])


def r_script(survey: Survey) -> str:
    """The script's text (UTF-8, but ASCII only: questions and options travel as ``\\u`` escapes)."""
    state = SurveyState.read(survey)
    murmur: dict[tuple[int, int], dict[int | None, float]] = defaultdict(dict)
    for row in estimate_rows(survey):
        murmur[(row["question_id"], row["version"])].setdefault(row.get("option_index"), row["unbiased"])
    reports: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["question_id", "version", "report"])
    for record in report_records(survey):
        reports[(record["question_id"], record["version"])].append(record["report"])
        writer.writerow([record["question_id"], record["version"], json.dumps(record["report"], separators=(",", ":"))])
    designs = []
    for question in state.questions:
        for randomization in state.randomizations.get(question.pk, []):
            tally = state.tallies[randomization.pk]
            if not tally.n:
                continue
            designs.append(_design_entry(question, randomization, tally, reports, murmur))
    return TEMPLATE.format(
        title=r_string(survey.title),
        survey_id=survey.pk,
        reports=buffer.getvalue().rstrip("\n"),
        designs=",\n".join(designs),
    )


def _design_entry(
    question: Any,
    randomization: Any,
    tally: ldp.Tally,
    reports: dict[tuple[int, int], list[dict[str, Any]]],
    murmur: dict[tuple[int, int], dict[int | None, float]],
) -> str:
    key = (question.pk, randomization.version)
    mechanism = randomization.build_mechanism()
    counts = np.asarray(tally.counts, dtype=np.int64)
    rule = tally_rule(reports.get(key, []), counts)
    found = murmur.get(key, {})
    shares = [found[i] for i in sorted(i for i in found if i is not None)]
    mean = found.get(None)
    estimator, expected = "", np.array([])
    design = shares_design(mechanism, tally)
    if design is not None and shares and None not in shares:
        estimator, expected = "inverse", np.array(shares, dtype=float)
    else:
        design = mean_design(mechanism)
        if design is not None and mean is not None:
            estimator, expected = "decoded", np.array([mean], dtype=float)
    if estimator and (
        len(expected) != len(reproduce(design, counts, tally.n))  # type: ignore[arg-type]
        or not np.allclose(reproduce(design, counts, tally.n), expected, rtol=0, atol=TOLERANCE)  # type: ignore[arg-type]
    ):
        estimator = ""
    parts = [
        f"question_id = {question.pk}L",
        f"version = {randomization.version}L",
        f"question = {r_string(question.text)}",
        f"options = c({', '.join(r_string(o) for o in question.options)})",
        f"mechanism = {r_string(randomization.mechanism)}",
        f"epsilon = {randomization.epsilon!r}",
        f"k = {randomization.k}L",
        f"params = {r_string(json.dumps(randomization.params, sort_keys=True))}",
        f"n = {tally.n}L",
        f"size = {len(counts)}L",
        f"rule = {r_string(rule[0]) if rule else 'NULL'}",
        f"field = {r_string(rule[1]) if rule else 'NULL'}",
        f"counts = {'NULL' if rule else r_numbers(counts)}",
        f"estimator = {r_string(estimator) if estimator else 'NULL'}",
        f"murmur = {r_numbers(expected) if estimator else 'NULL'}",
    ]
    if estimator and design is not None and "A" in design:
        parts += [
            f"A = {r_matrix(design['A'])}",
            f"B = {'NULL' if design['B'] is None else r_matrix(design['B'])}",
            f"b = {r_numbers(design['b'])}",
        ]
    elif estimator and design is not None:
        parts += [f"decode = {r_numbers(design['decode'])}", f"lo = {design['lo']!r}", f"step = {design['step']!r}"]
    return "  list(\n    " + ",\n    ".join(parts) + "\n  )"


TEMPLATE = r"""# Murmur: re-estimate survey {title} (id {survey_id}) from its raw reports, in base R.
# Run: Rscript this-file.R   (R >= 4.0, no packages)
#
# Each line printed is: question_id version index estimate murmur difference
# (index 0.. for the shares of options, f = solve(A, z); "mean" and "se" for a numeric question's
# mean decoded from its report indices).
# Only the reports and the designs below are used; Murmur's own numbers ("murmur") are there to compare.

reports <- read.csv(text = r"---(
{reports}
)---", colClasses = c("integer", "integer", "character"))

designs <- list(
{designs}
)

# A report field as numbers: {{"value":3}} -> 3, {{"bits":[0,1,1]}} -> c(0, 1, 1).
field <- function(json, name) {{
  pattern <- paste0('"', name, '":(\\[[^]]*\\]|-?[0-9.eE+-]+)')
  found <- regmatches(json, regexpr(pattern, json))
  if (length(found) != 1L) stop("report without field ", name, ": ", json)
  text <- gsub("\\[|\\]", "", sub(paste0('"', name, '":'), "", found))
  if (text == "") return(numeric(0))
  as.numeric(strsplit(text, ",", fixed = TRUE)[[1]])
}}

tally_of <- function(d, json) {{
  if (is.null(d$rule)) return(d$counts)
  values <- lapply(json, field, name = d$field)
  if (d$rule == "histogram") return(tabulate(unlist(values) + 1L, nbins = d$size))
  Reduce(`+`, values)
}}

show <- function(d, labels, estimate) {{
  difference <- abs(estimate - d$murmur)
  for (i in seq_along(estimate)) {{
    cat(sprintf("%d %d %s %.17g %.17g %.3g\n", d$question_id, d$version, labels[i], estimate[i],
                d$murmur[i], difference[i]))
  }}
  max(difference)
}}

largest <- 0
for (d in designs) {{
  json <- reports$report[reports$question_id == d$question_id & reports$version == d$version]
  if (!is.null(d$rule) && length(json) != d$n) stop("expected ", d$n, " reports of question ", d$question_id)
  counts <- tally_of(d, json)
  n <- d$n
  if (is.null(d$estimator)) {{
    cat(sprintf("# question %d version %d (%s): not re-estimated here; its tally and design are above\n",
                d$question_id, d$version, d$mechanism))
    next
  }}
  if (d$estimator == "inverse") {{
    z <- if (is.null(d$B)) counts / n else drop(d$B %*% (counts / n)) + d$b
    estimate <- solve(d$A, z)
    largest <- max(largest, show(d, as.character(seq_along(estimate) - 1L), estimate))
  }} else {{
    decoded <- sum(counts * d$decode) / n
    second <- sum(counts * d$decode^2) / n
    variance <- max(second - decoded^2, 0) * n / (n - 1) * d$step^2
    cat(sprintf("%d %d se %.17g\n", d$question_id, d$version, sqrt(variance / n)))
    largest <- max(largest, show(d, "mean", d$lo + d$step * decoded))
  }}
}}
cat(sprintf("# largest difference from Murmur: %.3g\n", largest))
"""
