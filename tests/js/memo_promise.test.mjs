// The answer page's check of a recurring survey's memoized questions (static/ldp/epsilon.js), RAPPOR, dBitFlip and 1BitMean:
// a memo block must be well formed and name a mechanism with a memoized form, and the page's
// promised epsilon_inf must hold for the parameters received, recomputed exactly.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { MEMO_LAYERS, checkMemo, checkPromises, memoEpsilonInfinity, specPrivacy } from "../../static/ldp/epsilon.js";
import { dbitflipRoundEpsilon, oneBitRoundEpsilon, permanentDBitFlipSpec, permanentOneBitSpec } from "../../static/ldp/memo.js";
import { SpecError } from "../../static/ldp/spec.js";
import { refusalReason } from "../../static/surveys/promise.js";

// Seed 004, Fig. 3: epsilon_1 = 4 ln(5/3), epsilon_inf = 4 ln 3.
const SPEC = { mechanism: "rappor", bits: 32, hash_count: 2, cohorts: 64, f: 0.5, p: 0.25, q: 0.75 };
const MEMO = { series: "series-key", question: "17", layers: "memoized-prr+irr" };
const ONE = 4 * Math.log(5 / 3);
const INFINITY = 4 * Math.log(3);

const promiseOf = (questions) => ({ total: 10, cap: null, questions });

test("epsilon_inf of the seed's parameters is 4 ln 3", () => {
  assert.ok(Math.abs(memoEpsilonInfinity(SPEC) - INFINITY) < 1e-12);
});

test("epsilon_inf is the worst log ratio of the permanent layer, enumerated", () => {
  // bits = 4, h = 1: two values whose Bloom filters differ in two bits; every B' enumerated.
  const spec = { ...SPEC, bits: 4, hash_count: 1, f: 0.3 };
  const blooms = [
    [1, 0, 0, 0],
    [0, 1, 0, 0],
  ];
  const probability = (output, bloom) =>
    output.reduce((product, bit, i) => {
      const one = bloom[i] ? 1 - spec.f / 2 : spec.f / 2;
      return product * (bit ? one : 1 - one);
    }, 1);
  let worst = 0;
  for (let word = 0; word < 16; word += 1) {
    const output = [0, 1, 2, 3].map((i) => (word >> i) & 1);
    worst = Math.max(worst, Math.abs(Math.log(probability(output, blooms[0]) / probability(output, blooms[1]))));
  }
  assert.ok(Math.abs(memoEpsilonInfinity(spec) - worst) < 1e-12, `${memoEpsilonInfinity(spec)} != ${worst}`);
});

test("a memoized question that keeps both promises passes", () => {
  const problems = checkPromises(
    [{ question: 1, spec: SPEC, memo: MEMO }],
    promiseOf({ 1: { epsilon: ONE, epsilon_infinity: INFINITY } }),
  );
  assert.deepEqual(problems, []);
});

test("a promised epsilon_inf below the parameters' is refused", () => {
  const problems = checkPromises(
    [{ question: 1, spec: SPEC, memo: MEMO }],
    promiseOf({ 1: { epsilon: ONE, epsilon_infinity: INFINITY / 2 } }),
  );
  assert.equal(problems.length, 1);
  assert.equal(problems[0].reason, "epsilon_infinity");
  assert.ok(Math.abs(problems[0].found - INFINITY) < 1e-12);
  const sentence = refusalReason([{ question: 1, spec: SPEC, memo: MEMO }], promiseOf({ 1: { epsilon: ONE, epsilon_infinity: 1 } }), () => 1);
  assert.match(sentence, /over all rounds/);
});

test("a memoized question without a promised epsilon_inf is refused", () => {
  const problems = checkPromises([{ question: 1, spec: SPEC, memo: MEMO }], promiseOf({ 1: { epsilon: ONE } }));
  assert.deepEqual(
    problems.map((p) => p.reason),
    ["epsilon_infinity"],
  );
});

