// @ts-check
/**
 * The answer page's glue. True answers live only in nameless inputs, which are never
 * serialized; on submit each answered question's answer is read here (data-* attributes) and
 * handed to static/ldp/report.js, which randomizes it (crypto.getRandomValues) by its mechanism's
 * family: an option index, a value, the set of checked options, or a short answer normalized here
 * (text.js) and hashed into a sketch or Bloom filter report. Only the randomized reports are
 * posted. Nothing is written to cookies; after sending, the questions' ε (never an answer) is added
 * to this browser's privacy ledger in localStorage (report.js recordSent), the answers are
 * cleared and a receipt shows the reports.
 *
 * A recurring survey's memoized question (its spec entry carries a `memo` block: RAPPOR, dBitFlip,
 * 1BitMean) is randomized in two layers (report.js, memo.js) from this browser's device secret,
 * which stays in localStorage. Each memoized question's randomization is pinned by its digest in
 * localStorage (never sent); a question whose parameters changed since this device last answered
 * it starts a new, independent permanent layer, and the page says so above the question, with the
 * new stream's epsilon_inf, before anything is sent.
 */

import { fillAnswer, shownQuestions, shuffledOrder, skipAnswer } from "../ldp/branching.js";
import { pairAnswer } from "../ldp/pairs.js";
import { cryptoRandomSource } from "../ldp/randomize.js";
import { capCheck, readCap, readLedger } from "../ldp/ledger.js";
import { buildReport, changedPins, memoSpend, recordSent } from "../ldp/report.js";
import { unsampledQuestions } from "../ldp/sampling.js";
import { MAX_TEXT_LENGTH, normalizeText } from "../ldp/text.js";
import { directReports } from "./direct.js";
import { refusalReason } from "./promise.js";

/**
 * Django's JavaScriptCatalog (loaded before this module) defines gettext; without it, English.
 * @type {(message: string) => string}
 */
const gettext = /** @type {any} */ (globalThis).gettext || ((message) => message);
/** @type {(format: string, values: Record<string, string>, named: boolean) => string} */
const interpolate =
  /** @type {any} */ (globalThis).interpolate ||
  ((format, values) => format.replace(/%\((\w+)\)s/g, (_, name) => values[name]));

const form = /** @type {HTMLFormElement | null} */ (document.querySelector("[data-respond-form]"));
if (form) setUp(form);

