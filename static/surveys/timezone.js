// @ts-check
/**
 * Time zones without a profile: on organizers' pages (body[data-remember-zone]) remember the
 * browser's IANA zone in a cookie so the server shows and reads dates in it
 * (surveys/timezones.py); on every page, rewrite each <time data-local> in the browser's own zone
 * and language. Nothing else is stored.
 */

export const COOKIE = "murmur_tz";

/** @returns {string} the browser's IANA time zone, e.g. "Asia/Seoul" */
export function browserZone() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/**
 * @param {Date} date
 * @param {string} language
 * @param {string} zone
 * @returns {string} e.g. "2026. 12. 1. 오후 6:00 GMT+9" in Korean
 */
export function formatLocal(date, language, zone) {
  return new Intl.DateTimeFormat(language, {
    year: "numeric",
    month: "short",
    day: "numeric",
    hour: "numeric",
    minute: "2-digit",
    timeZone: zone,
    timeZoneName: "short",
  }).format(date);
}

if (typeof document !== "undefined") {
  const zone = browserZone();
  if (document.body.dataset.rememberZone !== undefined && !document.cookie.includes(`${COOKIE}=${zone}`)) {
    document.cookie = `${COOKIE}=${zone}; path=/; max-age=31536000; SameSite=Lax`;
  }
  const language = document.documentElement.lang || "en";
  for (const element of document.querySelectorAll("time[data-local]")) {
    const date = new Date(element.getAttribute("datetime") || "");
    if (!Number.isNaN(date.getTime())) element.textContent = formatLocal(date, language, zone);
  }
}
