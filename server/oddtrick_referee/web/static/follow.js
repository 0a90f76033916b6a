// Pages of tables still being played follow them by themselves: a polite poll of the page's
// own address (every data-follow seconds, none while the tab is hidden) that swaps in what
// changed. A sealed table's page reloads once its deals are released (data-follow-reload),
// to become the replay; the standings stop asking once no table of theirs plays.
"use strict";
(function () {
  const first = document.querySelector("[data-follow]");
  if (!first) return;
  const every = 1000 * (parseFloat(first.dataset.follow) || 10);
  const reloadAtEnd = first.hasAttribute("data-follow-reload");
  async function again() {
    if (document.hidden) { setTimeout(again, every); return; }
    const current = document.querySelector("[data-follow]");
    let next;
    try {
      const response = await fetch(location.href, { cache: "no-store" });
      next = new DOMParser().parseFromString(await response.text(), "text/html");
    } catch (error) {
      setTimeout(again, every * 3); // the server is away: ask less often
      return;
    }
    const fresh = next.querySelector("[data-follow]");
    if (!fresh && reloadAtEnd) { location.reload(); return; }
    // Counted at every answer, the last (which ends the following) included.
    document.body.dataset.followed = String((parseInt(document.body.dataset.followed || "0", 10) || 0) + 1);
    if (!fresh) { document.querySelector("main").replaceWith(next.querySelector("main")); return; }
    if (fresh.innerHTML !== current.innerHTML) current.replaceWith(document.adoptNode(fresh));
    setTimeout(again, every);
  }
  setTimeout(again, every);
})();