/** @param {HTMLFormElement} form */
function setUp(form) {
  const specElement = /** @type {HTMLElement} */ (document.getElementById("murmur-specs"));
  /** @type {Map<number, {question: number, version: number, spec: any, skip?: number, memo?: {series: string, question: string, layers: string, gamma?: number}, digest?: string}>} */
  const specs = new Map(JSON.parse(specElement.textContent || "[]").map((s) => [s.question, s]));
  const fieldsets = /** @type {HTMLElement[]} */ ([...form.querySelectorAll("[data-question-id]")]);
  fieldsets.forEach(groupRadios);
  fieldsets.forEach(limitChoices);
  // Display logic (never sent): conditions on earlier answers, and per-respondent option orders.
  /** @type {Record<string, {show_if?: any, shuffle_options?: boolean, keep_last?: boolean, block?: string}>} */
  const logic = JSON.parse(document.getElementById("murmur-logic")?.textContent || "{}");
  const order = fieldsets.map((f) => Number(f.dataset.questionId));
  const conditions = new Map(
    Object.entries(logic)
      .filter(([, rules]) => rules.show_if)
      .map(([question, rules]) => [Number(question), rules.show_if]),
  );
  const sources = new Set([...conditions.values()].map((c) => Number(c.question)));
  // Question sampling (static/ldp/sampling.js): the pooled questions this respondent is not asked,
  // drawn here, never sent; each sends a fake answer's report like a question not shown.
  const promised = JSON.parse(document.getElementById("murmur-promise")?.textContent || "{}");
  const unsampled = unsampledQuestions(promised.sampling, cryptoRandomSource());
  const visibleQuestions = () => {
    const answers = new Map(
      fieldsets.map((f) => {
        const answer = readAnswer(f);
        return [Number(f.dataset.questionId), answer && !("refused" in answer) ? answer : null];
      }),
    );
    return shownQuestions(order, conditions, answers).filter((question) => !unsampled.has(question));
  };
  const showQuestions = () => {
    const shown = new Set(visibleQuestions());
    for (const fieldset of fieldsets) fieldset.hidden = !shown.has(Number(fieldset.dataset.questionId));
  };
  for (const fieldset of fieldsets) {
    const rules = logic[fieldset.dataset.questionId || ""];
    if (rules && rules.shuffle_options) shuffleOptions(fieldset, Boolean(rules.keep_last));
  }
  shuffleBlocks(fieldsets, logic);
  if (conditions.size || unsampled.size) {
    showQuestions();
    form.addEventListener("change", showQuestions);
    form.addEventListener("input", showQuestions);
    form.addEventListener("click", (event) => {
      if (/** @type {HTMLElement} */ (event.target).closest("[data-clear]")) showQuestions();
    });
  }

  const submitButton = /** @type {HTMLButtonElement} */ (form.querySelector("[data-submit]"));
  const errorBox = /** @type {HTMLElement} */ (form.querySelector("[data-error]"));
  const invite = invitationToken();
  if (form.dataset.inviteOnly !== undefined && !invite) {
    showError(
      errorBox,
      gettext("This survey takes answers by invitation only. Open the link from your invitation to answer."),
    );
    return;
  }
  // Recompute every question's privacy from the specs received; refuse to send if any breaks the promise.
  const promise = JSON.parse(document.getElementById("murmur-promise")?.textContent || "{}");
  const numberOf = (/** @type {number} */ question) => 1 + fieldsets.findIndex((f) => Number(f.dataset.questionId) === question);
  const refusal = refusalReason([...specs.values()], promise, numberOf);
  if (refusal) showError(errorBox, refusal);
  // The respondent's own limit (set on the ledger page, kept in this browser): said before sending.
  const capWarning = /** @type {HTMLElement | null} */ (form.querySelector("[data-cap-warning]"));
  const overCap = form.dataset.previewing === undefined ? capOf(Number(promise.total) || 0) : null;
  if (capWarning && overCap) {
    /** @type {HTMLElement} */ (capWarning.querySelector("[data-cap-text]")).textContent = overCap;
    capWarning.hidden = false;
  }
  const pinned = refusal ? Promise.resolve() : checkPins(specs, fieldsets);

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    await pinned;
    submit();
  });
  pinned.then(() => {
    submitButton.disabled = false;
  });

  async function submit() {
    if (refusal) {
      showError(errorBox, refusal);
      return;
    }
    const override = /** @type {HTMLInputElement | null} */ (form.querySelector("[data-cap-override]"));
    if (overCap && !(override && override.checked)) {
      showError(errorBox, gettext("Nothing was sent: this survey would take you above your own limit. Tick “Send anyway” to send it."));
      return;
    }
    const random = cryptoRandomSource();
    // Every answer is read and checked first: one refused number stops the submission before
    // anything is randomized. A question not shown (its condition does not hold) counts as unanswered.
    const shown = new Set(visibleQuestions());
    const answers = fieldsets.map((fieldset) => ({
      fieldset,
      answer: shown.has(Number(fieldset.dataset.questionId)) ? readAnswer(fieldset) : null,
    }));
    const outOfRange = answers.find(({ answer }) => answer !== null && "refused" in answer);
    if (outOfRange && outOfRange.answer && "refused" in outOfRange.answer) {
      showError(errorBox, outOfRange.answer.refused);
      return;
    }
    if (answers.every(({ answer }) => answer === null)) {
      showError(errorBox, gettext("Answer at least one question before sending."));
      return;
    }
    // A question that decides whether others are shown must be answered where it is shown, so that
    // "asked" means exactly "its condition held" (the estimates among those asked rely on it).
    const undecided = answers.find(
      ({ fieldset, answer }) => answer === null && sources.has(Number(fieldset.dataset.questionId)) && shown.has(Number(fieldset.dataset.questionId)),
    );
    if (undecided) {
      showError(errorBox, interpolate(gettext("Answer %(question)s: whether later questions are asked depends on it."), { question: legendOf(undecided.fieldset) }, true));
      return;
    }
    // A declared pair's two questions have no spec of their own: their answers are randomized together.
    const pairs = pairedAnswers(answers);
    const half = pairs.find(({ first, second }) => (first.answer === null) !== (second.answer === null) && shown.has(Number(first.fieldset.dataset.questionId)) && shown.has(Number(second.fieldset.dataset.questionId)));
    if (half) {
      showError(errorBox, interpolate(gettext("Answer both %(first)s and %(second)s, or leave both empty: they are sent together."), { first: legendOf(half.first.fieldset), second: legendOf(half.second.fieldset) }, true));
      return;
    }
    const byQuestion = new Map(answers.map((a) => [Number(a.fieldset.dataset.questionId), a.answer]));
    const byPair = new Map(pairs.map((p) => [p.pair, p]));
    // One report for every question of the survey, in the page's spec order, whatever was shown
    // or answered: a question not shown sends the report of its fill answer, one shown and skipped
    // that of its "Prefer not to say" where offered, else its fill answer too (static/ldp/branching.js),
    // so the body's shape never depends on the path.
    const reports = [];
    for (const entry of specs.values()) {
      const pair = byPair.get(entry.question);
      /** @type {any} */
      let answer = byQuestion.get(entry.question) ?? null;
      let seen = shown.has(entry.question);
      if (pair) {
        const { first, second } = pair;
        answer =
          first.answer && second.answer && "index" in first.answer && "index" in second.answer
            ? { index: pairAnswer(entry.spec, Number(first.fieldset.dataset.options), Number(second.fieldset.dataset.options), first.answer.index, second.answer.index) }
            : null;
        seen = [first, second].every(({ fieldset }) => shown.has(Number(fieldset.dataset.questionId)));
      }
      // In a recurring survey a memoized question (a dBitFlip pair too) is randomized in two layers
      // from the device secret (report.js); a fill or skip answer goes the same way.
      const stand = seen ? skipAnswer(entry, random) : fillAnswer(entry.spec, random);
      const report = await buildReport(entry, answer ?? stand, { random });
      reports.push({ question: entry.question, version: entry.version, report });
    }
    // Asked directly (direct.js): sent as given when answered. Such a question is never behind a
    // condition (surveys/forms/branching.py), so whether it is sent depends on no other answer.
    reports.push(...directReports(answers));
    submitButton.disabled = true;
    try {
      const response = await fetch(form.dataset.submitUrl || "", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": form.dataset.csrfToken || "" },
        body: padded(JSON.stringify(invite ? { token: form.dataset.token, reports, invite } : { token: form.dataset.token, reports })),
      });
      const data = await response.json().catch(() => ({}));
      if (!response.ok) {
        showError(errorBox, data.error || gettext("Sending failed. Check your connection and try again."));
        submitButton.disabled = false;
        return;
      }
      if (!data.preview) recordSent(data.receipt, specs, { ...pageOf(form), sampling: promised.sampling });
      showReceipt(form, reports, data.receipt);
    } catch {
      showError(errorBox, gettext("Sending failed. Check your connection and try again."));
      submitButton.disabled = false;
    }
  }
}

