// Command gobot is a starter oddtrick bot in Go: copy it and change choose().
//
// It plays Classic Whist and Contract Whist with a simple legal strategy,
// opens one Referee.Play stream per seat, resumes a dropped stream (or one
// whose event numbers skip) with its resume token, checks each match's
// revealed seed against its commitment, logs one line per match and stops
// cleanly on SIGINT/SIGTERM. It reports its own time for each decision
// (Decision.bot_think_ms) and logs the referee's notice when it has too few
// seats open for a match.
//
//	gobot [--server HOST:PORT] [--name NAME] [--token TOKEN] [--seats N]
//
// Options left out come from ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_SEATS and
// the token from the pipe ODDTRICK_TOKEN_FD (else ODDTRICK_TOKEN): how
// `oddtrick tournament --bot NAME=cmd:...` starts a bot.
// The protocol code in gen/ is generated from ../../proto (see README.md).
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	pb "oddtrick.example/gobot/gen/oddtrick/v1"
)

const version = "0.1.0"

// options are the command line, with the ODDTRICK_* environment as defaults.
type options struct {
	server, name, token string
	seats               int
}

func parseOptions() (options, error) {
	seats, _ := strconv.Atoi(envOr("ODDTRICK_SEATS", "1"))
	var o options
	flag.StringVar(&o.server, "server", os.Getenv("ODDTRICK_SERVER"), "referee address HOST:PORT (ODDTRICK_SERVER)")
	flag.StringVar(&o.name, "name", os.Getenv("ODDTRICK_NAME"), "bot name sent in the Hello (ODDTRICK_NAME)")
	flag.StringVar(&o.token, "token", "", "the arena's token for this bot (default: read from ODDTRICK_TOKEN_FD, else ODDTRICK_TOKEN)")
	flag.IntVar(&o.seats, "seats", seats, "streams (seats) to hold at once (ODDTRICK_SEATS)")
	flag.Parse()
	if o.token == "" {
		token, err := tokenFromEnvironment()
		if err != nil {
			return o, err
		}
		o.token = token
	}
	if o.server == "" || o.name == "" || o.token == "" {
		return o, errors.New("give --server, --name and --token (or ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_SEATS; the token from the pipe ODDTRICK_TOKEN_FD, else ODDTRICK_TOKEN)")
	}
	if o.seats < 1 {
		return o, errors.New("--seats must be at least 1")
	}
	return o, nil
}

// tokenFromEnvironment reads the token from the pipe a tournament hands its
// entries (ODDTRICK_TOKEN_FD: the token's bytes, no newline), else ODDTRICK_TOKEN.
// The pipe is preferred: other processes of the user can read the environment.
func tokenFromEnvironment() (string, error) {
	if fd, err := strconv.Atoi(os.Getenv("ODDTRICK_TOKEN_FD")); err == nil {
		pipe := os.NewFile(uintptr(fd), "ODDTRICK_TOKEN_FD")
		defer pipe.Close()
		token, err := io.ReadAll(pipe)
		if err != nil {
			return "", fmt.Errorf("cannot read the token from ODDTRICK_TOKEN_FD=%d: %w", fd, err)
		}
		return string(token), nil
	}
	return os.Getenv("ODDTRICK_TOKEN"), nil
}

func envOr(key, fallback string) string {
	if value := os.Getenv(key); value != "" {
		return value
	}
	return fallback
}

// ---------------------------------------------------------------------------
// Strategy: decides from the request alone (its hand state and legal actions).

// choose picks one of request.LegalActions. Any of them is accepted.
func choose(r *pb.DecisionRequest) *pb.Action {
	legal := r.GetLegalActions()
	switch r.GetKind() {
	case pb.DecisionKind_DECISION_KIND_CALL:
		if bid := openingBid(r); bid != nil {
			return bid
		}
	case pb.DecisionKind_DECISION_KIND_CARD:
		return chooseCard(r)
	}
	// Pass (the first call listed), or a decision kind this bot does not know:
	// the protocol asks for any legal action.
	return legal[0]
}

// openingBid bids the cheapest bid in a suit of five or more cards when nobody
// has bid yet; nil means pass.
func openingBid(r *pb.DecisionRequest) *pb.Action {
	for _, made := range r.GetHand().GetAuction() {
		if made.GetCall().GetBid() != nil {
			return nil
		}
	}
	count := map[pb.Suit]int{}
	for _, card := range r.GetHand().GetCards() {
		count[card.GetSuit()]++
	}
	for _, action := range r.GetLegalActions() { // bids come cheapest first
		bid := action.GetCall().GetBid()
		// Denominations 1-4 are the suits 1-4 (clubs to spades).
		if bid != nil && count[pb.Suit(bid.GetDenomination())] >= 5 {
			return action
		}
	}
	return nil
}

