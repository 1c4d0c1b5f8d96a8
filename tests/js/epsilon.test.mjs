// Tests of the browser's privacy recomputation (static/ldp/epsilon.js).
//
// For every spec of tests/js/privacy_table.json (made by tests/js/make_specs.py), the epsilon
// (and the Gaussian's delta) recomputed from the spec's parameters must equal what ldp states,
// to a relative 1e-9. For tampered parameters, where ldp has no value to compare with, the
// recomputed epsilon must equal the worst log ratio of the report distribution enumerated from
// the spec (tests/js/tables.mjs), so the formulas hold for any valid parameters, not just ldp's.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { TOLERANCE, checkPromises, specPrivacy } from "../../static/ldp/epsilon.js";
import { SpecError } from "../../static/ldp/spec.js";
import { reportTable, seededSource, worstLogRatio } from "./tables.mjs";

const PRIVACY = JSON.parse(readFileSync(new URL("./privacy_table.json", import.meta.url), "utf8"));
const clone = (value) => JSON.parse(JSON.stringify(value));

function assertClose(found, expected, label, tolerance = 1e-9) {
  assert.ok(Math.abs(found - expected) <= tolerance * Math.max(Math.abs(expected), 1e-12), `${label}: ${found} != ${expected}`);
}

for (const [key, row] of Object.entries(PRIVACY)) {
  test(`${key}: the recomputed privacy equals ldp's`, () => {
    const privacy = specPrivacy(clone(row.spec));
    assertClose(privacy.epsilon, row.epsilon, `${key} epsilon`);
    if (row.delta === 0) assert.equal(privacy.delta, 0);
    else assertClose(privacy.delta, row.delta, `${key} delta`, 1e-6);
  });

  test(`${key}: the spec's own epsilon field is not what is reported`, () => {
    const spec = clone(row.spec);
    const numeric = !("k" in spec);
    // A lower stated epsilon: categorical specs ignore it; numeric specs are refused (their
    // integers exceed it), except the Gaussian, whose delta at the lower epsilon grows.
    spec.epsilon = Math.max(0.01, row.epsilon / 2);
    if (!numeric) assertClose(specPrivacy(spec).epsilon, row.epsilon, key);
    else if (spec.mechanism !== "gaussian" && row.epsilon / 2 >= 0.01) assert.throws(() => specPrivacy(spec), SpecError);
  });
}

// -- the formulas against enumeration, for parameters ldp would never derive ---------------

/** A probability in [0.02, 0.98] from the seeded source. */
function randomProbability(random) {
  const word = random(new Uint32Array(1))[0];
  return 0.02 + (0.96 * word) / 2 ** 32;
}

const TAMPERABLE = {
  "krr-k5": ["keep_probability"],
  "krr-k2": ["keep_probability"],
  "focus-k5-m2": ["keep_probability"],
  "cms-tiny": ["keep_probability"],
  "hcms-tiny": ["keep_probability"],
  "4bitflip": ["true_bit_probability", "other_bit_probability"],
  "1bitflip": ["true_bit_probability", "other_bit_probability"],
  "2bitflip": ["true_bit_probability", "other_bit_probability"],
  "1bitflip-k2": ["true_bit_probability", "other_bit_probability"],
  sue: ["true_bit_probability", "other_bit_probability"],
  oue: ["true_bit_probability", "other_bit_probability"],
  "olh-tiny": ["keep_probability"],
  subset: ["in_probability"],
  "subset-k6": ["in_probability"],
  "subset-k2": ["in_probability"],
  hadamard: ["in_probability"],
  "hadamard-k4": ["in_probability"],
};

for (const [key, fields] of Object.entries(TAMPERABLE)) {
  test(`${key}: with 20 random probabilities the recomputed epsilon is the enumerated worst ratio`, () => {
    const random = seededSource(16);
    for (let trial = 0; trial < 20; trial += 1) {
      const spec = clone(PRIVACY[key].spec);
      for (const field of fields) spec[field] = randomProbability(random);
      const enumerated = worstLogRatio(reportTable(spec));
      assertClose(specPrivacy(spec).epsilon, enumerated, `${key} trial ${trial} ${JSON.stringify(fields.map((f) => spec[f]))}`);
    }
  });
}

test("CMS and HCMS whose hash functions separate no options have epsilon 0", () => {
  for (const key of ["cms-tiny", "hcms-tiny"]) {
    const spec = clone(PRIVACY[key].spec);
    spec.hashes = spec.hashes.map((row) => row.map(() => row[0]));
    assert.equal(specPrivacy(spec).epsilon, 0);
    assert.equal(worstLogRatio(reportTable(spec)), 0);
  }
});

test("numeric specs: a weaker integer table than the stated epsilon is refused", () => {
  const piecewise = clone(PRIVACY["num-piecewise"].spec);
  piecewise.high *= 2;
  assert.throws(() => specPrivacy(piecewise), (error) => error instanceof SpecError && error.field === "high");
  const laplace = clone(PRIVACY["num-laplace"].spec);
  laplace.noise_weights[laplace.grid] = Math.max(1, Math.floor(laplace.noise_weights[laplace.grid] / 4));
  assert.throws(() => specPrivacy(laplace), SpecError);
});

test("numeric specs: a stronger table than stated gives its own, smaller epsilon", () => {
  const spec = clone(PRIVACY["num-piecewise"].spec);
  spec.high = spec.low; // uniform reports: epsilon 0
  assert.equal(specPrivacy(spec).epsilon, 0);
});

