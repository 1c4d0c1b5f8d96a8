// @ts-check
/**
 * The privacy a spec actually gives, recomputed in the browser from the parameters it received,
 * and the check of that privacy against what the page promises. Pure functions, no DOM.
 *
 * The spec's own `epsilon` field is never trusted: each mechanism's worst-case likelihood ratio
 * is recomputed from the probabilities, sizes and tables that the randomizer will use, with the
 * formulas of ldp/ (Python), generalized so that they stay exact for any valid parameters, not
 * only for the ones ldp derives from epsilon. For a report y and answers v, v':
 *
 * - k-RR, OLH: p and q = (1 - p) / (g - 1) (g = k for k-RR, the hash range for OLH, whose
 *   hash coefficients do not depend on the answer): epsilon = |ln(p / q)|.
 * - Subset selection, omega of k: a set with v and without v' has probability
 *   p / C(k-1, omega-1) under v and (1 - p) / C(k-1, omega) under v':
 *   epsilon = |ln(p (k - omega) / ((1 - p) omega))|.
 * - Unary encodings (dBitFlip, SUE, OUE), bit probabilities p1, p0: with a = |ln(p1 / p0)| and
 *   b = |ln((1 - p1) / (1 - p0))|, epsilon = a + b when d >= 2 (both buckets can be sampled,
 *   their bits set the worst way) and max(a, b) when d = 1.
 * - Hadamard response (sets checked to be the Hadamard rows, half of K each): |ln(p / (1 - p))|.
 * - CMS: 2 |ln(p / (1 - p))| (two coordinates differ) when some hash function separates two
 *   options, else 0; HCMS: |ln(p / (1 - p))| under the same condition.
 * - RAPPOR (rappor.js): one report's epsilon_1 = h ln(q* (1 - p*) / (p* (1 - q*))); the
 *   longitudinal epsilon_inf of its memoized layer is rappor.js's epsilonInfinity.
 *
 * A recurring survey's memoized question carries a `memo` block beside its spec ({series,
 * question, layers}, checked by checkMemo): its reports are a permanent layer derived from the
 * device secret per (series, question, answer) under a fresh instantaneous layer each round. The
 * page promises both the per-round epsilon and epsilon_inf for it, and both are recomputed.
 * - Randomized-response designs (designs.js, from their integer weights): forced response
 *   ln(1 + truth / min forced), unrelated question ln(1 + asked sum(pi) / (innocuous min pi)),
 *   Warner and crosswise |ln(p0 / p1)|.
 * - Text sketches (freetext.js): 2 |ln(p / (1 - p))| as CMS, |ln(p / (1 - p))| as HCMS.
 * - Multi-select (multiselect.js, setSpecEpsilon): unary encodings of a set of at most l options
 *   l max(L1, L0) + min(l, k - l) min(L1, L0); padding-and-sampling ln(1 + (p / q - 1) / l)
 *   with k-RR over k + l items, the oracle's ln(p / q) with OLH.
 * - Numeric (ldp/numeric/): clamped geometric max(ln(w0 / w(G-1)), ln(sum w / w(G))); 1BitMean
 *   and Duchi ln((D - A) / A); Piecewise ln(high / low); Hybrid the larger of its branches in
 *   use; the discrete Gaussian is (epsilon, delta): delta recomputed at the stated epsilon by
 *   the hockey-stick sum for the worst pair of grid points.
 */

import { SET_MECHANISMS, TEXT_MECHANISMS } from "./constants.js";
import { designEpsilon } from "./designs.js";
import { checkTextSketchSpec } from "./freetext.js";
import { setSpecEpsilon } from "./multiselect.js";
import { checkNumericSpec } from "./numeric.js";
import { permanentDBitFlipSpec, permanentOneBitSpec } from "./memo.js";
import { checkRapporSpec, epsilonInfinity, epsilonOneReport } from "./rappor.js";
import { submissionEpsilon } from "./sampling.js";
import { CATEGORICAL_MECHANISMS, SpecError, checkSpec } from "./spec.js";

