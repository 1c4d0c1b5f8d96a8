// @ts-check
/**
 * One question's report from the respondent's answer, and what sending it spends: the answer
 * page's privacy work, kept out of the page glue (static/surveys/respond.js reads the answers
 * from the page and calls these). Pure functions, no DOM; the random source and the storage
 * (localStorage in the browser) are passed in.
 *
 * A question's spec entry is {question, version, spec, memo?, digest?}. The spec's mechanism names
 * its family (constants.js FAMILIES, generated from ldp), and the family names the builder
 * (BUILDERS): option index for the shares family (categorical mechanisms), value for the mean family, the set
 * of checked options for multi-select, the normalized text for free text. A recurring survey's
 * memoized question (a `memo` block: RAPPOR, dBitFlip, 1BitMean) is randomized in two layers
 * (memo.js): the permanent one derived from the device secret per (series, question key,
 * answer), the same every round, and fresh noise on top; its question key carries the spec's
 * digest, so changed parameters give a new, independent permanent layer.
 */

import { FAMILIES } from "./constants.js";
import { randomizeText, randomizeTextHadamard } from "./freetext.js";
import { recordSpends } from "./ledger.js";
import {
  dbitflipRound,
  loadDeviceSecret,
  memoQuestionKey,
  oneBitRound,
  permanentDBitFlipSpec,
  permanentOneBitSpec,
  pinDigest,
  pinStatus,
  rapporRound,
  roundSpend,
  specDigest,
} from "./memo.js";
import { randomizeSet } from "./multiselect.js";
import { randomizeNumeric } from "./numeric.js";
import { randomizeRappor } from "./rappor.js";
import { randomize, uniformInt } from "./randomize.js";
import { submissionEpsilon, validSampling } from "./sampling.js";

/**
 * @typedef {import("./randomize.js").RandomSource} RandomSource
 * @typedef {{series: string, question: string, layers?: string, gamma?: number}} MemoBlock
 * @typedef {{question: number, version?: number, spec: any, memo?: MemoBlock, digest?: string}} SpecEntry
 * @typedef {{index?: number, value?: number, text?: string, chosen?: number[]}} Answer
 * @typedef {{random: RandomSource, storage?: Storage}} Sources  storage: localStorage when absent
 */

/**
 * The family of a mechanism: "shares", "mean", "multi" or "text" (constants.js FAMILIES, from ldp.registry).
 * @param {string} mechanism
 * @returns {string}
 */
export function familyOf(mechanism) {
  const found = Object.entries(FAMILIES).find(([, names]) => names.includes(mechanism));
  if (!found) throw new RangeError(`unknown mechanism ${JSON.stringify(mechanism)}`);
  return found[0];
}

/**
 * The label a memoized question's permanent layer is keyed by: its id and its spec digest.
 * @param {SpecEntry} entry
 */
function keyOf(entry) {
  if (!entry.memo || !entry.digest) throw new Error("a memoized question needs its digest");
  return memoQuestionKey(entry.memo.question, entry.digest);
}

/**
 * The memoized reports, per mechanism (memo.js): dBitFlip's buckets and bits and 1BitMean's bit
 * (after alpha-point rounding with a kept alpha) from the device secret, each bit flipped with
 * the block's gamma; RAPPOR's cohort and permanent layer from the device secret under a fresh IRR.
 * @type {Record<string, (entry: SpecEntry, answer: Answer, secret: Uint8Array, random: RandomSource) => Promise<any>>}
 */
const MEMOIZED = {
  dbitflip: (entry, answer, secret, random) => {
    const memo = /** @type {{series: string, gamma: number}} */ (entry.memo);
    const permanent = permanentDBitFlipSpec(entry.spec, memo.gamma);
    return dbitflipRound(secret, memo.series, keyOf(entry), answer.index, permanent, memo.gamma, random);
  },
  "1bitmean": (entry, answer, secret, random) => {
    const memo = /** @type {{series: string, gamma: number}} */ (entry.memo);
    const permanent = permanentOneBitSpec(entry.spec, memo.gamma);
    return oneBitRound(secret, memo.series, keyOf(entry), answer.value, permanent, memo.gamma, random);
  },
  rappor: (entry, answer, secret, random) =>
    rapporRound(secret, /** @type {MemoBlock} */ (entry.memo).series, keyOf(entry), answer.text, entry.spec, random),
};

/**
 * A short answer's report, already normalized: a sketch report (text-cms, text-hcms) or a RAPPOR
 * report in a cohort drawn here, uniformly (the cohort says nothing about the answer).
 * @param {any} spec
 * @param {string} text
 * @param {RandomSource} random
 */
function textReport(spec, text, random) {
  if (spec.mechanism === "rappor") return randomizeRappor(spec, text, uniformInt(spec.cohorts, random), random);
  if (spec.mechanism === "text-hcms") return randomizeTextHadamard(spec, text, random);
  return randomizeText(spec, text, random);
}

/**
 * The one-layer report of each family, from the part of the answer it randomizes.
 * @type {Record<string, (spec: any, answer: Answer, random: RandomSource) => any>}
 */
const BUILDERS = {
  shares: (spec, answer, random) => randomize(spec, answer.index, random),
  mean: (spec, answer, random) => randomizeNumeric(spec, /** @type {number} */ (answer.value), random),
  multi: (spec, answer, random) => randomizeSet(spec, /** @type {number[]} */ (answer.chosen), random),
  text: (spec, answer, random) => textReport(spec, /** @type {string} */ (answer.text), random),
};

