// Tests of static/ldp/memo.js against ldp/memo.py (tests/js/memo_tables.json, "rappor" and "memo").
//
// Determinism: for fixed secrets, RAPPOR's cohort and PRR, dBitFlip's buckets and bits and
// 1BitMean's alpha, grid point and bit equal Python's, bit for bit. Recurrence: two rounds with
// one secret and one true value share their permanent layer; another value changes it. Privacy,
// exactly: one round's report table (memoized layer on top of gamma flips) is enumerated and its
// worst log-ratio equals the round epsilon; every epsilon function equals Python's. As the answer
// page sets dBitFlip up (permanentDBitFlipSpec under the served spec), the tables of one round, of
// two rounds of one answer and of the memoized bits, enumerated over every bucket set, attain the
// served epsilon, dbitflipEpsilonAfterRounds(2) and the epsilon_inf the ledger records.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  SECRET_KEY,
  dbitflipEpsilonAfterRounds,
  dbitflipRound,
  dbitflipRoundEpsilon,
  forgetDeviceSecret,
  loadDeviceSecret,
  memoizedAlpha,
  memoizedDBitFlip,
  memoizedOneBit,
  memoizedPrr,
  memoStream,
  oneBitEpsilonAfterRounds,
  oneBitRound,
  oneBitRoundEpsilon,
  permanentDBitFlipSpec,
  permanentEpsilon,
  rapporRound,
  roundSpend,
} from "../../static/ldp/memo.js";
import { memoEpsilonInfinity } from "../../static/ldp/epsilon.js";
import { MemoryStorage, allBitVectors, assertClose, forbidMathRandom, seededSource, worstLogRatio } from "./seeded.mjs";
import { combinations } from "./tables.mjs";

const ALL = JSON.parse(readFileSync(new URL("./memo_tables.json", import.meta.url), "utf8"));
const MEMO = ALL.memo;
const ROUNDS = 1500;
forbidMathRandom();

const hex = (text) => Uint8Array.from(text.match(/../g), (pair) => parseInt(pair, 16));
const SECRET = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");

for (const [key, table] of Object.entries(ALL.rappor)) {
  test(`${key}: memoized cohort and PRR equal Python's for every secret and value`, async () => {
    for (const [secret, value, cohort, permanent] of table.memoized) {
      const memo = await memoizedPrr(hex(secret), "series-7", "q-3", value, table.spec);
      assert.equal(memo.cohort, cohort, `${secret} ${value}`);
      assert.deepEqual(memo.permanent, permanent, `${secret} ${value}`);
    }
  });
}

for (const [key, table] of Object.entries(MEMO.dbitflip)) {
  const spec = table.spec;

  test(`${key}: memoized buckets and bits equal Python's`, async () => {
    for (const [secret, value, buckets, bits] of table.memoized) {
      assert.deepEqual(await memoizedDBitFlip(hex(secret), "series-7", "q-3", value, spec), { buckets, bits });
    }
  });

  test(`${key}: round epsilon and epsilon after rounds equal Python's; the enumerated round table attains it`, () => {
    MEMO.gammas.forEach((gamma, g) => {
      assertClose(assert, dbitflipRoundEpsilon(spec, gamma), table.round_epsilon[g]);
      table.rounds_epsilon[g].forEach((e, r) => assertClose(assert, dbitflipEpsilonAfterRounds(spec, gamma, r + 1), e, 1e-12));
      if (spec.d > 8) return; // too many bit vectors to enumerate; the closed form was checked above
      // One round: buckets are uniform and independent of the answer, so enumerate the bits for one bucket set
      // that holds two answers (the worst case); each kept bit is then flipped with probability gamma.
      const buckets = Array.from({ length: spec.d }, (_, i) => i);
      const bitsTable = allBitVectors(spec.d);
      const rows = Array.from({ length: spec.k }, (_, value) =>
        bitsTable.map((bits) =>
          bits.reduce((product, bit, i) => {
            const kept = buckets[i] === value ? spec.true_bit_probability : spec.other_bit_probability;
            const one = (1 - gamma) * kept + gamma * (1 - kept);
            return product * (bit ? one : 1 - one);
          }, 1),
        ),
      );
      assertClose(assert, worstLogRatio(rows), dbitflipRoundEpsilon(spec, gamma), 1e-9);
    });
    assertClose(assert, permanentEpsilon(spec), spec.epsilon, 1e-9);
  });
}

/**
 * P(report | answer) of memoized dBitFlip over every bucket set and bit vector, the memoized bits
 * being 1 with p1 (the answer's bucket) or p0; perBit(one) is one bucket's distribution.
 */
