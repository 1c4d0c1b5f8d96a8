// Tests of static/ldp/rappor.js against what ldp computes (tests/js/memo_tables.json, "rappor").
//
// Hashing: every Bloom position equals Python's. Privacy, exactly: the report distribution is
// enumerated over all 2^bits reports for every pair of possible Bloom filters (all non-empty
// subsets of at most h bits) and its worst log-ratio must equal epsilonOneReport, whether each
// bit's probability is the closed form's p* or q* or the PRR's table (f) composed with the IRR's
// (p, q), summed over B'; likewise the PRR's table must give epsilonInfinity, and two memoized
// reports (sum over B') must give epsilonAfterRounds(spec, 2), all within 1e-9 relative. Sampling: DRAWS reports from a seeded
// source; every bit's share lies within 4 standard errors of its probability.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  bloomFilter,
  bloomPositions,
  checkRapporSpec,
  epsilonAfterRounds,
  epsilonInfinity,
  epsilonOneReport,
  instantaneousResponse,
  permanentResponse,
  randomizeRappor,
  reportOneProbabilities,
  reportProbability,
} from "../../static/ldp/rappor.js";
import { allBitVectors, assertClose, forbidMathRandom, seededSource, worstLogRatio } from "./seeded.mjs";

const TABLES = JSON.parse(readFileSync(new URL("./memo_tables.json", import.meta.url), "utf8")).rappor;
const DRAWS = 40_000;
forbidMathRandom();

/** Every possible Bloom filter of `bits` bits with 1..h ones. */
function possibleFilters(bits, h) {
  return allBitVectors(bits).filter((v) => {
    const ones = v.reduce((a, b) => a + b, 0);
    return ones >= 1 && ones <= h;
  });
}

/** P(B' | B) of the PRR. */
function permanentProbability(spec, memo, bloom) {
  let probability = 1;
  for (let i = 0; i < bloom.length; i += 1) {
    const one = bloom[i] === 1 ? 1 - spec.f / 2 : spec.f / 2;
    probability *= memo[i] === 1 ? one : 1 - one;
  }
  return probability;
}

/** P(S | B') of the IRR. */
function instantProbability(spec, report, memo) {
  let probability = 1;
  for (let i = 0; i < memo.length; i += 1) {
    const one = memo[i] === 1 ? spec.q : spec.p;
    probability *= report[i] === 1 ? one : 1 - one;
  }
  return probability;
}

/**
 * P(S_1, ..., S_rounds | B) for every possible filter B: `rounds` reports through the IRR from one
 * memoized B', summed over B' (the two layers' tables composed; columns: S_1 * 2^bits + S_2 ...).
 */
function composedRows(spec, filters, vectors, rounds) {
  const instant = vectors.map((memo) => vectors.map((report) => instantProbability(spec, report, memo)));
  return filters.map((bloom) => {
    let perMemo = vectors.map((memo) => [permanentProbability(spec, memo, bloom)]);
    for (let r = 0; r < rounds; r += 1) perMemo = perMemo.map((row, m) => row.flatMap((w) => instant[m].map((p) => w * p)));
    return perMemo[0].map((_, y) => perMemo.reduce((sum, row) => sum + row[y], 0));
  });
}

for (const [key, table] of Object.entries(TABLES)) {
  const spec = checkRapporSpec(table.spec);

  test(`${key}: Bloom positions equal Python's (SHA-256 of the length-prefixed fields)`, async () => {
    for (const [value, cohort, positions] of table.positions) {
      assert.deepEqual(await bloomPositions(spec, value, cohort), positions, `${value} in cohort ${cohort}`);
    }
  });

  test(`${key}: epsilon_1, epsilon_inf and epsilon after 1..10 rounds equal Python's`, () => {
    assertClose(assert, epsilonOneReport(spec), table.epsilon_one);
    assertClose(assert, epsilonInfinity(spec), table.epsilon_infinity);
    table.epsilon_rounds.forEach((epsilon, r) => assertClose(assert, epsilonAfterRounds(spec, r + 1), epsilon, 1e-12, `r=${r + 1}`));
  });
}

// Small filters so that every report can be enumerated; the seed's probabilities.
const SMALL = [
  { mechanism: "rappor", bits: 6, hash_count: 2, cohorts: 1, f: 0.5, p: 0.25, q: 0.75 },
  { mechanism: "rappor", bits: 6, hash_count: 3, cohorts: 1, f: 0.25, p: 0.5, q: 0.75 },
  { mechanism: "rappor", bits: 4, hash_count: 1, cohorts: 1, f: 0.8, p: 0.1, q: 0.6 },
  // What a short-answer question stores for epsilon 2 and 8 (ldp.textreports.rappor_for_epsilon, h = 2,
  // Python's reprs); above epsilon_inf(0.5) = 4.39 the permanent layer is lightened to f = 1 - q*.
  { mechanism: "rappor", bits: 6, hash_count: 2, cohorts: 1, f: 0.5, p: 0.2550813375962908, q: 0.7449186624037092, stated: 2 },
  { mechanism: "rappor", bits: 6, hash_count: 2, cohorts: 1, f: 0.11920292202211769, p: 0.0676676416183064, q: 0.9323323583816936, stated: 8 },
];

