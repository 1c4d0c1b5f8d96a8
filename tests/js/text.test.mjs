// Tests of static/ldp/text.js against ldp/text.py (tests/js/memo_tables.json, "text"): every
// normalized string equals Python's, and case folding agrees with Python's str.casefold on every
// code point whose fold is not itself.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { casefold, encodeFields, normalizeText } from "../../static/ldp/text.js";
import { forbidMathRandom } from "./seeded.mjs";

const TABLES = JSON.parse(readFileSync(new URL("./memo_tables.json", import.meta.url), "utf8")).text;
forbidMathRandom();

test("normalizeText equals Python's normalize_text (Korean, Greek, ligatures, odd spaces)", () => {
  for (const [text, expected] of TABLES.normalized) assert.equal(normalizeText(text), expected, JSON.stringify(text));
});

test("casefold equals Python's str.casefold on all code points it changes", () => {
  assert.ok(TABLES.casefold.length > 1400);
  for (const [code, folded] of TABLES.casefold) assert.equal(casefold(String.fromCodePoint(code)), folded, `U+${code.toString(16)}`);
  assert.equal(casefold("서울 abc"), "서울 abc");
});

test("Korean typed as conjoining jamo (NFD) and as syllables normalize alike", () => {
  const syllables = "한국어 설문";
  assert.equal(normalizeText(syllables.normalize("NFD")), normalizeText(syllables));
  assert.equal(normalizeText(" 한국어\u3000\u3000설문\n"), "한국어 설문");
});

test("encodeFields prefixes each field with its UTF-8 length and refuses other types", () => {
  assert.deepEqual(Array.from(encodeFields("서", 12)), [0, 0, 0, 3, 0xec, 0x84, 0x9c, 0, 0, 0, 2, 0x31, 0x32]);
  assert.throws(() => encodeFields(1.5), TypeError);
  assert.throws(() => encodeFields(/** @type {any} */ (null)), TypeError);
  assert.throws(() => normalizeText(/** @type {any} */ (3)), TypeError);
});