function memoizedTable(spec, p1, p0, perBit) {
  const subsets = [...combinations([...Array(spec.k).keys()], spec.d)];
  const kron = (a, b) => a.flatMap((x) => b.map((y) => x * y));
  return Array.from({ length: spec.k }, (_, value) =>
    subsets.flatMap((subset) => subset.reduce((row, bucket) => kron(row, perBit(bucket === value ? p1 : p0)), [1 / subsets.length])),
  );
}

for (const [key, { spec }] of Object.entries(MEMO.dbitflip).filter(([, table]) => table.spec.d <= 8)) {
  test(`${key}: one round, two rounds of one answer and the memoized bits, enumerated, attain what the ledger states`, () => {
    for (const gamma of MEMO.gammas) {
      // As respond.js: the memoized bits under the served spec, flipped with gamma every round; the ledger
      // records roundSpend of them, the page checks memoEpsilonInfinity.
      const permanent = permanentDBitFlipSpec(spec, gamma);
      const stated = roundSpend(permanent, gamma);
      assertClose(assert, memoEpsilonInfinity(spec, { gamma }), stated.memo.epsilon_infinity, 1e-12);
      const flip = [
        [1 - gamma, gamma],
        [gamma, 1 - gamma],
      ]; // flip[b'][b] = P(sent b | memoized b')
      const layers = {
        memoized: (one) => [1 - one, one],
        "one round": (one) => [0, 1].map((b) => (1 - one) * flip[0][b] + one * flip[1][b]),
        "two rounds": (one) =>
          [0, 1].flatMap((b1) => [0, 1].map((b2) => (1 - one) * flip[0][b1] * flip[0][b2] + one * flip[1][b1] * flip[1][b2])),
      };
      const worst = Object.fromEntries(
        Object.entries(layers).map(([name, perBit]) => [
          name,
          worstLogRatio(memoizedTable(spec, permanent.true_bit_probability, permanent.other_bit_probability, perBit)),
        ]),
      );
      const one = worst["one round"];
      const two = worst["two rounds"];
      assertClose(assert, one, spec.epsilon, 1e-9, `gamma ${gamma}: one round`);
      assertClose(assert, one, stated.epsilon, 1e-9, `gamma ${gamma}: one round`);
      assertClose(assert, worst.memoized, stated.memo.epsilon_infinity, 1e-9, `gamma ${gamma}: memoized bits`);
      assertClose(assert, two, dbitflipEpsilonAfterRounds(permanent, gamma, 2), 1e-9, `gamma ${gamma}: two rounds`);
      if (gamma === 0) assertClose(assert, two, stated.memo.epsilon_infinity, 1e-9, "nothing hides the memoized bits");
      else assert.ok(one < two && two < Math.min(2 * one, stated.memo.epsilon_infinity), `gamma ${gamma}: ${one} < ${two}`);
    }
  });
}

test("1BitMean: alpha, grid point and memoized bit equal Python's; epsilons too; the round table attains them", async () => {
  const table = MEMO["1bitmean"];
  const spec = table.spec;
  for (const [secret, alpha] of table.alpha) assert.equal(await memoizedAlpha(hex(secret), "series-7", "q-3"), alpha);
  for (const [secret, value, point, bit] of table.memoized) {
    assert.deepEqual(await memoizedOneBit(hex(secret), "series-7", "q-3", value, spec), { point, bit }, `${secret} ${value}`);
  }
  table.gammas.forEach((gamma, g) => {
    assertClose(assert, oneBitRoundEpsilon(spec, gamma), table.round_epsilon[g]);
    table.rounds_epsilon[g].forEach((e, r) => assertClose(assert, oneBitEpsilonAfterRounds(spec, gamma, r + 1), e, 1e-12));
    const rows = Array.from({ length: spec.grid + 1 }, (_, k) => {
      const kept = (spec.base + k * spec.slope) / spec.denominator;
      const one = (1 - gamma) * kept + gamma * (1 - kept);
      return [1 - one, one];
    });
    assertClose(assert, worstLogRatio(rows), oneBitRoundEpsilon(spec, gamma), 1e-9);
  });
  assert.ok(permanentEpsilon(spec) <= spec.epsilon + 1e-12);
});

