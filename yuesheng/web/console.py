"""The operator's console: an ASGI app (Starlette) over a live Player, state pushed on a WebSocket.

Routes (one table, ``routes``):

- ``GET /`` — the page (Jinja2, autoescaped): current and next cue, the clock
  (elapsed, planned against actual, over/under-run, projected end), what plays
  and what stops it, the rite's timeline with a moving now-line; GO, STOP ALL,
  FADE and jump buttons, also on the keyboard (space GO, Esc STOP ALL, f FADE).
- ``GET /state`` — the state as JSON.
- ``POST /command`` — ``{"command": "go"|"stop"|"fade"|"goto", "cue": …}``.
- ``WS /ws`` — the state every ``PUSH`` seconds; commands as JSON text frames.

Security: a token, when set, is required on every request and WebSocket —
``?token=`` (the page then keeps it in a cookie), the cookie, or
``Authorization: Bearer`` — else 403. The command line sets one whenever the
server binds anything but loopback. Whatever the address, ``SameOrigin`` stops
another web page the operator has open from driving the rite: a request whose
``Host`` is a name other than ``localhost`` or the address listened on (DNS
rebinding) gets 403, and so does a request or WebSocket whose ``Origin`` is not
the console's own; a command is a JSON body (``application/json``) of at most
``MAX_BODY`` bytes, a WebSocket frame text of at most as many. No route reads or
writes a file; the log is written by the player.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from yuesheng.cuesheet.zhong import programme
from yuesheng.live.control import Command, Control
from yuesheng.live.player import PlayerStatus, Playing
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Timeline
from yuesheng.timeline import clock as show_clock
from yuesheng.web.sheet import environment, timeline_view, with_fonts

PUSH = 0.2  # seconds between state pushes
COOKIE = "yuesheng-token"
COMMANDS = {c.value: c for c in (Command.GO, Command.STOP, Command.FADE, Command.GOTO)}
MAX_BODY = 16 * 1024  # bytes: a command body or WebSocket frame is a few dozen


def _host_name(host_header: str) -> str:
    """'127.0.0.1:8080' → '127.0.0.1', '[::1]:80' → '::1', 'Example.org' → 'example.org'."""
    return (urlsplit(f"//{host_header}").hostname or "") if host_header else ""


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class SameOrigin:
    """ASGI middleware: no other site's page may read or drive the console (403 otherwise).

    The ``Host`` must be an IP address, ``localhost`` or one of *hosts* (the address listened on): a name that
    resolves here only by DNS rebinding is refused. An ``Origin``, which browsers send on every WebSocket and
    cross-site request, must be this console's own (its scheme-less host and port equal ``Host``).
    """

    def __init__(self, app: ASGIApp, hosts: tuple[str, ...] = ()) -> None:
        self.app, self.hosts = app, {"localhost", *(h.lower() for h in hosts)}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or (why := self._refused(HTTPConnection(scope))) is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: the server answers 403
            return
        await Response(f"403 Forbidden: {why}", 403, media_type="text/plain; charset=utf-8")(scope, receive, send)

    def _refused(self, conn: HTTPConnection) -> str | None:
        host = conn.headers.get("host", "")
        name = _host_name(host)
        if not (_is_address(name) or name in self.hosts):
            return f"this console answers to its address, not to the name {name!r}"
        origin = conn.headers.get("origin")
        if origin is not None and (urlsplit(origin).netloc.lower() != host.lower() or not host):
            return "a page of another site may not drive this console"
        return None


class TokenGuard:
    """ASGI middleware: every HTTP request and WebSocket must carry the token (403 otherwise)."""

    def __init__(self, app: ASGIApp, token: str | None) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.token is None or scope["type"] not in ("http", "websocket") or self._carries(HTTPConnection(scope)):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: the server answers 403
            return
        await Response("403 Forbidden: this console needs its token (?token=…)", 403)(scope, receive, send)

    def _carries(self, conn: HTTPConnection) -> bool:
        assert self.token is not None
        auth = conn.headers.get("authorization", "")
        offered = [conn.query_params.get("token", ""), conn.cookies.get(COOKIE, ""),
                   auth[7:] if auth.startswith("Bearer ") else ""]
        return any(o and hmac.compare_digest(o.encode(), self.token.encode()) for o in offered)


class Showing(Protocol):
    """What the console reads of the player: its status, a snapshot safe to take from the server's thread."""

    def status(self) -> PlayerStatus: ...


