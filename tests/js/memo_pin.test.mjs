// Tests of the pins in static/ldp/memo.js and of the ledger's streams (static/ldp/ledger.js): a
// memoized question's randomization is pinned by its digest in the given Storage only; a changed
// spec (epsilon, parameters, gamma, series or question id) has another digest, another permanent
// layer, and another ledger stream whose epsilon_inf adds up; gamma is read from the memo block
// and epsilon_inf recomputed for it in closed form.

import assert from "node:assert/strict";
import { test } from "node:test";

import { checkMemo, memoEpsilonInfinity } from "../../static/ldp/epsilon.js";
import { ledgerTotals, readLedger, recordSpends } from "../../static/ldp/ledger.js";
import {
  PINS_KEY,
  canonicalJson,
  forgetPins,
  memoizedDBitFlip,
  memoizedPrr,
  memoQuestionKey,
  pinDigest,
  pinStatus,
  specDigest,
} from "../../static/ldp/memo.js";
import { MemoryStorage, assertClose, forbidMathRandom } from "./seeded.mjs";

forbidMathRandom();

const NOW = new Date(2026, 10, 25, 9, 30);
const SECRET = Uint8Array.from({ length: 32 }, (_, i) => i);
const bit = (epsilon, d) => Math.exp(d === 1 ? epsilon : epsilon / 2) / (1 + Math.exp(d === 1 ? epsilon : epsilon / 2));
const dbitflip = (epsilon, d = 2, k = 5) => ({ mechanism: "dbitflip", k, d, epsilon, true_bit_probability: bit(epsilon, d), other_bit_probability: 1 - bit(epsilon, d) });
const MEMO = { series: "pulse", question: "q-mood", layers: "memoized-bits+flip", gamma: 0.1 };

test("the digest ignores key order and changes with epsilon, parameters, gamma, series and question", async () => {
  const spec = dbitflip(1);
  const digest = await specDigest(spec, MEMO);
  assert.match(digest, /^[0-9a-f]{64}$/);
  const reordered = Object.fromEntries(Object.entries(spec).reverse());
  assert.equal(await specDigest(reordered, { gamma: 0.1, layers: MEMO.layers, question: "q-mood", series: "pulse" }), digest);
  assert.equal(canonicalJson({ b: [1, { d: 2, c: 3 }], a: null }), '{"a":null,"b":[1,{"c":3,"d":2}]}');
  const changed = [
    await specDigest(dbitflip(2), MEMO),
    await specDigest({ ...spec, k: 6 }, MEMO),
    await specDigest(dbitflip(1, 1), MEMO),
    await specDigest(spec, { ...MEMO, gamma: 0.2 }),
    await specDigest(spec, { ...MEMO, series: "other" }),
    await specDigest(spec, { ...MEMO, question: "q-other" }),
  ];
  assert.equal(new Set([digest, ...changed]).size, 7);
});

test("a pin is new, then the same, and a changed spec is reported as changed; only the pins are stored", async () => {
  const storage = new MemoryStorage();
  const first = await specDigest(dbitflip(1), MEMO);
  const second = await specDigest(dbitflip(2), MEMO);
  assert.equal(pinStatus("pulse", "q-mood", first, storage), "new");
  pinDigest("pulse", "q-mood", first, storage);
  assert.equal(pinStatus("pulse", "q-mood", first, storage), "same");
  assert.equal(pinStatus("pulse", "q-mood", second, storage), "changed");
  assert.equal(pinStatus("pulse", "q-other", second, storage), "new");
  assert.equal(pinStatus("other", "q-mood", first, storage), "new");
  pinDigest("pulse", "q-mood", second, storage);
  // A server going back to the old parameters is no change: that stream was already counted.
  assert.equal(pinStatus("pulse", "q-mood", first, storage), "same");
  assert.deepEqual([...storage.items.keys()], [PINS_KEY]);
  assert.deepEqual(JSON.parse(storage.getItem(PINS_KEY)), { '["pulse","q-mood"]': [first, second] });
  storage.setItem(PINS_KEY, "{not json");
  assert.equal(pinStatus("pulse", "q-mood", first, storage), "new");
  forgetPins(storage);
  assert.equal(storage.getItem(PINS_KEY), null);
});

