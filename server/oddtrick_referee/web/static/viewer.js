// The replay viewer and the live view (and the drawing of the seat page's table, seat.js).
// Plain script, no build step, nothing fetched
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
  // Every fault at a call or card comes with its words from the server (oddtrick.rules._words):
  // the bot's error message, the refused action and the rules' reason, a time-out.
  const faultsOf = (step) => (step && step.faults ? step.faults : []);
  const faultsText = (step) => faultsOf(step).map((f) => f.text).join(" · ");
  function faultMarks(node, step) {
    for (const f of faultsOf(step)) {
      const mark = el("span", "fault", f.kind);
      mark.title = f.text;
      mark.dataset.faultKind = f.kind;
      node.append(" ", mark);
    }
  }
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

  // A hand nobody may see yet: how many cards it holds (hidden cards are never sent).
  function renderHidden(seat, count) {
    const box = $("hand-" + seat);
    box.replaceChildren();
    if (count === undefined) return; // no hand dealt yet
    const hidden = el("div", "hidden-hand", count + (count === 1 ? " card" : " cards"));
    hidden.title = "hidden until the hand is over";
    box.append(hidden);
  }

  // A position, and what the analysis adds to it (state.dd: the seat to play, every legal
  // card's double-dummy tricks for its side, the card it played), drawn in one place.
  function renderTable(state) {
    $("hand-title").textContent = state.title;
    const gone = new Set(state.gone);
    for (const seat of SEATS) {
      if (!$("hand-" + seat)) continue; // the seat page draws its own hand as buttons
      if (state.deal[seat]) renderDeal(seat, state.deal[seat], gone, state.dd && state.dd.seat === seat ? state.dd : null);
      else renderHidden(seat, state.counts[seat]);
    }
    for (const seat of SEATS) {
      const slot = document.querySelector("#trick .slot-" + seat);
      slot.replaceChildren();
      const played = state.trick.find((p) => p.seat === seat);
      if (played) {
        const faulted = faultsOf(played).length > 0;
        const extra = (state.winner === seat ? "won" : "") + (faulted ? " fault" : "");
        const node = cardEl(played.card, undefined, extra.trim());
        if (faulted) node.title = faultsText(played);
        slot.append(node);
      }
    }
    $("tricks-ns").textContent = state.tricks[0];
    $("tricks-ew").textContent = state.tricks[1];
    const body = document.querySelector("#auction tbody"); // none at classic Whist: no auction
    if (body) body.replaceChildren();
    if (body && state.calls.length) {
      const cells = Array(["W", "N", "E", "S"].indexOf(state.calls[0].seat)).fill(null).concat(state.calls);
      for (let i = 0; i < cells.length; i += 4) {
        const tr = el("tr");
        for (const c of cells.slice(i, i + 4)) {
          if (!c) { tr.append(el("td", "", "")); continue; }
          const td = el("td", "", c.call + (c.fault ? " (" + c.fault + ")" : ""));
          const title = [faultsText(c), timeText(c)].filter((t) => t).join(" · ");
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
        faultMarks(span, play);
        li.append(span, " ");
      }
      li.append(el("span", "won", "→ " + trick.winner));
      list.append(li);
    }
    renderDecision(state.last);
    renderComments(state.comments);
    $("result").textContent = state.result || "";
    $("score").textContent = scoreText(state.score);
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
    for (const f of faultsOf(last)) {
      const line = el("p", "fault-text", "⚠ " + f.text);
      line.dataset.faultKind = f.kind;
      box.append(line);
    }
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

  // ---------------------------------------------------------------- the fold
  // The one path from a match to what the table shows. A match is its events, the export's
  // document (replay/json_export.py): a finished match has them all, a live one gets them as
  // they happen (the same objects, less what spectators are not told during play). Folding
  // them makes each hand's positions: its start, then one after each call and each card; the
  // events between (the auction's end, a trick won, the hand's end) complete the position
  // before them. Positions are never changed once the next one is made: every list is new.
  const START = {
    hand: 0, title: "waiting for the first hand", deal: {}, counts: {}, gone: [], trick: [], done: [],
    winner: null, tricks: [0, 0], calls: [], result: "", score: [0, 0], toPlay: null, auction: false,
    last: null, comments: [], said: "",
  };

  function folder() {
    const match = { classic: false, lastSeq: 0, over: false, hands: [] };
    let s = START;
    let newGame = false; // a rubber's next game starts at love
    const after = (seat) => SEATS[(SEATS.indexOf(seat) + 1) % 4];
    const current = () => match.hands[match.hands.length - 1];
    const step = (changes) => { s = { ...s, ...changes }; current().positions.push(s); };
    const amend = (changes) => {
      s = { ...s, ...changes };
      if (current()) current().positions[current().positions.length - 1] = s;
    };
    const said = (seat, action, what) => NAMES[seat] + " " + action + " " + what;
    const comment = (where, e, action) => (e.comment ? s.comments.concat([{ where, seat: e.seat, action, comment: e.comment }]) : s.comments);
    const fold = {
      match_started(e) { match.classic = e.classic; },
      hand_started(e) {
        const deal = {};
        const counts = {};
        for (const seat of SEATS) { deal[seat] = e.hands && e.hands[seat] ? e.hands[seat] : null; counts[seat] = 13; }
        match.hands.push({ number: e.hand, calls: 0, plays: [], positions: [] });
        step({ ...START, hand: e.hand, title: e.title, deal, counts, score: newGame ? [0, 0] : s.score,
          toPlay: after(e.dealer), auction: !match.classic, said: e.title });
        newGame = false;
      },
      call_made(e) {
        current().calls++;
        step({ calls: s.calls.concat([e]), toPlay: after(e.seat), said: said(e.seat, "called", e.call),
          comments: comment("auction", e, e.call) });
      },
      auction_ended(e) {
        const what = e.contract || "thrown in: all four passed";
        amend({ title: s.title.replace(/auction$/, what), toPlay: e.leader, auction: false,
          said: e.contract ? "contract " + e.contract : what });
      },
      card_played(e) {
        current().plays.push(e);
        step({ trick: (s.trick.length === 4 ? [] : s.trick).concat([e]), winner: null,
          counts: { ...s.counts, [e.seat]: s.counts[e.seat] - 1 }, gone: s.gone.concat([e.card]),
          toPlay: after(e.seat), last: e, said: said(e.seat, "played", pretty(e.card)),
          comments: comment("trick " + e.trick, e, pretty(e.card)) });
      },
      trick_completed(e) {
        amend({ winner: e.winner, tricks: e.tricks, done: s.done.concat([{ plays: s.trick, winner: e.winner }]),
          toPlay: e.winner, said: s.said + "; " + NAMES[e.winner] + " won the trick" });
      },
      hand_ended(e) {
        // The four hands as dealt, shown from the hand's end (none if thrown in).
        const deal = { ...s.deal };
        for (const seat of SEATS) if (e.hands && e.hands[seat]) deal[seat] = e.hands[seat];
        amend({ result: e.result, score: e.scores, toPlay: null, deal });
      },
      game_ended(e) { newGame = true; amend({ result: s.result + " · " + e.text }); },
      match_ended(e) { match.over = true; amend({ result: s.result + " · " + e.text }); },
    };
    return {
      match,
      latest: () => s,
      // One event, in its order; an event already folded (a reconnection sends all again) is not.
      add(e) {
        if (e.seq <= match.lastSeq) return false;
        match.lastSeq = e.seq;
        if (fold[e.type]) fold[e.type](e);
        return true;
      },
    };
  }

  // What a screen reader says of a position: the call or card just made, the count, the
  // score, whose turn it is.
  function announce(s) {
    const box = $("announce");
    const turn = s.toPlay ? NAMES[s.toPlay] + (s.auction ? " to call" : " to play") : "";
    const parts = [s.said, "Tricks NS " + s.tricks[0] + ", EW " + s.tricks[1], s.result, scoreText(s.score), turn];
    const text = parts.filter((t) => t).join(". ");
    if (box && box.textContent !== text) box.textContent = text;
  }

  // ------------------------------------------------------------- replay

  const SVG = "http://www.w3.org/2000/svg";
  function svgEl(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }
  const sideOf = (seat) => ("NS".includes(seat) ? "NS" : "EW");
  const lostText = (n) => "lost " + n + (n === 1 ? " trick" : " tricks") + " double dummy";

  // The double-dummy analysis (web/analysis.py): a mark on each costly card, the card's
  // tricks before and after, and the hand's chart of North-South's tricks against par.
  function analysisBoard(matchId, hands, jump) {
    const box = $("analysis-data");
    let found = box ? JSON.parse(box.textContent) : { status: "none", message: "" };
    let onReady = () => {};
    let current = null; // the shown hand's analysis
    const forHand = (hand) => (found.status === "ready" ? found.hands[String(hands[hand - 1].number)] : undefined);

    function poll() {
      fetch("/matches/" + encodeURIComponent(matchId) + "/analysis.json", { cache: "no-store" })
        .then((r) => (r.ok ? r.json() : { status: "none", message: "No analysis: the page could not fetch it." }))
        .then((next) => {
          found = next;
          if (found.status === "pending") setTimeout(poll, 1000);
          else {
            onReady();
            if (found.status === "busy") setTimeout(poll, 30000); // the queue was full: ask later
          }
        })
        .catch(() => setTimeout(poll, 3000));
    }
    if (found.status === "pending") setTimeout(poll, 500);
    else if (found.status === "busy") setTimeout(poll, 30000);

    function markEl(plays, index) {
      const a = current;
      if (!a || !a.marks[index]) return null;
      const m = el("span", "mark mark-" + Math.min(a.lost[index], 3), a.marks[index]);
      m.title = plays[index].seat + " " + pretty(plays[index].card) + ": " + lostText(a.lost[index]);
      m.dataset.mark = a.marks[index];
      return m;
    }

    function chart(a, h, card) {
      const w = 530, ht = 170, left = 28, bottom = 22, top = 8;
      const x = (i) => left + (i * (w - left - 8)) / 52;
      const y = (t) => top + ((13 - t) * (ht - top - bottom)) / 13;
      const parText = a.par ? a.par : "no par";
      const svg = svgEl("svg", { viewBox: "0 0 " + w + " " + ht, role: "img", "aria-labelledby": "analysis-chart-title", class: "dd-chart" });
      svg.append(svgEl("title", { id: "analysis-chart-title" },
        "Hand " + h.number + ": North-South's double-dummy tricks after each card, from " + a.ns[0] + " at the opening lead to " + a.ns[a.ns.length - 1] + " taken; " + parText));
      for (const t of [0, 7, 13]) {
        svg.append(svgEl("line", { x1: left, x2: w - 8, y1: y(t), y2: y(t), class: "grid" }));
        svg.append(svgEl("text", { x: left - 4, y: y(t) + 4, "text-anchor": "end", class: "axis" }, String(t)));
      }
      for (let k = 1; k < 13; k++) svg.append(svgEl("line", { x1: x(4 * k), x2: x(4 * k), y1: top, y2: ht - bottom, class: "grid" }));
      svg.append(svgEl("text", { x: (w + left) / 2, y: ht - 4, "text-anchor": "middle", class: "axis" }, "cards played (a line every trick)"));
      if (a.par_ns !== null && a.par_ns !== undefined) {
        svg.append(svgEl("line", { x1: left, x2: w - 8, y1: y(a.par_ns), y2: y(a.par_ns), class: "par" }));
        svg.append(svgEl("text", { x: w - 10, y: y(a.par_ns) - 3, "text-anchor": "end", class: "axis" }, "par " + a.par_ns));
      }
      svg.append(svgEl("polyline", { points: a.ns.map((t, i) => x(i) + "," + y(t)).join(" "), class: "tricks" }));
      svg.append(svgEl("line", { x1: x(card), x2: x(card), y1: top, y2: ht - bottom, class: "cursor", "data-card-cursor": card }));
      a.lost.forEach((lost, i) => {
        if (!lost) return;
        const play = h.plays[i];
        const dot = svgEl("circle", { cx: x(i + 1), cy: y(a.ns[i + 1]), r: 3 + Math.min(lost, 3), class: "loss mark-" + Math.min(lost, 3), tabindex: 0, "data-step-to": i + 1 });
        dot.append(svgEl("title", {}, "card " + (i + 1) + ": " + play.seat + " " + pretty(play.card) + " " + a.marks[i] + " " + lostText(lost)));
        dot.addEventListener("click", () => jump(i + 1));
        dot.addEventListener("keydown", (e) => { if (e.key === "Enter") jump(i + 1); });
        svg.append(dot);
      });
      return svg;
    }

    // Names of the best card(s) a costly card should have been.
    function bestEl(index) {
      const a = current;
      if (!a || !a.lost[index] || !a.best || !a.best[index]) return null;
      const node = el("span", "best", "best " + a.best[index].map(pretty).join(" "));
      node.dataset.best = a.best[index].join(" ");
      return node;
    }

    // Each seat's accuracy over the match, drawn once the analysis is there.
    function accuracyTable() {
      const body = document.querySelector("#accuracy tbody");
      if (!body || found.status !== "ready" || !found.seats) return;
      body.replaceChildren();
      for (const seat of SEATS) {
        const t = found.seats[seat];
        if (!t) continue;
        const tr = el("tr");
        tr.dataset.seat = seat;
        const share = t.cards ? Math.round((100 * t.accurate) / t.cards) + "%" : "n/a";
        const cells = [NAMES[seat], t.bot, t.hands, t.cards, t.lost, (t.hands ? t.lost / t.hands : 0).toFixed(2),
          t.inaccuracies, t.mistakes, t.blunders, share];
        const keys = ["seat", "bot", "hands", "cards", "lost", "per-hand", "inaccuracies", "mistakes", "blunders", "accuracy"];
        cells.forEach((c, k) => {
          const td = el("td", k > 1 ? "num" : "", String(c));
          td.dataset.label = $("accuracy").tHead.rows[0].cells[k].textContent;
          td.dataset.key = keys[k];
          tr.append(td);
        });
        body.append(tr);
      }
      $("accuracy-panel").hidden = false;
    }

    return {
      set onReady(f) { onReady = f; },
      // The seat to play after `card` cards, every legal card's tricks, the card it played.
      options(hand, card) {
        const a = forHand(hand);
        const h = hands[hand - 1];
        if (!a || !a.options || card >= h.plays.length || !a.options[card]) return null;
        const values = a.options[card];
        return { seat: h.plays[card].seat, values, played: h.plays[card].card, top: Math.max(...Object.values(values)) };
      },
      show(hand, card) {
        accuracyTable();
        const h = hands[hand - 1];
        const a = forHand(hand);
        current = a;
        const status = $("analysis-status");
        const chartBox = $("analysis-chart");
        const cardLine = $("analysis-card");
        if (!status) return;
        chartBox.replaceChildren();
        cardLine.replaceChildren();
        if (found.status !== "ready") { status.textContent = found.message || ""; return; }
        if (!a) { status.textContent = "No analysis for this hand: it was not played out."; return; }
        status.textContent = "Hand " + h.number + ": " + a.par + " · double dummy from the opening lead NS " + a.ns[0] + ", taken NS " + a.tricks[0];
        chartBox.append(chart(a, h, card));
        if (card > 0) {
          const i = card - 1;
          const p = h.plays[i];
          cardLine.append(el("span", "seat-name", NAMES[p.seat]), " ", cardEl(p.card),
            ": " + sideOf(p.seat) + " could take " + a.before[i] + " before it, " + a.after[i] + " after");
          const m = markEl(h.plays, i);
          if (m) cardLine.append(", " + lostText(a.lost[i]) + " ", m);
          const best = bestEl(i);
          if (best) cardLine.append(" · ", best);
        }
        // Marks on the cards of the trick list and of the trick on the table.
        const items = document.querySelectorAll("#trick-list > li");
        items.forEach((li, t) => {
          li.querySelectorAll(".play").forEach((span, j) => {
            const m = markEl(h.plays, 4 * t + j);
            if (m) span.append(" ", m);
            const best = bestEl(4 * t + j);
            if (best) span.append(" ", best);
          });
        });
        const first = card - ((card - 1) % 4) - 1;
        for (let i = Math.max(0, first); i < card; i++) {
          const m = markEl(h.plays, i);
          if (m) document.querySelector("#trick .slot-" + h.plays[i].seat).append(m);
        }
      },
    };
  }

  // The deal diagram of a replay: every card of the deal, those played greyed where they
  // were (data-card only on the cards still held, as the live view's hands have it).
  function renderDeal(seat, dealt, gone, dd) {
    const box = $("hand-" + seat);
    box.replaceChildren();
    for (const [letter, symbol, col] of SUITS) {
      const row = el("div", "suit");
      row.append(el("span", "sym " + col, symbol));
      const held = dealt.filter((c) => c[1] === letter).sort((a, b) => RANKS.indexOf(a[0]) - RANKS.indexOf(b[0]));
      if (!held.length) row.append(el("span", "void", "—"));
      for (const card of held) {
        if (!gone.has(card)) { row.append(ddValue(cardEl(card, label(card)), card, dd)); continue; }
        const ghost = el("span", "card played", label(card));
        ghost.dataset.playedCard = card;
        ghost.title = pretty(card) + ": played";
        row.append(ghost);
      }
      box.append(row);
    }
  }

  // A legal card of the seat to play with the tricks its side takes after it, double dummy
  // (BBO's hand viewer): the best ones and the one played marked.
  function ddValue(node, card, dd) {
    if (!dd || dd.values[card] === undefined) return node;
    const value = dd.values[card];
    const best = value === dd.top;
    const tag = el("sub", "dd" + (best ? " dd-best" : "") + (card === dd.played ? " dd-played" : ""), String(value));
    tag.dataset.dd = String(value);
    node.dataset.ddCard = card;
    node.classList.add("dd-option");
    if (card === dd.played) node.classList.add("dd-played-card");
    node.title = pretty(card) + ": " + sideOf(dd.seat) + " " + value + (value === 1 ? " trick" : " tricks") + " double dummy"
      + (best ? " (best)" : " (" + (dd.top - value) + " fewer than the best)") + (card === dd.played ? "; the card played" : "");
    node.append(tag);
    return node;
  }

  // Which seat sits where: the chosen seat at the bottom, the others clockwise from its left.
  const AREAS = [["south", "s"], ["west", "w"], ["north", "n"], ["east", "e"]];
  function rotate(bottom) {
    const first = SEATS.indexOf(bottom);
    AREAS.forEach(([seatArea, slotArea], k) => {
      const seat = SEATS[(first + k) % 4];
      document.querySelector("#table .seat-" + seat).style.gridArea = seatArea;
      document.querySelector("#trick .slot-" + seat).style.gridArea = slotArea;
    });
    $("table").dataset.bottom = bottom;
  }

  // A finished match: all its events folded, then stepped through position by position.
  function replay(doc) {
    const folded = folder();
    for (const e of doc.events) folded.add(e);
    const hands = folded.match.hands;
    const params = new URLSearchParams(location.search);
    const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));
    let hand = clamp(parseInt(params.get("hand") || "1", 10) || 1, 1, hands.length);
    const current = () => hands[hand - 1];
    let card = clamp(parseInt(params.get("card") || "0", 10) || 0, 0, current().plays.length);
    // Calls shown: the whole auction unless the URL (or a step back) is inside it.
    let call = current().calls;
    if (card === 0 && params.has("call")) call = clamp(parseInt(params.get("call"), 10) || 0, 0, call);
    let timer = null;
    let shownHand = null; // the hand in the browser's history entry: a new hand, a new entry
    const state = () => current().positions[call + card];

    const board = analysisBoard(doc.match_id, hands, (k) => { card = k; call = current().calls; show(); });
    board.onReady = () => show();

    function show() {
      const h = current();
      const s = { ...state(), dd: call < h.calls ? null : board.options(hand, card) };
      renderTable(s);
      // Each trick of the list jumps to its end.
      document.querySelectorAll("#trick-list > li").forEach((li, t) => {
        const jump = el("button", "trick-jump", String(t + 1));
        jump.type = "button";
        jump.setAttribute("aria-label", "go to the end of trick " + (t + 1));
        jump.addEventListener("click", () => { card = 4 * (t + 1); call = h.calls; show(); });
        li.prepend(jump, " ");
      });
      board.show(hand, card);
      announce(s);
      const inAuction = call < h.calls;
      const where = inAuction ? "call " + call + "/" + h.calls : "card " + card + "/" + h.plays.length;
      $("position").textContent = "hand " + hand + " · " + where;
      $("hand-picker").value = String(h.number);
      const scrubber = $("scrubber");
      scrubber.max = String(h.calls + h.plays.length);
      scrubber.value = String(call + card);
      scrubber.setAttribute("aria-valuetext", where.replace("/", " of "));
      const url = new URL(location.href);
      url.searchParams.set("hand", hand);
      url.searchParams.set("card", card);
      if (inAuction) url.searchParams.set("call", call);
      else url.searchParams.delete("call");
      // One history entry per hand, so Back goes to the hand shown before, where it was left.
      if (shownHand !== null && shownHand !== hand) history.pushState(null, "", url);
      else history.replaceState(null, "", url);
      shownHand = hand;
      // The links to this deal at both tables follow the hand shown.
      document.querySelectorAll("[data-hand-link]").forEach((link) => {
        link.href = link.dataset.handLink.replace("{hand}", String(hand));
      });
    }

    const atLastStep = () => hand === hands.length && card === current().plays.length;
    const moves = {
      forward() {
        if (call < current().calls) call++;
        else if (card < current().plays.length) card++;
        else if (hand < hands.length) { hand++; card = 0; call = 0; }
      },
      back() {
        if (card > 0) card--;
        else if (call > 0) call--;
        else if (hand > 1) { hand--; card = current().plays.length; call = current().calls; }
      },
      trickForward() {
        call = current().calls;
        card = Math.min(current().plays.length, 4 * Math.floor(card / 4) + 4);
      },
      trickBack() {
        call = current().calls;
        card = Math.max(0, 4 * Math.ceil(card / 4) - 4);
      },
      start() { card = 0; call = current().calls; },
      end() { card = current().plays.length; call = current().calls; },
      nextHand() { if (hand < hands.length) { hand++; card = 0; call = current().calls; } },
      previousHand() { if (hand > 1) { hand--; card = 0; call = current().calls; } },
    };

    // Autoplay: a step every second at 1×, from 0.25× to 8×; it stops at the match's end.
    // Steps are due on a clock, not a delay after each drawing: a tick late because the page
    // was busy drawing takes every step due since, so the pace is the speed chosen. Only a
    // page that was away (a hidden tab) for more than MOST_BEHIND steps starts the clock afresh.
    const playButton = $("play");
    const MOST_BEHIND = 16;
    let clockStart = 0; // when the autoplay's clock started, in performance.now()'s ms
    let stepsTaken = 0; // since then
    const period = () => 1000 / parseFloat($("speed").value);
    function pause() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      playButton.textContent = "play";
      playButton.setAttribute("aria-label", "play");
      playButton.setAttribute("aria-pressed", "false");
    }
    function startClock() {
      clockStart = performance.now();
      stepsTaken = 0;
      if (timer !== null) clearTimeout(timer);
      timer = setTimeout(tick, period());
    }
    function tick() {
      const now = performance.now();
      let due = Math.floor((now - clockStart) / period());
      if (due - stepsTaken > MOST_BEHIND) { clockStart = now - period(); stepsTaken = 0; due = 1; }
      while (stepsTaken < due && !atLastStep()) { moves.forward(); stepsTaken++; }
      show();
      if (atLastStep()) { pause(); return; }
      timer = setTimeout(tick, Math.max(0, clockStart + (stepsTaken + 1) * period() - performance.now()));
    }
    function play() {
      if (atLastStep()) { hand = 1; card = 0; call = 0; show(); }
      playButton.textContent = "pause";
      playButton.setAttribute("aria-label", "pause");
      playButton.setAttribute("aria-pressed", "true");
      startClock();
    }
    $("speed").addEventListener("change", () => { if (timer !== null) startClock(); });
    const toggle = () => (timer === null ? play() : pause());
    playButton.addEventListener("click", toggle);

    document.querySelectorAll("[data-step]").forEach((button) => {
      button.addEventListener("click", () => { moves[button.dataset.step](); show(); });
    });
    $("hand-picker").addEventListener("change", (event) => {
      hand = parseInt(event.target.value, 10); card = 0; call = current().calls; show();
    });
    $("scrubber").addEventListener("input", (event) => {
      const at = parseInt(event.target.value, 10);
      const calls = current().calls;
      call = Math.min(at, calls);
      card = Math.max(0, at - calls);
      show();
    });
    $("rotate").addEventListener("change", (event) => rotate(event.target.value));
    // Back and Forward between the hands' history entries show the position in the address.
    window.addEventListener("popstate", () => {
      const at = new URLSearchParams(location.search);
      hand = clamp(parseInt(at.get("hand") || "1", 10) || 1, 1, hands.length);
      card = clamp(parseInt(at.get("card") || "0", 10) || 0, 0, current().plays.length);
      call = current().calls;
      if (card === 0 && at.has("call")) call = clamp(parseInt(at.get("call"), 10) || 0, 0, call);
      shownHand = hand; // this entry is the hand's: no new one
      show();
    });
    const keys = {
      ArrowRight: "forward", ArrowLeft: "back", ArrowDown: "nextHand", ArrowUp: "previousHand", Home: "start", End: "end",
    };
    document.addEventListener("keydown", (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const target = event.target;
      if (target instanceof HTMLSelectElement || target instanceof HTMLInputElement) return;
      if (event.key === " ") {
        if (target instanceof HTMLButtonElement && target !== playButton) return; // space presses it
        event.preventDefault();
        toggle();
        return;
      }
      let move = keys[event.key];
      if (event.shiftKey && event.key === "ArrowRight") move = "trickForward";
      if (event.shiftKey && event.key === "ArrowLeft") move = "trickBack";
      if (!move) return;
      event.preventDefault();
      moves[move]();
      show();
    });
    show();
  }

  // --------------------------------------------------------------- live

  // A match in progress: its events folded as they come, the newest position shown.
  function live(info) {
    const folded = folder();
    const status = $("live-status");
    function over() {
      const badge = $("live-badge");
      if (badge) { badge.textContent = "finished"; badge.classList.add("finished"); }
      const link = el("a", "", "replay it card by card");
      link.href = location.pathname;
      status.replaceChildren("the match is over: ", link);
    }
    const source = new EventSource("/matches/" + encodeURIComponent(info.match_id) + "/events");
    source.onmessage = (message) => {
      const event = JSON.parse(message.data);
      if (folded.add(event)) {
        renderTable(folded.latest());
        announce(folded.latest());
        if (folded.match.over) over();
      }
      document.body.dataset.lastSeq = String(folded.match.lastSeq);
      if (window.oddtrickOnEvent) window.oddtrickOnEvent(event);
    };
    source.addEventListener("end", () => {
      source.close();
      over();
    });
    source.onerror = () => { status.textContent = "connection lost; retrying…"; };
    source.onopen = () => { status.textContent = "following the play live"; };
  }

  // The seat page (seat.js) folds and draws the seat's events with these same functions.
  window.oddtrickViewer = { folder, renderTable, rotate, pretty, NAMES };

  const matchData = $("match-data");
  if (matchData) replay(JSON.parse(matchData.textContent));
  const liveData = $("live-data");
  if (liveData) live(JSON.parse(liveData.textContent));
})();
