// @ts-check
/**
 * Questions asked directly (not randomized): the answer page marks them with `data-direct` (the
 * randomization's version, templates/surveys/methods/_answer_note.html), they have no spec, and
 * their answer is sent as given, `{"value": option index}`, which the server stores and shows only
 * for groups of at least ten people. Every other question goes through report.js.
 */

/**
 * The reports of the questions asked directly among the answers read from the page.
 * @param {{fieldset: HTMLElement, answer: any}[]} answers
 * @returns {{question: number, version: number, report: {value: number}}[]}
 */
export function directReports(answers) {
  const reports = [];
  for (const { fieldset, answer } of answers) {
    const note = /** @type {HTMLElement | null} */ (fieldset.querySelector("[data-direct]"));
    if (!note || answer === null || !("index" in answer)) continue;
    reports.push({ question: Number(fieldset.dataset.questionId), version: Number(note.dataset.direct), report: { value: answer.index } });
  }
  return reports;
}
