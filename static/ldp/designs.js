// @ts-check
/**
 * Randomized-response designs by name, mirroring ldp/designs/ (Python). Pure functions, no DOM.
 *
 * Each design is a channel M[v][y] = P(report y | answer v) built from integer weights that the
 * spec carries (spec.js checks them: positive, totals at most 2^53). Every draw is an integer
 * uniform below a weight total, by rejection from 53 random bits, so each probability realized is
 * exactly the fraction ldp checked:
 *
 * - forced-response (Boruch 1971): weights `forced` (one per option) and `truth`; the report is
 *   option j with probability forced[j] / total, else the true answer.
 * - unrelated-question (Greenberg et al. 1969): weights `sensitive` = [asked, innocuous]; if the
 *   innocuous question is drawn, its answer is drawn from the weights `pi` (simulated here).
 * - warner (Warner 1965): weights `p` = [direct, mirrored]; the direct statement's answer is the
 *   true one, the mirrored statement's the other option.
 * - crosswise (Yu, Tian and Tang 2008): weights `p` = [yes, no] of the innocuous answer; the
 *   report is 0 when it equals the true answer ("same"), 1 otherwise.
 *
 * epsilon (designEpsilon) is recomputed from the weights: forced response ln(1 + truth / min
 * forced), the unrelated question ln(1 + asked sum(pi) / (innocuous min pi)), Warner and
 * crosswise |ln(p0 / p1)|.
 */

import { SpecError, checkSpec } from "./spec.js";

/** @typedef {(words: Uint32Array) => Uint32Array} RandomSource */

/** The registry names of the designs, in ldp's order. */
export const DESIGNS = Object.freeze(["forced-response", "unrelated-question", "warner", "crosswise"]);

const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;

/**
 * A uniform integer in [0, bound), bound <= 2^53, by rejection of 53-bit integers (no modulo bias).
 * @param {number} bound
 * @param {RandomSource} random
 */
export function uniformBelow(bound, random) {
  if (!Number.isInteger(bound) || bound < 1 || bound > TWO_POW_53) {
    throw new RangeError(`bound must be an integer in [1, 2^53], got ${bound}`);
  }
  const limit = TWO_POW_53 - (TWO_POW_53 % bound);
  const words = new Uint32Array(2);
  for (;;) {
    random(words);
    const draw = (words[0] >>> 11) * TWO_POW_32 + words[1];
    if (draw < limit) return draw % bound;
  }
}

/**
 * Index j with probability weights[j] / sum(weights), exactly.
 * @param {number[]} weights
 * @param {RandomSource} random
 */
export function drawWeighted(weights, random) {
  let draw = uniformBelow(weights.reduce((a, b) => a + b, 0), random);
  for (let j = 0; j < weights.length; j += 1) {
    if (draw < weights[j]) return j;
    draw -= weights[j];
  }
  throw new RangeError("unreachable: the draw lies below the total");
}

/**
 * @param {any} spec
 * @param {number} value
 */
function checkDesign(spec, value) {
  checkSpec(spec);
  if (!DESIGNS.includes(spec.mechanism)) {
    throw new SpecError("mechanism", `must be one of ${DESIGNS.join(", ")} for this randomizer, got ${JSON.stringify(spec.mechanism)}`);
  }
  if (!Number.isInteger(value) || value < 0 || value >= spec.k) {
    throw new RangeError(`answer must be an option index in [0, ${spec.k}), got ${value}`);
  }
}

/**
 * Randomize one answer with the design the spec names.
 * @param {any} spec
 * @param {number} value
 * @param {RandomSource} random
 * @returns {{value: number}}
 */
export function randomizeDesign(spec, value, random) {
  checkDesign(spec, value);
  switch (spec.mechanism) {
    case "forced-response": {
      const drawn = drawWeighted([...spec.forced, spec.truth], random);
      return { value: drawn === spec.k ? value : drawn };
    }
    case "unrelated-question":
      return { value: drawWeighted(spec.sensitive, random) === 0 ? value : drawWeighted(spec.pi, random) };
    case "warner":
      return { value: drawWeighted(spec.p, random) === 0 ? value : 1 - value };
    default: // crosswise
      return { value: drawWeighted(spec.p, random) === value ? 0 : 1 };
  }
}

/** @param {number[]} weights */
const total = (weights) => weights.reduce((a, b) => a + b, 0);

/**
 * The channel rows[v][y] = P(report y | answer v) the spec's weights give (floats).
 * @param {any} spec
 * @returns {number[][]}
 */
export function designChannel(spec) {
  checkSpec(spec);
  const options = [...Array(spec.k).keys()];
  if (spec.mechanism === "forced-response") {
    const sum = total(spec.forced) + spec.truth;
    return options.map((v) => options.map((y) => (spec.forced[y] + (y === v ? spec.truth : 0)) / sum));
  }
  if (spec.mechanism === "unrelated-question") {
    const asked = spec.sensitive[0] / total(spec.sensitive);
    return options.map((v) => options.map((y) => (1 - asked) * (spec.pi[y] / total(spec.pi)) + (y === v ? asked : 0)));
  }
  const p = spec.p[0] / total(spec.p);
  return [
    [p, 1 - p],
    [1 - p, p],
  ];
}

/**
 * The epsilon the spec's weights give (spec assumed checked).
 * @param {any} spec
 */
export function designEpsilon(spec) {
  if (spec.mechanism === "forced-response") return Math.log1p(spec.truth / Math.min(...spec.forced));
  if (spec.mechanism === "unrelated-question") {
    const [asked, innocuous] = spec.sensitive;
    return Math.log1p((asked * total(spec.pi)) / (innocuous * Math.min(...spec.pi)));
  }
  const [high, low] = [Math.max(...spec.p), Math.min(...spec.p)];
  return Math.log1p((high - low) / low);
}
