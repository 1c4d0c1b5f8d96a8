// @ts-check
/**
 * Browser-side randomizers for numeric questions, mirroring ldp/numeric/ (Python). Pure
 * functions, no DOM; the random source is passed in (crypto.getRandomValues in the browser).
 *
 * Every mechanism (ldp/numeric/base.py) rounds the value x in [lo, hi] to a grid point k in
 * {0..grid} (t = (x - lo) / (hi - lo) * grid, up with probability frac(t): alpha-point rounding,
 * seed 004), then draws the report index from *integer weights* in the spec with uniform
 * integers (rejection sampling, no modulo bias, no floating-point noise), so the privacy
 * guarantee holds for exactly the reports sent. The report is {index}.
 *
 * Every spec field is validated (types, finiteness, ranges), and the spec's worst-case
 * likelihood ratio is recomputed from its integers and refused if it exceeds e^epsilon (or, for
 * the Gaussian, if its delta exceeds the stated delta): a wrong spec throws, it never randomizes.
 */

import { EPSILON_MAX, EPSILON_MIN, MAX_GRID } from "./constants.js";
import { cryptoRandomSource, uniformInt, uniformUnit } from "./randomize.js";
import { SpecError } from "./spec.js";

/** @typedef {import("./randomize.js").RandomSource} RandomSource */

/**
 * @typedef {object} NumericHeader
 * @property {string} mechanism
 * @property {number} lo
 * @property {number} hi
 * @property {number} epsilon
 * @property {number} grid
 *
 * @typedef {NumericHeader & {noise_weights: number[]}} LaplaceSpec
 * @typedef {NumericHeader & {delta: number, mu: number, noise_weights: number[]}} GaussianSpec
 * @typedef {NumericHeader & {denominator: number, base: number, slope: number}} OneBitSpec
 * @typedef {NumericHeader & {window: number, high: number, low: number}} PiecewiseSpec
 * @typedef {PiecewiseSpec & OneBitSpec & {branch_weight: number, branch_total: number}} HybridSpec
 * @typedef {LaplaceSpec | GaussianSpec | OneBitSpec | PiecewiseSpec | HybridSpec} NumericSpec
 */

const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;
// Float slack when comparing a ratio of integers with e^epsilon (the server decides it exactly).
const RATIO_SLACK = 1e-12;

/**
 * A uniform integer in [0, bound), bound <= 2^53, by rejection sampling of 53 random bits.
 * @param {number} bound
 * @param {RandomSource} random
 */
export function uniformInteger(bound, random) {
  if (!Number.isInteger(bound) || bound < 1 || bound > TWO_POW_53) {
    throw new RangeError(`bound must be an integer in [1, 2^53], got ${bound}`);
  }
  if (bound <= TWO_POW_32) return uniformInt(bound, random);
  const limit = TWO_POW_53 - (TWO_POW_53 % bound);
  const words = new Uint32Array(2);
  for (;;) {
    random(words);
    const value = (words[0] >>> 11) * TWO_POW_32 + words[1];
    if (value < limit) return value % bound;
  }
}

// -- spec validation ------------------------------------------------------------------------

/**
 * A SpecError; `message` starts with the field's name unless `field` is given.
 * @param {string} message
 * @param {string} [field]
 */
function invalid(message, field = message.split(" ")[0]) {
  const detail = message.startsWith(`${field} `) ? message.slice(field.length + 1) : message;
  return new SpecError(field, detail, "numeric spec");
}

/**
 * @param {any} spec
 * @param {string} name
 */
