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
        const faulted = faultsOf(played).length > 0;
        const extra = (state.winner === seat ? "won" : "") + (faulted ? " fault" : "");
        const node = cardEl(played.card, undefined, extra.trim());
        if (faulted) node.title = faultsText(played);
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
  function analysisBoard(data, jump) {
    const box = $("analysis-data");
    let found = box ? JSON.parse(box.textContent) : { status: "none", message: "" };
    let onReady = () => {};
    let current = null; // the shown hand's analysis
    const forHand = (hand) => (found.status === "ready" ? found.hands[String(data.hands[hand - 1].number)] : undefined);

    function poll() {
      fetch("/matches/" + encodeURIComponent(data.match_id) + "/analysis.json", { cache: "no-store" })
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

    return {
      set onReady(f) { onReady = f; },
      show(hand, card) {
        const h = data.hands[hand - 1];
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
        }
        // Marks on the cards of the trick list and of the trick on the table.
        const items = document.querySelectorAll("#trick-list > li");
        items.forEach((li, t) => {
          li.querySelectorAll(".play").forEach((span, j) => {
            const m = markEl(h.plays, 4 * t + j);
            if (m) span.append(" ", m);
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
  function renderDeal(seat, dealt, gone) {
    const box = $("hand-" + seat);
    box.replaceChildren();
    for (const [letter, symbol, col] of SUITS) {
      const row = el("div", "suit");
      row.append(el("span", "sym " + col, symbol));
      const held = dealt.filter((c) => c[1] === letter).sort((a, b) => RANKS.indexOf(a[0]) - RANKS.indexOf(b[0]));
      if (!held.length) row.append(el("span", "void", "—"));
      for (const card of held) {
        if (!gone.has(card)) { row.append(cardEl(card, label(card))); continue; }
        const ghost = el("span", "card played", label(card));
        ghost.dataset.playedCard = card;
        ghost.title = pretty(card) + ": played";
        row.append(ghost);
      }
      box.append(row);
    }
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

  function replay(data) {
    const params = new URLSearchParams(location.search);
    const clamp = (v, lo, hi) => Math.max(lo, Math.min(hi, v));
    let hand = clamp(parseInt(params.get("hand") || "1", 10) || 1, 1, data.hands.length);
    let card = clamp(parseInt(params.get("card") || "0", 10) || 0, 0, data.hands[hand - 1].plays.length);
    // Calls shown: the whole auction unless the URL (or a step back) is inside it.
    const current = () => data.hands[hand - 1];
    let call = current().calls.length;
    if (card === 0 && params.has("call")) call = clamp(parseInt(params.get("call"), 10) || 0, 0, call);
    let timer = null;

    function state() {
      const h = current();
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
      const calls = h.calls.slice(0, call);
      const comments = calls.filter((c) => c.comment).map((c) => ({ where: "auction", seat: c.seat, action: c.call, comment: c.comment }))
        .concat(plays.filter((p) => p.comment).map((p) => ({ where: "trick " + p.trick, seat: p.seat, action: pretty(p.card), comment: p.comment })));
      let toPlay = card < h.plays.length ? h.plays[card].seat : null;
      if (call < h.calls.length) toPlay = h.calls[call].seat;
      return {
        title: "Hand " + h.number + " · dealer " + h.dealer + " · " + h.trumps,
        hands, counts, trick, done, gone,
        winner: last ? last.winner : null,
        tricks: last ? last.tricks : [0, 0],
        calls,
        result: atEnd ? h.result + (h.game ? " · " + h.game : "") + (hand === data.hands.length && data.result ? " · " + data.result : "") : "",
        score: scoreText(atEnd ? h.scores_after : h.scores_before),
        toPlay,
        last: last || null,
        comments,
      };
    }

    const board = analysisBoard(data, (k) => { card = k; call = current().calls.length; show(); });
    board.onReady = () => show();

    function show() {
      const h = current();
      const s = state();
      renderTable(s);
      for (const seat of SEATS) renderDeal(seat, h.deal[seat], s.gone);
      // Each trick of the list jumps to its end.
      document.querySelectorAll("#trick-list > li").forEach((li, t) => {
        const jump = el("button", "trick-jump", String(t + 1));
        jump.type = "button";
        jump.setAttribute("aria-label", "go to the end of trick " + (t + 1));
        jump.addEventListener("click", () => { card = 4 * (t + 1); call = h.calls.length; show(); });
        li.prepend(jump, " ");
      });
      board.show(hand, card);
      announce(h, s);
      const inAuction = call < h.calls.length;
      const where = inAuction ? "call " + call + "/" + h.calls.length : "card " + card + "/" + h.plays.length;
      $("position").textContent = "hand " + hand + " · " + where;
      $("hand-picker").value = String(hand);
      const scrubber = $("scrubber");
      scrubber.max = String(h.calls.length + h.plays.length);
      scrubber.value = String(call + card);
      scrubber.setAttribute("aria-valuetext", where.replace("/", " of "));
      const url = new URL(location.href);
      url.searchParams.set("hand", hand);
      url.searchParams.set("card", card);
      if (inAuction) url.searchParams.set("call", call);
      else url.searchParams.delete("call");
      history.replaceState(null, "", url);
      // The links to this deal at both tables follow the hand shown.
      document.querySelectorAll("[data-hand-link]").forEach((link) => {
        link.href = link.dataset.handLink.replace("{hand}", String(hand));
      });
    }

    // What a screen reader says at each step: the card or call just made, tricks and score.
    function announce(h, s) {
      const box = $("announce");
      if (!box) return;
      let what = "hand " + h.number + ", the auction";
      if (s.last) what = NAMES[s.last.seat] + " played " + pretty(s.last.card);
      else if (s.calls.length) what = NAMES[s.calls[s.calls.length - 1].seat] + " called " + s.calls[s.calls.length - 1].call;
      const won = s.trick.length === 4 && s.winner ? "; " + NAMES[s.winner] + " won the trick" : "";
      box.textContent = what + won + ". Tricks NS " + s.tricks[0] + ", EW " + s.tricks[1] + ". " + (s.result ? s.result + ". " : "") + s.score;
    }

    const atLastStep = () => hand === data.hands.length && card === current().plays.length;
    const moves = {
      forward() {
        if (call < current().calls.length) call++;
        else if (card < current().plays.length) card++;
        else if (hand < data.hands.length) { hand++; card = 0; call = 0; }
      },
      back() {
        if (card > 0) card--;
        else if (call > 0) call--;
        else if (hand > 1) { hand--; card = current().plays.length; call = current().calls.length; }
      },
      trickForward() {
        call = current().calls.length;
        card = Math.min(current().plays.length, 4 * Math.floor(card / 4) + 4);
      },
      trickBack() {
        call = current().calls.length;
        card = Math.max(0, 4 * Math.ceil(card / 4) - 4);
      },
      start() { card = 0; call = current().calls.length; },
      end() { card = current().plays.length; call = current().calls.length; },
      nextHand() { if (hand < data.hands.length) { hand++; card = 0; call = current().calls.length; } },
      previousHand() { if (hand > 1) { hand--; card = 0; call = current().calls.length; } },
    };

    // Autoplay: a step every second at 1×, from 0.25× to 8×; it stops at the match's end.
    const playButton = $("play");
    function pause() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      playButton.textContent = "play";
      playButton.setAttribute("aria-label", "play");
      playButton.setAttribute("aria-pressed", "false");
    }
    function tick() {
      if (atLastStep()) { pause(); return; }
      moves.forward();
      show();
      timer = setTimeout(tick, 1000 / parseFloat($("speed").value));
    }
    function play() {
      if (atLastStep()) { hand = 1; card = 0; call = 0; show(); }
      playButton.textContent = "pause";
      playButton.setAttribute("aria-label", "pause");
      playButton.setAttribute("aria-pressed", "true");
      timer = setTimeout(tick, 1000 / parseFloat($("speed").value));
    }
    const toggle = () => (timer === null ? play() : pause());
    playButton.addEventListener("click", toggle);

    document.querySelectorAll("[data-step]").forEach((button) => {
      button.addEventListener("click", () => { moves[button.dataset.step](); show(); });
    });
    $("hand-picker").addEventListener("change", (event) => {
      hand = parseInt(event.target.value, 10); card = 0; call = current().calls.length; show();
    });
    $("scrubber").addEventListener("input", (event) => {
      const at = parseInt(event.target.value, 10);
      const calls = current().calls.length;
      call = Math.min(at, calls);
      card = Math.max(0, at - calls);
      show();
    });
    $("rotate").addEventListener("change", (event) => rotate(event.target.value));
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

  function live(info) {
    const s = {
      title: "waiting for the first hand", hands: {}, counts: {}, trick: [], done: [], winner: null,
      tricks: [0, 0], calls: [], result: "", score: scoreText([0, 0]), toPlay: null,
      header: "", lastSeq: 0, classic: false, said: "",
    };
    // What a screen reader says as the play goes: the card or call just made, whose turn it is.
    const turn = () => (s.toPlay ? NAMES[s.toPlay] + (s.auction ? " to call" : " to play") : "");
    const say = (what) => { s.said = [what, turn()].filter((t) => t).join("; "); };
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
          s.auction = !s.classic;
          say(s.header);
          break;
        }
        case "call_made":
          s.calls.push({ seat: e.seat, call: e.call });
          s.toPlay = SEATS[(SEATS.indexOf(e.seat) + 1) % 4];
          say(NAMES[e.seat] + " called " + e.call);
          break;
        case "auction_ended":
          s.title = s.header.replace(/auction$/, e.contract || "thrown in: all four passed");
          s.toPlay = e.leader; // the declarer's left leads (null: thrown in, nobody plays)
          s.auction = false;
          say(e.contract ? "contract " + e.contract : "thrown in: all four passed");
          break;
        case "card_played":
          if (s.trick.length === 4) { s.trick = []; s.winner = null; }
          s.trick.push({ seat: e.seat, card: e.card });
          s.counts[e.seat]--;
          if (s.hands[e.seat]) s.hands[e.seat] = s.hands[e.seat].filter((c) => c !== e.card);
          s.toPlay = SEATS[(SEATS.indexOf(e.seat) + 1) % 4];
          say(NAMES[e.seat] + " played " + pretty(e.card));
          break;
        case "trick_completed":
          s.winner = e.winner; s.tricks = e.tricks;
          s.done.push({ plays: s.trick.slice(), winner: e.winner });
          s.toPlay = e.winner;
          say(s.said.split("; ")[0] + "; " + NAMES[e.winner] + " won the trick. Tricks NS " + e.tricks[0] + ", EW " + e.tricks[1]);
          break;
        case "hand_ended":
          s.result = e.result; s.score = scoreText(e.scores); s.toPlay = null;
          say(e.result + ". " + s.score);
          // The four hands as dealt, shown until the next hand is dealt (none if thrown in).
          for (const seat of SEATS) if (e.hands[seat]) s.hands[seat] = e.hands[seat].slice();
          break;
        case "game_ended":
          s.result += " · " + e.text;
          break;
        case "match_ended":
          s.result += " · " + e.text;
          s.said = s.result;
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
      const announce = $("announce");
      if (announce.textContent !== s.said) announce.textContent = s.said;
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
