// @ts-check
/**
 * The respondent's epsilon ledger: what this device has spent, kept in this browser only.
 *
 * Every submitted survey round records, per question, the epsilon its report spent; nothing of it
 * is sent to the server. Two totals are offered:
 *
 * - **sequential composition**: the sum of every recorded epsilon, valid whatever the mechanisms;
 * - **under memoization**: questions of a recurring series whose permanent layer is memoized
 *   (memo.js) spend, over r rounds, at most min(sum of their per-round epsilons,
 *   min(r, V) * epsilon_inf): every report is post-processing of the permanent responses of the
 *   distinct answers given, each epsilon_inf-private, and there are at most r of them and at most
 *   V, the number of possible permanent responses (k options for dBitFlip, G + 1 grid points for
 *   1BitMean; unbounded, null, for free text). The ledger stores no answer and nothing derived
 *   from one, so it cannot tell whether the answer changed and takes the worst case.
 *   A question's randomization is one stream per distinct parameters: a memo's `digest`
 *   (memo.js specDigest) keys its permanent layer, so a question whose parameters changed between
 *   rounds has independent permanent layers whose bounds add up; entries are grouped by (series,
 *   question, digest), never by (series, question) alone.
 *
 * Entries: {survey, title, series, round, question, epsilon, memo, day}, memo being null or
 * {epsilon_infinity, values}; day is the local date (YYYY-MM-DD), for the respondent's own list.
 */

export const LEDGER_KEY = "murmur-epsilon-ledger-v1";

/**
 * @typedef {object} Memo
 * @property {number} epsilon_infinity   the permanent layer's epsilon
 * @property {number | null} values      how many distinct permanent responses are possible (null: unbounded)
 * @property {string | null} [digest]    the randomization's digest (memo.js specDigest); null in older entries
 *
 * @typedef {object} Spend
 * @property {string} survey     the survey's public id
 * @property {string} [title]
 * @property {string | null} [series]  the recurring series, null for a one-off survey
 * @property {number | null} [round]   1, 2, ... in a series
 * @property {string} question   the question's id
 * @property {number} epsilon    epsilon of this round's report
 * @property {Memo | null} [memo]
 *
 * @typedef {Required<Spend> & {day: string}} Entry
 */

/**
 * @param {boolean} ok
 * @param {string} message
 */
function require(ok, message) {
  if (!ok) throw new RangeError(`invalid ledger entry: ${message}`);
}

/** @param {unknown} x */
const positiveNumber = (x) => typeof x === "number" && Number.isFinite(x) && x > 0;

/**
 * Validate a spend and return it as a complete entry.
 * @param {Spend} spend
 * @param {Date} now
 * @returns {Entry}
 */