/**
 * Above a question this device answered before under other parameters (report.js changedPins), say
 * that it starts a new memoized stream and what that costs.
 * @param {Map<number, any>} specs
 * @param {HTMLElement[]} fieldsets
 */
async function checkPins(specs, fieldsets) {
  for (const entry of await changedPins(specs.values())) {
    const fieldset = fieldsets.find((f) => Number(f.dataset.questionId) === entry.question);
    if (!fieldset) continue;
    const notice = document.createElement("p");
    notice.className = "notice warning";
    notice.setAttribute("role", "status");
    notice.dataset.memoChanged = "";
    notice.textContent = interpolate(
      gettext(
        "This question's randomization changed since you last answered it on this device. Your answer starts a new memoized record, independent of the old one: over all rounds it can reveal up to ε∞ = %(epsilon)s more about you, on top of what your earlier answers to it spent.",
      ),
      { epsilon: memoSpend(entry).epsilon_infinity.toFixed(2) },
      true,
    );
    const legend = fieldset.querySelector("legend");
    if (legend) legend.after(notice);
    else fieldset.prepend(notice);
  }
}

/**
 * What the page says when sending would take this browser's ledger above the respondent's own
 * limit (ledger.js capCheck); null when there is no limit or it is not exceeded. Every question
 * counts, also one skipped or not asked, since each sends a report.
 * @param {number} total  the survey's stated ε
 * @returns {string | null}
 */