class Console:
    """The state a page shows, computed from the timeline and the player's status."""

    def __init__(self, timeline: Timeline, player: Showing, control: Control, *, token: str | None = None,
                 hosts: tuple[str, ...] = (),
                 wall: Any = time.time) -> None:
        self.timeline, self.player, self.control, self.token, self.wall = timeline, player, control, token, wall
        self.hosts = hosts
        self.by_id = {t.cue.id: t for t in timeline.cues}
        self.template = environment().get_template("console.html.j2")
        self.shown = json.dumps([self.cue_json(t.cue.id) for t in timeline.cues], ensure_ascii=False)  # for the font

    # -- state ---------------------------------------------------------------------------------------

    def cue_json(self, cue_id: str | None) -> dict[str, Any] | None:
        """What the page shows of a cue."""
        if cue_id is None:
            return None
        t = self.by_id[cue_id]
        names = self.timeline.names
        what = f"{t.cue.music.value} {programme(t.cue)}".strip() if t.cue.music else t.cue.action
        return {"id": t.cue.id, "section": t.cue.section, "action": what,
                "who": [names.get(p, p) for p in (t.cue.who or t.cue.performers)],
                "where": names.get(t.cue.where, t.cue.where), "words": t.cue.words,
                "cite": t.cue.cite.where,
                "quote": t.cue.cite.quote, "planned_start": show_clock(t.start_tick),
                "planned_s": round((t.end_tick - t.start_tick) / TICKS_PER_SECOND, 3)}

    def state(self) -> dict[str, Any]:
        """Everything the page needs, as JSON-ready data."""
        status = self.player.status()
        now, begin = status.now, status.begin_tick
        total = (self.timeline.duration_ticks - begin) / TICKS_PER_SECOND
        out: dict[str, Any] = {
            "rite": self.timeline.rite, "current": self.cue_json(status.current), "next": self.cue_json(status.next),
            "playing": [self._playing(p) for p in status.playing], "ended": status.ended,
            "priority": status.priority, "planned_total_s": round(total, 3), "elapsed_s": None,
            "in_cue_s": None, "overrun_s": None, "projected_total_s": None, "projected_end": None,
            "position_s": 0.0,
        }
        if (status.current is None or status.current_started is None or status.first_started is None
                or status.first_tick is None):
            return out
        current: CueTiming = self.by_id[status.current]
        rite_start = status.first_started - (status.first_tick - begin) / TICKS_PER_SECOND
        in_cue = now - status.current_started
        planned_at = (current.start_tick - begin) / TICKS_PER_SECOND
        planned_dur = (current.end_tick - current.start_tick) / TICKS_PER_SECOND
        overrun = (status.current_started - rite_start) - planned_at + max(0.0, in_cue - planned_dur)
        projected_total = total + overrun
        end = datetime.fromtimestamp(self.wall(), UTC) + timedelta(seconds=projected_total - (now - rite_start))
        out.update(elapsed_s=round(now - rite_start, 3), in_cue_s=round(in_cue, 3), overrun_s=round(overrun, 3),
                   projected_total_s=round(projected_total, 3),
                   position_s=round(planned_at + min(in_cue, planned_dur), 3),
                   projected_end=end.isoformat(timespec="seconds"))
        return out

    def _playing(self, item: Playing) -> dict[str, str]:
        cue = self.by_id[item.cue].cue
        until = self.by_id.get(item.until)
        return {"cue": cue.id, "what": f"{cue.music.value if cue.music else ''} {programme(cue)}".strip(),
                "until": f"{until.cue.id}: {until.cue.action}" if until else ""}

    def command(self, data: Any) -> bool:
        """A command from the page; False if malformed, unknown, or a GO inside the guard."""
        if not isinstance(data, dict) or data.get("command") not in COMMANDS:
            return False
        command = COMMANDS[data["command"]]
        cue = data.get("cue", "")
        if command is Command.GOTO and (not isinstance(cue, str) or cue not in self.by_id):
            return False
        return self.control.submit(command, "page", cue if command is Command.GOTO else "")

    # -- the app -------------------------------------------------------------------------------------

    def app(self) -> ASGIApp:
        """The ASGI app, behind the token guard."""
        routes = [
            Route("/", self.page),
            Route("/state", self.get_state),
            Route("/command", self.post_command, methods=["POST"]),
            WebSocketRoute("/ws", self.socket),
        ]
        return SameOrigin(TokenGuard(Starlette(routes=routes), self.token), self.hosts)

    async def page(self, request: Request) -> Response:
        status = self.player.status()
        actions = [{"id": t.cue.id, "label": f"{show_clock(t.start_tick)} {t.cue.id} {t.cue.action}"}
                   for t in (self.by_id[cue_id] for cue_id in status.actions)]
        html = self.template.render(rite=self.timeline.rite, actions=actions,
                                    begin_s=status.begin_tick / TICKS_PER_SECOND,
                                    **timeline_view(self.timeline), now_line=True)
        response = HTMLResponse(with_fonts(html, more=self.shown))
        if self.token and request.query_params.get("token"):
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
        return response

    async def get_state(self, _request: Request) -> Response:
        return JSONResponse(self.state())

    async def post_command(self, request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return JSONResponse({"accepted": False, "error": "expected an application/json body"}, 415)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY:
                return JSONResponse({"accepted": False, "error": f"a body of at most {MAX_BODY} bytes"}, 413)
        try:
            data = json.loads(body)
        except (ValueError, RecursionError):
            return JSONResponse({"accepted": False, "error": "expected a JSON object"}, 400)
        return JSONResponse({"accepted": self.command(data)})

    async def socket(self, websocket: WebSocket) -> None:
        await websocket.accept()
        sender = asyncio.create_task(self._push(websocket))
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                try:
                    accepted = isinstance(text, str) and len(text) <= MAX_BODY and self.command(json.loads(text))
                except (ValueError, RecursionError):
                    accepted = False
                await websocket.send_text(json.dumps({"accepted": accepted}))
        except WebSocketDisconnect:
            pass
        finally:
            sender.cancel()

    async def _push(self, websocket: WebSocket) -> None:
        while True:
            await websocket.send_text(json.dumps({"state": self.state()}, ensure_ascii=False))
            await asyncio.sleep(PUSH)
