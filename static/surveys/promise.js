// @ts-check
/**
 * The answer page's check of what it received against what it promises (static/ldp/epsilon.js),
 * turned into a sentence for the respondent. respond.js sends nothing while this returns one.
 */

import { checkPromises } from "../ldp/epsilon.js";

/** @type {(message: string) => string} */
const gettext = /** @type {any} */ (globalThis).gettext || ((message) => message);
/** @type {(format: string, values: object, named: boolean) => string} */
const interpolate =
  /** @type {any} */ (globalThis).interpolate ||
  ((format, values) => format.replace(/%\((\w+)\)s/g, (_, name) => String(/** @type {any} */ (values)[name])));

/** @param {number | undefined} value */
const shown = (value) => (value === undefined ? "?" : String(Number(value.toPrecision(6))));

/**
 * @param {import("../ldp/epsilon.js").Problem} problem
 * @param {(question: number) => number} numberOf  a question's number on the page
 */
function describe(problem, numberOf) {
  const values = {
    number: problem.question === undefined ? "?" : numberOf(problem.question),
    found: shown(problem.found),
    promised: shown(problem.promised),
  };
  const formats = {
    malformed: gettext("Question %(number)s: the randomization parameters this page received are malformed."),
    unpromised: gettext("Question %(number)s: this page states no privacy budget for it."),
    epsilon: gettext(
      "Question %(number)s: the parameters this page received give ε = %(found)s, more than the ε = %(promised)s it promises.",
    ),
    delta: gettext(
      "Question %(number)s: the parameters this page received give δ = %(found)s, more than the δ = %(promised)s it promises.",
    ),
    total: gettext(
      "Together the parameters give ε = %(found)s, more than the total ε = %(promised)s this page promises.",
    ),
    cap: gettext("Together the parameters give ε = %(found)s, more than the survey's budget cap ε = %(promised)s."),
    epsilon_infinity: gettext(
      "Question %(number)s: over all rounds the parameters this page received give ε∞ = %(found)s, more than the ε∞ = %(promised)s it promises.",
    ),
    unmemoized: gettext(
      "Question %(number)s: this page promises a bound over all rounds, but the answer would not be memoized.",
    ),
  };
  return interpolate(formats[problem.reason], values, true);
}

/**
 * Why the page must not send (an empty string when the specs keep every promise).
 * @param {{question: number, spec: any}[]} entries  the specs the page received
 * @param {import("../ldp/epsilon.js").PagePromise} promise  the budgets the page states
 * @param {(question: number) => number} numberOf
 */
export function refusalReason(entries, promise, numberOf) {
  const problems = checkPromises(entries, promise);
  if (problems.length === 0) return "";
  return [
    gettext("Nothing was sent: your browser checked the randomization parameters it received and they do not keep this page's privacy promise."),
    ...problems.map((problem) => describe(problem, numberOf)),
    gettext("Please tell the survey's organizer."),
  ].join(" ");
}
