"""The double-dummy skill measure in the tournament standings (``oddtrick tournament --dd-skill``).

The figures come from a real tournament (the referee on a socket, the sample
bots as separate processes) and are checked against ``oddtrick analyze``'s
own totals of the same logs; the arithmetic of a deal's two plays and of the
interval is checked by hand on small data.
"""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from oddtrick_referee.competitions.scoring.dd_skill import dd_samples, dd_skill, summarise
from oddtrick_referee.competitions.scoring.dd_skill_logs import entry_namer
from oddtrick_referee.competitions.scoring.standings import compute_standings, t_quantile

ROOT = Path(__file__).resolve().parents[1]
BOTS = ["--bot", f"random={ROOT / 'sample_bots' / 'random_bot.py'}"]
BOTS += ["--bot", f"heuristic={ROOT / 'sample_bots' / 'heuristic_bot.py'}"]


def tournament(data_dir: Path, *extra: str, python: tuple[str, ...] = ("-m", "oddtrick")) -> Any:
    command = [sys.executable, *python, "tournament", "--game", "classic", "--deals", "3", *BOTS]
    return subprocess.run(
        [*command, "--data-dir", str(data_dir), *extra], capture_output=True, text=True, timeout=300
    )


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    pytest.importorskip("endplay")
    data_dir = tmp_path_factory.mktemp("dd") / "data"
    result = tournament(data_dir, "--dd-skill", "--json")
    assert result.returncode == 0, result.stderr
    return data_dir, json.loads(result.stdout)


def test_each_entry_s_loss_per_deal_is_what_the_analysis_of_its_logs_totals(
    played: tuple[Path, dict[str, Any]],
) -> None:
    from oddtrick.analysis import analyze_logs

    data_dir, standings = played
    totals = analyze_logs(sorted((data_dir / "logs").glob("*.jsonl")), par=False)["bots"]
    assert "dd_skill_method" in standings
    for row in standings["entries"]:
        skill = row["dd_skill"]
        # Three duplicate deals, each played twice (two seats each time): a deal's loss is
        # the mean of its two plays, so the mean over deals is the total over 2 x 3 plays.
        assert skill["deals"] == row["deals"] == 3
        assert skill["lost_per_deal"] == pytest.approx(totals[row["entry"]]["lost"] / 6)
        low, high = skill["ci95"]
        assert low <= skill["lost_per_deal"] <= high


def test_the_standings_show_the_column_beside_points_and_say_what_it_is(tmp_path: Path) -> None:
    pytest.importorskip("endplay")
    result = tournament(tmp_path / "data", "--dd-skill")
    assert result.returncode == 0, result.stderr
    header = next(line for line in result.stdout.splitlines() if "pts/deal" in line)
    assert header.index("95% CI") < header.index("DD lost/deal") < header.index("faults")
    assert "double-dummy; lower is better" in result.stdout
    plain = tournament(tmp_path / "again")
    assert plain.returncode == 0, plain.stderr
    assert "DD lost/deal" not in plain.stdout


def test_without_the_strong_extra_it_says_what_to_install_and_plays_nothing(tmp_path: Path) -> None:
    """endplay hidden from the interpreter, as on an install without the extra."""
    hide = "import sys; sys.modules['endplay'] = None; from oddtrick._cli import main; sys.exit(main())"
    result = tournament(tmp_path / "data", "--dd-skill", python=("-c", hide))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "oddtrick tournament: --dd-skill needs the double-dummy solver: pip install 'oddtrick[strong]' "
        "(or pip install endplay)"
    ]
    assert not (tmp_path / "data").exists()


def _analysis(*logs: tuple[str, dict[str, str], list[dict[str, int]]]) -> dict[str, Any]:
    """analyze_logs's shape: per log its match id, players and each hand's loss per seat."""
    return {
        "logs": [
            {
                "match_id": match,
                "players": players,
                "hands": [{"hand": n, "lost": lost} for n, lost in enumerate(hands, 1)],
            }
            for match, players, hands in logs
        ]
    }


