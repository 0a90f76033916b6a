"""Judging a conformance run: each check reads what crossed the proxy and what the referee recorded.

Every check says what the protocol expects (referee.proto, proto/README.md)
and what the bot actually did, in words a bot author can act on.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from google.protobuf import text_format
from google.protobuf.message import Message

from oddtrick._codec import action_from_wire
from oddtrick.rules import GameKind, Seat
from oddtrick.v1 import cards_pb2, game_pb2, referee_pb2
from oddtrick_referee.conformance.knock_on import after_root
from oddtrick_referee.conformance.proxy import Entry, ProbingProxy
from oddtrick_referee.conformance.report import Check
from oddtrick_referee.conformance.scenarios import GRACE_S, PROBED_LATE, SCENARIOS, SHORT_DEADLINE_S, Scenario
from oddtrick_referee.play.table import Fault
from oddtrick_referee.referee import MatchRecord

PROTOCOL = "oddtrick.v1"
CANDIDATE_SEATS = (Seat.NORTH, Seat.SOUTH)
_PROBED_LATE = PROBED_LATE


@dataclasses.dataclass(frozen=True)
class Outcome:
    scenario: Scenario
    record: MatchRecord | None
    problem: str
    seconds: float


@dataclasses.dataclass(frozen=True)
class Run:
    name: str
    token: str
    seats: int
    outcomes: list[Outcome]
    proxy: ProbingProxy
    started_here: bool
    exit_code: int | None
    address: str = ""
    """Where the bot was to connect (ODDTRICK_SERVER, when started here)."""
    died_in: tuple[str, ...] = ()
    """The scenarios in which the bot's process exited (it was started again after each)."""


def _short(message: Message) -> str:
    """A message as a person reads it: an action (or a decision's) as ``6♦`` or ``7♠``
    where it decodes, else its protobuf text, cut at 160 characters."""
    if isinstance(message, referee_pb2.Decision):
        return f"request {message.request_id}: {_short(message.action)}"
    if isinstance(message, cards_pb2.Action):
        try:
            return action_from_wire(message).pretty
        except ValueError:  # not a card or call the rules know (MalformedMessage among them)
            pass
    text = text_format.MessageToString(message, as_one_line=True)
    return text if len(text) <= 160 else text[:157] + "..."


def _requests_in(message: referee_pb2.RefereeMessage) -> referee_pb2.DecisionRequest | None:
    kind = message.WhichOneof("kind")
    if kind == "update" and message.update.HasField("request"):
        return message.update.request
    if kind == "resync" and message.resync.HasField("request"):
        return message.resync.request
    return None


@dataclasses.dataclass
class _Answer:
    """A Decision from the bot, with the request it answers."""

    entry: Entry
    decision: referee_pb2.Decision
    request: referee_pb2.DecisionRequest | None
    """The request the decision names, if that connection was sent it; else the latest
    request delivered on that connection (None: there was none)."""
    request_at: float
    """When that request was delivered."""
    refused_since: bool
    """A refusal of that request came after the bot's previous answer to it."""
    answered_before: bool
    late: bool = False
    """A newer request had been delivered on the connection before this answer came."""
    known_id: bool = True
    """The id is one the connection was sent."""


def _answers(entries: list[Entry]) -> list[_Answer]:
    """Every Decision the bot sent, paired with the request it answers."""
    latest: dict[int, tuple[referee_pb2.DecisionRequest, float]] = {}
    sent: dict[int, dict[int, tuple[referee_pb2.DecisionRequest, float]]] = {}
    answered: dict[int, set[int]] = {}
    refused: dict[int, set[int]] = {}
    out: list[_Answer] = []
    for entry in entries:
        message = entry.message
        if entry.direction == "down":
            if entry.note.startswith("held back"):
                continue
            request = _requests_in(message)
            if request is not None:
                latest[entry.connection] = (request, entry.at)
                sent.setdefault(entry.connection, {})[request.request_id] = (request, entry.at)
            if message.WhichOneof("kind") == "refusal":
                refused.setdefault(entry.connection, set()).add(message.refusal.request_id)
            continue
        if message.WhichOneof("kind") != "decision":
            continue
        decision = message.decision
        named = sent.get(entry.connection, {}).get(decision.request_id)
        newest = latest.get(entry.connection)
        request, at = named or newest or (None, 0.0)
        late = named is not None and newest is not None and newest[0].request_id != decision.request_id
        done = answered.setdefault(entry.connection, set())
        was_refused = decision.request_id in refused.get(entry.connection, set())
        out.append(
            _Answer(
                entry,
                decision,
                request,
                at,
                was_refused,
                decision.request_id in done,
                late,
                named is not None,
            )
        )
        done.add(decision.request_id)
        refused.get(entry.connection, set()).discard(decision.request_id)
    return out


