// Tests of static/ldp/pairs.js: a declared pair is randomized as one answer first * k2 + second
// of k1 * k2 options, with the pair mechanism's spec from ldp.crosstab (multiselect_specs.json,
// keys "pair-*"). The k-RR pair's report table, derived from the spec over all k1 * k2 joint
// answers, and the OUE pair's, enumerated from randomizePair itself over every report, equal
// Python's and their worst ratio is exactly e^epsilon: one epsilon covers both answers.
// Sampling: seeded draws within 4 standard errors of the spec's probabilities.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { encodePair, randomizePair } from "../../static/ldp/pairs.js";
import { replayedDistribution, uniformDraw, unitDraw, worstLogRatio } from "./seeded.mjs";

const { specs: SPECS, tables: TABLES } = JSON.parse(
  readFileSync(new URL("./multiselect_specs.json", import.meta.url), "utf8"),
);
const DRAWS = 40_000;

Math.random = () => {
  throw new Error("Math.random called");
};

/** A deterministic RandomSource (splitmix32 words). */
function seededSource(seed) {
  let s = seed >>> 0;
  return (words) => {
    for (let i = 0; i < words.length; i += 1) {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      words[i] = (z ^ (z >>> 16)) >>> 0;
    }
    return words;
  };
}

test("encodePair matches ldp.crosstab.encode_pair and checks both answers", () => {
  assert.equal(encodePair(0, 3, 3, 4), 3);
  assert.equal(encodePair(2, 1, 3, 4), 9);
  assert.throws(() => encodePair(3, 0, 3, 4), /first answer/);
  assert.throws(() => encodePair(0, 4, 3, 4), /second answer/);
  assert.throws(() => encodePair(0, 1.5, 3, 4), /second answer/);
});

test("pair-krr-3x4: the joint report table equals Python's and spends exactly epsilon once", () => {
  const spec = SPECS["pair-krr-3x4"];
  const [k1, k2] = spec.pair;
  const other = (1 - spec.keep_probability) / (spec.k - 1);
  const table = [];
  for (let first = 0; first < k1; first += 1) {
    for (let second = 0; second < k2; second += 1) {
      const v = encodePair(first, second, k1, k2);
      table.push(Array.from({ length: spec.k }, (_, y) => (y === v ? spec.keep_probability : other)));
    }
  }
  table.forEach((row, i) => row.forEach((p, y) => assert.ok(Math.abs(p - TABLES["pair-krr-3x4"][i][y]) <= 1e-12)));
  const worst = worstLogRatio(table);
  assert.ok(Math.abs(worst - spec.epsilon) <= 1e-9 * spec.epsilon);
});

test("pair-krr-3x4: reports follow k-RR around the encoded pair", () => {
  const spec = SPECS["pair-krr-3x4"];
  const random = seededSource(9);
  const counts = new Array(spec.k).fill(0);
  for (let i = 0; i < DRAWS; i += 1) counts[randomizePair(spec, 3, 4, 2, 1, random).value] += 1;
  counts.forEach((count, y) => {
    const p = y === 9 ? spec.keep_probability : (1 - spec.keep_probability) / (spec.k - 1);
    const se = Math.sqrt((p * (1 - p)) / DRAWS);
    assert.ok(Math.abs(count / DRAWS - p) <= 4 * se, `report ${y}`);
  });
});

test("pair-oue-2x3: randomizePair's own report table equals Python's and spends exactly epsilon once", () => {
  const spec = SPECS["pair-oue-2x3"];
  const [k1, k2] = spec.pair;
  // OUE's draws: k shuffle words (d = k: every bucket is kept whatever they are), then one uniform
  // number per bit, compared with p or q: three intervals each. Columns in Python's order
  // (itertools.product: bucket 0 is the high bit).
  const p = spec.true_bit_probability;
  const q = spec.other_bit_probability;
  const draws = [...new Array(spec.d).fill(uniformDraw(1)), ...new Array(spec.k).fill(unitDraw([q, p]))];
  const column = (report) => {
    assert.deepEqual(report.buckets, [...Array(spec.k).keys()]);
    return report.bits.reduce((code, bit) => 2 * code + bit, 0);
  };
  const table = [];
  for (let first = 0; first < k1; first += 1) {
    for (let second = 0; second < k2; second += 1) {
      const randomizeWith = (random) => randomizePair(spec, k1, k2, first, second, random);
      const distribution = replayedDistribution(draws, randomizeWith, column);
      table.push(Array.from({ length: 2 ** spec.k }, (_, y) => distribution.get(y) ?? 0));
    }
  }
  table.forEach((row, i) => row.forEach((x, y) => assert.ok(Math.abs(x - TABLES["pair-oue-2x3"][i][y]) <= 1e-12, `[${i}][${y}]`)));
  const worst = worstLogRatio(table);
  assert.ok(Math.abs(worst - spec.epsilon) <= 1e-9 * spec.epsilon, `worst log ratio ${worst} != ${spec.epsilon}`);
});

test("pair-oue-2x3: the encoded pair's bit is the one sent with the true-bit probability", () => {
  const spec = SPECS["pair-oue-2x3"];
  const random = seededSource(4);
  const ones = new Array(spec.k).fill(0);
  for (let i = 0; i < DRAWS; i += 1) {
    const { buckets, bits } = randomizePair(spec, 2, 3, 1, 2, random);
    buckets.forEach((bucket, j) => (ones[bucket] += bits[j]));
  }
  ones.forEach((count, bucket) => {
    const p = bucket === 5 ? spec.true_bit_probability : spec.other_bit_probability;
    assert.ok(Math.abs(count / DRAWS - p) <= 4 * Math.sqrt((p * (1 - p)) / DRAWS), `bucket ${bucket}`);
  });
  assert.throws(() => randomizePair(spec, 3, 3, 0, 0, random), /needs a spec over 9/);
});
