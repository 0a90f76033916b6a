"""The web page's routes (docs/web.md lists them).

| route | what |
|---|---|
| ``/`` | redirects to ``/matches`` |
| ``/matches?status=&game=&bot=&page=`` | matches, newest first, filtered, 50 a page (sealed ones too) |
| ``/matches/{id}?hand=&card=`` | the replay viewer at a position, or the live view, or why neither |
| ``/matches/{id}/replay.json`` | a finished match's one JSON document (the viewer's data) |
| ``/matches/{id}/analysis.json`` | its double-dummy analysis, ``pending`` or ``busy`` (web/analysis.py) |
| ``/matches/{id}/play-on.json?hand=&card=&seats=&bot=&others=`` | a hand played on (web/play_on.py) |
| ``/matches/{id}/log.jsonl`` | the match log, as written |
| ``/matches/{id}/match.pbn`` | the match as PBN |
| ``/matches/{id}/events`` | live spectator events (server-sent events) |
| ``/matches/{id}/deals/{n}`` | deal ``n`` of a tournament or ladder table at both tables (the traveller) |
| ``/tournaments``, ``/tournaments/{id}`` | tournaments, their standings and every deal's two results |
| ``/download/tournament/{id}`` | a tournament's logs and PBN in one zip |
| ``/bots/{name}`` | a bot's matches, record, faults, think times and rating |
| ``/leaderboard`` | the ladder's leaderboard, when a ladder is plugged in |
| ``/runs``, ``/runs/{name}`` | runs on workers: jobs, standings or SPRT line, workers (:mod:`.runs`) |
| ``/static/…`` | the page's CSS and script |
| ``/play…`` | a seat played from the browser, when given :class:`~.in_browser.Sittings` (:mod:`.seat`) |

Any other route is the styled "Not found" page. Every response carries the
headers of :mod:`.guard`.
"""

from __future__ import annotations

import datetime
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import anyio.to_thread
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from oddtrick.rules import GameKind
from oddtrick.rules._words import fault_text
from oddtrick_referee._exceptions import NoSuchMatch, NotVisible, ReplayError
from oddtrick_referee.competitions.people.in_browser import Sittings
from oddtrick_referee.competitions.tournaments.page import LeaderboardSource, RatingHistory, RatingPoint
from oddtrick_referee.replay.json_export import match_to_json
from oddtrick_referee.replay.pbn import match_to_pbn
from oddtrick_referee.replay.play_on_players import BOTS as PLAY_ON_BOTS
from oddtrick_referee.web.analysis import Analyses
from oddtrick_referee.web.bots import bot_page
from oddtrick_referee.web.data import MATCH_ID, PAGE_SIZE, WebData
from oddtrick_referee.web.deals import tournament_deals, tournament_play, traveller
from oddtrick_referee.web.downloads import safe_file_name, tournament_zip
from oddtrick_referee.web.guard import SecurityHeaders
from oddtrick_referee.web.ladder_play import ladder_play, ladder_traveller
from oddtrick_referee.web.live import LiveSource
from oddtrick_referee.web.play_on import PlayOns, read_question
from oddtrick_referee.web.runs import RunPages
from oddtrick_referee.web.seat import SeatPages
from oddtrick_referee.web.views import auction_rows, hand_head, match_head, position_view

STATIC = Path(__file__).parent / "static"
_LONGEST_NAME = 1000
"""Longer tournament names are not looked up."""
_STATUSES = {"in_progress": "in progress", "finished": "finished", "sealed": "sealed"}


def _when(ms: int | None) -> str:
    if ms is None:
        return ""
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("oddtrick_referee.web", "templates"),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = _when
    env.filters["suit_class"] = lambda card: "red" if card[-1] in "HD" else "black"
    env.filters["pretty"] = _pretty
    env.filters["fault_text"] = fault_text
    env.filters["bot_url"] = bot_url
    env.filters["points"] = _points
    return env


