// A starter oddtrick bot in TypeScript: copy it and change choose().
//
// It plays Classic Whist and Contract Whist with a simple legal strategy,
// opens one Referee.Play stream per seat, resumes a dropped stream (or one
// whose event numbers skip) with its resume token, checks each match's revealed
// seed against its commitment, logs one line per match and stops cleanly on
// SIGINT/SIGTERM. It reports its own time for each decision
// (Decision.bot_think_ms) and logs the referee's notice when it has too few
// seats open for a match.
//
//   node dist/bot.js [--server HOST:PORT] [--name NAME] [--token TOKEN] [--seats N]
//
// Options left out come from ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_SEATS and
// the token from the pipe ODDTRICK_TOKEN_FD (else ODDTRICK_TOKEN): how
// `oddtrick tournament --bot NAME=cmd:...` starts a bot.
// The types in src/gen are generated from ../../proto (`npm run generate`).
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

import type { ProtoGrpcType } from './gen/referee';
import type { Action } from './gen/oddtrick/v1/Action';
import type { Card__Output as Card } from './gen/oddtrick/v1/Card';
import type { DecisionRequest__Output as DecisionRequest } from './gen/oddtrick/v1/DecisionRequest';
import type { BotMessage } from './gen/oddtrick/v1/BotMessage';
import type { RefereeMessage__Output as RefereeMessage } from './gen/oddtrick/v1/RefereeMessage';
import type { RefereeClient } from './gen/oddtrick/v1/Referee';
import { DecisionKind } from './gen/oddtrick/v1/DecisionKind';
import { GameKind } from './gen/oddtrick/v1/GameKind';
import { MatchOutcome } from './gen/oddtrick/v1/MatchOutcome';
import { RefusalReason } from './gen/oddtrick/v1/RefusalReason';

const VERSION = '0.1.0';

function log(text: string): void {
  process.stderr.write(`${text}\n`);
}

// The command line, with the ODDTRICK_* environment as defaults.
interface Options {
  server: string;
  name: string;
  token: string;
  seats: number;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: { server: { type: 'string' }, name: { type: 'string' }, token: { type: 'string' }, seats: { type: 'string' } },
  });
  const env = process.env;
  const server = values.server ?? env.ODDTRICK_SERVER;
  const name = values.name ?? env.ODDTRICK_NAME;
  const token = values.token ?? tokenFromEnvironment();
  const seats = Number(values.seats ?? env.ODDTRICK_SEATS ?? '1');
  if (!server || !name || !token) {
    throw new Error('give --server, --name and --token (or ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_SEATS; the token from the pipe ODDTRICK_TOKEN_FD, else ODDTRICK_TOKEN)');
  }
  if (!Number.isInteger(seats) || seats < 1) throw new Error('--seats must be a positive integer');
  return { server, name, token, seats };
}

// The token from the pipe a tournament hands its entries (ODDTRICK_TOKEN_FD: the
// token's bytes, no newline), else ODDTRICK_TOKEN. The pipe is preferred: other
// processes of the user can read the environment.
function tokenFromEnvironment(): string | undefined {
  const fd = Number(process.env.ODDTRICK_TOKEN_FD ?? '');
  if (process.env.ODDTRICK_TOKEN_FD && Number.isInteger(fd)) {
    const token = fs.readFileSync(fd, 'utf8');
    fs.closeSync(fd);
    return token;
  }
  return process.env.ODDTRICK_TOKEN;
}

// Whether a revealed seed is the one committed to when the match started: the
// SHA-256 of its UTF-8 bytes, in lowercase hex.
function seedMatches(seed: string, commitment: string): boolean {
  return createHash('sha256').update(seed, 'utf8').digest('hex') === commitment;
}

// ---------------------------------------------------------------------------
// Strategy: decides from the request alone (its hand state and legal actions).

// One of request.legal_actions; any of them is accepted.
function choose(request: DecisionRequest): Action {
  const legal = request.legal_actions;
  if (request.kind === DecisionKind.DECISION_KIND_CALL) return openingBid(request) ?? legal[0]; // pass is listed first
  if (request.kind === DecisionKind.DECISION_KIND_CARD) return chooseCard(request);
  return legal[0]; // a decision kind this bot does not know: any legal action
}

// The cheapest bid in a suit of five or more cards when nobody has bid yet.
function openingBid(request: DecisionRequest): Action | undefined {
  const hand = request.hand;
  if (!hand || hand.auction.some((made) => made.call?.bid)) return undefined;
  const count = new Map<number, number>();
  for (const card of hand.cards) count.set(card.suit, (count.get(card.suit) ?? 0) + 1);
  // Bids come cheapest first; denominations 1-4 are the suits 1-4.
  return request.legal_actions.find((action) => action.call?.bid && (count.get(action.call.bid.denomination) ?? 0) >= 5);
}

