// Exact privacy of a branching survey's whole submission (static/ldp/branching.js), the mirror of
// tests/ldp/test_branching.py: every path and every true-answer vector (with skips) of a small
// survey is enumerated, and the distribution of the whole body (one report per question, the
// fill's report where a question was not shown or skipped) changes by at most e^(total epsilon)
// between any two respondents.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { FILLS, conditionHolds, fillAnswer, fillWeights, paths, shownQuestions, shuffledOrder, skipAnswer } from "../../static/ldp/branching.js";
import { forbidMathRandom } from "./seeded.mjs";
import { reportTable, seededSource } from "./tables.mjs";

const SPECS = JSON.parse(readFileSync(new URL("./specs.json", import.meta.url), "utf8"));
forbidMathRandom();

/** P[y | v] rows of a spec times an input distribution: the report's distribution. */
function mix(table, weights) {
  return table[0].map((_, y) => weights.reduce((sum, w, v) => sum + w * table[v][y], 0));
}

/** The outer product of per-question report distributions, flattened (question 1 slowest). */
function body(distributions) {
  return distributions.reduce((acc, d) => acc.flatMap((a) => d.map((b) => a * b)), [1]);
}

/** Every answer vector with skips (null), over the questions' k. */
function* respondents(ks) {
  if (ks.length === 0) {
    yield [];
    return;
  }
  for (const rest of respondents(ks.slice(1))) for (const a of [...Array(ks[0]).keys(), null]) yield [a, ...rest];
}

/**
 * max over bodies and respondent pairs of ln ratio, as the browser would randomize them. A question
 * with `skip` (its "Prefer not to say") sends skipAnswer's option when shown and skipped.
 */
function worstBodyLogRatio(questions, conditions) {
  const order = questions.map((q) => q.id);
  const tables = questions.map((q) => reportTable(q.spec));
  const fills = questions.map((q) => fillWeights("shares", q.spec.k));
  const bodies = [];
  for (const answers of respondents(questions.map((q) => q.spec.k))) {
    const given = new Map(order.map((id, j) => [id, answers[j] === null ? null : { index: answers[j], value: answers[j] + 1 }]));
    const shown = shownQuestions(order, conditions, given);
    const pointMass = (j, index) => tables[j].map((_, v) => (v === index ? 1 : 0));
    const inputs = questions.map((q, j) => {
      if (!shown.includes(q.id)) return fills[j];
      if (answers[j] !== null) return pointMass(j, answers[j]);
      return q.skip === undefined ? fills[j] : pointMass(j, skipAnswer(q, seededSource(1)).index);
    });
    bodies.push(body(inputs.map((w, j) => mix(tables[j], w))));
  }
  let worst = 0;
  for (let y = 0; y < bodies[0].length; y += 1) {
    const column = bodies.map((b) => b[y]);
    worst = Math.max(worst, Math.log(Math.max(...column)) - Math.log(Math.min(...column)));
  }
  return worst;
}

const QUESTIONS = [
  { id: 11, spec: SPECS["krr-k2"] },
  { id: 12, spec: SPECS["oue-k3"] },
  { id: 13, spec: SPECS["olh-tiny"] },
];
const TOTAL = QUESTIONS.reduce((sum, q) => sum + q.spec.epsilon, 0);

test("every path of a branching survey sends a body within e^(total epsilon)", () => {
  const conditions = new Map([[12, { question: 11, in: [1] }]]);
  assert.equal(paths([11, 12, 13], conditions).length, 2);
  const worst = worstBodyLogRatio(QUESTIONS, conditions);
  assert.ok(worst <= TOTAL * (1 + 1e-12), `${worst} > ${TOTAL}`);
  // Without the condition two respondents who answer everything differently reach the bound; with it
  // question 12's real report needs question 11's same answer, so the branching body stays below.
  const plain = worstBodyLogRatio(QUESTIONS, new Map());
  assert.ok(Math.abs(plain - TOTAL) <= 1e-9 * TOTAL, `${plain} vs ${TOTAL}`);
  assert.ok(worst < plain);
});

test("a range condition on a value is within the same bound", () => {
  const conditions = new Map([[13, { question: 12, between: [2, 3] }]]);
  const worst = worstBodyLogRatio(QUESTIONS, conditions);
  assert.ok(worst <= TOTAL * (1 + 1e-12), `${worst} > ${TOTAL}`);
});