def bot_url(name: str) -> str:
    """A bot page's address: any name a bot may have, in one path segment."""
    return "/bots/" + quote(name, safe="")


def _points(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


_SYMBOL = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def _pretty(card: str) -> str:
    rank = "10" if card[0] == "T" else card[0]
    return rank + _SYMBOL[card[1]]


def _script_json(value: Any) -> str:
    """JSON for a ``<script type="application/json">`` element, every "<" escaped: a bot's
    comment such as "<!--<script>" would otherwise keep the HTML parser from ending the
    element where it ends, and the page with it."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


Found = TypeVar("Found")


async def _of_match(
    read: Callable[[str], Found], match_id: str, *unreadable: type[Exception]
) -> Found | PlainTextResponse:
    """``read(match_id)``, in a worker thread, or the 404 a match's downloads answer when
    it fails: ``no such match`` for one unknown here, else why (a match not visible here,
    or one of ``unreadable``, such as a log that cannot be replayed)."""
    told: tuple[type[Exception], ...] = (NotVisible, *unreadable)
    try:
        return await anyio.to_thread.run_sync(read, match_id)
    except NoSuchMatch:
        return PlainTextResponse("no such match\n", 404)
    except told as error:
        return PlainTextResponse(f"{error}\n", 404)


def _int(value: str | None, default: int, low: int, high: int) -> int:
    try:
        number = int(value) if value is not None else default
    except ValueError:
        return default
    return max(low, min(number, high))


class WebApp:
    """The pages of one data folder, with live play and a leaderboard when given."""

    def __init__(
        self,
        data_dir: Path,
        live: LiveSource | None = None,
        leaderboard: LeaderboardSource | None = None,
        tournament: str | None = None,
        page_size: int = PAGE_SIZE,
    ) -> None:
        self.data = WebData(data_dir, page_size)
        self.analyses = Analyses(self.data)
        self.play_ons = PlayOns(self.data)
        self.live = live
        self.leaderboard_source = leaderboard
        self.tournament = tournament
        self.env = _environment()
        self.play = False
        """Whether the Play button shows (``oddtrick web --play``)."""
        self.runs: RunPages | None = None
        """The runs on workers of a database (``oddtrick web --database``)."""

    def close(self) -> None:
        """The page stops serving: what it started stops too (the analyses' solver, the play-ons)."""
        self.analyses.close()
        self.play_ons.close()

    def page(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = self.env.get_template(template).render(
            leaderboard=self.leaderboard_source is not None,
            tournament=self.tournament,
            play=self.play,
            runs=self.runs is not None,
            **context,
        )
        return HTMLResponse(html, status_code=status_code)

    def not_found(self, what: str) -> HTMLResponse:
        return self.page("message.html", 404, title="Not found", message=what)

    # ------------------------------------------------------------------ pages

    async def home(self, request: Request) -> Response:
        if self.tournament:
            # Any name a tournament may have, spaces, '#' and '/' included, in one path segment.
            return RedirectResponse(f"/tournaments/{quote(self.tournament, safe='')}", status_code=302)
        if self.runs is not None and not self.data.index_path.exists():  # a workers' database alone
            return RedirectResponse("/runs", status_code=302)
        return RedirectResponse("/matches", status_code=302)

    async def matches(self, request: Request) -> Response:
        params = request.query_params
        status = params.get("status", "")
        status = status if status in _STATUSES else ""
        game = params.get("game", "")
        game = game if game in {kind.value for kind in GameKind} else ""
        bot = params.get("bot", "")[:100]
        page = _int(params.get("page"), 1, 1, 1_000_000)
        rows, more = await anyio.to_thread.run_sync(self.data.list_matches, status, bot, game, page)
        query = {"status": status, "game": game, "bot": bot}
        return self.page(
            "matches.html",
            title="Matches",
            rows=rows,
            page=page,
            more=more,
            query=query,
            statuses=_STATUSES,
            games=[kind.value for kind in GameKind],
        )

    async def match(self, request: Request) -> Response:
        match_id = request.path_params["match_id"]
        row = await anyio.to_thread.run_sync(self.data.match, match_id)
        if row is None:
            return self.not_found(f"There is no match {match_id!r} here.")
        if row.category == "sealed":
            return self.page("sealed.html", title=f"Match {row.match_id} (sealed)", row=row)
        if row.category == "in_progress":
            live = self.live is not None and self.live.can_follow(match_id)
            return self.page("live.html", title=f"Match {row.match_id} (live)", row=row, live=live)
        try:
            view = await self.render_replay(match_id, request)
        except ReplayError as error:
            return self.page(
                "message.html",
                title=f"Match {row.match_id}",
                message=f"This match cannot be replayed: {error}",
                row=row,
                downloads=row.status == "aborted",
            )
        except (NoSuchMatch, NotVisible) as error:
            return self.page("message.html", 404, title=f"Match {match_id}", message=str(error))
        return view

    async def render_replay(self, match_id: str, request: Request) -> HTMLResponse:
        match = await anyio.to_thread.run_sync(self.data.replay, match_id)
        document = match_to_json(match)
        hand_number = _int(request.query_params.get("hand"), 1, 1, max(1, len(match.hands)))
        hand = match.hand(hand_number) if match.hands else None
        card = _int(request.query_params.get("card"), 0, 0, hand.positions if hand else 0)
        duplicate = await anyio.to_thread.run_sync(tournament_play, self.data, match_id)
        ladder = await anyio.to_thread.run_sync(ladder_play, self.data, self.leaderboard_source, match_id)
        analysis = await anyio.to_thread.run_sync(self.analyses.status, match_id)
        return self.page(
            "match.html",
            title=f"Match {match_id}",
            match=match,
            view=match_head(match),
            document=document,
            document_json=_script_json(document),
            analysis=analysis,
            analysis_json=_script_json(analysis),
            play_on_bots=PLAY_ON_BOTS,
            hand=hand_head(match, hand) if hand else None,
            position=position_view(match, hand, card) if hand else None,
            auction_rows=auction_rows(hand) if hand else [],
            card_number=card,
            tournament_play=duplicate,
            ladder_play=ladder,
        )

    async def replay_json(self, request: Request) -> Response:
        """The match's one JSON document (``oddtrick export --json``'s): the page's data."""
        match_id = request.path_params["match_id"]
        match = await _of_match(self.data.replay, match_id, ReplayError)
        if isinstance(match, Response):
            return match
        return Response(json.dumps(match_to_json(match), ensure_ascii=False), media_type="application/json")

    async def analysis_json(self, request: Request) -> Response:
        """The match's double-dummy analysis, or why there is none, or ``pending`` while it is
        computed (the page asks again)."""
        match_id = request.path_params["match_id"]
        found = await _of_match(self.analyses.status, match_id)
        if isinstance(found, Response):
            return found
        return Response(
            json.dumps(found, ensure_ascii=False),
            media_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    async def play_on_json(self, request: Request) -> Response:
        """A hand played on from a step by the bots asked for (``pending`` while it is played:
        the page asks again); 400 with what to give for bad input, 404 for a match that is
        not a finished, published one."""
        match_id = request.path_params["match_id"]
        status = 200
        try:
            question = read_question(match_id, request.query_params)
            found = await anyio.to_thread.run_sync(self.play_ons.status, question)
        except ReplayError as error:
            found, status = {"status": "error", "message": str(error)}, 400
        except NoSuchMatch:
            found, status = {"status": "error", "message": f"There is no match {match_id!r} here."}, 404
        except NotVisible as error:
            found, status = {"status": "error", "message": str(error)}, 404
        return Response(
            json.dumps(found, ensure_ascii=False),
            status_code=status,
            media_type="application/json",
            headers={"Cache-Control": "no-store"},
        )

    async def log(self, request: Request) -> Response:
        match_id = request.path_params["match_id"]
        text = await _of_match(self.data.log_text, match_id)
        if isinstance(text, Response):
            return text
        return Response(
            text,
            media_type="application/x-ndjson; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{match_id}.jsonl"'},
        )

    async def pbn(self, request: Request) -> Response:
        match_id = request.path_params["match_id"]
        match = await _of_match(self.data.replay, match_id, ReplayError)
        if isinstance(match, Response):
            return match
        return Response(
            match_to_pbn(match),
            media_type="application/x-pbn; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="{match_id}.pbn"'},
        )

    async def events(self, request: Request) -> Response:
        match_id = request.path_params["match_id"]
        live = self.live
        if live is None or not MATCH_ID.fullmatch(match_id):
            return PlainTextResponse("no live play here\n", 404)
        row = await anyio.to_thread.run_sync(self.data.match, match_id)
        if row is None or row.category != "in_progress" or not live.can_follow(match_id):
            return PlainTextResponse("this match is not in progress and open to spectators\n", 404)

        async def stream() -> AsyncIterator[str]:
            yield "retry: 2000\n\n"
            async for event in live.follow(match_id):
                event["sent_ms"] = time.time() * 1000
                yield f"id: {event['seq']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"
            yield "event: end\ndata: {}\n\n"

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def tournaments(self, request: Request) -> Response:
        rows = await anyio.to_thread.run_sync(self.data.tournaments)
        return self.page("tournaments.html", title="Tournaments", rows=rows)

    async def standings(self, request: Request) -> Response:
        tournament_id = request.path_params["tournament_id"]
        if len(tournament_id) > _LONGEST_NAME:  # (any other name is only looked up among the stored)
            return self.not_found("There is no such tournament here.")
        found = await anyio.to_thread.run_sync(self.data.standings, tournament_id)
        if found is None:
            return self.not_found(f"There is no tournament {tournament_id!r} here.")
        deals = await anyio.to_thread.run_sync(tournament_deals, self.data, tournament_id)
        playing = await anyio.to_thread.run_sync(self.data.playing_tables, tournament_id)
        return self.page(
            "standings.html",
            title=f"Tournament {tournament_id}",
            t=found,
            deals=deals,
            playing=playing,
            download=f"/download/tournament/{quote(tournament_id, safe='')}",
        )

    async def deal(self, request: Request) -> Response:
        match_id = request.path_params["match_id"]
        hand = _int(request.path_params["hand"], 0, 0, 1_000_000)
        if not MATCH_ID.fullmatch(match_id) or hand < 1:
            return self.not_found("There is no such deal here.")
        found = await anyio.to_thread.run_sync(
            ladder_traveller, self.data, self.leaderboard_source, match_id, hand
        )
        if found is None:
            found = await anyio.to_thread.run_sync(traveller, self.data, match_id, hand)
        if found is None:
            return self.not_found(f"Match {match_id!r} played no tournament or ladder deal {hand} here.")
        if found.deal is None:
            return self.page(
                "message.html",
                title=f"Deal {hand} of match {match_id}",
                message="This deal is one of a duplicate set still being played: both tables "
                "are shown once every play of the set is over.",
            )
        return self.page("traveller.html", title=f"Deal {hand} of match {match_id}", t=found, hand=hand)

    async def download_tournament(self, request: Request) -> Response:
        tournament_id = request.path_params["tournament_id"]
        if len(tournament_id) > _LONGEST_NAME:
            return self.not_found("There is no such tournament here.")
        found = await anyio.to_thread.run_sync(self.data.table_match_ids, tournament_id)
        if found is None:
            return self.not_found(f"There is no tournament {tournament_id!r} here.")
        name = safe_file_name(tournament_id)
        return StreamingResponse(
            tournament_zip(self.data, tournament_id, found),
            media_type="application/zip",
            headers={"Content-Disposition": f'attachment; filename="{name}.zip"'},
        )

    async def bot(self, request: Request) -> Response:
        name = request.path_params["name"]
        source = self.leaderboard_source

        def read() -> Any:
            board = source.leaderboard() if source is not None else None
            history: list[RatingPoint] | None = None
            if (
                board is not None
                and isinstance(source, RatingHistory)
                and any(r.bot == name for r in board.rows)
            ):
                history = list(source.rating_history(name))
            return bot_page(self.data, name, board, history, self.analyses.cached)

        found = await anyio.to_thread.run_sync(read)
        if found is None:
            return self.not_found(f"There is no bot {name!r} here.")
        return self.page("bot.html", title=f"Bot {name}", b=found)

    async def run_list(self, request: Request) -> Response:
        if self.runs is None:
            return self.not_found("This page shows no workers' database (oddtrick web --database URL).")
        rows = await anyio.to_thread.run_sync(self.runs.runs)
        return self.page("runs.html", title="Runs on workers", rows=rows)

    async def run(self, request: Request) -> Response:
        name = request.path_params["name"]
        if self.runs is None or len(name) > _LONGEST_NAME:
            return self.not_found("There is no such run here.")
        every_worker = request.query_params.get("workers") == "all"
        found = await anyio.to_thread.run_sync(self.runs.run, name, every_worker)
        if found is None:
            return self.not_found(f"There is no run {name!r} in this database.")
        return self.page("run.html", title=f"Run {name}", r=found)

    async def leaderboard(self, request: Request) -> Response:
        source = self.leaderboard_source
        if source is None:
            return self.page("leaderboard.html", title="Leaderboard", board=None)
        board = await anyio.to_thread.run_sync(source.leaderboard)
        return self.page("leaderboard.html", title=board.title or "Leaderboard", board=board)


def create_app(
    data_dir: Path,
    live: LiveSource | None = None,
    leaderboard: LeaderboardSource | None = None,
    tournament: str | None = None,
    page_size: int = PAGE_SIZE,
    sittings: Sittings | None = None,
    play: bool = False,
    runs: RunPages | None = None,
) -> Starlette:
    """The web page's ASGI application for one data folder.

    ``live`` follows matches in progress; ``leaderboard`` is the ladder's (the
    page says there is none without it); ``tournament`` makes ``/`` open that
    tournament's standings (``tournament --web``); ``page_size`` matches are listed a page.
    ``sittings`` serves the pages of seats people play from the browser, and ``play``
    puts the Play button on the page to start such matches (``oddtrick web --play``).
    ``runs`` adds the pages of the runs on workers of a database (``oddtrick web --database``).
    """
    web = WebApp(data_dir, live, leaderboard, tournament, page_size)
    web.play = play and sittings is not None
    web.runs = runs
    routes = [
        Route("/", web.home),
        Route("/matches", web.matches),
        Route("/matches/{match_id}", web.match),
        Route("/matches/{match_id}/replay.json", web.replay_json),
        Route("/matches/{match_id}/analysis.json", web.analysis_json),
        Route("/matches/{match_id}/play-on.json", web.play_on_json),
        Route("/matches/{match_id}/log.jsonl", web.log),
        Route("/matches/{match_id}/match.pbn", web.pbn),
        Route("/matches/{match_id}/events", web.events),
        Route("/matches/{match_id}/deals/{hand}", web.deal),
        Route("/tournaments", web.tournaments),
        Route("/tournaments/{tournament_id:path}", web.standings),
        Route("/download/tournament/{tournament_id:path}", web.download_tournament),
        Route("/bots/{name:path}", web.bot),
        Route("/leaderboard", web.leaderboard),
        Route("/runs", web.run_list),
        Route("/runs/{name:path}", web.run),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    if sittings is not None:
        routes[-1:-1] = SeatPages(web, sittings, web.play).routes()

    async def not_found(request: Request, error: Exception) -> Response:
        return web.not_found("There is no such page here.")

    app = Starlette(
        routes=routes,
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers={404: not_found},
    )
    app.state.web = web
    return app
