#!/usr/bin/env node
// An oddtrick bot in plain Node.js, written from proto/oddtrick/v1/*.proto.
//
//   node bot.js --server HOST:PORT --name NAME --token TOKEN --seats N
//
// Any option left out is read from ODDTRICK_SERVER, ODDTRICK_NAME and
// ODDTRICK_SEATS, the token from the pipe ODDTRICK_TOKEN_FD (else
// ODDTRICK_TOKEN): how `oddtrick tournament` starts a `cmd:` entry. The .proto
// files are loaded at run time: no code generation. Each answer reports the
// bot's own time for the decision (Decision.bot_think_ms), and the referee's
// notice that the bot has too few seats open for a match is logged once.
'use strict';

const { createHash } = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const BOT_VERSION = require('./package.json').version;
const PROTO_ROOT = path.resolve(__dirname, '..', '..', 'proto');
const PROTOCOL = { name: 'oddtrick.v1', minor: 0 };

// Reconnecting (referee.proto, "How the call ends"): these codes keep the seat
// for its grace period, so reconnect with backoff and the resume token.
const RETRY_CODES = new Set([grpc.status.UNAVAILABLE, grpc.status.INTERNAL, grpc.status.UNKNOWN]);
const MAX_RETRIES = 8; // consecutive failed attempts (about 30 s, the default grace)
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 8000;

const USAGE = `usage: node bot.js --server HOST:PORT --name NAME --token TOKEN [--seats N]
  (or ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_SEATS;
  the token from the pipe ODDTRICK_TOKEN_FD, else ODDTRICK_TOKEN)`;

function log(text) {
  process.stderr.write(`${text}\n`);
}

// ---------------------------------------------------------------------------
// Command line

// The token from the pipe a tournament hands its entries (ODDTRICK_TOKEN_FD: the
// token's bytes, no newline), else ODDTRICK_TOKEN. The pipe is preferred: other
// processes of the user can read the environment.
function tokenFromEnvironment(env) {
  const fd = Number(env.ODDTRICK_TOKEN_FD);
  if (env.ODDTRICK_TOKEN_FD && Number.isInteger(fd)) {
    const token = fs.readFileSync(fd, 'utf8');
    fs.closeSync(fd);
    return token;
  }
  return env.ODDTRICK_TOKEN;
}

// Whether a revealed seed is the one committed to when the match started: the
// SHA-256 of its UTF-8 bytes, in lowercase hex.
function seedMatches(seed, commitment) {
  return createHash('sha256').update(seed, 'utf8').digest('hex') === commitment;
}

function parseOptions(argv, env) {
  const flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      return { help: true };
    }
    const match = /^--(server|name|token|seats)(?:=(.*))?$/.exec(arg);
    if (!match) {
      throw new Error(`unknown argument ${JSON.stringify(arg)}`);
    }
    const value = match[2] !== undefined ? match[2] : argv[++i];
    if (value === undefined) {
      throw new Error(`--${match[1]} needs a value`);
    }
    flags[match[1]] = value;
  }
  const options = {
    server: flags.server ?? env.ODDTRICK_SERVER,
    name: flags.name ?? env.ODDTRICK_NAME,
    token: flags.token ?? tokenFromEnvironment(env),
    seats: flags.seats ?? env.ODDTRICK_SEATS ?? '1',
  };
  for (const key of ['server', 'name', 'token']) {
    if (!options[key]) {
      throw new Error(`no ${key}: give --${key} or ODDTRICK_${key.toUpperCase()}`);
    }
  }
  if (!/^[1-9][0-9]*$/.test(String(options.seats))) {
    throw new Error(`--seats must be a positive integer, not ${JSON.stringify(options.seats)}`);
  }
  options.seats = Number(options.seats);
  return options;
}

// ---------------------------------------------------------------------------
// The protocol

