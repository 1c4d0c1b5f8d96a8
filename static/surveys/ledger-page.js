// @ts-check
/**
 * The ledger page: lists what this browser's ledger (static/ldp/ledger.js, localStorage) holds,
 * each recurring survey's rounds with the ε each spent and the series' two totals (the rounds added
 * up, and the bound when its answers are memoized), and whether this browser keeps a device secret (memo.js), which
 * the respondent may delete, and the respondent's own limit on the total (ledger.js readCap), which
 * the answer page checks before sending. Reads, writes and deletes locally; sends nothing.
 */

import { forgetLedger, ledgerTotals, readCap, readLedger, writeCap } from "../ldp/ledger.js";
import { SECRET_KEY, forgetDeviceSecret, forgetPins } from "../ldp/memo.js";

/**
 * Django's JavaScriptCatalog (loaded before this module) defines gettext; without it, English.
 * @type {(message: string) => string}
 */
const gettext = /** @type {any} */ (globalThis).gettext || ((message) => message);
/** @type {(format: string, values: Record<string, string>, named: boolean) => string} */
const interpolate =
  /** @type {any} */ (globalThis).interpolate ||
  ((format, values) => format.replace(/%\((\w+)\)s/g, (_, name) => values[name]));

/** @param {number} epsilon */
const formatEpsilon = (epsilon) => `ε = ${Number(epsilon.toPrecision(4))}`;

/**
 * One row of the ledger's table: the survey's title as the row's header, then its cells.
 * @param {string} title
 * @param {string[]} cells
 * @param {Record<string, string>} data  the row's data-* attributes
 */
function tableRow(title, cells, data) {
  const row = document.createElement("tr");
  Object.assign(row.dataset, data);
  const header = document.createElement("th");
  header.scope = "row";
  header.textContent = title;
  row.append(header);
  for (const text of cells) {
    const cell = document.createElement("td");
    cell.textContent = text;
    row.append(cell);
  }
  return row;
}

/**
 * The table's rows: a one-off survey in one row; a recurring series in one row per round (what that
 * round spent), then its totals: every round added up, and the bound when its answers are memoized.
 * @param {HTMLElement} section
 */
function show(section) {
  const entries = readLedger();
  const totals = ledgerTotals(entries);
  const rows = /** @type {HTMLElement} */ (section.querySelector("[data-ledger-rows]"));
  rows.replaceChildren();
  for (const survey of totals.surveys) {
    const title = survey.title || survey.survey;
    if (survey.series === null) {
      const days = survey.perRound.flatMap((spend) => spend.days);
      const cells = ["—", [...new Set(days)].join(", "), formatEpsilon(survey.sequential), formatEpsilon(survey.memoized)];
      rows.append(tableRow(title, cells, { survey: survey.survey }));
      continue;
    }
    for (const spend of survey.perRound) {
      const cells = [String(spend.round), spend.days.join(", "), formatEpsilon(spend.epsilon), ""];
      rows.append(tableRow(title, cells, { survey: survey.survey, round: String(spend.round) }));
    }
    const count = String(survey.rounds.length);
    const label = interpolate(gettext("all %(count)s rounds"), { count }, true);
    const total = tableRow(title, [label, "", formatEpsilon(survey.sequential), formatEpsilon(survey.memoized)], {
      seriesTotal: survey.survey,
    });
    total.className = "subtotal";
    rows.append(total);
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

const capForm = /** @type {HTMLFormElement | null} */ (document.querySelector("[data-cap-form]"));
if (capForm) {
  const input = /** @type {HTMLInputElement} */ (capForm.querySelector("[data-cap-input]"));
  const state = /** @type {HTMLElement} */ (capForm.querySelector("[data-cap-state]"));
  const showCap = () => {
    const cap = readCap();
    input.value = cap === null ? "" : String(cap);
    state.textContent =
      cap === null ? gettext("No limit is set.") : interpolate(gettext("Your limit: %(epsilon)s in all."), { epsilon: formatEpsilon(cap) }, true);
  };
  capForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const value = input.valueAsNumber;
    try {
      writeCap(input.value.trim() === "" ? null : value);
    } catch {
      state.textContent = gettext("Give a positive number, or leave the field empty for no limit.");
      return;
    }
    showCap();
  });
  capForm.querySelector("[data-cap-remove]")?.addEventListener("click", () => {
    writeCap(null);
    showCap();
  });
  showCap();
  capForm.hidden = false;
}
