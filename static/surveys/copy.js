// @ts-check
/**
 * Copy buttons: <button data-copy-target="#id" data-copied-label="Copied"> copies the value of
 * the input or textarea it names and says so. One delegated listener, so buttons that htmx swaps
 * in work too.
 */

document.addEventListener("click", async (event) => {
  const button = /** @type {HTMLElement | null} */ (
    event.target instanceof Element ? event.target.closest("[data-copy-target]") : null
  );
  if (!button) return;
  const source = /** @type {HTMLInputElement | HTMLTextAreaElement | null} */ (
    document.querySelector(button.dataset.copyTarget || "")
  );
  if (!source) return;
  try {
    await navigator.clipboard.writeText(source.value);
  } catch {
    source.select(); // no clipboard permission (e.g. plain http): leave it selected for Ctrl+C
    return;
  }
  const status = button.parentElement?.querySelector("[data-copy-status]");
  if (status) status.textContent = button.dataset.copiedLabel || "";
});
