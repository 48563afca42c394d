"""What the benchmarks that start a console share (``console_flood``, ``console_latency``, ``view_latency``): a
console served by uvicorn on a free port of 127.0.0.1, its player on the real clock sending to no port
(``NullPort``), in a thread of this process or in a process of its own. A helper, not a benchmark (its name starts
with ``_``).
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's code, installed or not

import uvicorn

from yuesheng.live.control import Control
from yuesheng.live.player import NullPort, Player, RealClock
from yuesheng.timeline import Timeline
from yuesheng.web.console import Console

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Served:
    """A console being served: its server, its control (for closing it) and its port."""

    server: uvicorn.Server
    control: Control
    port: int

    def url(self, path: str = "/ws") -> str:
        return f"ws://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.control.close("benchmark over")
        self.server.should_exit = True


def serve(timeline: Timeline, *, guard: float, **options: Any) -> Served:
    """A console for *timeline* (GOs within *guard* seconds of the last refused), served in threads of this
    process; *options* go to ``Console`` (views, view_token, notify, …)."""
    clock = RealClock()
    control = Control(clock, guard=guard)
    player = Player(timeline, NullPort(), clock, control=control, stay=True, show=lambda _: None)
    app = Console(timeline, player, control, **options).app()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="critical", lifespan="off"))
    for target in (server.run, player.run):
        threading.Thread(target=target, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return Served(server, control, server.servers[0].sockets[0].getsockname()[1])


@dataclass
class Child:
    """A console in a process of its own: its port, and (once it has stopped) the CPU seconds it used."""

    port: int
    cpu: float = 0.0


def _serve_here(sheet: str, guard: float, ban: bool, said: Any, stop: Any) -> None:
    """The child process of ``in_process``: the console for *sheet*; its port said, and when *stop* is set the CPU
    seconds it used."""
    import yuesheng.web.sockets
    from yuesheng import build, load

    if not ban:  # for a benchmark's comparison: a flood bars nothing
        yuesheng.web.sockets.BAN = 0.0

    served = serve(build(load(ROOT / sheet)), guard=guard, notify=lambda _: None)
    said.put(served.port)
    stop.wait()
    served.close()
    said.put(time.process_time())


@contextmanager
def in_process(sheet: str, *, guard: float, ban: bool = True) -> Iterator[Child]:
    """A console for the cue sheet *sheet* (relative to the checkout) in a process of its own, so that no client
    of the benchmark runs on its event loop or holds its GIL; its port, until the block ends (then its CPU).
    Without *ban*, a flood bars no address (``web.sockets.BAN`` 0)."""
    context = multiprocessing.get_context("spawn")
    said, stop = context.Queue(), context.Event()
    process = context.Process(target=_serve_here, args=(sheet, guard, ban, said, stop), daemon=True)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:  # a SIGTERM unwinds, so the console below is stopped
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    process.start()
    try:
        child = Child(said.get(timeout=120))
        try:
            yield child
        finally:
            stop.set()
            child.cpu = said.get(timeout=10)
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.terminate()
