// @ts-check
/**
 * RAPPOR in the browser, mirroring ldp/mechanisms/rappor.py (read its docstring): the Bloom
 * filter of a value in a cohort (SHA-256 through WebCrypto, so it is async), the permanent
 * randomized response (PRR, f) and the instantaneous one (IRR, p and q), and RAPPOR's exact
 * epsilons. Pure functions, no DOM; randomness comes from the RandomSource passed in (memo.js
 * passes a deterministic one derived from the device secret for the PRR).
 */

import { MAX_RAPPOR_BITS, MAX_RAPPOR_COHORTS, MAX_RAPPOR_HASHES, RAPPOR_DOMAIN } from "./constants.js";
import { memoizedBitLogRatios } from "./privacy.js";
import { cryptoRandomSource, uniformUnit } from "./randomize.js";
import { encodeFields } from "./text.js";

/** @typedef {import("./randomize.js").RandomSource} RandomSource */

/**
 * @typedef {object} RapporSpec
 * @property {"rappor"} mechanism
 * @property {number} bits        size of the Bloom filter
 * @property {number} hash_count  h, at most 8
 * @property {number} cohorts
 * @property {number} f           PRR: each bit is 1 w.p. f/2, 0 w.p. f/2, kept otherwise
 * @property {number} p           IRR: P(S_i = 1 | B'_i = 0)
 * @property {number} q           IRR: P(S_i = 1 | B'_i = 1)
 */

export const HASH_DOMAIN = RAPPOR_DOMAIN;

/**
 * Throw unless `spec` is a well-formed RAPPOR spec (the limits of ldp.mechanisms.rappor).
 * @param {any} spec
 * @returns {RapporSpec}
 */
export function checkRapporSpec(spec) {
  const integer = (/** @type {string} */ name, /** @type {number} */ low, /** @type {number} */ high) => {
    if (!Number.isInteger(spec[name]) || spec[name] < low || spec[name] > high) {
      throw new RangeError(`invalid RAPPOR spec: ${name} must be an integer in [${low}, ${high}], got ${spec[name]}`);
    }
  };
  if (!spec || spec.mechanism !== "rappor") throw new RangeError("invalid RAPPOR spec: mechanism must be 'rappor'");
  integer("bits", 2, MAX_RAPPOR_BITS);
  integer("hash_count", 1, MAX_RAPPOR_HASHES);
  integer("cohorts", 1, MAX_RAPPOR_COHORTS);
  if (2 * spec.hash_count > spec.bits) throw new RangeError("invalid RAPPOR spec: bits must be at least 2 * hash_count");
  const { f, p, q } = spec;
  const ok = [f, p, q].every((x) => typeof x === "number" && Number.isFinite(x));
  if (!ok || !(f > 0 && f < 1) || !(p >= 0 && p < q && q <= 1)) {
    throw new RangeError(`invalid RAPPOR spec: need 0 < f < 1 and 0 <= p < q <= 1, got f=${f}, p=${p}, q=${q}`);
  }
  return spec;
}

/**
 * @param {RapporSpec} spec
 * @param {number} cohort
 */
function checkCohort(spec, cohort) {
  if (!Number.isInteger(cohort) || cohort < 0 || cohort >= spec.cohorts) {
    throw new RangeError(`cohort must be an integer in [0, ${spec.cohorts}), got ${cohort}`);
  }
}

/**
 * h_1(v, j) .. h_h(v, j): the first h big-endian words of SHA-256(encodeFields(domain, j, v)) mod bits.
 * @param {RapporSpec} spec
 * @param {string} value  normalized text (text.js normalizeText)
 * @param {number} cohort
 * @returns {Promise<number[]>}
 */
export async function bloomPositions(spec, value, cohort) {
  checkRapporSpec(spec);
  checkCohort(spec, cohort);
  if (typeof value !== "string") throw new TypeError("value must be a string");
  const digest = new DataView(await globalThis.crypto.subtle.digest("SHA-256", encodeFields(HASH_DOMAIN, cohort, value)));
  return Array.from({ length: spec.hash_count }, (_, i) => digest.getUint32(4 * i) % spec.bits);
}

