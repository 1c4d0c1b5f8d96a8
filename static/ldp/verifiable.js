/**
 * Verifiable randomization, the browser's side: mirror of ldp/verifiable.py (read its docstring for the
 * protocol, the group and the proofs; Kato, Cao and Yoshikawa, DBSec 2021).
 *
 * The browser fills the channel's n slots for its answer, shuffles them with crypto.getRandomValues,
 * commits to its one-hot answer and to every slot, encrypts slot i under the server's transfer key K_i
 * and proves, with one Fiat-Shamir challenge (SHA-512 by WebCrypto), that the slots are the channel's
 * multiset for the committed answer and that every ciphertext holds its slot. The server takes one slot
 * it chose in secret; the browser never learns which, so it cannot choose its report, only its answer.
 *
 * Arithmetic is BigInt modulo the 2048-bit prime P (exponents mod the 256-bit prime Q). The message is
 * byte-for-byte what ldp.verifiable.respond builds from the same random draws.
 */

import { cryptoRandomSource, uniformInt } from "./randomize.js";

/** @typedef {(words: Uint32Array) => Uint32Array} RandomSource */
/** @typedef {{counts: number[][]}} ChannelSpec  counts[y][x]: slots of output y for answer x */

export const P = BigInt(
  "0xd51c6f2b5df312969c34b45200807ba25de4629a2d27813483fa8bae77a3c70a7bbd71e74d4602e67b482503d458a4383dcea04cce" +
    "ad9e3d267c1616d41c07b3c7ff24bc0dd445b4989d1e743e48de5dfbf7bbe561e552cf0323e3b7bfa9ff4374c81aa7c7c7c4e582a785" +
    "671ff825af5b0ce44883a4262105fe9ab7d38128817f4235297f2872045e48f3a3c263a644d4b2d1aabe62925c31255e594220462dde" +
    "a91b364572f71f79c4e2cf958efca84b0c321840f1ea73f13a6098381bb7f9ffcf9d1986bf047db8f8bea3b67db956998ae034e7da94" +
    "6dd545be4b1533354868338c4700dfb0eaa563268e73ade150d9f13397ca10fbbe41aaddde416496b7",
);
export const Q = BigInt("0x9f5b918cb295e111d28ea6e0e3f583c88ee0c9d4372c4474ee774ff46c317477");
const COFACTOR = (P - 1n) / Q;
const ELEMENT_BYTES = 256;
const DOMAIN = new TextEncoder().encode("murmur-vrm-v1");

/** base^exponent mod modulus, square and multiply (exponent >= 0). */
export function modPow(base, exponent, modulus = P) {
  let result = 1n;
  let b = base % modulus;
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
    e >>= 1n;
  }
  return result;
}

/**
 * Powers of a fixed base by 4-bit windows: table[w][d] = base^(d 16^w), so base^e is one product per
 * nonzero window of e (at most 64 for e < Q), where square and multiply needs about 384.
 */
export function fixedBase(base) {
  const table = [];
  let power = base;
  for (let w = 0; w < 64; w += 1) {
    const row = [1n];
    for (let d = 1; d < 16; d += 1) row.push((row[d - 1] * power) % P);
    table.push(row);
    power = (row[15] * power) % P;
  }
  return (exponent) => {
    let result = 1n;
    let e = exponent;
    for (let w = 0; e > 0n; w += 1, e >>= 4n) {
      const d = Number(e & 15n);
      if (d) result = (result * table[w][d]) % P;
    }
    return result;
  };
}

/** x mod m in [0, m). */
const mod = (x, m) => ((x % m) + m) % m;
const inverse = (x) => modPow(x, Q - 1n); // elements have order Q

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function counterBytes(i) {
  return new Uint8Array([(i >>> 24) & 255, (i >>> 16) & 255, (i >>> 8) & 255, i & 255]);
}

function bytesToBigInt(bytes) {
  let hex = "0x0";
  for (const b of bytes) hex += b.toString(16).padStart(2, "0");
  return BigInt(hex);
}

/** x as `length` big-endian bytes. */
export function toBytes(x, length = ELEMENT_BYTES) {
  const out = new Uint8Array(length);
  let v = x;
  for (let i = length - 1; i >= 0; i -= 1) {
    out[i] = Number(v & 255n);
    v >>= 8n;
  }
  return out;
}

