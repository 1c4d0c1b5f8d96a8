// Tests of the answer page's refusal sentence (static/surveys/promise.js), in English (no catalog).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import { refusalReason } from "../../static/surveys/promise.js";

const PRIVACY = JSON.parse(readFileSync(new URL("./privacy_table.json", import.meta.url), "utf8"));
const KRR = PRIVACY["krr-k5"];
const entries = () => [
  { question: 41, spec: structuredClone(KRR.spec) },
  { question: 42, spec: structuredClone(KRR.spec) },
];
const promise = { total: 2 * KRR.epsilon, cap: null, questions: { 41: { epsilon: KRR.epsilon }, 42: { epsilon: KRR.epsilon } } };
const numberOf = (question) => question - 40;

test("specs that keep the promise give no reason to refuse", () => {
  assert.equal(refusalReason(entries(), promise, numberOf), "");
});

test("a weakened spec is named by its number on the page, with both epsilons", () => {
  const weakened = entries();
  weakened[1].spec.keep_probability = 0.95; // k = 5: ln(0.95 / 0.0125) = ln 76
  const reason = refusalReason(weakened, promise, numberOf);
  assert.match(reason, /^Nothing was sent: /);
  assert.match(reason, /Question 2: the parameters this page received give ε = 4\.33073, more than the ε = 1 it promises\./);
  assert.match(reason, /Together the parameters give ε = 5\.33073, more than the total ε = 2 this page promises\./);
  assert.match(reason, /Please tell the survey's organizer\.$/);
});

test("a malformed spec and a missing promise are refused", () => {
  const malformed = entries();
  malformed[0].spec.k = "5";
  assert.match(refusalReason(malformed, promise, numberOf), /Question 1: the randomization parameters this page received are malformed\./);
  assert.match(refusalReason(entries(), {}, numberOf), /Question 1: this page states no privacy budget for it\./);
});