function loadProtocol() {
  const definition = protoLoader.loadSync('oddtrick/v1/referee.proto', {
    includeDirs: [PROTO_ROOT],
    keepCase: true, // field names as in the .proto: bot_name, request_id, pass_call...
    enums: Number, // rank numbers are ranks, so numbers compare (cards.proto)
    longs: String, // uint64 request_id and sequence, sent back as they came
    defaults: true, // absent messages read as null, so presence is a plain test
    oneofs: true, // msg.kind names the oneof member that is set
  });
  // Enum values by name, taken from the .proto itself: E.Suit.SUIT_CLUBS.
  const enums = {};
  for (const [fullName, entry] of Object.entries(definition)) {
    if (entry.format && entry.format.includes('EnumDescriptorProto')) {
      const values = {};
      for (const value of entry.type.value) {
        values[value.name] = value.number;
        values[value.number] = value.name;
      }
      enums[fullName.replace(/^oddtrick\.v1\./, '')] = values;
    }
  }
  const v1 = grpc.loadPackageDefinition(definition).oddtrick.v1;
  return { Referee: v1.Referee, E: enums };
}

const { Referee, E } = loadProtocol();

// ---------------------------------------------------------------------------
// Cards

const RANK_LETTERS = { 10: 'T', 11: 'J', 12: 'Q', 13: 'K', 14: 'A' };

function cardText(card) {
  const rank = RANK_LETTERS[card.rank] ?? String(card.rank);
  const suit = (E.Suit[card.suit] ?? '?').replace('SUIT_', '').charAt(0);
  return rank + suit;
}

// Denominations 1-4 name the suits 1-4 (DENOMINATION_HEARTS is SUIT_HEARTS);
// no trumps and "not known yet" have no trump suit: 0.
function trumpSuit(denomination) {
  const name = E.Denomination[denomination];
  if (typeof name !== 'string') return 0;
  return E.Suit[name.replace('DENOMINATION_', 'SUIT_')] ?? 0;
}

function denominationOf(suit) {
  return E.Denomination[String(E.Suit[suit]).replace('SUIT_', 'DENOMINATION_')];
}

// Seats count clockwise from North = 1; partners sit two apart.
function partnerOf(seat) {
  return ((seat + 1) % 4) + 1;
}

// ---------------------------------------------------------------------------
// The policy: decides from request.hand and request.legal_actions alone.

// The card of a trick in progress that wins it so far.
function winningCard(plays, trumps) {
  let best = plays[0];
  for (const play of plays.slice(1)) {
    if (beats(play.card, best.card, trumps)) best = play;
  }
  return best;
}

// Whether `card` beats `best`, the card now winning the trick.
function beats(card, best, trumps) {
  if (trumps && card.suit === trumps && best.suit !== trumps) return true;
  return card.suit === best.suit && card.rank > best.rank;
}

// Lowest first: non-trumps before trumps, then by rank.
function cheapest(cards, trumps) {
  const cost = (card) => (trumps && card.suit === trumps ? 100 : 0) + card.rank;
  return cards.reduce((low, card) => (cost(card) < cost(low) ? card : low));
}

function chooseCard(request) {
  const cards = request.legal_actions.filter((action) => action.card).map((action) => action.card);
  if (cards.length === 0) return null;
  const hand = request.hand ?? {};
  const trumps = trumpSuit(hand.trumps);
  const plays = hand.current_trick?.cards ?? [];
  if (plays.length === 0) {
    return { card: cheapest(cards, trumps), comment: 'lead low' };
  }
  const best = winningCard(plays, trumps);
  if (best.seat === partnerOf(request.seat)) {
    return { card: cheapest(cards, trumps), comment: 'partner winning' };
  }
  const winners = cards.filter((card) => beats(card, best.card, trumps));
  if (winners.length > 0) {
    return { card: cheapest(winners, trumps), comment: `beat ${cardText(best.card)}` };
  }
  return { card: cheapest(cards, trumps), comment: 'cannot win' };
}

