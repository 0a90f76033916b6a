"""A whole tournament in one file: every table's log and one PBN of every deal, as a zip.

The zip is written as it is sent (``zipfile`` writes to a stream it cannot seek, with
data descriptors), one table at a time, so a large tournament never sits whole in
memory. Only what a spectator may see goes in: a play whose set is not yet released
is left out, and ``README.txt`` in the zip says which and why.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator

from oddtrick_referee._exceptions import NoSuchMatch, NotVisible, ReplayError
from oddtrick_referee.replay.pbn import PBN_VERSION, hand_to_pbn
from oddtrick_referee.web.data import WebData


class _Sink:
    """A write-only stream whose bytes are taken away as they are written."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.written = 0

    def write(self, data: bytes) -> int:
        self.chunks.append(bytes(data))
        self.written += len(data)
        return len(data)

    def tell(self) -> int:
        return self.written

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        out = b"".join(self.chunks)
        self.chunks.clear()
        return out


def safe_file_name(name: str) -> str:
    """A tournament's name as a download's file name: letters, digits, ``-``, ``_`` and ``.``."""
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)
    return cleaned.strip(".") or "tournament"


def tournament_zip(data: WebData, tournament_id: str, match_ids: list[str]) -> Iterator[bytes]:
    """The zip's bytes, a table at a time: ``logs/MATCH.jsonl`` for each table that may be
    seen, ``TOURNAMENT.pbn`` with every hand of those tables, and ``README.txt``."""
    sink = _Sink()
    withheld: list[tuple[str, str]] = []
    pbn = [f"% PBN {PBN_VERSION}", "% EXPORT", f"% oddtrick tournament {tournament_id}", ""]
    stem = safe_file_name(tournament_id)
    with zipfile.ZipFile(sink, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for match_id in match_ids:
            try:
                text = data.log_text(match_id)
            except (NoSuchMatch, NotVisible) as error:
                withheld.append(
                    (match_id, str(error) if isinstance(error, NotVisible) else "not in the index")
                )
                continue
            archive.writestr(f"{stem}/logs/{match_id}.jsonl", text)
            try:
                match = data.replay(match_id)
            except (NoSuchMatch, NotVisible, ReplayError) as error:
                withheld.append((match_id, f"in the logs only, not in the PBN: {error}"))
            else:
                for hand in match.hands:
                    pbn += hand_to_pbn(match, hand)
                    pbn.append("")
            yield sink.take()
        archive.writestr(f"{stem}/{stem}.pbn", "\n".join(pbn))
        readme = [
            f"Tournament {tournament_id}: the log of every table (logs/, JSON lines, as the referee",
            f"wrote them) and every hand of those tables in {stem}.pbn (docs/pbn.md).",
        ]
        if withheld:
            readme += ["", "Left out:"] + [f"- {match_id}: {why}" for match_id, why in withheld]
        archive.writestr(f"{stem}/README.txt", "\n".join(readme) + "\n")
    yield sink.take()


__all__ = ["safe_file_name", "tournament_zip"]
