package dev.oddtrick.example;

import dev.oddtrick.v1.Action;
import dev.oddtrick.v1.BotMessage;
import dev.oddtrick.v1.Card;
import dev.oddtrick.v1.Decision;
import dev.oddtrick.v1.DecisionKind;
import dev.oddtrick.v1.DecisionRequest;
import dev.oddtrick.v1.Event;
import dev.oddtrick.v1.GameKind;
import dev.oddtrick.v1.Hello;
import dev.oddtrick.v1.MatchOutcome;
import dev.oddtrick.v1.ProtocolVersion;
import dev.oddtrick.v1.RefereeGrpc;
import dev.oddtrick.v1.RefereeMessage;
import dev.oddtrick.v1.RefusalReason;
import dev.oddtrick.v1.SeatCard;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A starter oddtrick bot in Java (grpc-java): copy it and change {@link #choose}.
 *
 * <p>It plays Classic Whist and Contract Whist with a simple legal strategy, opens one
 * Referee.Play stream per seat, resumes a dropped stream (or one whose event numbers skip) with
 * its resume token, checks each match's revealed seed against its commitment, logs one line per
 * match and stops cleanly on SIGINT/SIGTERM. It reports its own time for each decision
 * (Decision.bot_think_ms) and logs the referee's notice when it has too few seats open for a match.
 *
 * <pre>java -jar target/javabot.jar [--server HOST:PORT] [--name NAME] [--token TOKEN] [--seats N]</pre>
 *
 * <p>Options left out come from ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_SEATS and the token
 * from the pipe ODDTRICK_TOKEN_FD (else ODDTRICK_TOKEN): how {@code oddtrick tournament --bot
 * NAME=cmd:...} starts a bot. The protocol
 * classes (dev.oddtrick.v1) are generated from ../../proto by {@code mvn package}.
 */
public final class JavaBot {
  static final String VERSION = "0.1.0";
  /** Matches already logged: a process holding several seats of a match logs it once. */
  static final Set<String> REPORTED = ConcurrentHashMap.newKeySet();
  /** The referee's Waiting notices already logged: every idle stream gets the same one. */
  static final Set<String> TOLD = ConcurrentHashMap.newKeySet();
  /** Set by SIGINT/SIGTERM: the seats stop because they were told to, which is a clean exit. */
  static volatile boolean stopping;

  static void log(String text) {
    System.err.println(text);
  }

  // -------------------------------------------------------------------------
  // Strategy: decides from the request alone (its hand state and legal actions).

  /** One of the request's legal actions; any of them is accepted. */
  static Action choose(DecisionRequest r) {
    if (r.getKind() == DecisionKind.DECISION_KIND_CALL) {
      return openingBid(r); // or pass, listed first
    }
    if (r.getKind() == DecisionKind.DECISION_KIND_CARD) {
      return chooseCard(r);
    }
    return r.getLegalActions(0); // a decision kind this bot does not know: any legal action
  }

  /** The cheapest bid in a suit of five or more cards when nobody has bid yet, else pass. */
  static Action openingBid(DecisionRequest r) {
    boolean bidMade = r.getHand().getAuctionList().stream().anyMatch(made -> made.getCall().hasBid());
    if (!bidMade) {
      Map<Integer, Integer> count = new HashMap<>();
      for (Card card : r.getHand().getCardsList()) {
        count.merge(card.getSuitValue(), 1, Integer::sum);
      }
      // Bids come cheapest first; denominations 1-4 are the suits 1-4.
      for (Action action : r.getLegalActionsList()) {
        if (action.getCall().hasBid()
            && count.getOrDefault(action.getCall().getBid().getDenominationValue(), 0) >= 5) {
          return action;
        }
      }
    }
    return r.getLegalActions(0);
  }

  /** The cheapest card that wins the trick so far, else the lowest card. */
  static Action chooseCard(DecisionRequest r) {
    int trumps = r.getHand().getTrumpsValue(); // no trumps (5) matches no suit
    Card winner = null;
    for (SeatCard played : r.getHand().getCurrentTrick().getCardsList()) {
      if (winner == null || beats(played.getCard(), winner, trumps)) {
        winner = played.getCard();
      }
    }
    Comparator<Action> byRank = Comparator.comparingInt(a -> a.getCard().getRankValue());
    List<Action> cards = new ArrayList<>();
    List<Action> winning = new ArrayList<>();
    for (Action action : r.getLegalActionsList()) {
      if (action.hasCard()) {
        cards.add(action);
        if (winner != null && beats(action.getCard(), winner, trumps)) {
          winning.add(action);
        }
      }
    }
    return winning.stream().min(byRank).orElse(cards.stream().min(byRank).orElse(r.getLegalActions(0)));
  }

  /** Whether card beats best, the card winning the trick so far. */
  static boolean beats(Card card, Card best, int trumps) {
    if (card.getSuit() == best.getSuit()) {
      return card.getRankValue() > best.getRankValue();
    }
    return card.getSuitValue() == trumps;
  }

  // -------------------------------------------------------------------------
  // Sessions: one Referee.Play stream per seat, resumed after a drop.

  /** A message from the referee and when it came ({@link System#nanoTime}, a monotonic clock). */
  record Received(RefereeMessage message, long nanos) {}

  /** One seat: runs streams one after another until the referee ends one with OK. */
  static final class Seat implements Runnable {
    final RefereeGrpc.RefereeStub stub;
    final String name;
    final String token;
    final int seats;
    String resumeToken; // from the Welcome; presented again to resume
    long lastSequence; // the session's last Event.sequence: the next must be one more
    volatile boolean ok;

    Seat(RefereeGrpc.RefereeStub stub, String name, String token, int seats) {
      this.stub = stub;
      this.name = name;
      this.token = token;
      this.seats = seats;
    }

    @Override
    public void run() {
      int failures = 0;
      try {
        while (true) {
          Status status = play();
          if (status.isOk()) {
            ok = true;
            return;
          }
          switch (status.getCode()) {
            case DATA_LOSS -> { // events were lost: the stream is closed; resume now (a Resync follows)
              continue;
            }
            case UNAVAILABLE, INTERNAL, UNKNOWN, CANCELLED, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED -> {}
            case NOT_FOUND -> resumeToken = null; // grace over: start a new session
            default -> { // a bug or a refusal: retrying unchanged will not help
              log(name + ": stream ended: " + status);
              return;
            }
          }
          if (++failures > 8) { // about 30 s, the default grace period
            log(name + ": giving up: " + status);
            return;
          }
          long delay = 125L << Math.min(failures, 6);
          log(name + ": stream ended (" + status.getCode() + "); reconnecting in " + delay + " ms");
          Thread.sleep(delay);
        }
      } catch (InterruptedException stopped) {
        Thread.currentThread().interrupt();
      }
    }

    /** One stream: Hello, then an answer to every request. Returns how the call ended. */
    Status play() throws InterruptedException {
      // grpc-java calls back on its own threads: hand everything to this one.
      LinkedBlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
      StreamObserver<BotMessage> out =
          stub.play(
              new StreamObserver<RefereeMessage>() {
                @Override
                public void onNext(RefereeMessage message) {
                  inbox.add(new Received(message, System.nanoTime()));
                }

                @Override
                public void onError(Throwable error) {
                  inbox.add(Status.fromThrowable(error));
                }

                @Override
                public void onCompleted() {
                  inbox.add(Status.OK);
                }
              });
      Hello.Builder hello =
          Hello.newBuilder()
              .setBotName(name)
              .setBotVersion(VERSION)
              .setToken(token)
              .setProtocol(ProtocolVersion.newBuilder().setName("oddtrick.v1").setMinor(0))
              .addGames(GameKind.GAME_KIND_CLASSIC)
              .addGames(GameKind.GAME_KIND_CONTRACT)
              .setMaxSeats(seats);
      if (resumeToken != null) {
        hello.setResumeToken(resumeToken);
      }
      out.onNext(BotMessage.newBuilder().setHello(hello).build());
      String matchId = "";
      String commitment = "";
      DecisionRequest open = null; // the request answered last, for a retry after a refusal
      try {
        while (true) {
          Object next = inbox.take();
          if (next instanceof Status status) {
            return status;
          }
          RefereeMessage message = ((Received) next).message();
          long arrived = ((Received) next).nanos(); // the bot's own time for a request starts here
          DecisionRequest request = null;
          switch (message.getKindCase()) {
            case WELCOME -> {
              resumeToken = message.getWelcome().getResumeToken();
              if (!message.getWelcome().getResumed()) {
                lastSequence = 0; // a new session numbers its events from 1
              }
            }
            case UPDATE -> {
              for (Event event : message.getUpdate().getEventsList()) { // events first, in order
                if (event.getSequence() != lastSequence + 1) {
                  log(name + ": event " + event.getSequence() + " came after " + lastSequence
                      + ": events were lost; resuming");
                  out.onError(Status.CANCELLED.withDescription("events lost").asRuntimeException());
                  return Status.DATA_LOSS.withDescription("events lost");
                }
                lastSequence = event.getSequence();
                // Others (and kinds added later) need no tracking: requests carry the hand.
                if (event.hasMatchStarted()) {
                  matchId = event.getMatchStarted().getMatchId();
                  commitment = event.getMatchStarted().getSeedCommitment();
                } else if (event.hasMatchEnded()) {
                  // An empty seed is withheld for now (one play of a duplicate pair).
                  String seed = event.getMatchEnded().getSeed();
                  if (!seed.isEmpty() && !seedMatches(seed, commitment)) {
                    log(name + ": match " + matchId + ": the revealed seed does not match its commitment");
                  }
                }
                if (event.hasMatchEnded() && REPORTED.add(matchId)) {
                  var ended = event.getMatchEnded();
                  if (ended.getOutcome() == MatchOutcome.MATCH_OUTCOME_ABORTED) {
                    // Stopped early (shutdown, an aborted table): no result, only why.
                    log("match " + matchId + " stopped by the referee: " + ended.getStopReason());
                  } else {
                    var total = ended.getScore().getTotal();
                    log("match " + matchId + " over: NS " + total.getNorthSouth() + " EW " + total.getEastWest());
                  }
                }
              }
              if (message.getUpdate().hasRequest()) {
                request = message.getUpdate().getRequest();
              }
            }
            case RESYNC -> { // a resumed session: the snapshot replaces what we knew
              matchId = message.getResync().getMatch().getMatchId();
              commitment = message.getResync().getMatch().getSeedCommitment();
              lastSequence = message.getResync().getLastSequence();
              if (message.getResync().hasRequest()) {
                request = message.getResync().getRequest();
              }
            }
            case REFUSAL -> {
              // The request stays open unless its id was unknown: answer once more with
              // its first legal action while attempts are left.
              var refusal = message.getRefusal();
              log(name + ": refusal of request " + refusal.getRequestId() + ": " + refusal.getMessage());
              if (open != null
                  && open.getRequestId() == refusal.getRequestId()
                  && refusal.getReason() != RefusalReason.REFUSAL_REASON_UNKNOWN_REQUEST
                  && refusal.getAttemptsLeft() > 0) {
                out.onNext(decision(open, open.getLegalActions(0), null)); // a retry: no time of its own
                open = null; // one retry per request
              }
            }
            case WAITING -> {
              // Too few streams open for a match here (start the bot with more --seats):
              // nothing to answer; said once, though every idle stream is told.
              String notice = message.getWaiting().getMessage();
              if (TOLD.add(notice)) {
                log(name + ": " + notice);
              }
            }
            default -> {} // a message kind added later: ignore it
          }
          if (request != null) {
            out.onNext(decision(request, choose(request), arrived));
            open = request;
          }
        }
      } catch (InterruptedException stopped) {
        out.onError(Status.CANCELLED.withDescription("stopping").asRuntimeException());
        throw stopped;
      }
    }

    /**
     * An answer; with {@code arrived} (when the request's message came, on the nanoTime clock;
     * null for none) it reports the bot's own time, Decision.bot_think_ms, so that the referee can
     * tell thinking from lag.
     */
    static BotMessage decision(DecisionRequest request, Action action, Long arrived) {
      Decision.Builder decision = Decision.newBuilder().setRequestId(request.getRequestId()).setAction(action);
      if (arrived != null) {
        decision.setBotThinkMs((int) Math.round((System.nanoTime() - arrived) / 1e6));
      }
      return BotMessage.newBuilder().setDecision(decision).build();
    }
  }

  /**
   * Whether a revealed seed is the one committed to when the match started: the SHA-256 of its
   * UTF-8 bytes, in lowercase hex.
   */
  static boolean seedMatches(String seed, String commitment) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(seed.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest).equals(commitment);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every Java has SHA-256", e);
    }
  }

  /**
   * The token from the pipe a tournament hands its entries (ODDTRICK_TOKEN_FD: the token's bytes,
   * no newline), else ODDTRICK_TOKEN. The pipe is preferred: other processes of the user can read
   * the environment. Java cannot open a descriptor by number, so it reads the pipe through
   * /proc/self/fd (Linux), which opens the same pipe.
   */
  static String tokenFromEnvironment() {
    String fd = System.getenv("ODDTRICK_TOKEN_FD");
    if (fd != null && fd.matches("\\d+")) {
      try {
        return Files.readString(Path.of("/proc/self/fd", fd), StandardCharsets.UTF_8);
      } catch (IOException e) {
        log("cannot read the token from ODDTRICK_TOKEN_FD=" + fd + ": " + e.getMessage());
      }
    }
    return System.getenv("ODDTRICK_TOKEN");
  }

  static String option(Map<String, String> flags, String key, String fallback) {
    String value = flags.getOrDefault(key, System.getenv("ODDTRICK_" + key.toUpperCase()));
    return value != null ? value : fallback;
  }

  public static void main(String[] args) throws InterruptedException {
    Map<String, String> flags = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      flags.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    String server = option(flags, "server", null);
    String name = option(flags, "name", null);
    String token = flags.containsKey("token") ? flags.get("token") : tokenFromEnvironment();
    int seats;
    try {
      seats = Integer.parseInt(option(flags, "seats", "1"));
    } catch (NumberFormatException e) {
      seats = 0;
    }
    if (server == null || name == null || token == null || seats < 1 || args.length % 2 != 0) {
      log("usage: java -jar javabot.jar --server HOST:PORT --name NAME --token TOKEN [--seats N]"
          + " (or ODDTRICK_SERVER, ODDTRICK_NAME, ODDTRICK_SEATS;"
          + " the token from the pipe ODDTRICK_TOKEN_FD, else ODDTRICK_TOKEN)");
      System.exit(2);
    }
    // Keepalive pings notice a dead connection (referee.proto, service Referee).
    ManagedChannel channel =
        ManagedChannelBuilder.forTarget(server)
            .usePlaintext()
            .keepAliveTime(20, TimeUnit.SECONDS)
            .keepAliveTimeout(10, TimeUnit.SECONDS)
            .build();
    RefereeGrpc.RefereeStub stub = RefereeGrpc.newStub(channel);
    log(name + ": connecting " + seats + " stream(s) to " + server);
    List<Thread> threads = new ArrayList<>();
    List<Seat> all = new ArrayList<>();
    for (int i = 0; i < seats; i++) {
      Seat seat = new Seat(stub, name, token, seats);
      all.add(seat);
      Thread thread = new Thread(seat, "seat-" + i);
      threads.add(thread);
      thread.start();
    }
    // SIGINT/SIGTERM: stop the seats (which cancels their streams) and exit 0.
    for (String signal : new String[] {"INT", "TERM"}) {
      sun.misc.Signal.handle(
          new sun.misc.Signal(signal),
          caught -> {
            log(name + ": SIG" + signal + ", stopping");
            stopping = true;
            threads.forEach(Thread::interrupt);
            channel.shutdownNow();
            System.exit(0);
          });
    }
    for (Thread thread : threads) {
      thread.join();
    }
    channel.shutdownNow();
    System.exit(stopping || all.stream().allMatch(seat -> seat.ok) ? 0 : 1);
  }
}
