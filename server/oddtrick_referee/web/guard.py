"""What every response of the page carries, and which Host names it answers.

Two ASGI wrappers round the application:

- :class:`SecurityHeaders` adds a Content-Security-Policy (only the page's own
  script, styles and data; no framing), ``X-Content-Type-Options: nosniff`` and
  a Referrer-Policy to every response, static files and live streams included.
  Bot names and comments come from bots; if one ever slipped past the
  templates' escaping, the policy still keeps an injected script from running.
- :class:`HostCheck` answers 421 to a request whose Host header is not a name
  the page is served under. Without it, a web site the operator visits could
  point a name of its own at 127.0.0.1 (DNS rebinding) and read the page and
  its logs from the browser, as if from the same site. The
  names answered are the bound address, ``localhost`` and the loopback
  addresses, any IP address when bound to every address (a rebinding needs a
  name, not an address), and those the operator lists in ``ODDTRICK_WEB_HOSTS``.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

HOSTS_VARIABLE = "ODDTRICK_WEB_HOSTS"
"""Extra names the page answers under, comma-separated (``page.example.org,cards.lan``)."""

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
)
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


class SecurityHeaders:
    """Adds :data:`HEADERS` to every HTTP response of ``app`` (keeping any it set itself)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(name, value) for name, value in HEADERS if name not in present]
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


def host_name(header: str) -> str:
    """The name in a Host header, without its port or IPv6 brackets, lower-cased."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    if header.count(":") == 1:
        return header.partition(":")[0]
    return header


def configured_hosts() -> list[str]:
    """The names the operator listed in ``ODDTRICK_WEB_HOSTS``."""
    return [name.strip() for name in os.environ.get(HOSTS_VARIABLE, "").split(",") if name.strip()]


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """Answers only requests whose Host is one the page is served under; 421 otherwise."""

    def __init__(self, app: ASGIApp, bound_host: str, extra: Iterable[str] = ()) -> None:
        self.app = app
        self.names = _LOOPBACK | {bound_host.lower()} | {host_name(name) for name in extra}
        self.any_address = bound_host in ("0.0.0.0", "::", "")

    def allows(self, name: str) -> bool:
        return name in self.names or (self.any_address and _is_address(name))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hosts = [value.decode("latin-1") for key, value in scope.get("headers", []) if key == b"host"]
        name = host_name(hosts[0]) if len(hosts) == 1 else ""
        if name and self.allows(name):
            await self.app(scope, receive, send)
            return
        shown = name if len(hosts) == 1 else ("no Host header" if not hosts else "several Host headers")
        body = (
            f"421 Misdirected Request: this page is not served under the name {shown!r}. It answers "
            f"only {', '.join(sorted(self.names))}"
            f"{' and IP addresses' if self.any_address else ''}, so that another web site cannot "
            f"reach it through a name of its own (DNS rebinding). To serve it under another name, "
            f"list the name in the {HOSTS_VARIABLE} environment variable (comma-separated) when "
            "starting the page.\n"
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 421,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                    *HEADERS,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


__all__ = ["CONTENT_SECURITY_POLICY", "HOSTS_VARIABLE", "HostCheck", "SecurityHeaders", "configured_hosts"]
