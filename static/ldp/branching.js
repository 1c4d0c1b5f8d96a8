// @ts-check
/**
 * Branching that leaks nothing: the browser's half of ldp/branching.py. Pure functions, no DOM.
 *
 * Conditions are evaluated here on the true answers ("show question 5 when question 3 is one of
 * a, b"; "... when question 2 lies between 3 and 7"), but the wire never depends on them: every
 * submission carries one report for every question, and a question that was not shown or was
 * skipped sends its mechanism's report of a *fill* answer drawn independently of every answer
 * (FILLS, the mirror of ldp.families.FILLS): a fake answer drawn uniformly from the domain for
 * the shares and mean families (RS+FD's fake data, Arcolezi et al. 2021), the empty set for a
 * multi-select and the empty text for free text; a question shown and skipped that offers
 * "Prefer not to say" sends that option's report instead (skipAnswer). So the whole body is (sum
 * of the questions' epsilons)-LDP whatever the path (ldp/branching.py explains why;
 * tests/js/branching.test.mjs checks it by enumeration).
 */

import { uniformInt, uniformUnit } from "./randomize.js";
import { familyOf } from "./report.js";

/**
 * @typedef {import("./randomize.js").RandomSource} RandomSource
 * @typedef {{question: number, in?: number[], between?: [number, number]}} Condition
 * @typedef {{index?: number, value?: number, text?: string, chosen?: number[]} | null} Answer
 */

/** What each family sends when not asked or skipped: ldp.families.FILLS. */
export const FILLS = Object.freeze({ shares: "fake", mean: "fake", multi: "not-asked", text: "not-asked" });

/**
 * Whether the answer (null when skipped or not shown) meets the condition.
 * @param {Condition} condition
 * @param {Answer} answer
 */
export function conditionHolds(condition, answer) {
  if (!answer) return false;
  if (condition.in) return answer.index !== undefined && condition.in.includes(answer.index);
  if (condition.between) {
    const [low, high] = condition.between;
    return typeof answer.value === "number" && low <= answer.value && answer.value <= high;
  }
  return false;
}

/**
 * The questions the respondent sees, in order: ldp.branching.shown_questions.
 * @param {number[]} order  question ids in the survey's order
 * @param {Map<number, Condition>} conditions  by the id of the question they show
 * @param {Map<number, Answer>} answers  by question id
 * @returns {number[]}
 */
export function shownQuestions(order, conditions, answers) {
  /** @type {number[]} */
  const shown = [];
  for (const question of order) {
    const condition = conditions.get(question);
    if (!condition || (shown.includes(condition.question) && conditionHolds(condition, answers.get(condition.question) ?? null))) {
      shown.push(question);
    }
  }
  return shown;
}

/**
 * The fill answer of a question not asked or skipped, drawn from `random` independently of
 * every answer: a uniform option (shares; a declared pair's joint index over its k = k1 k2), a
 * uniform value in [lo, hi] (mean), the empty set (multi), the empty text (text).
 * @param {any} spec
 * @param {RandomSource} random
 * @returns {{index?: number, value?: number, chosen?: number[], text?: string}}
 */
export function fillAnswer(spec, random) {
  const family = /** @type {keyof typeof FILLS} */ (familyOf(spec.mechanism));
  if (family === "mean") return { value: spec.lo + uniformUnit(random) * (spec.hi - spec.lo) };
  if (family === "multi") return { chosen: [] };
  if (family === "text") return { text: "" };
  const index = uniformInt(spec.k, random);
  return { index, value: index };
}

/**
 * What a question the respondent saw and left empty sends: the report of its "Prefer not to say"
 * option when the organizer offers one (the spec entry's `skip`, that option's index: the same
 * report as choosing it), otherwise its fill answer, as for a question not shown. Either way the
 * input is drawn independently of every true answer, so the whole body stays within the same bound.
 * @param {{spec: any, skip?: number}} entry
 * @param {RandomSource} random
 * @returns {{index?: number, value?: number, chosen?: number[], text?: string}}
 */
export function skipAnswer(entry, random) {
  const skip = entry.skip;
  if (typeof skip === "number" && Number.isInteger(skip) && skip >= 0 && skip < entry.spec.k) return { index: skip, value: skip };
  return fillAnswer(entry.spec, random);
}

/**
 * The fill's distribution over a categorical question's k inputs (for exact enumeration):
 * uniform for a fake, the point mass on input 0 (the neutral answer) for "not-asked".
 * @param {string} family
 * @param {number} k
 * @returns {number[]}
 */
export function fillWeights(family, k) {
  if (FILLS[/** @type {keyof typeof FILLS} */ (family)] === "fake") return Array.from({ length: k }, () => 1 / k);
  return Array.from({ length: k }, (_, i) => (i === 0 ? 1 : 0));
}

/**
 * Every distinct path through the survey (the builder's preview): ldp.branching.paths.
 * @param {number[]} order
 * @param {Map<number, Condition>} conditions
 * @returns {{shown: number[], holding: number[]}[]}
 */
export function paths(order, conditions) {
  const targets = order.filter((q) => conditions.has(q));
  /** @type {Map<string, {shown: number[], holding: number[]}>} */
  const found = new Map();
  for (let code = 0; code < 2 ** targets.length; code += 1) {
    /** @type {number[]} */
    const shown = [];
    for (const question of order) {
      const condition = conditions.get(question);
      const wanted = ((code >> (targets.length - 1 - targets.indexOf(question))) & 1) === 1;
      if (!condition || (shown.includes(condition.question) && wanted)) shown.push(question);
    }
    const key = shown.join(",");
    if (!found.has(key)) found.set(key, { shown, holding: targets.filter((q) => shown.includes(q)) });
  }
  return [...found.values()];
}

/**
 * A random order of n items (Fisher-Yates with crypto draws), the last `keep` items staying last:
 * the answer page's per-respondent order of options or questions, which is never sent.
 * @param {number} n
 * @param {RandomSource} random
 * @param {number} [keep]
 * @returns {number[]}
 */
export function shuffledOrder(n, random, keep = 0) {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - keep - 1; i > 0; i -= 1) {
    const j = uniformInt(i + 1, random);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}
