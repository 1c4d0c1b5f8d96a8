// Tests of static/ldp/randomize.js against the client specs ldp makes (tests/js/specs.json).
//
// Frequencies: DRAWS = 100,000 reports per check from a seeded source; an observed share
// must lie within 4 standard errors, sqrt(p (1 - p) / draws), of the probability the spec
// implies. Privacy: the report distribution the spec implies is enumerated and its worst
// likelihood ratio must equal e^epsilon (relative error 1e-9).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  bernoulli,
  cryptoRandomSource,
  hadamardSign,
  randomize,
  randomizeCms,
  randomizeDBitFlip,
  randomizeHadamard,
  randomizeHcms,
  randomizeKrr,
  randomizeOlh,
  randomizeSubset,
  uniformInt,
  uniformUnit,
} from "../../static/ldp/randomize.js";
import {
  bitflipTable,
  cmsTable,
  hadamardTable,
  hcmsTable,
  krrTable,
  olhHash,
  olhTable,
  seededSource,
  subsetTable,
  worstLogRatio,
} from "./tables.mjs";

const SPECS = JSON.parse(readFileSync(new URL("./specs.json", import.meta.url), "utf8"));
const DRAWS = 100_000;

// Math.random must never be used: make any use fail loudly.
Math.random = () => {
  throw new Error("Math.random called");
};

/** A source that replays the given words. */
function scriptedSource(words) {
  let i = 0;
  return (out) => {
    for (let j = 0; j < out.length; j += 1) out[j] = words[i++];
    return out;
  };
}

function assertShare(count, draws, p, label) {
  const share = count / draws;
  const se = Math.sqrt((p * (1 - p)) / draws);
  assert.ok(Math.abs(share - p) <= 4 * se, `${label}: share ${share} vs ${p} (se ${se})`);
}

function assertExactEpsilon(table, epsilon) {
  for (const row of table) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12);
  const ratio = worstLogRatio(table);
  assert.ok(Math.abs(ratio - epsilon) <= 1e-9 * epsilon, `worst log ratio ${ratio} != epsilon ${epsilon}`);
}

// -- random primitives ---------------------------------------------------------------------

test("uniformInt rejects the words that would cause modulo bias", () => {
  // bound 3: 2^32 mod 3 = 1, so the single word 2^32 - 1 is rejected and the next one used.
  assert.equal(uniformInt(3, scriptedSource([4294967295, 7])), 1);
  assert.equal(uniformInt(3, scriptedSource([4294967294])), 4294967294 % 3);
});

test("uniformInt is uniform over small bounds", () => {
  const random = seededSource(1);
  for (const bound of [2, 3, 5, 7]) {
    const counts = new Array(bound).fill(0);
    for (let i = 0; i < DRAWS; i += 1) counts[uniformInt(bound, random)] += 1;
    counts.forEach((count, value) => assertShare(count, DRAWS, 1 / bound, `uniformInt(${bound}) = ${value}`));
  }
});

test("uniformInt refuses bounds it cannot draw from", () => {
  for (const bad of [0, -1, 1.5, 2 ** 33]) assert.throws(() => uniformInt(bad, seededSource(1)), RangeError);
});

test("uniformUnit uses 53 bits and stays in [0, 1)", () => {
  assert.equal(uniformUnit(scriptedSource([0, 0])), 0);
  assert.equal(uniformUnit(scriptedSource([0xffffffff, 0xffffffff])), 1 - 2 ** -53);
  assert.equal(uniformUnit(scriptedSource([0, 64])), 2 ** -53);
});

test("bernoulli(p) is true with probability p", () => {
  const random = seededSource(2);
  for (const p of [0.01, 0.25, 0.731]) {
    let ones = 0;
    for (let i = 0; i < DRAWS; i += 1) ones += bernoulli(p, random) ? 1 : 0;
    assertShare(ones, DRAWS, p, `bernoulli(${p})`);
  }
});