export function hexToBytes(hex) {
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

async function sha512(bytes) {
  return new Uint8Array(await globalThis.crypto.subtle.digest("SHA-512", bytes));
}

/** The first `bits` bits of SHA-512(tag || 0) || SHA-512(tag || 1) || ... (Python's expand). */
export async function expand(tag, bits) {
  const blocks = [];
  for (let i = 0; blocks.length * 512 < bits; i += 1) blocks.push(await sha512(concat([tag, counterBytes(i)])));
  return bytesToBigInt(concat(blocks)) >> BigInt(blocks.length * 512 - bits);
}

/** An element of the order-Q subgroup with no known logarithm (Python's hash_to_group). */
export async function hashToGroup(tag) {
  for (let counter = 0; ; counter += 1) {
    const element = modPow((await expand(concat([tag, counterBytes(counter)]), 2304)) % P, COFACTOR);
    if (element !== 1n) return element;
  }
}

const ascii = (text) => new TextEncoder().encode(text);
let bases = null;
const transferBases = new Map();

/** G and H, computed once. */
export async function generators() {
  bases ??= Promise.all([hashToGroup(ascii("murmur-vrm-g")), hashToGroup(ascii("murmur-vrm-h"))]);
  return bases;
}

let powers = null;
/** Fixed-base exponentiation for G and H (tables built once). */
async function generatorPowers() {
  powers ??= generators().then(([G, H]) => [fixedBase(G), fixedBase(H)]);
  return powers;
}

/** B_i (i >= 1), the oblivious transfer's fixed elements, computed once each. */
export function transferBase(i) {
  if (!transferBases.has(i)) transferBases.set(i, hashToGroup(concat([ascii("murmur-vrm-ot"), counterBytes(i)])));
  return transferBases.get(i);
}

/** A uniform scalar in [0, Q): 256 random bits, rejected until below Q. */
export function randomScalar(random) {
  for (;;) {
    const words = random(new Uint32Array(8));
    let x = 0n;
    for (const w of words) x = (x << 32n) | BigInt(w);
    if (x < Q) return x;
  }
}

function inGroup(x) {
  return x > 1n && x < P && modPow(x, Q) === 1n;
}

/** Check a channel spec: non-negative integer counts, every answer's column summing to the same n <= 64. */
export function checkChannel(channel) {
  const counts = channel?.counts;
  if (!Array.isArray(counts) || !counts.length || !Array.isArray(counts[0]) || !counts[0].length) {
    throw new RangeError("channel.counts must be a non-empty matrix");
  }
  const inputs = counts[0].length;
  const sums = new Set();
  for (let x = 0; x < inputs; x += 1) {
    let sum = 0;
    for (const row of counts) {
      if (row.length !== inputs || !Number.isInteger(row[x]) || row[x] < 0) throw new RangeError("bad channel counts");
      sum += row[x];
    }
    sums.add(sum);
  }
  const [n] = sums;
  if (sums.size !== 1 || n < 1 || n > 64) throw new RangeError("every answer needs the same number of slots, at most 64");
  return { slots: n, inputs, outputs: counts.length };
}

/**
 * The slots of answer `value` (counts[y][value] copies of y, by y) shuffled by Fisher-Yates.
 * @param {ChannelSpec} channel
 * @param {number} value
 * @param {(bound: number) => number} below  uniform integers in [0, bound)
 */
export function shuffledSlots(channel, value, below) {
  const slots = [];
  channel.counts.forEach((row, y) => {
    for (let c = 0; c < row[value]; c += 1) slots.push(y);
  });
  for (let i = slots.length - 1; i > 0; i -= 1) {
    const j = below(i + 1);
    [slots[i], slots[j]] = [slots[j], slots[i]];
  }
  return slots;
}

const hex = (x) => `0x${x.toString(16)}`;

/**
 * The browser's answer to the server's offer {session, key} for answer `value` (step 2 of the protocol).
 * @param {ChannelSpec} channel
 * @param {number} value
 * @param {{session: string, key: string}} offer
 * @param {RandomSource} [random]
 */
export async function respond(channel, value, offer, random = cryptoRandomSource()) {
  const { slots: n, inputs: kIn, outputs: kOut } = checkChannel(channel);
  if (!Number.isInteger(value) || value < 0 || value >= kIn) throw new RangeError(`value must be in [0, ${kIn})`);
  const key = BigInt(offer.key);
  if (!inGroup(key)) throw new RangeError("the server's key is not in the group");
  const session = hexToBytes(offer.session);
  const [G] = await generators();
  const [powG, powH] = await generatorPowers();
  const gInverse = inverse(G);
  const commit = (bit) => {
    const r = randomScalar(random);
    return [((bit ? G : 1n) * powH(r)) % P, r];
  };
  const slots = shuffledSlots(channel, value, (bound) => uniformInt(bound, random));
  const inputs = Array.from({ length: kIn }, (_, u) => commit(u === value ? 1 : 0));
  const cells = slots.map((slot) => Array.from({ length: kOut }, (_, y) => commit(y === slot ? 1 : 0)));
  const keyInverse = inverse(key);
  const keys = [key];
  for (let i = 1; i < n; i += 1) keys.push(((await transferBase(i)) * keyInverse) % P);
  const pads = slots.map(() => randomScalar(random));
  const ciphertexts = slots.map((slot, i) => [powG(pads[i]), (modPow(keys[i], pads[i]) * powG(BigInt(slot))) % P]);

  const bits = [
    ...inputs.map(([c, r], u) => [c, u === value ? 1 : 0, r]),
    ...cells.flatMap((row, i) => row.map(([c, r], y) => [c, y === slots[i] ? 1 : 0, r])),
  ];
  const bitState = [];
  const bitFirst = bits.map(([commitment, bit]) => {
    const targets = [commitment, (commitment * gInverse) % P];
    const w = randomScalar(random);
    const cFake = randomScalar(random);
    const zFake = randomScalar(random);
    const first = [0n, 0n];
    first[bit] = powH(w);
    first[1 - bit] = (powH(zFake) * modPow(targets[1 - bit], Q - cFake)) % P;
    bitState.push([w, cFake, zFake]);
    return first;
  });
  const sumR = (list) => list.reduce((a, [, r]) => a + r, 0n) % Q;
  const sumWitnesses = [sumR(inputs), ...cells.map(sumR)];
  const countWitnesses = Array.from({ length: kOut }, (_, y) => {
    let w = cells.reduce((a, row) => a + row[y][1], 0n);
    for (let u = 0; u < kIn; u += 1) w -= BigInt(channel.counts[y][u]) * inputs[u][1];
    return mod(w, Q);
  });
  const schnorrNonces = [...sumWitnesses, ...countWitnesses].map(() => randomScalar(random));
  // Witnesses (t, y, r): U = G^t, V = K_i^t G^y, Y_i = prod_y D_iy^y = G^y H^r.
  const encryptionWitnesses = cells.map((row, i) => [pads[i], BigInt(slots[i]), row.reduce((a, [, r], y) => a + BigInt(y) * r, 0n) % Q]);
  const encryptionNonces = slots.map(() => [randomScalar(random), randomScalar(random), randomScalar(random)]);
  const message = {
    session: offer.session,
    inputs: inputs.map(([c]) => hex(c)),
    slots: cells.map((row) => row.map(([c]) => hex(c))),
    ciphertexts: ciphertexts.map(([u, v]) => [hex(u), hex(v)]),
    bit_proofs: bitFirst.map(([a0, a1]) => [hex(a0), hex(a1)]),
    sum_proofs: schnorrNonces.slice(0, sumWitnesses.length).map((w) => [hex(powH(w))]),
    count_proofs: schnorrNonces.slice(sumWitnesses.length).map((w) => [hex(powH(w))]),
    encryption_proofs: encryptionNonces.map(([wt, wy, wr], i) => [
      hex(powG(wt)),
      hex((modPow(keys[i], wt) * powG(wy)) % P),
      hex((powG(wy) * powH(wr)) % P),
    ]),
  };
  const c = await challenge(session, key, channel, message);
  message.bit_proofs.forEach((proof, i) => {
    const [, bit, r] = bits[i];
    const [w, cFake, zFake] = bitState[i];
    const cReal = mod(c - cFake, Q);
    const zReal = (w + cReal * r) % Q;
    const c0 = bit === 0 ? cReal : cFake;
    const [z0, z1] = bit === 0 ? [zReal, zFake] : [zFake, zReal];
    proof.push(hex(c0), hex(z0), hex(z1));
  });
  const witnesses = [...sumWitnesses, ...countWitnesses];
  [...message.sum_proofs, ...message.count_proofs].forEach((proof, i) => proof.push(hex((schnorrNonces[i] + c * witnesses[i]) % Q)));
  message.encryption_proofs.forEach((proof, i) => {
    encryptionNonces[i].forEach((w, at) => proof.push(hex((w + c * encryptionWitnesses[i][at]) % Q)));
  });
  return message;
}

/** The Fiat-Shamir challenge over the statement and first messages, in ldp.verifiable._statement's order. */
export async function challenge(session, key, channel, message) {
  const el = (h) => toBytes(BigInt(h));
  const parts = [DOMAIN, session, toBytes(key), ascii(JSON.stringify(channel.counts))];
  for (const x of message.inputs) parts.push(el(x));
  for (const row of message.slots) for (const x of row) parts.push(el(x));
  for (const pair of message.ciphertexts) for (const x of pair) parts.push(el(x));
  for (const proof of message.bit_proofs) parts.push(el(proof[0]), el(proof[1]));
  for (const proof of message.sum_proofs) parts.push(el(proof[0]));
  for (const proof of message.count_proofs) parts.push(el(proof[0]));
  for (const proof of message.encryption_proofs) parts.push(el(proof[0]), el(proof[1]), el(proof[2]));
  return bytesToBigInt(await sha512(concat(parts))) % Q;
}