function chooseCall(request) {
  const calls = request.legal_actions.filter((action) => action.call).map((action) => action.call);
  if (calls.length === 0) return null;
  const pass = calls.find((call) => call.pass_call) ?? null;
  const hand = request.hand ?? {};
  // Do not bid over partner's bid.
  let highestBidder = 0;
  for (const made of hand.auction ?? []) {
    if (made.call?.bid) highestBidder = made.seat;
  }
  if (highestBidder && highestBidder === partnerOf(request.seat)) {
    return { call: pass, comment: 'partner holds the bid' };
  }
  // A suit of 5+ cards headed by the ace, longest first.
  const held = new Map();
  for (const card of hand.cards ?? []) {
    const entry = held.get(card.suit) ?? { suit: card.suit, count: 0, ace: false };
    entry.count += 1;
    entry.ace ||= card.rank === E.Rank.RANK_ACE;
    held.set(card.suit, entry);
  }
  const suits = [...held.values()]
    .filter((entry) => entry.count >= 5 && entry.ace)
    .sort((a, b) => b.count - a.count || b.suit - a.suit);
  for (const { suit, count } of suits) {
    const denomination = denominationOf(suit);
    const bids = calls
      .filter((call) => call.bid && call.bid.denomination === denomination && call.bid.level <= 8)
      .sort((a, b) => a.bid.level - b.bid.level);
    if (bids.length > 0) {
      return { call: bids[0], comment: `${count} cards with the ace` };
    }
  }
  return { call: pass, comment: 'pass' };
}

// A clean Action for the wire: exactly one member set.
function wireAction(action) {
  if (action.card) return { card: { suit: action.card.suit, rank: action.card.rank } };
  if (action.call?.bid) {
    return { call: { bid: { level: action.call.bid.level, denomination: action.call.bid.denomination } } };
  }
  if (action.call?.pass_call) return { call: { pass_call: {} } };
  if (action.call?.double_call) return { call: { double_call: {} } };
  return action; // a kind this bot does not know: send it back as it came
}

function decide(request) {
  let choice = null;
  try {
    if (request.kind === E.DecisionKind.DECISION_KIND_CARD) {
      const pick = chooseCard(request);
      if (pick?.card) choice = { action: { card: pick.card }, comment: pick.comment };
    } else if (request.kind === E.DecisionKind.DECISION_KIND_CALL) {
      const pick = chooseCall(request);
      if (pick?.call) choice = { action: { call: pick.call }, comment: pick.comment };
    }
  } catch (error) {
    log(`policy failed on request ${request.request_id}: ${error.stack}`);
  }
  // An unknown decision kind (or a policy failure): any legal action will do.
  return choice ?? { action: request.legal_actions[0], comment: 'first legal action' };
}

// ---------------------------------------------------------------------------
// One session: one Referee.Play stream, resumed after a drop.

const matchesOver = new Set(); // match ids whose end was printed
const noticesSaid = new Set(); // the referee's Waiting notices printed: every idle stream gets one

class Session {
  constructor(client, options, index, onDone) {
    this.client = client;
    this.options = options;
    this.label = options.seats > 1 ? `${options.name}#${index}` : options.name;
    this.onDone = onDone;
    this.call = null;
    this.resumeToken = null; // from the Welcome
    this.retries = 0;
    this.finished = false;
    this.resetState();
  }

  resetState() {
    this.lastSequence = 0n;
    this.matchId = null;
    this.commitment = '';
    this.openRequest = null;
    this.retried = new Set(); // request ids answered again after a refusal
  }

  start() {
    const call = this.client.Play(); // no deadline: the call lasts as long as the session
    this.call = call;
    this.welcomed = false;
    this.wantResume = false;
    call.on('data', (message) => {
      if (this.call === call) this.onMessage(message);
    });
    call.on('error', () => {}); // the 'status' event below says how the call ended
    call.on('status', (status) => {
      // Let messages still buffered in the stream be read first.
      setImmediate(() => {
        if (this.call === call) this.onEnd(status);
      });
    });
    const hello = {
      bot_name: this.options.name,
      bot_version: BOT_VERSION,
      token: this.options.token,
      protocol: PROTOCOL,
      games: [E.GameKind.GAME_KIND_CLASSIC, E.GameKind.GAME_KIND_CONTRACT],
      max_seats: this.options.seats,
    };
    if (this.resumeToken !== null) hello.resume_token = this.resumeToken;
    this.send({ hello });
  }