test("the default source is crypto.getRandomValues", () => {
  const original = globalThis.crypto.getRandomValues.bind(globalThis.crypto);
  let calls = 0;
  const spy = (words) => {
    calls += 1;
    return original(words);
  };
  Object.defineProperty(globalThis.crypto, "getRandomValues", { value: spy, configurable: true });
  try {
    randomize(SPECS["krr-k5"], 2);
    cryptoRandomSource()(new Uint32Array(1));
  } finally {
    Object.defineProperty(globalThis.crypto, "getRandomValues", { value: original, configurable: true });
  }
  assert.ok(calls >= 2);
});

test("the module never mentions Math.random", () => {
  const source = readFileSync(new URL("../../static/ldp/randomize.js", import.meta.url), "utf8");
  assert.ok(!source.includes("Math.random"));
});

// -- k-RR ----------------------------------------------------------------------------------

for (const key of ["krr-k5", "krr-k2", "krr-k12"]) {
  test(`k-RR ${key}: shape and frequencies match the spec`, () => {
    const spec = SPECS[key];
    const random = seededSource(3);
    const answer = spec.k - 1;
    const counts = new Array(spec.k).fill(0);
    for (let i = 0; i < DRAWS; i += 1) {
      const report = randomizeKrr(spec, answer, random);
      assert.deepEqual(Object.keys(report), ["value"]);
      counts[report.value] += 1;
    }
    const implied = krrTable(spec)[answer];
    counts.forEach((count, y) => assertShare(count, DRAWS, implied[y], `${key} report ${y}`));
  });

  test(`k-RR ${key}: the implied ratio is exactly e^epsilon`, () => {
    assertExactEpsilon(krrTable(SPECS[key]), SPECS[key].epsilon);
  });
}

// -- CMS -----------------------------------------------------------------------------------

for (const key of ["cms-small", "cms-default"]) {
  test(`CMS ${key}: shape and frequencies match the spec`, () => {
    const spec = SPECS[key];
    const random = seededSource(4);
    const answer = 2;
    const draws = key === "cms-default" ? 20_000 : DRAWS;
    const hashCounts = new Array(spec.hash_count).fill(0);
    let keptAtPosition = 0;
    let flippedElsewhere = 0;
    for (let i = 0; i < draws; i += 1) {
      const report = randomizeCms(spec, answer, random);
      assert.equal(report.bits.length, spec.width);
      assert.ok(report.bits.every((bit) => bit === 0 || bit === 1));
      hashCounts[report.hash_index] += 1;
      const position = spec.hashes[report.hash_index][answer];
      keptAtPosition += report.bits[position];
      flippedElsewhere += report.bits.reduce((sum, bit, j) => sum + (j === position ? 0 : bit), 0);
    }
    assertShare(keptAtPosition, draws, spec.keep_probability, `${key} +1 kept`);
    assertShare(flippedElsewhere, draws * (spec.width - 1), 1 - spec.keep_probability, `${key} -1 flipped`);
    if (key === "cms-small") {
      hashCounts.forEach((count, j) => assertShare(count, draws, 1 / spec.hash_count, `${key} hash ${j}`));
    }
  });
}

test("CMS: the implied ratio is exactly e^epsilon", () => {
  assertExactEpsilon(cmsTable(SPECS["cms-tiny"]), SPECS["cms-tiny"].epsilon);
});

// -- dBitFlip ------------------------------------------------------------------------------

