"""The operator's console: an ASGI app (Starlette) over a live Player, state pushed on a WebSocket.

Routes (one table, ``routes``):

- ``GET /`` — the page (Jinja2, autoescaped): a connection band; NOW and NEXT with n/N, section and note; armed
  music with its countdown; what sounds and what stops it; the clocks (elapsed, planned against actual, an overrun
  highlighted, over/under-run, projected end); the cue list (every GO point with its pre-wait, length, how it
  starts and its note; a playhead moved by the arrows, a tap or a search, which GO fires); the rite's timeline,
  dark, with a moving now-line; a fixed bar with STOP ALL (Esc, from anywhere) beside a large GO (space, whatever
  has focus but a text field; a held key never repeats it), every command acknowledged above it; FADE (f), and a
  jump to the playhead confirmed in a dialog that silences only if asked.
- ``GET /state`` — the state as JSON.
- ``POST /command`` — ``{"command": "go"|"stop"|"fade"|"goto", "cue": …}`` (a GO's ``cue``, if any, is the GO
  point to fire: the playhead; the ``web`` names of
  ``commands.COMMANDS``; the page's buttons and keys are drawn from that table, given it as JSON).
- ``GET /observe``, ``GET /cast/PERSON``, ``GET /view/plate/CUE[?person=…]``, ``WS /view/ws[?person=…]`` — the
  read-only views (``web/views``): the stage manager's and a performer's, their state pushed as the console's is;
  a frame on their socket is never a command. They take the view token (``VIEW_PATHS``) as well as the console's.
- ``WS /ws`` — the state, pushed whenever it changes (and every ``PUSH`` seconds for the clocks); commands as
  JSON text frames, answered ``{"accepted": …, "why": …}`` (with the frame's integer ``id``, if it had one); a
  heartbeat ``{"ping": T}`` answered at once ``{"pong": T, "server": NOW}``, from which the page reckons the
  server's clock and shows a connection that has gone quiet for ``STALE`` seconds as stale.

A GO from the page carries ``pressed``, the moment it was pressed on the server's clock, and ``uncertainty``, how far
its reckoning of that clock may be off (half its round trip); one that arrives more than ``LATE`` seconds after it (a
frozen server, a stalled network), or whose press time lies in the future by more than its uncertainty (at least
``AHEAD``), is refused, said to the page and logged as ``refused``: a GO never runs late, nor from a forged clock.

Security: a token, when set, is required on every request and WebSocket —
``?token=`` (the page then keeps it in a cookie), the cookie, or
``Authorization: Bearer`` — else 403. The command line sets one whenever the
server binds anything but loopback. Whatever the address, ``SameOrigin`` stops
another web page the operator has open from driving the rite: a request whose
``Host`` is a name other than ``localhost`` or the address listened on (DNS
rebinding) gets 403, and so does a request or WebSocket whose ``Origin`` is not
the console's own; a command is a JSON body (``application/json``) of at most
``MAX_BODY`` bytes, a WebSocket frame text of at most as many. No route reads or
writes a file; the log is written by the player (a refused GO by the console, through the same log).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import math
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import HTTPConnection, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from yuesheng.errors import YueshengError
from yuesheng.live.commands import COMMANDS, Command, by_web, page_table, value_of
from yuesheng.live.control import Control
from yuesheng.live.cueing import FADE, PlayerStatus, Playing, label, music_name
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Timeline
from yuesheng.timeline import clock as show_clock
from yuesheng.web.sheet import environment, timeline_view, with_fonts
from yuesheng.web.sockets import FLOOD, IDLE, POLICY, RATE, Bucket, Gate, Sockets, client_id, room
from yuesheng.web.views import Views

if TYPE_CHECKING:
    from yuesheng.staging.persons import Person

PUSH = 0.5  # seconds between state pushes when nothing changes (the page moves its clocks between them)
SHARE = 0.05  # seconds the state made for one socket is sent to others of its kind unchanged
LATE = 1.0  # seconds: a page's GO that reaches the console later than this after it was pressed is refused
STALE = 1.0  # seconds without a word from the console after which the page shows the connection as stale
AHEAD = 0.25  # seconds: a GO pressed further than this (or the page's clock uncertainty) in the future is refused
COOKIE = "yuesheng-token"
MAX_BODY = 16 * 1024  # bytes: a command body or WebSocket frame is a few dozen
KEY_NAMES = {"Space": "space", "Escape": "Esc"}  # a command's key as its button's title says it
VIEW_PATHS = ("/observe", "/cast/", "/view/")  # the read-only views: the view token opens these, and only these
DONE = {Command.STOP: "all notes and all sound off", Command.FADE: f"fading out over {FADE:g} s",  # its ack
        Command.PAUSE: "the music paused, its notes off", Command.RESUME: "the music goes on from where it paused"}


def _host_name(host_header: str) -> str:
    """'127.0.0.1:8080' → '127.0.0.1', '[::1]:80' → '::1', 'Example.org' → 'example.org'."""
    return (urlsplit(f"//{host_header}").hostname or "") if host_header else ""


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _uncertainty(value: Any) -> float:
    """How far a page's reckoning of the console's clock may be off: half its round trip, as it says (at most
    ``STALE``), and at least ``AHEAD``."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return max(AHEAD, min(float(value), STALE))
    return AHEAD