export function makeEntry(spend, now = new Date()) {
  require(typeof spend === "object" && spend !== null, "not an object");
  require(typeof spend.survey === "string" && spend.survey.length > 0, "survey must be a non-empty string");
  require(typeof spend.question === "string" && spend.question.length > 0, "question must be a non-empty string");
  require(positiveNumber(spend.epsilon), `epsilon must be a positive number, got ${spend.epsilon}`);
  const series = spend.series ?? null;
  const round = spend.round ?? null;
  require(series === null || (typeof series === "string" && series.length > 0), "series must be a string or null");
  require(round === null || (Number.isInteger(round) && round >= 1), `round must be a positive integer or null, got ${round}`);
  const memo = spend.memo ?? null;
  if (memo !== null) {
    require(series !== null, "a memoized question needs its series");
    require(positiveNumber(memo.epsilon_infinity), "memo.epsilon_infinity must be a positive number");
    require(memo.values === null || (Number.isInteger(memo.values) && memo.values >= 1), "memo.values must be a positive integer or null");
    const digest = memo.digest ?? null;
    require(digest === null || (typeof digest === "string" && /^[0-9a-f]{64}$/.test(digest)), "memo.digest must be 64 hex digits or null");
  }
  const pad = (/** @type {number} */ x) => String(x).padStart(2, "0");
  const day = `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
  return { survey: spend.survey, title: spend.title ?? "", series, round, question: spend.question, epsilon: spend.epsilon, memo, day };
}

/**
 * The recorded entries (an unreadable ledger reads as empty rather than breaking the page).
 * @param {Storage} [storage]
 * @returns {Entry[]}
 */
export function readLedger(storage = globalThis.localStorage) {
  try {
    const entries = JSON.parse(storage.getItem(LEDGER_KEY) ?? "[]");
    if (!Array.isArray(entries)) return [];
    return entries.flatMap((entry) => {
      try {
        return [makeEntry(entry)].map((valid) => ({ ...valid, day: typeof entry.day === "string" ? entry.day : valid.day }));
      } catch {
        return [];
      }
    });
  } catch {
    return [];
  }
}

/**
 * Record the spends of one submitted round (all or nothing) and return the ledger.
 * @param {Spend[]} spends
 * @param {Storage} [storage]
 * @param {Date} [now]
 * @returns {Entry[]}
 */
export function recordSpends(spends, storage = globalThis.localStorage, now = new Date()) {
  require(Array.isArray(spends), "spends must be a list");
  const entries = [...readLedger(storage), ...spends.map((spend) => makeEntry(spend, now))];
  storage.setItem(LEDGER_KEY, JSON.stringify(entries));
  return entries;
}

/**
 * Delete the whole ledger from this device.
 * @param {Storage} [storage]
 */
export function forgetLedger(storage = globalThis.localStorage) {
  storage.removeItem(LEDGER_KEY);
}

/**
 * @typedef {object} RoundSpend   what one round (or a one-off survey) spent
 * @property {number | null} round  its number in the series; null for a one-off survey
 * @property {string[]} days        the local days it was answered on, in order
 * @property {number} epsilon       the sum of its questions' epsilons
 *
 * @typedef {object} SurveySpend  one survey or recurring series (its rounds recorded under its series id)
 * @property {string} survey
 * @property {string} title
 * @property {string | null} series
 * @property {number[]} rounds        the round numbers recorded, ascending
 * @property {RoundSpend[]} perRound  what each round spent, ascending (one item for a one-off survey)
 * @property {number} sequential      every round's epsilon added up (sequential composition)
 * @property {number} memoized        the bound under memoization (memoizedTotal of its entries)
 */

/**
 * Totals of a ledger: {sequential, memoized, surveys}, surveys listing per survey id (a recurring
 * series' id for its rounds) its title, rounds, what each round spent and the two totals of its own
 * entries (see the module comment for the rules).
 * @param {Entry[]} entries
 * @returns {{sequential: number, memoized: number, surveys: SurveySpend[]}}
 */
export function ledgerTotals(entries) {
  /** @type {Map<string, Entry[]>} */
  const bySurvey = new Map();
  for (const entry of entries) bySurvey.set(entry.survey, [...(bySurvey.get(entry.survey) ?? []), entry]);
  const surveys = [...bySurvey.entries()].map(([survey, group]) => {
    const perRound = roundSpends(group);
    return {
      survey,
      title: group[group.length - 1].title,
      series: group[0].series,
      rounds: perRound.flatMap((spend) => (spend.round === null ? [] : [spend.round])),
      perRound,
      sequential: sum(group.map((entry) => entry.epsilon)),
      memoized: memoizedTotal(group),
    };
  });
  return { sequential: sum(entries.map((entry) => entry.epsilon)), memoized: memoizedTotal(entries), surveys };
}

/**
 * One survey's entries, round by round: each round's days and summed epsilon (entries without a round,
 * a one-off survey's, are one item with round null, first).
 * @param {Entry[]} group
 * @returns {RoundSpend[]}
 */
function roundSpends(group) {
  /** @type {Map<number | null, Entry[]>} */
  const byRound = new Map();
  for (const entry of group) byRound.set(entry.round, [...(byRound.get(entry.round) ?? []), entry]);
  return [...byRound.entries()]
    .sort(([a], [b]) => (a ?? 0) - (b ?? 0))
    .map(([round, entries]) => ({
      round,
      days: [...new Set(entries.map((entry) => entry.day))],
      epsilon: sum(entries.map((entry) => entry.epsilon)),
    }));
}

/** @param {number[]} values */
const sum = (values) => values.reduce((total, x) => total + x, 0);

/**
 * Total under memoization: one-off entries add their epsilon; each memoized (series, question)
 * (series, question, digest) adds min(sum of its epsilons, min(rounds, V) * epsilon_inf), V and
 * epsilon_inf the largest recorded: another digest is another permanent layer, counted on its own.
 * @param {Entry[]} entries
 */
export function memoizedTotal(entries) {
  /** @type {Map<string, Entry[]>} */
  const groups = new Map();
  let total = 0;
  for (const entry of entries) {
    if (entry.memo === null) {
      total += entry.epsilon;
      continue;
    }
    const key = JSON.stringify([entry.series, entry.question, entry.memo.digest ?? null]);
    groups.set(key, [...(groups.get(key) ?? []), entry]);
  }
  for (const group of groups.values()) {
    const memos = group.map((entry) => /** @type {Memo} */ (entry.memo));
    const permanent = Math.max(...memos.map((memo) => memo.epsilon_infinity));
    const values = memos.some((memo) => memo.values === null) ? Infinity : Math.max(...memos.map((memo) => Number(memo.values)));
    total += Math.min(sum(group.map((entry) => entry.epsilon)), Math.min(group.length, values) * permanent);
  }
  return total;
}

/** Where the respondent's own epsilon limit is kept (this browser only; never sent). */
export const CAP_KEY = "murmur-epsilon-cap-v1";

/**
 * The respondent's own limit on the ledger's total (sequential composition), or null if none.
 * @param {Storage} [storage]
 * @returns {number | null}
 */
export function readCap(storage = globalThis.localStorage) {
  try {
    const value = Number(storage.getItem(CAP_KEY));
    return storage.getItem(CAP_KEY) !== null && positiveNumber(value) ? value : null;
  } catch {
    return null;
  }
}

/**
 * Set (a positive number) or remove (null) the respondent's own limit.
 * @param {number | null} cap
 * @param {Storage} [storage]
 */
export function writeCap(cap, storage = globalThis.localStorage) {
  if (cap === null) {
    storage.removeItem(CAP_KEY);
    return;
  }
  require(positiveNumber(cap), `the limit must be a positive number, got ${cap}`);
  storage.setItem(CAP_KEY, String(cap));
}

/**
 * Whether sending a survey that spends `adding` (its stated total: every question counts, skipped
 * or not asked too, since each sends a report) would take the ledger's total past the limit.
 * @param {Entry[]} entries
 * @param {number} adding
 * @param {number | null} cap
 * @returns {{spent: number, after: number, cap: number | null, exceeds: boolean}}
 */
export function capCheck(entries, adding, cap) {
  const spent = ledgerTotals(entries).sequential;
  const after = spent + adding;
  return { spent, after, cap, exceeds: cap !== null && after > cap + 1e-12 };
}