def test_a_deal_s_two_plays_are_averaged_and_both_seats_of_a_partnership_count() -> None:
    table0 = {"N": "a~0", "S": "a~0", "E": "b~0", "W": "b~0"}
    table1 = {"N": "b~1", "S": "b~1", "E": "a~1", "W": "a~1"}
    analysis = _analysis(
        ("m0", table0, [{"N": 1, "S": 2, "E": 0, "W": 0}, {"N": 0, "S": 0, "E": 4, "W": 0}]),
        ("m1", table1, [{"N": 0, "S": 0, "E": 1, "W": 0}, {"N": 2, "S": 0, "E": 1, "W": 1}]),
    )
    group = {"m0": ("a|b", 1), "m1": ("a|b", 1)}

    def deal_of(match: str | None, hand: int) -> tuple[str, int, int]:
        return (*group[match or ""], hand)

    samples = dd_samples(analysis, entry_namer(["a", "b"]), deal_of)
    # a: deal 1 lost 3 at table 0 and 1 at table 1 -> 2; deal 2 lost 0 and 2 -> 1.
    assert samples["a"] == {("a|b", 1, 1): 2.0, ("a|b", 1, 2): 1.0}
    # b: deal 1 lost 0 and 0; deal 2 lost 4 and 2 -> 3.
    assert samples["b"] == {("a|b", 1, 1): 0.0, ("a|b", 1, 2): 3.0}
    skills = dd_skill(["a", "b", "c"], analysis, entry_namer(["a", "b", "c"]), deal_of)
    half = t_quantile(0.975, 1) * math.sqrt(0.5) / math.sqrt(2)  # sd of (2, 1) is sqrt(1/2)
    assert skills["a"].lost_per_deal == 1.5
    assert skills["a"].ci_low == pytest.approx(1.5 - half)
    assert skills["a"].ci_high == pytest.approx(1.5 + half)
    assert skills["c"].lost_per_deal is None  # never played
    assert summarise("one", [2.0]).ci_low is None
    assert entry_namer(["a"])("stranger~0") is None


def test_the_measure_is_added_to_the_standings_only_when_asked_for() -> None:
    base = compute_standings(["a", "b"], [], {}, [], duplicate=True)
    assert "dd_skill" not in base.to_json()["entries"][0]
    assert "dd_skill_method" not in base.to_json()
    assert "DD lost/deal" not in base.render()
    skills = {"a": summarise("a", [1.0, 2.0, 3.0]), "b": summarise("b", [])}
    shown = dataclasses.replace(base, dd_skill=skills)
    by_entry = {row["entry"]: row for row in shown.to_json()["entries"]}
    assert by_entry["a"]["dd_skill"]["lost_per_deal"] == 2.0
    assert by_entry["b"]["dd_skill"] == {"deals": 0, "lost_per_deal": None, "ci95": None}
    text = shown.render()
    assert "DD lost/deal" in text
    assert "2.00" in text


def test_a_log_that_cannot_be_solved_leaves_the_standings_without_the_measure(tmp_path: Path) -> None:
    pytest.importorskip("endplay")
    data_dir = tmp_path / "data"
    first = tournament(data_dir)
    assert first.returncode == 0, first.stderr
    spoiled = sorted((data_dir / "logs").rglob("*.jsonl"))[0]
    spoiled.write_text('{"type": "not a match log"}\n', encoding="utf-8")
    again = tournament(data_dir, "--dd-skill", "--json")  # resumes: nothing left to play
    assert again.returncode == 1
    assert "--dd-skill:" in again.stderr
    assert "standings without it" in again.stderr
    rows = json.loads(again.stdout)["entries"]
    assert [row["deals"] for row in rows] == [3, 3]
    assert all("dd_skill" not in row for row in rows)
