// Tests of static/ldp/report.js: each question's report comes from its mechanism's family
// (constants.js), memoized questions from the device secret in the given Storage, and the spend
// recorded after sending is the ledger's; every branch gives exactly the report of the randomizer
// it dispatches to, on the same seeded random source and secret.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { FAMILIES } from "../../static/ldp/constants.js";
import { randomizeText, randomizeTextHadamard } from "../../static/ldp/freetext.js";
import { readLedger } from "../../static/ldp/ledger.js";
import {
  ONE_BIT_GAMMA,
  dbitflipRound,
  loadDeviceSecret,
  memoQuestionKey,
  oneBitRound,
  permanentDBitFlipSpec,
  permanentOneBitSpec,
  pinDigest,
  pinStatus,
  rapporRound,
  roundSpend,
  specDigest,
} from "../../static/ldp/memo.js";
import { randomizeSet } from "../../static/ldp/multiselect.js";
import { randomizeNumeric } from "../../static/ldp/numeric.js";
import { pairAnswer } from "../../static/ldp/pairs.js";
import { randomizeRappor } from "../../static/ldp/rappor.js";
import { randomize, uniformInt } from "../../static/ldp/randomize.js";
import { buildReport, changedPins, familyOf, ledgerSpends, memoSpend, recordSent } from "../../static/ldp/report.js";
import { MemoryStorage, forbidMathRandom, seededSource } from "./seeded.mjs";

forbidMathRandom();

const load = (name) => JSON.parse(readFileSync(new URL(`./${name}`, import.meta.url), "utf8"));
const SPECS = load("specs.json");
const SETS = load("multiselect_specs.json").specs;
const MEMO_TABLES = load("memo_tables.json");
const RAPPOR = MEMO_TABLES.rappor["seed-fig3"].spec;
const ONE_BIT = MEMO_TABLES.memo["1bitmean"].spec;

/** A memoized entry (series "pulse"), its digest computed as the page does. */
async function memoized(spec, memo) {
  const block = { series: "pulse", question: "q-mood", ...memo };
  return { question: 7, version: 1, spec, memo: block, digest: await specDigest(spec, block) };
}

/** The report buildReport makes, and the one `direct` makes, on two copies of one seeded source. */
async function bothWays(entry, answer, direct, storage = new MemoryStorage()) {
  const built = await buildReport(entry, answer, { random: seededSource(11), storage });
  return [built, await direct(seededSource(11), storage)];
}

test("every mechanism of every family has exactly one family, and an unknown one has none", () => {
  for (const [family, names] of Object.entries(FAMILIES)) {
    for (const name of names) assert.equal(familyOf(name), family, name);
  }
  assert.throws(() => familyOf("coin-flip"), RangeError);
});

test("a categorical question's option index is randomized with its spec", async () => {
  for (const key of ["krr-k5", "4bitflip", "olh", "hcms"]) {
    const entry = { question: 1, spec: SPECS[key] };
    const [built, direct] = await bothWays(entry, { index: 2, value: 2 }, (random) => randomize(SPECS[key], 2, random));
    assert.deepEqual(built, direct, key);
  }
});

test("a numeric question's value, and a multi-select question's set, are randomized with their specs", async () => {
  const numeric = { question: 2, spec: SPECS["num-piecewise"] };
  assert.deepEqual(...(await bothWays(numeric, { index: -1, value: 3.7 }, (random) => randomizeNumeric(numeric.spec, 3.7, random))));
  for (const key of ["set-oue-k4-l3", "padding-krr-k4-l2"]) {
    const entry = { question: 3, spec: SETS[key] };
    assert.deepEqual(...(await bothWays(entry, { chosen: [0, 2] }, (random) => randomizeSet(SETS[key], [0, 2], random))), key);
  }
});

test("free text goes to its sketch, or to RAPPOR in a uniformly drawn cohort", async () => {
  const cms = { question: 4, spec: MEMO_TABLES.sketch.spec };
  const hcms = { question: 4, spec: MEMO_TABLES.sketch.hadamard_spec };
  const rappor = { question: 4, spec: RAPPOR };
  assert.equal(cms.spec.mechanism, "text-cms");
  assert.deepEqual(...(await bothWays(cms, { text: "서울" }, (random) => randomizeText(cms.spec, "서울", random))));
  assert.deepEqual(...(await bothWays(hcms, { text: "서울" }, (random) => randomizeTextHadamard(hcms.spec, "서울", random))));
  const [built, direct] = await bothWays(rappor, { text: "서울" }, (random) =>
    randomizeRappor(RAPPOR, "서울", uniformInt(RAPPOR.cohorts, random), random),
  );
  assert.deepEqual(built, direct);
});