function finiteNumber(spec, name) {
  const value = spec[name];
  if (typeof value !== "number" || !Number.isFinite(value)) throw invalid(`${name} must be a finite number, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * @param {any} spec
 * @param {string} name
 * @param {number} low
 * @param {number} high
 */
function integerIn(spec, name, low, high) {
  const value = spec[name];
  if (typeof value !== "number" || !Number.isInteger(value) || value < low || value > high) {
    throw invalid(`${name} must be an integer in [${low}, ${high}], got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * @param {any} spec
 * @param {string} name
 * @param {number} [length]
 */
function weightList(spec, name, length) {
  const value = spec[name];
  if (!Array.isArray(value) || value.length === 0 || (length !== undefined && value.length !== length)) {
    throw invalid(`${name} must be a list of ${length ?? "some"} integers`);
  }
  value.forEach((w, i) => {
    if (typeof w !== "number" || !Number.isInteger(w) || w < 0 || w > TWO_POW_53) throw invalid(`${name}[${i}] must be a non-negative integer, got ${JSON.stringify(w)}`);
  });
  if (value[0] === 0 || value[value.length - 1] === 0) throw invalid(`${name} must start and end with a positive weight`);
  return value;
}

/** @param {number[]} weights */
function symmetricTotal(weights) {
  let total = weights[0];
  for (let j = 1; j < weights.length; j += 1) total += 2 * weights[j];
  if (total > TWO_POW_53) throw invalid("noise_weights must total at most 2^53");
  return total;
}

/**
 * @param {number} numerator
 * @param {number} denominator
 * @param {number} epsilon
 * @param {string} what
 */
function checkRatio(numerator, denominator, epsilon, what) {
  if (Math.log(numerator / denominator) > epsilon + RATIO_SLACK) {
    throw invalid(`${what} allow a likelihood ratio above e^epsilon`, what.split(" ")[0]);
  }
}

/**
 * Validate the fields every numeric spec has.
 * @param {any} spec
 */
function checkHeader(spec) {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) throw invalid("a spec must be an object", "");
  const lo = finiteNumber(spec, "lo");
  const hi = finiteNumber(spec, "hi");
  if (!(lo < hi)) throw invalid(`lo must be below hi, got ${lo} and ${hi}`);
  const epsilon = finiteNumber(spec, "epsilon");
  if (epsilon < EPSILON_MIN || epsilon > EPSILON_MAX) throw invalid(`epsilon must lie in [${EPSILON_MIN}, ${EPSILON_MAX}], got ${epsilon}`);
  integerIn(spec, "grid", 1, MAX_GRID);
}

/** @param {any} spec */
function checkLaplace(spec) {
  const w = weightList(spec, "noise_weights", spec.grid + 1);
  symmetricTotal(w);
  for (let j = 1; j < w.length - 1; j += 1) if (w[j] > w[j - 1]) throw invalid("noise_weights must decrease");
  // Worst ratios (ldp/numeric/laplace.py): inside, w(0) / w(G - 1); at the clamped ends, sum(w) / w(G).
  if (spec.grid >= 2) checkRatio(w[0], w[spec.grid - 1], spec.epsilon, "noise_weights");
  checkRatio(w.reduce((a, b) => a + b, 0), w[spec.grid], spec.epsilon, "noise_weights");
}

/** @param {any} spec */
function checkGaussian(spec) {
  const delta = finiteNumber(spec, "delta");
  if (delta <= 0 || delta > 0.1) throw invalid(`delta must lie in (0, 0.1], got ${delta}`);
  const mu = finiteNumber(spec, "mu");
  if (mu <= 0) throw invalid(`mu must be positive, got ${mu}`);
  const w = weightList(spec, "noise_weights");
  if (w.length <= spec.grid) throw invalid("noise_weights must reach beyond the grid");
  const total = symmetricTotal(w);
  // delta of the worst pair of grid points (shift = grid), by the hockey-stick sum.
  const full = [...w.slice(1).reverse(), ...w].map((v) => v / total);
  const factor = Math.exp(spec.epsilon);
  let excess = 0;
  for (let y = 0; y < full.length + spec.grid; y += 1) {
    const p = y < full.length ? full[y] : 0;
    const q = y >= spec.grid ? full[y - spec.grid] : 0;
    excess += Math.max(0, p - factor * q);
  }
  if (excess > delta * (1 + 1e-9)) throw invalid(`noise_weights give delta ${excess} above ${delta}`);
}

/** @param {any} spec */
function checkOneBit(spec) {
  const denominator = integerIn(spec, "denominator", 2, TWO_POW_53);
  const base = integerIn(spec, "base", 1, denominator);
  const slope = integerIn(spec, "slope", 1, denominator);
  if (base + spec.grid * slope !== denominator - base) throw invalid("slope must make base + grid * slope equal denominator - base");
  checkRatio(denominator - base, base, spec.epsilon, "denominator and base");
}

/** @param {any} spec */
function checkPiecewise(spec) {
  const window = integerIn(spec, "window", 1, MAX_GRID);
  const high = integerIn(spec, "high", 1, TWO_POW_53);
  const low = integerIn(spec, "low", 1, high);
  if (window * high + spec.grid * low > TWO_POW_53) throw invalid("window * high + grid * low must be at most 2^53");
  checkRatio(high, low, spec.epsilon, "high and low");
}

/** @param {any} spec */
function checkHybrid(spec) {
  checkPiecewise(spec);
  checkOneBit(spec);
  integerIn(spec, "branch_total", TWO_POW_32, TWO_POW_32);
  integerIn(spec, "branch_weight", 0, TWO_POW_32);
}

const CHECKS = {
  laplace: checkLaplace,
  gaussian: checkGaussian,
  "1bitmean": checkOneBit,
  duchi: checkOneBit,
  piecewise: checkPiecewise,
  hybrid: checkHybrid,
};

/**
 * Throw an Error naming the problem unless `spec` is a well-formed numeric client spec whose
 * integers keep the likelihood ratio within e^epsilon (delta within the stated delta).
 * @param {any} spec
 * @returns {NumericSpec}
 */
export function checkNumericSpec(spec) {
  checkHeader(spec);
  const check = Object.prototype.hasOwnProperty.call(CHECKS, spec.mechanism) ? CHECKS[/** @type {keyof CHECKS} */ (spec.mechanism)] : undefined;
  if (!check) throw invalid(`mechanism must be one of ${Object.keys(CHECKS).join(", ")}, got ${JSON.stringify(spec.mechanism)}`);
  check(spec);
  return spec;
}

// -- randomizers -----------------------------------------------------------------------------

/**
 * The grid point of `value`: floor(t) or floor(t) + 1, up with probability frac(t); with a kept
 * `alpha` in [0, 1) (seed 004's alpha-point rounding) up iff frac(t) + alpha >= 1.
 * @param {NumericHeader} spec
 * @param {number} value
 * @param {RandomSource} random
 * @param {number} [alpha]
 */
export function roundToGrid(spec, value, random, alpha) {
  if (typeof value !== "number" || !Number.isFinite(value) || value < spec.lo || value > spec.hi) {
    throw new RangeError(`the answer must be a number between ${spec.lo} and ${spec.hi}, got ${value}`);
  }
  const t = ((value - spec.lo) / (spec.hi - spec.lo)) * spec.grid;
  const below = Math.min(Math.floor(t), spec.grid);
  const fraction = t - below;
  if (alpha === undefined) return below + (uniformUnit(random) < fraction ? 1 : 0);
  if (typeof alpha !== "number" || !(alpha >= 0 && alpha < 1)) throw new RangeError(`alpha must lie in [0, 1), got ${alpha}`);
  return below + (fraction + alpha >= 1 ? 1 : 0);
}

/**
 * Z with P(Z = +-j) = weights[j] / total: a uniform integer located in the blocks
 * [w0, 2 w1, 2 w2, ...], the first half of block j giving -j and the second +j.
 * @param {number[]} weights
 * @param {RandomSource} random
 */
function sampleSymmetric(weights, random) {
  let u = uniformInteger(symmetricTotal(weights), random);
  if (u < weights[0]) return 0;
  u -= weights[0];
  for (let j = 1; j < weights.length; j += 1) {
    if (u < 2 * weights[j]) return u < weights[j] ? -j : j;
    u -= 2 * weights[j];
  }
  throw new Error("unreachable: u exceeds the total");
}

/** @type {Record<string, (spec: any, k: number, random: RandomSource) => number>} */
const GRID_SAMPLERS = {
  // Clamped geometric: y = clamp(k + Z, 0, grid).
  laplace: (spec, k, random) => Math.min(Math.max(k + sampleSymmetric(spec.noise_weights, random), 0), spec.grid),
  // Discrete Gaussian: index k + Z + M, M = noise_weights.length - 1.
  gaussian: (spec, k, random) => k + sampleSymmetric(spec.noise_weights, random) + spec.noise_weights.length - 1,
  "1bitmean": sampleOneBit,
  duchi: sampleOneBit,
  piecewise: samplePiecewise,
  hybrid: (spec, k, random) =>
    uniformInt(spec.branch_total, random) < spec.branch_weight
      ? samplePiecewise(spec, k, random)
      : spec.grid + spec.window + sampleOneBit(spec, k, random),
};

/**
 * 1BitMean / Duchi et al.: 1 with probability (base + k slope) / denominator.
 * @param {OneBitSpec} spec
 * @param {number} k
 * @param {RandomSource} random
 */
function sampleOneBit(spec, k, random) {
  return uniformInteger(spec.denominator, random) < spec.base + k * spec.slope ? 1 : 0;
}

/**
 * Piecewise on the integer grid: cells k..k+window-1 weigh `high`, the other `grid` cells `low`.
 * @param {PiecewiseSpec} spec
 * @param {number} k
 * @param {RandomSource} random
 */
function samplePiecewise(spec, k, random) {
  const inside = spec.window * spec.high;
  const u = uniformInteger(inside + spec.grid * spec.low, random);
  if (u < inside) return k + Math.floor(u / spec.high);
  const other = Math.floor((u - inside) / spec.low);
  return other >= k ? other + spec.window : other;
}

/**
 * Randomize one numeric answer with the mechanism its spec names; returns the report to send.
 * @param {any} spec  a client spec made by ldp.numeric (validated here)
 * @param {number} value  the true answer, a finite number in [lo, hi]
 * @param {RandomSource} [random]
 * @param {number} [alpha]  a kept alpha-point threshold in [0, 1), for memoization
 * @returns {{index: number}}
 */
export function randomizeNumeric(spec, value, random = cryptoRandomSource(), alpha = undefined) {
  checkNumericSpec(spec);
  const k = roundToGrid(spec, value, random, alpha);
  return { index: GRID_SAMPLERS[spec.mechanism](spec, k, random) };
}

/**
 * Number of possible reports (indices 0 .. size - 1) of a valid spec.
 * @param {NumericSpec} spec
 */
export function outputSize(spec) {
  const s = /** @type {any} */ (spec);
  switch (spec.mechanism) {
    case "laplace":
      return s.grid + 1;
    case "gaussian":
      return s.grid + 2 * (s.noise_weights.length - 1) + 1;
    case "1bitmean":
    case "duchi":
      return 2;
    case "piecewise":
      return s.grid + s.window;
    default:
      return s.grid + s.window + 2;
  }
}

/**
 * The exact report distribution the spec implies: table[k][y] = P(report y | grid point k),
 * computed from the spec's integers (as floats) without sampling.
 * @param {any} spec
 * @returns {number[][]}
 */
export function reportTable(spec) {
  checkNumericSpec(spec);
  const size = outputSize(spec);
  const rows = [];
  for (let k = 0; k <= spec.grid; k += 1) {
    const row = new Array(size).fill(0);
    if (spec.mechanism === "laplace" || spec.mechanism === "gaussian") {
      const w = spec.noise_weights;
      const total = symmetricTotal(w);
      const shift = spec.mechanism === "gaussian" ? w.length - 1 : 0;
      for (let z = -(w.length - 1); z < w.length; z += 1) {
        let y = k + z + shift;
        if (spec.mechanism === "laplace") y = Math.min(Math.max(y, 0), spec.grid);
        row[y] += w[Math.abs(z)] / total;
      }
    } else {
      const bit = () => (spec.base + k * spec.slope) / spec.denominator;
      const piecewise = (/** @type {number} */ scale) => {
        const total = spec.window * spec.high + spec.grid * spec.low;
        for (let y = 0; y < spec.grid + spec.window; y += 1) {
          row[y] = (scale * (y >= k && y < k + spec.window ? spec.high : spec.low)) / total;
        }
      };
      if (spec.mechanism === "piecewise") piecewise(1);
      else if (spec.mechanism === "hybrid") {
        const beta = spec.branch_weight / spec.branch_total;
        piecewise(beta);
        row[size - 1] = (1 - beta) * bit();
        row[size - 2] = (1 - beta) * (1 - bit());
      } else {
        row[1] = bit();
        row[0] = 1 - bit();
      }
    }
    rows.push(row);
  }
  return rows;
}
