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