// chooseCard plays the cheapest card that wins the trick so far, else the
// lowest card.
func chooseCard(r *pb.DecisionRequest) *pb.Action {
	trumps := pb.Suit(r.GetHand().GetTrumps()) // no trumps (5) matches no suit
	var winner *pb.Card
	for _, played := range r.GetHand().GetCurrentTrick().GetCards() {
		if winner == nil || beats(played.GetCard(), winner, trumps) {
			winner = played.GetCard()
		}
	}
	var lowest, cheapestWinner *pb.Action
	for _, action := range r.GetLegalActions() {
		card := action.GetCard()
		if card == nil {
			continue
		}
		if lowest == nil || card.GetRank() < lowest.GetCard().GetRank() {
			lowest = action
		}
		if winner != nil && beats(card, winner, trumps) &&
			(cheapestWinner == nil || card.GetRank() < cheapestWinner.GetCard().GetRank()) {
			cheapestWinner = action
		}
	}
	if cheapestWinner != nil {
		return cheapestWinner
	}
	if lowest != nil {
		return lowest
	}
	return r.GetLegalActions()[0]
}

// beats says whether card beats best, the card winning the trick so far.
func beats(card, best *pb.Card, trumps pb.Suit) bool {
	if card.GetSuit() == best.GetSuit() {
		return card.GetRank() > best.GetRank()
	}
	return card.GetSuit() == trumps
}

// ---------------------------------------------------------------------------
// Sessions: one Referee.Play stream per seat, resumed after a drop.

// reported remembers the matches already logged: when this process holds
// several seats of one match, it still logs the match once.
var reported sync.Map

// told remembers the referee's Waiting notices already logged: every idle
// stream is told the same, and the bot's author needs to read it once.
var told sync.Map

// errEventsLost ends a stream whose event numbers skipped: resume at once.
var errEventsLost = errors.New("events lost")

// seedMatches checks a revealed seed against the commitment published when the
// match started: the SHA-256 of its UTF-8 bytes, in lowercase hex.
func seedMatches(seed, commitment string) bool {
	sum := sha256.Sum256([]byte(seed))
	return hex.EncodeToString(sum[:]) == commitment
}

