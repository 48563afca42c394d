"""The console's WebSockets, bounded (issue 34): how many one client and all clients may hold open, how long one may
stay silent, and how fast one may send.

Loopback needs no token, so anyone on the machine could open sockets by the hundred: each is admitted (else refused
in its handshake, 503 and why) only within ``PER_CLIENT`` from its address and ``total`` in all (room for every
performer's cast view, twenty observers and ``OPERATORS`` operator pages); a socket that sends nothing for ``IDLE``
seconds is closed (every page pings each second, and reconnects by itself); a socket's frames beyond ``RATE`` a
second (a burst of ``BURST``) go unanswered, and one that keeps flooding past ``FLOOD`` unanswered frames is closed.
The terminal hears of a client once, not of every frame.

A flood also **bars** its address for ``BAN`` seconds: a handshake from it is refused at the cheapest point (``Gate``,
in front of every other layer: no routing, no token check, no socket) unless it names a client id the console
trusts. A page draws a random client id when it loads and puts it in its socket's URL (``?client=``) on every
reconnect; an id is trusted while a socket of it is open, and for ``REJOIN`` seconds after its last one closed,
unless it flooded. So a flood from 127.0.0.1 does not lock out the operator on 127.0.0.1 (his page, open when the
flood began, reconnects under its id), while the flooder, whatever id it makes up next, is refused until the ban
ends; a page opened fresh from a barred address waits out the ban (it retries each second). A barred handshake's
refusal is held back ``HOLD`` seconds, so a flooder reconnecting in a loop costs a handshake a second, not a
thousand. The terminal hears of each ban once.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

if TYPE_CHECKING:  # Starlette is web/console's; its types only name what the console hands the gate
    from starlette.types import ASGIApp, Receive, Scope, Send

PER_CLIENT = 32  # sockets from one address: a tablet holds one or two; 20 views and a console on one test machine
OPERATORS = 8  # operator pages beside the views
OBSERVERS = 20  # stage managers' views
IDLE = 10.0  # seconds a socket may send nothing (a page pings every second)
RATE = 20.0  # frames a second a socket may send (a page sends a ping a second and a key or two)
BURST = 40.0  # frames it may send at once
FLOOD = 200  # frames left unanswered, past which the socket is closed
BAN = 30.0  # seconds an address that flooded may open no socket under a client id new to the console
REJOIN = IDLE  # seconds after its socket closed that a client id is still trusted (a page retries each second)
KNOWN = 1024  # client ids remembered as closed lately, past which the older are forgotten
CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")  # what a page's client id looks like (else it names none)
HOLD = 1.0  # seconds a barred handshake waits for its refusal
HELD = 256  # barred handshakes held at once, past which they are refused at once
POLICY = 1008  # WebSocket close code: policy violation (idle, flooding)


def room(persons: int) -> int:
    """How many sockets a console admits in all: a cast view for every person, the observers and the operators."""
    return persons + OBSERVERS + OPERATORS


@dataclass(slots=True)
class Bucket:
    """One socket's allowance of frames: ``RATE`` a second, at most ``BURST`` saved; and its unanswered ones."""

    clock: Callable[[], float] = time.monotonic
    tokens: float = BURST
    last: float = field(default=0.0)
    refused: int = 0

    def __post_init__(self) -> None:
        self.last = self.clock()

    def take(self) -> bool:
        """Whether one more frame may be answered now."""
        now = self.clock()
        self.tokens = min(BURST, self.tokens + (now - self.last) * RATE)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.refused += 1
        return False

    @property
    def flooding(self) -> bool:
        return self.refused > FLOOD


def client_id(query: bytes | str) -> str:
    """The client id a socket's query string names ('' for none, or one not shaped like a page's)."""
    raw = query.decode("latin-1") if isinstance(query, bytes) else query
    if "client=" not in raw:
        return ""
    given = dict(parse_qsl(raw)).get("client", "")
    return given if CLIENT_ID.fullmatch(given) else ""