// The cheapest card that wins the trick so far, else the lowest card.
function chooseCard(request: DecisionRequest): Action {
  const trumps = request.hand?.trumps ?? 0; // no trumps (5) matches no suit
  let winner: Card | null = null;
  for (const played of request.hand?.current_trick?.cards ?? []) {
    if (played.card && (!winner || beats(played.card, winner, trumps))) winner = played.card;
  }
  const cards = request.legal_actions.filter((action) => action.card);
  const byRank = (a: typeof cards[number], b: typeof cards[number]) => a.card!.rank - b.card!.rank;
  const winning = cards.filter((action) => winner && beats(action.card!, winner, trumps)).sort(byRank);
  return winning[0] ?? cards.sort(byRank)[0] ?? request.legal_actions[0];
}

// Whether card beats best, the card winning the trick so far.
function beats(card: Card, best: Card, trumps: number): boolean {
  return card.suit === best.suit ? card.rank > best.rank : card.suit === trumps;
}

// An Action for the wire: only the member that is set (the loader fills the
// others with null, and an Action must have exactly one).
function wire(action: Action): Action {
  return action.card ? { card: action.card } : { call: action.call };
}

// ---------------------------------------------------------------------------
// Sessions: one Referee.Play stream per seat, resumed after a drop.

const RETRY = new Set([grpc.status.UNAVAILABLE, grpc.status.INTERNAL, grpc.status.UNKNOWN, grpc.status.CANCELLED]);
const reported = new Set<string>(); // matches already logged: once per process
const told = new Set<string>(); // the referee's Waiting notices already logged: every idle stream gets one

class Seat {
  private resumeToken: string | undefined; // from the Welcome; presented again to resume
  private failures = 0;
  private call: grpc.ClientDuplexStream<BotMessage, RefereeMessage> | null = null;
  private stopped = false;
  private lastSequence = 0n; // the last Event.sequence seen: the next must be one more
  private resuming = false; // this side closed the stream after a gap: resume at once

  constructor(
    private readonly client: RefereeClient,
    private readonly options: Options,
    private readonly done: (ok: boolean) => void,
  ) {}

  // One stream: Hello, then an answer to every request.
  start(): void {
    const call = this.client.Play(); // no deadline: the call lasts as long as the session
    this.call = call;
    let matchId = '';
    let commitment = '';
    let closed = false; // closed here (a gap): whatever still arrives is not read
    let open: DecisionRequest | null = null; // the request answered last, for a retry
    // With `arrived` (when the request's message came, on the monotonic clock), the
    // answer reports the bot's own time, Decision.bot_think_ms, so that the referee can
    // tell thinking from lag; a retry after a refusal has no time of its own.
    const answer = (request: DecisionRequest, action: Action, arrived?: number) => {
      open = request;
      const thought = arrived === undefined ? {} : { bot_think_ms: Math.round(performance.now() - arrived) };
      call.write({ decision: { request_id: request.request_id, action: wire(action), ...thought } });
    };
    call.on('data', (message: RefereeMessage) => {
      if (closed) return;
      const arrived = performance.now(); // the bot's own time for a request starts here
      switch (message.kind) {
        case 'welcome':
          this.failures = 0;
          this.resumeToken = message.welcome!.resume_token;
          if (!message.welcome!.resumed) this.lastSequence = 0n; // a new session counts from 1
          break;
        case 'update':
          for (const event of message.update!.events) {
            // Events first, in order. Others (and kinds added later) need no
            // tracking: every request carries the whole hand.
            const sequence = BigInt(event.sequence);
            if (sequence !== this.lastSequence + 1n) {
              log(`${this.options.name}: event ${sequence} came after ${this.lastSequence}: events were lost; resuming`);
              closed = this.resuming = true;
              call.cancel();
              return;
            }
            this.lastSequence = sequence;
            if (event.match_started) {
              matchId = event.match_started.match_id;
              commitment = event.match_started.seed_commitment;
            }
            // An empty seed is withheld for now (one play of a duplicate pair).
            const seed = event.match_ended?.seed;
            if (seed && !seedMatches(seed, commitment)) {
              log(`${this.options.name}: match ${matchId}: the revealed seed does not match its commitment`);
            }
            if (event.match_ended && !reported.has(matchId)) {
              reported.add(matchId);
              if (event.match_ended.outcome === MatchOutcome.MATCH_OUTCOME_ABORTED) {
                // Stopped early (shutdown, an aborted table): no result, only why.
                log(`match ${matchId} stopped by the referee: ${event.match_ended.stop_reason}`);
              } else {
                const total = event.match_ended.score?.total;
                log(`match ${matchId} over: NS ${total?.north_south ?? 0} EW ${total?.east_west ?? 0}`);
              }
            }
          }
          if (message.update!.request) answer(message.update!.request, choose(message.update!.request), arrived);
          break;
        case 'resync': // a resumed session: the snapshot replaces what we knew
          matchId = message.resync!.match?.match_id ?? '';
          commitment = message.resync!.match?.seed_commitment ?? '';
          this.lastSequence = BigInt(message.resync!.last_sequence);
          if (message.resync!.request) answer(message.resync!.request, choose(message.resync!.request), arrived);
          break;
        case 'refusal': {
          // The request stays open unless its id was unknown: answer once
          // more with its first legal action while attempts are left.
          const refusal = message.refusal!;
          log(`${this.options.name}: refusal of request ${refusal.request_id}: ${refusal.message}`);
          const request: DecisionRequest | null = open;
          if (
            request?.request_id === refusal.request_id &&
            refusal.reason !== RefusalReason.REFUSAL_REASON_UNKNOWN_REQUEST &&
            refusal.attempts_left > 0
          ) {
            answer(request, request.legal_actions[0]);
            open = null; // one retry per request
          }
          break;
        }
        case 'waiting': {
          // Too few streams open for a match here (start the bot with more --seats):
          // nothing to answer; said once, though every idle stream is told.
          const notice = message.waiting!.message;
          if (!told.has(notice)) {
            told.add(notice);
            log(`${this.options.name}: ${notice}`);
          }
          break;
        }
        default: // a message kind added later: ignore it
      }
    });
    call.on('error', () => {}); // 'status' says how the call ended
    call.on('status', (status: grpc.StatusObject) => setImmediate(() => this.ended(status)));
    call.write({
      hello: {
        bot_name: this.options.name,
        bot_version: VERSION,
        token: this.options.token,
        protocol: { name: 'oddtrick.v1', minor: 0 },
        games: [GameKind.GAME_KIND_CLASSIC, GameKind.GAME_KIND_CONTRACT],
        max_seats: this.options.seats,
        resume_token: this.resumeToken,
      },
    });
  }