for (const key of ["4bitflip", "5bitflip", "1bitflip", "3bitflip-k8", "sue", "oue", "oue-k3"]) {
  test(`dBitFlip ${key}: shape and frequencies match the spec`, () => {
    const spec = SPECS[key];
    const random = seededSource(5);
    const answer = 1;
    const sampled = new Array(spec.k).fill(0);
    const ones = new Array(spec.k).fill(0);
    for (let i = 0; i < DRAWS; i += 1) {
      const report = randomizeDBitFlip(spec, answer, random);
      assert.equal(report.buckets.length, spec.d);
      assert.equal(new Set(report.buckets).size, spec.d);
      assert.deepEqual(report.buckets, [...report.buckets].sort((a, b) => a - b));
      report.buckets.forEach((bucket, i) => {
        sampled[bucket] += 1;
        ones[bucket] += report.bits[i];
      });
    }
    sampled.forEach((count, bucket) => assertShare(count, DRAWS, spec.d / spec.k, `${key} bucket ${bucket} sampled`));
    ones.forEach((count, bucket) => {
      const p = bucket === answer ? spec.true_bit_probability : spec.other_bit_probability;
      assertShare(count, sampled[bucket], p, `${key} bucket ${bucket} sends 1`);
    });
  });

  test(`dBitFlip ${key}: the implied ratio is exactly e^epsilon`, () => {
    assertExactEpsilon(bitflipTable(SPECS[key]), SPECS[key].epsilon);
  });
}

// -- optimal local hashing -----------------------------------------------------------------

test("OLH: coefficients are uniform and the value is the hash with keep_probability", () => {
  const spec = SPECS["olh"];
  const random = seededSource(8);
  const answer = 3;
  let kept = 0;
  const sums = [0, 0, 0];
  for (let i = 0; i < DRAWS; i += 1) {
    const report = randomizeOlh(spec, answer, random);
    assert.equal(report.hash.length, 3);
    assert.ok(report.value >= 0 && report.value < spec.range_size);
    report.hash.forEach((coefficient, j) => (sums[j] += coefficient));
    kept += report.value === olhHash(spec, report.hash, answer) ? 1 : 0;
  }
  assertShare(kept, DRAWS, spec.keep_probability, "olh value = h(answer)");
  const sd = spec.prime / Math.sqrt(12);
  for (const sum of sums) {
    assert.ok(Math.abs(sum / DRAWS - (spec.prime - 1) / 2) < (4 * sd) / Math.sqrt(DRAWS));
  }
});

test("OLH: the implied ratio is exactly e^epsilon", () => {
  assertExactEpsilon(olhTable(SPECS["olh-tiny"]), SPECS["olh-tiny"].epsilon);
});

// -- subset selection ----------------------------------------------------------------------

for (const key of ["subset", "subset-k6"]) {
  test(`subset selection ${key}: sets have the right size and membership frequencies`, () => {
    const spec = SPECS[key];
    const random = seededSource(9);
    const answer = 1;
    const counts = new Array(spec.k).fill(0);
    for (let i = 0; i < DRAWS; i += 1) {
      const { subset } = randomizeSubset(spec, answer, random);
      assert.equal(subset.length, spec.subset_size);
      assert.equal(new Set(subset).size, spec.subset_size);
      subset.forEach((option) => (counts[option] += 1));
    }
    const w = spec.subset_size;
    const other = (spec.in_probability * (w - 1) + (1 - spec.in_probability) * w) / (spec.k - 1);
    counts.forEach((count, option) =>
      assertShare(count, DRAWS, option === answer ? spec.in_probability : other, `${key} option ${option}`),
    );
  });

  test(`subset selection ${key}: the implied ratio is exactly e^epsilon`, () => {
    assertExactEpsilon(subsetTable(SPECS[key]), SPECS[key].epsilon);
  });

}

// -- Hadamard response ---------------------------------------------------------------------

test("Hadamard signs are the Sylvester matrix", () => {
  assert.deepEqual(
    [0, 1, 2, 3].map((a) => [0, 1, 2, 3].map((b) => hadamardSign(a, b))),
    [
      [1, 1, 1, 1],
      [1, -1, 1, -1],
      [1, 1, -1, -1],
      [1, -1, -1, 1],
    ],
  );
});