def _said(seconds: float) -> str:
    """Seconds as a message shows them, rounded: '1.2 s', '3 min 20 s', 'more than a day'."""
    if seconds < 60:
        return f"{seconds:.2f} s" if seconds < 1 else f"{seconds:.1f} s"
    if seconds < 86400:
        hours, rest = divmod(round(seconds), 3600)
        return (f"{hours} h " if hours else "") + f"{rest // 60} min {rest % 60} s"
    return "more than a day"


def _frame(text: Any) -> Any:
    """A WebSocket frame's JSON (None for what is not text of at most ``MAX_BODY``, or not JSON)."""
    try:
        return json.loads(text) if isinstance(text, str) and len(text) <= MAX_BODY else None
    except (ValueError, RecursionError):
        return None


def _is_ping(data: Any) -> bool:
    return isinstance(data, dict) and set(data) == {"ping"}


def _seconds(value: int | float) -> float | None:
    """A JSON number as seconds; None for what no clock shows: NaN, ±Infinity, an integer beyond any float."""
    try:
        seconds = float(value)
    except OverflowError:
        return None
    return seconds if math.isfinite(seconds) else None


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
    """ASGI middleware: every HTTP request and WebSocket must carry the token (403 otherwise); the read-only views
    (``VIEW_PATHS``) take the view token as well."""

    def __init__(self, app: ASGIApp, token: str | None, view_token: str | None = None) -> None:
        self.app, self.token, self.view_token = app, token, view_token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or self._admits(HTTPConnection(scope)):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})  # before accept: the server answers 403
            return
        await Response("403 Forbidden: this console needs its token (?token=…)", 403)(scope, receive, send)

    def _admits(self, conn: HTTPConnection) -> bool:
        """The operator's token opens everything (no token: everything is open); the view token only the views."""
        view = conn.url.path.startswith(VIEW_PATHS)
        if self.token is None and (not view or self.view_token is None):
            return True
        return self._carries(conn, self.token) or (view and self._carries(conn, self.view_token))

    @staticmethod
    def _carries(conn: HTTPConnection, token: str | None) -> bool:
        if token is None:
            return False
        auth = conn.headers.get("authorization", "")
        offered = [conn.query_params.get("token", ""), conn.cookies.get(COOKIE, ""),
                   auth[7:] if auth.startswith("Bearer ") else ""]
        return any(o and hmac.compare_digest(o.encode(), token.encode()) for o in offered)


class Showing(Protocol):
    """What the console reads of the player: its status, a snapshot safe to take from the server's thread, and a
    call when it changes."""

    def status(self) -> PlayerStatus: ...

    def watch(self, callback: Callable[[], None]) -> None: ...