test("the RAPPOR a short-answer question chooses from its epsilon gives exactly that epsilon", () => {
  for (const spec of SMALL.filter((s) => s.stated)) assertClose(assert, epsilonOneReport(spec), spec.stated, 1e-12);
});

for (const spec of SMALL) {
  const name = `bits ${spec.bits}, h ${spec.hash_count}, f ${spec.f}, p ${spec.p}, q ${spec.q}`;
  const filters = possibleFilters(spec.bits, spec.hash_count);
  const reports = allBitVectors(spec.bits);

  test(`${name}: one report's worst log-ratio, enumerated, is epsilonOneReport`, () => {
    const rows = filters.map((bloom) => reports.map((report) => reportProbability(spec, report, bloom)));
    rows.forEach((row) => assertClose(assert, row.reduce((a, b) => a + b, 0), 1, 1e-12));
    assertClose(assert, worstLogRatio(rows), epsilonOneReport(spec), 1e-9);
  });

  test(`${name}: one report composed from the PRR and IRR tables (sum over B') is epsilonOneReport`, () => {
    const rows = composedRows(spec, filters, reports, 1);
    filters.forEach((bloom, b) =>
      reports.forEach((report, y) => assertClose(assert, rows[b][y], reportProbability(spec, report, bloom), 1e-12, `[${b}][${y}]`)),
    );
    assertClose(assert, worstLogRatio(rows), epsilonOneReport(spec), 1e-9);
  });

  test(`${name}: the permanent response's worst log-ratio, enumerated, is epsilonInfinity`, () => {
    const rows = filters.map((bloom) => reports.map((memo) => permanentProbability(spec, memo, bloom)));
    assertClose(assert, worstLogRatio(rows), epsilonInfinity(spec), 1e-9);
  });

  test(`${name}: two reports sharing one memoized B', enumerated, give epsilonAfterRounds(2)`, () => {
    const epsilon = worstLogRatio(composedRows(spec, filters, reports, 2));
    assertClose(assert, epsilon, epsilonAfterRounds(spec, 2), 1e-9);
    assert.ok(epsilon < 2 * epsilonOneReport(spec) && epsilon < epsilonInfinity(spec));
  });
}

test("the PRR and IRR set each bit with the probabilities of the spec (seeded draws)", async () => {
  const spec = TABLES["seed-fig3"].spec;
  const random = seededSource(17);
  const bloom = await bloomFilter(spec, "서울", 5);
  const [pStar, qStar] = reportOneProbabilities(spec);
  const memoOnes = new Array(spec.bits).fill(0);
  const reportOnes = new Array(spec.bits).fill(0);
  for (let draw = 0; draw < DRAWS; draw += 1) {
    const memo = permanentResponse(spec, bloom, random);
    const report = instantaneousResponse(spec, memo, random);
    memo.forEach((bit, i) => (memoOnes[i] += bit));
    report.forEach((bit, i) => (reportOnes[i] += bit));
  }
  const within = (count, p) => Math.abs(count / DRAWS - p) <= 4 * Math.sqrt((p * (1 - p)) / DRAWS);
  bloom.forEach((bit, i) => {
    assert.ok(within(memoOnes[i], bit ? 1 - spec.f / 2 : spec.f / 2), `B' bit ${i}`);
    assert.ok(within(reportOnes[i], bit ? qStar : pStar), `S bit ${i}`);
  });
});

test("randomizeRappor returns the cohort and bits of the spec's length; bad input throws", async () => {
  const spec = TABLES["seed-fig3"].spec;
  const report = await randomizeRappor(spec, "a", 3, seededSource(1));
  assert.equal(report.cohort, 3);
  assert.equal(report.bits.length, spec.bits);
  assert.ok(report.bits.every((bit) => bit === 0 || bit === 1));
  await assert.rejects(() => bloomPositions(spec, "a", spec.cohorts), RangeError);
  await assert.rejects(() => bloomPositions(spec, 7, 0), TypeError);
  assert.throws(() => checkRapporSpec({ ...spec, p: 0.8 }), RangeError);
  assert.throws(() => checkRapporSpec({ ...spec, hash_count: 9 }), RangeError);
  assert.throws(() => checkRapporSpec({ ...spec, f: 1 }), RangeError);
});

test("epsilon.js recomputes a RAPPOR or text-sketch spec's one-report epsilon and refuses malformed ones", async () => {
  const { specPrivacy } = await import("../../static/ldp/epsilon.js");
  const { SpecError } = await import("../../static/ldp/spec.js");
  const spec = TABLES["seed-fig3"].spec;
  assertClose(assert, specPrivacy(spec).epsilon, TABLES["seed-fig3"].epsilon_one);
  assert.throws(() => specPrivacy({ ...spec, q: 0.1 }), SpecError);
  const sketch = JSON.parse(readFileSync(new URL("./memo_tables.json", import.meta.url), "utf8")).sketch.spec;
  assertClose(assert, specPrivacy(sketch).epsilon, sketch.epsilon, 1e-9);
  assert.throws(() => specPrivacy({ ...sketch, keep_probability: 2 }), SpecError);
  const hadamard = JSON.parse(readFileSync(new URL("./memo_tables.json", import.meta.url), "utf8")).sketch.hadamard_spec;
  assertClose(assert, specPrivacy(hadamard).epsilon, hadamard.epsilon, 1e-9);
});
