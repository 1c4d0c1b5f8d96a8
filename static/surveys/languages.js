// The answer page's language links (data-survey-language) keep the page's #fragment: an
// invitation's token lives there (never sent to the server), and switching language must not lose it.
for (const link of document.querySelectorAll("a[data-survey-language]")) {
  link.addEventListener("click", () => {
    if (window.location.hash) link.hash = window.location.hash;
  });
}
