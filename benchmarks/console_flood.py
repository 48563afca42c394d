"""How long GO, STOP and FADE take at the console while its sockets are attacked (issue 34).

A console for the golden rite (``tests/data/golden.yaml``) is served by uvicorn on a free port of 127.0.0.1, its
player on the real clock sending to no port. The operator's socket sends each command and waits for its answer: the
round trip is one figure. The baseline is measured first in the same run, with no other socket; then ``--idle``
(400) sockets try to open and stay silent (the console admits its share and refuses the rest in the handshake; the
silent ones it closes after ``IDLE`` seconds), and ``--flooders`` (3) sockets flood heartbeats as fast as they can,
reconnecting when they are closed. Issue 34: 400 idle sockets cost 1.9 s of CPU every 5 s and a 3-socket ping flood
made a FADE take 85 ms instead of 1.5 ms. Goal: every round trip within 5 ms under attack.

Run ``python benchmarks/console_flood.py``; the last lines are ``RESULT`` lines: each command's median and p99, with
the baseline's, and the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's code, installed or not

import uvicorn
from websockets.exceptions import WebSocketException
from websockets.sync.client import ClientConnection, connect

from yuesheng import build, load
from yuesheng.live.control import Control
from yuesheng.live.player import NullPort, Player, RealClock
from yuesheng.web.console import Console

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = ("go", "stop", "fade")


def serve() -> tuple[uvicorn.Server, str]:
    timeline = build(load(ROOT / "tests" / "data" / "golden.yaml"))
    clock = RealClock()
    control = Control(clock, guard=0.0)
    player = Player(timeline, NullPort(), clock, control=control, stay=True, show=lambda _: None)
    console = Console(timeline, player, control, notify=lambda _: None)
    server = uvicorn.Server(uvicorn.Config(console.app(), host="127.0.0.1", port=0, log_level="critical",
                                           lifespan="off"))
    for target in (server.run, player.run):
        threading.Thread(target=target, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, f"ws://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/ws"


def round_trips(operator: ClientConnection, rounds: int) -> dict[str, list[float]]:
    """Each command's round trips, in milliseconds, *rounds* of each in turn."""
    out: dict[str, list[float]] = {c: [] for c in COMMANDS}
    tag = 0
    for _ in range(rounds):
        for command in COMMANDS:
            tag += 1
            start = time.perf_counter()
            operator.send(json.dumps({"command": command, "id": tag}))
            while json.loads(operator.recv(timeout=10)).get("id") != tag:
                pass
            out[command].append((time.perf_counter() - start) * 1000)
            time.sleep(0.02)
    return out


def heartbeat(socket: ClientConnection, stop: threading.Event) -> None:
    """A ping a second, as the page sends (a silent socket is closed)."""
    while not stop.wait(1.0):
        with contextlib.suppress(WebSocketException, OSError):
            socket.send(json.dumps({"ping": time.monotonic()}))


def flood(url: str, stop: threading.Event) -> None:
    """Heartbeats as fast as they go, on a socket opened again whenever the console closes it."""
    n = 0
    while not stop.is_set():
        with contextlib.suppress(WebSocketException, OSError, TimeoutError), \
                connect(url, ping_interval=None, close_timeout=0.2) as socket:
            while not stop.is_set():
                n += 1
                socket.send(json.dumps({"ping": n}))


def idle(url: str, count: int, stack: contextlib.ExitStack) -> int:
    """Open *count* silent sockets (those the console refuses are not kept); how many it took."""
    taken = 0
    for _ in range(count):
        with contextlib.suppress(WebSocketException, OSError):
            stack.enter_context(connect(url, ping_interval=None, close_timeout=0.2))
            taken += 1
    return taken


def summary(name: str, figures: dict[str, list[float]]) -> str:
    return "  ".join(f"{name}_{c}_median_ms={statistics.median(v):.2f} {name}_{c}_p99_ms="
                     f"{sorted(v)[min(len(v) - 1, int(len(v) * 0.99))]:.2f}" for c, v in figures.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=400)
    parser.add_argument("--flooders", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args(argv)
    server, url = serve()
    try:
        with connect(url) as operator:
            stop = threading.Event()
            threading.Thread(target=heartbeat, args=(operator, stop), daemon=True).start()
            base = round_trips(operator, args.rounds)
            with contextlib.ExitStack() as stack:
                taken = idle(url, args.idle, stack)
                flooders = [threading.Thread(target=flood, args=(url, stop), daemon=True)
                            for _ in range(args.flooders)]
                for thread in flooders:
                    thread.start()
                time.sleep(0.5)
                attacked = round_trips(operator, args.rounds)
                stop.set()
        print(f"{args.idle} idle sockets tried, {taken} taken; {args.flooders} flooding")
        print("RESULT " + summary("baseline", base))
        print("RESULT " + summary("attacked", attacked))
        worst = max(statistics.median(v) for v in attacked.values())
        print(f"RESULT attacked_worst_median_ms={worst:.2f} (load average {os.getloadavg()[0]:.2f})")
    finally:
        server.should_exit = True
    return 0


if __name__ == "__main__":
    sys.exit(main())