  send(message) {
    if (this.call && !this.call.writableEnded && !this.call.destroyed) this.call.write(message);
  }

  stop() {
    this.finished = true;
    clearTimeout(this.timer);
    if (this.call) this.call.cancel();
  }

  onMessage(message) {
    const arrived = performance.now(); // the bot's own time for a request starts here
    switch (message.kind) {
      case 'welcome':
        this.onWelcome(message.welcome);
        break;
      case 'update':
        this.onUpdate(message.update, arrived);
        break;
      case 'refusal':
        this.onRefusal(message.refusal);
        break;
      case 'resync':
        this.onResync(message.resync, arrived);
        break;
      case 'waiting':
        this.onWaiting(message.waiting);
        break;
      default: // a kind added later: ignore it
        break;
    }
  }

  // Too few streams open for a match here (start the bot with more --seats):
  // nothing to answer; said once, though every idle stream is told.
  onWaiting(waiting) {
    if (!noticesSaid.has(waiting.message)) {
      noticesSaid.add(waiting.message);
      log(`${this.options.name}: ${waiting.message}`);
    }
  }

  onWelcome(welcome) {
    this.welcomed = true;
    this.retries = 0;
    if (!welcome.resumed) this.resetState();
    this.resumeToken = welcome.resume_token;
    log(`${this.label}: ${welcome.resumed ? 'resumed' : 'welcome to'} session ${welcome.session_id}`);
  }

  onUpdate(update, arrived) {
    for (const event of update.events) {
      const sequence = BigInt(event.sequence); // per session: 1, 2, 3... across matches
      if (sequence !== this.lastSequence + 1n) {
        log(`${this.label}: event ${sequence} after ${this.lastSequence}: events lost, resuming`);
        this.wantResume = true;
        this.call.cancel();
        return;
      }
      this.lastSequence = sequence;
      this.onEvent(event);
    }
    if (update.request) this.answer(update.request, arrived);
  }

  onEvent(event) {
    switch (event.kind) {
      case 'match_started':
        this.matchId = event.match_started.match_id;
        this.commitment = event.match_started.seed_commitment;
        break;
      case 'match_ended': {
        // An empty seed is withheld for now (one play of a duplicate pair).
        const seed = event.match_ended.seed;
        if (seed && !seedMatches(seed, this.commitment)) {
          log(`${this.label}: match ${this.matchId}: the revealed seed does not match its commitment`);
        }
        // Both seats of a partnership may be on this process: one line per match.
        if (!matchesOver.has(this.matchId)) {
          matchesOver.add(this.matchId);
          if (event.match_ended.outcome === E.MatchOutcome.MATCH_OUTCOME_ABORTED) {
            // Stopped early (shutdown, an aborted table): no result, only why.
            log(`match ${this.matchId} stopped by the referee: ${event.match_ended.stop_reason ?? ''}`);
          } else {
            const total = event.match_ended.score?.total ?? {};
            log(`match ${this.matchId} over: NS ${total.north_south ?? 0} EW ${total.east_west ?? 0}`);
          }
        }
        this.matchId = null;
        break;
      }
      default: // every decision is made from request.hand, so nothing else is tracked
        break;
    }
  }

  onResync(resync, arrived) {
    this.lastSequence = BigInt(resync.last_sequence);
    this.matchId = resync.match ? resync.match.match_id : null;
    this.commitment = resync.match ? resync.match.seed_commitment : '';
    this.openRequest = null;
    if (resync.request) this.answer(resync.request, arrived);
  }

