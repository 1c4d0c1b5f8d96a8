// Helpers of the JavaScript tests: deterministic random sources, a trap for Math.random, exact
// enumeration helpers and an in-memory Storage (the localStorage interface).

export { seededSource } from "./tables.mjs";

/** Make any use of Math.random fail loudly: randomness must come from a RandomSource. */
export function forbidMathRandom() {
  Math.random = () => {
    throw new Error("Math.random called");
  };
}

/** All 0/1 vectors of a length, as arrays. */
export function allBitVectors(length) {
  return Array.from({ length: 2 ** length }, (_, code) => Array.from({ length }, (_, i) => (code >> i) & 1));
}

/** max over reports y of ln(max_v P(y | v) / min_v P(y | v)) of a table rows[v][y]; Infinity if a zero meets a nonzero. */
export function worstLogRatio(rows) {
  let worst = 0;
  for (let y = 0; y < rows[0].length; y += 1) {
    const column = rows.map((row) => row[y]);
    const high = Math.max(...column);
    if (high === 0) continue;
    const low = Math.min(...column);
    if (low === 0) return Infinity;
    worst = Math.max(worst, Math.log(high) - Math.log(low));
  }
  return worst;
}

/** |a - b| <= tolerance * max(|a|, |b|, 1e-300). */
export function assertClose(assert, a, b, tolerance = 1e-12, message = "") {
  assert.ok(Math.abs(a - b) <= tolerance * Math.max(Math.abs(a), Math.abs(b), 1e-300), `${message} ${a} vs ${b}`);
}

/** The Storage interface of localStorage, in memory. */
export class MemoryStorage {
  constructor() {
    this.items = new Map();
  }
  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }
  setItem(key, value) {
    this.items.set(key, String(value));
  }
  removeItem(key) {
    this.items.delete(key);
  }
}

// Exact distributions from a randomizer's own draws: each draw it makes is listed, in order, as its
// alternatives [words, probability]; replayedDistribution runs the randomizer on every combination.

/** The words for which uniformUnit returns the multiple of 2^-53 at or just below u (0 <= u < 1). */
export function unitWords(u) {
  const n = Math.floor(u * 2 ** 53);
  return [Math.floor(n / 2 ** 26) * 32, (n % 2 ** 26) * 64];
}

/** A uniformInt(n) draw: word i (below any rejection limit) gives i, with probability 1/n. */
export function uniformDraw(n) {
  return Array.from({ length: n }, (_, i) => [[i], 1 / n]);
}

/**
 * A uniformUnit draw that is only compared with `thresholds`: the midpoint of each interval they
 * cut [0, 1) into, with the interval's length (exact to 2^-53, uniformUnit's resolution).
 */
export function unitDraw(thresholds) {
  const cuts = [0, ...[...thresholds].sort((a, b) => a - b), 1];
  return cuts.slice(1).map((high, i) => [unitWords((cuts[i] + high) / 2), high - cuts[i]]).filter(([, p]) => p > 0);
}

/**
 * Map from keyOf(report) to its probability: randomizeWith(source) is run once per combination
 * of the draws' alternatives, on a source replaying their words. A draw the randomizer skips on
 * some paths must come last: its unused words are ignored and its alternatives' probabilities
 * sum to 1.
 */
export function replayedDistribution(draws, randomizeWith, keyOf) {
  const distribution = new Map();
  const visit = (i, words, probability) => {
    if (i === draws.length) {
      let next = 0;
      const report = randomizeWith((out) => {
        for (let j = 0; j < out.length; j += 1) {
          if (next >= words.length) throw new Error("the replayed draws ran out of words");
          out[j] = words[next++];
        }
        return out;
      });
      const key = keyOf(report);
      distribution.set(key, (distribution.get(key) ?? 0) + probability);
      return;
    }
    for (const [alternative, p] of draws[i]) visit(i + 1, [...words, ...alternative], probability * p);
  };
  visit(0, [], 1);
  return distribution;
}
