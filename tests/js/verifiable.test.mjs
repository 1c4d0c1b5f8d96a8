// Tests of the browser's side of verifiable randomization (static/ldp/verifiable.js) against
// ldp/verifiable.py: the group's constants, the exact law of the slot the server takes (what it
// learns must be epsilon-LDP whatever slot it picks), and the proofs of a seeded answer. That Python's
// server accepts this module's answers is tested from Python (tests/ldp/test_verifiable.py).

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  P,
  Q,
  challenge,
  checkChannel,
  fixedBase,
  generators,
  hexToBytes,
  modPow,
  respond,
  shuffledSlots,
} from "../../static/ldp/verifiable.js";
import { forbidMathRandom } from "./seeded.mjs";
import { seededSource, worstLogRatio } from "./tables.mjs";

forbidMathRandom();

const SMALL = { counts: [[3, 1, 1], [1, 3, 1], [1, 1, 3]] }; // k-RR at ln 3, n = 5
const TINY = { counts: [[2, 1], [1, 2]] };

/** Every path of the Fisher-Yates shuffle (each draw below i + 1, i from n - 1 down to 1). */
function* allPaths(n) {
  const sizes = Array.from({ length: n - 1 }, (_, i) => n - i);
  const path = sizes.map(() => 0);
  for (;;) {
    yield [...path];
    let i = path.length - 1;
    while (i >= 0 && path[i] === sizes[i] - 1) path[i--] = 0;
    if (i < 0) return;
    path[i] += 1;
  }
}

test("the group is the one of ldp.verifiable", async () => {
  assert.equal(P.toString(16).length, 512);
  assert.equal(Q.toString(16).length, 64);
  assert.equal((P - 1n) % Q, 0n);
  const [G, H] = await generators();
  // The first hex digits Python's ldp.verifiable prints for G and H.
  assert.ok(G.toString(16).startsWith("ccf46b678787ea0c"));
  assert.ok(H.toString(16).startsWith("1953f3ed5986b6ac"));
  assert.equal(modPow(G, Q), 1n);
  assert.equal(fixedBase(H)(Q - 7n), modPow(H, Q - 7n));
});

test("the slot the server takes is a draw of the channel for every slot it could pick: exact", () => {
  const { slots: n, inputs } = checkChannel(SMALL);
  const table = [];
  for (let x = 0; x < inputs; x += 1) {
    const counts = Array.from({ length: n }, () => [0, 0, 0]);
    let paths = 0;
    for (const path of allPaths(n)) {
      const draws = path[Symbol.iterator]();
      const slots = shuffledSlots(SMALL, x, () => draws.next().value);
      slots.forEach((y, j) => (counts[j][y] += 1));
      paths += 1;
    }
    assert.equal(paths, 120);
    for (let j = 0; j < n; j += 1) {
      // P(slot j = y | x) = counts[y][x] / n exactly: 120 paths, 24 per slot.
      assert.deepEqual(counts[j], SMALL.counts.map((row) => (row[x] * paths) / n));
    }
    table.push(counts[0].map((c) => c / paths));
  }
  assert.ok(Math.abs(worstLogRatio(table) - Math.log(3)) < 1e-15);
});

test("a seeded answer's bit proofs check under its own challenge", async () => {
  const [G, H] = await generators();
  const offer = { session: "ab".repeat(32), key: `0x${modPow(G, 12345n).toString(16)}` };
  const message = await respond(TINY, 1, offer, seededSource(7));
  assert.equal(message.inputs.length, 2);
  assert.equal(message.slots.length, 3);
  assert.equal(message.bit_proofs.length, 2 + 3 * 2);
  const c = await challenge(hexToBytes(offer.session), BigInt(offer.key), TINY, message);
  const commitments = [...message.inputs, ...message.slots.flat()].map(BigInt);
  const gInverse = modPow(G, Q - 1n);
  message.bit_proofs.forEach((proof, i) => {
    const [a0, a1, c0, z0, z1] = proof.map(BigInt);
    const c1 = (((c - c0) % Q) + Q) % Q;
    assert.equal(modPow(H, z0), (a0 * modPow(commitments[i], c0)) % P);
    assert.equal(modPow(H, z1), (a1 * modPow((commitments[i] * gInverse) % P, c1)) % P);
  });
  // A second answer from the same seed is the same message: all randomness comes from the source.
  assert.deepEqual(await respond(TINY, 1, offer, seededSource(7)), message);
});

test("bad channels and answers are refused", async () => {
  assert.throws(() => checkChannel({ counts: [[2, 1], [1, 1]] }), RangeError);
  assert.throws(() => checkChannel({ counts: [[65], [0]] }), RangeError);
  await assert.rejects(respond(TINY, 2, { session: "00", key: "0x2" }), RangeError);
  await assert.rejects(respond(TINY, 0, { session: "00", key: "0x2" }), /not in the group/);
});
