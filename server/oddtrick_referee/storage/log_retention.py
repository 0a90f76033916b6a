"""The ladder's retention policy for logs (``--keep-house-logs``), over the referee's index.

An entrant's games against house bots are the bulk of a quiet ladder's logs; their rows
stay (the index and the ladder's records still say what happened), only the files go.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from pathlib import Path

from oddtrick_referee.storage.match_index import MatchStore


def prune_house_logs(index: MatchStore, house: Collection[str], cutoff_ms: int) -> tuple[int, int]:
    """Delete the logs of the matches that ended before ``cutoff_ms`` in which no entrant but
    one sat with the ``house`` bots (the ladder seats at least one entrant at every match: these
    are an entrant's games against house bots, the bulk of a quiet ladder's logs); their rows
    (and the ladder's records of them) stay. Matches among two entrants or more keep their logs.
    Returns (logs, bytes) deleted.

    The file is removed first, then the row marked: a stop in between leaves an unmarked
    row whose file is gone, which the next pass finds and marks.
    """
    deleted = freed = 0
    if not house:
        return 0, 0
    for match_id, log_path in index.house_match_logs(house, cutoff_ms):
        path = Path(log_path)
        try:
            size = path.stat().st_size
            path.unlink()
        except FileNotFoundError:
            pass
        else:
            deleted += 1
            freed += size
        index.mark_log_deleted(match_id, int(time.time() * 1000))
    return deleted, freed
