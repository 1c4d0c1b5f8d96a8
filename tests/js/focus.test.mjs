// Focused response (static/ldp/randomize.js randomizeFocus, mirroring ldp/mechanisms/focus.py):
// the report is the answer's bucket kept with keep_probability, else a uniform other bucket.
// Privacy: the (k, m + 1) table the spec implies is enumerated; its worst log ratio must equal
// the epsilon ldp states (relative error 1e-9), and equal Python's own enumeration. Frequencies:
// 100,000 seeded draws per answer, each share within 4 standard errors of the table.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { specPrivacy } from "../../static/ldp/epsilon.js";
import { SpecError, randomize, randomizeFocus } from "../../static/ldp/randomize.js";
import { focusTable, seededSource, worstLogRatio } from "./tables.mjs";

const SPECS = JSON.parse(readFileSync(new URL("./specs.json", import.meta.url), "utf8"));
const PRIVACY = JSON.parse(readFileSync(new URL("./privacy_table.json", import.meta.url), "utf8"));
const DRAWS = 100_000;
const FOCUS = Object.keys(PRIVACY).filter((key) => PRIVACY[key].spec.mechanism === "focus");

Math.random = () => {
  throw new Error("Math.random called");
};

test("every focused-response fixture is exercised", () => {
  assert.deepEqual(FOCUS.sort(), ["focus-k2-m1-eps10", "focus-k20-m4", "focus-k256-m8-eps001", "focus-k5-m2"]);
});

for (const key of FOCUS) {
  test(`${key}: the enumerated worst log ratio is exactly the epsilon ldp states`, () => {
    const { spec, epsilon } = PRIVACY[key];
    const table = focusTable(spec);
    for (const row of table) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12);
    const ratio = worstLogRatio(table);
    assert.ok(Math.abs(ratio - epsilon) <= 1e-9 * epsilon, `${ratio} != ${epsilon}`);
    assert.ok(Math.abs(specPrivacy(spec).epsilon - epsilon) <= 1e-9 * epsilon);
  });
}

for (const key of ["focus-k5-m2", "focus-k20-m4"]) {
  test(`${key}: reports follow the table for a named and an unnamed answer`, () => {
    const spec = SPECS[key];
    const table = focusTable(spec);
    const unnamed = [...Array(spec.k).keys()].find((v) => !spec.focus.includes(v));
    for (const answer of [spec.focus[0], unnamed]) {
      const random = seededSource(answer + 11);
      const counts = new Array(spec.focus.length + 1).fill(0);
      for (let i = 0; i < DRAWS; i += 1) {
        const report = randomizeFocus(spec, answer, random);
        assert.deepEqual(Object.keys(report), ["value"]);
        counts[report.value] += 1;
      }
      counts.forEach((count, y) => {
        const p = table[answer][y];
        const se = Math.sqrt((p * (1 - p)) / DRAWS);
        assert.ok(Math.abs(count / DRAWS - p) <= 4 * se, `answer ${answer} report ${y}: ${count / DRAWS} vs ${p}`);
      });
    }
  });
}

test("unnamed answers share one report distribution: the report cannot tell them apart", () => {
  const table = focusTable(SPECS["focus-k20-m4"]);
  for (let v = 5; v < 20; v += 1) assert.deepEqual(table[v], table[4]);
});

test("a malformed focus is refused before any randomness is drawn", () => {
  const untouchable = () => {
    throw new Error("randomness drawn from a malformed spec");
  };
  const spec = SPECS["focus-k5-m2"];
  for (const focus of [[], [0, 0], [5], [-1], [1.5], ["1"], [0, 1, 2, 3, 4], null, 3]) {
    assert.throws(
      () => randomize({ ...spec, focus }, 0, untouchable),
      (error) => error instanceof SpecError && error.field.startsWith("focus"),
      JSON.stringify(focus),
    );
  }
});
