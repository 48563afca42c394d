"""How long a GO from one page takes to show on a second page of the console, on one machine.

A console for 鄉射禮 (``cues/xiangshe.yaml``) is served by uvicorn on a free port of 127.0.0.1, its player on the real
clock sending to no port (``NullPort``; ``_served.serve``). Two WebSocket clients connect, as a laptop and a tablet
would. The first sends GO; the time from that send to the first state frame on the second client that shows the new
cue is the latency. GOs are ``GAP`` seconds apart (the guard set below that); the first ``WARM`` (``--warm``) are
not counted.

Run ``python benchmarks/console_latency.py``; the last lines are ``RESULT`` lines (the issue's target: a median
under 30 ms).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's code, installed or not

from websockets.sync.client import connect

from benchmarks._served import ROOT, serve
from yuesheng import build, load

GOS = 55  # measured, after the WARM first
WARM = 5
GAP = 0.15  # seconds between GOs


def current(frame: str | bytes) -> str | None:
    data = json.loads(frame)
    state = data.get("state")
    return (state["current"] or {}).get("id") if state else None


def measure(url: str, gos: int, warm: int) -> list[float]:
    """Milliseconds from GO sent on one client to the new cue seen on the other, one per GO after the *warm* first."""
    out = []
    with connect(url) as first, connect(url) as second:
        seen = current(second.recv())
        for _ in range(warm + gos):
            time.sleep(GAP)
            sent = time.perf_counter()
            first.send(json.dumps({"command": "go"}))
            while (now := current(second.recv())) in (None, seen):
                pass
            out.append((time.perf_counter() - sent) * 1000)
            seen = now
            drain(first)
    return out[warm:]


def drain(client: object) -> None:
    """Read what has arrived on *client* (its own states and replies), without waiting."""
    try:
        while True:
            client.recv(timeout=0)  # type: ignore[attr-defined]
    except TimeoutError:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gos", type=int, default=GOS, help="GOs measured")
    parser.add_argument("--warm", type=int, default=WARM, help="GOs before them, not counted")
    args = parser.parse_args()
    if args.gos < 1 or args.warm < 0:
        parser.error("--gos must be at least 1 and --warm at least 0")
    served = serve(build(load(ROOT / "cues" / "xiangshe.yaml")), guard=GAP / 2)
    try:
        values = measure(served.url(), args.gos, args.warm)
    finally:
        served.close()
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    print(f"GO on one client to the new cue on another: n={len(values)} median {statistics.median(values):.1f} ms, "
          f"p95 {p95:.1f} ms, max {max(values):.1f} ms")
    print(f"RESULT console_go_to_client_median_ms={statistics.median(values):.1f}")
    print(f"RESULT console_go_to_client_max_ms={max(values):.1f}")


if __name__ == "__main__":
    main()
