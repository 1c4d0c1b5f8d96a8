// @ts-check
/**
 * Browser-side randomizers, mirroring ldp/mechanisms/ (Python). Pure functions, no DOM.
 *
 * Each randomizer takes the server's client spec for one question, the respondent's true
 * answer (an option index) and a random source, and returns the report to send. The spec
 * carries every probability: nothing here derives one from epsilon.
 *
 * Every randomizer first checks its spec (static/ldp/spec.js): a malformed one throws a
 * SpecError naming the field and nothing is randomized.
 *
 * Randomness: a RandomSource fills a Uint32Array with independent uniform words, as
 * crypto.getRandomValues does. Integers in [0, n) are drawn by rejection (no modulo bias);
 * a Bernoulli(p) draw compares p with a uniform number built from 53 random bits, so its
 * probability is p to within 2^-53.
 */

/** @typedef {(words: Uint32Array) => Uint32Array} RandomSource */

/**
 * @typedef {object} KrrSpec
 * @property {"krr"} mechanism
 * @property {number} k
 * @property {number} keep_probability
 *
 * @typedef {object} FocusSpec  focused response (ldp/mechanisms/focus.py)
 * @property {"focus"} mechanism
 * @property {number} k
 * @property {number[]} focus          the m named options; every other option is bucket m
 * @property {number} keep_probability p = e^epsilon / (e^epsilon + m)
 *
 * @typedef {object} CmsSpec
 * @property {"cms"} mechanism
 * @property {number} k
 * @property {number} hash_count
 * @property {number} width
 * @property {number} keep_probability
 * @property {number[][]} hashes  hashes[j][option] = h_j(option)
 *
 * @typedef {object} DBitFlipSpec
 * @property {"dbitflip"} mechanism
 * @property {number} k
 * @property {number} d
 * @property {number} true_bit_probability
 * @property {number} other_bit_probability
 *
 * @typedef {object} OlhSpec
 * @property {"olh"} mechanism
 * @property {number} k
 * @property {number} range_size   g
 * @property {number} prime        P; hash coefficients are drawn from [0, P)
 * @property {number} keep_probability
 *
 * @typedef {object} SubsetSpec
 * @property {"subset"} mechanism
 * @property {number} k
 * @property {number} subset_size
 * @property {number} in_probability
 *
 * @typedef {object} HadamardSpec
 * @property {"hadamard"} mechanism
 * @property {number} k
 * @property {number} size          K
 * @property {number} in_probability
 * @property {number[][]} sets      sets[option] = the indices of its half C_v
 *
 * @typedef {object} HcmsSpec
 * @property {"hcms"} mechanism
 * @property {number} k
 * @property {number} hash_count
 * @property {number} width         m, a power of 2
 * @property {number} keep_probability
 * @property {number[][]} hashes
 *
 * @typedef {object} DesignSpec  a randomized-response design (static/ldp/designs.js)
 * @property {"forced-response" | "unrelated-question" | "warner" | "crosswise"} mechanism
 * @property {number} k
 *
 * @typedef {KrrSpec | FocusSpec | CmsSpec | DBitFlipSpec | OlhSpec | SubsetSpec | HadamardSpec | HcmsSpec | DesignSpec} ClientSpec
 */

import { randomizeDesign } from "./designs.js";
import { SpecError, checkSpec, hadamardSign } from "./spec.js";

export { SpecError, hadamardSign } from "./spec.js";

const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;

/** @returns {RandomSource} the platform's cryptographically secure generator */
export function cryptoRandomSource() {
  return (words) => globalThis.crypto.getRandomValues(words);
}

/**
 * A uniform integer in [0, bound), by rejection sampling of 32-bit words.
 * @param {number} bound  1 <= bound <= 2^32
 * @param {RandomSource} random
 */
export function uniformInt(bound, random) {
  if (!Number.isInteger(bound) || bound < 1 || bound > TWO_POW_32) {
    throw new RangeError(`bound must be an integer in [1, 2^32], got ${bound}`);
  }
  // Accept only words below the largest multiple of bound, so every residue is equally likely.
  const limit = TWO_POW_32 - (TWO_POW_32 % bound);
  const word = new Uint32Array(1);
  for (;;) {
    random(word);
    if (word[0] < limit) return word[0] % bound;
  }
}

/**
 * A uniform number in [0, 1) with 53 random bits.
 * @param {RandomSource} random
 */
export function uniformUnit(random) {
  const words = random(new Uint32Array(2));
  return ((words[0] >>> 5) * 67108864 + (words[1] >>> 6)) / TWO_POW_53;
}