test("a one-layer question never reads the device secret", async () => {
  const storage = new MemoryStorage();
  await buildReport({ question: 1, spec: SPECS["4bitflip"] }, { index: 1 }, { random: seededSource(1), storage });
  assert.equal(storage.items.size, 0);
});

test("memoized dBitFlip, 1BitMean and RAPPOR are the device secret's two-layer rounds, keyed by the digest", async () => {
  const storage = new MemoryStorage();
  const secret = loadDeviceSecret(storage);
  const dbitflip = await memoized(SPECS["4bitflip"], { layers: "memoized-bits+flip", gamma: 0.1 });
  const key = memoQuestionKey("q-mood", dbitflip.digest);
  const bits = permanentDBitFlipSpec(dbitflip.spec, 0.1);
  const round = (random) => dbitflipRound(secret, "pulse", key, 3, bits, 0.1, random);
  assert.deepEqual(...(await bothWays(dbitflip, { index: 3, value: 3 }, round, storage)));
  const oneBit = await memoized(ONE_BIT, { layers: "memoized-bit+flip", gamma: ONE_BIT_GAMMA });
  const bit = permanentOneBitSpec(ONE_BIT, ONE_BIT_GAMMA);
  const oneBitKey = memoQuestionKey("q-mood", oneBit.digest);
  const oneBitRoundOf = (random) => oneBitRound(secret, "pulse", oneBitKey, 6.2, bit, ONE_BIT_GAMMA, random);
  assert.deepEqual(...(await bothWays(oneBit, { index: -1, value: 6.2 }, oneBitRoundOf, storage)));
  const rappor = await memoized(RAPPOR, { layers: "memoized-prr+irr" });
  const rapporKey = memoQuestionKey("q-mood", rappor.digest);
  const rapporRoundOf = (random) => rapporRound(secret, "pulse", rapporKey, "서울", RAPPOR, random);
  assert.deepEqual(...(await bothWays(rappor, { text: "서울" }, rapporRoundOf, storage)));
});

test("the device secret is created in the given storage on the first memoized answer and kept", async () => {
  const storage = new MemoryStorage();
  const entry = await memoized(SPECS["4bitflip"], { layers: "memoized-bits+flip", gamma: 0.1 });
  await buildReport(entry, { index: 0 }, { random: seededSource(2), storage });
  const secret = loadDeviceSecret(storage);
  const key = memoQuestionKey("q-mood", entry.digest);
  const direct = await dbitflipRound(secret, "pulse", key, 0, permanentDBitFlipSpec(entry.spec, 0.1), 0.1, seededSource(3));
  assert.deepEqual(await buildReport(entry, { index: 0 }, { random: seededSource(3), storage }), direct);
});

test("a memoized question needs its digest; a memo block on a mechanism without a memoized form is one layer", async () => {
  const entry = await memoized(SPECS["4bitflip"], { layers: "memoized-bits+flip", gamma: 0.1 });
  delete entry.digest;
  await assert.rejects(buildReport(entry, { index: 0 }, { random: seededSource(1), storage: new MemoryStorage() }), /digest/);
  const krr = { question: 1, spec: SPECS["krr-k5"], memo: { series: "pulse", question: "q" } };
  assert.deepEqual(...(await bothWays(krr, { index: 4 }, (random) => randomize(SPECS["krr-k5"], 4, random))));
});

test("a declared pair's joint index is randomized, memoized under dBitFlip like any dBitFlip question", async () => {
  const spec = SPECS["3bitflip-k8"];
  const index = pairAnswer(spec, 2, 4, 1, 3);
  assert.deepEqual(...(await bothWays({ question: 9, spec }, { index }, (random) => randomize(spec, index, random))));
  const storage = new MemoryStorage();
  const entry = await memoized(spec, { layers: "memoized-bits+flip", gamma: 0.1 });
  const key = memoQuestionKey("q-mood", entry.digest);
  const [built, direct] = await bothWays(
    entry,
    { index },
    (random, s) => dbitflipRound(loadDeviceSecret(s), "pulse", key, index, permanentDBitFlipSpec(spec, 0.1), 0.1, random),
    storage,
  );
  assert.deepEqual(built, direct);
});