test("the permanent layer is keyed by the digest: other parameters give another permanent layer", async () => {
  const spec = { mechanism: "rappor", bits: 256, hash_count: 2, cohorts: 4, f: 0.5, p: 0.25, q: 0.75 };
  const first = memoQuestionKey("q-other", await specDigest(spec, { ...MEMO, layers: "memoized-prr+irr" }));
  const second = memoQuestionKey("q-other", await specDigest({ ...spec, f: 0.25 }, { ...MEMO, layers: "memoized-prr+irr" }));
  const again = await memoizedPrr(SECRET, "pulse", first, "서울", spec);
  assert.deepEqual(await memoizedPrr(SECRET, "pulse", first, "서울", spec), again);
  assert.notDeepEqual((await memoizedPrr(SECRET, "pulse", second, "서울", spec)).permanent, again.permanent);
  const wide = dbitflip(1, 8, 16);
  const a = await memoizedDBitFlip(SECRET, "pulse", memoQuestionKey("q-mood", "a".repeat(64)), 3, wide);
  const b = await memoizedDBitFlip(SECRET, "pulse", memoQuestionKey("q-mood", "b".repeat(64)), 3, wide);
  assert.notDeepEqual(a, b);
  assert.throws(() => memoQuestionKey("q-mood", "not a digest"), RangeError);
});

test("the ledger counts each (series, question, parameters) as its own stream, whose bounds add up", () => {
  const storage = new MemoryStorage();
  const [a, b] = ["a".repeat(64), "b".repeat(64)];
  const round = (number, epsilon, memo) => [{ survey: "pulse", series: "pulse", round: number, question: "q-mood", epsilon, memo }];
  for (let r = 1; r <= 5; r += 1) recordSpends(round(r, 0.8, { epsilon_infinity: 2, values: 2, digest: a }), storage, NOW);
  for (let r = 6; r <= 10; r += 1) recordSpends(round(r, 1.5, { epsilon_infinity: 3.5, values: 2, digest: b }), storage, NOW);
  const totals = ledgerTotals(readLedger(storage));
  assertClose(assert, totals.sequential, 5 * 0.8 + 5 * 1.5);
  // Stream a: min(4, 2 * 2) = 4; stream b: min(7.5, 2 * 3.5) = 7. One stream would have said min(11.5, 2 * 3.5) = 7.
  assertClose(assert, totals.memoized, 4 + 7);
  // The same parameters again count in their old stream: round 11 under a adds min(4.8, 4) - 4 = 0.
  recordSpends(round(11, 0.8, { epsilon_infinity: 2, values: 2, digest: a }), storage, NOW);
  assertClose(assert, ledgerTotals(readLedger(storage)).memoized, 4 + 7);
  assert.throws(() => recordSpends(round(12, 1, { epsilon_infinity: 2, values: 2, digest: "short" }), storage, NOW), RangeError);
});

for (const gamma of [0.05, 0.1, 0.2]) {
  test(`dBitFlip's epsilon_inf is recomputed for the memo block's gamma ${gamma}, in closed form`, () => {
    const spec = dbitflip(1.5);
    const memo = { ...MEMO, gamma };
    checkMemo(memo, spec);
    const p1 = (spec.true_bit_probability - gamma) / (1 - 2 * gamma);
    assert.ok(Math.abs(memoEpsilonInfinity(spec, memo) - 2 * Math.log(p1 / (1 - p1))) < 1e-12);
  });
}

test("a larger gamma gives a larger epsilon_inf for the same served spec", () => {
  const spec = dbitflip(1.5);
  assert.ok(memoEpsilonInfinity(spec, { ...MEMO, gamma: 0.2 }) > memoEpsilonInfinity(spec, { ...MEMO, gamma: 0.1 }));
});