function capOf(total) {
  try {
    const check = capCheck(readLedger(), total, readCap());
    if (!check.exceeds || check.cap === null) return null;
    return interpolate(
      gettext("This survey spends ε = %(total)s (every question counts, also one you skip, as each sends a report). Your ledger holds ε = %(spent)s, so sending would take you to ε = %(after)s, above your own limit of ε = %(cap)s. You can leave without sending."),
      { total: total.toFixed(2), spent: check.spent.toFixed(2), after: check.after.toFixed(2), cap: String(check.cap) },
      true,
    );
  } catch {
    return null;
  }
}

/**
 * Show a question's options in a random order of this respondent's (crypto.getRandomValues), the
 * last one kept last if asked ("None of these"), and "Prefer not to say" (data-prefer-not) always
 * last, after it. Each option keeps its data-option-index, so the answer and its report are the
 * same whatever the order, and nothing about the order is sent.
 * @param {HTMLElement} fieldset
 * @param {boolean} keepLast
 */
function shuffleOptions(fieldset, keepLast) {
  const group = fieldset.querySelector("[role=radiogroup], [data-max-choices]");
  if (!group) return;
  const options = [...group.querySelectorAll(":scope > label.option")];
  if (options.length < 2) return;
  const anchor = options[options.length - 1].nextSibling;
  const keep = (keepLast ? 1 : 0) + (options[options.length - 1].hasAttribute("data-prefer-not") ? 1 : 0);
  const order = shuffledOrder(options.length, cryptoRandomSource(), Math.min(keep, options.length));
  for (const index of order) group.insertBefore(options[index], anchor);
  fieldset.dataset.shuffled = "";
}

/**
 * Show each block of neighbouring questions (the same `block` name in their logic) in a random order
 * of this respondent's, keeping the numbers in reading order. Conditions and reports follow the
 * survey's order, never the shown one, so nothing about the order is sent.
 * @param {HTMLElement[]} fieldsets
 * @param {Record<string, {block?: string}>} logic
 */
function shuffleBlocks(fieldsets, logic) {
  /** @type {HTMLElement[][]} */
  const blocks = [];
  let previous = "";
  for (const fieldset of fieldsets) {
    const name = logic[fieldset.dataset.questionId || ""]?.block || "";
    const last = blocks[blocks.length - 1];
    if (name && name === previous && last && last[last.length - 1].nextElementSibling === fieldset) last.push(fieldset);
    else if (name) blocks.push([fieldset]);
    previous = name;
  }
  for (const block of blocks.filter((b) => b.length > 1)) {
    const legends = block.map((f) => f.querySelector(":scope > legend"));
    const numbers = legends.map((legend) => (legend?.textContent || "").match(/^\s*\d+\.\s*/)?.[0] || "");
    const anchor = block[block.length - 1].nextSibling;
    const parent = /** @type {Node} */ (block[0].parentNode);
    const order = shuffledOrder(block.length, cryptoRandomSource());
    order.forEach((index, position) => {
      parent.insertBefore(block[index], anchor);
      const legend = legends[index];
      if (legend && numbers[position]) legend.textContent = numbers[position] + (legend.textContent || "").replace(/^\s*\d+\.\s*/, "");
      block[index].dataset.shuffled = "";
    });
  }
}

/**
 * The body padded with trailing spaces (JSON ignores them) to a multiple of 512 bytes. Its length
 * is already a function of the randomized reports only; padding makes it the same on every path
 * of a survey whose reports have fixed widths.
 * @param {string} body
 */
function padded(body) {
  const size = new TextEncoder().encode(body).length;
  return body + " ".repeat((512 - (size % 512)) % 512);
}

/**
 * The declared pairs on the page, each with its two questions' fieldsets and answers.
 * @param {{fieldset: HTMLElement, answer: any}[]} answers
 * @returns {{pair: number, first: {fieldset: HTMLElement, answer: any}, second: {fieldset: HTMLElement, answer: any}}[]}
 */
function pairedAnswers(answers) {
  /** @type {Map<number, any>} */
  const pairs = new Map();
  for (const entry of answers) {
    const { pair, pairRole } = entry.fieldset.dataset;
    if (!pair || (pairRole !== "first" && pairRole !== "second")) continue;
    const found = pairs.get(Number(pair)) || { pair: Number(pair) };
    found[pairRole] = entry;
    pairs.set(Number(pair), found);
  }
  return [...pairs.values()].filter((p) => p.first && p.second);
}

/** @param {HTMLElement} fieldset */
function legendOf(fieldset) {
  const legend = fieldset.querySelector("legend");
  return legend ? legend.textContent || "" : "";
}