class Logging(Protocol):
    """What the console uses of the log: writing a refused GO, and why it is not being written ('' when it is)."""

    trouble: str

    def write(self, event: str, mono: float, **fields: Any) -> None: ...


class Console:
    """The state a page shows, computed from the timeline and the player's status."""

    def __init__(self, timeline: Timeline, player: Showing, control: Control, *, token: str | None = None,
                 hosts: tuple[str, ...] = (), log: Logging | None = None,
                 wall: Any = time.time, views: Views | None = None, view_token: str | None = None,
                 sockets: int = room(0), notify: Callable[[str], None] = print) -> None:
        self.timeline, self.player, self.control, self.token, self.wall = timeline, player, control, token, wall
        self.hosts, self.log, self.views, self.view_token = hosts, log, views, view_token
        self.sockets = Sockets(sockets, notify)
        self.shared: dict[str, tuple[float, int, str]] = {}  # what a kind of socket is sent: (when, generation, JSON)
        self.generation = 0  # counts the changes of the state
        self.waiting: set[asyncio.Event] = set()  # one per connected page: set when the state has changed
        self.loop: asyncio.AbstractEventLoop | None = None
        player.watch(self._changed)
        self.by_id = {t.cue.id: t for t in timeline.cues}
        self.template = environment().get_template("console.html.j2")
        self.template_view = environment().get_template("view.html.j2")
        self.shown = json.dumps([self.cue_json(t.cue.id) for t in timeline.cues], ensure_ascii=False)  # for the font

    # -- state ---------------------------------------------------------------------------------------

    def cue_json(self, cue_id: str | None) -> dict[str, Any] | None:
        """What the page shows of a cue."""
        if cue_id is None:
            return None
        t = self.by_id[cue_id]
        names = self.timeline.names
        what = music_name(t.cue) if t.cue.music else t.cue.action
        return {"id": t.cue.id, "section": t.cue.section, "action": what, "note": t.cue.note,
                "music": t.cue.is_music,
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
            "position_s": 0.0, "log_warning": self.log.trouble if self.log is not None else "",
            "armed": self._armed(status), "resumed": status.resumed, "guard_s": self.control.guard,
            "n": status.actions.index(status.current) + 1 if status.current in status.actions else None,
            "count": len(status.actions), "paused": status.paused is not None,
        }
        if (status.current is None or status.current_started is None or status.first_started is None
                or status.first_tick is None):
            return out
        current: CueTiming = self.by_id[status.current]
        rite_start = status.first_started - (status.first_tick - begin) / TICKS_PER_SECOND
        in_cue = (now if status.paused is None else status.paused) - status.current_started  # held while paused
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

    def _armed(self, status: PlayerStatus) -> dict[str, Any] | None:
        """The music the next GO brings in, and in how many seconds it follows by itself (None: on GO only)."""
        if not status.armed:
            return None
        wait = None if status.follow_at is None else round(max(0.0, status.follow_at - status.now), 3)
        return {"cues": [music_name(self.by_id[c].cue) for c in status.armed], "in_s": wait}

    def _playing(self, item: Playing) -> dict[str, str]:
        cue = self.by_id[item.cue].cue
        until = self.by_id.get(item.until)
        return {"cue": cue.id, "what": music_name(cue),
                "until": f"{until.cue.id}: {until.cue.action}" if until else ""}

    def command(self, data: Any) -> tuple[bool, str]:
        """A command from the page: whether it was accepted, and if not, why (said to the operator)."""
        name = data.get("command") if isinstance(data, dict) else None
        row = by_web(name) if isinstance(name, str) else None
        if row is None:
            return False, "not a command"
        cue = data.get("cue", "")
        if row.target and (not isinstance(cue, str) or cue not in self.by_id):
            return False, "no such cue to jump to"
        if row.sounding and (not isinstance(cue, str) or cue not in self.by_id):
            return False, f"{row.said}: no such cue"
        value, why = value_of(row, data.get("value"))
        if why:
            return False, why
        if row.starts and cue != "" and (not isinstance(cue, str) or cue not in self.player.status().actions):
            return False, f"no GO point {cue!r} to fire"
        if row.starts and (why := self._late(data)):
            return False, self._refuse(why)
        if self.control.submit(row.command, "page", cue if row.target or row.starts or row.sounding else "",
                               silence=row.target and data.get("silence") is True, value=value):
            return True, ""
        return False, f"within the {self.control.guard:g} s guard of the last {row.said} (a double press?)"

    def _late(self, data: dict[str, Any]) -> str:
        """Why a GO would run late ('' if it would not): pressed while the page was not connected, or longer ago
        than ``LATE``."""
        pressed = data.get("pressed")
        if data.get("offline") is True:
            return "it was pressed while the page was stale or not connected: not run late"
        if isinstance(pressed, int | float) and not isinstance(pressed, bool):
            if (moment := _seconds(pressed)) is None:  # no moment at all, so it cannot be shown on time
                return "its press time is not a time a clock shows (NaN, Infinity or beyond any float): not run"
            late = self.control.clock.now() - moment
            if late > LATE:
                return f"it reached the console {_said(late)} after it was pressed: not run late"
            if -late > (ahead := _uncertainty(data.get("uncertainty"))):
                return (f"its press time lies {_said(-late)} in the console's future, beyond the page's clock "
                        f"uncertainty ({_said(ahead)}): not run")
        return ""

    def _refuse(self, why: str) -> str:
        """Log a refused GO (against the cue it would have started) and return *why*."""
        if self.log is not None:
            status = self.player.status()
            self.log.write("refused", self.control.clock.now(), cue=status.next or "", source="page", why=why)
        return why

    def _changed(self) -> None:
        """From the player's thread: wake every page's push."""
        loop = self.loop
        if loop is not None:
            try:
                loop.call_soon_threadsafe(self._wake)
            except RuntimeError:  # the server's loop has closed (the console is stopping)
                self.loop = None

    def _wake(self) -> None:
        self.generation += 1
        for event in self.waiting:
            event.set()

    # -- the app -------------------------------------------------------------------------------------

    def app(self) -> ASGIApp:
        """The ASGI app, behind the token guard."""
        routes = [
            Route("/", self.page),
            Route("/state", self.get_state),
            Route("/command", self.post_command, methods=["POST"]),
            WebSocketRoute("/ws", self.socket),
            Route("/observe", self.observe_page),
            Route("/cast/{person:path}", self.cast_page),
            Route("/view/plate/{cue}", self.view_plate),
            WebSocketRoute("/view/ws", self.view_socket),
        ]
        app = SameOrigin(TokenGuard(Starlette(routes=routes), self.token, self.view_token), self.hosts)
        return Gate(app, self.sockets)  # a flooder's reconnect refused before anything else is done for it

    async def page(self, request: Request) -> Response:
        # in a worker thread: a page's first font cut takes about half a second (大射), in which the loop answers
        # the GOs, heartbeats and states of the pages already open
        response = HTMLResponse(await run_in_threadpool(self._page_html))
        if self.token and request.query_params.get("token"):
            response.set_cookie(COOKIE, self.token, httponly=True, samesite="strict")
        return response

    def cue_list(self, status: PlayerStatus) -> list[dict[str, Any]]:
        """The cue list's rows: every GO point, numbered, with its planned start and length, its pre-wait (music
        after an action: the plan's time from the GO of the point before it), how it starts (on GO, or following
        its pre-wait by itself) and its note."""
        points = [self.by_id[cue_id] for cue_id in status.actions]
        rows = []
        for n, t in enumerate(points, 1):
            armed = t.cue.is_music and n > 1
            wait = (t.start_tick - points[n - 2].start_tick) / TICKS_PER_SECOND if armed else 0.0
            rows.append({"n": n, "id": t.cue.id, "start": show_clock(t.start_tick), "label": label(t),
                         "music": t.cue.is_music, "section": t.cue.section,
                         "length": show_clock(t.end_tick - t.start_tick), "prewait": f"{wait:g} s" if armed else "",
                         "mode": "follows" if armed and status.follow else "on GO", "note": t.cue.note})
        return rows

    def _page_html(self) -> str:
        status = self.player.status()
        html = self.template.render(rite=self.timeline.rite, cues=self.cue_list(status), late_s=LATE, stale_s=STALE,
                                    guard_s=self.control.guard, commands=page_table(), key_names=KEY_NAMES,
                                    acks={c.web: f"{c.said} ✓ {DONE.get(c.command, '')}".strip() for c in COMMANDS},
                                    begin_s=status.begin_tick / TICKS_PER_SECOND,
                                    **timeline_view(self.timeline), now_line=True)
        return with_fonts(html, more=self.shown)

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
        accepted, why = self.command(data)
        return JSONResponse({"accepted": accepted, **({"why": why} if why else {})})

    async def socket(self, websocket: WebSocket) -> None:
        await self._serve(websocket, self._answer, "console", self.state)

    async def _serve(self, websocket: WebSocket, answer: Callable[[Any], dict[str, Any]], kind: str,
                     state: Callable[[], dict[str, Any]]) -> None:
        """One socket within the bounds of ``web.sockets``: the state pushed to it (*kind* names what it is sent,
        shared between the sockets of one kind), its frames answered by *answer* while it keeps to the rate."""
        address = websocket.client.host if websocket.client else ""  # admitted by the gate (web.sockets.Gate)
        client = client_id(websocket.scope.get("query_string", b""))
        await websocket.accept()
        self.loop = asyncio.get_running_loop()
        changed = asyncio.Event()
        self.waiting.add(changed)
        bucket = Bucket()
        sender = asyncio.create_task(self._push(websocket, changed, lambda: self._shared(kind, state), bucket))
        try:
            await self._listen(websocket, answer, address, client, bucket)
        finally:
            self.waiting.discard(changed)
            sender.cancel()

    async def _listen(self, websocket: WebSocket, answer: Callable[[Any], dict[str, Any]], address: str,
                      client: str, bucket: Bucket) -> None:
        """Answer the socket's frames until it closes or floods. A frame beyond the rate costs a receive and a count
        (the bucket's): no answer, no timer; the pusher closes the socket once it is idle."""
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    return
                if bucket.take():
                    await asyncio.sleep(0)  # the loop's turn first: a client gone is seen before it is written to
                    await websocket.send_text(json.dumps(answer(message.get("text")), ensure_ascii=False))
                elif bucket.flooding:  # dropped, no close handshake: awaiting a flooder's close frame would read
                    # its flood for the server's close timeout (10 s), on the loop that answers the operator
                    self.sockets.flooded(address, client, f"over {FLOOD} frames beyond {RATE:g} a second")
                    return
        except (WebSocketDisconnect, RuntimeError, OSError):  # the client went while we answered
            return

    def _shared(self, kind: str, state: Callable[[], dict[str, Any]]) -> str:
        """The state as sent to every socket of *kind*: made once per change and at most every ``SHARE`` seconds,
        not once per socket (400 sockets each making it took 1.9 s of CPU every 5 s)."""
        now = time.monotonic()
        kept = self.shared.get(kind)
        if kept is not None and kept[1] == self.generation and now - kept[0] < SHARE:
            return kept[2]
        text = json.dumps({"state": state()}, ensure_ascii=False)
        self.shared[kind] = (now, self.generation, text)
        return text

    def _answer(self, text: Any) -> dict[str, Any]:
        """The reply to one frame: a heartbeat's pong, or whether a command was accepted and why not."""
        data = _frame(text)
        if _is_ping(data):
            return self._pong(data)
        accepted, why = self.command(data)
        tag = data.get("id") if isinstance(data, dict) else None
        return {"accepted": accepted, **({"why": why} if why else {}),
                **({"id": tag} if isinstance(tag, int) and not isinstance(tag, bool) else {})}

    async def _push(self, websocket: WebSocket, changed: asyncio.Event, text: Callable[[], str],
                    heard: Bucket) -> None:
        """Send the state whenever it changes, and every ``PUSH`` seconds for the clocks, until the socket goes or
        has sent nothing for ``IDLE`` seconds (*heard*: when its last frame came), then closed; a send that fails
        ends it quietly (the listener sees the socket close)."""
        while True:
            changed.clear()
            try:
                if time.monotonic() - heard.last > IDLE:
                    await websocket.close(code=POLICY, reason="idle")
                    return
                await websocket.send_text(text())
            except (WebSocketDisconnect, RuntimeError, OSError):
                return
            try:
                await asyncio.wait_for(changed.wait(), PUSH)
            except TimeoutError:
                pass

    # -- the read-only views (web/views): they show; no frame of theirs is ever a command ----------------------

    async def observe_page(self, _request: Request) -> Response:
        if self.views is None:
            return Response("404 Not Found: this console has no views", 404)
        return HTMLResponse(await run_in_threadpool(self._view_html, "observe", None))

    async def cast_page(self, request: Request) -> Response:
        if self.views is None:
            return Response("404 Not Found: this console has no views", 404)
        who = await run_in_threadpool(self._person, request.path_params["person"])
        if isinstance(who, str):
            return Response(f"404 Not Found: {who}", 404, media_type="text/plain; charset=utf-8")
        return HTMLResponse(await run_in_threadpool(self._view_html, "cast", who))

    def _person(self, query: str) -> Person | str:
        """The person a view names, or why none (an unknown or shared name, with the nearest)."""
        assert self.views is not None
        try:
            return self.views.person(query)
        except YueshengError as exc:
            return str(exc)

    def _view_html(self, mode: str, who: Person | None) -> str:
        html = self.template_view.render(rite=self.timeline.rite, mode=mode, stale_s=STALE,
                                         person=who.label if who is not None else "",
                                         query=who.label if who is not None else "")
        return with_fonts(html, more=self.shown)

    async def view_plate(self, request: Request) -> Response:
        cue = request.path_params["cue"]
        if self.views is None or cue not in self.by_id:
            return Response("404 Not Found: no such cue", 404)
        query = request.query_params.get("person")
        who = await run_in_threadpool(self._person, query) if query else None
        if isinstance(who, str):
            return Response(f"404 Not Found: {who}", 404, media_type="text/plain; charset=utf-8")
        svg = await run_in_threadpool(self.views.plate, cue, who)
        if svg is None:
            return Response("404 Not Found: this cue is not staged", 404)
        return Response(svg, media_type="image/svg+xml")

    def view_state(self, who: Person | None) -> dict[str, Any]:
        """What a view shows now: the stage manager's, or one performer's."""
        assert self.views is not None
        state = self.state()
        if who is None:
            return self.views.observe(state)
        return self.views.cast(who, self.player.status(), state)

    async def view_socket(self, websocket: WebSocket) -> None:
        query = websocket.query_params.get("person")
        who = await run_in_threadpool(self._person, query) if query and self.views is not None else None
        if self.views is None or isinstance(who, str):
            await websocket.close(code=1008)
            return
        await self._serve(websocket, self._view_answer, f"view {who.label if who else ''}",
                          lambda: self.view_state(who))

    def _pong(self, ping: dict[str, Any]) -> dict[str, Any]:
        return {"pong": ping["ping"], "server": self.control.clock.now()}

    def _view_answer(self, text: Any) -> dict[str, Any]:
        """A view's heartbeat answered; anything else refused: a view cannot GO, STOP or jump."""
        data = _frame(text)
        if _is_ping(data):
            return self._pong(data)
        return {"accepted": False, "why": "a view only shows the show: it cannot GO, STOP or jump"}
