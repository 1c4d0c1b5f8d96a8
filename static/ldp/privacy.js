// @ts-check
/**
 * Privacy arithmetic shared by the memoized mechanisms, mirroring ldp/privacy.py.
 */

/**
 * ln of a binomial-free likelihood: s ln q + (r - s) ln(1 - q), with 0 ln 0 = 0.
 * @param {number} s
 * @param {number} rounds
 * @param {number} q
 */
function logLikelihood(s, rounds, q) {
  const ones = s === 0 ? 0 : s * Math.log(q);
  const zeros = rounds - s === 0 ? 0 : (rounds - s) * Math.log1p(-q);
  return ones + zeros;
}

/**
 * ln(e^a + e^b) without overflow.
 * @param {number} a
 * @param {number} b
 */
function logAddExp(a, b) {
  if (a === -Infinity) return b;
  if (b === -Infinity) return a;
  const high = Math.max(a, b);
  return high + Math.log1p(Math.exp(Math.min(a, b) - high));
}

/**
 * Worst log-ratios of `rounds` reports of one bit whose permanent layer is memoized:
 * ldp.privacy.memoized_bit_log_ratios. The true bit b gives a kept bit that is 1 with probability
 * permanent[b]; each round reports a fresh bit, 1 with probability instant[kept bit]. Returns
 * [max_s ln L_1(s)/L_0(s), max_s ln L_0(s)/L_1(s)] over the number of ones s.
 * @param {[number, number]} permanent
 * @param {[number, number]} instant
 * @param {number} rounds
 * @returns {[number, number]}
 */
export function memoizedBitLogRatios(permanent, instant, rounds) {
  if (!Number.isInteger(rounds) || rounds < 1) throw new RangeError(`rounds must be a positive integer, got ${rounds}`);
  const [low, high] = permanent;
  const [p, q] = instant;
  let up = -Infinity;
  let down = -Infinity;
  for (let s = 0; s <= rounds; s += 1) {
    const lq = logLikelihood(s, rounds, q);
    const lp = logLikelihood(s, rounds, p);
    const first = logAddExp(Math.log(high) + lq, Math.log1p(-high) + lp);
    const second = logAddExp(Math.log(low) + lq, Math.log1p(-low) + lp);
    if (first === -Infinity && second === -Infinity) continue;
    if (first === -Infinity || second === -Infinity) return [Infinity, Infinity];
    up = Math.max(up, first - second);
    down = Math.max(down, second - first);
  }
  return [up, down];
}
