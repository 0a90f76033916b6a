// A seat played from the browser (docs/web.md, "A seat in the browser").
//
// The page is sent the match's events in the one shape of a match (replay/json_export.py),
// as this seat is told them: its own hand and no other until the hand is over. It folds
// and draws them with the replay's own code (viewer.js: folder, renderTable), so the
// table, the auction in seat columns, the tricks and the score are the replay's. Beside
// the events, at the seat's turn, comes the question ("asked"): the legal cards or
// calls, and why each other card held (or call of the box) may not be played. This
// script adds only what a seat alone has: the hand as buttons, the bidding box, the
// prompt, and what a click on a greyed card or call says. The buttons are kept from
// one event to the next (only their state changes), so a keyboard user's focus stays
// where it was while the bots play.
"use strict";

(function () {
  const viewer = window.oddtrickViewer;
  const $ = (id) => document.getElementById(id);
  const data = JSON.parse($("seat-data").textContent);
  const you = data.seat;
  const NAMES = viewer.NAMES;
  const SIDE = { N: "NS", S: "NS", E: "EW", W: "EW" };
  const SUIT_ORDER = "SHDC";
  const RANK_ORDER = "AKQJT98765432";
  const RANK_WORDS = {
    2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
    T: "ten", J: "jack", Q: "queen", K: "king", A: "ace",
  };
  const SUIT_WORDS = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
  const DENOMINATIONS = [
    ["C", "♣", "clubs"], ["D", "♦", "diamonds"], ["H", "♥", "hearts"], ["S", "♠", "spades"],
    ["NT", "NT", "no trumps"],
  ];
  const LEVELS = { 7: "seven", 8: "eight", 9: "nine", 10: "ten", 11: "eleven", 12: "twelve", 13: "thirteen" };
  // What the page received and when a card was clicked: read by the tests (hidden
  // information) and the benchmark (click to card shown elsewhere).
  const record = { received: [], clicks: [] };
  window.oddtrickSeat = record;

  const folded = viewer.folder();
  let players = {};
  let question = null; // the last question put to the seat
  let answered = 0; // the number of the last question answered from this page
  let said = ""; // the last event, in words
  let over = false;
  let boxBuilt = false;
  // Whether the focus was last on a card or a call: a card played leaves the hand and the
  // buttons are greyed while the bots play; the focus is given back to the first card (or
  // call) the seat may play when the seat is asked again.
  let focusInTable = false;
  document.addEventListener("focusin", (event) => {
    focusInTable = Boolean(event.target.closest && event.target.closest("#hand, #bidding-box"));
  });
  viewer.rotate(you);

  const cardLabel = (card) => `${viewer.pretty(card)} ${RANK_WORDS[card[0]]} of ${SUIT_WORDS[card[1]]}`;
  const who = (seat) => (seat === you ? "you" : `${NAMES[seat]} (${players[seat] || "?"})`);

  // The question the seat must answer now: put, not answered here, and no event since.
  function open() {
    if (over || !question || question.asked <= answered) return null;
    return question.after === folded.match.lastSeq ? question : null;
  }

  function prompt(state) {
    if (over || !state.toPlay) return "";
    const doing = state.auction ? "call" : "play";
    return state.toPlay === you ? `your turn to ${doing}` : `${who(state.toPlay)} to ${doing}`;
  }

  // Why a greyed card or call may not be played now, in one line.
  function whyNot(action, kind, state) {
    if (over) return "the match is over";
    const q = open();
    if (q && q.kind !== kind) return "the auction is on: choose a call in the bidding box";
    if (q) return q.why_not[action] || `that ${kind} may not be made now`;
    return state.toPlay ? `it is not your turn: ${prompt(state)}` : "it is not your turn";
  }

  function held(state) {
    const dealt = state.deal[you] || [];
    const gone = new Set(state.gone);
    const order = (c) => SUIT_ORDER.indexOf(c[1]) * 13 + RANK_ORDER.indexOf(c[0]);
    return dealt.filter((c) => !gone.has(c)).sort((a, b) => order(a) - order(b));
  }

  function drawHand(state, legal) {
    const hand = $("hand");
    const buttons = new Map([...hand.querySelectorAll("button")].map((b) => [b.dataset.card, b]));
    const cards = held(state);
    const keep = new Set(cards);
    for (const [card, button] of buttons) if (!keep.has(card)) button.remove();
    let before = null;
    for (const card of cards) {
      let button = buttons.get(card);
      if (!button) {
        button = document.createElement("button");
        button.type = "button";
        button.className = `card ${"HD".includes(card[1]) ? "red" : "black"}`;
        button.dataset.card = card;
        button.textContent = viewer.pretty(card);
        button.setAttribute("aria-label", cardLabel(card));
        button.addEventListener("click", () => act(button, card, "card"));
      }
      const next = before ? before.nextSibling : hand.firstChild;
      if (next !== button) hand.insertBefore(button, next);
      // Greyed, not disabled: a click or Enter on it says why (act), so it stays in the
      // tab order for a keyboard user to hear why as well.
      const playable = legal.has(card);
      button.setAttribute("aria-disabled", playable ? "false" : "true");
      before = button;
    }
  }

  function callButton(call, text, label, red) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = `call ${red ? "red" : "black"}`;
    button.dataset.call = call;
    button.textContent = text;
    button.setAttribute("aria-label", label);
    button.setAttribute("aria-disabled", "true");
    button.addEventListener("click", () => act(button, call, "call"));
    return button;
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

  function drawBox(state, legal) {
    const bidding = !folded.match.classic && state.auction && !over;
    $("bidding-box").hidden = !bidding;
    if (bidding && !boxBuilt) buildBox();
    // Greyed as the cards are, not disabled: a click on a call not open says why.
    for (const button of document.querySelectorAll("#bidding-box button")) {
      button.setAttribute("aria-disabled", legal.has(button.dataset.call) ? "false" : "true");
    }
  }

  function draw() {
    const state = folded.latest();
    viewer.renderTable(state);
    const q = open();
    const legal = new Set(q ? q.legal : []);
    drawHand(state, q && q.kind === "card" ? legal : new Set());
    drawBox(state, q && q.kind === "call" ? legal : new Set());
    $("turn").textContent = prompt(state);
    document.body.dataset.phase = state.auction ? "auction" : "play";
    document.body.dataset.yourTurn = q ? "yes" : "no";
    if (q) document.body.dataset.asked = String(q.asked);
    const now = document.activeElement;
    const lost = !now || now === document.body || now.disabled || now.getAttribute("aria-disabled") === "true";
    if (q && focusInTable && lost) {
      const box = q.kind === "card" ? "#hand" : "#bidding-box";
      const first = document.querySelector(`${box} button[aria-disabled="false"]`);
      if (first) first.focus();
    }
  }

  // A click (or Enter) on a card or call: sent if it is open, else the page says why not.
  function act(button, action, kind) {
    if (button.getAttribute("aria-disabled") !== "true") {
      send(action);
      return;
    }
    const refusal = $("refusal");
    refusal.textContent = whyNot(action, kind, folded.latest());
    refusal.hidden = false;
  }

  async function send(action) {
    const q = open();
    if (!q) return;
    record.clicks.push({ action, at: performance.timeOrigin + performance.now() });
    answered = q.asked;
    draw();
    $("refusal").hidden = true;
    let refusal = "";
    try {
      const response = await fetch(data.answer, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ action }),
      });
      const answer = await response.json();
      if (!response.ok) refusal = answer.error || `refused (${response.status})`;
    } catch (error) {
      refusal = `not sent: ${error}`;
    }
    if (refusal && answered === q.asked) {
      answered = q.asked - 1;
      $("refusal").textContent = refusal;
      $("refusal").hidden = false;
      draw();
    }
  }

  // The event just folded, in words, for the live region.
  function words(e) {
    switch (e.type) {
      case "match_started": return `${e.game}; you sit ${NAMES[you]}`;
      case "hand_started": return e.title;
      case "call_made": return `${who(e.seat)} called ${e.call}`;
      case "auction_ended": return e.contract ? `contract ${e.contract}` : e.text;
      case "card_played": return `${who(e.seat)} played ${cardLabel(e.card)}`;
      case "trick_completed": return `${said}; trick ${e.number} to ${who(e.winner)}`;
      case "hand_ended": return `hand over: ${e.result}`;
      default: return e.text || said;
    }
  }

  function announce() {
    const turn = $("turn").textContent;
    const text = [said, turn].filter((t) => t).join(". ");
    if ($("announce").textContent !== text) $("announce").textContent = text;
  }

  function started(e) {
    players = e.players;
    document.body.dataset.matchId = e.match_id;
    $("seat-title").textContent = `Your seat: ${NAMES[you]}`;
    const partner = { N: "S", S: "N", E: "W", W: "E" }[you];
    const others = [...new Set(Object.keys(NAMES).filter((s) => SIDE[s] !== SIDE[you]).map((s) => players[s]))];
    $("seat-info").textContent = `${e.game} · your partner ${NAMES[partner]} is ${players[partner]}; ` +
      `your opponents are ${others.join(" and ")}`;
    for (const seat of Object.keys(NAMES)) if (seat !== you) $("player-" + seat).textContent = players[seat];
    $("auction-area").hidden = e.classic; // classic Whist has no auction
  }

  function ended(e) {
    over = true;
    const end = $("match-end");
    end.textContent = `${e.text} (you sit ${SIDE[you]})`;
    end.hidden = false;
  }

  const events = new EventSource(data.events);
  events.onmessage = (message) => {
    const e = JSON.parse(message.data);
    record.received.push(e);
    if (!folded.add(e)) return; // sent again after a reconnection
    if (e.type === "match_started") started(e);
    said = words(e);
    if (e.type === "match_ended") ended(e);
    draw();
    announce();
  };
  events.addEventListener("asked", (message) => {
    question = JSON.parse(message.data);
    record.received.push(question);
    $("refusal").hidden = true;
    draw();
    announce();
  });
  events.addEventListener("end", (message) => {
    events.close();
    const end = JSON.parse(message.data);
    over = true;
    document.body.dataset.over = "yes";
    draw();
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
