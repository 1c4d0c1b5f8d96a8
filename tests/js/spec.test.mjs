// Tests of spec validation (static/ldp/spec.js): every spec ldp makes passes, and every malformed
// one throws a SpecError naming the field before a single random word is drawn, through every
// entry point (randomize and each mechanism's randomizer).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  SpecError,
  randomize,
  randomizeCms,
  randomizeDBitFlip,
  randomizeFocus,
  randomizeHadamard,
  randomizeHcms,
  randomizeKrr,
  randomizeOlh,
  randomizeSubset,
} from "../../static/ldp/randomize.js";
import { randomizeDesign } from "../../static/ldp/designs.js";
import { randomizeNumeric } from "../../static/ldp/numeric.js";
import { CATEGORICAL_MECHANISMS, checkSpec } from "../../static/ldp/spec.js";

const SPECS = JSON.parse(readFileSync(new URL("./specs.json", import.meta.url), "utf8"));
const PRIVACY = JSON.parse(readFileSync(new URL("./privacy_table.json", import.meta.url), "utf8"));
const CATEGORICAL = Object.fromEntries(
  Object.entries(PRIVACY)
    .filter(([, row]) => CATEGORICAL_MECHANISMS.includes(row.spec.mechanism))
    .map(([key, row]) => [key, row.spec]),
);
const clone = (value) => JSON.parse(JSON.stringify(value));

/** A random source that fails the test if anything is drawn from it. */
const untouchable = () => {
  throw new Error("randomness drawn from a malformed spec");
};

/**
 * Assert that `spec` is refused by randomize (and by `randomizer`, if given) with a SpecError
 * whose field is `field` (when given), before any randomness is used.
 */
function assertRefused(spec, { field, answer = 0, randomizer } = {}) {
  for (const run of [randomize, randomizer].filter(Boolean)) {
    assert.throws(
      () => run(spec, answer, untouchable),
      (error) => {
        assert.ok(error instanceof SpecError, `expected a SpecError, got ${error}`);
        assert.match(error.message, /^malformed spec: /);
        if (field !== undefined) assert.equal(error.field, field, error.message);
        return true;
      },
    );
  }
}

const RANDOMIZER = {
  krr: randomizeKrr,
  focus: randomizeFocus,
  cms: randomizeCms,
  hcms: randomizeHcms,
  dbitflip: randomizeDBitFlip,
  sue: randomizeDBitFlip,
  oue: randomizeDBitFlip,
  olh: randomizeOlh,
  subset: randomizeSubset,
  hadamard: randomizeHadamard,
  "forced-response": randomizeDesign,
  "unrelated-question": randomizeDesign,
  warner: randomizeDesign,
  crosswise: randomizeDesign,
};

// Every spec's scalar fields, and the bad values each must refuse.
const PROBABILITY_FIELDS = ["keep_probability", "in_probability", "true_bit_probability", "other_bit_probability"];
const INTEGER_FIELDS = ["k", "hash_count", "width", "d", "range_size", "prime", "subset_size", "size"];
const ANY_BAD = [
  ["missing", undefined],
  ["null", null],
  ["NaN", NaN],
  ["Infinity", Infinity],
  ["-Infinity", -Infinity],
  ["negative", -1],
  ["zero", 0],
  ["a boolean", true],
  ["a list", [0.5]],
  ["an object", {}],
];
const PROBABILITY_BAD = [["one", 1], ["above one", 1.5], ["just above one", 1 + 2 ** -52], ["a string", "0.5"]];
const INTEGER_BAD = [["a fraction", (v) => v + 0.5], ["a string", (v) => String(v)], ["huge", () => 2 ** 53]];

function setField(spec, name, value) {
  const copy = clone(spec);
  if (value === undefined) delete copy[name];
  else copy[name] = value;
  return copy;
}

test("every spec ldp makes passes and is returned unchanged", () => {
  for (const spec of Object.values(CATEGORICAL)) assert.deepEqual(checkSpec(clone(spec)), spec);
});

