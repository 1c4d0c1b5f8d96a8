// The answers to questions asked directly: sent as given, and never a spend on the ε ledger.
import assert from "node:assert/strict";
import { test } from "node:test";

import { ledgerSpends } from "../../static/ldp/report.js";
import { directReports } from "../../static/surveys/direct.js";

/** A fieldset as the answer page draws it: data-question-id, and a [data-direct] note when asked directly. */
function fieldset(question, directVersion) {
  const note = directVersion === undefined ? null : { dataset: { direct: String(directVersion) } };
  return { dataset: { questionId: String(question) }, querySelector: (selector) => (selector === "[data-direct]" ? note : null) };
}

test("only the questions marked as asked directly are sent, as the option chosen", () => {
  const answers = [
    { fieldset: fieldset(1), answer: { index: 0 } }, // randomized: report.js's business
    { fieldset: fieldset(2, 3), answer: { index: 2 } },
    { fieldset: fieldset(3, 1), answer: null }, // skipped
  ];
  assert.deepEqual(directReports(answers), [{ question: 2, version: 3, report: { value: 2 } }]);
});

test("a question asked directly (epsilon null in the receipt) is no spend on the ledger", () => {
  const receipt = [
    { question: 1, epsilon: 1.6 },
    { question: 2, epsilon: null },
  ];
  const spends = ledgerSpends(receipt, new Map(), { survey: "s", title: "T", series: null, round: null });
  assert.deepEqual(spends.map((s) => [s.question, s.epsilon]), [["1", 1.6]]);
});
