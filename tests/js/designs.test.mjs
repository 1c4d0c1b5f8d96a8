// Tests of the randomized-response designs (static/ldp/designs.js) against ldp/designs/ (Python).
//
// For every design spec of tests/js/specs.json: the channel written out here from the design's
// definition equals Python's (tests/js/design_tables.json) and the channel designs.js derives;
// its enumerated worst log ratio equals the epsilon designs.js and ldp compute. Where the weight
// totals are small, the randomizer itself is enumerated exactly: a scripted source feeds it every
// integer below each total, so the counts of its reports are P(report | answer) times the totals.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { DESIGNS, designChannel, designEpsilon, drawWeighted, randomizeDesign, uniformBelow } from "../../static/ldp/designs.js";
import { specPrivacy } from "../../static/ldp/epsilon.js";
import { randomize } from "../../static/ldp/randomize.js";
import { SpecError } from "../../static/ldp/spec.js";
import { assertClose, forbidMathRandom } from "./seeded.mjs";
import { seededSource, worstLogRatio } from "./tables.mjs";

const SPECS = JSON.parse(readFileSync(new URL("./specs.json", import.meta.url), "utf8"));
const PRIVACY = JSON.parse(readFileSync(new URL("./privacy_table.json", import.meta.url), "utf8"));
const TABLES = JSON.parse(readFileSync(new URL("./design_tables.json", import.meta.url), "utf8"));
const DESIGN_SPECS = Object.entries(PRIVACY).filter(([, row]) => DESIGNS.includes(row.spec.mechanism));
const clone = (value) => JSON.parse(JSON.stringify(value));
const sum = (list) => list.reduce((a, b) => a + b, 0);

forbidMathRandom();

/** The channel from the designs' definitions (Boruch; Greenberg et al.; Warner; Yu, Tian and Tang). */
function definitionTable(spec) {
  const options = [...Array(spec.k).keys()];
  if (spec.mechanism === "forced-response") {
    const all = sum(spec.forced) + spec.truth;
    // Forced to y with forced[y] / all; truthful (y = v) with truth / all.
    return options.map((v) => options.map((y) => spec.forced[y] / all + (y === v ? spec.truth / all : 0)));
  }
  if (spec.mechanism === "unrelated-question") {
    const asked = spec.sensitive[0] / sum(spec.sensitive);
    return options.map((v) => options.map((y) => (y === v ? asked : 0) + (1 - asked) * (spec.pi[y] / sum(spec.pi))));
  }
  const p = spec.p[0] / sum(spec.p);
  if (spec.mechanism === "warner") return options.map((v) => options.map((y) => (y === v ? p : 1 - p)));
  // Crosswise: report 0 ("same") when the innocuous answer (0 with probability p) equals the true one.
  return options.map((v) => [v === 0 ? p : 1 - p, v === 0 ? 1 - p : p]);
}

/** A source whose 53-bit draws are the given integers, in order (each one accepted by rejection). */
function scripted(draws) {
  let i = 0;
  return (words) => {
    const draw = draws[i++];
    words[0] = Math.floor(draw / 2 ** 32) << 11;
    words[1] = draw % 2 ** 32;
    return words;
  };
}

for (const [key, { spec, epsilon }] of DESIGN_SPECS) {
  test(`${key}: the channel from the definition is ldp's and designs.js's; its worst ratio is epsilon`, () => {
    const table = definitionTable(spec);
    designChannel(spec).forEach((row, v) => row.forEach((cell, y) => assertClose(assert, cell, table[v][y], 1e-15)));
    if (TABLES[key]) TABLES[key].forEach((row, v) => row.forEach((cell, y) => assertClose(assert, cell, table[v][y], 1e-15)));
    assertClose(assert, worstLogRatio(table), epsilon, 1e-9, key);
    assertClose(assert, designEpsilon(spec), epsilon, 1e-12, key);
    assertClose(assert, specPrivacy(clone(spec)).epsilon, epsilon, 1e-12, key);
  });
}

test("ldp's design tables cover every design case of specs.json", () => {
  const keys = Object.keys(SPECS).filter((key) => DESIGNS.includes(SPECS[key].mechanism));
  assert.deepEqual(Object.keys(TABLES).sort(), keys.sort());
  assert.deepEqual([...new Set(keys.map((key) => SPECS[key].mechanism))].sort(), [...DESIGNS].sort());
});

for (const key of ["forced-yes-no", "forced-k3-dice", "unrelated-yes-no", "unrelated-k3", "warner", "crosswise"]) {
  test(`${key}: enumerating every draw of the randomizer gives exactly ldp's channel`, () => {
    const spec = SPECS[key];
    const stages = spec.mechanism === "forced-response" ? [sum(spec.forced) + spec.truth] : spec.mechanism === "unrelated-question" ? [sum(spec.sensitive), sum(spec.pi)] : [sum(spec.p)];
    const outcomes = stages.reduce((all, size) => all.flatMap((prefix) => [...Array(size).keys()].map((d) => [...prefix, d])), [[]]);
    const denominator = stages.reduce((a, b) => a * b, 1);
    for (let v = 0; v < spec.k; v += 1) {
      const counts = Array(spec.k).fill(0);
      for (const draws of outcomes) {
        // The unrelated question's second draw is used only when the innocuous question is drawn.
        counts[randomizeDesign(spec, v, scripted(draws)).value] += 1;
      }
      counts.forEach((count, y) => assert.equal(count, Math.round(TABLES[key][v][y] * denominator), `${key} v=${v} y=${y}`));
    }
  });
}