for (const [key, spec] of Object.entries(CATEGORICAL)) {
  const randomizer = RANDOMIZER[spec.mechanism];
  for (const name of [...PROBABILITY_FIELDS, ...INTEGER_FIELDS, "epsilon"].filter((n) => n in spec)) {
    const bad = [...ANY_BAD];
    if (PROBABILITY_FIELDS.includes(name)) bad.push(...PROBABILITY_BAD);
    if (INTEGER_FIELDS.includes(name)) bad.push(...INTEGER_BAD.map(([label, f]) => [label, f(spec[name])]));
    if (name === "epsilon") bad.push(["a string", "1"], ["above the maximum", 10.5], ["below the minimum", 0.005]);
    test(`${key}: ${name} that is ${bad.map(([label]) => label).join(", ")} is refused`, () => {
      for (const [label, value] of bad) {
        try {
          // k changes what a valid answer is; 0 stays in range whenever k >= 1.
          assertRefused(setField(spec, name, value), { randomizer });
        } catch (error) {
          error.message = `${name} ${label}: ${error.message}`;
          throw error;
        }
      }
    });
  }
  test(`${key}: a wrong or missing mechanism is refused`, () => {
    for (const mechanism of [undefined, null, "rappor", "KRR", 3, "__proto__", "toString", "constructor"]) {
      assertRefused(setField(spec, "mechanism", mechanism), { field: "mechanism" });
    }
  });
  test(`${key}: the spec of another mechanism is refused by this randomizer`, () => {
    const other = Object.values(CATEGORICAL).find((s) => RANDOMIZER[s.mechanism] !== randomizer);
    assert.throws(() => randomizer(clone(other), 0, untouchable), (error) => error instanceof SpecError && error.field === "mechanism");
  });
}

test("a spec that is not an object is refused", () => {
  for (const spec of [null, undefined, [], "krr", 5, true]) {
    assert.throws(() => randomize(spec, 0, untouchable), (error) => error instanceof SpecError || error instanceof TypeError);
    assert.throws(() => checkSpec(spec), SpecError);
  }
});

// -- malformed specs ---------------------------------------------------------------------

test("malformed spec: a CMS spec without its keep probability is refused", () => {
  assertRefused({ mechanism: "cms", k: 5, hash_count: 1, width: 4, hashes: [[0, 1, 2, 3, 0]] }, { answer: 2 });
  assertRefused({ mechanism: "cms", k: 5, epsilon: 1, hash_count: 1, width: 4, hashes: [[0, 1, 2, 3, 0]] }, { answer: 2, field: "keep_probability" });
});

test("malformed spec: k-RR, unary and subset specs without their probabilities are refused", () => {
  assertRefused(setField(SPECS["krr-k5"], "keep_probability", undefined), { field: "keep_probability" });
  for (const key of ["4bitflip", "sue", "oue"]) {
    assertRefused(setField(SPECS[key], "true_bit_probability", undefined), { field: "true_bit_probability" });
    assertRefused(setField(SPECS[key], "other_bit_probability", undefined), { field: "other_bit_probability" });
  }
  assertRefused(setField(SPECS["subset"], "in_probability", undefined), { field: "in_probability" });
});

test("malformed spec: a missing k does not let answer 99 through", () => {
  for (const key of ["krr-k5", "4bitflip", "subset", "olh", "hadamard", "cms-small", "hcms"]) {
    assertRefused(setField(SPECS[key], "k", undefined), { field: "k", answer: 99 });
  }
});

test("malformed spec: d = 0 and subset_size = 0 are refused", () => {
  assertRefused(setField(SPECS["4bitflip"], "d", 0), { field: "d" });
  assertRefused(setField(SPECS["subset"], "subset_size", 0), { field: "subset_size" });
});

test("malformed spec: OLH with range_size 0 or 1 is refused", () => {
  for (const g of [0, 1]) assertRefused(setField(SPECS["olh"], "range_size", g), { field: "range_size" });
});

test("malformed spec: Hadamard sets with out-of-range indexes are refused", () => {
  const spec = clone(SPECS["hadamard"]);
  spec.sets[2][1] = spec.size + 3;
  assertRefused(spec, { field: "sets[2][1]" });
});

// -- shapes and ranges ------------------------------------------------------------------------

test("ranges that depend on k: d above k, subset_size k, SUE/OUE with d below k", () => {
  assertRefused(setField(SPECS["4bitflip"], "d", SPECS["4bitflip"].k + 1), { field: "d" });
  assertRefused(setField(SPECS["subset"], "subset_size", SPECS["subset"].k), { field: "subset_size" });
  assertRefused(setField(SPECS["sue"], "d", SPECS["sue"].k - 1), { field: "d" });
  assertRefused(setField(SPECS["oue"], "d", 1), { field: "d" });
  assertRefused(setField(SPECS["krr-k5"], "k", 1), { field: "k" });
  assertRefused(setField(SPECS["krr-k5"], "k", 257), { field: "k" });
});

