"""The web page: matches, a replay viewer, live play, standings, deals at both tables, bot
pages, downloads and the leaderboard.

Starlette (routing, templates, streaming) served by Hypercorn's trio worker,
so the page runs in the referee's own trio run when it is served beside it
(``serve --web``, ``tournament --web``): a live page subscribes to a table
exactly as ``Arena.WatchMatch`` does, with no thread or second event loop in
between. ``oddtrick web`` serves a data folder on its own.

Everything the pages need (HTML templates, CSS, a little JavaScript) ships in
this package: no build step, nothing fetched from elsewhere, so it works
offline. The pages show only what a spectator may see; see :mod:`.data`.

The public face: :func:`.app.create_app`, :func:`.server.serve_web` and
:func:`.server.web_beside`, and the ladder's plug, :class:`.leaderboard.LeaderboardSource`
(with :class:`.leaderboard.Leaderboard` and :class:`.leaderboard.LeaderboardRow`, and
:class:`.leaderboard.RatingHistory` for a bot page's rating chart).
The package itself imports nothing, so the command line starts fast.
"""
