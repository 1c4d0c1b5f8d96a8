// @ts-check
/**
 * Memoization for recurring surveys, in the respondent's browser (ldp/memo.py is the Python
 * mirror; read its docstring). A device secret, 32 random bytes kept only in this browser's
 * localStorage (never sent; forgetDeviceSecret deletes it), keys HMAC-SHA-256 (WebCrypto), from
 * which the *permanent* layer of a report is derived deterministically per (survey series,
 * question, true value): RAPPOR's PRR, dBitFlip's bits, 1BitMean's bit after alpha-point
 * rounding. The same value always gives the same permanent layer; a changed value an independent
 * one. An *instantaneous* layer drawn from crypto.getRandomValues goes on top every round.
 *
 * memoStreamOf(words, secret, purpose, series, question, ...extra) computes HMAC(secret,
 * encodeFields("murmur-memo-v1", purpose, series, question, ...extra) || counter) for counters
 * 0, 1, ... (4-byte big-endian) and serves `words` words, big-endian, as a RandomSource, consumed
 * by the same samplers as a live random source (randomize.js, numeric.js); it throws if
 * exhausted. memoStream holds 128 words; RAPPOR's PRR and dBitFlip's bits take two more per bit,
 * dBitFlip's buckets one more per bucket.
 */

import { MEMO_DOMAIN, MEMO_WORDS as DEFAULT_WORDS } from "./constants.js";
import { memoizedBitLogRatios } from "./privacy.js";
import {
  bloomFilter,
  checkRapporSpec,
  epsilonOneReport as rapporEpsilonOneReport,
  instantaneousResponse,
  permanentResponse,
} from "./rappor.js";
import { cryptoRandomSource, uniformInt, uniformUnit } from "./randomize.js";
import { checkNumericSpec, roundToGrid, uniformInteger } from "./numeric.js";
import { encodeFields, normalizeText } from "./text.js";

/** @typedef {import("./randomize.js").RandomSource} RandomSource */
/** @typedef {import("./rappor.js").RapporSpec} RapporSpec */

export { MEMO_DOMAIN };
export const SECRET_KEY = "murmur-device-secret-v1";

/** @returns {Uint8Array} 32 fresh random bytes */
export function newDeviceSecret() {
  return globalThis.crypto.getRandomValues(new Uint8Array(32));
}

/**
 * This browser's device secret, created on first use. It stays in `storage` (localStorage).
 * @param {Storage} [storage]
 * @returns {Uint8Array}
 */
export function loadDeviceSecret(storage = globalThis.localStorage) {
  const stored = storage.getItem(SECRET_KEY);
  if (stored && /^[0-9a-f]{64}$/.test(stored)) {
    return Uint8Array.from(stored.match(/../g) ?? [], (pair) => parseInt(pair, 16));
  }
  const secret = newDeviceSecret();
  storage.setItem(SECRET_KEY, Array.from(secret, (byte) => byte.toString(16).padStart(2, "0")).join(""));
  return secret;
}

/**
 * Delete the device secret: memoized answers can no longer be linked to future ones.
 * @param {Storage} [storage]
 */
export function forgetDeviceSecret(storage = globalThis.localStorage) {
  storage.removeItem(SECRET_KEY);
}

/**
 * A deterministic RandomSource of 128 words from the device secret and a label.
 * @param {Uint8Array} secret
 * @param {string} purpose
 * @param {string} series
 * @param {string} question
 * @param {...(string | number)} extra
 * @returns {Promise<RandomSource>}
 */
export function memoStream(secret, purpose, series, question, ...extra) {
  return memoStreamOf(DEFAULT_WORDS, secret, purpose, series, question, ...extra);
}

/**
 * A deterministic RandomSource of `words` words (see the module comment); a longer stream starts
 * with the same words as a shorter one.
 * @param {number} words
 * @param {Uint8Array} secret
 * @param {string} purpose
 * @param {string} series
 * @param {string} question
 * @param {...(string | number)} extra
 * @returns {Promise<RandomSource>}
 */
