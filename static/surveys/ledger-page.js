// @ts-check
/**
 * The ledger page: lists what this browser's ledger (static/ldp/ledger.js, localStorage) holds,
 * each recurring survey's rounds, and whether this browser keeps a device secret (memo.js), which
 * the respondent may delete. Reads and deletes locally; sends nothing.
 */

import { forgetLedger, ledgerTotals, readLedger } from "../ldp/ledger.js";
import { SECRET_KEY, forgetDeviceSecret, forgetPins } from "../ldp/memo.js";

/** @param {number} epsilon */
const formatEpsilon = (epsilon) => `ε = ${Number(epsilon.toPrecision(4))}`;

/** @param {HTMLElement} section */
function show(section) {
  const entries = readLedger();
  const totals = ledgerTotals(entries);
  const rows = /** @type {HTMLElement} */ (section.querySelector("[data-ledger-rows]"));
  rows.replaceChildren();
  for (const survey of totals.surveys) {
    const days = entries.filter((entry) => entry.survey === survey.survey).map((entry) => entry.day);
    const row = document.createElement("tr");
    row.dataset.survey = survey.survey;
    const rounds = survey.rounds.join(", ") || "—";
    for (const text of [survey.title || survey.survey, [...new Set(days)].join(", "), rounds, formatEpsilon(survey.sequential)]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      row.append(cell);
    }
    rows.append(row);
  }
  /** @type {HTMLElement} */ (section.querySelector("[data-ledger-total]")).textContent = formatEpsilon(totals.sequential);
  /** @type {HTMLElement} */ (section.querySelector("[data-ledger-memoized]")).textContent = formatEpsilon(totals.memoized);
  /** @type {HTMLElement} */ (section.querySelector("[data-ledger-empty]")).hidden = entries.length > 0;
  /** @type {HTMLElement} */ (section.querySelector("[data-ledger-table]")).hidden = entries.length === 0;
  section.hidden = false;
}

const section = /** @type {HTMLElement | null} */ (document.querySelector("[data-ledger]"));
if (section) show(section);

document.querySelector("[data-ledger-forget]")?.addEventListener("click", () => {
  forgetLedger();
  if (section) show(section);
});

/** @param {HTMLElement} box */
function showSecret(box) {
  const kept = globalThis.localStorage.getItem(SECRET_KEY) !== null;
  const label = document.querySelector(kept ? "[data-secret-kept-label]" : "[data-secret-none-label]");
  /** @type {HTMLElement} */ (box.querySelector("[data-device-secret-state]")).textContent = label?.textContent || "";
  /** @type {HTMLButtonElement} */ (box.querySelector("[data-device-secret-forget]")).disabled = !kept;
  box.hidden = false;
}

const secretBox = /** @type {HTMLElement | null} */ (document.querySelector("[data-device-secret]"));
if (secretBox) {
  showSecret(secretBox);
  secretBox.querySelector("[data-device-secret-forget]")?.addEventListener("click", () => {
    // The pins name the parameters this secret's permanent layers were drawn under: they go with it.
    forgetDeviceSecret();
    forgetPins();
    showSecret(secretBox);
  });
}