/**
 * The survey the ledger records this page's answers under (report.js ledgerSpends): a round of a
 * recurring survey under its series, with its round number.
 * @param {HTMLFormElement} form
 */
function pageOf(form) {
  const series = form.dataset.series || null;
  return {
    survey: form.dataset.survey || "",
    title: form.dataset.surveyTitle || "",
    series,
    round: series ? Number(form.dataset.round) : null,
  };
}

/**
 * The invitation token in the link's fragment (`#invite=…`), which browsers never send to the server.
 * @returns {string | null}
 */
function invitationToken() {
  return new URLSearchParams(window.location.hash.slice(1)).get("invite");
}

/**
 * The question's answer, read from its widget: null when skipped; a refusal message when a number
 * lies outside the question's range (or is not whole where whole numbers are asked for), or a
 * short answer is too long; a short answer comes back normalized; a multi-select answer is the
 * indices of the checked options. None checked is an answer too, the empty set, randomized like any
 * other: sending nothing for it would tell the server exactly that no option applies.
 * @param {HTMLElement} fieldset
 * @returns {null | {refused: string} | {index: number, value: number} | {text: string} | {chosen: number[]}}
 */
function readAnswer(fieldset) {
  const group = /** @type {HTMLElement | null} */ (fieldset.querySelector("[data-max-choices]"));
  if (group) {
    const chosen = [...group.querySelectorAll("input[type=checkbox]:checked")].map((box) =>
      Number(/** @type {HTMLInputElement} */ (box).dataset.optionIndex),
    );
    if (chosen.length > Number(group.dataset.maxChoices)) return { refused: choicesMessage(fieldset, group) };
    return { chosen };
  }
  const textInput = /** @type {HTMLInputElement | null} */ (fieldset.querySelector("[data-text-input]"));
  if (textInput) {
    const text = normalizeText(textInput.value);
    if (text === "") return null;
    if (text.length > MAX_TEXT_LENGTH) {
      const legend = fieldset.querySelector("legend");
      const values = { question: legend ? legend.textContent || "" : "", length: String(MAX_TEXT_LENGTH) };
      return { refused: interpolate(gettext("%(question)s: write at most %(length)s characters."), values, true) };
    }
    return { text };
  }
  const input = /** @type {HTMLInputElement | null} */ (fieldset.querySelector("[data-number-input]"));
  if (input) {
    if (input.value.trim() === "" && !input.validity.badInput) return null;
    const value = input.valueAsNumber;
    const lo = Number(input.dataset.lo);
    const hi = Number(input.dataset.hi);
    const whole = input.dataset.whole === "true";
    if (!Number.isFinite(value) || value < lo || value > hi || (whole && !Number.isInteger(value))) {
      const legend = fieldset.querySelector("legend");
      const format = whole
        ? gettext("%(question)s: enter a whole number from %(range)s.")
        : gettext("%(question)s: enter a number from %(range)s.");
      const values = { question: legend ? legend.textContent || "" : "", range: input.dataset.rangeText || "" };
      return { refused: interpolate(format, values, true) };
    }
    // A histogram question reports the index of the value's equal-width range (the last one closed).
    const bins = Number(input.dataset.bins || 0);
    const index = bins ? Math.min(Math.floor(((value - lo) / (hi - lo)) * bins), bins - 1) : -1;
    return { index, value };
  }
  const checked = /** @type {HTMLInputElement | null} */ (fieldset.querySelector("input[type=radio]:checked"));
  if (!checked) return null;
  return { index: Number(checked.dataset.optionIndex), value: Number(checked.dataset.value ?? checked.dataset.optionIndex) };
}

/**
 * Radios without a name do not exclude each other: do it here, as a radio group does — one Tab
 * stop per question (the checked option, else the first: a roving tabindex) and arrow keys to move.
 * @param {HTMLElement} fieldset
 */
function groupRadios(fieldset) {
  const radios = /** @type {HTMLInputElement[]} */ ([...fieldset.querySelectorAll("input[type=radio]")]);
  const rove = () => {
    const stop = radios.find((radio) => radio.checked) || radios[0];
    radios.forEach((radio) => (radio.tabIndex = radio === stop ? 0 : -1));
  };
  rove();
  radios.forEach((radio, index) => {
    radio.addEventListener("change", () => {
      if (radio.checked) radios.forEach((other) => other !== radio && (other.checked = false));
      rove();
    });
    radio.addEventListener("keydown", (event) => {
      const step = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      const next = radios[(index + step + radios.length) % radios.length];
      next.focus();
      next.checked = true;
      next.dispatchEvent(new Event("change"));
    });
  });
  const clear = fieldset.querySelector("[data-clear]");
  const typed = /** @type {HTMLInputElement | null} */ (fieldset.querySelector("[data-number-input], [data-text-input]"));
  if (clear)
    clear.addEventListener("click", () => {
      radios.forEach((radio) => (radio.checked = false));
      if (typed) typed.value = "";
      rove();
    });
}