  // `arrived`: when the request's message came, on the monotonic clock. The answer
  // reports the bot's own time from then (Decision.bot_think_ms), so that the referee
  // can tell thinking from lag.
  answer(request, arrived) {
    this.openRequest = request;
    const { action, comment } = decide(request);
    const bot_think_ms = Math.round(performance.now() - arrived);
    this.send({ decision: { request_id: request.request_id, action: wireAction(action), comment, bot_think_ms } });
  }

  onRefusal(refusal) {
    const reason = E.RefusalReason[refusal.reason] ?? `reason ${refusal.reason}`;
    const refused = refusal.action ? ` (${JSON.stringify(wireAction(refusal.action))})` : '';
    log(
      `${this.label}: refusal of request ${refusal.request_id}: ${reason}: ${refusal.message}${refused}; ` +
        `${refusal.attempts_left} attempts and ${refusal.time_left_ms} ms left`,
    );
    // The request stays open: answer once more with its first legal action.
    const request = this.openRequest;
    if (
      request &&
      request.request_id === refusal.request_id &&
      refusal.reason !== E.RefusalReason.REFUSAL_REASON_UNKNOWN_REQUEST &&
      refusal.attempts_left > 0 &&
      refusal.time_left_ms > 0 &&
      !this.retried.has(request.request_id)
    ) {
      this.retried.add(request.request_id);
      const action = wireAction(request.legal_actions[0]);
      this.send({ decision: { request_id: request.request_id, action, comment: 'retry after refusal' } });
    }
  }

  onEnd(status) {
    this.call = null;
    if (this.finished) return;
    const code = status.code;
    const name = grpc.status[code] ?? String(code);
    if (code === grpc.status.OK) {
      this.finish(true);
      return;
    }
    let retry = RETRY_CODES.has(code) || (code === grpc.status.CANCELLED && this.wantResume);
    if (code === grpc.status.NOT_FOUND && this.resumeToken !== null) {
      log(`${this.label}: resume token refused (${status.details}); starting a new session`);
      this.resumeToken = null;
      this.resetState();
      retry = true;
    } else if (code === grpc.status.RESOURCE_EXHAUSTED && !this.welcomed) {
      retry = true; // too many sessions for this token at the moment
    }
    if (!retry || this.retries >= MAX_RETRIES) {
      log(`${this.label}: stream ended with ${name}: ${status.details}`);
      this.finish(false);
      return;
    }
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** this.retries) * (0.5 + Math.random() / 2);
    this.retries += 1;
    log(`${this.label}: stream ended with ${name} (${status.details}); reconnecting in ${Math.round(delay)} ms`);
    this.timer = setTimeout(() => this.start(), delay);
  }

  finish(ok) {
    this.finished = true;
    this.onDone(ok);
  }
}

// ---------------------------------------------------------------------------

function main() {
  let options;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (error) {
    log(`node bot: ${error.message}\n${USAGE}`);
    process.exit(2);
  }
  if (options.help) {
    log(USAGE);
    process.exit(0);
  }
  const client = new Referee(options.server, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 20000, // notice a dead connection (referee.proto, service Referee)
    'grpc.keepalive_timeout_ms': 10000,
  });
  const sessions = [];
  let pending = options.seats;
  let allOk = true;
  const done = (ok) => {
    allOk &&= ok;
    pending -= 1;
    if (pending === 0) {
      client.close();
      process.exit(allOk ? 0 : 1);
    }
  };
  for (let index = 0; index < options.seats; index++) {
    sessions.push(new Session(client, options, index, done));
  }
  const shutdown = (signal) => {
    log(`${options.name}: ${signal}, stopping`);
    for (const session of sessions) session.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  log(`${options.name}: connecting ${options.seats} stream(s) to ${options.server}`);
  for (const session of sessions) session.start();
}

if (require.main === module) {
  main();
}

module.exports = { parseOptions, chooseCard, chooseCall, decide, wireAction, E };