test("a memoized question's spend is its permanent layer's bound: dBitFlip and 1BitMean at their gamma", async () => {
  const dbitflip = await memoized(SPECS["4bitflip"], { layers: "memoized-bits+flip", gamma: 0.1 });
  assert.deepEqual(memoSpend(dbitflip), roundSpend(permanentDBitFlipSpec(dbitflip.spec, 0.1), 0.1).memo);
  const oneBit = await memoized(ONE_BIT, { layers: "memoized-bit+flip", gamma: ONE_BIT_GAMMA });
  assert.deepEqual(memoSpend(oneBit), roundSpend(permanentOneBitSpec(ONE_BIT, ONE_BIT_GAMMA), ONE_BIT_GAMMA).memo);
  const rappor = await memoized(RAPPOR, { layers: "memoized-prr+irr" });
  assert.deepEqual(memoSpend(rappor), roundSpend(RAPPOR).memo);
});

test("the ledger records each received question's epsilon; a round under its series, memoized with its bound", async () => {
  const rappor = await memoized(RAPPOR, { layers: "memoized-prr+irr" });
  const entries = new Map([
    [1, { question: 1, spec: SPECS["krr-k5"] }],
    [7, rappor],
  ]);
  const receipt = [
    { question: 1, epsilon: 1 },
    { question: 7, epsilon: 2.04 },
  ];
  const once = ledgerSpends(receipt, entries, { survey: "s1", title: "Course", series: null, round: null });
  assert.deepEqual(once, [
    { survey: "s1", title: "Course", series: null, round: null, question: "1", epsilon: 1, memo: null },
    { survey: "s1", title: "Course", series: null, round: null, question: "q-mood", epsilon: 2.04, memo: { ...memoSpend(rappor), digest: rappor.digest } },
  ]);
  const round = ledgerSpends(receipt, entries, { survey: "s1", title: "Pulse", series: "pulse", round: 3 });
  assert.deepEqual(
    round.map(({ survey, series, round: r, question }) => [survey, series, r, question]),
    [
      ["pulse", "pulse", 3, "1"],
      ["pulse", "pulse", 3, "q-mood"],
    ],
  );
});

test("after sending, the spends go to the ledger and the memoized digests are pinned, in the given storage only", async () => {
  const storage = new MemoryStorage();
  const rappor = await memoized(RAPPOR, { layers: "memoized-prr+irr" });
  const entries = new Map([
    [1, { question: 1, spec: SPECS["krr-k5"] }],
    [7, rappor],
  ]);
  const page = { survey: "s1", title: "Pulse", series: "pulse", round: 2 };
  recordSent([{ question: 1, epsilon: 1 }, { question: 7, epsilon: 2.04 }], entries, page, storage);
  assert.deepEqual(
    readLedger(storage).map((entry) => [entry.question, entry.epsilon, entry.round]),
    [
      ["1", 1, 2],
      ["q-mood", 2.04, 2],
    ],
  );
  assert.equal(pinStatus("pulse", "q-mood", rappor.digest, storage), "same");
  const refusing = {
    getItem() {
      throw new Error("disabled");
    },
    setItem() {
      throw new Error("disabled");
    },
    removeItem() {},
  };
  assert.doesNotThrow(() => recordSent([{ question: 7, epsilon: 2.04 }], entries, page, refusing));
});

test("a memoized question answered before under other parameters is reported changed, with its digest set", async () => {
  const storage = new MemoryStorage();
  const before = await memoized(SPECS["4bitflip"], { layers: "memoized-bits+flip", gamma: 0.1 });
  const now = { question: 7, spec: SPECS["4bitflip"], memo: { ...before.memo, gamma: 0.2 } };
  const plain = { question: 1, spec: SPECS["krr-k5"] };
  assert.deepEqual(await changedPins([now, plain], storage), []);
  assert.equal(now.digest, await specDigest(now.spec, now.memo));
  pinDigest("pulse", "q-mood", before.digest, storage);
  assert.deepEqual(await changedPins([now, plain], storage), [now]);
  const refusing = {
    getItem() {
      throw new Error("disabled");
    },
  };
  assert.deepEqual(await changedPins([now], refusing), []);
});
