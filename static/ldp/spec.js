// @ts-check
/**
 * Validation of the client specs the server sends for categorical questions (ldp/mechanisms/).
 * Pure functions, no DOM.
 *
 * A randomizer trusts its spec completely: a probability that is missing, NaN, out of [0, 1] or
 * a string, a missing k, an index table of the wrong shape, all change what leaves the browser,
 * and some give the answer away. So every field is checked here before any answer is
 * randomized, against the same bounds ldp enforces when it builds a mechanism, and a malformed
 * spec throws a SpecError naming the field; it is never randomized.
 *
 * Every probability must lie strictly inside (0, 1): at 0 or 1 some report is impossible under
 * one answer and possible under another, an infinite likelihood ratio.
 */

// The bounds ldp enforces (ldp/privacy.py, ldp/mechanisms/base.py, cms.py, hcms.py, local_hashing.py).
import {
  CATEGORICAL_MECHANISMS,
  EPSILON_MAX,
  EPSILON_MIN,
  MAX_CMS_WIDTH,
  MAX_HCMS_WIDTH,
  MAX_OPTIONS,
  MAX_RANGE,
  MAX_SKETCH_HASH_COUNT,
} from "./constants.js";

export { CATEGORICAL_MECHANISMS };

/** Thrown for a malformed spec; `field` names the offending field ("" for the spec itself). */
export class SpecError extends Error {
  /**
   * @param {string} field
   * @param {string} detail  what is wrong with it
   * @param {string} [what]  "spec", or "numeric spec"
   */
  constructor(field, detail, what = "spec") {
    super(`malformed ${what}: ${field ? `${field} ` : ""}${detail}`);
    this.name = "SpecError";
    this.field = field;
  }
}

const TWO_POW_32 = 4294967296;

/** @param {unknown} value */
function show(value) {
  if (typeof value === "number") return String(value);
  if (value === undefined) return "missing";
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/**
 * @param {any} spec
 * @param {string} name
 * @param {number} low
 * @param {number} high
 */
export function integerField(spec, name, low, high) {
  const value = spec[name];
  if (typeof value !== "number" || !Number.isInteger(value) || value < low || value > high) {
    throw new SpecError(name, `must be an integer in [${low}, ${high}], got ${show(value)}`);
  }
  return value;
}

/**
 * A probability strictly between 0 and 1.
 * @param {any} spec
 * @param {string} name
 */
export function probabilityField(spec, name) {
  const value = spec[name];
  if (typeof value !== "number" || !Number.isFinite(value) || !(value > 0 && value < 1)) {
    throw new SpecError(name, `must be a probability strictly between 0 and 1, got ${show(value)}`);
  }
  return value;
}

/**
 * A list of exactly `length` entries.
 * @param {unknown} value
 * @param {string} name
 * @param {number} length
 * @returns {unknown[]}
 */
function listOf(value, name, length) {
  if (!Array.isArray(value)) throw new SpecError(name, `must be a list, got ${show(value)}`);
  if (value.length !== length) throw new SpecError(name, `must have ${length} entries, got ${value.length}`);
  return value;
}

/** @param {number} n */
function isPrime(n) {
  if (n < 2) return false;
  for (let d = 2; d * d <= n; d += 1) if (n % d === 0) return false;
  return true;
}

/**
 * The header every categorical spec carries: mechanism, k and the stated epsilon.
 * @param {any} spec
 */
function checkHeader(spec) {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) throw new SpecError("", "a spec must be an object");
  integerField(spec, "k", 2, MAX_OPTIONS);
  const epsilon = spec.epsilon;
  if (typeof epsilon !== "number" || !Number.isFinite(epsilon) || epsilon < EPSILON_MIN || epsilon > EPSILON_MAX) {
    throw new SpecError("epsilon", `must be a number in [${EPSILON_MIN}, ${EPSILON_MAX}], got ${show(epsilon)}`);
  }
}

/**
 * hashes[j][option] for j < hash_count: hash_count rows of k integers in [0, width).
 * @param {any} spec
 */
function checkHashTable(spec) {
  const rows = listOf(spec.hashes, "hashes", spec.hash_count);
  rows.forEach((row, j) => {
    listOf(row, `hashes[${j}]`, spec.k).forEach((cell, option) => {
      if (typeof cell !== "number" || !Number.isInteger(cell) || cell < 0 || cell >= spec.width) {
        throw new SpecError(`hashes[${j}][${option}]`, `must be an integer in [0, ${spec.width}), got ${show(cell)}`);
      }
    });
  });
}

/**
 * @param {any} spec
 * @param {number} maxWidth
 */
function checkSketch(spec, maxWidth) {
  integerField(spec, "hash_count", 1, MAX_SKETCH_HASH_COUNT);
  integerField(spec, "width", 2, maxWidth);
  probabilityField(spec, "keep_probability");
  checkHashTable(spec);
}

/**
 * (-1)^popcount(a & b): an entry of the Sylvester-Hadamard matrix.
 * @param {number} a
 * @param {number} b
 */
export function hadamardSign(a, b) {
  let overlap = a & b;
  let parity = 0;
  while (overlap) {
    parity ^= overlap & 1;
    overlap >>>= 1;
  }
  return parity ? -1 : 1;
}

const TWO_POW_53 = 9007199254740992;

