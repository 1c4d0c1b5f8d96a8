// @ts-check
/**
 * Declared pairs (ldp/crosstab.py): two choice questions the organizer marks to be asked jointly
 * are randomized as ONE answer, first * k2 + second, of k1 * k2 options, with the mechanism the
 * server's spec names (its k is k1 * k2). Pure functions, no DOM; randomness from
 * crypto.getRandomValues by default.
 */

import { cryptoRandomSource, randomize } from "./randomize.js";

/**
 * The pair's one answer: first * k2 + second, after checking both indices.
 * @param {number} first   option index of the first question, in [0, k1)
 * @param {number} second  option index of the second question, in [0, k2)
 * @param {number} k1
 * @param {number} k2
 */
export function encodePair(first, second, k1, k2) {
  for (const [value, k, name] of /** @type {const} */ ([[first, k1, "first"], [second, k2, "second"]])) {
    if (!Number.isInteger(value) || value < 0 || value >= k) {
      throw new RangeError(`${name} answer must be an option index in [0, ${k}), got ${value}`);
    }
  }
  return first * k2 + second;
}

/**
 * The pair's one answer for a spec over its k1 * k2 combinations, after checking the spec's size.
 * @param {import("./randomize.js").ClientSpec} spec  the pair mechanism's spec (k = k1 * k2)
 * @param {number} k1
 * @param {number} k2
 * @param {number} first
 * @param {number} second
 */
export function pairAnswer(spec, k1, k2, first, second) {
  if (spec.k !== k1 * k2) throw new RangeError(`a ${k1} x ${k2} pair needs a spec over ${k1 * k2} options, got ${spec.k}`);
  return encodePair(first, second, k1, k2);
}

/**
 * Randomize a declared pair's two answers as one report.
 * @param {import("./randomize.js").ClientSpec} spec  the pair mechanism's spec (k = k1 * k2)
 * @param {number} k1
 * @param {number} k2
 * @param {number} first
 * @param {number} second
 * @param {import("./randomize.js").RandomSource} [random]
 */
export function randomizePair(spec, k1, k2, first, second, random = cryptoRandomSource()) {
  return randomize(spec, pairAnswer(spec, k1, k2, first, second), random);
}