/**
 * B: the value's Bloom filter in its cohort, 0/1 entries.
 * @param {RapporSpec} spec
 * @param {string} value
 * @param {number} cohort
 * @returns {Promise<number[]>}
 */
export async function bloomFilter(spec, value, cohort) {
  const bloom = new Array(spec.bits).fill(0);
  for (const position of await bloomPositions(spec, value, cohort)) bloom[position] = 1;
  return bloom;
}

/**
 * B': per bit u uniform in [0, 1), 1 if u < f/2, 0 if u < f, the Bloom bit otherwise.
 * @param {RapporSpec} spec
 * @param {number[]} bloom
 * @param {RandomSource} random
 * @returns {number[]}
 */
export function permanentResponse(spec, bloom, random) {
  return bloom.map((bit) => {
    const u = uniformUnit(random);
    return u < spec.f / 2 ? 1 : u < spec.f ? 0 : bit;
  });
}

/**
 * S: per bit 1 with probability q where B' is 1, p where it is 0; fresh for every report.
 * @param {RapporSpec} spec
 * @param {number[]} permanent
 * @param {RandomSource} random
 * @returns {number[]}
 */
export function instantaneousResponse(spec, permanent, random) {
  return permanent.map((bit) => (uniformUnit(random) < (bit === 1 ? spec.q : spec.p) ? 1 : 0));
}

/**
 * One report with a fresh PRR (no memoization; memo.js memoizes it).
 * @param {RapporSpec} spec
 * @param {string} value
 * @param {number} cohort
 * @param {RandomSource} [random]
 * @returns {Promise<{cohort: number, bits: number[]}>}
 */
export async function randomizeRappor(spec, value, cohort, random = cryptoRandomSource()) {
  const permanent = permanentResponse(spec, await bloomFilter(spec, value, cohort), random);
  return { cohort, bits: instantaneousResponse(spec, permanent, random) };
}

/**
 * [p*, q*]: P(S_i = 1 | B_i = 0) and P(S_i = 1 | B_i = 1) of one report.
 * @param {RapporSpec} spec
 * @returns {[number, number]}
 */
export function reportOneProbabilities(spec) {
  const shared = (spec.f * (spec.p + spec.q)) / 2;
  return [shared + (1 - spec.f) * spec.p, shared + (1 - spec.f) * spec.q];
}

/**
 * epsilon_1 = h ln(q* (1 - p*) / (p* (1 - q*))): one report, exact.
 * @param {RapporSpec} spec
 */
export function epsilonOneReport(spec) {
  const [pStar, qStar] = reportOneProbabilities(spec);
  return spec.hash_count * (Math.log(qStar / pStar) + Math.log((1 - pStar) / (1 - qStar)));
}

/**
 * epsilon_inf = 2h ln((1 - f/2) / (f/2)): the memoized B', any number of reports.
 * @param {RapporSpec} spec
 */
export function epsilonInfinity(spec) {
  return 2 * spec.hash_count * Math.log((1 - spec.f / 2) / (spec.f / 2));
}

/**
 * Exact epsilon of `rounds` reports of one value sharing its memoized B'.
 * @param {RapporSpec} spec
 * @param {number} rounds
 */
export function epsilonAfterRounds(spec, rounds) {
  const [up, down] = memoizedBitLogRatios([spec.f / 2, 1 - spec.f / 2], [spec.p, spec.q], rounds);
  return spec.hash_count * (up + down);
}

/**
 * P(S = report | B = bloom) of one report (bits independent given B): for exact checks.
 * @param {RapporSpec} spec
 * @param {number[]} report
 * @param {number[]} bloom
 */
export function reportProbability(spec, report, bloom) {
  const [pStar, qStar] = reportOneProbabilities(spec);
  let probability = 1;
  for (let i = 0; i < report.length; i += 1) {
    const one = bloom[i] === 1 ? qStar : pStar;
    probability *= report[i] === 1 ? one : 1 - one;
  }
  return probability;
}