export async function memoStreamOf(words, secret, purpose, series, question, ...extra) {
  if (!(secret instanceof Uint8Array) || secret.length < 16) throw new TypeError("secret must be at least 16 bytes");
  const key = await globalThis.crypto.subtle.importKey("raw", secret, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const message = encodeFields(MEMO_DOMAIN, purpose, series, question, ...extra);
  const input = new Uint8Array(message.length + 4);
  input.set(message);
  const stream = [];
  for (let block = 0; block < Math.ceil(words / 8); block += 1) {
    new DataView(input.buffer).setUint32(message.length, block);
    const digest = new DataView(await globalThis.crypto.subtle.sign("HMAC", key, input));
    for (let i = 0; i < 8; i += 1) stream.push(digest.getUint32(4 * i));
  }
  let next = 0;
  return (target) => {
    for (let i = 0; i < target.length; i += 1) {
      if (next >= stream.length) throw new Error("the memo stream ran out of words");
      target[i] = stream[next];
      next += 1;
    }
    return target;
  };
}

/**
 * The respondent's RAPPOR cohort for a question of a series (independent of the answer).
 * @param {Uint8Array} secret
 * @param {string} series
 * @param {string} question
 * @param {number} cohorts
 */
export async function memoizedCohort(secret, series, question, cohorts) {
  return uniformInt(cohorts, await memoStream(secret, "cohort", series, question));
}

/**
 * RAPPOR's permanent randomized response of a normalized value: {cohort, permanent}.
 * @param {Uint8Array} secret
 * @param {string} series
 * @param {string} question
 * @param {string} value  normalized text
 * @param {RapporSpec} spec
 */
export async function memoizedPrr(secret, series, question, value, spec) {
  checkRapporSpec(spec);
  const cohort = await memoizedCohort(secret, series, question, spec.cohorts);
  const bloom = await bloomFilter(spec, value, cohort);
  const stream = await memoStreamOf(DEFAULT_WORDS + 2 * spec.bits, secret, "prr", series, question, value);
  const permanent = permanentResponse(spec, bloom, stream);
  return { cohort, permanent };
}

/**
 * One round's RAPPOR report of a free-text answer: normalize, memoized PRR, fresh IRR.
 * @param {Uint8Array} secret
 * @param {string} series
 * @param {string} question
 * @param {string} text  the answer as typed
 * @param {RapporSpec} spec
 * @param {RandomSource} [random]
 * @returns {Promise<{cohort: number, bits: number[]}>}
 */
export async function rapporRound(secret, series, question, text, spec, random = cryptoRandomSource()) {
  const { cohort, permanent } = await memoizedPrr(secret, series, question, normalizeText(text), spec);
  return { cohort, bits: instantaneousResponse(spec, permanent, random) };
}

/**
 * dBitFlip's buckets (fixed per respondent) and memoized bits for `value`: {buckets, bits}.
 * @param {Uint8Array} secret
 * @param {string} series
 * @param {string} question
 * @param {number} value  option index
 * @param {{k: number, d: number, true_bit_probability: number, other_bit_probability: number}} spec
 */
export async function memoizedDBitFlip(secret, series, question, value, spec) {
  if (!Number.isInteger(value) || value < 0 || value >= spec.k) {
    throw new RangeError(`answer must be an option index in [0, ${spec.k}), got ${value}`);
  }
  const shuffle = await memoStreamOf(DEFAULT_WORDS + spec.d, secret, "buckets", series, question);
  const order = Array.from({ length: spec.k }, (_, i) => i);
  for (let i = 0; i < spec.d; i += 1) {
    const swap = i + uniformInt(spec.k - i, shuffle);
    [order[i], order[swap]] = [order[swap], order[i]];
  }
  const buckets = order.slice(0, spec.d).sort((a, b) => a - b);
  const stream = await memoStreamOf(DEFAULT_WORDS + 2 * spec.d, secret, "dbitflip", series, question, value);
  const bits = buckets.map((bucket) => {
    const p = bucket === value ? spec.true_bit_probability : spec.other_bit_probability;
    return uniformUnit(stream) < p ? 1 : 0;
  });
  return { buckets, bits };
}

/**
 * The permanent layer of a recurring survey's dBitFlip question (surveys/series/rounds.py): the served
 * spec is dBitFlip at the round's epsilon, bit probabilities p1' and p0'; the memoized bits use
 * p = (p' - gamma) / (1 - 2 gamma), which the gamma flip turns back into p' exactly.
 * @param {{k: number, d: number, true_bit_probability: number, other_bit_probability: number}} spec
 * @param {number} gamma
 */
export function permanentDBitFlipSpec(spec, gamma) {
  checkGamma(gamma);
  const unflip = (/** @type {number} */ p) => (p - gamma) / (1 - 2 * gamma);
  const permanent = {
    ...spec,
    true_bit_probability: unflip(spec.true_bit_probability),
    other_bit_probability: unflip(spec.other_bit_probability),
  };
  for (const p of [permanent.true_bit_probability, permanent.other_bit_probability]) {
    if (!(p > 0 && p < 1)) throw new RangeError(`gamma ${gamma} is too large for these bit probabilities`);
  }
  return permanent;
}

/** 1BitMean's flip in a recurring survey: 1/4, which keeps the memoized bit's weights integers. */
export const ONE_BIT_GAMMA = 0.25;

/**
 * The permanent layer of a recurring survey's 1BitMean question (surveys/series/rounds.py): the served
 * spec is 1BitMean at the round's epsilon, P(1 | k) = (A + k m) / D. The memoized bit uses
 * (4A - D + 4k m) / 2D, which a flip with probability 1/4 turns back into (A + k m) / D exactly:
 * 3/4 q + 1/4 (1 - q) = q/2 + 1/4. It needs 4A > D, i.e. epsilon below ln 3.
 * @param {any} spec  a "1bitmean" numeric spec
 * @param {number} gamma  must be ONE_BIT_GAMMA
 */
export function permanentOneBitSpec(spec, gamma) {
  checkNumericSpec(spec);
  if (spec.mechanism !== "1bitmean") throw new RangeError("permanentOneBitSpec needs a 1bitmean spec");
  if (gamma !== ONE_BIT_GAMMA) throw new RangeError(`gamma must be ${ONE_BIT_GAMMA} for 1BitMean, got ${gamma}`);
  const denominator = 2 * spec.denominator;
  const base = 4 * spec.base - spec.denominator;
  if (!(base >= 1)) throw new RangeError(`epsilon ${spec.epsilon} is too large for the flip: 4 base must exceed denominator`);
  return { ...spec, denominator, base, slope: 4 * spec.slope, epsilon: Math.log((denominator - base) / base) };
}

/**
 * Each bit flipped with probability gamma (the instantaneous layer of dBitFlip and 1BitMean).
 * @param {number[]} bits
 * @param {number} gamma  in [0, 0.5)
 * @param {RandomSource} random
 */
export function flipBits(bits, gamma, random) {
  checkGamma(gamma);
  return bits.map((bit) => (uniformUnit(random) < gamma ? 1 - bit : bit));
}

/** @param {number} gamma */
function checkGamma(gamma) {
  if (typeof gamma !== "number" || !(gamma >= 0 && gamma < 0.5)) throw new RangeError(`gamma must lie in [0, 0.5), got ${gamma}`);
}

/**
 * One round of memoized dBitFlip: {buckets, bits} with the memoized bits flipped w.p. gamma.
 * @param {Uint8Array} secret
 * @param {string} series
 * @param {string} question
 * @param {number} value
 * @param {{k: number, d: number, true_bit_probability: number, other_bit_probability: number}} spec
 * @param {number} gamma
 * @param {RandomSource} [random]
 */
export async function dbitflipRound(secret, series, question, value, spec, gamma, random = cryptoRandomSource()) {
  const { buckets, bits } = await memoizedDBitFlip(secret, series, question, value, spec);
  return { buckets, bits: flipBits(bits, gamma, random) };
}

/**
 * The respondent's alpha-point threshold in [0, 1) for a question (independent of the answer).
 * @param {Uint8Array} secret
 * @param {string} series
 * @param {string} question
 */
export async function memoizedAlpha(secret, series, question) {
  return uniformUnit(await memoStream(secret, "alpha", series, question));
}

/**
 * 1BitMean memoized: alpha-point rounding with the kept alpha, then the bit kept for that grid
 * point (1 iff a uniform integer in [0, D) is below A + k m): {point, bit}.
 * @param {Uint8Array} secret
 * @param {string} series
 * @param {string} question
 * @param {number} value
 * @param {any} spec  a "1bitmean" numeric spec
 */
export async function memoizedOneBit(secret, series, question, value, spec) {
  checkNumericSpec(spec);
  if (spec.mechanism !== "1bitmean") throw new RangeError("memoizedOneBit needs a 1bitmean spec");
  const alpha = await memoizedAlpha(secret, series, question);
  const point = roundToGrid(spec, value, cryptoRandomSource(), alpha);
  const stream = await memoStream(secret, "1bitmean", series, question, point);
  return { point, bit: uniformInteger(spec.denominator, stream) < spec.base + point * spec.slope ? 1 : 0 };
}

/**
 * One round of memoized 1BitMean: {index} = the kept bit flipped with probability gamma.
 * @param {Uint8Array} secret
 * @param {string} series
 * @param {string} question
 * @param {number} value
 * @param {any} spec
 * @param {number} gamma
 * @param {RandomSource} [random]
 */
export async function oneBitRound(secret, series, question, value, spec, gamma, random = cryptoRandomSource()) {
  const { bit } = await memoizedOneBit(secret, series, question, value, spec);
  return { index: flipBits([bit], gamma, random)[0] };
}

/**
 * (1 - gamma) x + gamma (1 - x).
 * @param {number} one
 * @param {number} gamma
 */
const flipped = (one, gamma) => (1 - gamma) * one + gamma * (1 - one);

/**
 * Exact epsilon of one round of memoized dBitFlip (ldp.memo.dbitflip_round_epsilon).
 * @param {{d: number, true_bit_probability: number, other_bit_probability: number}} spec
 * @param {number} gamma
 */
export function dbitflipRoundEpsilon(spec, gamma) {
  checkGamma(gamma);
  const p1 = flipped(spec.true_bit_probability, gamma);
  const p0 = flipped(spec.other_bit_probability, gamma);
  const up = Math.log(p1 / p0);
  const down = Math.log((1 - p0) / (1 - p1));
  return spec.d >= 2 ? up + down : Math.max(up, down);
}

/**
 * Exact epsilon of `rounds` rounds of one answer with memoized dBitFlip bits.
 * @param {{d: number, true_bit_probability: number, other_bit_probability: number}} spec
 * @param {number} gamma
 * @param {number} rounds
 */
export function dbitflipEpsilonAfterRounds(spec, gamma, rounds) {
  checkGamma(gamma);
  const [up, down] = memoizedBitLogRatios([spec.other_bit_probability, spec.true_bit_probability], [gamma, 1 - gamma], rounds);
  return spec.d >= 2 ? up + down : Math.max(up, down);
}

/**
 * Exact epsilon of one round of memoized 1BitMean (ldp.memo.one_bit_round_epsilon).
 * @param {{base: number, denominator: number}} spec
 * @param {number} gamma
 */
export function oneBitRoundEpsilon(spec, gamma) {
  checkGamma(gamma);
  const low = flipped(spec.base / spec.denominator, gamma);
  return Math.log((1 - low) / low);
}

/**
 * Exact epsilon of `rounds` rounds of one grid point with its memoized 1BitMean bit.
 * @param {{base: number, denominator: number}} spec
 * @param {number} gamma
 * @param {number} rounds
 */
export function oneBitEpsilonAfterRounds(spec, gamma, rounds) {
  checkGamma(gamma);
  const low = spec.base / spec.denominator;
  return Math.max(...memoizedBitLogRatios([low, 1 - low], [gamma, 1 - gamma], rounds));
}

/**
 * The permanent layer's epsilon (epsilon_inf): RAPPOR's 2h ln((1 - f/2)/(f/2)); for dBitFlip and
 * 1BitMean their own epsilon.
 * @param {any} spec
 */
export function permanentEpsilon(spec) {
  if (spec.mechanism === "rappor") return 2 * spec.hash_count * Math.log((1 - spec.f / 2) / (spec.f / 2));
  if (spec.mechanism === "1bitmean") return Math.log((spec.denominator - spec.base) / spec.base);
  return dbitflipRoundEpsilon(spec, 0);
}

/**
 * What one round of a memoized question spends, in the form ledger.js records:
 * {epsilon: the round's epsilon, memo: {epsilon_infinity, values}}, values being how many
 * permanent responses the respondent could hold (k options, G + 1 grid points; null for text).
 * @param {any} spec  a "rappor", "dbitflip" or "1bitmean" spec
 * @param {number} [gamma]  the instantaneous flip of dBitFlip and 1BitMean
 * @returns {{epsilon: number, memo: {epsilon_infinity: number, values: number | null}}}
 */
export function roundSpend(spec, gamma = 0) {
  if (spec?.mechanism === "rappor") {
    checkRapporSpec(spec);
    return { epsilon: rapporEpsilonOneReport(spec), memo: { epsilon_infinity: permanentEpsilon(spec), values: null } };
  }
  if (spec?.mechanism === "dbitflip") {
    return { epsilon: dbitflipRoundEpsilon(spec, gamma), memo: { epsilon_infinity: permanentEpsilon(spec), values: spec.k } };
  }
  if (spec?.mechanism === "1bitmean") {
    checkNumericSpec(spec);
    return { epsilon: oneBitRoundEpsilon(spec, gamma), memo: { epsilon_infinity: permanentEpsilon(spec), values: spec.grid + 1 } };
  }
  throw new RangeError(`no memoized form for mechanism ${JSON.stringify(spec?.mechanism)}`);
}

/**
 * The pins: per (series, question), the digests of every randomization this device has answered
 * it under, kept in localStorage next to the device secret (never sent; forgetDeviceSecret leaves
 * them, forgetPins deletes them). A server that changes a memoized question's parameters between
 * rounds cannot make the page present the old epsilon_inf silently: the page compares the spec's
 * digest with the pins (pinStatus) and says so before sending, and the permanent layer is keyed by
 * the digest too (memoQuestionKey), so other parameters give a new, independent permanent layer
 * whose epsilon_inf the ledger adds as a stream of its own.
 */
export const PINS_KEY = "murmur-memo-pins-v1";
const DIGEST_DOMAIN = "murmur-memo-spec-v1";

/**
 * JSON with object keys sorted at every depth, so equal specs give equal text.
 * @param {unknown} value
 * @returns {string}
 */
export function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const object = /** @type {Record<string, unknown>} */ (value);
    return `{${Object.keys(object)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(object[key])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The digest of a memoized question's randomization: SHA-256 (hex) of the canonical JSON of its
 * spec (mechanism, epsilon, parameters) and memo block (series, question, layers, gamma).
 * @param {any} spec
 * @param {any} memo
 * @returns {Promise<string>}
 */
export async function specDigest(spec, memo) {
  const bytes = encodeFields(DIGEST_DOMAIN, canonicalJson({ spec, memo }));
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * The question label the permanent layer is keyed by: the question's id and its spec digest, so
 * each distinct randomization of a question has its own permanent layer.
 * @param {string} question
 * @param {string} digest  64 hex digits
 */
export function memoQuestionKey(question, digest) {
  if (!/^[0-9a-f]{64}$/.test(digest)) throw new RangeError("digest must be 64 hex digits");
  return `${question}#${digest}`;
}