test("two rounds with one secret and one answer share the permanent layer; another answer changes it", async () => {
  const spec = ALL.rappor["seed-fig3"].spec;
  const first = await memoizedPrr(SECRET, "course-eval", "q-other", "좋은 강의", spec);
  const second = await memoizedPrr(SECRET, "course-eval", "q-other", "좋은 강의", spec);
  const changed = await memoizedPrr(SECRET, "course-eval", "q-other", "지루한 강의", spec);
  assert.deepEqual(second, first);
  assert.equal(changed.cohort, first.cohort); // the cohort belongs to the respondent, not the answer
  assert.notDeepEqual(changed.permanent, first.permanent);
  // With a transparent IRR (p = 0, q = 1) a round's report *is* the permanent layer: answers that
  // differ only in case, spacing or Unicode form give the same one.
  const open = { ...spec, p: 0, q: 1 };
  const a = await rapporRound(SECRET, "course-eval", "q-other", "  좋은   강의 ", open, seededSource(1));
  const b = await rapporRound(SECRET, "course-eval", "q-other", "좋은 강의".normalize("NFD"), open, seededSource(2));
  assert.deepEqual(a, b);
  assert.deepEqual(a.bits, (await memoizedPrr(SECRET, "course-eval", "q-other", "좋은 강의", open)).permanent);
  // Another series or question is keyed apart.
  assert.notDeepEqual((await memoizedPrr(SECRET, "other-series", "q-other", "좋은 강의", spec)).permanent, first.permanent);
});

test("dBitFlip and 1BitMean rounds keep their memoized bits when gamma = 0 and flip them otherwise", async () => {
  const spec = MEMO.dbitflip["4bitflip"].spec;
  const kept = await memoizedDBitFlip(SECRET, "pulse", "q1", 2, spec);
  assert.deepEqual(await dbitflipRound(SECRET, "pulse", "q1", 2, spec, 0, seededSource(3)), kept);
  let flips = 0;
  const random = seededSource(4);
  for (let i = 0; i < ROUNDS; i += 1) {
    const round = await dbitflipRound(SECRET, "pulse", "q1", 2, spec, 0.25, random);
    assert.deepEqual(round.buckets, kept.buckets);
    flips += round.bits.filter((bit, j) => bit !== kept.bits[j]).length;
  }
  const share = flips / (ROUNDS * spec.d);
  assert.ok(Math.abs(share - 0.25) < 4 * Math.sqrt((0.25 * 0.75) / (ROUNDS * spec.d)), `flip share ${share}`);
  const oneBit = MEMO["1bitmean"].spec;
  const { bit } = await memoizedOneBit(SECRET, "pulse", "q2", 6.2, oneBit);
  assert.deepEqual(await oneBitRound(SECRET, "pulse", "q2", 6.2, oneBit, 0, seededSource(5)), { index: bit });
});

test("the device secret is created once, kept in storage and deletable", () => {
  const storage = new MemoryStorage();
  const secret = loadDeviceSecret(storage);
  assert.equal(secret.length, 32);
  assert.match(storage.getItem(SECRET_KEY), /^[0-9a-f]{64}$/);
  assert.deepEqual(loadDeviceSecret(storage), secret);
  forgetDeviceSecret(storage);
  assert.equal(storage.getItem(SECRET_KEY), null);
  assert.notDeepEqual(loadDeviceSecret(storage), secret);
});

test("a memo stream refuses short secrets and runs out loudly after its 128 words", async () => {
  await assert.rejects(() => memoStream(new Uint8Array(8), "x", "s", "q"), TypeError);
  const stream = await memoStream(SECRET, "x", "s", "q");
  stream(new Uint32Array(128));
  assert.throws(() => stream(new Uint32Array(1)), /ran out/);
});

test("roundSpend gives the ledger each memoized mechanism's round epsilon, epsilon_inf and number of permanent responses", () => {
  const rappor = ALL.rappor["seed-fig3"];
  const text = roundSpend(rappor.spec);
  assertClose(assert, text.epsilon, rappor.epsilon_one);
  assertClose(assert, text.memo.epsilon_infinity, rappor.epsilon_infinity);
  assert.equal(text.memo.values, null);
  const flip = MEMO.dbitflip["4bitflip"];
  const spend = roundSpend(flip.spec, MEMO.gammas[1]);
  assertClose(assert, spend.epsilon, flip.round_epsilon[1]);
  assert.equal(spend.memo.values, 5);
  const oneBit = MEMO["1bitmean"];
  const mean = roundSpend(oneBit.spec, oneBit.gammas[2]);
  assertClose(assert, mean.epsilon, oneBit.round_epsilon[2]);
  assert.equal(mean.memo.values, oneBit.spec.grid + 1);
  assert.throws(() => roundSpend({ mechanism: "krr" }), RangeError);
});
