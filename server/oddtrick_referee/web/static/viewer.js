// The replay viewer and the live view. Plain script, no build step, nothing fetched
// from elsewhere. The server's replay (the rules engine) decided every trick, count
// and score; this only removes played cards from hands and groups plays into tricks.
"use strict";
(function () {
  const SUITS = [["S", "♠", "black"], ["H", "♥", "red"], ["D", "♦", "red"], ["C", "♣", "black"]];
  const RANKS = "AKQJT98765432";
  const SEATS = ["N", "E", "S", "W"];
  const NAMES = { N: "North", E: "East", S: "South", W: "West" };
  const $ = (id) => document.getElementById(id);

  const colour = (card) => ("HD".includes(card[1]) ? "red" : "black");
  const label = (card) => (card[0] === "T" ? "10" : card[0]);
  const pretty = (card) => label(card) + SUITS.find((s) => s[0] === card[1])[1];
  // What each logged fault means (views.py FAULTS has the same words).
  const FAULTS = {
    timeout: "played by the referee: the bot did not answer in time",
    disconnected: "played by the referee: the bot was disconnected",
    illegal: "played by the referee: the bot's answers were not legal",
    forfeited: "played by the referee: the seat was forfeited",
    bot_error: "the bot's own code failed: its SDK played a fallback",
    clock: "played by the referee: the bot's time bank ran out",
  };
  const faultText = (fault) => (fault ? FAULTS[fault] || "played by the referee (" + fault + ")" : "");
  const duration = (ms) => (ms < 1000 ? ms + " ms" : (ms / 1000).toFixed(1) + " s");
  // The bot's own think time when it reported one, and the referee's measure, lag included
  // (views.py time_text says the same): a slow answer may be the network's, not the bot's.
  const timeText = (d) => {
    if (d.think_ms === null || d.think_ms === undefined) return "";
    const answered = "answered in " + duration(d.think_ms);
    return d.bot_think_ms === null || d.bot_think_ms === undefined ? answered : "thought " + duration(d.bot_think_ms) + ", " + answered;
  };

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function cardEl(card, text, extra) {
    const node = el("span", "card " + colour(card) + (extra ? " " + extra : ""), text === undefined ? pretty(card) : text);
    node.dataset.card = card;
    return node;
  }

  function renderHolding(seat, cards, count) {
    const box = $("hand-" + seat);
    box.replaceChildren();
    if (!cards) {
      if (count === undefined) return; // no hand dealt yet
      const hidden = el("div", "hidden-hand", count + (count === 1 ? " card" : " cards"));
      hidden.title = "hidden until the hand is over";
      box.append(hidden);
      return;
    }
    for (const [letter, symbol, col] of SUITS) {
      const row = el("div", "suit");
      row.append(el("span", "sym " + col, symbol));
      const held = cards.filter((c) => c[1] === letter).sort((a, b) => RANKS.indexOf(a[0]) - RANKS.indexOf(b[0]));
      if (!held.length) row.append(el("span", "void", "—"));
      for (const card of held) row.append(cardEl(card, label(card)));
      box.append(row);
    }
  }

  function renderTable(state) {
    $("hand-title").textContent = state.title;
    for (const seat of SEATS) renderHolding(seat, state.hands[seat], state.counts[seat]);
    for (const seat of SEATS) {
      const slot = document.querySelector("#trick .slot-" + seat);
      slot.replaceChildren();
      const played = state.trick.find((p) => p.seat === seat);
      if (played) {
        const extra = (state.winner === seat ? "won" : "") + (played.fault ? " fault" : "");
        const node = cardEl(played.card, undefined, extra.trim());
        if (played.fault) node.title = faultText(played.fault);
        slot.append(node);
      }
    }
    $("tricks-ns").textContent = state.tricks[0];
    $("tricks-ew").textContent = state.tricks[1];
    const body = document.querySelector("#auction tbody");
    body.replaceChildren();
    if (state.calls.length) {
      const cells = Array(["W", "N", "E", "S"].indexOf(state.calls[0].seat)).fill(null).concat(state.calls);
      for (let i = 0; i < cells.length; i += 4) {
        const tr = el("tr");
        for (const c of cells.slice(i, i + 4)) {
          if (!c) { tr.append(el("td", "", "")); continue; }
          const td = el("td", "", c.call + (c.fault ? " (" + c.fault + ")" : ""));
          const title = [faultText(c.fault), timeText(c)].filter((t) => t).join(" · ");
          if (title) td.title = title;
          tr.append(td);
        }
        body.append(tr);
      }
    }
    const list = $("trick-list");
    list.replaceChildren();
    for (const trick of state.done) {
      const li = el("li");
      for (const play of trick.plays) {
        const span = el("span", "play");
        span.append(el("span", "who", play.seat), " ", cardEl(play.card));
        const time = timeText(play);
        if (time) span.title = time;
        if (play.fault) {
          const mark = el("span", "fault", play.fault);
          mark.title = faultText(play.fault);
          span.append(" ", mark);
        }
        li.append(span, " ");
      }
      li.append("→ " + trick.winner);
      list.append(li);
    }
    renderDecision(state.last);
    renderComments(state.comments);
    $("result").textContent = state.result || "";
    $("score").textContent = state.score || "";
    document.querySelectorAll(".seat").forEach((node) => node.classList.toggle("to-play", node.dataset.seat === state.toPlay));
  }

  // The last card's decision: who, how long the bot thought, a fault, the bot's comment.
  function renderDecision(last) {
    const box = $("decision");
    if (!box) return; // the live view has none: spectators are not sent think times or comments
    box.replaceChildren();
    if (!last) return;
    const line = el("p");
    line.append(el("span", "seat-name", NAMES[last.seat]), " ", cardEl(last.card));
    const time = timeText(last);
    if (time) line.append(" · ", el("span", "think", time));
    box.append(line);
    if (last.fault) box.append(el("p", "fault-text", "⚠ " + faultText(last.fault)));
    if (last.comment) box.append(el("p", "comment", "“" + last.comment + "”"));
  }

  function renderComments(comments) {
    const list = $("comments");
    if (!list) return;
    list.replaceChildren();
    for (const c of comments || []) {
      const li = el("li");
      li.append(el("span", "who", c.where + " · " + c.seat + " " + c.action), " " + c.comment);
      list.append(li);
    }
  }

  const scoreText = (s) => "NS " + s[0] + " · EW " + s[1];

  // ------------------------------------------------------------- replay

  function replay(data) {
    let hand = 1;
    let card = 0;
    const params = new URLSearchParams(location.search);
    const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));
    hand = clamp(parseInt(params.get("hand") || "1", 10) || 1, 1, data.hands.length);
    card = clamp(parseInt(params.get("card") || "0", 10) || 0, 0, data.hands[hand - 1].plays.length);

    function state() {
      const h = data.hands[hand - 1];
      const plays = h.plays.slice(0, card);
      const gone = new Set(plays.map((p) => p.card));
      const hands = {};
      const counts = {};
      for (const seat of SEATS) {
        hands[seat] = h.deal[seat].filter((c) => !gone.has(c));
        counts[seat] = hands[seat].length;
      }
      const last = plays[plays.length - 1];
      const trick = last ? plays.filter((p) => p.trick === last.trick) : [];
      const done = [];
      for (let i = 0; i + 4 <= plays.length; i += 4) {
        done.push({ plays: plays.slice(i, i + 4), winner: plays[i + 3].winner });
      }
      const atEnd = card === h.plays.length && h.result !== null;
      const comments = h.calls.filter((c) => c.comment).map((c) => ({ where: "auction", seat: c.seat, action: c.call, comment: c.comment }))
        .concat(plays.filter((p) => p.comment).map((p) => ({ where: "trick " + p.trick, seat: p.seat, action: pretty(p.card), comment: p.comment })));
      return {
        title: "Hand " + h.number + " · dealer " + h.dealer + " · " + h.trumps,
        hands, counts, trick, done,
        winner: last ? last.winner : null,
        tricks: last ? last.tricks : [0, 0],
        calls: h.calls,
        result: atEnd ? h.result + (h.game ? " · " + h.game : "") + (hand === data.hands.length && data.result ? " · " + data.result : "") : "",
        score: scoreText(atEnd ? h.scores_after : h.scores_before),
        toPlay: card < h.plays.length ? h.plays[card].seat : null,
        last: last || null,
        comments,
      };
    }

    function show() {
      const h = data.hands[hand - 1];
      renderTable(state());
      $("position").textContent = "hand " + hand + " · card " + card + "/" + h.plays.length;
      $("hand-picker").value = String(hand);
      const url = new URL(location.href);
      url.searchParams.set("hand", hand);
      url.searchParams.set("card", card);
      history.replaceState(null, "", url);
      // The links to this deal at both tables follow the hand shown.
      document.querySelectorAll("[data-hand-link]").forEach((link) => {
        link.href = link.dataset.handLink.replace("{hand}", String(hand));
      });
    }

    const moves = {
      forward() {
        if (card < data.hands[hand - 1].plays.length) card++;
        else if (hand < data.hands.length) { hand++; card = 0; }
      },
      back() {
        if (card > 0) card--;
        else if (hand > 1) { hand--; card = data.hands[hand - 1].plays.length; }
      },
      start() { card = 0; },
      end() { card = data.hands[hand - 1].plays.length; },
      nextHand() { if (hand < data.hands.length) { hand++; card = 0; } },
      previousHand() { if (hand > 1) { hand--; card = 0; } },
    };
    document.querySelectorAll("[data-step]").forEach((button) => {
      button.addEventListener("click", () => { moves[button.dataset.step](); show(); });
    });
    $("hand-picker").addEventListener("change", (event) => {
      hand = parseInt(event.target.value, 10); card = 0; show();
    });
    const keys = { ArrowRight: "forward", ArrowLeft: "back", ArrowDown: "nextHand", ArrowUp: "previousHand", Home: "start", End: "end" };
    document.addEventListener("keydown", (event) => {
      if (event.target instanceof HTMLSelectElement || event.altKey || event.ctrlKey || event.metaKey) return;
      const move = keys[event.key];
      if (!move) return;
      event.preventDefault();
      moves[move]();
      show();
    });
    show();
  }

  // --------------------------------------------------------------- live

  function live(info) {
    const s = {
      title: "waiting for the first hand", hands: {}, counts: {}, trick: [], done: [], winner: null,
      tricks: [0, 0], calls: [], result: "", score: scoreText([0, 0]), toPlay: null,
      header: "", lastSeq: 0, classic: false,
    };
    const status = $("live-status");
    function over() {
      const link = el("a", "", "replay it card by card");
      link.href = location.pathname;
      status.replaceChildren("the match is over: ", link);
    }
    function apply(e) {
      if (e.seq <= s.lastSeq) return; // a reconnection sends everything again
      s.lastSeq = e.seq;
      switch (e.type) {
        case "match_started":
          s.classic = e.classic;
          break;
        case "hand_started": {
          let what = "auction";
          if (s.classic) {
            if (e.turned) what = "trumps " + e.trumps + " (turned " + pretty(e.turned) + ")";
            else if (e.cut) what = "trumps " + e.trumps + " (cut " + pretty(e.cut) + ")";
            else what = e.trumps ? "trumps " + e.trumps + " (fixed rotation)" : "no trumps (fixed rotation)";
          }
          s.header = "Hand " + e.hand + " · dealer " + e.dealer + " · " + what;
          s.title = s.header;
          for (const seat of SEATS) { s.hands[seat] = e.hands[seat] ? e.hands[seat].slice() : null; s.counts[seat] = 13; }
          s.trick = []; s.done = []; s.winner = null; s.tricks = [0, 0]; s.calls = []; s.result = "";
          s.toPlay = SEATS[(SEATS.indexOf(e.dealer) + 1) % 4];
          break;
        }
        case "call_made":
          s.calls.push({ seat: e.seat, call: e.call });
          s.toPlay = SEATS[(SEATS.indexOf(e.seat) + 1) % 4];
          break;
        case "auction_ended":
          s.title = s.header.replace(/auction$/, e.contract || "thrown in: all four passed");
          s.toPlay = e.leader; // the declarer's left leads (null: thrown in, nobody plays)
          break;
        case "card_played":
          if (s.trick.length === 4) { s.trick = []; s.winner = null; }
          s.trick.push({ seat: e.seat, card: e.card });
          s.counts[e.seat]--;
          if (s.hands[e.seat]) s.hands[e.seat] = s.hands[e.seat].filter((c) => c !== e.card);
          s.toPlay = SEATS[(SEATS.indexOf(e.seat) + 1) % 4];
          break;
        case "trick_completed":
          s.winner = e.winner; s.tricks = e.tricks;
          s.done.push({ plays: s.trick.slice(), winner: e.winner });
          s.toPlay = e.winner;
          break;
        case "hand_ended":
          s.result = e.result; s.score = scoreText(e.scores); s.toPlay = null;
          // The four hands as dealt, shown until the next hand is dealt (none if thrown in).
          for (const seat of SEATS) if (e.hands[seat]) s.hands[seat] = e.hands[seat].slice();
          break;
        case "game_ended":
          s.result += " · " + e.text;
          break;
        case "match_ended":
          s.result += " · " + e.text;
          over();
          break;
        default:
          break;
      }
    }
    const source = new EventSource("/matches/" + encodeURIComponent(info.match_id) + "/events");
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      apply(event);
      renderTable(s);
      document.body.dataset.lastSeq = String(s.lastSeq);
      if (window.oddtrickOnEvent) window.oddtrickOnEvent(event);
    };
    source.addEventListener("end", () => {
      source.close();
      over();
    });
    source.onerror = () => { status.textContent = "connection lost; retrying…"; };
    source.onopen = () => { status.textContent = "following the play live"; };
  }

  const matchData = $("match-data");
  if (matchData) replay(JSON.parse(matchData.textContent));
  const liveData = $("live-data");
  if (liveData) live(JSON.parse(liveData.textContent));
})();