/**
 * @param {Storage} storage
 * @returns {Record<string, string[]>}
 */
function readPins(storage) {
  try {
    const pins = JSON.parse(storage.getItem(PINS_KEY) ?? "{}");
    return pins !== null && typeof pins === "object" && !Array.isArray(pins) ? pins : {};
  } catch {
    return {};
  }
}

/** @param {string} series @param {string} question */
const pinName = (series, question) => JSON.stringify([series, question]);

/**
 * Whether this device answered the question under this randomization: "new" (never answered
 * it), "same" (answered under this digest before) or "changed" (answered only under others).
 * @param {string} series
 * @param {string} question
 * @param {string} digest
 * @param {Storage} [storage]
 * @returns {"new" | "same" | "changed"}
 */
export function pinStatus(series, question, digest, storage = globalThis.localStorage) {
  const pinned = readPins(storage)[pinName(series, question)];
  if (!Array.isArray(pinned) || pinned.length === 0) return "new";
  return pinned.includes(digest) ? "same" : "changed";
}

/**
 * Pin a digest for (series, question), after an answer under it was sent.
 * @param {string} series
 * @param {string} question
 * @param {string} digest
 * @param {Storage} [storage]
 */
export function pinDigest(series, question, digest, storage = globalThis.localStorage) {
  const pins = readPins(storage);
  const name = pinName(series, question);
  const pinned = Array.isArray(pins[name]) ? pins[name] : [];
  if (!pinned.includes(digest)) pins[name] = [...pinned, digest];
  storage.setItem(PINS_KEY, JSON.stringify(pins));
}

/**
 * Delete every pin from this device.
 * @param {Storage} [storage]
 */
export function forgetPins(storage = globalThis.localStorage) {
  storage.removeItem(PINS_KEY);
}
