// Tests of static/ldp/multiselect.js against the specs ldp.multiselect makes
// (tests/js/multiselect_specs.json, written by python -m tests.js.make_specs).
//
// Distribution: the table P(report | set) the JavaScript derives from each spec, over every
// admissible set (sizes 0..l, in ldp.multiselect.all_sets order), equals Python's (1e-12).
// Privacy: that table's worst likelihood ratio equals e^epsilon (relative 1e-9): the whole set
// under one epsilon, dummies included. Padding with OLH over a small prime (padding-olh-k3-l2-p7,
// every hash function enumerated): randomizeSet's own distribution, replayed over every
// combination of its draws, equals Python's too and attains epsilon. Sampling: DRAWS reports from
// a seeded source; every observed share lies within 4 standard errors of the probability the spec
// implies.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { checkChosen, checkSetSpec, randomizeSet, sampleItem, setSpecEpsilon } from "../../static/ldp/multiselect.js";
import { replayedDistribution, uniformDraw, unitDraw } from "./seeded.mjs";
import { krrTable, olhTable, seededSource } from "./tables.mjs";

const { specs: SPECS, tables: TABLES } = JSON.parse(
  readFileSync(new URL("./multiselect_specs.json", import.meta.url), "utf8"),
);
const DRAWS = 40_000;

Math.random = () => {
  throw new Error("Math.random called");
};


/** Every set of at most maxChoices of k options: by size, then lexicographically. */
function allSets(k, maxChoices) {
  const sets = [];
  const extend = (prefix, start, size) => {
    if (prefix.length === size) {
      sets.push(prefix);
      return;
    }
    for (let i = start; i < k; i += 1) extend([...prefix, i], i + 1, size);
  };
  for (let size = 0; size <= maxChoices; size += 1) extend([], 0, size);
  return sets;
}

/** P(item | set) of padding-and-sampling, derived from the rule the randomizer follows. */
function itemProbabilities(set, k, maxChoices) {
  const row = new Array(k + maxChoices).fill(0);
  for (const option of set) row[option] += 1 / maxChoices;
  for (let r = set.length; r < maxChoices; r += 1) row[k + r - set.length] += 1 / maxChoices;
  return row;
}

/** The report table the spec implies: rows are sets, columns reports (Python's order). */
function reportTable(spec) {
  const sets = allSets(spec.k, spec.max_choices);
  if (spec.mechanism === "set-sue" || spec.mechanism === "set-oue") {
    const p = spec.true_bit_probability;
    const q = spec.other_bit_probability;
    return sets.map((set) => {
      const row = [];
      for (let r = 0; r < 2 ** spec.k; r += 1) {
        let probability = 1;
        for (let j = 0; j < spec.k; j += 1) {
          const bit = (r >>> (spec.k - 1 - j)) & 1; // numpy.ndindex order: option 0 is the high bit
          const one = set.includes(j) ? p : q;
          probability *= bit ? one : 1 - one;
        }
        row.push(probability);
      }
      return row;
    });
  }
  // Padding: P(report | set) = sum over items s of P(s | set) P(report | s), the oracle's table over k + l items.
  const oracle = spec.oracle.mechanism === "olh" ? olhTable(spec.oracle) : krrTable(spec.oracle);
  return sets.map((set) => {
    const items = itemProbabilities(set, spec.k, spec.max_choices);
    return oracle[0].map((_, y) => items.reduce((sum, w, s) => sum + w * oracle[s][y], 0));
  });
}

/**
 * P(report | set) of padding with OLH, from randomizeSet's own draws: the sampled slot, the
 * coefficients a, b, c, keep or not (one uniform number against keep_probability) and, only when
 * not kept, the other value. Columns in Python's (a, b, c, y) order.
 */