test("a promised epsilon_inf for a question sent without memoization is refused", () => {
  const problems = checkPromises([{ question: 1, spec: SPEC }], promiseOf({ 1: { epsilon: ONE, epsilon_infinity: INFINITY } }));
  assert.deepEqual(
    problems.map((p) => p.reason),
    ["unmemoized"],
  );
});

const MALFORMED = {
  "not an object": "memo",
  "an extra field": { ...MEMO, secret: "x" },
  "an empty series": { ...MEMO, series: "" },
  "a numeric question id": { ...MEMO, question: 17 },
  "a long series id": { ...MEMO, series: "x".repeat(65) },
  "other layers": { ...MEMO, layers: "irr" },
};

for (const [name, memo] of Object.entries(MALFORMED)) {
  test(`a memo block with ${name} is malformed`, () => {
    assert.throws(() => checkMemo(memo, SPEC), SpecError);
    const problems = checkPromises([{ question: 1, spec: SPEC, memo }], promiseOf({ 1: { epsilon: ONE, epsilon_infinity: INFINITY } }));
    assert.deepEqual(
      problems.map((p) => p.reason),
      ["malformed"],
    );
  });
}

test("a memo block on a mechanism without a memoized form is malformed", () => {
  const krr = { mechanism: "krr", k: 2, epsilon: 1, keep_probability: Math.E / (1 + Math.E) };
  assert.throws(() => checkMemo({ ...MEMO, layers: "memoized-prr+irr" }, krr), SpecError);
  assert.deepEqual(Object.keys(MEMO_LAYERS), ["rappor", "dbitflip", "1bitmean"]);
});

// -- dBitFlip: the served spec is the round's mechanism; the memo block's gamma gives the permanent bits.

/** dBitFlip's spec at epsilon (ldp.mechanisms.bitflip.DBitFlip.client_spec). */
function dbitflip(epsilon, d, k = 5) {
  const bit = d === 1 ? epsilon : epsilon / 2;
  const p1 = Math.exp(bit) / (1 + Math.exp(bit));
  return { mechanism: "dbitflip", k, d, epsilon, true_bit_probability: p1, other_bit_probability: 1 - p1 };
}
const FLIP = { series: "series-key", question: "4", layers: "memoized-bits+flip", gamma: 0.1 };

for (const [epsilon, d] of [
  [1, 4],
  [0.5, 2],
  [2, 1],
  [3.5, 3],
]) {
  test(`dBitFlip eps=${epsilon} d=${d}: permanent bits flipped with gamma are the spec's, and epsilon_inf is theirs, enumerated`, () => {
    const spec = dbitflip(epsilon, d);
    const permanent = permanentDBitFlipSpec(spec, FLIP.gamma);
    const flipped = (p) => (1 - FLIP.gamma) * p + FLIP.gamma * (1 - p);
    assert.ok(Math.abs(flipped(permanent.true_bit_probability) - spec.true_bit_probability) < 1e-15);
    assert.ok(Math.abs(flipped(permanent.other_bit_probability) - spec.other_bit_probability) < 1e-15);
    assert.ok(Math.abs(dbitflipRoundEpsilon(permanent, FLIP.gamma) - specPrivacy(spec).epsilon) < 1e-12);
    // Enumerated: answers 0 and 1 with both buckets sampled (d >= 2), every pair of permanent bits.
    const p1 = permanent.true_bit_probability;
    const p0 = permanent.other_bit_probability;
    let worst = 0;
    for (const bits of [
      [0, 0],
      [0, 1],
      [1, 0],
      [1, 1],
    ]) {
      const under = (answer) =>
        bits.reduce((product, bit, bucket) => {
          const one = bucket === answer ? p1 : p0;
          return product * (bit ? one : 1 - one);
        }, 1);
      const shown = d === 1 ? [bits[0]] : bits; // d = 1 reports one bucket: bucket 0 only
      const ratio =
        d === 1 ? Math.log((shown[0] ? p1 : 1 - p1) / (shown[0] ? p0 : 1 - p0)) : Math.log(under(0) / under(1));
      worst = Math.max(worst, Math.abs(ratio));
    }
    assert.ok(Math.abs(memoEpsilonInfinity(spec, FLIP) - worst) < 1e-12, `${memoEpsilonInfinity(spec, FLIP)} != ${worst}`);
    assert.ok(memoEpsilonInfinity(spec, FLIP) > specPrivacy(spec).epsilon);
    const problems = checkPromises(
      [{ question: 4, spec, memo: FLIP }],
      promiseOf({ 4: { epsilon, epsilon_infinity: memoEpsilonInfinity(spec, FLIP) } }),
    );
    assert.deepEqual(problems, []);
  });
}