/** Relative float tolerance when comparing a recomputed budget with a promised one. */
export const TOLERANCE = 1e-9;

/** @typedef {{epsilon: number, delta: number}} Privacy */

/**
 * @param {number} p
 * @param {number} q
 */
const absLogRatio = (p, q) => Math.abs(Math.log(p / q));

/** @param {number[][]} hashes  whether some row holds two different cells */
const separates = (hashes) => hashes.some((row) => row.some((cell) => cell !== row[0]));

/** @type {Record<string, (spec: any) => number>} */
const CATEGORICAL = {
  krr: (s) => absLogRatio(s.keep_probability, (1 - s.keep_probability) / (s.k - 1)),
  focus: (s) => absLogRatio(s.keep_probability, (1 - s.keep_probability) / s.focus.length),
  olh: (s) => absLogRatio(s.keep_probability, (1 - s.keep_probability) / (s.range_size - 1)),
  subset: (s) => absLogRatio(s.in_probability * (s.k - s.subset_size), (1 - s.in_probability) * s.subset_size),
  dbitflip: unaryEpsilon,
  sue: unaryEpsilon,
  oue: unaryEpsilon,
  hadamard: (s) => absLogRatio(s.in_probability, 1 - s.in_probability),
  cms: (s) => (separates(s.hashes) ? 2 * absLogRatio(s.keep_probability, 1 - s.keep_probability) : 0),
  hcms: (s) => (separates(s.hashes) ? absLogRatio(s.keep_probability, 1 - s.keep_probability) : 0),
  "forced-response": designEpsilon,
  "unrelated-question": designEpsilon,
  warner: designEpsilon,
  crosswise: designEpsilon,
};

/** @param {any} s */
function unaryEpsilon(s) {
  const a = absLogRatio(s.true_bit_probability, s.other_bit_probability);
  const b = absLogRatio(1 - s.true_bit_probability, 1 - s.other_bit_probability);
  return s.d >= 2 ? a + b : Math.max(a, b);
}

/**
 * delta(epsilon) of the discrete Gaussian noise |Z|-weights w for two grid points `shift` apart:
 * sum over y of max(0, P(y | k) - e^epsilon P(y | k + shift)).
 * @param {number[]} weights
 * @param {number} shift
 * @param {number} epsilon
 */
function gaussianDelta(weights, shift, epsilon) {
  const total = weights.slice(1).reduce((a, b) => a + 2 * b, weights[0]);
  const full = [...weights.slice(1).reverse(), ...weights].map((w) => w / total);
  const factor = Math.exp(epsilon);
  let excess = 0;
  for (let y = 0; y < full.length + shift; y += 1) {
    const p = y < full.length ? full[y] : 0;
    const q = y >= shift ? full[y - shift] : 0;
    excess += Math.max(0, p - factor * q);
  }
  return excess;
}

/** @param {any} s */
function laplaceEpsilon(s) {
  const w = s.noise_weights;
  const ends = Math.log(w.reduce((/** @type {number} */ a, /** @type {number} */ b) => a + b, 0) / w[s.grid]);
  return s.grid >= 2 ? Math.max(ends, Math.log(w[0] / w[s.grid - 1])) : ends;
}

/** @param {any} s */
const oneBitEpsilon = (s) => Math.log((s.denominator - s.base) / s.base);

/** @type {Record<string, (spec: any) => Privacy>} */
const NUMERIC = {
  laplace: (s) => ({ epsilon: laplaceEpsilon(s), delta: 0 }),
  // The delta of a symmetric unimodal noise grows with the distance of the two grid points.
  gaussian: (s) => ({ epsilon: s.epsilon, delta: gaussianDelta(s.noise_weights, s.grid, s.epsilon) }),
  "1bitmean": (s) => ({ epsilon: oneBitEpsilon(s), delta: 0 }),
  duchi: (s) => ({ epsilon: oneBitEpsilon(s), delta: 0 }),
  piecewise: (s) => ({ epsilon: Math.log(s.high / s.low), delta: 0 }),
  hybrid: (s) => ({
    epsilon: Math.max(oneBitEpsilon(s), s.branch_weight > 0 ? Math.log(s.high / s.low) : 0),
    delta: 0,
  }),
};

