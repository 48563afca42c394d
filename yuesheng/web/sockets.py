"""The console's WebSockets, bounded (issue 34): how many one client and all clients may hold open, how long one may
stay silent, and how fast one may send.

Loopback needs no token, so anyone on the machine could open sockets by the hundred: each is admitted (else refused
in its handshake, 503 and why) only within ``PER_CLIENT`` from its address and ``total`` in all (room for every
performer's cast view, twenty observers and ``OPERATORS`` operator pages); a socket that sends nothing for ``IDLE``
seconds is closed (every page pings each second, and reconnects by itself); a socket's frames beyond ``RATE`` a
second (a burst of ``BURST``) go unanswered, and one that keeps flooding past ``FLOOD`` unanswered frames is closed.
The terminal hears of a client once, not of every frame.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

PER_CLIENT = 32  # sockets from one address: a tablet holds one or two; 20 views and a console on one test machine
OPERATORS = 8  # operator pages beside the views
OBSERVERS = 20  # stage managers' views
IDLE = 10.0  # seconds a socket may send nothing (a page pings every second)
RATE = 20.0  # frames a second a socket may send (a page sends a ping a second and a key or two)
BURST = 40.0  # frames it may send at once
FLOOD = 200  # frames left unanswered, past which the socket is closed
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


class Sockets:
    """The open sockets by client address, admitted within the bounds; each client refused or closed is told to
    *notify* once."""

    def __init__(self, total: int, notify: Callable[[str], None], per_client: int = PER_CLIENT) -> None:
        self.total, self.per_client, self.notify = total, per_client, notify
        self.open: Counter[str] = Counter()
        self.told: set[str] = set()

    def admit(self, client: str) -> str:
        """'' and the socket counted, or why it is refused."""
        if self.open[client] >= self.per_client:
            return self.drop(client, f"{self.open[client]} sockets open from {client}, at most {self.per_client}")
        if sum(self.open.values()) >= self.total:
            return self.drop(client, f"{self.total} sockets open, at most as many as the rite's persons, "
                                     f"{OBSERVERS} observers and {OPERATORS} operator pages")
        self.open[client] += 1
        return ""

    def release(self, client: str) -> None:
        self.open[client] -= 1
        if self.open[client] <= 0:
            del self.open[client]

    def drop(self, client: str, why: str) -> str:
        """*why*, said on the terminal the first time *client* is refused or closed."""
        if client not in self.told:
            self.told.add(client)
            self.notify(f"console: a socket from {client} refused or closed: {why} (said once for this address)")
        return why
