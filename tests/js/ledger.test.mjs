// Tests of static/ldp/ledger.js: entries are validated and kept in the given Storage only; the
// totals follow sequential composition and the memoization bound of the module comment, checked
// against sums written out by hand.

import assert from "node:assert/strict";
import { test } from "node:test";

import { LEDGER_KEY, forgetLedger, ledgerTotals, makeEntry, memoizedTotal, readLedger, recordSpends } from "../../static/ldp/ledger.js";
import { MemoryStorage, assertClose, forbidMathRandom } from "./seeded.mjs";

forbidMathRandom();

const NOW = new Date(2026, 10, 23, 9, 30);
const YES_NO = { epsilon_infinity: 2.0, values: 2 };
const FREE_TEXT = { epsilon_infinity: 4.39, values: null };

/** Rounds 1..rounds of a weekly pulse: a yes/no question (memoized dBitFlip) and free text (RAPPOR). */
function pulse(rounds) {
  return Array.from({ length: rounds }, (_, i) => [
    { survey: `pulse-${i + 1}`, title: "Weekly pulse", series: "pulse", round: i + 1, question: "q-mood", epsilon: 0.8, memo: YES_NO },
    { survey: `pulse-${i + 1}`, title: "Weekly pulse", series: "pulse", round: i + 1, question: "q-other", epsilon: 2.04, memo: FREE_TEXT },
  ]);
}

test("spends are recorded in the given storage only, with the local day, and read back", () => {
  const storage = new MemoryStorage();
  recordSpends([{ survey: "s1", title: "Course evaluation", question: "q1", epsilon: 1 }], storage, NOW);
  const entries = readLedger(storage);
  assert.deepEqual(entries, [{ survey: "s1", title: "Course evaluation", series: null, round: null, question: "q1", epsilon: 1, memo: null, day: "2026-11-23" }]);
  assert.deepEqual([...storage.items.keys()], [LEDGER_KEY]);
  forgetLedger(storage);
  assert.deepEqual(readLedger(storage), []);
});

test("one-off surveys add up under sequential composition, and memoization changes nothing for them", () => {
  const storage = new MemoryStorage();
  recordSpends([{ survey: "a", question: "q1", epsilon: 1 }, { survey: "a", question: "q2", epsilon: 0.5 }], storage, NOW);
  recordSpends([{ survey: "b", question: "q1", epsilon: 2 }], storage, NOW);
  const totals = ledgerTotals(readLedger(storage));
  assert.equal(totals.sequential, 3.5);
  assert.equal(totals.memoized, 3.5);
  assert.deepEqual(totals.surveys.map((s) => [s.survey, s.sequential]), [["a", 1.5], ["b", 2]]);
});

test("ten memoized rounds cost at most min(sum, min(rounds, V) * epsilon_inf) per question", () => {
  const storage = new MemoryStorage();
  for (const round of pulse(10)) recordSpends(round, storage, NOW);
  const entries = readLedger(storage);
  const totals = ledgerTotals(entries);
  assertClose(assert, totals.sequential, 10 * 0.8 + 10 * 2.04);
  // yes/no: min(8, 2 * 2.0) = 4; free text: min(20.4, 10 * 4.39) = 20.4.
  assertClose(assert, totals.memoized, 4 + 20.4);
  // After one round memoization cannot help: min(0.8, 1 * 2) + min(2.04, 1 * 4.39).
  assertClose(assert, memoizedTotal(entries.slice(0, 2)), 0.8 + 2.04);
  assert.equal(totals.surveys.length, 10);
  assert.deepEqual(totals.surveys[3].rounds, [4]);
});

test("bad spends are refused whole and an unreadable ledger reads as empty", () => {
  const storage = new MemoryStorage();
  for (const bad of [
    { survey: "", question: "q", epsilon: 1 },
    { survey: "s", question: "q", epsilon: 0 },
    { survey: "s", question: "q", epsilon: Number.NaN },
    { survey: "s", question: "q", epsilon: 1, round: 0 },
    { survey: "s", question: "q", epsilon: 1, memo: YES_NO },
    { survey: "s", series: "x", question: "q", epsilon: 1, memo: { epsilon_infinity: 1, values: 0 } },
  ]) {
    assert.throws(() => recordSpends([{ survey: "ok", question: "q", epsilon: 1 }, bad], storage, NOW), RangeError);
  }
  assert.deepEqual(readLedger(storage), []);
  storage.setItem(LEDGER_KEY, "{not json");
  assert.deepEqual(readLedger(storage), []);
  storage.setItem(LEDGER_KEY, JSON.stringify([{ survey: "s", question: "q", epsilon: -1 }, makeEntry({ survey: "t", question: "q", epsilon: 1 }, NOW)]));
  assert.deepEqual(readLedger(storage).map((entry) => entry.survey), ["t"]);
});
