"""How long a GO takes to show on the read-only views (``/observe`` and ``/cast/PERSON``), 20 of them connected.

A console for 鄉射禮 (``cues/xiangshe.yaml``, staged) is served by uvicorn on a free port of 127.0.0.1, its player on
the real clock sending to no port (``NullPort``; ``_served.serve``). ``VIEWS`` view sockets connect, half the stage
manager's (observe), half performers' (cast: 主人, 賓, …, in turn), each read by its own thread. The operator's page
sends GO; the time from that send to the first state frame on each view that shows the new cue is one latency (so
one GO gives ``VIEWS`` of them). GOs are ``GAP`` seconds apart; the first ``WARM`` (``--warm``) are not counted.

Run ``python benchmarks/view_latency.py``; the last lines are ``RESULT`` lines (the issue's goal: a median under 50
ms).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's code, installed or not

from websockets.sync.client import ClientConnection, connect

from benchmarks._served import ROOT, Served, serve
from yuesheng import load, produce
from yuesheng.web.views import Views

GOS = 30  # measured, after the WARM first
WARM = 3
GAP = 0.3  # seconds between GOs
VIEWS = 20
CAST = ("主人", "賓", "司射", "獲者", "工 1")
TOKEN = "benchmark-view-token"


def serve_views() -> Served:
    """The console with its views, each performer of ``CAST`` staged and his cues found before the show (as the
    console warms them)."""
    production = produce(load(ROOT / "cues" / "xiangshe.yaml"))
    views = Views(production)
    for name in CAST:
        views.parts_of(views.person(name))
    return serve(production.timeline, guard=GAP / 2, views=views, view_token=TOKEN)


def current(frame: str | bytes) -> str | None:
    state = json.loads(frame).get("state")
    return (state["current"] or {}).get("id") if state else None


class Watcher(threading.Thread):
    """One view: the moment (perf_counter) each new cue first showed on it."""

    def __init__(self, socket: ClientConnection) -> None:
        super().__init__(daemon=True)
        self.socket, self.stop = socket, False
        self.seen: dict[str, float] = {}

    def run(self) -> None:
        while not self.stop:
            try:
                cue = current(self.socket.recv(timeout=0.2))
            except TimeoutError:
                continue
            except Exception:
                return
            if cue is not None and cue not in self.seen:
                self.seen[cue] = time.perf_counter()


def measure(base: str, gos: int, warm: int, views: int) -> list[float]:
    """Milliseconds from GO sent to the new cue seen, on every view, for each GO after the *warm* first."""
    urls = [f"{base}/view/ws?token={TOKEN}" + ("" if n % 2 == 0 else f"&person={quote(CAST[n // 2 % len(CAST)])}")
            for n in range(views)]
    out: list[float] = []
    with contextlib.ExitStack() as stack:
        watchers = [Watcher(stack.enter_context(connect(u))) for u in urls]
        for watcher in watchers:
            watcher.start()
        stack.callback(stop, watchers)
        with connect(f"{base}/ws") as operator:
            cue: str | None = None
            for n in range(warm + gos):
                time.sleep(GAP)
                sent = time.perf_counter()
                operator.send(json.dumps({"command": "go"}))
                cue = wait_for_cue(operator, cue)
                deadline = time.monotonic() + 5
                while not all(cue in w.seen for w in watchers) and time.monotonic() < deadline:
                    time.sleep(0.002)
                if n >= warm:
                    out += [(w.seen[cue] - sent) * 1000 for w in watchers if cue in w.seen]
    return out


def stop(watchers: list[Watcher]) -> None:
    for watcher in watchers:
        watcher.stop = True


def wait_for_cue(operator: ClientConnection, last: str | None) -> str:
    """The cue the operator's own state shows after its GO: the first other than *last*."""
    while True:
        cue = current(operator.recv())
        if cue is not None and cue != last:
            return cue


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gos", type=int, default=GOS, help="GOs measured")
    parser.add_argument("--warm", type=int, default=WARM, help="GOs before them, not counted")
    parser.add_argument("--views", type=int, default=VIEWS, help="views connected")
    args = parser.parse_args()
    if args.gos < 1 or args.warm < 0 or args.views < 2:
        parser.error("--gos must be at least 1, --warm at least 0 and --views at least 2")
    served = serve_views()
    try:
        values = measure(served.url(""), args.gos, args.warm, args.views)
    finally:
        served.close()
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    print(f"GO to the new cue on {args.views} views (half observe, half cast): n={len(values)} "
          f"median {statistics.median(values):.1f} ms, p99 {p99:.1f} ms, max {max(values):.1f} ms")
    print(f"RESULT views_go_to_view_median_ms={statistics.median(values):.1f}")
    print(f"RESULT views_go_to_view_p99_ms={p99:.1f}")


if __name__ == "__main__":
    main()
