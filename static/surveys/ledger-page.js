// @ts-check
/**
 * The ledger page: lists what this browser's ledger (static/ldp/ledger.js, localStorage) holds.
 * Reads and deletes locally; sends nothing.
 */

import { forgetLedger, ledgerTotals, readLedger } from "../ldp/ledger.js";

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
    for (const text of [survey.title || survey.survey, [...new Set(days)].join(", "), formatEpsilon(survey.sequential)]) {
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
