// Exact privacy of a sampled survey's whole submission (static/ldp/sampling.js), the mirror of
// tests/ldp/test_sampling.py: every draw of the m questions (enumerated through the random words
// drawSample reads), every true-answer vector with skips, and the body's distribution (one report
// per question; a fake's report for a pooled question not drawn or skipped) changes by at most
// e^(total epsilon) between any two respondents.

import assert from "node:assert/strict";
import { test } from "node:test";

import { fillAnswer, fillWeights } from "../../static/ldp/branching.js";
import { checkPromises } from "../../static/ldp/epsilon.js";
import { drawSample, submissionEpsilon, validSampling } from "../../static/ldp/sampling.js";
import { forbidMathRandom } from "./seeded.mjs";
import { krrTable, seededSource } from "./tables.mjs";

forbidMathRandom();

/** A k-RR spec at epsilon, as the server sends it. */
function krr(k, epsilon) {
  return { mechanism: "krr", k, epsilon, keep_probability: Math.exp(epsilon) / (Math.exp(epsilon) + k - 1) };
}

/** A random source that writes these words, one per call (uniformInt accepts any word below its limit). */
function scripted(words) {
  let next = 0;
  return (/** @type {Uint32Array} */ array) => {
    for (let i = 0; i < array.length; i += 1) array[i] = words[next++];
    return array;
  };
}

/** Every draw of drawSample(pool, m) with its exact probability: each word sequence below the bounds is equally likely. */
function drawDistribution(pool, m) {
  const found = new Map();
  let sequences = [[]];
  for (let i = 0; i < m; i += 1) sequences = sequences.flatMap((s) => Array.from({ length: pool.length - i }, (_, w) => [...s, w]));
  for (const words of sequences) {
    const key = drawSample(pool, m, scripted(words)).join(",");
    found.set(key, (found.get(key) || 0) + 1 / sequences.length);
  }
  return found;
}

/** Every answer vector with skips (null), over the questions' k. */
function* respondents(ks) {
  if (ks.length === 0) {
    yield [];
    return;
  }
  for (const rest of respondents(ks.slice(1))) for (const a of [...Array(ks[0]).keys(), null]) yield [a, ...rest];
}

const mix = (table, weights) => table[0].map((_, y) => weights.reduce((sum, w, v) => sum + w * table[v][y], 0));
const outer = (distributions) => distributions.reduce((acc, d) => acc.flatMap((a) => d.map((b) => a * b)), [1]);

/**
 * max over bodies and respondent pairs of ln(P[body | r] / P[body | r']) for questions (id, spec), of
 * which `pool` is sampled m at a time, the others always asked.
 */
function worstBodyLogRatio(questions, pool, m) {
  const tables = questions.map((q) => krrTable(q.spec));
  const draws = drawDistribution(pool, m);
  const bodies = [];
  for (const answers of respondents(questions.map((q) => q.spec.k))) {
    const body = new Array(tables.reduce((size, t) => size * t.length, 1)).fill(0);
    for (const [key, probability] of draws) {
      const drawn = key.split(",").map(Number);
      const inputs = questions.map((q, j) =>
        (!pool.includes(q.id) || drawn.includes(q.id)) && answers[j] !== null
          ? tables[j].map((_, v) => (v === answers[j] ? 1 : 0))
          : fillWeights("shares", q.spec.k),
      );
      outer(inputs.map((w, j) => mix(tables[j], w))).forEach((p, y) => (body[y] += probability * p));
    }
    bodies.push(body);
  }
  let worst = 0;
  for (let y = 0; y < bodies[0].length; y += 1) {
    const column = bodies.map((b) => b[y]);
    worst = Math.max(worst, Math.log(Math.max(...column)) - Math.log(Math.min(...column)));
  }
  return worst;
}

