// The answer page's check of a recurring survey's memoized questions (static/ldp/epsilon.js):
// a memo block must be well formed and name a mechanism with a memoized form, and the page's
// promised epsilon_inf must hold for the parameters received, recomputed exactly.

import assert from "node:assert/strict";
import { test } from "node:test";

import { MEMO_LAYERS, checkMemo, checkPromises, memoEpsilonInfinity } from "../../static/ldp/epsilon.js";
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
  assert.deepEqual(Object.keys(MEMO_LAYERS), ["rappor"]);
});