const BAD_FLIPS = {
  "no gamma": { series: "s", question: "4", layers: "memoized-bits+flip" },
  "a gamma of one half": { ...FLIP, gamma: 0.5 },
  "a string gamma": { ...FLIP, gamma: "0.1" },
  "a gamma too large for the bits": { ...FLIP, gamma: 0.3 },
  "RAPPOR's layers": { ...FLIP, layers: "memoized-prr+irr" },
};

for (const [name, memo] of Object.entries(BAD_FLIPS)) {
  test(`a dBitFlip memo block with ${name} is malformed`, () => {
    const spec = dbitflip(3.5, 2); // p1' = 0.852: a flip of 0.3 cannot give it back
    assert.throws(() => checkMemo(memo, spec), SpecError);
  });
}

test("a promised dBitFlip epsilon_inf below the permanent bits' is refused", () => {
  const spec = dbitflip(1, 2);
  const problems = checkPromises([{ question: 4, spec, memo: FLIP }], promiseOf({ 4: { epsilon: 1, epsilon_infinity: 1 } }));
  assert.deepEqual(
    problems.map((p) => p.reason),
    ["epsilon_infinity"],
  );
});

// -- 1BitMean: the flip of 1/4 keeps the memoized bit's weights integers (D' = 2D, A' = 4A - D, m' = 4m).

const ONE_BIT = JSON.parse(readFileSync(new URL("./privacy_table.json", import.meta.url), "utf8"))["num-1bitmean"].spec;
const QUARTER = { series: "series-key", question: "9", layers: "memoized-bit+flip", gamma: 0.25 };

test("1BitMean: the memoized bit flipped with 1/4 is the served bit at every grid point, exactly", () => {
  const permanent = permanentOneBitSpec(ONE_BIT, 0.25);
  const [D, A, m] = [ONE_BIT.denominator, ONE_BIT.base, ONE_BIT.slope].map(BigInt);
  const [D2, A2, m2] = [permanent.denominator, permanent.base, permanent.slope].map(BigInt);
  for (let k = 0n; k <= BigInt(ONE_BIT.grid); k += 1n) {
    // 4 D' P(1 after the flip) = 3 (A' + k m') + (D' - A' - k m'), against 4 D' (A + k m) / D.
    assert.equal(3n * (A2 + k * m2) + (D2 - A2 - k * m2), (4n * D2 * (A + k * m)) / D);
    assert.equal((4n * D2 * (A + k * m)) % D, 0n);
  }
  assert.ok(Math.abs(oneBitRoundEpsilon(permanent, 0.25) - specPrivacy(ONE_BIT).epsilon) < 1e-12);
  const bound = memoEpsilonInfinity(ONE_BIT, QUARTER);
  assert.ok(Math.abs(bound - Math.log((permanent.denominator - permanent.base) / permanent.base)) < 1e-15);
  assert.ok(bound > specPrivacy(ONE_BIT).epsilon);
  assert.deepEqual(checkPromises([{ question: 9, spec: ONE_BIT, memo: QUARTER }], promiseOf({ 9: { epsilon: 1, epsilon_infinity: bound } })), []);
});

test("a 1BitMean memo block with another flip, or on a spec above ln 3, is malformed", () => {
  assert.throws(() => checkMemo({ ...QUARTER, gamma: 0.1 }, ONE_BIT), SpecError);
  // A 1BitMean at epsilon ln 4 > ln 3: base = D / 5, and 4 base < D.
  const sharp = { ...ONE_BIT, epsilon: Math.log(4), denominator: 1000, base: 200, slope: 60 };
  assert.throws(() => checkMemo(QUARTER, sharp), SpecError);
});