/**
 * A multi-select question's maximum, kept as the respondent checks boxes: a box checked beyond it
 * is unchecked again and a message (a polite live region) says why. The clear button unchecks all.
 * @param {HTMLElement} fieldset
 */
function limitChoices(fieldset) {
  const group = /** @type {HTMLElement | null} */ (fieldset.querySelector("[data-max-choices]"));
  if (!group) return;
  const boxes = /** @type {HTMLInputElement[]} */ ([...group.querySelectorAll("input[type=checkbox]")]);
  const message = /** @type {HTMLElement} */ (fieldset.querySelector("[data-choices-limit]"));
  const limit = Number(group.dataset.maxChoices);
  boxes.forEach((box) =>
    box.addEventListener("change", () => {
      const checked = boxes.filter((other) => other.checked).length;
      if (box.checked && checked > limit) {
        box.checked = false;
        message.textContent = choicesMessage(fieldset, group);
        message.hidden = false;
      } else if (checked <= limit) {
        message.hidden = true;
      }
    }),
  );
  fieldset.querySelector("[data-clear]")?.addEventListener("click", () => {
    boxes.forEach((box) => (box.checked = false));
    message.hidden = true;
  });
}

/**
 * @param {HTMLElement} fieldset
 * @param {HTMLElement} group
 */
function choicesMessage(fieldset, group) {
  const legend = fieldset.querySelector("legend");
  const values = { question: legend ? legend.textContent || "" : "", count: group.dataset.maxChoices || "" };
  return interpolate(gettext("%(question)s: choose at most %(count)s options."), values, true);
}

/**
 * @param {HTMLElement} box
 * @param {string} message
 */
function showError(box, message) {
  box.textContent = message;
  box.hidden = false;
}

/**
 * The receipt: per question, what was sent in words (the server's ``summary``), what it says about
 * the respondent (``chance``), and the exact report as sent and as stored, folded away.
 * @param {HTMLFormElement} form
 * @param {{question: number, report: object}[]} sent
 * @param {{question: number, text: string, stored: object, summary: string, chance: string, design?: string}[]} receipt
 */
function showReceipt(form, sent, receipt) {
  form.querySelectorAll("input[type=radio], input[type=checkbox]").forEach((box) => {
    /** @type {HTMLInputElement} */ (box).checked = false;
  });
  form.querySelectorAll("[data-number-input], [data-text-input]").forEach((input) => {
    /** @type {HTMLInputElement} */ (input).value = "";
  });
  form.remove();
  const section = /** @type {HTMLElement} */ (document.querySelector("[data-receipt]"));
  const list = /** @type {HTMLElement} */ (section.querySelector("[data-receipt-rows]"));
  for (const item of receipt) {
    const report = sent.find((s) => s.question === item.question);
    const entry = document.createElement("li");
    entry.dataset.receiptQuestion = String(item.question);
    const question = document.createElement("strong");
    question.textContent = item.text;
    const summary = document.createElement("p");
    summary.dataset.summary = "";
    summary.textContent = item.summary;
    entry.append(question, summary);
    if (item.chance) {
      const chance = document.createElement("p");
      chance.className = "hint";
      chance.textContent = item.chance;
      entry.append(chance);
    }
    if (item.design) {
      // A two-phase question: which version this respondent got, and how it was chosen.
      const design = document.createElement("p");
      design.className = "hint";
      design.dataset.design = "";
      design.textContent = item.design;
      entry.append(design);
    }
    const details = document.createElement("details");
    const label = document.createElement("summary");
    label.textContent = section.dataset.labelExact || "";
    const code = document.createElement("code");
    code.textContent = `${JSON.stringify(report ? report.report : null)} → ${JSON.stringify(item.stored)}`;
    details.append(label, code);
    entry.append(details);
    list.append(entry);
  }
  section.hidden = false;
  section.focus();
}