class _Judge:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.proxy = run.proxy
        self.entries = list(run.proxy.entries)
        self.connections = list(run.proxy.connections)
        self.outcomes = {o.scenario.name: o for o in run.outcomes}
        self.answers = _answers(self.entries)

    def in_scenario(self, name: str) -> list[Entry]:
        return [e for e in self.entries if e.scenario == name]

    def seat_at(self, connection: int, upto: Entry) -> int:
        """The seat (wire value) a connection held as of ``upto`` (its latest match_started or resync)."""
        seat = 0
        for entry in self.entries:
            if entry.connection == connection and entry.direction == "down":
                kind = entry.message.WhichOneof("kind")
                if kind == "update":
                    for event in entry.message.update.events:
                        if event.HasField("match_started"):
                            seat = event.match_started.seat
                elif kind == "resync" and entry.message.resync.HasField("match"):
                    seat = entry.message.resync.match.seat
            if entry is upto:
                break
        return seat

    def seat_problems(self, outcome: Outcome | None, allow: frozenset[Fault] = frozenset()) -> str:
        """What went wrong for the bot's seats in a match ('' when nothing did)."""
        if outcome is None:
            return "the scenario was not played (the bot was not connected)"
        if outcome.record is None:
            return outcome.problem
        problems = []
        for seat in CANDIDATE_SEATS:
            record = outcome.record.seats[seat]
            faults = [
                f"{count} {fault.value}" for fault, count in record.faults.items() if fault not in allow
            ]
            if record.refusals:
                faults.append(f"{record.refusals} refused answer(s)")
            if record.forfeited:
                faults.append("the seat was forfeited")
            if faults:
                problems.append(f"{seat.name.title()}: {', '.join(faults)}")
        return "; ".join(problems)

    # ------------------------------------------------------------ checks

    def hello(self) -> Check:
        expected = (
            f"every stream opens with a Hello: bot_name {self.run.name!r}, the token, protocol {PROTOCOL}, "
            "games classic and contract"
        )
        problems = []
        for connection in self.connections:
            hello = connection.hello
            first = next(
                (e for e in self.entries if e.connection == connection.number and e.direction == "up"), None
            )
            if first is None:
                continue
            if first.message.WhichOneof("kind") != "hello" or hello is None:
                problems.append(f"stream {connection.number} opened with {_short(first.message)}")
                continue
            if hello.bot_name != self.run.name:
                problems.append(f"bot_name {hello.bot_name!r}")
            if hello.token != self.run.token:
                problems.append("a different token")
            if hello.protocol.name != PROTOCOL:
                problems.append(f"protocol {hello.protocol.name!r}")
            missing = {game_pb2.GAME_KIND_CLASSIC, game_pb2.GAME_KIND_CONTRACT} - set(hello.games)
            if missing:
                problems.append(f"games {list(hello.games)} (both games are needed here)")
        hellos = sum(1 for c in self.connections if c.hello is not None)
        actual = "; ".join(dict.fromkeys(problems)) if problems else f"{hellos} Hellos, all as expected"
        if not hellos:
            actual = "no Hello at all"
        return Check(
            "hello", "Opens each stream with a proper Hello", bool(hellos) and not problems, expected, actual
        )

    def seats(self) -> Check:
        opened = [
            c for c in self.connections if c.welcome is not None and c.opened_at <= self._first_match_at()
        ]
        return Check(
            "several-seats",
            "Opens ODDTRICK_SEATS streams and plays two seats of one match at once",
            len(opened) == self.run.seats and self._both_seats_played(),
            f"{self.run.seats} sessions welcomed before the first match (ODDTRICK_SEATS={self.run.seats}), "
            "and North and South both answered in every match",
            f"{len(opened)} session(s) welcomed; "
            + (
                "both seats answered in every match" if self._both_seats_played() else "a seat did not answer"
            ),
        )

    def _first_match_at(self) -> float:
        first = self.run.outcomes[0].scenario.name if self.run.outcomes else "end"
        return self.proxy.began.get(first, float("inf"))

    def _both_seats_played(self) -> bool:
        played = [
            o for o in self.run.outcomes if o.record is not None and o.scenario.name not in _PROBED_LATE
        ]
        return bool(played) and all(
            o.record.seats[seat].decisions > 0 for o in played for seat in CANDIDATE_SEATS if o.record
        )

    def plays(self, scenario: Scenario) -> Check:
        outcome = self.outcomes.get(scenario.name)
        problems = self.seat_problems(outcome)
        actual = problems
        if not problems and outcome is not None and outcome.record is not None:
            hands = outcome.record.state.hand_number
            actual = f"played {hands} hand(s) in {outcome.seconds:.1f} s, no fault, no refusal"
        return Check(
            f"play:{scenario.name}",
            scenario.title,
            not problems,
            "the match ends with no fault and no refused answer for North or South",
            actual,
        )

    def request_ids(self) -> Check:
        # A late answer (to a request that was already settled) names a real request: it is
        # judged by the deadline, not here.
        wrong = [a for a in self.answers if not a.known_id or (a.answered_before and not a.refused_since)]
        actual = f"{len(self.answers)} answers, each to the request it answered"
        if wrong:
            first = wrong[0]
            why = (
                "answered again without a refusal"
                if first.known_id
                else "an id this stream was never sent"
                + (f"; the open request was {first.request.request_id}" if first.request is not None else "")
            )
            actual = (
                f"{len(wrong)} of {len(self.answers)} answers carried a wrong id; first: request_id "
                f"{first.decision.request_id} ({why}) in {first.entry.scenario}: copy the request_id of "
                "the request being answered, and answer each once unless it is refused"
            )
        return Check(
            "request-id",
            "Answers the open request, by its id, once",
            bool(self.answers) and not wrong,
            "each Decision carries the request_id of the latest request, and is sent once unless refused",
            actual,
        )

    def illegal_answers(self) -> list[_Answer]:
        """The answers that were not among their request's legal_actions."""
        return [
            a
            for a in self.answers
            if a.request is not None and a.known_id and a.decision.action not in a.request.legal_actions
        ]

    def legal(self) -> Check:
        illegal = self.illegal_answers()
        actual = f"{len(self.answers)} answers, all among legal_actions"
        if illegal:
            actual = (
                f"{len(illegal)} answers were not among their request's legal_actions; first: "
                f"{_short(illegal[0].decision)} in {illegal[0].entry.scenario}: answer with one of them, "
                "compared by value"
            )
        return Check(
            "legal-action",
            "Answers with one of the request's legal_actions",
            bool(self.answers) and not illegal,
            "every Decision.action is one of the request's legal_actions, compared by value",
            actual,
        )

    def _retry(self, scenario: str, name: str, title: str, reason_text: str) -> Check:
        entries = self.in_scenario(scenario)
        refusal = next(
            (e for e in entries if e.direction == "down" and e.note.startswith("injected")
             and e.message.WhichOneof("kind") == "refusal"
             and e.message.refusal.reason != referee_pb2.REFUSAL_REASON_UNKNOWN_REQUEST),
            None,
        )  # fmt: skip
        expected = (
            f"after a Refusal ({reason_text}) with attempts left, a second Decision for the same "
            "request_id with one of its legal_actions, in time"
        )
        if refusal is None:
            return Check(name, title, False, expected, "not exercised: " + self._why_not(scenario))
        refused = refusal.message.refusal
        retry = next(
            (a for a in self.answers if a.entry.connection == refusal.connection and a.entry.at > refusal.at
             and a.decision.request_id == refused.request_id),
            None,
        )  # fmt: skip
        if retry is None:
            return Check(name, title, False, expected, f"no second answer to request {refused.request_id}")
        took = round((retry.entry.at - refusal.at) * 1000)
        legal = retry.request is not None and retry.decision.action in retry.request.legal_actions
        in_time = took <= refused.time_left_ms
        actual = f"answered again after {took} ms with {_short(retry.decision.action)}"
        if not legal:
            actual += " (not a legal action)"
        if not in_time:
            actual += f" (after the {refused.time_left_ms} ms left)"
        return Check(name, title, legal and in_time, expected, actual)

    def refusal_retry(self) -> Check:
        return self._retry(
            "classic-cut", "refusal-retry", "Answers again after a refusal", "REFUSAL_REASON_NOT_LEGAL"
        )

    def unknown_refusal_reason(self) -> Check:
        return self._retry(
            "unknown-refusal-reason",
            "unknown-refusal-reason",
            "Treats a refusal reason it does not know as NOT_LEGAL and answers again",
            "a reason value no version defines",
        )

    def _why_not(self, scenario: str) -> str:
        outcome = self.outcomes.get(scenario)
        if outcome is None:
            return "the scenario was not played"
        if outcome.problem:
            return outcome.problem
        if any(c.closed_in == scenario for c in self.connections) or self._unanswered([scenario]):
            return "the bot had stopped answering before the probe's turn"
        return "the probe never fired"

    def stale_refusal(self) -> Check:
        entries = self.in_scenario("classic-cut")
        stale = next(
            (e for e in entries if e.note.startswith("injected") and e.message.WhichOneof("kind") == "refusal"
             and e.message.refusal.reason == referee_pb2.REFUSAL_REASON_UNKNOWN_REQUEST),
            None,
        )  # fmt: skip
        expected = "no answer to a request id refused as REFUSAL_REASON_UNKNOWN_REQUEST (it is stale)"
        if stale is None:
            return Check("stale-refusal", "Ignores a refusal of a stale request id", False, expected,
                         "not exercised: " + self._why_not("classic-cut"))  # fmt: skip
        request_id = stale.message.refusal.request_id
        again = [
            a for a in self.answers
            if a.entry.connection == stale.connection
            and a.entry.at > stale.at
            and a.decision.request_id == request_id
        ]  # fmt: skip
        actual = (
            f"request {request_id} was not answered again"
            if not again
            else (f"answered request {request_id} again {len(again)} time(s)")
        )
        return Check("stale-refusal", "Ignores a refusal of a stale request id", not again, expected, actual)

    def deadline(self) -> Check:
        outcome = self.outcomes.get("classic-rotation")
        limit = round(SHORT_DEADLINE_S * 1000)
        timed = [
            (round((a.entry.at - a.request_at) * 1000), a)
            for a in self.answers
            if a.entry.scenario == "classic-rotation" and a.request is not None and a.known_id
            and not a.answered_before
        ]  # fmt: skip
        delays = [delay for delay, _ in timed]
        late = [(delay, a) for delay, a in timed if a.request is not None and delay > a.request.time_left_ms]
        timeouts = 0
        if outcome is not None and outcome.record is not None:
            timeouts = sum(outcome.record.seats[s].faults.get(Fault.TIMEOUT, 0) for s in CANDIDATE_SEATS)
        played = outcome is not None and outcome.record is not None
        ok = played and not timeouts and not late and bool(delays)
        if delays:
            actual = (
                f"{len(delays)} answers, the slowest in {max(delays)} ms, "
                f"median {sorted(delays)[len(delays) // 2]} ms"
            )
            if late:
                actual += (
                    f"; {len(late)} came after their time_left_ms (the referee had played for the seat): "
                    "answer sooner, measuring from when the request arrives"
                )
            if timeouts:
                actual += f"; {timeouts} timeout fault(s)"
            if not played and outcome is not None:
                actual += f"; {outcome.problem}"
        else:
            actual = "no answer: " + self._why_not("classic-rotation")
        return Check(
            "deadline",
            f"Meets a {limit} ms decision deadline",
            ok,
            f"every request answered within its time_left_ms ({limit} ms), so no timeout fault",
            actual,
        )

    def update_without_request(self) -> Check:
        entries = self.in_scenario("classic-rotation")
        injected = next(
            (
                e
                for e in entries
                if e.note.startswith("injected") and e.message.WhichOneof("kind") == "update"
            ),
            None,
        )
        expected = "an Update with no request is applied and not answered; the next request is answered"
        title = "Takes an Update without a request in its stride"
        if injected is None:
            return Check("update-without-request", title, False, expected,
                         "not exercised: " + self._why_not("classic-rotation"))  # fmt: skip
        own = sum(
            1 for e in self.entries
            if e.direction == "down" and e.note == "forwarded" and e.message.WhichOneof("kind") == "update"
            and not e.message.update.HasField("request")
        )  # fmt: skip
        return self._went_on(injected, "update-without-request", title, expected,
                             f" (and {own} event-only Updates from the referee)")  # fmt: skip

    def _went_on(self, injected: Entry, name: str, title: str, expected: str, extra: str = "") -> Check:
        """After an injected message: no answer until the next request, which is answered."""
        later = [e for e in self.entries if e.connection == injected.connection and e.at > injected.at]
        next_request = next(
            (e for e in later if e.direction == "down" and _requests_in(e.message) is not None), None
        )
        stray = [
            a for a in self.answers
            if a.entry.connection == injected.connection and injected.at < a.entry.at
            and (next_request is None or a.entry.at < next_request.at) and not a.refused_since
            and a.answered_before
        ]  # fmt: skip
        if next_request is None:
            return Check(
                name, title, False, expected, "no request followed on that stream (the stream ended?)"
            )
        request = _requests_in(next_request.message)
        assert request is not None
        answered = any(
            a.entry.connection == injected.connection and a.decision.request_id == request.request_id
            for a in self.answers
        )
        ok = answered and not stray
        actual = (
            "the next request was answered"
            if answered
            else f"request {request.request_id} was never answered"
        )
        if stray:
            actual += f"; {len(stray)} stray answer(s) before it"
        return Check(name, title, ok, expected, actual + extra)

    def resume(self) -> Check:
        title = "Resumes a dropped stream with its resume token, within the grace period"
        expected = (
            f"a new stream whose Hello carries the Welcome's resume_token within {GRACE_S:g} s, "
            "then an answer to the Resync's request"
        )
        dropped = next((c for c in self.connections if c.ended_by == "probe" and c.welcome is not None), None)
        if dropped is None or dropped.ended_at is None or dropped.welcome is None:
            return Check("resume", title, False, expected, "not exercised: " + self._why_not("resume"))
        token = dropped.welcome.resume_token
        later = [c for c in self.connections if c.opened_at >= dropped.ended_at and c.hello is not None]
        resumed = next((c for c in later if c.hello is not None and c.hello.HasField("resume_token")
                        and c.hello.resume_token == token), None)  # fmt: skip
        if resumed is None:
            fresh = [c for c in later if c.hello is not None and not c.hello.HasField("resume_token")]
            what = "opened a new session without the resume token" if fresh else "did not reconnect"
            return Check("resume", title, False, expected, f"the bot {what}")
        after = round((resumed.opened_at - dropped.ended_at) * 1000)
        problems = []
        if after > GRACE_S * 1000:
            problems.append(f"only after {after} ms")
        if resumed.welcome is None or not resumed.welcome.resumed:
            problems.append("the referee did not resume the session")
        resync = next(
            (e for e in self.entries if e.connection == resumed.number and e.direction == "down"
             and e.message.WhichOneof("kind") == "resync"),
            None,
        )  # fmt: skip
        if resync is not None and resync.message.resync.HasField("request"):
            request_id = resync.message.resync.request.request_id
            if not any(
                a.entry.connection == resumed.number and a.decision.request_id == request_id
                for a in self.answers
            ):
                problems.append(f"the Resync's request {request_id} was not answered")
        outcome = self.outcomes.get("resume")
        seat_problems = self.seat_problems(outcome, allow=frozenset({Fault.DISCONNECTED}))
        if seat_problems:
            problems.append(seat_problems)
        actual = f"resumed {after} ms after the drop" + (": " + "; ".join(problems) if problems else "")
        return Check("resume", title, not problems, expected, actual)

    def keeps_sessions(self) -> Check:
        # Streams of a process that died, and the new sessions of its restart, are the
        # death's (reported by its own scenario), not this check's.
        closed = [
            c for c in self.connections
            if c.closed_by_bot and c.closed_in not in ("end", *_PROBED_LATE, *self.run.died_in)
            and c.ended_by != "probe"
        ]  # fmt: skip
        fresh = [
            e for e in self.entries
            if e.direction == "up" and e.message.WhichOneof("kind") == "hello"
            and not e.message.hello.HasField("resume_token")
            and e.scenario not in ("connect", "end", *_PROBED_LATE) and not e.scenario.startswith("restart:")
        ]  # fmt: skip
        problems = []
        if closed:
            problems.append(f"the bot closed {len(closed)} stream(s) itself")
        if fresh:
            problems.append(f"opened {len(fresh)} new session(s) between matches")
        if problems:
            problems.append("keep each stream open after match_ended: the next match is seated on it")
        played = sum(1 for o in self.run.outcomes if o.record is not None)
        return Check(
            "match-end",
            "Stays seated after match_ended and plays the next match on the same sessions",
            not problems and played > 1,
            "after match_ended the session stays open and is seated in the next match",
            "; ".join(problems) if problems else f"{played} matches played on the same sessions",
        )

    def session_ok(self) -> Check:
        end_start = self.proxy.began.get("end")
        after = [e for e in self.entries if e.scenario == "end" and e.direction == "up"
                 and e.message.WhichOneof("kind") == "hello"]  # fmt: skip
        still_open = [c for c in self.connections if c.status is None]
        problems = []
        if after:
            problems.append(f"it reconnected {len(after)} time(s) after OK")
        if still_open:
            problems.append(f"{len(still_open)} stream(s) still open")
        if self.run.started_here:
            if self.run.exit_code is None:
                problems.append("the process had not exited 10 s after its sessions ended with OK")
            elif self.run.exit_code != 0:
                problems.append(f"the process exited with status {self.run.exit_code}")
        expected = "when the referee ends the sessions with OK, the bot stops: no reconnection" + (
            ", and the process exits with status 0" if self.run.started_here else ""
        )
        exercised = end_start is not None and bool(self.run.outcomes)
        ok = not problems and exercised
        if not exercised:
            actual = "not exercised: no scenario was played, so no session was ended with OK"
        elif problems:
            actual = "; ".join(problems) + ": on status OK, stop (do not reconnect) and exit 0"
        else:
            actual = "stopped" + (" and exited 0" if self.run.started_here else "")
        return Check("session-ok", "Stops when the session ends with OK", ok, expected, actual)

    def environment(self) -> Check:
        name, title = "environment", "Reads the environment a tournament gives a cmd: entry"
        expected = (
            "connects to ODDTRICK_SERVER, says bot_name ODDTRICK_NAME with the token from "
            f"ODDTRICK_TOKEN_FD (or ODDTRICK_TOKEN), and opens ODDTRICK_SEATS ({self.run.seats}) streams"
        )
        if not self.run.started_here:
            return Check(
                name,
                title,
                False,
                expected,
                "not checked: the bot was started by hand (--port)",
                skipped=True,
            )
        hellos = [c.hello for c in self.connections if c.hello is not None]
        problems = []
        if not self.connections:
            problems.append(f"no stream reached ODDTRICK_SERVER ({self.run.address})")
        names = sorted({h.bot_name for h in hellos if h.bot_name != self.run.name})
        if names:
            problems.append(f"bot_name {names[0]!r}, not ODDTRICK_NAME ({self.run.name!r})")
        if any(h.token != self.run.token for h in hellos):
            problems.append("a token other than the one in ODDTRICK_TOKEN_FD and ODDTRICK_TOKEN")
        opened = [
            c for c in self.connections if c.welcome is not None and c.opened_at <= self._first_match_at()
        ]
        if self.connections and len(opened) < self.run.seats:
            problems.append(
                f"{len(opened)} session(s) before the first match, not ODDTRICK_SEATS={self.run.seats}"
            )
        actual = (
            "; ".join(problems)
            if problems
            else f"connected to ODDTRICK_SERVER as ODDTRICK_NAME with the token, {len(opened)} streams"
        )
        return Check(name, title, not problems, expected, actual)

    def event_gap(self) -> Check:
        name, title = "event-gap", "Resumes when Event.sequence skips a number"
        expected = (
            "on an event numbered other than one more than the last, the bot closes the stream and "
            f"resumes the session with its resume_token within {GRACE_S:g} s (a Resync follows)"
        )
        gap = next((e for e in self.in_scenario("event-gap") if "left out" in e.note), None)
        if gap is None:
            return Check(name, title, False, expected, "not exercised: " + self._why_not("event-gap"))
        connection = next(c for c in self.connections if c.number == gap.connection)
        left_out = gap.note.split("event ")[1].split(" ")[0]
        if not connection.closed_by_bot:
            return Check(
                name, title, False, expected,
                f"the bot went on after event {left_out} was missing: compare each Event.sequence with the "
                "last one seen, and on a gap close the stream and resume",
            )  # fmt: skip
        closed_at = connection.ended_at or gap.at
        token = connection.welcome.resume_token if connection.welcome is not None else ""
        resumed = next(
            (c for c in self.connections if c.opened_at >= gap.at and c.hello is not None
             and c.hello.HasField("resume_token") and c.hello.resume_token == token),
            None,
        )  # fmt: skip
        if resumed is None:
            return Check(
                name, title, False, expected,
                "the bot closed the stream but did not resume: open a new stream whose Hello carries the "
                "resume_token",
            )  # fmt: skip
        took = round((resumed.opened_at - gap.at) * 1000)
        problems = self.seat_problems(self.outcomes.get("event-gap"), allow=frozenset({Fault.DISCONNECTED}))
        actual = f"closed the stream and resumed {took} ms after the gap" + (
            f"; {problems}" if problems else ""
        )
        del closed_at
        return Check(name, title, not problems and took <= GRACE_S * 1000, expected, actual)

    def turned_card(self) -> Check:
        name, title = "turned-card", "As dealer, plays the turned card once and never again"
        expected = "a dealer holding the turned trump card plays it once, and never after it has gone"
        outcome = self.outcomes.get("classic-turned-card")
        held = 0
        problems = []
        for connection, start, end, card in self._dealt_turned_cards("classic-turned-card"):
            held += 1
            plays = [a for a in self.answers if a.entry.connection == connection and start <= a.entry.at < end
                     and a.decision.action.HasField("card") and a.decision.action.card == card]  # fmt: skip
            if len(plays) != 1:
                problems.append(f"answered with the turned card {len(plays)} times in a hand")
        if held == 0:
            return Check(
                name, title, False, expected, "not exercised: " + self._why_not("classic-turned-card")
            )
        refused = 0
        if outcome is not None and outcome.record is not None:
            refused = sum(outcome.record.seats[s].refusals for s in CANDIDATE_SEATS)
        if refused:
            problems.append(f"{refused} answer(s) refused by the referee")
        actual = (
            "; ".join(problems)
            if problems
            else f"dealt {held} hand(s) with a turned card; played it once each"
        )
        return Check(name, title, not problems, expected, actual)

    def _dealt_turned_cards(self, scenario: str) -> Iterator[tuple[int, float, float, object]]:
        """(connection, hand start, hand end, turned card) for each hand a bot's seat dealt."""
        for entry in self.in_scenario(scenario):
            if entry.direction != "down" or entry.message.WhichOneof("kind") != "update":
                continue
            for event in entry.message.update.events:
                if not event.HasField("hand_started"):
                    continue
                started = event.hand_started
                seat = self.seat_at(entry.connection, entry)
                if started.HasField("turned_card") and started.dealer == seat:
                    end = next(
                        (e.at for e in self.entries if e.connection == entry.connection and e.at > entry.at
                         and e.direction == "down" and e.message.WhichOneof("kind") == "update"
                         and any(ev.HasField("hand_ended") for ev in e.message.update.events)),
                        float("inf"),
                    )  # fmt: skip
                    yield entry.connection, entry.at, end, started.turned_card

    def scoring(self, game: GameKind) -> Check:
        label = "Classic" if game is GameKind.CLASSIC else "Contract"
        scenarios = [
            name for name, o in self.outcomes.items()
            if o.scenario.config.game is game and name not in _PROBED_LATE
        ]  # fmt: skip
        counts = {"hand_ended": 0, "game_ended": 0, "match_ended": 0}
        outcomes: set[Any] = set()
        for entry in self.entries:
            if (
                entry.scenario in scenarios
                and entry.direction == "down"
                and entry.message.WhichOneof("kind") == "update"
            ):
                for event in entry.message.update.events:
                    kind = event.WhichOneof("kind")
                    if kind in counts:
                        counts[kind] += 1
                    if kind == "hand_ended":
                        outcomes.add(event.hand_ended.outcome)
        problems = []
        unanswered = self._unanswered(scenarios)
        if unanswered:
            problems.append(f"{unanswered} request(s) got no answer at all")
        problems += [o.problem for name in scenarios if (o := self.outcomes[name]).record is None]
        needed = {"hand_ended", "game_ended", "match_ended"}
        missing = [k for k in needed if not counts[k]]
        if game is GameKind.CONTRACT and not outcomes & {
            game_pb2.HAND_OUTCOME_CONTRACT_MADE,
            game_pb2.HAND_OUTCOME_CONTRACT_FAILED,
        }:
            missing.append("a scored contract")
        ok = not problems and not missing
        names = ", ".join(
            game_pb2.HandOutcome.Name(o).removeprefix("HAND_OUTCOME_").lower() for o in sorted(outcomes)
        )
        actual = (
            f"received {counts['hand_ended']} hand results ({names}), {counts['game_ended']} game results, "
            f"{counts['match_ended']} match results, and played on"
        )
        if missing:
            actual += f"; never exercised: {', '.join(missing)}"
        if problems:
            actual += "; " + "; ".join(problems)
        return Check(
            f"scoring-{game.name.lower()}",
            f"{label} Whist scoring events: hand, game and match results",
            ok,
            "hand_ended, game_ended and match_ended events are taken in and every later request is answered",
            actual,
        )

    def _unanswered(self, scenarios: list[str]) -> int:
        """Requests delivered in ``scenarios`` that the bot never answered at all: no Decision
        named it (a late answer is an answer: the deadline judges its timing) and none
        followed it on its stream before the next request (an answer with a wrong id is an
        answer too: request-id judges it)."""
        # Request ids are unique across the referee: one re-sent in a Resync is the same request.
        named = {a.decision.request_id for a in self.answers}
        count = 0
        pending: dict[int, int] = {}
        """Per connection: the request delivered last, while no Decision has followed it."""
        for entry in self.entries:
            if entry.scenario not in scenarios:
                continue
            if entry.direction == "down" and not entry.note.startswith("held back"):
                request = _requests_in(entry.message)
                if request is not None:
                    waiting = pending.get(entry.connection)
                    count += int(waiting is not None and waiting not in named)
                    pending[entry.connection] = request.request_id
            elif entry.direction == "up" and entry.message.WhichOneof("kind") == "decision":
                pending.pop(entry.connection, None)
        return count + sum(1 for waiting in pending.values() if waiting not in named)

    def _tolerates(self, scenario: str, name: str, title: str, expected: str) -> Check:
        """A probe scenario passes when its match is played without a fault and every stream stays open."""
        outcome = self.outcomes.get(scenario)
        dropped = [c for c in self.connections if c.closed_by_bot and c.closed_in == scenario]
        problems = self.seat_problems(outcome)
        if dropped:
            problems = (problems + "; " if problems else "") + f"the bot closed {len(dropped)} stream(s)"
        if scenario in self.run.died_in:
            problems = (problems + "; " if problems else "") + "the bot's process exited"
        probed = sorted(
            {field for e in self.in_scenario(scenario) if "enum values in " in e.note
             for field in e.note.split("enum values in ")[1].rstrip(")").split(", ")}
        )  # fmt: skip
        done = "played the match without a fault" + (f" (probed: {', '.join(probed)})" if probed else "")
        if problems and outcome is not None and (outcome.record is not None or dropped):
            problems += ": ignore what this version does not know, and go on"
        return Check(name, title, not problems, expected, problems or done)

    def unknown_fields(self) -> Check:
        return self._tolerates(
            "unknown-fields",
            "unknown-fields",
            "Tolerates fields it does not know",
            "fields from a later version in every message, event, request and hand state change nothing: "
            "the match is played without a fault",
        )

    def unknown_enums(self) -> Check:
        return self._tolerates(
            "unknown-enums",
            "unknown-enums",
            "Tolerates enum values it does not know, in every field whose values may grow",
            "an unknown value in Welcome.games, HandState.phase, CallMade/CardPlayed.fault, "
            "HandResult.outcome, Honours.status, GameResult.reason, MatchResult.outcome and "
            "FaultCount.kind changes nothing: the match is played without a fault",
        )

    def unknown_message(self) -> Check:
        title = "Ignores a RefereeMessage of a kind it does not know"
        expected = "a message with no member the bot knows is ignored; the next request is answered"
        injected = next(
            (e for e in self.in_scenario("unknown-message") if e.note.startswith("injected")
             and e.message.WhichOneof("kind") is None),
            None,
        )  # fmt: skip
        if injected is None:
            return Check("unknown-message", title, False, expected,
                         "not exercised: " + self._why_not("unknown-message"))  # fmt: skip
        return self._went_on(injected, "unknown-message", title, expected)

    def unknown_decision_kind(self) -> Check:
        title = "Answers a request of a DecisionKind it does not know with a legal action"
        expected = "a request whose kind is unknown is answered with one of its legal_actions"
        probed = next(
            (e for e in self.in_scenario("unknown-decision-kind") if "unknown DecisionKind" in e.note), None
        )
        if probed is None:
            return Check("unknown-decision-kind", title, False, expected,
                         "not exercised: " + self._why_not("unknown-decision-kind"))  # fmt: skip
        request = _requests_in(probed.message)
        assert request is not None
        answer = next(
            (a for a in self.answers if a.entry.connection == probed.connection
             and a.decision.request_id == request.request_id),
            None,
        )  # fmt: skip
        if answer is None:
            return Check(
                "unknown-decision-kind",
                title,
                False,
                expected,
                f"request {request.request_id} was never answered",
            )
        legal = answer.decision.action in request.legal_actions
        actual = f"answered with {_short(answer.decision.action)}" + (
            "" if legal else " (not a legal action)"
        )
        return Check("unknown-decision-kind", title, legal, expected, actual)


