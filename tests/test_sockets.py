"""The console's WebSockets bounded on a real port of 127.0.0.1 (issue 34): per client and in all, the silent closed,
a flood of heartbeats left unanswered then closed, a GO answered quickly meanwhile, and the terminal told once."""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

import yuesheng.web.console as console_module
import yuesheng.web.sockets as sockets_module
from yuesheng import build, load
from yuesheng.live.control import Control
from yuesheng.live.player import NullPort, Player, RealClock
from yuesheng.web.console import Console
from yuesheng.web.sockets import BURST, PER_CLIENT, Bucket, Sockets, room

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def golden(repertoire):
    return build(load(DATA / "golden.yaml", repertoire=repertoire))


class Served:
    """A console on a free port of 127.0.0.1 (its player in a thread), what it told the terminal kept."""

    def __init__(self, timeline, total: int) -> None:
        self.told: list[str] = []
        clock = RealClock()
        self.control = Control(clock, guard=0.0)
        self.player = Player(timeline, NullPort(), clock, control=self.control, stay=True, show=lambda _: None)
        console = Console(timeline, self.player, self.control, sockets=total, notify=self.told.append)
        self.server = uvicorn.Server(uvicorn.Config(console.app(), host="127.0.0.1", port=0, log_level="warning",
                                                    lifespan="off"))
        self.threads = [threading.Thread(target=self.server.run, daemon=True),
                        threading.Thread(target=self.player.run, daemon=True)]
        for thread in self.threads:
            thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        self.url = f"ws://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}/ws"

    def close(self) -> None:
        self.control.close("test over")
        self.server.should_exit = True
        for thread in self.threads:
            thread.join(timeout=10)


@pytest.fixture
def served(golden):
    console = Served(golden, room(10))
    yield console
    console.close()


@pytest.fixture
def sockets():
    """Open a client socket: ``sockets(url)``; every one closed at the end of the test."""
    with contextlib.ExitStack() as stack:
        yield lambda url: stack.enter_context(connect(url))


def _refused(url: str) -> str:
    """The status and body with which the console refuses a socket in its handshake ('' if it takes it)."""
    try:
        with connect(url):
            return ""
    except InvalidStatus as refused:
        return f"{refused.response.status_code} {refused.response.body.decode()}"


def _closed_code(socket) -> int | None:
    """The close code the console sent, waiting for it (None if the socket stays open for 5 s; 1006 if the console
    dropped it without a close frame, as it drops a flooder)."""
    try:
        while True:
            socket.recv(timeout=5)
    except TimeoutError:
        return None
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else 1006


def test_one_client_gets_its_share_of_sockets_and_no_more_and_is_told_once(served, sockets):
    opened = [sockets(served.url) for _ in range(PER_CLIENT)]
    assert all(json.loads(s.recv(timeout=5))["state"] for s in opened)
    refusals = [_refused(served.url) for _ in range(5)]
    assert all(r.startswith(f"503 503 Service Unavailable: {PER_CLIENT} sockets open from 127.0.0.1") for r in refusals)
    told = [line for line in served.told if "127.0.0.1" in line]
    assert len(told) == 1 and f"at most {PER_CLIENT}" in told[0]
    for socket in opened:
        socket.close()
    again = sockets(served.url)  # the share is given back when they close
    assert json.loads(again.recv(timeout=5))["state"]


def test_all_clients_together_get_room_for_every_person_and_no_more(golden, sockets):
    console = Served(golden, 3)
    try:
        opened = [sockets(console.url) for _ in range(3)]
        assert all(json.loads(s.recv(timeout=5))["state"] for s in opened)
        assert _refused(console.url).startswith("503 ")
        assert "3 sockets open, at most as many as the rite's persons" in console.told[0]
        for socket in opened:
            socket.close()
    finally:
        console.close()
    assert room(82) == 82 + 20 + 8


def test_a_silent_socket_is_closed(served, monkeypatch, sockets):
    monkeypatch.setattr(console_module, "IDLE", 0.5)
    socket = sockets(served.url)
    assert _closed_code(socket) == 1008


def _flood(socket) -> None:
    """Ping on *socket* far beyond the rate until the console drops it (1006: its flood no longer read)."""
    for n in range(int(BURST) + 400):
        try:
            socket.send(json.dumps({"ping": n}))
        except ConnectionClosed:
            break
    assert _closed_code(socket) == 1006