  private ended(status: grpc.StatusObject): void {
    this.call = null;
    if (this.stopped) return;
    if (this.resuming) {
      this.resuming = false;
      return this.start(); // after a gap: the Resync has what was lost
    }
    if (status.code === grpc.status.OK) return this.done(true);
    if (status.code === grpc.status.NOT_FOUND) this.resumeToken = undefined; // grace over: new session
    const retry = RETRY.has(status.code) || status.code === grpc.status.NOT_FOUND || status.code === grpc.status.RESOURCE_EXHAUSTED;
    if (!retry || ++this.failures > 8) {
      // A bug or a refusal, or about 30 s (the default grace period) of failures.
      log(`${this.options.name}: stream ended: ${grpc.status[status.code]}: ${status.details}`);
      return this.done(false);
    }
    const delay = Math.min(8000, 125 * 2 ** this.failures);
    log(`${this.options.name}: stream ended (${grpc.status[status.code]}); reconnecting in ${delay} ms`);
    setTimeout(() => this.start(), delay);
  }

  stop(): void {
    this.stopped = true;
    this.call?.cancel();
  }
}

function main(): void {
  let options: Options;
  try {
    options = parseOptions();
  } catch (error) {
    log(`tsbot: ${(error as Error).message}`);
    process.exit(2);
  }
  // The same loader options as `npm run generate`, so the types match.
  const definition = protoLoader.loadSync('oddtrick/v1/referee.proto', {
    includeDirs: [path.resolve(__dirname, '..', '..', '..', 'proto')],
    keepCase: true,
    longs: String,
    enums: Number,
    defaults: true,
    oneofs: true,
  });
  const proto = grpc.loadPackageDefinition(definition) as unknown as ProtoGrpcType;
  // Keepalive pings notice a dead connection (referee.proto, service Referee).
  const client = new proto.oddtrick.v1.Referee(options.server, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 20000,
    'grpc.keepalive_timeout_ms': 10000,
  });
  let running = options.seats;
  let exitCode = 0;
  const seats = Array.from({ length: options.seats }, () => new Seat(client, options, (ok) => {
    if (!ok) exitCode = 1;
    if (--running === 0) process.exit(exitCode);
  }));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      for (const seat of seats) seat.stop();
      process.exit(0);
    });
  }
  log(`${options.name}: connecting ${options.seats} stream(s) to ${options.server}`);
  for (const seat of seats) seat.start();
}

main();
