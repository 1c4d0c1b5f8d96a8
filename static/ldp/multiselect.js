// @ts-check
/**
 * Browser-side randomizers for multi-select ("choose all that apply") questions, mirroring
 * ldp/multiselect/ (Python). Pure functions, no DOM; randomness from a RandomSource
 * (crypto.getRandomValues by default), never Math.random.
 *
 * The respondent's answer is an array of distinct option indices (at most max_choices of them,
 * possibly none). The spec carries every probability; nothing here derives one from epsilon.
 */

import { bernoulli, cryptoRandomSource, randomizeKrr, randomizeOlh, uniformInt } from "./randomize.js";

/**
 * @typedef {import("./randomize.js").RandomSource} RandomSource
 *
 * @typedef {object} SetUnarySpec
 * @property {"set-sue" | "set-oue"} mechanism
 * @property {number} k
 * @property {number} max_choices
 * @property {number} true_bit_probability   p: a chosen option's bit is 1
 * @property {number} other_bit_probability  q: an option not chosen sends 1
 *
 * @typedef {object} PaddingSpec
 * @property {"padding-krr" | "padding-olh"} mechanism
 * @property {number} k
 * @property {number} max_choices
 * @property {any} oracle   the k-RR or OLH spec over k + max_choices items
 *
 * @typedef {SetUnarySpec | PaddingSpec} SetSpec
 */

/**
 * The chosen options, validated: distinct integers in [0, k), at most maxChoices of them; sorted.
 * @param {number[]} chosen
 * @param {number} k
 * @param {number} maxChoices
 */
export function checkChosen(chosen, k, maxChoices) {
  if (!Array.isArray(chosen)) throw new TypeError("chosen options must be an array");
  for (const option of chosen) {
    if (!Number.isInteger(option) || option < 0 || option >= k) {
      throw new RangeError(`chosen options must be option indices in [0, ${k}), got ${option}`);
    }
  }
  if (new Set(chosen).size !== chosen.length) throw new RangeError("chosen options must not repeat");
  if (chosen.length > maxChoices) {
    throw new RangeError(`at most ${maxChoices} options may be chosen, got ${chosen.length}`);
  }
  return [...chosen].sort((a, b) => a - b);
}

/**
 * Unary encoding of a set: each option's bit is 1 with p if chosen, q otherwise.
 * @param {SetUnarySpec} spec
 * @param {number[]} chosen
 * @param {RandomSource} random
 * @returns {{bits: number[]}}
 */
export function randomizeSetUnary(spec, chosen, random) {
  const inSet = new Set(checkChosen(chosen, spec.k, spec.max_choices));
  const bits = [];
  for (let j = 0; j < spec.k; j += 1) {
    const p = inSet.has(j) ? spec.true_bit_probability : spec.other_bit_probability;
    bits.push(bernoulli(p, random) ? 1 : 0);
  }
  return { bits };
}

/**
 * Padding-and-sampling's item: the set padded with dummies k, k + 1, ... to max_choices items,
 * one of them drawn uniformly (Wang, Li, Jha 2018).
 * @param {number[]} chosen
 * @param {number} k
 * @param {number} maxChoices
 * @param {RandomSource} random
 */
export function sampleItem(chosen, k, maxChoices, random) {
  const sorted = checkChosen(chosen, k, maxChoices);
  const r = uniformInt(maxChoices, random);
  return r < sorted.length ? sorted[r] : k + r - sorted.length;
}

/**
 * Padding-and-sampling: the sampled item reported with the oracle (k-RR or OLH over k + l items).
 * @param {PaddingSpec} spec
 * @param {number[]} chosen
 * @param {RandomSource} random
 */
export function randomizePadding(spec, chosen, random) {
  const item = sampleItem(chosen, spec.k, spec.max_choices, random);
  if (spec.oracle.mechanism === "krr") return randomizeKrr(spec.oracle, item, random);
  if (spec.oracle.mechanism === "olh") return randomizeOlh(spec.oracle, item, random);
  throw new Error(`unknown oracle ${JSON.stringify(spec.oracle.mechanism)}`);
}

/**
 * Randomize one multi-select answer with the mechanism the spec names.
 * @param {SetSpec} spec
 * @param {number[]} chosen
 * @param {RandomSource} [random]
 */
export function randomizeSet(spec, chosen, random = cryptoRandomSource()) {
  if (spec.mechanism === "set-sue" || spec.mechanism === "set-oue") {
    return randomizeSetUnary(/** @type {SetUnarySpec} */ (spec), chosen, random);
  }
  if (spec.mechanism === "padding-krr" || spec.mechanism === "padding-olh") {
    return randomizePadding(/** @type {PaddingSpec} */ (spec), chosen, random);
  }
  throw new Error(`unknown mechanism ${JSON.stringify(spec.mechanism)}`);
}