class Sockets:
    """The open sockets by client address, admitted within the bounds; each client refused or closed is told to
    *notify* once. An address that flooded is barred for ``BAN`` seconds to every client id but those it trusts: one
    with a socket open now, or closed within ``REJOIN`` seconds (a page reconnecting), that has not flooded."""

    def __init__(self, total: int, notify: Callable[[str], None], per_client: int = PER_CLIENT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.per_client, self.notify, self.clock = total, per_client, notify, clock
        self.open: Counter[str] = Counter()
        self.told: set[str] = set()
        self.open_ids: Counter[tuple[str, str]] = Counter()  # (address, client id) → its sockets open
        self.left: dict[tuple[str, str], float] = {}  # (address, client id) → when its last socket closed
        self.barred: dict[str, float] = {}  # address → when its ban ends
        self.flooders: set[tuple[str, str]] = set()  # the client ids that flooded from a barred address

    def refuses(self, address: str, client: str) -> bool:
        """Whether a handshake from *address* naming *client* is refused unseen: the address is barred and the
        client is not one it trusts (no id is never trusted)."""
        until = self.barred.get(address)
        if until is None:
            return False
        now = self.clock()
        if now >= until:
            del self.barred[address]
            self.flooders = {key for key in self.flooders if key[0] != address}
            return False
        key = (address, client)
        trusted = self.open_ids[key] > 0 or now - self.left.get(key, -REJOIN) < REJOIN
        return not client or key in self.flooders or not trusted

    def admit(self, address: str, client: str = "") -> str:
        """'' and the socket counted, or why it is refused."""
        if self.open[address] >= self.per_client:
            return self.drop(address, f"{self.open[address]} sockets open from {address}, at most {self.per_client}")
        if sum(self.open.values()) >= self.total:
            return self.drop(address, f"{self.total} sockets open, at most as many as the rite's persons, "
                                      f"{OBSERVERS} observers and {OPERATORS} operator pages")
        self.open[address] += 1
        if client:
            self.open_ids[(address, client)] += 1
        return ""

    def release(self, address: str, client: str = "") -> None:
        self.open[address] -= 1
        if self.open[address] <= 0:
            del self.open[address]
        key = (address, client)
        if client and key in self.open_ids:
            self.open_ids[key] -= 1
            if self.open_ids[key] <= 0:
                del self.open_ids[key]
            now = self.left[key] = self.clock()
            if len(self.left) > KNOWN:
                self.left = {k: t for k, t in self.left.items() if now - t < REJOIN}

    def flooded(self, address: str, client: str, why: str) -> None:
        """A socket of *client* from *address* flooded: the client no longer trusted, the address barred for
        ``BAN`` seconds (said once a ban)."""
        if client:
            self.flooders.add((address, client))
        if address not in self.barred:
            self.told.add(address)
            self.notify(f"console: sockets from {address} barred for {BAN:g} s ({why}); pages already open there "
                        "reconnect")
        self.barred[address] = self.clock() + BAN

    def drop(self, client: str, why: str) -> str:
        """*why*, said on the terminal the first time *client* is refused or closed."""
        if client not in self.told:
            self.told.add(client)
            self.notify(f"console: a socket from {client} refused or closed: {why} (said once for this address)")
        return why


class Gate:
    """ASGI middleware in front of every other: each WebSocket admitted within the bounds, before any work is done
    for it. A handshake that *sockets* refuses unseen (a barred address, a client id it does not trust) is closed
    (the server answers 403); one beyond the bounds is answered 503 and why; the others are counted while they
    last."""

    def __init__(self, app: ASGIApp, sockets: Sockets) -> None:
        self.app, self.sockets = app, sockets
        self.held = 0  # refusals being held back now

    async def _hold(self) -> None:
        """Hold a barred handshake's refusal back ``HOLD`` seconds (at most ``HELD`` at once): a flooder that
        reconnects as soon as it is refused then tries once a second, not a thousand times."""
        if self.held >= HELD:
            return
        self.held += 1
        try:
            await asyncio.sleep(HOLD)
        finally:
            self.held -= 1

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        address = scope["client"][0] if scope.get("client") else ""
        client = client_id(scope.get("query_string", b""))
        if self.sockets.barred and self.sockets.refuses(address, client):
            await self._hold()
            await send({"type": "websocket.close", "code": POLICY})
            return
        if why := self.sockets.admit(address, client):
            await _deny(scope, send, f"503 Service Unavailable: {why}; try again later")
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self.sockets.release(address, client)


async def _deny(scope: Scope, send: Send, text: str) -> None:
    """Refuse a WebSocket handshake with ``503`` and *text* (a close, so 403, where the server cannot say more)."""
    if "websocket.http.response" not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": POLICY})
        return
    body = text.encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    await send({"type": "websocket.http.response.start", "status": 503, "headers": headers})
    await send({"type": "websocket.http.response.body", "body": body})
