// Tests of static/ldp/ledger.js: entries are validated and kept in the given Storage only; the
// totals follow sequential composition and the memoization bound of the module comment, checked
// against sums written out by hand.

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  CAP_KEY,
  LEDGER_KEY,
  capCheck,
  forgetLedger,
  ledgerTotals,
  makeEntry,
  memoizedTotal,
  readCap,
  readLedger,
  recordSpends,
  writeCap,
} from "../../static/ldp/ledger.js";
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

test("a series lists what each round spent, with its two totals; a one-off survey is one round", () => {
  const storage = new MemoryStorage();
  // Three rounds of a series, recorded under its id; the third answered a day later.
  for (const [i, round] of pulse(3).entries()) {
    recordSpends(round.map((spend) => ({ ...spend, survey: "pulse" })), storage, i < 2 ? NOW : new Date(2026, 10, 24, 9));
  }
  recordSpends([{ survey: "canteen", title: "Canteen", question: "q1", epsilon: 1 }], storage, NOW);
  const [series, canteen] = ledgerTotals(readLedger(storage)).surveys;
  assert.deepEqual(series.rounds, [1, 2, 3]);
  assert.deepEqual(
    series.perRound.map((spend) => [spend.round, spend.days]),
    [[1, ["2026-11-23"]], [2, ["2026-11-23"]], [3, ["2026-11-24"]]],
  );
  for (const spend of series.perRound) assertClose(assert, spend.epsilon, 0.8 + 2.04);
  assertClose(assert, series.sequential, 3 * (0.8 + 2.04));
  // yes/no: min(2.4, min(3, 2) * 2.0) = 2.4; free text: min(6.12, 3 * 4.39) = 6.12.
  assertClose(assert, series.memoized, 2.4 + 6.12);
  assert.deepEqual(canteen.rounds, []);
  assert.deepEqual(canteen.perRound, [{ round: null, days: ["2026-11-23"], epsilon: 1 }]);
  assert.equal(canteen.memoized, 1);
});

test("memoization lowers a long series' total below its rounds added up", () => {
  const storage = new MemoryStorage();
  for (const round of pulse(6)) recordSpends(round.map((spend) => ({ ...spend, survey: "pulse" })), storage, NOW);
  const [series] = ledgerTotals(readLedger(storage)).surveys;
  assert.equal(series.perRound.length, 6);
  assertClose(assert, series.sequential, 6 * (0.8 + 2.04));
  // yes/no: min(4.8, min(6, 2) * 2.0) = 4; free text: min(12.24, 6 * 4.39) = 12.24.
  assertClose(assert, series.memoized, 4 + 12.24);
  assert.ok(series.memoized < series.sequential - 0.79);
});

test("the respondent's own limit is kept locally and checked against the total", () => {
  const storage = new MemoryStorage();
  assert.equal(readCap(storage), null);
  writeCap(2.5, storage);
  assert.equal(readCap(storage), 2.5);
  assert.equal(storage.getItem(CAP_KEY), "2.5");
  assert.throws(() => writeCap(-1, storage));
  recordSpends([{ survey: "a", question: "1", epsilon: 1 }, { survey: "a", question: "2", epsilon: 1 }], storage);
  assert.deepEqual(capCheck(readLedger(storage), 0.5, 2.5), { spent: 2, after: 2.5, cap: 2.5, exceeds: false });
  assert.equal(capCheck(readLedger(storage), 0.6, 2.5).exceeds, true);
  assert.equal(capCheck(readLedger(storage), 100, null).exceeds, false);
  writeCap(null, storage);
  assert.equal(readCap(storage), null);
});
