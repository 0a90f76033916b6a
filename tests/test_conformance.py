"""`oddtrick conformance` tells a correct bot from a broken one, and says which check failed.

The bots are real processes (tests/broken_bot.py, each with one deliberate
bug) on a real socket; the starter bots' passing runs are in test_starter_bots.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
import trio

from oddtrick_referee.conformance.knock_on import scenarios_read
from oddtrick_referee.conformance.proxy import ProbingProxy
from oddtrick_referee.conformance.runner import Options, conformance_run, run_conformance

ROOT = Path(__file__).resolve().parents[1]
BROKEN_BOT = ROOT / "tests" / "broken_bot.py"
FORWARD_COMPATIBILITY = {
    "unknown-fields",
    "unknown-enums",
    "unknown-message",
    "unknown-decision-kind",
    "unknown-refusal-reason",
}


def broken(bug: str) -> str:
    return f"{sys.executable} {BROKEN_BOT} --bug {bug}"


def conformance(*args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oddtrick", "conformance", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


@pytest.mark.parametrize(
    ("bug", "failing"),
    [
        # The wrong id is refused, so that request times out: its match has a fault too.
        ("wrong-id", {"request-id", "play:classic-turned-card"}),
        # A bot that never resumes cannot resume after a gap either.
        ("never-resume", {"resume", "event-gap"}),
        # The bot dies at each unknown enum value it is sent; started again after each death,
        # it fails those probes only, and ends well.
        ("strict-enums", {"unknown-enums", "unknown-decision-kind", "unknown-refusal-reason"}),
        # The refused request times out: that match has a fault too.
        ("no-retry", {"refusal-retry", "unknown-refusal-reason", "play:classic-cut"}),
        ("ignore-gaps", {"event-gap"}),
        # A late answer names a real request: the deadline and its match fail, not the ids.
        ("late", {"deadline", "play:classic-rotation"}),
    ],
)
def test_a_broken_bot_fails_the_checks_of_its_bug_and_only_those(bug: str, failing: set[str]) -> None:
    report = trio.run(run_conformance, Options(command=broken(bug)))
    assert set(report.failed()) == failing, [c for c in report.checks if not c.passed]
    assert not report.passed


SPOILED_BY_REVOKES = {
    "several-seats",
    *(f"play:{name}" for name in ("classic-turned-card", "classic-cut", "classic-rotation")),
    *(f"play:{name}" for name in ("contract-doubling", "contract-rubber")),
    "match-end",
    "turned-card",
    "scoring-classic",
    "scoring-contract",
}
"""What a bot that revokes whenever it can spoils every run: each main scenario is cut short
after two illegal cards in a row, so no match is played to its end."""


@pytest.mark.parametrize(
    ("bug", "spoiled"),
    [
        ("illegal-card", SPOILED_BY_REVOKES),
        # One revoke, refused, then a legal card: its match has a refusal, and nothing else.
        ("revoke-once", {"play:classic-turned-card", "turned-card"}),
    ],
)
def test_an_illegal_card_is_the_one_failure_and_what_it_spoiled_is_not_judged(
    bug: str, spoiled: set[str]
) -> None:
    """An illegal card used to fail a dozen checks besides legal-action: the matches it
    spoiled (refused, played for the bot, stopped) failed every check that reads them."""
    report = trio.run(run_conformance, Options(command=broken(bug)))
    assert report.failed() == ["legal-action"], [c for c in report.checks if not c.passed and not c.skipped]
    not_judged = {c.name for c in report.checks if c.after}
    assert spoiled <= not_judged
    if bug == "revoke-once":
        assert not_judged == spoiled
    assert all(c.skipped and c.after == "legal-action" for c in report.checks if c.name in not_judged)
    # Every check that reads a scenario's play says which (knock_on.READS): a new one is listed there.
    apart = {c.name for c in report.checks if not scenarios_read(c.name)}
    assert apart == {"environment", "hello", "request-id", "legal-action", "session-ok"}
    shown = io.StringIO()
    report.write_text(shown)
    text = shown.getvalue()
    assert text.count("not judged (after legal-action failed)") == len(not_judged), text
    assert f"0 of {len(report.judged)} checks" not in text
    assert f", 1 failed, {len(not_judged)} not judged after legal-action failed" in text, text


def test_a_bot_that_never_answers_is_stopped_in_each_scenario_once_that_is_known() -> None:
    report, run = trio.run(conformance_run, Options(command=broken("never-answers")))
    assert not report.passed
    assert run.outcomes
    for outcome in run.outcomes:
        assert outcome.record is None, outcome.scenario.name
        assert outcome.problem.startswith("stopped after 2 fallbacks in a row"), outcome.problem
    deadline = next(c for c in report.checks if c.name == "deadline")
    assert "stopped after 2 fallbacks in a row" in deadline.actual, deadline


def _bots_running(marker: bytes) -> list[str]:
    """The processes whose command line holds ``marker``."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            with contextlib.suppress(OSError):
                if marker in (proc / "cmdline").read_bytes().replace(b"\0", b" "):
                    found.append(proc.name)
    return found


def test_a_wrapper_that_does_not_exec_leaves_no_bot_behind() -> None:
    # (The bot's own process id is its PID namespace's: the bot is found by its command line.)
    bot = f"{broken('none')} --pid-file /dev/null"
    assert _bots_running(bot.encode()) == []
    report = trio.run(run_conformance, Options(command=f"sh -c '{bot}; echo wrapper done'"))
    assert report.passed, [c for c in report.checks if not c.passed]
    assert _bots_running(bot.encode()) == []


