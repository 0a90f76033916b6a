"""One referee's part in the rating race (tests/test_ladder_store.py): run as a process.

``python ladder_rating_race.py DATABASE_URL REFEREE MATCHES``: opens, claims and finishes
MATCHES matches of the same eight entrants the other racer rates, each rating every
entrant one point up from what it read, slowly (the read and the write far apart, where
a lost update would happen), and prints ``done`` when it is.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from oddtrick_referee.storage.database import open_database
from oddtrick_referee.storage.ladder_store import EntrantRecord, LadderStore, RatingChange

NAMES = ("a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4")
LINEUP = {
    "tables": [{"N": "a1", "S": "a2", "E": "b1", "W": "b2"}, {"N": "b3", "S": "b4", "E": "a3", "W": "a4"}],
    "teams": [["a1", "a2", "a3", "a4"], ["b1", "b2", "b3", "b4"]],
}


def one_point_up(current: dict[str, EntrantRecord]) -> list[RatingChange]:
    time.sleep(0.005)  # between the read and the write: another referee's turn
    return [
        RatingChange(name, e.mu + 1.0, e.sigma, "win" if name < "b" else "loss")
        for name, e in current.items()
    ]


def main() -> None:
    url, referee, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = LadderStore(open_database(url, Path("."), "unused.sqlite3"), 25.0, 25.0 / 3)
    for number in range(count):
        match_id = f"{referee}-{number}"
        assert store.open_match(match_id, f"c-{match_id}", LINEUP, {}, [], referee, now_ms=number)
        store.finish_match(match_id, "finished", "s", 1, "a", [(1, 1)], one_point_up, {}, now_ms=number)
    store.db.close()
    print("done", flush=True)


if __name__ == "__main__":
    main()