// seat runs one session until the referee ends it with OK (returns nil), the
// context is cancelled (SIGINT/SIGTERM), or it cannot go on.
func seat(ctx context.Context, client pb.RefereeClient, o options) error {
	var resumeToken *string // from the Welcome; presented again to resume
	failures := 0
	for {
		welcomed, err := play(ctx, client, o, &resumeToken)
		if ctx.Err() != nil || err == nil {
			return nil // stopped by a signal, or the session ended with OK
		}
		if welcomed {
			failures = 0
		}
		if errors.Is(err, errEventsLost) {
			continue // the stream is closed: resume now, the Resync has what was lost
		}
		switch status.Code(err) {
		case codes.Unavailable, codes.Internal, codes.Unknown, codes.Canceled, codes.DeadlineExceeded:
			// The seat is kept for its grace period: reconnect with the token.
		case codes.NotFound:
			resumeToken = nil // grace over: start a new session
		case codes.ResourceExhausted:
			// Too many sessions at the moment: retry later.
		default:
			return err // a bug or a refusal: retrying unchanged will not help
		}
		failures++
		if failures > 8 { // about 30 s, the default grace period
			return err
		}
		delay := time.Duration(125<<min(failures, 6)) * time.Millisecond
		delay = delay/2 + time.Duration(rand.Int64N(int64(delay/2))) // jitter
		log.Printf("%s: stream ended (%v); reconnecting in %v", o.name, err, delay.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
}

// play runs one stream: Hello, then answers every request. It returns nil when
// the referee ends the call with OK.
func play(ctx context.Context, client pb.RefereeClient, o options, resumeToken **string) (bool, error) {
	ctx, closeStream := context.WithCancel(ctx)
	defer closeStream()             // returning closes the stream (after a gap, say)
	stream, err := client.Play(ctx) // no deadline: the call lasts as long as the session
	if err != nil {
		return false, err
	}
	hello := &pb.Hello{
		BotName: o.name, BotVersion: version, Token: o.token,
		Protocol:    &pb.ProtocolVersion{Name: "oddtrick.v1", Minor: 0},
		Games:       []pb.GameKind{pb.GameKind_GAME_KIND_CLASSIC, pb.GameKind_GAME_KIND_CONTRACT},
		MaxSeats:    uint32(o.seats),
		ResumeToken: *resumeToken,
	}
	if err := stream.Send(&pb.BotMessage{Kind: &pb.BotMessage_Hello{Hello: hello}}); err != nil {
		return false, err
	}
	welcomed := false
	matchID, commitment := "", ""
	var last uint64              // the last Event.sequence seen: the next must be one more
	var open *pb.DecisionRequest // the request answered last, for a retry after a refusal
	// answer sends a decision; with arrived (when the request's message was read), it
	// also reports the bot's own time (Decision.bot_think_ms), so that the referee can
	// tell thinking from lag. time.Since reads Go's monotonic clock.
	answer := func(r *pb.DecisionRequest, action *pb.Action, arrived *time.Time) error {
		open = r
		decision := &pb.Decision{RequestId: r.GetRequestId(), Action: action}
		if arrived != nil {
			ms := uint32(time.Since(*arrived).Round(time.Millisecond).Milliseconds())
			decision.BotThinkMs = &ms
		}
		return stream.Send(&pb.BotMessage{Kind: &pb.BotMessage_Decision{Decision: decision}})
	}
	for {
		message, err := stream.Recv()
		arrived := time.Now() // the bot's own time for a request starts here
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) { // io.EOF: ended with OK
				return welcomed, nil
			}
			return welcomed, err
		}
		switch m := message.GetKind().(type) {
		case *pb.RefereeMessage_Welcome:
			welcomed = true
			token := m.Welcome.GetResumeToken()
			*resumeToken = &token
			if !m.Welcome.GetResumed() {
				last = 0 // a new session numbers its events from 1
			}
		case *pb.RefereeMessage_Update:
			for _, event := range m.Update.GetEvents() { // events first, in order
				if event.GetSequence() != last+1 {
					log.Printf("%s: event %d came after %d: events were lost; resuming", o.name, event.GetSequence(), last)
					return welcomed, errEventsLost
				}
				last = event.GetSequence()
				if started := event.GetMatchStarted(); started != nil {
					matchID, commitment = started.GetMatchId(), started.GetSeedCommitment()
				}
				if ended := event.GetMatchEnded(); ended != nil {
					// An empty seed is withheld for now (one play of a duplicate pair).
					if seed := ended.GetSeed(); seed != "" && !seedMatches(seed, commitment) {
						log.Printf("%s: match %s: the revealed seed does not match its commitment", o.name, matchID)
					}
					if _, seen := reported.LoadOrStore(matchID, true); !seen {
						if ended.GetOutcome() == pb.MatchOutcome_MATCH_OUTCOME_ABORTED {
							// Stopped early (shutdown, an aborted table): no result, only why.
							log.Printf("match %s stopped by the referee: %s", matchID, ended.GetStopReason())
						} else {
							total := ended.GetScore().GetTotal()
							log.Printf("match %s over: NS %d EW %d", matchID, total.GetNorthSouth(), total.GetEastWest())
						}
					}
				}
				// Other events (and kinds added later) need no tracking here:
				// every request carries the whole hand.
			}
			if r := m.Update.GetRequest(); r != nil {
				err = answer(r, choose(r), &arrived)
			}
		case *pb.RefereeMessage_Resync:
			// A resumed session: the snapshot replaces what we knew.
			matchID = m.Resync.GetMatch().GetMatchId()
			commitment = m.Resync.GetMatch().GetSeedCommitment()
			last = m.Resync.GetLastSequence()
			if r := m.Resync.GetRequest(); r != nil {
				err = answer(r, choose(r), &arrived)
			}
		case *pb.RefereeMessage_Refusal:
			// The request stays open unless its id was unknown: answer it once
			// more, with its first legal action, while attempts are left.
			f := m.Refusal
			log.Printf("%s: refusal of request %d: %s", o.name, f.GetRequestId(), f.GetMessage())
			if open != nil && f.GetRequestId() == open.GetRequestId() && f.GetAttemptsLeft() > 0 &&
				f.GetReason() != pb.RefusalReason_REFUSAL_REASON_UNKNOWN_REQUEST {
				r := open
				err = answer(r, r.GetLegalActions()[0], nil) // a retry: no think time of its own
				open = nil                                   // one retry per request
			}
		case *pb.RefereeMessage_Waiting:
			// Too few streams open for a match here (start the bot with more --seats):
			// nothing to answer; said once, though every idle stream is told.
			if _, seen := told.LoadOrStore(m.Waiting.GetMessage(), true); !seen {
				log.Printf("%s: %s", o.name, m.Waiting.GetMessage())
			}
		default:
			// A message kind added later: ignore it.
		}
		if err != nil {
			return welcomed, err
		}
	}
}

func main() {
	log.SetFlags(log.Ltime)
	o, err := parseOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gobot:", err)
		os.Exit(2)
	}
	// SIGINT/SIGTERM cancel ctx, which cancels every stream.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := grpc.NewClient(o.server,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// Keepalive pings notice a dead connection (referee.proto, service Referee).
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 20 * time.Second, Timeout: 10 * time.Second}))
	if err != nil {
		log.Fatalf("gobot: %v", err)
	}
	defer conn.Close()
	client := pb.NewRefereeClient(conn)

	log.Printf("%s: connecting %d stream(s) to %s", o.name, o.seats, o.server)
	errs := make(chan error, o.seats)
	for range o.seats {
		go func() { errs <- seat(ctx, client, o) }()
	}
	exit := 0
	for range o.seats {
		if err := <-errs; err != nil {
			log.Printf("%s: stream ended: %v", o.name, err)
			exit = 1
		}
	}
	if ctx.Err() != nil {
		log.Printf("%s: stopped by signal", o.name)
	}
	os.Exit(exit)
}