/**
 * True with probability p.
 * @param {number} p
 * @param {RandomSource} random
 */
export function bernoulli(p, random) {
  return uniformUnit(random) < p;
}

/**
 * Check the spec (once per spec object) and that it is one of `mechanisms`, then the answer:
 * an option index in [0, k).
 * @param {any} spec
 * @param {number} value
 * @param {string[]} mechanisms
 */
function checkAnswer(spec, value, mechanisms) {
  const k = checkSpec(spec).k;
  if (!mechanisms.includes(spec.mechanism)) {
    throw new SpecError("mechanism", `must be ${mechanisms.join(" or ")} for this randomizer, got ${JSON.stringify(spec.mechanism)}`);
  }
  if (!Number.isInteger(value) || value < 0 || value >= k) {
    throw new RangeError(`answer must be an option index in [0, ${k}), got ${value}`);
  }
}

/**
 * k-RR: keep the answer with probability keep_probability, else a uniform other option.
 * @param {KrrSpec} spec
 * @param {number} value
 * @param {RandomSource} random
 * @returns {{value: number}}
 */
export function randomizeKrr(spec, value, random) {
  checkAnswer(spec, value, ["krr"]);
  if (bernoulli(spec.keep_probability, random)) return { value };
  const other = uniformInt(spec.k - 1, random);
  return { value: other >= value ? other + 1 : other };
}

/**
 * Focused response: the answer's bucket (its position in `focus`, or m for any other option),
 * kept with probability keep_probability, else a uniform other one of the m + 1 buckets.
 * @param {FocusSpec} spec
 * @param {number} value
 * @param {RandomSource} random
 * @returns {{value: number}}
 */
export function randomizeFocus(spec, value, random) {
  checkAnswer(spec, value, ["focus"]);
  const m = spec.focus.length;
  const named = spec.focus.indexOf(value);
  const bucket = named === -1 ? m : named;
  if (bernoulli(spec.keep_probability, random)) return { value: bucket };
  const other = uniformInt(m, random);
  return { value: other >= bucket ? other + 1 : other };
}

/**
 * Count Mean Sketch (seed 004, Fig. 5): a uniform hash index j, the vector that is +1 at
 * hashes[j][value] and -1 elsewhere, each coordinate kept with probability keep_probability.
 * Bits are sent as 1 for +1 and 0 for -1.
 * @param {CmsSpec} spec
 * @param {number} value
 * @param {RandomSource} random
 * @returns {{hash_index: number, bits: number[]}}
 */
export function randomizeCms(spec, value, random) {
  checkAnswer(spec, value, ["cms"]);
  const j = uniformInt(spec.hash_count, random);
  const position = spec.hashes[j][value];
  const bits = [];
  for (let i = 0; i < spec.width; i += 1) {
    const encoded = i === position ? 1 : 0;
    bits.push(bernoulli(spec.keep_probability, random) ? encoded : 1 - encoded);
  }
  return { hash_index: j, bits };
}

/**
 * dBitFlip (Ding, Kulkarni, Yekhanin 2017): d distinct buckets uniformly at random, and for
 * each a bit that is 1 with true_bit_probability if it is the answer's bucket, else with
 * other_bit_probability.
 * @param {DBitFlipSpec} spec
 * @param {number} value
 * @param {RandomSource} random
 * @returns {{buckets: number[], bits: number[]}}
 */
export function randomizeDBitFlip(spec, value, random) {
  checkAnswer(spec, value, ["dbitflip", "sue", "oue"]);
  // The first d entries of a partial Fisher-Yates shuffle are a uniform d-subset.
  const order = Array.from({ length: spec.k }, (_, i) => i);
  for (let i = 0; i < spec.d; i += 1) {
    const swap = i + uniformInt(spec.k - i, random);
    [order[i], order[swap]] = [order[swap], order[i]];
  }
  const buckets = order.slice(0, spec.d).sort((a, b) => a - b);
  const bits = buckets.map((bucket) => {
    const p = bucket === value ? spec.true_bit_probability : spec.other_bit_probability;
    return bernoulli(p, random) ? 1 : 0;
  });
  return { buckets, bits };
}

/**
 * A uniform sample of `count` distinct items of `items` (partial Fisher-Yates), sorted.
 * @param {number[]} items
 * @param {number} count
 * @param {RandomSource} random
 */
