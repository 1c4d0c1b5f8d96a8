// @ts-check
/**
 * Free-text answers with a Count Mean Sketch over hashed strings, mirroring ldp/freetext.py (read
 * its docstring). The answer is normalized (text.js), a row j is drawn uniformly, the one-hot
 * vector of cell h_j(s) = SHA-256(encodeFields("murmur-sketch-v1", j, s)) word 0 mod width is
 * written as -1/+1 entries and every entry is kept with the spec's keep_probability; the report
 * is {row, bits} with bit 1 for +1. The Hadamard variant ("text-hcms") sends one bit instead:
 * an index i uniform in [0, width), the sign H[i, cell] = (-1)^popcount(i & cell) kept with the
 * spec's keep_probability; the report is {row, index, bit}. Pure functions, no DOM; WebCrypto
 * makes hashing async.
 */

import { MAX_TEXT_SKETCH_HASH_COUNT, MAX_TEXT_SKETCH_WIDTH, SKETCH_DOMAIN } from "./constants.js";
import { cryptoRandomSource, uniformInt, uniformUnit } from "./randomize.js";
import { hadamardSign } from "./spec.js";
import { encodeFields, normalizeText } from "./text.js";

/** @typedef {import("./randomize.js").RandomSource} RandomSource */

/**
 * @typedef {object} TextSketchSpec
 * @property {"text-cms" | "text-hcms"} mechanism
 * @property {number} epsilon
 * @property {number} hash_count
 * @property {number} width
 * @property {number} keep_probability
 */

export { SKETCH_DOMAIN };

/**
 * @param {any} spec
 * @returns {TextSketchSpec}
 */
export function checkTextSketchSpec(spec) {
  if (!spec || (spec.mechanism !== "text-cms" && spec.mechanism !== "text-hcms")) {
    throw new RangeError("invalid sketch spec: mechanism must be 'text-cms' or 'text-hcms'");
  }
  for (const [name, high] of [["hash_count", MAX_TEXT_SKETCH_HASH_COUNT], ["width", MAX_TEXT_SKETCH_WIDTH]]) {
    const value = spec[/** @type {string} */ (name)];
    if (!Number.isInteger(value) || value < (name === "width" ? 2 : 1) || value > /** @type {number} */ (high)) {
      throw new RangeError(`invalid sketch spec: ${name} out of range, got ${value}`);
    }
  }
  if (spec.mechanism === "text-hcms" && (spec.width & (spec.width - 1)) !== 0) {
    throw new RangeError(`invalid sketch spec: width must be a power of 2, got ${spec.width}`);
  }
  if (typeof spec.keep_probability !== "number" || !(spec.keep_probability > 0.5 && spec.keep_probability < 1)) {
    throw new RangeError(`invalid sketch spec: keep_probability must lie in (0.5, 1), got ${spec.keep_probability}`);
  }
  return spec;
}

/**
 * h_j(s) for a normalized string.
 * @param {TextSketchSpec} spec
 * @param {number} row
 * @param {string} text
 */
export async function sketchCell(spec, row, text) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", encodeFields(SKETCH_DOMAIN, row, text));
  return new DataView(digest).getUint32(0) % spec.width;
}

/**
 * One report of a free-text answer (normalized here).
 * @param {TextSketchSpec} spec
 * @param {string} text  the answer as typed
 * @param {RandomSource} [random]
 * @returns {Promise<{row: number, bits: number[]}>}
 */
export async function randomizeText(spec, text, random = cryptoRandomSource()) {
  if (checkTextSketchSpec(spec).mechanism !== "text-cms") throw new RangeError("randomizeText needs a 'text-cms' spec");
  const row = uniformInt(spec.hash_count, random);
  const cell = await sketchCell(spec, row, normalizeText(text));
  const bits = Array.from({ length: spec.width }, (_, l) => {
    const plus = l === cell ? 1 : 0;
    return uniformUnit(random) < spec.keep_probability ? plus : 1 - plus;
  });
  return { row, bits };
}

/**
 * One Hadamard-sketch report of a free-text answer (normalized here).
 * @param {TextSketchSpec} spec  a "text-hcms" spec
 * @param {string} text  the answer as typed
 * @param {RandomSource} [random]
 * @returns {Promise<{row: number, index: number, bit: number}>}
 */
export async function randomizeTextHadamard(spec, text, random = cryptoRandomSource()) {
  if (checkTextSketchSpec(spec).mechanism !== "text-hcms") throw new RangeError("randomizeTextHadamard needs a 'text-hcms' spec");
  const row = uniformInt(spec.hash_count, random);
  const cell = await sketchCell(spec, row, normalizeText(text));
  const index = uniformInt(spec.width, random);
  const sign = uniformUnit(random) < spec.keep_probability ? hadamardSign(index, cell) : -hadamardSign(index, cell);
  return { row, index, bit: sign > 0 ? 1 : 0 };
}
