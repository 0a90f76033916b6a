"""The pages of a seat played from the browser (docs/web.md, "A seat in the browser").

| route | what |
|---|---|
| ``/play`` | the Play form (``oddtrick web --play``): the game and a seat, against the sample bots |
| ``POST /play`` | starts that match; redirects to the seat's page |
| ``/play/{token}`` | the seat's page: the hand to click, the auction, the trick, the score |
| ``/play/{token}/events`` | the seat's events (the one shape of a match) and questions (server-sent) |
| ``POST /play/{token}/answer`` | ``{"action": "QS"}``: the seat's card or call (409 and why, if refused) |

The token in the address is the seat's secret: the page that has it plays the seat and
sees its hand, and no other. A POST must say it comes from this page's own origin (a
web site elsewhere cannot play a card, or start bots, through the person's browser), and
an answer must be JSON, which a form on another site cannot send without asking first.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

from oddtrick.rules import ConfigError, GameConfig, ParseError, Seat
from oddtrick_referee._exceptions import OptionError, SittingRefused
from oddtrick_referee.competitions.people.at_terminal import DEFAULT_BOT, opponent
from oddtrick_referee.competitions.people.in_browser import Sitting, Sittings
from oddtrick_referee.web.live import RefereeLive

_GAMES = {"classic": "classic Whist", "contract": "Contract Whist"}
_LONGEST_BODY = 2000


class Pages(Protocol):
    """How the seat's routes render a page (:class:`~.app.WebApp` does)."""

    def page(self, template: str, status_code: int = 200, **context: Any) -> HTMLResponse: ...

    def not_found(self, what: str) -> HTMLResponse: ...


class SittingsLive:
    """The live view of the matches people play here, for spectators: the table's own
    spectator stream, as beside any referee."""

    def __init__(self, sittings: Sittings) -> None:
        self._sittings = sittings

    def _live(self) -> RefereeLive | None:
        referee = self._sittings.referee
        return None if referee is None else RefereeLive(referee)

    def can_follow(self, match_id: str) -> bool:
        live = self._live()
        return live is not None and live.can_follow(match_id)

    async def follow(self, match_id: str) -> AsyncIterator[dict[str, Any]]:
        live = self._live()
        if live is None:
            return
        async for event in live.follow(match_id):
            yield event


def same_origin(request: Request) -> bool:
    """Whether a POST comes from a page of this server (its Origin, or else its Referer,
    names the host it was sent to)."""
    source = request.headers.get("origin") or request.headers.get("referer") or ""
    host = request.headers.get("host", "")
    return bool(source) and urlsplit(source).netloc == host


def sends_json(request: Request) -> bool:
    """Whether a request declares a JSON body: its media type ``application/json``, in any
    case and whatever parameters follow it (``application/json; charset=utf-8``, as many
    clients send it), since a parameter does not change what the body is."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0]
    return media_type.strip().lower() == "application/json"


class SeatPages:
    """The routes of seats played from the browser, for the page ``web``."""

    def __init__(self, web: Pages, sittings: Sittings, new: bool) -> None:
        self.web = web
        self.sittings = sittings
        self.new = new
        """Whether the Play button may start matches (``oddtrick web --play``)."""

    def routes(self) -> list[Route]:
        return [
            Route("/play", self.form, methods=["GET"]),
            Route("/play", self.start, methods=["POST"]),
            Route("/play/{token}", self.seat),
            Route("/play/{token}/events", self.events),
            Route("/play/{token}/answer", self.answer, methods=["POST"]),
        ]

    async def form(self, request: Request) -> Response:
        if not self.new:
            return self.web.not_found("Play from the page is not on here (oddtrick web --play turns it on).")
        return self._form("")

    def _form(self, refusal: str) -> Response:
        status = 409 if refusal else 200
        return self.web.page(
            "play.html", status, title="Play", games=_GAMES, seats=list(Seat), refusal=refusal
        )

    async def start(self, request: Request) -> Response:
        if not self.new:
            return PlainTextResponse("play from the page is not on here\n", 404)
        if not same_origin(request):
            return PlainTextResponse("refused: a match is started only from this server's own page\n", 403)
        body = (await request.body())[:_LONGEST_BODY].decode("utf-8", "replace")
        fields = {key: values[0] for key, values in parse_qs(body).items()}
        game = fields.get("game", "")
        if game not in _GAMES:
            return self._form(f"not a game: {game[:20]!r} (classic or contract)")
        try:
            seat = Seat.parse(fields.get("seat", "S"))
            config = GameConfig.from_dict({"game": game, "format": "deals", "deals": 1})
            suffix = secrets.token_hex(3)
            partner = opponent(str(DEFAULT_BOT), f"partner-{suffix}")
            opponents = opponent(str(DEFAULT_BOT), f"opponents-{suffix}")
            desk = self.sittings.start(Sitting(config, seat, partner, opponents, f"guest-{suffix}"))
        except (ParseError, ConfigError, OptionError, SittingRefused) as error:
            return self._form(str(error))
        return RedirectResponse(f"/play/{desk.token}", status_code=303)

    async def seat(self, request: Request) -> Response:
        desk = self.sittings.desks.get(request.path_params["token"])
        if desk is None:
            return self.web.not_found("There is no such seat here (the address of a seat is its secret).")
        urls = {"events": f"/play/{desk.token}/events", "answer": f"/play/{desk.token}/answer"}
        shown = {**urls, "seat": str(desk.seat)}
        return self.web.page(
            "seat.html",
            title="Your seat",
            you=str(desk.seat),
            seat_json=json.dumps(shown).replace("<", "\\u003c"),
        )

    async def events(self, request: Request) -> Response:
        desk = self.sittings.desks.get(request.path_params["token"])
        if desk is None:
            return PlainTextResponse("no such seat\n", 404)
        last = request.headers.get("last-event-id", "")
        after = int(last) if last.isdigit() else 0

        async def stream() -> AsyncIterator[str]:
            yield "retry: 2000\n\n"
            async for kind, shown in desk.follow(after):
                data = json.dumps(shown, ensure_ascii=False)
                if kind == "event":  # numbered: a page that reconnects is sent the events after it
                    yield f"id: {shown['seq']}\ndata: {data}\n\n"
                else:
                    yield f"event: {kind}\ndata: {data}\n\n"
            end = {"error": desk.error, "match_id": desk.match_id}
            yield f"event: end\ndata: {json.dumps(end, ensure_ascii=False)}\n\n"

        return StreamingResponse(
            stream(),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def answer(self, request: Request) -> Response:
        desk = self.sittings.desks.get(request.path_params["token"])
        if desk is None:
            return JSONResponse({"error": "no such seat"}, 404)
        if not same_origin(request) or not sends_json(request):
            return JSONResponse({"error": "a card is played only from the seat's own page, as JSON"}, 403)
        try:
            sent = json.loads((await request.body())[:_LONGEST_BODY])
        except ValueError:
            sent = None
        action = sent.get("action") if isinstance(sent, dict) else None
        if not isinstance(action, str):
            return JSONResponse({"error": 'not an answer: send {"action": "QS"}'}, 400)
        refusal = desk.answer(action)
        if refusal is not None:
            return JSONResponse({"error": refusal}, 409)
        return JSONResponse({"ok": True})