test("OLH: a prime that is not prime, or not above k and range_size, is refused", () => {
  const spec = SPECS["olh-tiny"];
  assertRefused(setField(spec, "prime", 9), { field: "prime" });
  assertRefused(setField(spec, "prime", 3), { field: "prime" });
  assertRefused(setField(spec, "prime", 2 ** 32 + 15), { field: "prime" });
  assertRefused(setField(SPECS["olh"], "prime", 2 ** 31 - 3), { field: "prime" }); // 3 * 715827881
});

test("CMS and HCMS hash tables must be hash_count rows of k cells below width", () => {
  for (const key of ["cms-small", "hcms", "cms-tiny", "hcms-tiny"]) {
    const spec = SPECS[key];
    const cases = [
      ["hashes", (s) => delete s.hashes],
      ["hashes", (s) => (s.hashes = "0,1,2")],
      ["hashes", (s) => s.hashes.pop()],
      ["hashes", (s) => s.hashes.push(s.hashes[0])],
      ["hashes", (s) => (s.hash_count += 1)],
      ["hashes[1]", (s) => s.hashes[1].pop()],
      ["hashes[1]", (s) => s.hashes[1].push(0)],
      ["hashes[1]", (s) => (s.hashes[1] = null)],
      ["hashes[0][2]", (s) => (s.hashes[0][2] = s.width)],
      ["hashes[0][2]", (s) => (s.hashes[0][2] = -1)],
      ["hashes[0][2]", (s) => (s.hashes[0][2] = 0.5)],
      ["hashes[0][2]", (s) => (s.hashes[0][2] = "1")],
      ["hashes[0][2]", (s) => (s.hashes[0][2] = null)],
      ["hashes[2][0]", (s) => (s.hashes[2][0] = NaN)],
    ];
    for (const [field, mutate] of cases) {
      const bad = clone(spec);
      if (field === "hashes[2][0]") bad.hashes[2][0] = NaN; // JSON cannot carry NaN
      else mutate(bad);
      assertRefused(bad, { field, randomizer: RANDOMIZER[spec.mechanism] });
    }
  }
});

test("HCMS: a width that is not a power of 2 is refused", () => {
  const spec = clone(SPECS["hcms-tiny"]);
  spec.width = 3;
  spec.hashes = spec.hashes.map((row) => row.map((cell) => cell % 3));
  assertRefused(spec, { field: "width" });
});

test("Hadamard: the size and every set must be those of the Hadamard matrix", () => {
  const spec = SPECS["hadamard"];
  const cases = [
    ["size", (s) => (s.size *= 2)],
    ["size", (s) => (s.size = s.k)],
    ["sets", (s) => s.sets.pop()],
    ["sets", (s) => (s.sets = null)],
    ["sets[0]", (s) => s.sets[0].pop()],
    ["sets[0]", (s) => s.sets[0].push(0)],
    ["sets[0]", (s) => (s.sets[0] = "0,2")],
    ["sets[1][0]", (s) => (s.sets[1][0] = s.sets[1][1])],
    ["sets[1][0]", (s) => (s.sets[1][0] = -1)],
    ["sets[1][0]", (s) => (s.sets[1][0] = "0")],
    ["sets[3][1]", (s) => (s.sets[3] = [...s.sets[4]])], // two options sharing a set
  ];
  for (const [field, mutate] of cases) {
    const bad = clone(spec);
    mutate(bad);
    assertRefused(bad, { field, randomizer: randomizeHadamard });
  }
});

test("validation comes before the answer check: a malformed spec is refused whatever the answer", () => {
  for (const answer of [0, 3, 99, -1, 1.5]) {
    assertRefused(setField(SPECS["krr-k5"], "keep_probability", NaN), { answer, field: "keep_probability" });
  }
});

test("a valid spec still refuses answers outside its options with a RangeError", () => {
  assert.throws(() => randomize(SPECS["krr-k5"], 5, untouchable), RangeError);
});

// -- numeric specs (static/ldp/numeric.js) throw SpecError too -------------------------------

const NUMERIC = Object.entries(PRIVACY).filter(([, row]) => !CATEGORICAL_MECHANISMS.includes(row.spec.mechanism));

for (const [key, { spec }] of NUMERIC) {
  test(`${key}: every field missing, null, NaN, a string or a list is refused with a SpecError naming it`, () => {
    for (const name of Object.keys(spec).filter((n) => n !== "mechanism")) {
      for (const value of [undefined, null, NaN, "1", [1], Infinity]) {
        assert.throws(
          () => randomizeNumeric(setField(spec, name, value), spec.lo, untouchable),
          (error) => error instanceof SpecError && error.field === name && /^malformed numeric spec: /.test(error.message),
          `${key} ${name} = ${String(value)}`,
        );
      }
    }
  });
}
