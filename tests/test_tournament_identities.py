"""The two plays of a duplicate deal are played under separately authenticated identities:
the process a tournament starts for one play cannot connect as the other."""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest

from oddtrick.rules import GameConfig
from oddtrick_referee.competitions.tournaments.tournament import (
    TournamentSettings,
    parse_entry,
    remote_entry,
    run_tournament,
)
from oddtrick_referee.play.table import TableRules

ROOT = Path(__file__).resolve().parents[1]
RANDOM_BOT = ROOT / "sample_bots" / "random_bot.py"

PROBE = """
import os, sys
import grpc
from oddtrick.v1 import referee_pb2

server, name, token, seats = (
    os.environ[key] for key in ("ODDTRICK_SERVER", "ODDTRICK_NAME", "ODDTRICK_TOKEN", "ODDTRICK_SEATS")
)
twin = name[:-1] + ("1" if name.endswith("0") else "0")
hello = referee_pb2.Hello(
    bot_name=twin, bot_version="probe", token=token, games=[1, 2],
    protocol=referee_pb2.ProtocolVersion(name="oddtrick.v1"),
)
with grpc.insecure_channel(server) as channel:
    play = channel.stream_stream(
        "/oddtrick.v1.Referee/Play",
        request_serializer=referee_pb2.BotMessage.SerializeToString,
        response_deserializer=referee_pb2.RefereeMessage.FromString,
    )
    call = play(iter([referee_pb2.BotMessage(hello=hello)]))
    try:
        outcome = next(call).WhichOneof("kind")
    except grpc.RpcError as error:
        outcome = error.code().name
    call.cancel()
print(f"twin hello: {outcome}", flush=True)  # (its output is kept in the data folder)
os.execv(sys.executable, [
    sys.executable, "-m", "oddtrick", "bot", BOT,
    "--server", server, "--name", name, "--token", token, "--seats", seats,
])
"""


async def test_a_local_entry_cannot_connect_as_its_twin_play(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(f"BOT = {str(RANDOM_BOT)!r}\n{PROBE}")
    entries = (parse_entry(f"probe=cmd:{sys.executable} {probe}"), parse_entry(f"plain={RANDOM_BOT}"))
    plan = TournamentSettings(
        entries=entries,
        config=GameConfig.classic(),
        deals=1,
        set_size=1,
        tables=1,
        rules=TableRules(deadline_s=5.0, grace_s=2.0),
        seed="twins",
    )
    standings = await run_tournament(plan, tmp_path / "data", progress_stream=io.StringIO())
    outcomes = {
        path.stem: re.findall(r"^twin hello: (\w+)$", path.read_text(), re.M)
        for path in (tmp_path / "data" / "bot-output").glob("probe~*.log")
    }
    assert outcomes == {"probe~0": ["UNAUTHENTICATED"], "probe~1": ["UNAUTHENTICATED"]}
    assert {row.entry: row.deals for row in standings.rows} == {"probe": 1, "plain": 1}


def test_remote_entries_get_two_different_tokens_under_duplicate() -> None:
    made = remote_entry("visitor", duplicate=True)
    assert list(made.identities(duplicate=True)) == ["visitor~0", "visitor~1"]
    assert len(set(made.identities(duplicate=True).values())) == 2
    given = remote_entry("visitor=t0,t1", duplicate=True)
    assert given.identities(duplicate=True) == {"visitor~0": "t0", "visitor~1": "t1"}
    assert remote_entry("visitor=t", duplicate=False).identities(duplicate=False) == {"visitor": "t"}
    for bad in ("visitor=t", "visitor=t,t", "visitor=a,b,c", "vis~itor", "visitor=a,"):
        with pytest.raises(ValueError, match=r"visitor|vis~itor"):
            remote_entry(bad, duplicate=True)