function replayedOlhTable(spec) {
  const { prime, range_size: g, keep_probability: keep } = spec.oracle;
  const prime3 = uniformDraw(prime);
  const draws = [uniformDraw(spec.max_choices), prime3, prime3, prime3, unitDraw([keep]), uniformDraw(g - 1)];
  const column = ({ hash: [a, b, c], value }) => ((a * prime + b) * prime + c) * g + value;
  return allSets(spec.k, spec.max_choices).map((set) => {
    const distribution = replayedDistribution(draws, (random) => randomizeSet(spec, set, random), column);
    return Array.from({ length: prime ** 3 * g }, (_, y) => distribution.get(y) ?? 0);
  });
}

function worstLogRatio(table) {
  let worst = 0;
  for (let y = 0; y < table[0].length; y += 1) {
    const column = table.map((row) => row[y]);
    worst = Math.max(worst, Math.log(Math.max(...column)) - Math.log(Math.min(...column)));
  }
  return worst;
}

function assertShare(count, draws, p, label) {
  const share = count / draws;
  const se = Math.sqrt((p * (1 - p)) / draws);
  assert.ok(Math.abs(share - p) <= 4 * se, `${label}: share ${share} vs ${p} (se ${se})`);
}

for (const [key, table] of Object.entries(TABLES).filter(([name]) => !name.startsWith("pair-"))) {
  test(`${key}: the report distribution equals Python's and spends exactly epsilon`, () => {
    const spec = SPECS[key];
    const derived = reportTable(spec);
    assert.equal(derived.length, table.length);
    derived.forEach((row, i) => row.forEach((p, y) => assert.ok(Math.abs(p - table[i][y]) <= 1e-12, `${key} [${i}][${y}]`)));
    const ratio = worstLogRatio(derived);
    assert.ok(Math.abs(ratio - spec.epsilon) <= 1e-9 * spec.epsilon, `worst log ratio ${ratio} != ${spec.epsilon}`);
  });
}

for (const key of ["set-sue-k5-l2", "set-oue-k4-l3", "set-oue-k6-l2"]) {
  test(`${key}: each bit is 1 with p if chosen, q otherwise`, () => {
    const spec = SPECS[key];
    const chosen = [1, 2].slice(0, spec.max_choices);
    const random = seededSource(7);
    const ones = new Array(spec.k).fill(0);
    for (let i = 0; i < DRAWS; i += 1) {
      const { bits } = randomizeSet(spec, chosen, random);
      assert.equal(bits.length, spec.k);
      bits.forEach((bit, j) => (ones[j] += bit));
    }
    ones.forEach((count, j) => {
      const p = chosen.includes(j) ? spec.true_bit_probability : spec.other_bit_probability;
      assertShare(count, DRAWS, p, `${key} bit ${j}`);
    });
  });
}

for (const key of ["padding-krr-k4-l2", "padding-krr-k5-l5"]) {
  test(`${key}: reports follow the padded, sampled, randomized item`, () => {
    const spec = SPECS[key];
    const d = spec.k + spec.max_choices;
    for (const chosen of [[], [1], [0, 3]]) {
      const random = seededSource(11 + chosen.length);
      const counts = new Array(d).fill(0);
      for (let i = 0; i < DRAWS; i += 1) counts[randomizeSet(spec, chosen, random).value] += 1;
      const row = reportTable(spec)[allSets(spec.k, spec.max_choices).findIndex((s) => s.join() === chosen.join())];
      counts.forEach((count, y) => assertShare(count, DRAWS, row[y], `${key} ${chosen} -> ${y}`));
    }
  });
}

test("padding-olh: the sampled item goes through OLH over k + l items", () => {
  const spec = SPECS["padding-olh-k5-l2"];
  const random = seededSource(3);
  const report = randomizeSet(spec, [4], random);
  assert.equal(report.hash.length, 3);
  assert.ok(report.value >= 0 && report.value < spec.oracle.range_size);
  assert.equal(spec.oracle.k, 7);
});

