"""The ladder's deal sets (``--deals-from``) and log retention, on a real referee and socket.

Its matches take the file's deals in order, both tables of a match the same deals
with the partnerships swapped; every table's log names the file's digest, checks
out, and is stored compressed (the ladder's default).
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import trio
from ladder_support import bot_process, ladder_serving, ladder_settings, play_until_closed, register, stop_all
from referee_support import PATIENCE_S, RawBot

from oddtrick._logfile import is_compressed
from oddtrick.deal_sets import read_deal_set
from oddtrick_referee import check_log, read_log
from oddtrick_referee.competitions.ladder.service import default_house_bots

DEALS = [
    ("N", "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 2.5432.5432.5432"),
    ("E", "N:T987.JT9.JT9.JT9 AKQJ.AKQ.AKQ.AKQ 2.5432.5432.5432 6543.876.876.876"),
    ("S", "N:2.5432.5432.5432 6543.876.876.876 AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9"),
]


async def test_ladder_matches_play_the_files_deals_in_order_at_both_tables(tmp_path: Path) -> None:
    file = tmp_path / "set.pbn"
    file.write_text(
        "\n\n".join(f'[Board "{n}"]\n[Dealer "{d}"]\n[Deal "{deal}"]' for n, (d, deal) in enumerate(DEALS, 1))
    )
    deal_set = read_deal_set(file)
    settings = ladder_settings(tmp_path / "data", trusted=True, deal_set=deal_set)
    tokens = register(settings, "alice", "bob")
    stop = threading.Event()
    async with ladder_serving(settings) as ladder:
        address = ladder.referee.address
        bots = [RawBot(address, name, tokens[name]) for name in ("alice", "bob") for _ in range(4)]
        async with trio.open_nursery() as players:
            for bot in bots:
                players.start_soon(trio.to_thread.run_sync, play_until_closed, bot, stop)
            with trio.fail_after(PATIENCE_S):
                outcomes = await ladder.wait_outcomes(2)
            stop.set()
            ladder.referee.finish()
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    indices = {}
    for outcome in outcomes[:2]:
        tables = [tmp_path / "data" / "logs" / f"{outcome.match_id}-t{n}.jsonl" for n in (1, 2)]
        seen = []
        for log in tables:
            assert is_compressed(log)
            records = list(read_log(log))
            assert records[0]["deal_set"]["sha256"] == digest
            assert check_log(log).ok
            fixed = records[-1]["fixed_deals"]
            seen.append((tuple(fixed["indices"]), [d["deal"] for d in fixed["deals"]]))
            assert [r["dealer"] for r in records if r["type"] == "hand_start"] == [
                DEALS[i][0] for i in fixed["indices"]
            ]
        assert seen[0] == seen[1]  # both tables of the match, the same deals
        indices[outcome.match_id] = seen[0][0]
    # Two deals a match, in file order, cycling: (0, 1) then (2, 0).
    assert sorted(indices.values()) == [(0, 1), (2, 0)]


async def test_the_retention_policy_deletes_old_logs_against_the_house_at_start_and_keeps_results(
    tmp_path: Path,
) -> None:
    """One entrant plays the house bots; the ladder started again with --keep-house-logs 0
    deletes those logs in its first pass (compressed, as the ladder wrote them), and the
    match, its result and its index rows stay."""
    data = tmp_path / "data"
    settings = ladder_settings(data, house_bots=default_house_bots(7), house_seats=1)
    tokens = register(settings, "alice")
    async with ladder_serving(settings) as ladder:
        alice = bot_process(ladder.referee.address, "Heuristic", "alice", tokens["alice"], seats=1)
        try:
            with trio.fail_after(PATIENCE_S * 2):
                [outcome, *_] = await ladder.wait_outcomes(1)
            ladder.referee.finish()
        finally:
            stop_all([alice])
    tables = [data / "logs" / f"{outcome.match_id}-t{n}.jsonl" for n in (1, 2)]
    assert all(is_compressed(log) for log in tables)
    size = sum(log.stat().st_size for log in tables)
    kept = ladder_settings(data, keep_house_logs_s=0.0)
    async with ladder_serving(kept) as again:
        with trio.fail_after(PATIENCE_S):
            await again.pruned.wait()
        deleted, freed = again.logs_pruned
        [match] = [m for m in again.store.matches() if m.match_id == outcome.match_id]
        rows = [again.referee.store.get(f"{outcome.match_id}-t{n}") for n in (1, 2)]
    assert not any(log.exists() for log in tables)
    assert deleted >= 2  # this match's two tables, and any other it finished meanwhile
    assert freed >= size
    assert match.status == "finished"
    assert match.deals  # its deal scores, which the ratings came from, are still there
    assert all(row is not None and "log_deleted" in row["details"] for row in rows)