for (const key of ["hadamard", "hadamard-k20"]) {
  test(`Hadamard response ${key}: index frequencies match the spec`, () => {
    const spec = SPECS[key];
    const random = seededSource(10);
    const answer = 2;
    const counts = new Array(spec.size).fill(0);
    for (let i = 0; i < DRAWS; i += 1) counts[randomizeHadamard(spec, answer, random).index] += 1;
    const inside = new Set(spec.sets[answer]);
    counts.forEach((count, j) => {
      const p = (inside.has(j) ? spec.in_probability : 1 - spec.in_probability) / (spec.size / 2);
      assertShare(count, DRAWS, p, `${key} index ${j}`);
    });
  });

  test(`Hadamard response ${key}: the implied ratio is exactly e^epsilon`, () => {
    assertExactEpsilon(hadamardTable(SPECS[key]), SPECS[key].epsilon);
  });

}

// -- HCMS ----------------------------------------------------------------------------------

test("HCMS: indices are uniform and the bit follows the transform's sign", () => {
  const spec = SPECS["hcms"];
  const random = seededSource(11);
  const answer = 4;
  let agree = 0;
  const hashCounts = new Array(spec.hash_count).fill(0);
  const coefficientCounts = new Array(spec.width).fill(0);
  for (let i = 0; i < DRAWS; i += 1) {
    const report = randomizeHcms(spec, answer, random);
    hashCounts[report.hash_index] += 1;
    coefficientCounts[report.coefficient] += 1;
    const sign = hadamardSign(report.coefficient, spec.hashes[report.hash_index][answer]);
    agree += (report.bit === 1 ? 1 : -1) === sign ? 1 : 0;
  }
  assertShare(agree, DRAWS, spec.keep_probability, "hcms sign kept");
  hashCounts.forEach((count, j) => assertShare(count, DRAWS, 1 / spec.hash_count, `hcms hash ${j}`));
  coefficientCounts.forEach((count, l) => assertShare(count, DRAWS, 1 / spec.width, `hcms coefficient ${l}`));
});

test("HCMS: the implied ratio is exactly e^epsilon", () => {
  assertExactEpsilon(hcmsTable(SPECS["hcms-tiny"]), SPECS["hcms-tiny"].epsilon);
});

// -- dispatch and validation ---------------------------------------------------------------

test("randomize dispatches on the spec's mechanism", () => {
  assert.deepEqual(Object.keys(randomize(SPECS["krr-k5"], 0, seededSource(6))), ["value"]);
  assert.deepEqual(Object.keys(randomize(SPECS["cms-small"], 0, seededSource(6))), ["hash_index", "bits"]);
  assert.deepEqual(Object.keys(randomize(SPECS["4bitflip"], 0, seededSource(6))), ["buckets", "bits"]);
  assert.deepEqual(Object.keys(randomize(SPECS["oue"], 0, seededSource(6))), ["buckets", "bits"]);
  assert.deepEqual(Object.keys(randomize(SPECS["olh"], 0, seededSource(6))), ["hash", "value"]);
  assert.deepEqual(Object.keys(randomize(SPECS["subset"], 0, seededSource(6))), ["subset"]);
  assert.deepEqual(Object.keys(randomize(SPECS["hadamard"], 0, seededSource(6))), ["index"]);
  assert.deepEqual(Object.keys(randomize(SPECS["hcms"], 0, seededSource(6))), ["hash_index", "coefficient", "bit"]);
  assert.throws(() => randomize({ ...SPECS["krr-k5"], mechanism: "rappor" }, 0), /SpecError|mechanism must be one of/);
});

test("answers outside the options are refused", () => {
  for (const key of ["krr-k5", "cms-small", "4bitflip", "oue", "olh", "subset", "hadamard", "hcms"]) {
    for (const bad of [-1, 5, 1.5, "1"]) {
      assert.throws(() => randomize(SPECS[key], bad, seededSource(7)), RangeError);
    }
  }
});