test("padding-olh-k3-l2-p7: randomizeSet's own report distribution, over every hash, equals Python's and attains epsilon", () => {
  const spec = SPECS["padding-olh-k3-l2-p7"];
  const table = replayedOlhTable(spec);
  assert.equal(table.length, TABLES["padding-olh-k3-l2-p7"].length);
  table.forEach((row, i) => {
    assert.ok(Math.abs(row.reduce((sum, p) => sum + p, 0) - 1) <= 1e-12, `row ${i} sums to 1`);
    row.forEach((p, y) => assert.ok(Math.abs(p - TABLES["padding-olh-k3-l2-p7"][i][y]) <= 1e-12, `[${i}][${y}]`));
  });
  const ratio = worstLogRatio(table);
  assert.ok(Math.abs(ratio - spec.epsilon) <= 1e-9 * spec.epsilon, `worst log ratio ${ratio} != ${spec.epsilon}`);
});

test("sampleItem pads with dummies k, k + 1, ... and samples uniformly", () => {
  const random = seededSource(5);
  const counts = new Array(7).fill(0);
  for (let i = 0; i < DRAWS; i += 1) counts[sampleItem([2], 4, 3, random)] += 1;
  [0, 0, 1 / 3, 0, 1 / 3, 1 / 3, 0].forEach((p, item) => assertShare(counts[item], DRAWS, p, `item ${item}`));
});

test("chosen options are validated before anything is randomized", () => {
  assert.deepEqual(checkChosen([3, 1], 5, 2), [1, 3]);
  assert.throws(() => checkChosen([1, 1], 5, 2), /repeat/);
  assert.throws(() => checkChosen([0, 1, 2], 5, 2), /at most 2/);
  assert.throws(() => checkChosen([5], 5, 2), /option indices/);
  assert.throws(() => checkChosen([0.5], 5, 2), /option indices/);
  assert.throws(() => randomizeSet({ mechanism: "nope", k: 3, max_choices: 1, epsilon: 1 }, [], seededSource(1)), /mechanism/);
});

test("the epsilon recomputed from every spec's probabilities is the one it states", () => {
  for (const [key, spec] of Object.entries(SPECS).filter(([name]) => !name.startsWith("pair-"))) {
    const epsilon = setSpecEpsilon(spec);
    assert.ok(Math.abs(epsilon - spec.epsilon) <= 1e-9 * spec.epsilon, `${key}: ${epsilon} vs ${spec.epsilon}`);
  }
});

test("malformed specs are refused before anything is randomized", () => {
  const good = SPECS["set-oue-k4-l3"];
  const padded = SPECS["padding-krr-k4-l2"];
  const cases = [
    [{ ...good, true_bit_probability: 1 }, /true_bit_probability/],
    [{ ...good, other_bit_probability: Number.NaN }, /other_bit_probability/],
    [{ ...good, true_bit_probability: 0.1, other_bit_probability: 0.2 }, /must exceed/],
    [{ ...good, max_choices: 5 }, /max_choices/],
    [{ ...good, k: 65 }, /k /],
    [{ ...good, epsilon: 11 }, /epsilon/],
    [{ ...padded, oracle: { ...padded.oracle, k: 5 } }, /oracle/],
    [{ ...padded, oracle: { ...padded.oracle, keep_probability: 1 } }, /keep_probability/],
    [{ ...padded, oracle: SPECS["padding-olh-k5-l2"].oracle }, /oracle/],
    [null, /object/],
  ];
  for (const [spec, message] of cases) {
    assert.throws(() => checkSetSpec(spec), message);
    assert.throws(() => randomizeSet(spec, [0], seededSource(1)), message);
  }
  // A spec that would leak more than it states is caught by the recomputation.
  const leaky = { ...good, true_bit_probability: 0.9 };
  assert.ok(setSpecEpsilon(leaky) > good.epsilon + 1);
});

test("the default random source is crypto.getRandomValues", () => {
  const report = randomizeSet(SPECS["set-oue-k4-l3"], [0]);
  assert.equal(report.bits.length, 4);
});