/**
 * The (epsilon, delta) the spec's parameters give; throws a SpecError if the spec is malformed.
 * @param {any} spec
 * @returns {Privacy}
 */
export function specPrivacy(spec) {
  const mechanism = spec !== null && typeof spec === "object" ? spec.mechanism : undefined;
  if (CATEGORICAL_MECHANISMS.includes(mechanism)) {
    checkSpec(spec);
    return { epsilon: CATEGORICAL[mechanism](spec), delta: 0 };
  }
  if (SET_MECHANISMS.includes(mechanism)) return { epsilon: setSpecEpsilon(spec), delta: 0 };
  if (TEXT_MECHANISMS.includes(mechanism)) {
    try {
      if (mechanism === "rappor") return { epsilon: epsilonOneReport(checkRapporSpec(spec)), delta: 0 };
      const coordinates = checkTextSketchSpec(spec).mechanism === "text-cms" ? 2 : 1;
      return { epsilon: coordinates * absLogRatio(spec.keep_probability, 1 - spec.keep_probability), delta: 0 };
    } catch (error) {
      if (error instanceof RangeError) throw new SpecError("", error.message, mechanism === "rappor" ? "RAPPOR spec" : "sketch spec");
      throw error;
    }
  }
  checkNumericSpec(spec);
  return NUMERIC[mechanism](spec);
}

/** The layers of a memoized report, per mechanism (surveys/series/memoization.py MEMO_LAYERS). */
export const MEMO_LAYERS = Object.freeze({
  rappor: "memoized-prr+irr",
  dbitflip: "memoized-bits+flip",
  "1bitmean": "memoized-bit+flip",
});

/** Longest series or question id a memo block may carry. */
const MEMO_ID_LENGTH = 64;

/**
 * Throw a SpecError unless `memo` is a well-formed memo block for `spec`'s mechanism.
 * @param {any} memo
 * @param {any} spec
 */
export function checkMemo(memo, spec) {
  if (memo === null || typeof memo !== "object" || Array.isArray(memo)) throw new SpecError("memo", "must be an object", "memo block");
  const keys = Object.keys(memo).sort().join(",");
  const flips = spec?.mechanism === "dbitflip" || spec?.mechanism === "1bitmean";
  const expected = flips ? "gamma,layers,question,series" : "layers,question,series";
  if (keys !== expected) throw new SpecError("memo", `must have exactly the fields ${expected}, got ${keys}`, "memo block");
  for (const name of ["series", "question"]) {
    const value = memo[name];
    if (typeof value !== "string" || value.length === 0 || value.length > MEMO_ID_LENGTH) {
      throw new SpecError(`memo.${name}`, `must be a string of 1 to ${MEMO_ID_LENGTH} characters`, "memo block");
    }
  }
  const mechanism = spec?.mechanism;
  const layers = Object.prototype.hasOwnProperty.call(MEMO_LAYERS, mechanism) ? MEMO_LAYERS[/** @type {"rappor"} */ (mechanism)] : undefined;
  if (layers === undefined) throw new SpecError("memo", `mechanism ${JSON.stringify(mechanism)} has no memoized form`, "memo block");
  if (memo.layers !== layers) throw new SpecError("memo.layers", `must be ${JSON.stringify(layers)}, got ${JSON.stringify(memo.layers)}`, "memo block");
  if (flips) {
    try {
      if (mechanism === "dbitflip") permanentDBitFlipSpec(spec, memo.gamma);
      else permanentOneBitSpec(spec, memo.gamma);
    } catch (error) {
      throw new SpecError("memo.gamma", error instanceof Error ? error.message : String(error), "memo block");
    }
  }
  return memo;
}

