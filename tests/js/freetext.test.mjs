// Tests of static/ldp/freetext.js against ldp/freetext.py (tests/js/memo_tables.json, "sketch"):
// every cell equals Python's; reports keep each entry with keep_probability (seeded draws within
// 4 standard errors); the enumerated report table of one row has worst log-ratio epsilon.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { checkTextSketchSpec, randomizeText, randomizeTextHadamard, sketchCell } from "../../static/ldp/freetext.js";
import { hadamardSign } from "../../static/ldp/spec.js";
import { normalizeText } from "../../static/ldp/text.js";
import { allBitVectors, assertClose, forbidMathRandom, seededSource, worstLogRatio } from "./seeded.mjs";

const TABLE = JSON.parse(readFileSync(new URL("./memo_tables.json", import.meta.url), "utf8")).sketch;
const DRAWS = 3000;
forbidMathRandom();

test("sketch cells equal Python's", async () => {
  for (const [value, row, cell] of TABLE.cells) assert.equal(await sketchCell(TABLE.spec, row, value), cell, `${value} row ${row}`);
});

test("a report marks the answer's cell +1 with keep_probability and every other cell with its complement", async () => {
  const spec = checkTextSketchSpec(TABLE.spec);
  const random = seededSource(9);
  const keep = spec.keep_probability;
  let hits = 0;
  let others = 0;
  const rows = new Array(spec.hash_count).fill(0);
  for (let i = 0; i < DRAWS; i += 1) {
    const report = await randomizeText(spec, "  Seoul ", random);
    const cell = await sketchCell(spec, report.row, normalizeText("seoul"));
    rows[report.row] += 1;
    hits += report.bits[cell];
    others += report.bits.reduce((a, b) => a + b, 0) - report.bits[cell];
  }
  assert.ok(Math.abs(hits / DRAWS - keep) <= 4 * Math.sqrt((keep * (1 - keep)) / DRAWS));
  const otherDraws = DRAWS * (spec.width - 1);
  assert.ok(Math.abs(others / otherDraws - (1 - keep)) <= 4 * Math.sqrt((keep * (1 - keep)) / otherDraws));
  const share = 1 / spec.hash_count;
  rows.forEach((count) => assert.ok(Math.abs(count / DRAWS - share) <= 4 * Math.sqrt((share * (1 - share)) / DRAWS)));
});

test("the report table of a 4-cell row, enumerated over the cells a string can hash to, has worst log-ratio epsilon", () => {
  const keep = TABLE.spec.keep_probability;
  const vectors = allBitVectors(4);
  const rows = [0, 1, 2, 3].map((cell) => vectors.map((bits) => bits.reduce((p, bit, l) => p * ((bit === (l === cell ? 1 : 0)) ? keep : 1 - keep), 1)));
  assertClose(assert, worstLogRatio(rows), TABLE.spec.epsilon, 1e-9);
  assert.throws(() => checkTextSketchSpec({ ...TABLE.spec, keep_probability: 0.4 }), RangeError);
  assert.throws(() => checkTextSketchSpec({ ...TABLE.spec, width: 1 }), RangeError);
});

test("a Hadamard report keeps the sign H[index, cell] with keep_probability; indices and rows are uniform", async () => {
  const spec = checkTextSketchSpec(TABLE.hadamard_spec);
  const random = seededSource(11);
  const keep = spec.keep_probability;
  let agree = 0;
  let lowIndices = 0;
  for (let i = 0; i < DRAWS; i += 1) {
    const report = await randomizeTextHadamard(spec, " Busan", random);
    const cell = await sketchCell(spec, report.row, "busan");
    agree += (report.bit === 1 ? 1 : -1) === hadamardSign(report.index, cell) ? 1 : 0;
    lowIndices += report.index < spec.width / 2 ? 1 : 0;
  }
  assert.ok(Math.abs(agree / DRAWS - keep) <= 4 * Math.sqrt((keep * (1 - keep)) / DRAWS));
  assert.ok(Math.abs(lowIndices / DRAWS - 0.5) <= 4 * Math.sqrt(0.25 / DRAWS));
  await assert.rejects(() => randomizeTextHadamard(TABLE.spec, "x", random), RangeError);
  await assert.rejects(() => randomizeText(spec, "x", random), RangeError);
  assert.throws(() => checkTextSketchSpec({ ...spec, width: 96 }), RangeError);
});

test("the Hadamard report table over every cell of an 8-wide row, enumerated, has worst log-ratio epsilon", () => {
  const keep = TABLE.hadamard_spec.keep_probability;
  const rows = Array.from({ length: 8 }, (_, cell) =>
    [0, 1].flatMap((bit) => Array.from({ length: 8 }, (_, index) => ((bit ? 1 : -1) === hadamardSign(index, cell) ? keep : 1 - keep) / 8)),
  );
  assertClose(assert, worstLogRatio(rows), TABLE.hadamard_spec.epsilon, 1e-9);
});
