"""How long GO, STOP and FADE take at the console while its sockets are attacked (issue 34).

Three processes, so that no side runs on another's event loop or holds its GIL: the console for the golden rite
(``tests/data/golden.yaml``, served by ``_served.in_process``: uvicorn on a free port of 127.0.0.1, its player on the
real clock sending to no port); the attackers; and this one, the operator's socket, which sends each command and
waits for its answer: the round trip is one figure. The operator's socket names its client id as the page does.
The baseline is measured first in the same run, with no other socket; then the attackers' process starts
``--flooders`` (3) sockets that flood heartbeats as fast as they can, reconnecting whenever they are closed or
refused, each time under a new client id (the worst case for the ban, which spares only the ids it trusts), and
opens ``--idle`` (400) sockets that stay silent, from 127.0.0.2 (the console admits its share and refuses the rest
in the handshake; the silent ones it closes after ``IDLE`` seconds). The flooders share 127.0.0.1 with the operator,
so the ban's key is put to the test: the operator's socket must go on working. ``--no-ban`` serves a console whose
flood bars nothing, to show what the ban buys. On 2 cores the console and the attackers each take one when busy; the
operator's client waits on its socket. Issue 34: 400 idle sockets cost 1.9 s of CPU every 5 s and a 3-socket ping
flood made a FADE take 85 ms instead of 1.5 ms. Goal: every round trip within 5 ms under attack.

Run ``python benchmarks/console_flood.py``; the last lines are ``RESULT`` lines: each command's median and p99, with
the baseline's, the CPU each process used, and the load average.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import multiprocessing
import os
import secrets
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's code, installed or not

from websockets.exceptions import WebSocketException
from websockets.sync.client import ClientConnection, connect

from benchmarks._served import in_process

COMMANDS = ("go", "stop", "fade")
GAP = 0.07  # seconds between commands: with the heartbeat, within the console's 20 frames a second for any socket
IDLE_FROM = "127.0.0.2"  # the idle sockets' address: another attacker than the flooders (who share the operator's)


def round_trips(operator: ClientConnection, rounds: int) -> dict[str, list[float]]:
    """Each command's round trips, in milliseconds, *rounds* of each in turn."""
    out: dict[str, list[float]] = {c: [] for c in COMMANDS}
    tag = 0
    for _ in range(rounds):
        for command in COMMANDS:
            tag += 1
            start = time.perf_counter()
            operator.send(json.dumps({"command": command, "id": tag}))
            while json.loads(operator.recv(timeout=10)).get("id") != tag:  # the console's pushed states between
                if time.perf_counter() - start > 10:
                    raise TimeoutError(f"{command} {tag} was never answered")
            out[command].append((time.perf_counter() - start) * 1000)
            time.sleep(GAP)
    return out


def heartbeat(socket: ClientConnection, stop: threading.Event) -> None:
    """A ping a second, as the page sends (a silent socket is closed)."""
    while not stop.wait(1.0):
        with contextlib.suppress(WebSocketException, OSError):
            socket.send(json.dumps({"ping": time.monotonic()}))


def flood(url: str, stop: threading.Event, tries: list[int]) -> None:
    """Heartbeats as fast as they go, on a socket opened again (under a new client id) whenever the console closes
    or refuses it; *tries* counts the handshakes tried and those taken."""
    n = 0
    while not stop.is_set():
        tries[0] += 1
        with contextlib.suppress(WebSocketException, OSError, TimeoutError), \
                connect(f"{url}?client={secrets.token_hex(8)}", ping_interval=None, close_timeout=0.2,
                        open_timeout=2) as socket:
            tries[1] += 1
            while not stop.is_set():
                n += 1
                socket.send(json.dumps({"ping": n}))


def idle(url: str, count: int, stack: contextlib.ExitStack) -> int:
    """Open *count* silent sockets from ``IDLE_FROM`` (those the console refuses are not kept); how many it took."""
    taken = 0
    for _ in range(count):
        with contextlib.suppress(WebSocketException, OSError):
            stack.enter_context(connect(url, ping_interval=None, close_timeout=0.2, open_timeout=2,
                                        source_address=(IDLE_FROM, 0)))
            taken += 1
    return taken


def attack(url: str, count: int, flooders: int, said: Any, stop: Any) -> None:
    """The attackers' process: *count* idle sockets and *flooders* flooding ones until *stop*; then what they got
    and the CPU seconds they used are *said*."""
    logging.getLogger("websockets").setLevel(logging.CRITICAL)  # a flooder dropped is the point, not news
    halt = threading.Event()
    tries = [0, 0]
    with contextlib.ExitStack() as stack:
        threads = [threading.Thread(target=flood, args=(url, halt, tries), daemon=True) for _ in range(flooders)]
        for thread in threads:  # first, so that they get in before the idle ones fill the console's room
            thread.start()
        time.sleep(0.2)
        taken = idle(url, count, stack)
        said.put(taken)
        stop.wait()
        halt.set()
        for thread in threads:
            thread.join(timeout=5)
    said.put((tries[0], tries[1], time.process_time()))


def summary(name: str, figures: dict[str, list[float]]) -> str:
    return "  ".join(f"{name}_{c}_median_ms={statistics.median(v):.2f} {name}_{c}_p99_ms={p99(v):.2f}"
                     for c, v in figures.items())


def p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * 0.99))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=400)
    parser.add_argument("--flooders", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--no-ban", action="store_true", help="a flood bars no address (to see what the ban buys)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    context = multiprocessing.get_context("spawn")
    with in_process("tests/data/golden.yaml", guard=0.0, ban=not args.no_ban) as console:
        url = f"ws://127.0.0.1:{console.port}/ws"
        with connect(f"{url}?client=operator-{secrets.token_hex(4)}") as operator:
            stop = threading.Event()
            threading.Thread(target=heartbeat, args=(operator, stop), daemon=True).start()
            base = round_trips(operator, args.rounds)
            said, halt = context.Queue(), context.Event()
            attackers = context.Process(target=attack, args=(url, args.idle, args.flooders, said, halt), daemon=True)
            attackers.start()
            taken = said.get(timeout=120)
            time.sleep(0.5)
            attacked = round_trips(operator, args.rounds)
            halt.set()
            tried, admitted, attack_cpu = said.get(timeout=30)
            attackers.join(timeout=10)
            stop.set()
    load = os.getloadavg()[0]
    print(f"{args.idle} idle sockets tried, {taken} taken; {args.flooders} flooding: {tried} handshakes tried, "
          f"{admitted} taken, the rest refused")
    print("RESULT " + summary("baseline", base))
    print("RESULT " + summary("attacked", attacked))
    print(f"RESULT cpu_s console={console.cpu:.2f} attackers={attack_cpu:.2f} operator={time.process_time():.2f} "
          f"on {os.cpu_count()} cores")
    worst = max(statistics.median(v) for v in attacked.values())
    worst_p99 = max(p99(v) for v in attacked.values())
    print(f"RESULT attacked_worst_p99_ms={worst_p99:.2f}")
    print(f"RESULT attacked_worst_median_ms={worst:.2f} (load average {load:.2f})")
    print(f"(load average before the run {load_before:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