test("a naive skip (no report for a question not shown) leaks without bound", () => {
  // What Murmur does not do: the body's length alone tells question 11's answer.
  const order = [11, 12, 13];
  const conditions = new Map([[12, { question: 11, in: [1] }]]);
  const yes = shownQuestions(order, conditions, new Map([[11, { index: 1, value: 1 }]]));
  const no = shownQuestions(order, conditions, new Map([[11, { index: 0, value: 0 }]]));
  assert.notEqual(yes.length, no.length);
});

test("conditions follow the shown questions, as in Python", () => {
  const conditions = new Map([
    [2, { question: 1, in: [0, 2] }],
    [3, { question: 2, between: [3, 5] }],
  ]);
  const answers = new Map([
    [1, { index: 2, value: 2 }],
    [2, { index: 1, value: 4 }],
  ]);
  assert.deepEqual(shownQuestions([1, 2, 3], conditions, answers), [1, 2, 3]);
  answers.set(1, { index: 1, value: 1 });
  assert.deepEqual(shownQuestions([1, 2, 3], conditions, answers), [1]);
  assert.equal(conditionHolds({ question: 1, in: [0] }, null), false);
  assert.deepEqual(
    paths([1, 2, 3], conditions).map((p) => p.shown),
    [[1], [1, 2], [1, 2, 3]],
  );
});

test("fills: a uniform fake option, a uniform value, the empty set, the empty text", () => {
  assert.deepEqual(FILLS, { shares: "fake", mean: "fake", multi: "not-asked", text: "not-asked" });
  const random = seededSource(7);
  const counts = [0, 0, 0];
  const draws = 30_000;
  for (let i = 0; i < draws; i += 1) counts[fillAnswer(SPECS["oue-k3"], random).index] += 1;
  for (const count of counts) {
    const se = Math.sqrt((1 / 3) * (2 / 3) / draws);
    assert.ok(Math.abs(count / draws - 1 / 3) <= 4 * se, `${count}`);
  }
  const value = fillAnswer({ mechanism: "piecewise", lo: 2, hi: 5 }, random).value;
  assert.ok(value >= 2 && value <= 5);
  assert.deepEqual(fillAnswer({ mechanism: "set-oue", k: 4 }, random), { chosen: [] });
  assert.deepEqual(fillAnswer({ mechanism: "text-cms" }, random), { text: "" });
});

test("a shuffled order keeps the last items last and is a permutation", () => {
  const random = seededSource(3);
  const seen = new Set();
  for (let i = 0; i < 200; i += 1) {
    const order = shuffledOrder(5, random, 1);
    assert.equal(order[4], 4);
    assert.deepEqual([...order].sort(), [0, 1, 2, 3, 4]);
    seen.add(order.join(""));
  }
  assert.equal(seen.size, 24);
});

test("a skip sends the report of 'Prefer not to say' where offered, else the fill, within the same bound", () => {
  const random = seededSource(11);
  const offered = { spec: SPECS["oue-k3"], skip: 2 };
  for (let i = 0; i < 50; i += 1) assert.deepEqual(skipAnswer(offered, random), { index: 2, value: 2 });
  // Not offered (or a skip outside the domain): the fill, a uniform fake option.
  const counts = [0, 0, 0];
  const draws = 30_000;
  for (let i = 0; i < draws; i += 1) counts[skipAnswer({ spec: SPECS["oue-k3"] }, random).index] += 1;
  for (const count of counts) assert.ok(Math.abs(count / draws - 1 / 3) <= 4 * Math.sqrt((1 / 3) * (2 / 3) / draws), `${count}`);
  assert.ok(skipAnswer({ spec: SPECS["oue-k3"], skip: 3 }, random).index < 3);
  assert.deepEqual(skipAnswer({ spec: { mechanism: "set-oue", k: 4 } }, random), { chosen: [] });
  // Questions 11 and 13 offer it (their last option): every path and skip stays within e^(total epsilon).
  const questions = QUESTIONS.map((q) => (q.id === 12 ? q : { ...q, skip: q.spec.k - 1 }));
  for (const conditions of [new Map(), new Map([[12, { question: 11, in: [1] }]]), new Map([[13, { question: 11, in: [0] }]])]) {
    const worst = worstBodyLogRatio(questions, conditions);
    assert.ok(worst <= TOTAL * (1 + 1e-12), `${worst} > ${TOTAL}`);
  }
});
