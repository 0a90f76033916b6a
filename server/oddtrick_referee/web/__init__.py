"""The web page: matches, a replay viewer, live play, standings and the leaderboard.

Starlette (routing, templates, streaming) served by Hypercorn's trio worker,
so the page runs in the referee's own trio run when it is served beside it
(``serve --web``, ``tournament --web``): a live page subscribes to a table
exactly as ``Arena.WatchMatch`` does, with no thread or second event loop in
between. ``oddtrick web`` serves a data folder on its own.

Everything the pages need (HTML templates, CSS, a little JavaScript) ships in
this package: no build step, nothing fetched from elsewhere, so it works
offline. The pages show only what a spectator may see; see :mod:`.data`.
"""

from oddtrick_referee.web.app import create_app
from oddtrick_referee.web.leaderboard import Leaderboard, LeaderboardRow, LeaderboardSource
from oddtrick_referee.web.server import serve_web, web_beside

__all__ = [
    "Leaderboard",
    "LeaderboardRow",
    "LeaderboardSource",
    "create_app",
    "serve_web",
    "web_beside",
]
