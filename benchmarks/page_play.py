"""Frames a second while the director's page plays a rite's busiest cue (issue 30: goal >= 30 fps for 大射儀 at
1440×900 in headless Chromium, on the 2-core machine).

The page is written (``sheet``), opened in headless Chromium at ``--size``, every plate drawn; the transport jumps to
the cue with the most walks and plays at ``--speed`` for ``--seconds``. The frames are counted in the page (its
requestAnimationFrame callbacks: the transport's own count, and the intervals between them, for the slowest); the
script's own time a frame (placing every member, the captions) is measured apart, by seeking frame by frame.
The load average before and after is printed, since other work on the machine takes frames.

Run ``python benchmarks/page_play.py``; the last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's code, installed or not

from yuesheng import load, produce
from yuesheng.web.sheet import sheet_file

GOAL = 30.0

_INTERVALS = """() => new Promise((done) => { // the page's frame intervals for a while, in ms
  const out = []; let last = null;
  const step = (now) => { if (last !== null) out.push(now - last); last = now;
    if (out.length < 120) requestAnimationFrame(step); else done(out); };
  requestAnimationFrame(step); })"""

_SCRIPT_MS = """([t0, t1, n]) => { // the transport's work for n frames, seeking through the cue
  const start = performance.now();
  for (let k = 0; k < n; k += 1) yueshengTransport.seek(t0 + (t1 - t0) * k / n);
  return (performance.now() - start) / n; }"""


def busiest(rite: str) -> tuple[str, float, float, int, object]:
    """The rite's cue with the most walks: its id, span, walks, and the production."""
    production = produce(load(rite))
    motion = production.motion
    if motion is None:
        raise SystemExit(f"{rite} has no blocking in force: nothing moves on its page")
    walks = Counter(leg.cue for m in motion.members for leg in motion.legs(m))
    cue, count = walks.most_common(1)[0]
    start, end = motion.span(cue)
    return cue, start, end, count, production


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rite", default="dashe")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of playing measured")
    parser.add_argument("--speed", type=int, default=1, choices=(1, 2, 5, 10, 20, 30, 60))
    parser.add_argument("--size", default="1440x900")
    parser.add_argument("--screenshot", type=Path, help="a PNG of the page while playing, to look at")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.lower().split("x"))
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("no Chromium on this machine (apt-get install chromium)")
    cue, start, end, walks, production = busiest(args.rite)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder, sync_playwright() as p:
        page = Path(folder) / f"{args.rite}.html"
        page.write_bytes(sheet_file(production))  # type: ignore[arg-type]
        browser = p.chromium.launch(executable_path=exe)
        try:
            tab = browser.new_page(viewport={"width": width, "height": height})
            tab.goto(page.as_uri())
            tab.wait_for_selector("html[data-ready=true]", timeout=60_000)
            tab.wait_for_selector("html:not([data-plates=drawing])", timeout=120_000)
            tab.evaluate("document.getElementById('player').scrollIntoView()")
            script_ms = tab.evaluate(_SCRIPT_MS, [start, end, 200])
            tab.evaluate("t => yueshengTransport.seek(t)", start)
            tab.select_option("#speed", str(args.speed))
            load_before = os.getloadavg()[0]
            tab.click("#play")
            first, began = tab.evaluate("yueshengTransport.frames()"), time.perf_counter()
            time.sleep(args.seconds)
            frames, elapsed = tab.evaluate("yueshengTransport.frames()") - first, time.perf_counter() - began
            intervals = sorted(tab.evaluate(_INTERVALS))
            if args.screenshot:
                tab.screenshot(path=str(args.screenshot))
            tab.click("#pause")
            load_after = os.getloadavg()[0]
        finally:
            browser.close()
    fps = frames / elapsed
    p95 = intervals[int(len(intervals) * 0.95) - 1]
    print(f"{args.rite}: cue {cue} ({walks} walks, {end - start:.0f} s) at ×{args.speed}, {width}x{height}: "
          f"{frames} frames in {elapsed:.1f} s")
    print(f"RESULT page_play_fps[{args.rite}]={fps:.1f} ({'ok' if fps >= GOAL else 'BELOW GOAL'}; goal >= {GOAL:g}) "
          f"frame_p95_ms={p95:.1f} script_ms_per_frame={script_ms:.2f} "
          f"load_average={load_before:.2f}->{load_after:.2f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
