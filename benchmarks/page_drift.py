"""How far the director's page's time strays from its sound's while playing at ×1 (issue 30: within 0.25 s).

A real render: ``yuesheng audio RITE --music-only --from FIRST --to LAST`` (default 鄉飲酒禮's 升歌 and 笙, whose
condensed file cuts the silence between them), and the page of the rite with it beside (``yuesheng sheet RITE
--audio FILE``), both written by the commands themselves. The page is opened in headless Chromium (autoplay
allowed), the transport sent to ``--lead`` seconds before the map's first cut (the silence after the first cue's
music, shortened: the play crosses it into the next) and played at ×1 for ``--seconds``. Every 20 ms, on a timer
of its own (not the page's animation frames, which set the page's time), the page is sampled: the sound's position
in its file (``currentTime``) and the plate's time (``data-t``, seconds into the rite). The drift is the page's
time taken into the file through the map (as the page reads it) less the sound's, in the file's seconds — where
the map keeps the rite's pace, the same in the rite's. Reported: the largest, the median and the 95th percentile
of |drift| from the moment the sound plays, how long the sound took to start, the sound's own rate against the
page's clock (``performance.now()``), and the load average beside them.

Run ``python benchmarks/page_drift.py``; the last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 0.25  # seconds

_SAMPLE = """ms => { // sample the sound's time and the plate's every ms milliseconds, on a timer of its own
  const audio = yueshengTransport.audio(), plate = document.getElementById('player');
  window.driftSamples = [];
  window.driftTimer = setInterval(() => window.driftSamples.push(
    [performance.now(), audio.currentTime, Number(plate.dataset.t), audio.paused, audio.readyState]), ms); }"""


def yuesheng(*argv: str) -> str:
    """Run a yuesheng command of this checkout; its standard output (SystemExit with its error if it fails)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "yuesheng", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"yuesheng {' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def sound_data(page: Path) -> dict[str, object]:
    """The ``#audio-data`` island ``sheet --audio`` wrote into *page*: the file and its map."""
    found = re.search(r'<script type="application/json" id="audio-data">(.*?)</script>',
                      page.read_text(encoding="utf-8"), re.S)
    if found is None:
        raise SystemExit(f"{page} has no sound beside it")
    data: dict[str, object] = json.loads(found[1])
    return data


def file_of(knots: list[list[float]], rite: float) -> float:
    """The file's time for the rite's *rite* seconds: the map's knots [rite, file], linear between, slope 1
    beyond (as the page reads it)."""
    xs = [k[0] for k in knots]
    if rite <= xs[0]:
        return knots[0][1] + rite - xs[0]
    if rite >= xs[-1]:
        return knots[-1][1] + rite - xs[-1]
    i = bisect.bisect_right(xs, rite)
    (a, fa), (b, fb) = knots[i - 1], knots[i]
    return fa + (fb - fa) * (rite - a) / (b - a) if b > a else fb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rite", default="xiangyinjiu")
    parser.add_argument("--from", dest="first", default="shengge")
    parser.add_argument("--to", dest="last", default="sheng-yue")
    parser.add_argument("--lead", type=float, default=8.0, help="seconds before the first cue's end to start at")
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of playing sampled")
    args = parser.parse_args()
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("no Chromium on this machine (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="yuesheng-drift-") as folder:
        sound, page = Path(folder) / f"{args.rite}.flac", Path(folder) / f"{args.rite}.html"
        began = time.perf_counter()
        yuesheng("audio", args.rite, "--music-only", "--from", args.first, "--to", args.last, "-o", str(sound))
        rendered = time.perf_counter() - began
        yuesheng("sheet", args.rite, "--audio", str(sound), "-o", str(page))
        knots = sound_data(page)["map"]
        assert isinstance(knots, list) and knots, "a --music-only render has a map"
        cut = first_cut(knots, knots[0][0])
        start = max(knots[0][0], cut - args.lead) if cut < float("inf") else knots[0][0] + args.lead
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=exe, args=["--autoplay-policy=no-user-gesture-required"])
            try:
                tab = browser.new_page(viewport={"width": 1440, "height": 900})
                tab.goto(page.as_uri())
                tab.wait_for_selector("html[data-ready=true]", timeout=60_000)
                tab.wait_for_function("document.getElementById('sound-state').textContent.startsWith('sound: ')"
                                      " && !document.getElementById('sound-state').textContent.includes('loading')",
                                      timeout=60_000)
                tab.evaluate("document.getElementById('player').scrollIntoView()")
                tab.evaluate("t => yueshengTransport.seek(t)", start)
                load_before = os.getloadavg()[0]
                tab.evaluate(_SAMPLE, 20)
                pressed = tab.evaluate("performance.now()")
                tab.click("#play")
                time.sleep(args.seconds)
                samples = tab.evaluate("clearInterval(window.driftTimer), window.driftSamples")
                state = tab.inner_text("#sound-state")
                tab.click("#pause")
                load_after = os.getloadavg()[0]
            finally:
                browser.close()
    heard = [s for s in samples if not s[3] and s[4] >= 3 and s[0] >= pressed]
    if len(heard) < 10:
        raise SystemExit(f"the sound did not play in Chromium ({state!r}; {len(heard)} samples while playing)")
    drift = [file_of(knots, page_t) - file_t for _, file_t, page_t, _, _ in heard]
    size = sorted(abs(d) for d in drift)
    p95 = size[int(len(size) * 0.95) - 1]
    late = (heard[0][0] - pressed) / 1000
    rate = (heard[-1][1] - heard[0][1]) / ((heard[-1][0] - heard[0][0]) / 1000)
    crossed = heard[0][2] < first_cut(knots, heard[0][2]) <= heard[-1][2]
    print(f"{args.rite} --music-only --from {args.first} --to {args.last} rendered in {rendered:.1f} s; played at ×1 "
          f"from {start:.1f} s of the rite for {args.seconds:g} s: {len(heard)} samples with the sound playing "
          f"(rite {heard[0][2]:.1f} → {heard[-1][2]:.1f} s, file {heard[0][1]:.2f} → {heard[-1][1]:.2f} s; "
          f"{'across' if crossed else 'not across'} a cut of the map); {state}")
    verdict = "ok" if size[-1] <= GOAL else "OVER GOAL"
    print(f"RESULT page_audio_drift_max_s={size[-1]:.3f} ({verdict}; goal <= {GOAL:g}) median_s="
          f"{statistics.median(size):.3f} p95_s={p95:.3f} mean_signed_s={statistics.fmean(drift):+.3f} "
          f"sound_started_after_s={late:.2f} sound_rate={rate:.4f} load_average={load_before:.2f}->{load_after:.2f} "
          f"on {os.cpu_count()} cores")


def first_cut(knots: list[list[float]], at: float) -> float:
    """Where, in the rite's seconds, the first cut of the map after *at* begins: the first of its knots from which
    the file no longer keeps the rite's pace (inf if none)."""
    for (a, fa), (b, fb) in zip(knots, knots[1:], strict=False):
        if b > at and abs((fb - fa) - (b - a)) > 1e-6:
            return a
    return float("inf")


if __name__ == "__main__":
    main()