test("uniformBelow is exact: every value below the bound from the first words, 2^53 mod bound rejected", () => {
  assert.equal(uniformBelow(5, scripted([3])), 3);
  const rejectedFirst = scripted([2 ** 53 - 1, 4]);
  assert.equal(uniformBelow(3, rejectedFirst), 4 % 3);
  assert.equal(drawWeighted([2, 1, 3], scripted([0])), 0);
  assert.equal(drawWeighted([2, 1, 3], scripted([2])), 1);
  assert.equal(drawWeighted([2, 1, 3], scripted([5])), 2);
  assert.throws(() => uniformBelow(2 ** 53 + 2, seededSource(1)), RangeError);
});

test("default designs: seeded report frequencies match the channel within 5 standard errors", () => {
  for (const key of ["forced-k5", "unrelated-k4", "warner-default", "crosswise-default"]) {
    const spec = SPECS[key];
    const random = seededSource(31);
    const n = 20000;
    for (const v of [0, spec.k - 1]) {
      const counts = Array(spec.k).fill(0);
      for (let i = 0; i < n; i += 1) counts[randomize(spec, v, random).value] += 1;
      TABLES[key][v].forEach((p, y) => {
        const se = Math.sqrt((p * (1 - p)) / n);
        assert.ok(Math.abs(counts[y] / n - p) <= 5 * se, `${key} v=${v} y=${y}: ${counts[y] / n} vs ${p}`);
      });
    }
  }
});

test("with random weights the recomputed epsilon is the enumerated worst ratio", () => {
  const random = seededSource(77);
  const weight = () => 1 + uniformBelow(1000, random);
  for (let trial = 0; trial < 30; trial += 1) {
    const forced = { mechanism: "forced-response", k: 4, epsilon: 1, forced: [weight(), weight(), weight(), weight()], truth: weight() };
    const unrelated = { mechanism: "unrelated-question", k: 3, epsilon: 1, sensitive: [weight(), weight()], pi: [weight(), weight(), weight()] };
    let p = [weight(), weight()];
    if (p[0] === p[1]) p = [p[0] + 1, p[1]];
    for (const spec of [forced, unrelated, { mechanism: "warner", k: 2, epsilon: 1, p }, { mechanism: "crosswise", k: 2, epsilon: 1, p }]) {
      assertClose(assert, specPrivacy(spec).epsilon, worstLogRatio(definitionTable(spec)), 1e-12, JSON.stringify(spec));
    }
  }
});

test("malformed design specs are refused with a SpecError naming the field, before any draw", () => {
  const untouchable = () => {
    throw new Error("randomness drawn from a malformed spec");
  };
  const cases = [
    [{ ...SPECS["forced-yes-no"], forced: [1, 0] }, "forced[1]"],
    [{ ...SPECS["forced-yes-no"], forced: [1, 1, 1] }, "forced"],
    [{ ...SPECS["forced-yes-no"], forced: [1.5, 1] }, "forced[0]"],
    [{ ...SPECS["forced-yes-no"], truth: 0 }, "truth"],
    [{ ...SPECS["forced-yes-no"], forced: [2 ** 52, 2 ** 52], truth: 1 }, "truth"],
    [{ ...SPECS["unrelated-k3"], pi: [1, 1] }, "pi"],
    [{ ...SPECS["unrelated-k3"], sensitive: [1, "1"] }, "sensitive[1]"],
    [{ ...SPECS["unrelated-k3"], pi: [2 ** 53, 1, 1] }, "pi[0]"],
    [{ ...SPECS["warner"], k: 3 }, "k"],
    [{ ...SPECS["warner"], p: [2, 2] }, "p"],
    [{ ...SPECS["crosswise"], p: [1, -1] }, "p[1]"],
  ];
  for (const [spec, field] of cases) {
    assert.throws(
      () => randomizeDesign(spec, 0, untouchable),
      (error) => error instanceof SpecError && error.field === field,
      `${JSON.stringify(spec)} should be refused at ${field}`,
    );
  }
  assert.throws(() => randomizeDesign(SPECS["krr-k5"], 0, untouchable), (error) => error instanceof SpecError && error.field === "mechanism");
  assert.throws(() => randomizeDesign(SPECS["warner"], 2, untouchable), RangeError);
});

test("every design report is {value} with an option index", () => {
  for (const [, { spec }] of DESIGN_SPECS) {
    const report = randomize(spec, spec.k - 1, seededSource(5));
    assert.deepEqual(Object.keys(report), ["value"]);
    assert.ok(Number.isInteger(report.value) && report.value >= 0 && report.value < spec.k);
  }
});
