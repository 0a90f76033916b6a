// A seat played from the browser (docs/web.md, "A seat in the browser").
//
// Every message from /play/TOKEN/events is a whole snapshot of what the seat sees, so the
// page draws the latest one and nothing else: a page that reconnects shows the right
// table from its next message. Only the seat's legal cards (or calls) are enabled; a
// click posts it to /play/TOKEN/answer, and a refusal's reason is shown in one line.
// The buttons are kept from one message to the next (only their state changes), so a
// keyboard user's focus stays where it was while the bots play.
"use strict";

(function () {
  const urls = JSON.parse(document.getElementById("seat-data").textContent);
  const SEATS = { N: "North", E: "East", S: "South", W: "West" };
  const SIDE = { N: 0, S: 0, E: 1, W: 1 };
  const DENOMINATIONS = [
    ["C", "♣", "clubs"], ["D", "♦", "diamonds"], ["H", "♥", "hearts"], ["S", "♠", "spades"],
    ["NT", "NT", "no trumps"],
  ];
  const LEVELS = { 7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen" };
  // What the page received and when a card was clicked: read by the tests (hidden
  // information) and the benchmark (click to card shown elsewhere).
  const record = { received: [], clicks: [] };
  window.oddtrickSeat = record;
  const $ = (id) => document.getElementById(id);
  let last = null;
  // The question (its message's number) a card or call was sent for: it stays answered,
  // while the next question may arrive before the answer's reply does.
  let answered = -1;
  let boxBuilt = false;
  // Whether the focus was last on a card or a call: a card played leaves the hand and the
  // buttons are greyed while the bots play, which drops the focus; it is given back to the
  // first card (or call) the seat may play when the seat is asked again.
  let focusInTable = false;
  document.addEventListener("focusin", (event) => {
    focusInTable = Boolean(event.target.closest && event.target.closest("#hand, #bidding-box"));
  });

  function who(message, seat) {
    if (seat === message.seat) return "you";
    return `${SEATS[seat]} (${message.players[seat]})`;
  }

  function cardSpan(card) {
    const span = document.createElement("span");
    span.className = `card ${card.red ? "red" : "black"}`;
    span.dataset.card = card.card;
    span.textContent = card.text;
    span.setAttribute("aria-label", card.label);
    return span;
  }

  function drawHeading(message) {
    const seat = message.seat;
    $("seat-title").textContent = `Your seat: ${SEATS[seat]}`;
    const partner = { N: "S", S: "N", E: "W", W: "E" }[seat];
    const others = [...new Set(Object.keys(SEATS).filter((s) => SIDE[s] !== SIDE[seat]).map((s) => message.players[s]))];
    const game = message.game === "contract" ? "Contract Whist" : "classic Whist";
    let trumps = "";
    if (message.game === "classic") trumps = ` · trumps ${message.trumps || "none"}`;
    $("seat-info").textContent = `${game} · hand ${message.hand_number} · dealer ${SEATS[message.dealer]}${trumps}` +
      ` · your partner ${SEATS[partner]} is ${message.players[partner]}; your opponents are ${others.join(" and ")}`;
  }

  function drawTrick(message) {
    for (const slot of document.querySelectorAll("#trick .slot")) {
      const seat = slot.dataset.seat;
      slot.querySelector(".who").textContent = who(message, seat);
      const played = slot.querySelector(".played");
      played.replaceChildren();
      const play = message.trick.find((p) => p.seat === seat);
      if (play) played.append(cardSpan(play));
      slot.classList.toggle("to-act", message.to_act === seat);
    }
    const lastTrick = message.last_trick;
    if (lastTrick.length) {
      const winner = lastTrick.find((p) => p.won);
      const cards = lastTrick.map((p) => `${p.seat} ${p.text}`).join(" ");
      $("last-trick").textContent = `last trick: ${cards}, won by ${who(message, winner.seat)}`;
    } else if (!message.trick.length) {
      $("last-trick").textContent = "";
    }
  }

  function drawScore(message) {
    const ours = SIDE[message.seat];
    $("tricks-ours").textContent = message.tricks[ours];
    $("tricks-theirs").textContent = message.tricks[1 - ours];
    $("score-ns").textContent = message.scores[0];
    $("score-ew").textContent = message.scores[1];
    $("contract").textContent = message.contract ? `contract ${message.contract}` : "";
  }

  function drawHand(message, legal) {
    const hand = $("hand");
    const held = new Map([...hand.querySelectorAll("button")].map((b) => [b.dataset.card, b]));
    const keep = new Set(message.cards.map((c) => c.card));
    for (const [card, button] of held) if (!keep.has(card)) button.remove();
    let before = null;
    for (const card of message.cards) {
      let button = held.get(card.card);
      if (!button) {
        button = document.createElement("button");
        button.type = "button";
        button.className = `card ${card.red ? "red" : "black"}`;
        button.dataset.card = card.card;
        button.textContent = card.text;
        button.setAttribute("aria-label", card.label);
        button.addEventListener("click", () => send(card.card));
      }
      const next = before ? before.nextSibling : hand.firstChild;
      if (next !== button) hand.insertBefore(button, next);
      button.disabled = !legal.has(card.card);
      before = button;
    }
  }

  function buildBox() {
    const box = $("bidding-box");
    for (const level of Object.keys(LEVELS)) {
      const row = document.createElement("div");
      row.className = "bid-row";
      for (const [letters, symbol, name] of DENOMINATIONS) {
        row.append(callButton(`${level}${letters}`, `${level}${symbol}`, `${level}${symbol} ${LEVELS[level]} ${name}`,
          letters === "H" || letters === "D"));
      }
      box.append(row);
    }
    const row = document.createElement("div");
    row.className = "bid-row";
    row.append(callButton("pass", "pass", "pass", false), callButton("double", "double", "double", false));
    box.append(row);
    boxBuilt = true;
  }

  function callButton(call, text, label, red) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `call ${red ? "red" : "black"}`;
    button.dataset.call = call;
    button.textContent = text;
    button.setAttribute("aria-label", label);
    button.disabled = true;
    button.addEventListener("click", () => send(call));
    return button;
  }

  function drawAuction(message, legal) {
    if (message.game !== "contract") return;
    $("auction-area").hidden = false;
    if (!boxBuilt) buildBox();
    const list = $("auction");
    list.replaceChildren(...message.auction.map((c) => {
      const item = document.createElement("li");
      item.textContent = `${who(message, c.seat)}: ${c.text}`;
      item.setAttribute("aria-label", `${who(message, c.seat)}: ${c.label}`);
      return item;
    }));
    for (const button of document.querySelectorAll("#bidding-box button")) {
      button.disabled = !legal.has(button.dataset.call);
    }
    $("bidding-box").hidden = message.phase !== "auction";
  }

  function draw(message) {
    last = message;
    const legal = new Set(message.seq <= answered ? [] : message.legal);
    drawHeading(message);
    drawTrick(message);
    drawScore(message);
    // A bid's code (7H) may be a card's too: cards are played only in the play.
    const cards = message.phase === "play" ? legal : new Set();
    const calls = message.phase === "auction" ? legal : new Set();
    drawAuction(message, calls);
    drawHand(message, cards);
    $("turn").textContent = message.turn;
    $("result").textContent = message.result ? `result: ${message.result}` : "";
    $("match-result").textContent = message.match_result || "";
    document.body.dataset.phase = message.phase;
    document.body.dataset.yourTurn = legal.size ? "yes" : "no";
    if (legal.size) document.body.dataset.asked = message.seq;
    const now = document.activeElement;
    const lost = !now || now === document.body || now.disabled;
    if (legal.size && focusInTable && lost) {
      const first = document.querySelector(message.phase === "play" ? "#hand button:enabled" : "#bidding-box button:enabled");
      if (first) first.focus();
    }
  }

  async function send(action) {
    if (!last || last.seq <= answered) return;
    const question = last.seq;
    record.clicks.push({ action, at: performance.timeOrigin + performance.now() });
    answered = question;
    draw(last);
    $("refusal").hidden = true;
    let refusal = "";
    try {
      const response = await fetch(urls.answer, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ action }),
      });
      const answer = await response.json();
      if (!response.ok) refusal = answer.error || `refused (${response.status})`;
    } catch (error) {
      refusal = `not sent: ${error}`;
    }
    if (refusal && answered === question) {
      answered = question - 1;
      $("refusal").textContent = refusal;
      $("refusal").hidden = false;
      draw(last);
    }
  }

  const events = new EventSource(urls.events);
  let seen = -1;
  events.onmessage = (event) => {
    const message = JSON.parse(event.data);
    record.received.push(message);
    if (message.seq <= seen) return;
    seen = message.seq;
    // A question repeats whose turn it is, which the message before it said already.
    const said = $("announce").textContent;
    if (message.say) $("announce").textContent = message.say;
    else if (message.turn && !said.endsWith(message.turn)) $("announce").textContent = message.turn;
    if (message.legal.length) $("refusal").hidden = true;
    draw(message);
    if (message.match_id) document.body.dataset.matchId = message.match_id;
  };
  events.addEventListener("end", (event) => {
    events.close();
    const end = JSON.parse(event.data);
    document.body.dataset.over = "yes";
    const after = $("after");
    after.replaceChildren();
    if (end.error) {
      after.textContent = end.error;
      return;
    }
    if (end.match_id) {
      const link = document.createElement("a");
      link.href = `/matches/${encodeURIComponent(end.match_id)}`;
      link.textContent = "its replay";
      after.append("The match is over: ", link, ".");
    }
  });
})();
