// @ts-check
/**
 * Question sampling with fake data (RS+FD): the browser's half of ldp/sampling.py. Pure functions, no DOM.
 *
 * A survey may ask each respondent m of a pool of q questions. The browser draws the m uniformly
 * without replacement (drawSample, from crypto.getRandomValues on the answer page), shows only
 * those, and for each of the other q - m sends the report of a fake answer drawn uniformly from the
 * question's options with the question's own mechanism (branching.js fillAnswer, the stand-in a
 * skipped question sends; Arcolezi et al., CIKM 2021). The body carries one report per question
 * whatever was drawn, and nothing says which questions were drawn.
 *
 * Privacy of the whole submission: only the m questions really answered carry data, so the body
 * is (sum of the other questions' epsilons + the m largest pooled epsilons)-LDP
 * (submissionEpsilon; tests/js/sampling.test.mjs enumerates it exactly). Each sampled question's
 * own report is epsilon'-LDP; Arcolezi et al.'s amplified bound holds for one report alone, not
 * for the submission, and is not claimed.
 */

import { uniformInt } from "./randomize.js";

/**
 * @typedef {import("./randomize.js").RandomSource} RandomSource
 * @typedef {{questions: number[], m: number}} Sampling
 */

/**
 * Whether a sampling block is well formed: m a whole number in [1, q] over distinct question ids.
 * @param {unknown} sampling
 * @returns {sampling is Sampling}
 */
export function validSampling(sampling) {
  if (!sampling || typeof sampling !== "object") return false;
  const { questions, m } = /** @type {any} */ (sampling);
  return (
    Array.isArray(questions) &&
    questions.every((q) => Number.isInteger(q)) &&
    new Set(questions).size === questions.length &&
    Number.isInteger(m) &&
    m >= 1 &&
    m <= questions.length
  );
}

/**
 * The m questions of the pool this respondent answers: a uniform m-subset (the first m places of
 * a Fisher-Yates shuffle drawn from `random`), in the pool's order. Never sent.
 * @param {number[]} pool  question ids
 * @param {number} m
 * @param {RandomSource} random
 * @returns {number[]}
 */
export function drawSample(pool, m, random) {
  if (!validSampling({ questions: pool, m })) throw new RangeError(`m must be a whole number in [1, ${pool.length}], got ${m}`);
  const order = [...pool.keys()];
  for (let i = 0; i < m; i += 1) {
    const j = i + uniformInt(order.length - i, random);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const chosen = new Set(order.slice(0, m));
  return pool.filter((_, i) => chosen.has(i));
}

/**
 * The whole submission's epsilon (ldp.sampling.submission_epsilon): every question outside the pool
 * adds its epsilon; of the pool, the m largest. Without a (valid) sampling block, the plain sum.
 * @param {Map<number, number>} epsilons  by question id
 * @param {Sampling | null | undefined} sampling
 * @returns {number}
 */
export function submissionEpsilon(epsilons, sampling) {
  const pool = validSampling(sampling) ? new Set(sampling.questions) : new Set();
  let total = 0;
  /** @type {number[]} */
  const pooled = [];
  for (const [question, epsilon] of epsilons) {
    if (pool.has(question)) pooled.push(epsilon);
    else total += epsilon;
  }
  if (!sampling || pooled.length === 0) return total;
  pooled.sort((a, b) => b - a);
  return pooled.slice(0, sampling.m).reduce((sum, e) => sum + e, total);
}

/**
 * The questions of the pool this respondent is not asked (a fake's report is sent for each): all
 * but a uniform draw of m (drawSample). Empty without a valid sampling block.
 * @param {unknown} sampling  the page's block ({questions, m}), if any
 * @param {RandomSource} random
 * @returns {Set<number>}
 */
export function unsampledQuestions(sampling, random) {
  if (!validSampling(sampling)) return new Set();
  const drawn = new Set(drawSample(sampling.questions, sampling.m, random));
  return new Set(sampling.questions.filter((q) => !drawn.has(q)));
}