def evaluate(run: Run) -> list[Check]:
    """Every check, in the order the report lists them."""
    judge = _Judge(run)
    checks = [judge.environment(), judge.hello(), judge.seats()]
    played = {o.scenario.name for o in run.outcomes}
    checks += [judge.plays(o.scenario) for o in run.outcomes if o.scenario.name not in _PROBED_LATE]
    checks += [judge.plays(s) for s in SCENARIOS if s.name not in _PROBED_LATE and s.name not in played]
    checks += [
        judge.request_ids(),
        judge.legal(),
        judge.refusal_retry(),
        judge.stale_refusal(),
        judge.deadline(),
        judge.update_without_request(),
        judge.resume(),
        judge.event_gap(),
        judge.keeps_sessions(),
        judge.turned_card(),
        judge.scoring(GameKind.CLASSIC),
        judge.scoring(GameKind.CONTRACT),
        judge.unknown_fields(),
        judge.unknown_enums(),
        judge.unknown_message(),
        judge.unknown_decision_kind(),
        judge.unknown_refusal_reason(),
        judge.session_ok(),
    ]
    # An illegal answer is refused, then played for the bot, and a second in a row ends its
    # scenario: what else fails there is its knock-on, not judged until it is fixed.
    spoiled = {answer.entry.scenario for answer in judge.illegal_answers()}
    return after_root(checks, "legal-action", spoiled)