/**
 * The report of one answered question: memoized when its entry carries a memo block for a
 * mechanism that has a memoized form, else its family's one-layer report. The device secret is
 * read from `storage` (created there on first use) only for a memoized question.
 * @param {SpecEntry} entry
 * @param {Answer} answer  {index} (categorical; a declared pair's joint index), {value}, {chosen} or {text}
 * @param {Sources} sources
 * @returns {Promise<any>}
 */
export async function buildReport(entry, answer, { random, storage }) {
  const mechanism = entry.spec.mechanism;
  const memoized = entry.memo && Object.prototype.hasOwnProperty.call(MEMOIZED, mechanism) ? MEMOIZED[mechanism] : null;
  if (memoized) return memoized(entry, answer, loadDeviceSecret(storage), random);
  return BUILDERS[familyOf(mechanism)](entry.spec, answer, random);
}

/**
 * What a memoized question's round spends over all rounds, in the ledger's form (memo.js roundSpend).
 * @param {SpecEntry} entry
 */
export function memoSpend(entry) {
  const gamma = Number(entry.memo?.gamma);
  if (entry.spec.mechanism === "dbitflip") return roundSpend(permanentDBitFlipSpec(entry.spec, gamma), gamma).memo;
  if (entry.spec.mechanism === "1bitmean") return roundSpend(permanentOneBitSpec(entry.spec, gamma), gamma).memo;
  return roundSpend(entry.spec).memo;
}

/**
 * The ledger's records for the questions the server received (its receipt): the survey, its title,
 * each question's id and epsilon; a round of a recurring survey under its series (survey = series
 * id) with its round number, and a memoized question with its longitudinal bound and digest. No
 * answer and no report. The questions of a sampled pool (page.sampling, sampling.js) are one
 * record, "sampled:<ids>", spending the m largest of their epsilons: only the m really answered
 * carry data, whichever they were (the record does not say).
 * @param {{question: number, epsilon: number}[]} receipt
 * @param {Map<number, SpecEntry>} entries  by question id
 * @param {{survey: string, title: string, series: string | null, round: number | null, sampling?: any}} page
 */
export function ledgerSpends(receipt, entries, page) {
  const pool = validSampling(page.sampling) ? page.sampling : null;
  const pooled = receipt.filter((item) => item.epsilon !== null && pool?.questions.includes(item.question));
  const sampled = pooled.length
    ? [
        {
          survey: page.series || page.survey,
          title: page.title,
          series: page.series,
          round: page.series ? page.round : null,
          question: `sampled:${pooled.map((item) => item.question).join(",")}`,
          epsilon: submissionEpsilon(new Map(pooled.map((item) => [item.question, item.epsilon])), pool),
          memo: null,
        },
      ]
    : [];
  // A question asked directly (epsilon null: not randomized) spends no budget: it is not a spend.
  const own = receipt.filter((item) => item.epsilon !== null && !pooled.includes(item)).map((item) => {
    const entry = entries.get(item.question);
    return {
      survey: page.series || page.survey,
      title: page.title,
      series: page.series,
      round: page.series ? page.round : null,
      question: entry?.memo ? entry.memo.question : String(item.question),
      epsilon: item.epsilon,
      memo: entry?.memo ? { ...memoSpend(entry), digest: entry.digest ?? null } : null,
    };
  });
  return [...own, ...sampled];
}

// Storage is passed on as given: memo.js and ledger.js read localStorage only when it is absent,
// inside the try blocks below, as a browser that refuses storage may throw on merely reading it.

/**
 * After sending: add the sent questions' epsilons to this browser's ledger (ledger.js) and pin
 * the digests of the memoized ones (memo.js pinDigest). Storage that is full or disabled keeps no
 * ledger and pins nothing: the answers were sent.
 * @param {{question: number, epsilon: number}[]} receipt
 * @param {Map<number, SpecEntry>} entries
 * @param {{survey: string, title: string, series: string | null, round: number | null, sampling?: any}} page
 * @param {Storage} [storage]
 */
export function recordSent(receipt, entries, page, storage) {
  try {
    recordSpends(ledgerSpends(receipt, entries, page), storage);
  } catch {
    // The ledger is a courtesy.
  }
  try {
    for (const item of receipt) {
      const entry = entries.get(item.question);
      if (entry?.memo && entry.digest) pinDigest(entry.memo.series, entry.memo.question, entry.digest, storage);
    }
  } catch {
    // Nothing pinned, like the ledger.
  }
}

/**
 * Compute each memoized question's digest (kept on its entry) and return the entries this device
 * answered before under other parameters (memo.js pinStatus "changed"): answering them starts a
 * new memoized stream. A storage that refuses to be read pins nothing and reports nothing.
 * @param {Iterable<SpecEntry>} entries
 * @param {Storage} [storage]
 * @returns {Promise<SpecEntry[]>}
 */
export async function changedPins(entries, storage) {
  const changed = [];
  for (const entry of entries) {
    if (!entry.memo) continue;
    entry.digest = await specDigest(entry.spec, entry.memo);
    let status = "new";
    try {
      status = pinStatus(entry.memo.series, entry.memo.question, entry.digest, storage);
    } catch {
      continue;
    }
    if (status === "changed") changed.push(entry);
  }
  return changed;
}