for (const m of [1, 2]) {
  test(`a survey sampling ${m} of 3 questions sends a body within e^(stated total), reached exactly`, () => {
    const total = 1.5;
    const pool = [21, 22, 23];
    const questions = [{ id: 20, spec: krr(2, 0.5) }, ...pool.map((id) => ({ id, spec: krr(2, total / m) }))];
    const stated = submissionEpsilon(new Map(questions.map((q) => [q.id, q.spec.epsilon])), { questions: pool, m });
    assert.ok(Math.abs(stated - (0.5 + total)) < 1e-12);
    const worst = worstBodyLogRatio(questions, pool, m);
    assert.ok(Math.abs(worst - stated) <= 1e-9 * stated, `${worst} vs ${stated}`);
    // Summing every pooled question's epsilon, as without sampling, would overstate it.
    assert.ok(worst < 0.5 + 3 * (total / m) - 0.1);
  });
}

test("every m-subset is drawn with probability 1 / C(q, m), in the pool's order", () => {
  const draws = drawDistribution([5, 6, 7, 8], 2);
  assert.equal(draws.size, 6);
  for (const [key, probability] of draws) {
    assert.ok(Math.abs(probability - 1 / 6) < 1e-12, key);
    const ids = key.split(",").map(Number);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
  }
  assert.deepEqual(drawSample([5, 6, 7], 3, seededSource(1)), [5, 6, 7]);
  assert.throws(() => drawSample([5, 6], 3, seededSource(1)), RangeError);
});

test("a fake is a uniform option: each share of the fakes' reports is 1 / k", () => {
  const random = seededSource(11);
  const spec = krr(4, 2);
  const counts = [0, 0, 0, 0];
  const draws = 40_000;
  for (let i = 0; i < draws; i += 1) counts[fillAnswer(spec, random).index] += 1;
  const se = Math.sqrt((1 / 4) * (3 / 4) / draws);
  for (const count of counts) assert.ok(Math.abs(count / draws - 1 / 4) <= 4 * se, `${count}`);
});

test("the submission's epsilon: the others' sum plus the m largest pooled; a malformed block sums all", () => {
  const epsilons = new Map([
    [1, 0.5],
    [2, 1],
    [3, 2],
    [4, 1.5],
  ]);
  assert.equal(submissionEpsilon(epsilons, { questions: [2, 3, 4], m: 2 }), 0.5 + 2 + 1.5);
  assert.equal(submissionEpsilon(epsilons, null), 5);
  assert.equal(submissionEpsilon(epsilons, { questions: [2, 3], m: 3 }), 5);
  assert.equal(validSampling({ questions: [2, 2], m: 1 }), false);
  assert.equal(validSampling({ questions: [2, 3], m: 1.5 }), false);
});

test("the page's promise check counts m of the pool, so a sampled page may send and a padded one may not", () => {
  const entries = [1, 2, 3].map((question) => ({ question, spec: krr(2, 1) }));
  const questions = { 1: { epsilon: 1 }, 2: { epsilon: 1 }, 3: { epsilon: 1 } };
  assert.deepEqual(checkPromises(entries, { total: 1, questions, sampling: { questions: [1, 2, 3], m: 1 } }), []);
  const reasons = checkPromises(entries, { total: 1, questions }).map((p) => p.reason);
  assert.deepEqual(reasons, ["total"]);
  const two = checkPromises(entries, { total: 1, questions, sampling: { questions: [1, 2, 3], m: 2 } });
  assert.deepEqual(two.map((p) => p.reason), ["total"]);
  assert.ok(Math.abs(two[0].found - 2) < 1e-9);
});

test("the ledger records a sampled pool once, at the m largest epsilons, and the others as they are", async () => {
  const { ledgerSpends } = await import("../../static/ldp/report.js");
  const receipt = [
    { question: 1, epsilon: 0.5 },
    { question: 2, epsilon: 1 },
    { question: 3, epsilon: 1 },
    { question: 4, epsilon: 1 },
    { question: 5, epsilon: null },
  ];
  const page = { survey: "s", title: "T", series: null, round: null, sampling: { questions: [2, 3, 4], m: 1 } };
  const spends = ledgerSpends(receipt, new Map(), page);
  assert.deepEqual(
    spends.map((s) => [s.question, s.epsilon]),
    [
      ["1", 0.5],
      ["sampled:2,3,4", 1],
    ],
  );
  assert.equal(ledgerSpends(receipt, new Map(), { ...page, sampling: undefined }).length, 4);
});
