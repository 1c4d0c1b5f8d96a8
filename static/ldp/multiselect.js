// @ts-check
/**
 * Browser-side randomizers for multi-select ("choose all that apply") questions, mirroring
 * ldp/multiselect/ (Python). Pure functions, no DOM; randomness from a RandomSource
 * (crypto.getRandomValues by default), never a non-cryptographic generator.
 *
 * The respondent's answer is an array of distinct option indices (at most max_choices of them,
 * possibly none). The spec carries every probability; nothing here derives one from epsilon.
 */

import { EPSILON_MAX, EPSILON_MIN, MAX_SET_OPTIONS, SET_MECHANISMS } from "./constants.js";
import { bernoulli, cryptoRandomSource, randomizeKrr, randomizeOlh, uniformInt } from "./randomize.js";
import { SpecError, checkSpec, integerField, probabilityField } from "./spec.js";

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
 * Throw a SpecError naming the field unless `spec` is a well-formed multi-select spec.
 * A k-RR oracle's own epsilon is the amplified ln(1 + l (e^epsilon - 1)), which may exceed 10, so
 * only its probability and size are checked; an OLH oracle is checked as any OLH spec.
 * @param {any} spec
 * @returns {SetSpec}
 */
export function checkSetSpec(spec) {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) throw new SpecError("", "a spec must be an object");
  const k = integerField(spec, "k", 2, MAX_SET_OPTIONS);
  const maxChoices = integerField(spec, "max_choices", 1, k);
  const epsilon = spec.epsilon;
  if (typeof epsilon !== "number" || !Number.isFinite(epsilon) || epsilon < EPSILON_MIN || epsilon > EPSILON_MAX) {
    throw new SpecError("epsilon", `must be a number in [${EPSILON_MIN}, ${EPSILON_MAX}], got ${epsilon}`);
  }
  if (spec.mechanism === "set-sue" || spec.mechanism === "set-oue") {
    const p = probabilityField(spec, "true_bit_probability");
    const q = probabilityField(spec, "other_bit_probability");
    if (!(p > q)) throw new SpecError("true_bit_probability", "must exceed other_bit_probability");
    return spec;
  }
  if (spec.mechanism !== "padding-krr" && spec.mechanism !== "padding-olh") {
    throw new SpecError("mechanism", `must be one of ${SET_MECHANISMS.join(", ")}, got ${spec.mechanism}`);
  }
  const oracle = spec.oracle;
  if (oracle === null || typeof oracle !== "object") throw new SpecError("oracle", "must be an object");
  if (oracle.mechanism !== spec.mechanism.slice("padding-".length)) {
    throw new SpecError("oracle", `must be the ${spec.mechanism.slice(8)} oracle, got ${oracle.mechanism}`);
  }
  if (oracle.k !== k + maxChoices) throw new SpecError("oracle", `must range over k + max_choices = ${k + maxChoices} items`);
  if (oracle.mechanism === "krr") probabilityField(oracle, "keep_probability");
  else checkSpec(oracle);
  return spec;
}

/**
 * The epsilon a multi-select spec actually spends, recomputed from its probabilities (the stated
 * epsilon is never trusted), with the formulas of ldp/multiselect/:
 * - unary encodings: with L1 = ln(p / q) and L0 = ln((1 - q) / (1 - p)), the larger of them
 *   times l plus the smaller times min(l, k - l) (two sets of at most l options differ in up to
 *   l bits each way, min(2l, k) in all);
 * - padding with k-RR over d = k + l items: ln(1 + (p / q - 1) / l), q = (1 - p) / (d - 1)
 *   (sampling one of l items amplifies); with OLH: the oracle's ln(p / q), q = (1 - p) / (g - 1).
 * @param {SetSpec} spec
 */
export function setSpecEpsilon(spec) {
  checkSetSpec(spec);
  const ell = spec.max_choices;
  if (spec.mechanism === "set-sue" || spec.mechanism === "set-oue") {
    const p = spec.true_bit_probability;
    const q = spec.other_bit_probability;
    const one = Math.log(p / q);
    const zero = Math.log((1 - q) / (1 - p));
    return ell * Math.max(one, zero) + Math.min(ell, spec.k - ell) * Math.min(one, zero);
  }
  const oracle = spec.oracle;
  const p = oracle.keep_probability;
  if (oracle.mechanism === "krr") return Math.log1p((p / ((1 - p) / (oracle.k - 1)) - 1) / ell);
  return Math.log(p / ((1 - p) / (oracle.range_size - 1)));
}

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
  checkSetSpec(spec);
  if (spec.mechanism === "set-sue" || spec.mechanism === "set-oue") {
    return randomizeSetUnary(/** @type {SetUnarySpec} */ (spec), chosen, random);
  }
  if (spec.mechanism === "padding-krr" || spec.mechanism === "padding-olh") {
    return randomizePadding(/** @type {PaddingSpec} */ (spec), chosen, random);
  }
  throw new Error(`unknown mechanism ${JSON.stringify(spec.mechanism)}`);
}