function sampleWithoutReplacement(items, count, random) {
  const pool = [...items];
  for (let i = 0; i < count; i += 1) {
    const swap = i + uniformInt(pool.length - i, random);
    [pool[i], pool[swap]] = [pool[swap], pool[i]];
  }
  return pool.slice(0, count).sort((a, b) => a - b);
}

/**
 * Optimal local hashing: a hash h(x) = ((a x^2 + b x + c) mod P) mod g with uniform a, b, c,
 * and k-RR over [g] applied to h(answer). All products stay below 2^53, so Numbers are exact.
 * @param {OlhSpec} spec
 * @param {number} value
 * @param {RandomSource} random
 * @returns {{hash: number[], value: number}}
 */
export function randomizeOlh(spec, value, random) {
  checkAnswer(spec, value, ["olh"]);
  const coefficients = [0, 0, 0].map(() => uniformInt(spec.prime, random));
  const [a, b, c] = coefficients;
  const hashed = ((((((a * value) % spec.prime) + b) % spec.prime) * value) % spec.prime + c) % spec.prime % spec.range_size;
  if (bernoulli(spec.keep_probability, random)) return { hash: coefficients, value: hashed };
  const other = uniformInt(spec.range_size - 1, random);
  return { hash: coefficients, value: other >= hashed ? other + 1 : other };
}

/**
 * Subset selection: with in_probability the answer and subset_size - 1 other options, else
 * subset_size other options, chosen uniformly.
 * @param {SubsetSpec} spec
 * @param {number} value
 * @param {RandomSource} random
 * @returns {{subset: number[]}}
 */
export function randomizeSubset(spec, value, random) {
  checkAnswer(spec, value, ["subset"]);
  const others = Array.from({ length: spec.k }, (_, i) => i).filter((i) => i !== value);
  if (bernoulli(spec.in_probability, random)) {
    const subset = [value, ...sampleWithoutReplacement(others, spec.subset_size - 1, random)];
    return { subset: subset.sort((a, b) => a - b) };
  }
  return { subset: sampleWithoutReplacement(others, spec.subset_size, random) };
}

/**
 * Hadamard response: with in_probability a uniform index of the answer's set, else of its complement.
 * @param {HadamardSpec} spec
 * @param {number} value
 * @param {RandomSource} random
 * @returns {{index: number}}
 */
export function randomizeHadamard(spec, value, random) {
  checkAnswer(spec, value, ["hadamard"]);
  const inside = new Set(spec.sets[value]);
  const pool = bernoulli(spec.in_probability, random)
    ? spec.sets[value]
    : Array.from({ length: spec.size }, (_, i) => i).filter((i) => !inside.has(i));
  return { index: pool[uniformInt(pool.length, random)] };
}

/**
 * Hadamard Count Mean Sketch (seed 004, Fig. 9): uniform hash index j and coefficient l, and the
 * sign H[l, h_j(answer)] kept with keep_probability. The bit is 1 for +1.
 * @param {HcmsSpec} spec
 * @param {number} value
 * @param {RandomSource} random
 * @returns {{hash_index: number, coefficient: number, bit: number}}
 */
export function randomizeHcms(spec, value, random) {
  checkAnswer(spec, value, ["hcms"]);
  const j = uniformInt(spec.hash_count, random);
  const l = uniformInt(spec.width, random);
  const sign = hadamardSign(l, spec.hashes[j][value]);
  const sent = bernoulli(spec.keep_probability, random) ? sign : -sign;
  return { hash_index: j, coefficient: l, bit: sent > 0 ? 1 : 0 };
}

const RANDOMIZERS = {
  krr: randomizeKrr,
  focus: randomizeFocus,
  cms: randomizeCms,
  dbitflip: randomizeDBitFlip,
  // SUE and OUE are unary encodings of every bucket: dBitFlip's randomizer with d = k.
  sue: randomizeDBitFlip,
  oue: randomizeDBitFlip,
  olh: randomizeOlh,
  subset: randomizeSubset,
  hadamard: randomizeHadamard,
  hcms: randomizeHcms,
  // Randomized-response designs by name (static/ldp/designs.js).
  "forced-response": randomizeDesign,
  "unrelated-question": randomizeDesign,
  warner: randomizeDesign,
  crosswise: randomizeDesign,
};

/**
 * Randomize one answer with the mechanism the spec names.
 * @param {ClientSpec} spec
 * @param {number} value
 * @param {RandomSource} [random]
 */
export function randomize(spec, value, random = cryptoRandomSource()) {
  checkSpec(spec);
  return RANDOMIZERS[spec.mechanism](/** @type {any} */ (spec), value, random);
}