test("a malformed spec of either kind throws a SpecError", () => {
  for (const spec of [null, {}, { mechanism: "krr" }, { mechanism: "laplace" }, { ...PRIVACY["krr-k5"].spec, keep_probability: 1 }]) {
    assert.throws(() => specPrivacy(spec), SpecError);
  }
});

// -- checking the page's promise ---------------------------------------------------------------

const KRR = PRIVACY["krr-k5"];
const OUE = PRIVACY["oue"];
const GAUSSIAN = PRIVACY["num-gaussian"];

function promiseFor(rows, extra = {}) {
  const questions = Object.fromEntries(rows.map((row, i) => [String(i + 1), { epsilon: row.epsilon, delta: row.delta }]));
  return { total: rows.reduce((sum, row) => sum + row.epsilon, 0), cap: null, questions, ...extra };
}
const entriesFor = (rows) => rows.map((row, i) => ({ question: i + 1, spec: clone(row.spec) }));

test("specs that keep the page's promise give no problem", () => {
  assert.deepEqual(checkPromises(entriesFor([KRR, OUE, GAUSSIAN]), promiseFor([KRR, OUE, GAUSSIAN])), []);
});

test("a promise smaller than the spec's epsilon by more than the tolerance is a problem", () => {
  const promise = promiseFor([KRR]);
  promise.questions["1"].epsilon = KRR.epsilon * (1 - 10 * TOLERANCE);
  promise.total = 10;
  const problems = checkPromises(entriesFor([KRR]), promise);
  assert.deepEqual(
    problems.map((p) => [p.reason, p.question]),
    [["epsilon", 1]],
  );
  promise.questions["1"].epsilon = KRR.epsilon * (1 - TOLERANCE / 10);
  assert.deepEqual(checkPromises(entriesFor([KRR]), promise), []);
});

test("a weakened spec under the same promise is caught", () => {
  const entries = entriesFor([KRR, OUE]);
  entries[0].spec.keep_probability = 0.9; // the server's word still says epsilon = 1
  entries[1].spec.other_bit_probability = 0.05;
  const problems = checkPromises(entries, promiseFor([KRR, OUE]));
  assert.deepEqual(
    problems.map((p) => [p.reason, p.question ?? null]),
    [
      ["epsilon", 1],
      ["epsilon", 2],
      ["total", null],
    ],
  );
  assert.ok(problems[0].found > problems[0].promised);
});

test("the survey's total and its cap bound the sum of the recomputed budgets", () => {
  const rows = [KRR, OUE];
  const total = promiseFor(rows).total;
  assert.deepEqual(
    checkPromises(entriesFor(rows), promiseFor(rows, { total: total * 0.99 })).map((p) => p.reason),
    ["total"],
  );
  assert.deepEqual(
    checkPromises(entriesFor(rows), promiseFor(rows, { cap: total / 2 })).map((p) => p.reason),
    ["cap"],
  );
  assert.deepEqual(checkPromises(entriesFor(rows), promiseFor(rows, { cap: total })), []);
});

test("a malformed spec and a question without a promise are problems", () => {
  const entries = entriesFor([KRR, OUE]);
  delete entries[1].spec.true_bit_probability;
  const problems = checkPromises(entries, promiseFor([KRR, OUE]));
  assert.deepEqual(
    problems.map((p) => [p.reason, p.question]),
    [["malformed", 2]],
  );
  assert.match(problems[0].detail, /true_bit_probability/);
  const unpromised = promiseFor([KRR]);
  unpromised.total = 10;
  assert.deepEqual(
    checkPromises(entriesFor([KRR, KRR]), unpromised).map((p) => [p.reason, p.question]),
    [["unpromised", 2]],
  );
});

test("the Gaussian's delta must not exceed the promised delta (none promised: 0)", () => {
  const promise = promiseFor([GAUSSIAN]);
  promise.questions["1"].delta = GAUSSIAN.delta / 2;
  assert.deepEqual(
    checkPromises(entriesFor([GAUSSIAN]), promise).map((p) => p.reason),
    ["delta"],
  );
  delete promise.questions["1"].delta;
  assert.deepEqual(
    checkPromises(entriesFor([GAUSSIAN]), promise).map((p) => p.reason),
    ["delta"],
  );
});

test("multi-select specs: the answer page recomputes their epsilon and refuses one weakened past its promise", () => {
  const { specs } = JSON.parse(readFileSync(new URL("./multiselect_specs.json", import.meta.url), "utf8"));
  const sets = Object.entries(specs).filter(([name]) => !name.startsWith("pair-"));
  assert.ok(sets.length >= 4);
  for (const [key, spec] of sets) {
    assertClose(specPrivacy(clone(spec)).epsilon, spec.epsilon, key);
    const promise = { total: spec.epsilon, questions: { 1: { epsilon: spec.epsilon } } };
    assert.deepEqual(checkPromises([{ question: 1, spec: clone(spec) }], promise), [], key);
  }
  const [, unary] = sets.find(([name]) => name.startsWith("set-sue"));
  const weakened = { ...clone(unary), true_bit_probability: 0.95, other_bit_probability: 0.05 };
  const promise = { total: unary.epsilon, questions: { 1: { epsilon: unary.epsilon } } };
  assert.deepEqual(
    checkPromises([{ question: 1, spec: weakened }], promise).map((p) => p.reason),
    ["epsilon", "total"],
  );
  const [, padded] = sets.find(([name]) => name.startsWith("padding-krr"));
  const malformed = { ...clone(padded), oracle: { ...padded.oracle, k: 3 } };
  assert.throws(() => specPrivacy(malformed), SpecError);
  assert.deepEqual(checkPromises([{ question: 1, spec: malformed }], promise).map((p) => p.reason), ["malformed"]);
});
