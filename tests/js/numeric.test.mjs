// Tests of static/ldp/numeric.js against the numeric client specs ldp makes (tests/js/specs.json,
// keys "num-*") and Python's exact report tables (tests/js/numeric_tables.json).
//
// Distribution: the table the JavaScript derives from a spec equals Python's (relative 1e-12).
// Privacy: that table's worst likelihood ratio over grid points is <= e^epsilon (and within
// 1e-9 of it), and for the Gaussian its delta at epsilon is <= the spec's delta. Sampling:
// DRAWS reports from a seeded source for one value; every index's count lies within 5 standard
// errors of the probability the spec implies (rounding mixes two grid rows).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  checkNumericSpec,
  outputSize,
  randomizeNumeric,
  reportTable,
  roundToGrid,
  uniformInteger,
} from "../../static/ldp/numeric.js";
import { seededSource } from "./tables.mjs";

const SPECS = JSON.parse(readFileSync(new URL("./specs.json", import.meta.url), "utf8"));
const TABLES = JSON.parse(readFileSync(new URL("./numeric_tables.json", import.meta.url), "utf8"));
const NUMERIC = Object.keys(SPECS).filter((key) => key.startsWith("num-"));
const DRAWS = 60_000;

Math.random = () => {
  throw new Error("Math.random called");
};

function scriptedSource(words) {
  let i = 0;
  return (out) => {
    for (let j = 0; j < out.length; j += 1) out[j] = words[i++];
    return out;
  };
}

/** max over reports possible from some grid point of ln(max_k P / min_k P); Infinity if a row lacks it. */
function worstLogRatio(table) {
  let worst = 0;
  for (let y = 0; y < table[0].length; y += 1) {
    const column = table.map((row) => row[y]);
    const high = Math.max(...column);
    if (high === 0) continue;
    worst = Math.max(worst, Math.log(high) - Math.log(Math.min(...column)));
  }
  return worst;
}

function hockeyStick(p, q, epsilon) {
  return p.reduce((sum, value, y) => sum + Math.max(0, value - Math.exp(epsilon) * q[y]), 0);
}

test("uniformInteger covers bounds above 2^32 by rejecting the top of the 53-bit range", () => {
  // bound 3 * 2^51: 2^53 mod bound = 2^51, so words making a value >= 2^53 - 2^51 are rejected.
  const bound = 3 * 2 ** 51;
  const top = [0xffffffff, 0xffffffff]; // 2^53 - 1: rejected
  const value = [0x00000800, 5]; // (0x800 >>> 11) * 2^32 + 5 = 2^32 + 5
  assert.equal(uniformInteger(bound, scriptedSource([...top, ...value])), 2 ** 32 + 5);
  assert.throws(() => uniformInteger(2 ** 53 + 2, scriptedSource([])), RangeError);
  const random = seededSource(3);
  const big = 2 ** 40 + 7;
  let below = 0;
  for (let i = 0; i < 20_000; i += 1) if (uniformInteger(big, random) < big / 4) below += 1;
  assert.ok(Math.abs(below / 20_000 - 0.25) < 4 * Math.sqrt((0.25 * 0.75) / 20_000));
});

for (const key of NUMERIC) {
  const spec = SPECS[key];

  test(`${key}: the spec is valid and its table is a distribution per grid point`, () => {
    checkNumericSpec(spec);
    const table = reportTable(spec);
    assert.equal(table.length, spec.grid + 1);
    for (const row of table) {
      assert.equal(row.length, outputSize(spec));
      assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12);
    }
  });

  if (TABLES[key]) {
    test(`${key}: the JavaScript report distribution equals Python's`, () => {
      const table = reportTable(spec);
      const python = TABLES[key];
      assert.equal(table.length, python.length);
      table.forEach((row, k) =>
        row.forEach((p, y) => assert.ok(Math.abs(p - python[k][y]) <= 1e-12 * Math.max(p, 1e-300) + 1e-300, `${key} [${k}][${y}]: ${p} vs ${python[k][y]}`)),
      );
    });
  }

  test(`${key}: worst-case privacy of the enumerated report space`, () => {
    const table = reportTable(spec);
    if (spec.mechanism === "gaussian") {
      assert.equal(worstLogRatio(table), Infinity); // (epsilon, delta), never pure epsilon
      const delta = hockeyStick(table[0], table[spec.grid], spec.epsilon);
      assert.ok(delta <= spec.delta * (1 + 1e-9), `delta ${delta} > ${spec.delta}`);
      assert.ok(delta >= 0.95 * spec.delta);
    } else {
      const worst = worstLogRatio(table);
      assert.ok(worst <= spec.epsilon + 1e-12, `${worst} > ${spec.epsilon}`);
      assert.ok(worst >= spec.epsilon - 1e-9, `${worst} well below ${spec.epsilon}`);
    }
  });

  test(`${key}: sampled reports follow the spec's distribution`, () => {
    // A value between grid points 3 and 4, so the rounding mixes two rows.
    const step = (spec.hi - spec.lo) / spec.grid;
    const value = Math.min(spec.lo + 3.25 * step, spec.hi);
    const t = ((value - spec.lo) / (spec.hi - spec.lo)) * spec.grid;
    const below = Math.min(Math.floor(t), spec.grid);
    const f = t - below;
    const table = reportTable(spec);
    const expected = table[below].map((p, y) => (below < spec.grid ? (1 - f) * p + f * table[below + 1][y] : p));
    const counts = new Array(outputSize(spec)).fill(0);
    const random = seededSource(14);
    for (let i = 0; i < DRAWS; i += 1) counts[randomizeNumeric(spec, value, random).index] += 1;
    expected.forEach((p, y) => {
      const se = Math.sqrt((p * (1 - p)) / DRAWS);
      assert.ok(Math.abs(counts[y] / DRAWS - p) <= 5 * se + 1 / DRAWS, `${key} index ${y}: ${counts[y] / DRAWS} vs ${p}`);
    });
  });
}