async def test_bytes_that_are_no_message_get_invalid_argument_and_no_traceback(tmp_path, caplog):
    from referee_support import RawBot, in_thread, referee_running

    caplog.set_level(logging.DEBUG)
    async with referee_running(tmp_path, ["candidate"]) as referee:
        proxy = ProbingProxy(referee.address, "candidate")
        port = proxy.start("127.0.0.1", 0)
        try:
            bot = RawBot(f"127.0.0.1:{port}", "candidate")
            bot.send_bytes(b"\xff\xff\xff")
            code, details = await in_thread(bot.wait_status)
        finally:
            proxy.stop()
    assert code is grpc.StatusCode.INVALID_ARGUMENT, details
    assert "BotMessage" in details
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


def test_the_report_says_what_was_expected_and_what_the_bot_did_and_exits_1() -> None:
    result = conformance("--bot-command", broken("never-resume"))
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    failed = next(i for i, line in enumerate(lines) if line.strip().startswith("FAIL"))
    assert "resume" in lines[failed]
    assert "expected:" in lines[failed + 1]
    assert "resume_token" in lines[failed + 1]
    assert "actual:" in lines[failed + 2]
    assert "new session without the resume token" in lines[failed + 2]
    assert "does not conform: 24 of 26 checks passed, 2 failed." in result.stdout
    assert "conformance: resume:" in result.stderr  # progress, scenario by scenario
    assert "Traceback" not in result.stderr


def test_a_bot_that_cannot_start_is_told_why_first_not_in_a_failure_per_check() -> None:
    command = f"{sys.executable} -c \"import sys; sys.exit('needs endplay: pip install oddtrick[strong]')\""
    result = conformance("--bot-command", command)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2] == "No scenario was played: the bot never got its sessions."
    assert "exited with status 1" in result.stdout
    assert result.stdout.index("needs endplay") < result.stdout.index("none of the")
    assert not [line for line in lines if line.strip().startswith("FAIL")]
    assert re.search(r"does not conform: none of the \d+ checks could be judged", result.stdout)


def test_json_for_ci_and_exit_0_when_every_check_passes() -> None:
    result = conformance("--bot-command", broken("none"), "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["passed"] is True
    assert report["summary"] == {"passed": len(report["checks"]), "failed": 0, "skipped": 0, "not_judged": 0}
    names = {check["name"] for check in report["checks"]}
    assert {
        "resume",
        "request-id",
        "deadline",
        "session-ok",
        "several-seats",
        "environment",
        "event-gap",
    } | FORWARD_COMPATIBILITY <= names
    assert all(
        set(check) == {"name", "title", "passed", "expected", "actual", "skipped", "after"}
        for check in report["checks"]
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_a_bot_started_by_hand_connects_to_the_given_port() -> None:
    port = free_port()
    check = subprocess.Popen(
        [sys.executable, "-m", "oddtrick", "conformance", "--port", str(port), "--json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert check.stderr is not None
    waiting = check.stderr.readline()  # the line that says how to connect comes first
    for needed in (f"127.0.0.1:{port}", "'candidate'", "'conformance-token'", "2 seats"):
        assert needed in waiting, waiting
    env = dict(
        os.environ,
        ODDTRICK_SERVER=f"127.0.0.1:{port}",
        ODDTRICK_NAME="candidate",
        ODDTRICK_TOKEN="conformance-token",
        ODDTRICK_SEATS="2",
    )
    bot = subprocess.run(
        [sys.executable, str(BROKEN_BOT), "--bug", "none"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    stdout, stderr = check.communicate(timeout=60)
    assert check.returncode == 0, stdout + stderr
    report = json.loads(stdout)
    assert report["passed"] is True
    # What a bot started by hand was given cannot be judged here: not counted as passed.
    [environment] = [c for c in report["checks"] if c["name"] == "environment"]
    assert environment["skipped"]
    assert not environment["passed"]
    assert report["summary"] == {
        "passed": len(report["checks"]) - 1,
        "failed": 0,
        "skipped": 1,
        "not_judged": 0,
    }
    assert bot.returncode == 0, bot.stderr


def test_help_and_a_bad_port() -> None:
    shown = conformance("--help")
    assert shown.returncode == 0
    for option in ("--bot-command", "--port", "--json", "--name", "--token"):
        assert option in shown.stdout
    bad = conformance("--port", "70000")
    assert bad.returncode == 2
    assert "--port must be from 1 to 65535" in bad.stderr
    neither = conformance()
    assert neither.returncode == 2
    assert neither.stderr.splitlines() == [
        "oddtrick conformance: which bot? a Python file (oddtrick conformance my_bot.py), "
        '--bot-command "CMD" for a bot in another language, or --port PORT to start it yourself'
    ]


def test_a_report_names_cards_and_calls_as_a_person_reads_them():
    """A failed check quotes the bot's answer as 6♦ or 7♠, not as protobuf text; what
    does not decode (an empty action) is still shown, as its text."""
    from oddtrick._codec import action_to_wire
    from oddtrick.rules import Call, Card
    from oddtrick.v1 import cards_pb2, referee_pb2
    from oddtrick_referee.conformance.checks import _short

    six = action_to_wire(Card.parse("6D"))
    assert _short(six) == "6♦"
    assert _short(referee_pb2.Decision(request_id=7, action=six)) == "request 7: 6♦"
    assert _short(action_to_wire(Call.parse("7S"))) == "7♠"
    assert _short(cards_pb2.Action()) == ""  # nothing set: protobuf's text of it, empty