/**
 * A design's distribution as integer weights (ldp/designs/channel.py ``weights``): `length` positive
 * integers whose total, the common denominator, is at most 2^53 (the browser draws exactly below it).
 * A zero weight would make a report impossible under one answer and possible under another.
 * @param {any} spec
 * @param {string} name
 * @param {number} length
 * @returns {number[]}
 */
export function weightsField(spec, name, length) {
  const weights = /** @type {number[]} */ (listOf(spec[name], name, length));
  weights.forEach((weight, i) => {
    if (typeof weight !== "number" || !Number.isSafeInteger(weight) || weight < 1) {
      throw new SpecError(`${name}[${i}]`, `must be a positive integer, got ${show(weight)}`);
    }
  });
  if (weights.reduce((a, b) => a + b, 0) > TWO_POW_53) throw new SpecError(name, "must total at most 2^53");
  return weights;
}

/**
 * Warner's and the crosswise design: a yes/no question, p as two weights that differ.
 * @param {any} spec
 */
function checkMirrored(spec) {
  integerField(spec, "k", 2, 2);
  const [direct, mirrored] = weightsField(spec, "p", 2);
  if (direct === mirrored) throw new SpecError("p", "must not be 1/2: no report would tell yes from no");
}

/** @type {Record<string, (spec: any) => void>} */
const CHECKS = {
  "forced-response": (spec) => {
    const total = weightsField(spec, "forced", spec.k).reduce((a, b) => a + b, 0);
    integerField(spec, "truth", 1, TWO_POW_53 - total);
  },
  "unrelated-question": (spec) => {
    weightsField(spec, "sensitive", 2);
    weightsField(spec, "pi", spec.k);
  },
  warner: checkMirrored,
  crosswise: checkMirrored,
  krr: (spec) => probabilityField(spec, "keep_probability"),
  focus: (spec) => {
    probabilityField(spec, "keep_probability");
    const focus = spec.focus;
    if (!Array.isArray(focus) || focus.length < 1 || focus.length > spec.k - 1) {
      throw new SpecError("focus", `must be a list of 1 to ${spec.k - 1} options, got ${show(focus)}`);
    }
    focus.forEach((option, i) => {
      if (typeof option !== "number" || !Number.isInteger(option) || option < 0 || option >= spec.k || focus.indexOf(option) !== i) {
        throw new SpecError(`focus[${i}]`, `must be an option in [0, ${spec.k}) named once, got ${show(option)}`);
      }
    });
  },
  cms: (spec) => checkSketch(spec, MAX_CMS_WIDTH),
  hcms: (spec) => {
    checkSketch(spec, MAX_HCMS_WIDTH);
    if ((spec.width & (spec.width - 1)) !== 0) throw new SpecError("width", `must be a power of 2, got ${spec.width}`);
  },
  dbitflip: checkUnary,
  sue: checkFullUnary,
  oue: checkFullUnary,
  olh: (spec) => {
    const g = integerField(spec, "range_size", 2, MAX_RANGE);
    const prime = integerField(spec, "prime", Math.max(spec.k, g) + 1, TWO_POW_32 - 1);
    if (!isPrime(prime)) throw new SpecError("prime", `must be prime, got ${prime}`);
    probabilityField(spec, "keep_probability");
  },
  subset: (spec) => {
    integerField(spec, "subset_size", 1, spec.k - 1);
    probabilityField(spec, "in_probability");
  },
  hadamard: (spec) => {
    // K is the smallest power of 2 above k, and option v's set is {i : H[v + 1, i] = +1}
    // (ldp/mechanisms/hadamard.py): anything else is not Hadamard response.
    let size = 1;
    while (size <= spec.k) size *= 2;
    integerField(spec, "size", size, size);
    probabilityField(spec, "in_probability");
    listOf(spec.sets, "sets", spec.k).forEach((set, v) => {
      const expected = Array.from({ length: size }, (_, i) => i).filter((i) => hadamardSign(v + 1, i) === 1);
      const members = listOf(set, `sets[${v}]`, size / 2);
      members.forEach((member, i) => {
        if (member !== expected[i]) throw new SpecError(`sets[${v}][${i}]`, `must be ${expected[i]}, got ${show(member)}`);
      });
    });
  },
};

/** @param {any} spec */
function checkUnary(spec) {
  integerField(spec, "d", 1, spec.k);
  probabilityField(spec, "true_bit_probability");
  probabilityField(spec, "other_bit_probability");
}

/** SUE and OUE report every bucket: d = k. @param {any} spec */
function checkFullUnary(spec) {
  integerField(spec, "d", spec.k, spec.k);
  checkUnary(spec);
}

// Specs already checked (by identity), so that randomizing many answers with one spec checks it once.
const checked = new WeakSet();

/**
 * Throw a SpecError naming the field unless `spec` is a well-formed categorical client spec.
 * @param {any} spec
 * @returns {any} the same spec
 */
export function checkSpec(spec) {
  if (spec !== null && typeof spec === "object" && checked.has(spec)) return spec;
  checkHeader(spec);
  const mechanism = spec.mechanism;
  if (typeof mechanism !== "string" || !Object.prototype.hasOwnProperty.call(CHECKS, mechanism)) {
    throw new SpecError("mechanism", `must be one of ${CATEGORICAL_MECHANISMS.join(", ")}, got ${show(mechanism)}`);
  }
  CHECKS[mechanism](spec);
  checked.add(spec);
  return spec;
}