def test_a_heartbeat_flood_goes_unanswered_then_is_closed_while_a_go_is_answered_at_once(served, caplog, sockets):
    caplog.set_level(logging.WARNING)
    flood, operator = sockets(served.url), sockets(served.url)
    _flood(flood)
    assert any("beyond 20 a second" in line for line in served.told)
    start = time.perf_counter()
    operator.send(json.dumps({"command": "go", "id": 7}))
    while "accepted" not in (reply := json.loads(operator.recv(timeout=5))):
        pass
    assert reply == {"accepted": True, "id": 7} and time.perf_counter() - start < 1.0
    assert not [r for r in caplog.records if "socket.send() raised" in r.getMessage() or "never retrieved" in
                r.getMessage()]


def test_clients_that_flood_and_drop_leave_no_traceback_nor_a_line_per_frame(served, caplog, sockets):
    caplog.set_level(logging.WARNING)
    for _ in range(3):
        socket = sockets(served.url)
        for n in range(100):
            socket.send(json.dumps({"ping": n}))
        socket.socket.close()  # dropped without a close frame
    time.sleep(1.5)  # the console pushes every 0.5 s: it would write to the dropped sockets now
    noisy = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [m for m in noisy if "socket.send() raised" in m or "never retrieved" in m], noisy


def test_the_bucket_refills_at_its_rate():
    now = [0.0]
    bucket = Bucket(clock=lambda: now[0])
    assert sum(bucket.take() for _ in range(100)) == BURST
    now[0] = 1.0
    assert sum(bucket.take() for _ in range(100)) == sockets_module.RATE
    assert bucket.refused == 100 - BURST + 100 - sockets_module.RATE


def test_a_client_told_once_whatever_it_does():
    told: list[str] = []
    sockets = Sockets(2, told.append, per_client=1)
    assert sockets.admit("10.0.0.1") == "" and sockets.admit("10.0.0.1") and sockets.admit("10.0.0.1")
    assert len(told) == 1
    sockets.release("10.0.0.1")
    assert sockets.admit("10.0.0.1") == ""


def test_a_flood_bars_its_address_but_not_the_pages_open_there():
    now = [0.0]
    told: list[str] = []
    sockets = Sockets(100, told.append, clock=lambda: now[0])
    assert sockets.admit("127.0.0.1", "operator-page-1") == "" and sockets.admit("127.0.0.1", "view-page-22") == ""
    sockets.release("127.0.0.1", "view-page-22")  # a view between two reconnects
    assert not sockets.refuses("127.0.0.1", "brand-new-id")  # nothing flooded yet
    sockets.admit("127.0.0.1", "flooder-id-1")
    sockets.flooded("127.0.0.1", "flooder-id-1", "over 200 frames")
    sockets.flooded("127.0.0.1", "flooder-id-1", "over 200 frames")
    assert told == [f"console: sockets from 127.0.0.1 barred for {sockets_module.BAN:g} s (over 200 frames); pages "
                    "already open there reconnect"]
    assert sockets.refuses("127.0.0.1", "flooder-id-1")  # open still, but it flooded
    assert sockets.refuses("127.0.0.1", "") and sockets.refuses("127.0.0.1", "brand-new-id")
    assert not sockets.refuses("127.0.0.1", "operator-page-1") and not sockets.refuses("127.0.0.1", "view-page-22")
    assert not sockets.refuses("10.0.0.9", "")  # another address is not barred
    now[0] = sockets_module.REJOIN + 1
    assert sockets.refuses("127.0.0.1", "view-page-22")  # gone too long: a fresh page now
    now[0] = sockets_module.BAN + 1
    assert not sockets.refuses("127.0.0.1", "") and not sockets.refuses("127.0.0.1", "flooder-id-1")


def _status(url: str) -> int:
    """The HTTP status with which the console refuses a socket's handshake (101 if it takes it)."""
    try:
        with connect(url):
            return 101
    except InvalidStatus as refused:
        return refused.response.status_code


def test_a_flooder_on_loopback_is_barred_while_the_operator_there_goes_on(served, sockets):
    operator = sockets(served.url + "?client=operator-page-1")
    flood = sockets(served.url + "?client=flooder-page-1")
    _flood(flood)
    assert [line for line in served.told if "barred" in line] == [
        f"console: sockets from 127.0.0.1 barred for {sockets_module.BAN:g} s (over 200 frames beyond 20 a second); "
        "pages already open there reconnect"]
    # the flooder, under its id, a new one or none, is refused in its handshake; its refusals are not said again
    assert {_status(served.url + q) for q in ("?client=flooder-page-1", "?client=made-up-id-2", "")} == {403}
    assert len(served.told) == 1
    operator.send(json.dumps({"command": "go", "id": 1}))
    while "accepted" not in (reply := json.loads(operator.recv(timeout=5))):
        pass
    assert reply == {"accepted": True, "id": 1}
    operator.close()  # the operator's page reconnects under its id, barred address or not
    again = sockets(served.url + "?client=operator-page-1")
    assert json.loads(again.recv(timeout=5))["state"]["current"]["id"]
