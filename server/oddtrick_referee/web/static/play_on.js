// Play on from here (web/play_on.py): from the step the viewer shows (its URL's hand and
// card), a bot plays the rest of the hand in the seats picked; the server plays it with the
// rules engine and this shows the continuation beside the real play. Plain script, nothing
// fetched from elsewhere; it reads the viewer's URL only, so it needs nothing of viewer.js.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const form = $("play-on-form");
  const data = $("match-data");
  if (!form || !data) return;
  const matchId = JSON.parse(data.textContent).match_id;
  const status = $("play-on-status");
  const result = $("play-on-result");
  const NAMES = { N: "North", E: "East", S: "South", W: "West" };
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const pretty = (card) => (card[0] === "T" ? "10" : card[0]) + SUITS[card[1]];

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function cardEl(card) {
    const node = el("span", "card " + ("HD".includes(card[1]) ? "red" : "black"), pretty(card));
    node.dataset.card = card;
    return node;
  }

  // One line of play: its tricks (the first may have begun before the step) and its result.
  function column(line, title, side) {
    const box = el("section", "play-on-line");
    box.dataset.line = line;
    box.append(el("h4", "", title));
    const list = el("ol");
    const tricks = [...new Set(side.plays.map((p) => p.trick))];
    list.start = tricks[0];
    for (const number of tricks) {
      const li = el("li");
      const plays = side.plays.filter((p) => p.trick === number);
      if (plays.length < 4) li.append("… ");
      for (const p of plays) {
        const span = el("span", "play");
        span.dataset.seat = p.seat;
        span.append(el("span", "who", p.seat), " ", cardEl(p.card));
        li.append(span, " ");
      }
      const winner = plays[plays.length - 1].winner;
      if (winner) li.append(el("span", "won", "→ " + NAMES[winner]));
      list.append(li);
    }
    box.append(list);
    const outcome = el("p", "outcome", "NS " + side.tricks[0] + " tricks, EW " + side.tricks[1] + " · " + side.text);
    outcome.dataset.tricks = side.tricks.join("-");
    outcome.dataset.points = side.points.join("-");
    box.append(outcome);
    return box;
  }

  function show(found) {
    const who = Object.entries(found.players).map(([seat, bot]) => NAMES[seat] + " " + bot + (found.picked.includes(seat) ? " (picked)" : ""));
    const more = found.played_on.tricks[0] - found.as_played.tricks[0];
    const diff = more === 0 ? "the same tricks as played" : (more > 0 ? "NS " : "EW ") + Math.abs(more) + (Math.abs(more) === 1 ? " trick" : " tricks") + " more than as played";
    status.textContent = "Hand " + found.hand + " played on from card " + found.card + " of " + found.cards + ": " + diff + ".";
    const heading = el("p", "sub play-on-who", who.join(", "));
    result.replaceChildren(heading, column("played-on", "Played on", found.played_on), column("as-played", "As played", found.as_played));
    result.dataset.hand = String(found.hand);
    result.dataset.card = String(found.card);
  }

  let asked = 0;
  let timer = null;
  function ask(query, number) {
    fetch("/matches/" + encodeURIComponent(matchId) + "/play-on.json?" + query, { cache: "no-store" })
      .then((r) => r.json())
      .then((found) => {
        if (number !== asked) return; // a newer question was asked meanwhile
        if (found.status === "ready") { show(found); return; }
        status.textContent = found.message || "";
        if (found.status === "pending") timer = setTimeout(() => ask(query, number), 700);
        else if (found.status === "busy") timer = setTimeout(() => ask(query, number), 10000);
      })
      .catch(() => { if (number === asked) status.textContent = "The page could not reach the server: try again."; });
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const params = new URLSearchParams(location.search);
    const seats = [...form.querySelectorAll("input[name=seat]:checked")].map((box) => box.value).join("");
    asked++;
    if (timer !== null) clearTimeout(timer);
    result.replaceChildren();
    if (!seats) { status.textContent = "Pick at least one seat for the bot to play."; return; }
    const hand = params.get("hand") || "1";
    const card = params.get("card") || "0";
    const query = new URLSearchParams({ hand, card, seats, bot: $("play-on-bot").value, others: $("play-on-others").value });
    status.textContent = "Playing hand " + hand + " on from card " + card + "…";
    ask(query.toString(), asked);
  });
})();
