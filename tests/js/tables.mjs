// Helpers shared by the JavaScript tests: a seeded random source and each categorical
// mechanism's report distribution written out from its definition, independently of
// static/ldp/ (table[v][y] = P(report y | answer v), enumerated over every possible report).

import { hadamardSign } from "../../static/ldp/randomize.js";

/** xoshiro128** seeded by splitmix32: a deterministic RandomSource for tests. */
export function seededSource(seed) {
  let s = seed >>> 0;
  const splitmix = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
  const state = new Uint32Array([splitmix(), splitmix(), splitmix(), splitmix()]);
  const next = () => {
    const result = Math.imul(((Math.imul(state[1], 5) << 7) | (Math.imul(state[1], 5) >>> 25)) >>> 0, 9) >>> 0;
    const t = state[1] << 9;
    state[2] ^= state[0];
    state[3] ^= state[1];
    state[1] ^= state[2];
    state[0] ^= state[3];
    state[2] ^= t;
    state[3] = (state[3] << 11) | (state[3] >>> 21);
    return result;
  };
  return (words) => {
    for (let i = 0; i < words.length; i += 1) words[i] = next();
    return words;
  };
}

/** max over reports and answer pairs of ln(P[y|v] / P[y|v']), from table[v][y]. */
export function worstLogRatio(table) {
  let worst = 0;
  for (let y = 0; y < table[0].length; y += 1) {
    const column = table.map((row) => row[y]);
    worst = Math.max(worst, Math.log(Math.max(...column)) - Math.log(Math.min(...column)));
  }
  return worst;
}

export function* combinations(items, size, start = 0, prefix = []) {
  if (prefix.length === size) {
    yield prefix;
    return;
  }
  for (let i = start; i < items.length; i += 1) yield* combinations(items, size, i + 1, [...prefix, items[i]]);
}

export function* bitPatterns(length) {
  for (let mask = 0; mask < 2 ** length; mask += 1) {
    yield Array.from({ length }, (_, i) => (mask >>> i) & 1);
  }
}

export function binomial(n, r) {
  let result = 1;
  for (let i = 1; i <= r; i += 1) result = (result * (n - r + i)) / i;
  return result;
}

export function krrTable(spec) {
  const q = (1 - spec.keep_probability) / (spec.k - 1);
  return Array.from({ length: spec.k }, (_, v) =>
    Array.from({ length: spec.k }, (_, y) => (y === v ? spec.keep_probability : q)),
  );
}

/** Focused response: P[report = y | answer = v], y over the m + 1 buckets. */
export function focusTable(spec) {
  const m = spec.focus.length;
  const q = (1 - spec.keep_probability) / m;
  return Array.from({ length: spec.k }, (_, v) => {
    const named = spec.focus.indexOf(v);
    const bucket = named === -1 ? m : named;
    return Array.from({ length: m + 1 }, (_, y) => (y === bucket ? spec.keep_probability : q));
  });
}

export function cmsTable(spec) {
  const p = spec.keep_probability;
  return Array.from({ length: spec.k }, (_, v) => {
    const row = [];
    for (let j = 0; j < spec.hash_count; j += 1) {
      for (const bits of bitPatterns(spec.width)) {
        let probability = 1 / spec.hash_count;
        bits.forEach((bit, i) => {
          const encoded = i === spec.hashes[j][v] ? 1 : 0;
          probability *= bit === encoded ? p : 1 - p;
        });
        row.push(probability);
      }
    }
    return row;
  });
}

export function bitflipTable(spec) {
  const subsets = [...combinations([...Array(spec.k).keys()], spec.d)];
  return Array.from({ length: spec.k }, (_, v) => {
    const row = [];
    for (const subset of subsets) {
      for (const bits of bitPatterns(spec.d)) {
        let probability = 1 / subsets.length;
        subset.forEach((bucket, i) => {
          const one = bucket === v ? spec.true_bit_probability : spec.other_bit_probability;
          probability *= bits[i] ? one : 1 - one;
        });
        row.push(probability);
      }
    }
    return row;
  });
}

/** The hash family written out independently of the module: ((a x^2 + b x + c) mod P) mod g. */
export function olhHash(spec, [a, b, c], x) {
  const P = BigInt(spec.prime);
  const X = BigInt(x);
  return Number(((BigInt(a) * X * X + BigInt(b) * X + BigInt(c)) % P) % BigInt(spec.range_size));
}

export function olhTable(spec) {
  const q = (1 - spec.keep_probability) / (spec.range_size - 1);
  return Array.from({ length: spec.k }, (_, v) => {
    const row = [];
    for (let a = 0; a < spec.prime; a += 1) {
      for (let b = 0; b < spec.prime; b += 1) {
        for (let c = 0; c < spec.prime; c += 1) {
          const hashed = olhHash(spec, [a, b, c], v);
          for (let y = 0; y < spec.range_size; y += 1) row.push((y === hashed ? spec.keep_probability : q) / spec.prime ** 3);
        }
      }
    }
    return row;
  });
}

export function subsetTable(spec) {
  const sets = [...combinations([...Array(spec.k).keys()], spec.subset_size)];
  const inside = spec.in_probability / binomial(spec.k - 1, spec.subset_size - 1);
  const outside = (1 - spec.in_probability) / binomial(spec.k - 1, spec.subset_size);
  return Array.from({ length: spec.k }, (_, v) => sets.map((set) => (set.includes(v) ? inside : outside)));
}

export function hadamardTable(spec) {
  return spec.sets.map((set) => {
    const inside = new Set(set);
    return Array.from({ length: spec.size }, (_, j) =>
      (inside.has(j) ? spec.in_probability : 1 - spec.in_probability) / (spec.size / 2),
    );
  });
}

export function hcmsTable(spec) {
  const p = spec.keep_probability;
  const scale = 1 / (spec.hash_count * spec.width);
  return Array.from({ length: spec.k }, (_, v) => {
    const row = [];
    for (let j = 0; j < spec.hash_count; j += 1) {
      for (let l = 0; l < spec.width; l += 1) {
        const sign = hadamardSign(l, spec.hashes[j][v]);
        for (const sent of [1, -1]) row.push((sent === sign ? p : 1 - p) * scale);
      }
    }
    return row;
  });
}

/** The report distribution of any categorical spec small enough to enumerate. */
export function reportTable(spec) {
  const builders = {
    krr: krrTable,
    focus: focusTable,
    cms: cmsTable,
    hcms: hcmsTable,
    dbitflip: bitflipTable,
    sue: bitflipTable,
    oue: bitflipTable,
    olh: olhTable,
    subset: subsetTable,
    hadamard: hadamardTable,
  };
  return builders[spec.mechanism](spec);
}