test("values outside [lo, hi] are refused before anything is randomized", () => {
  const spec = SPECS["num-piecewise"];
  const random = () => {
    throw new Error("randomness used");
  };
  for (const bad of [-0.01, 10.01, NaN, Infinity, "5", null, undefined]) {
    assert.throws(() => randomizeNumeric(spec, bad, random), RangeError);
  }
});

test("alpha-point rounding is deterministic for a kept alpha", () => {
  const spec = SPECS["num-1bitmean"]; // lo 0, hi 10, grid 10: 3.5 lies halfway between points 3 and 4
  const random = () => {
    throw new Error("randomness used");
  };
  assert.equal(roundToGrid(spec, 3.5, random, 0.4), 3);
  assert.equal(roundToGrid(spec, 3.5, random, 0.5), 4);
  assert.equal(roundToGrid(spec, 10, random, 0.99), 10);
  assert.throws(() => roundToGrid(spec, 3.5, random, 1), RangeError);
});

test("the rounding is unbiased", () => {
  const spec = SPECS["num-1bitmean"];
  const random = seededSource(5);
  let sum = 0;
  for (let i = 0; i < DRAWS; i += 1) sum += roundToGrid(spec, 3.3, random);
  assert.ok(Math.abs(sum / DRAWS - 3.3) < 4 * Math.sqrt(0.21 / DRAWS));
});

const clone = (spec) => JSON.parse(JSON.stringify(spec));

const MALFORMED = [
  ["not an object", () => null],
  ["an array", () => []],
  ["unknown mechanism", (s) => ({ ...s, mechanism: "laplaze" })],
  ["mechanism from the prototype", (s) => ({ ...s, mechanism: "toString" })],
  ["lo missing", (s) => ({ ...s, lo: undefined })],
  ["lo a string", (s) => ({ ...s, lo: "0" })],
  ["hi infinite", (s) => ({ ...s, hi: Infinity })],
  ["lo >= hi", (s) => ({ ...s, lo: s.hi })],
  ["epsilon NaN", (s) => ({ ...s, epsilon: NaN })],
  ["epsilon too large", (s) => ({ ...s, epsilon: 11 })],
  ["grid fractional", (s) => ({ ...s, grid: 2.5 })],
  ["grid zero", (s) => ({ ...s, grid: 0 })],
];

const MALFORMED_BY_KEY = {
  "num-laplace": [
    ["weights too short", (s) => ({ ...s, noise_weights: s.noise_weights.slice(1) })],
    ["a negative weight", (s) => ({ ...s, noise_weights: s.noise_weights.map((w, j) => (j === 2 ? -w : w)) })],
    ["a fractional weight", (s) => ({ ...s, noise_weights: s.noise_weights.map((w, j) => (j === 2 ? w + 0.5 : w)) })],
    ["weights not a list", (s) => ({ ...s, noise_weights: "1,2" })],
    ["less noise than epsilon allows", (s) => ({ ...s, epsilon: s.epsilon / 2 })],
    ["a tail too light", (s) => ({ ...s, noise_weights: s.noise_weights.map((w, j) => (j === s.grid ? Math.floor(w / 2) : w)) })],
  ],
  "num-gaussian": [
    ["delta zero", (s) => ({ ...s, delta: 0 })],
    ["delta smaller than the noise gives", (s) => ({ ...s, delta: s.delta / 10 })],
    ["mu negative", (s) => ({ ...s, mu: -1 })],
    ["too few weights", (s) => ({ ...s, noise_weights: s.noise_weights.slice(0, s.grid) })],
  ],
  "num-1bitmean": [
    ["base zero", (s) => ({ ...s, base: 0 })],
    ["slope inconsistent", (s) => ({ ...s, slope: s.slope + 2 })],
    ["denominator a float", (s) => ({ ...s, denominator: s.denominator + 0.5 })],
    ["ratio above e^epsilon", (s) => ({ ...s, epsilon: s.epsilon * 0.9 })],
  ],
  "num-piecewise": [
    ["window zero", (s) => ({ ...s, window: 0 })],
    ["high below low", (s) => ({ ...s, high: s.low - 1 })],
    ["ratio above e^epsilon", (s) => ({ ...s, high: s.high * 2 })],
  ],
  "num-hybrid": [
    ["branch weight above the total", (s) => ({ ...s, branch_weight: s.branch_total + 1 })],
    ["branch total changed", (s) => ({ ...s, branch_total: 1000 })],
    ["duchi part missing", (s) => ({ ...s, base: undefined })],
  ],
};

for (const key of Object.keys(MALFORMED_BY_KEY)) {
  for (const [label, mutate] of [...MALFORMED, ...MALFORMED_BY_KEY[key]]) {
    test(`${key}: a malformed spec is refused (${label})`, () => {
      const spec = mutate(clone(SPECS[key]));
      assert.throws(() => randomizeNumeric(spec, 5, seededSource(1)), /malformed numeric spec/);
    });
  }
}

test("a valid spec passes the check unchanged", () => {
  for (const key of NUMERIC) assert.deepEqual(checkNumericSpec(clone(SPECS[key])), SPECS[key]);
});