/**
 * epsilon_inf of a memoized question: the permanent layer's epsilon, whatever the number of rounds
 * (RAPPOR's 2h ln((1 - f/2)/(f/2)); dBitFlip's at its memoized bit probabilities; 1BitMean's
 * ln((D - A) / A) of its memoized bit's weights).
 * @param {any} spec  checked already
 * @param {any} memo  checked already
 */
export function memoEpsilonInfinity(spec, memo) {
  if (spec.mechanism === "dbitflip") return unaryEpsilon(permanentDBitFlipSpec(spec, memo.gamma));
  if (spec.mechanism === "1bitmean") return oneBitEpsilon(permanentOneBitSpec(spec, memo.gamma));
  return epsilonInfinity(spec);
}

/**
 * @typedef {object} PagePromise
 * @property {number} total  the survey's stated total epsilon
 * @property {number | null} [cap]  the survey's budget cap, if any
 * @property {Record<string, {epsilon: number, delta?: number, epsilon_infinity?: number}>} questions  by question id
 * @property {import("./sampling.js").Sampling | null} [sampling]  the pool of which each respondent answers m (sampling.js)
 *
 * @typedef {object} Problem
 * @property {"malformed" | "unpromised" | "epsilon" | "delta" | "total" | "cap" | "epsilon_infinity" | "unmemoized"} reason
 * @property {number} [question]
 * @property {number} [found]  the recomputed value
 * @property {number} [promised]
 * @property {string} [detail]  the SpecError's message
 */

/**
 * @param {number} found
 * @param {number} promised
 */
const exceeds = (found, promised) => !(found <= promised * (1 + TOLERANCE));

/**
 * Every way the specs the page received break what the page promises: a malformed spec or memo
 * block, a question without a promise, a recomputed epsilon (delta) above the question's, a
 * memoized question whose recomputed epsilon_inf is above the promised one, a promised epsilon_inf
 * for a question that is not memoized (its rounds would add up), and a total above the survey's
 * stated total or its cap. An empty list means the page may send.
 * @param {{question: number, spec: any, memo?: any}[]} entries
 * @param {PagePromise} promise
 * @returns {Problem[]}
 */
export function checkPromises(entries, promise) {
  /** @type {Problem[]} */
  const problems = [];
  /** @type {Map<number, number>} */
  const epsilons = new Map();
  for (const { question, spec, memo } of entries) {
    let privacy;
    try {
      privacy = specPrivacy(spec);
      if (memo !== undefined) checkMemo(memo, spec);
    } catch (error) {
      if (!(error instanceof SpecError)) throw error;
      problems.push({ reason: "malformed", question, detail: error.message });
      continue;
    }
    epsilons.set(question, privacy.epsilon);
    const promised = promise.questions?.[String(question)];
    if (!promised || typeof promised.epsilon !== "number") {
      problems.push({ reason: "unpromised", question });
      continue;
    }
    if (exceeds(privacy.epsilon, promised.epsilon)) {
      problems.push({ reason: "epsilon", question, found: privacy.epsilon, promised: promised.epsilon });
    }
    if (memo !== undefined) {
      const bound = memoEpsilonInfinity(spec, memo);
      const promisedBound = promised.epsilon_infinity;
      if (typeof promisedBound !== "number" || exceeds(bound, promisedBound)) {
        problems.push({ reason: "epsilon_infinity", question, found: bound, promised: promisedBound });
      }
    } else if (promised.epsilon_infinity !== undefined) {
      problems.push({ reason: "unmemoized", question });
    }
    const promisedDelta = promised.delta ?? 0;
    if (privacy.delta > 0 && exceeds(privacy.delta, promisedDelta)) {
      problems.push({ reason: "delta", question, found: privacy.delta, promised: promisedDelta });
    }
  }
  // Of a sampled pool only the m questions really answered spend (sampling.js submissionEpsilon).
  const total = submissionEpsilon(epsilons, promise.sampling);
  if (exceeds(total, promise.total)) problems.push({ reason: "total", found: total, promised: promise.total });
  if (promise.cap != null && exceeds(total, promise.cap)) problems.push({ reason: "cap", found: total, promised: promise.cap });
  return problems;
}
