"""How fast the director's page is written and drawn, beside the text run sheet.

Measures, with ``time.perf_counter`` (best of ``--repeat``, 3 by default), for
大射儀 (``dashe``, the longest rite) and, for scale, the other three rites:

1. ``sheet_html(timeline)``: Timeline → the HTML page, made with every cache off (``kept``: read back from the page
   kept by the run before, ``web/pages.py``, as a warm ``sheet`` does) (the timeline built once,
   outside the timing, as for the text run sheet); the first call, which also
   imports Jinja2 and compiles the templates, is reported apart;
2. ``run_sheet_text(timeline)``: Timeline → the text run sheet, the baseline;
3. Chromium (Debian's ``chromium`` through Playwright, headless): opening the
   page file until its script has laid out the timeline and the plan
   (``html[data-ready=true]``), in a fresh tab of an already running browser —
   parse, style, layout and script; the browser's own start-up is reported
   apart. The first load of a tab pays for font discovery: it is reported as
   ``cold``, the best of the later loads as ``warm``. A blocked rite's page draws its first plate before it is
   ready and the others after it has loaded, while the browser is idle: the time until every plate is drawn
   (``html[data-plates=drawn]``: each plate's people, set pieces, walks and placed labels in the page, shown or
   not — one plate shows at a time, and print shows them all) is reported too.

Those times are the harness's: from asking for the page to Playwright seeing the attribute (it waits for the load
event, then queries the page). The page's own clock is read too (``performance.mark``: from the navigation's start
to ``yuesheng-ready`` and ``yuesheng-plates-drawn``), with what needs no clock: the page's elements once every plate
is drawn, and Chromium's counts of layouts and style recalculations with the time they took (``Performance``
metrics). The load average is printed beside the figures: the machine is shared.

Goal (issue 35): ready in under 1 s and every plate drawn in under 1.5 s. Run ``python benchmarks/sheet.py``
(``--rites dashe`` for one rite). The last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

try:
    import yuesheng  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from yuesheng import caches, load, produce
from yuesheng.music.repertoire import data_dir, load_repertoire
from yuesheng.outputs.report import run_sheet_text
from yuesheng.web.sheet import sheet_html

RITES = ("dashe", "xiangshe", "xiangyinjiu", "yanli")


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    """The fastest of *repeats* runs of *fn*, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


@dataclass(frozen=True, slots=True)
class Drawn:
    """One rite's page in Chromium: the harness's (cold, warm) seconds to ready and best to every plate drawn, the
    page's own best milliseconds to both, and, from the last load, its elements with every plate drawn, its layouts
    and style recalculations and their milliseconds."""

    cold: float
    warm: float
    plates: float
    own_ready_ms: float
    own_plates_ms: float
    elements: int
    layouts: int
    styles: int
    layout_ms: float
    style_ms: float


OWN_CLOCK = """() => { const at = (name) => (performance.getEntriesByName(name)[0] || {}).startTime;
  const ready = at('yuesheng-ready'); return [ready, at('yuesheng-plates-drawn') || ready,
  document.getElementsByTagName('*').length]; }"""


def browser_times(pages: dict[str, Path], repeats: int) -> tuple[float, dict[str, Drawn]]:
    """Chromium's start-up, and per page how it loads and draws (``Drawn``; the plates after the first are drawn
    once the page has loaded)."""
    from playwright.sync_api import sync_playwright

    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        raise SystemExit("no chromium on this machine (apt-get install chromium)")
    out = {}
    with sync_playwright() as p:
        start = time.perf_counter()
        browser = p.chromium.launch(executable_path=exe, timeout=60_000)
        launch = time.perf_counter() - start
        try:
            for rite, path in pages.items():
                loads, drawn, own = [], [], []
                for _ in range(repeats + 1):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    cdp = page.context.new_cdp_session(page)
                    cdp.send("Performance.enable")
                    start = time.perf_counter()
                    page.goto(path.as_uri())
                    page.wait_for_selector("html[data-ready=true]", timeout=30_000)
                    loads.append(time.perf_counter() - start)
                    page.wait_for_selector("html:not([data-plates=drawing])", timeout=60_000)
                    drawn.append(time.perf_counter() - start)
                    own.append(page.evaluate(OWN_CLOCK))
                    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
                    page.close()
                out[rite] = Drawn(loads[0], min(loads[1:]), min(drawn[1:]), min(o[0] for o in own[1:]),
                                  min(o[1] for o in own[1:]), own[-1][2], int(metrics["LayoutCount"]),
                                  int(metrics["RecalcStyleCount"]), metrics["LayoutDuration"] * 1000,
                                  metrics["RecalcStyleDuration"] * 1000)
        finally:
            browser.close()
    return launch, out


def load_average() -> str:
    """The 1-minute load average and the cores, as printed beside each figure."""
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rites", nargs="+", default=list(RITES), choices=RITES)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: expected at least 1")
    folder = Path(tempfile.mkdtemp(prefix="yuesheng-sheet-"))
    os.environ["XDG_CACHE_HOME"] = str(folder / "cache")  # a cache of this run's own, not the user's
    repertoire = load_repertoire()
    pages = {}
    written = {}
    print(f"{'rite':<12} {'events':>7} {'cues':>5} {'page':>9} {'page, 1st':>11} {'page':>11} {'kept':>11} "
          f"{'text sheet':>11}")
    for rite in args.rites:
        production = produce(load(data_dir("cues") / f"{rite}.yaml", repertoire=repertoire))
        timeline = production.timeline
        caches.disable()  # the page made, not read back from the kept page
        try:
            start = time.perf_counter()
            html = sheet_html(production)  # the first call also compiles the templates
            first_s = time.perf_counter() - start
            page_s = best_of(args.repeat, partial(sheet_html, production))
        finally:
            caches.enable()
        pages[rite] = folder / f"{rite}.html"
        pages[rite].write_text(html, encoding="utf-8")
        sheet_html(production)  # kept
        kept_s = best_of(args.repeat, partial(sheet_html, production))
        text_s = best_of(args.repeat, partial(run_sheet_text, timeline))
        written[rite] = (page_s, text_s, first_s, kept_s)
        print(f"{rite:<12} {len(timeline.events):>7} {len(timeline.cues):>5} {len(html.encode()) / 1e6:>7.2f}MB "
              f"{first_s:>10.3f}s {page_s:>10.3f}s {kept_s:>10.3f}s {text_s:>10.3f}s")
    before = load_average()
    launch, loads = browser_times(pages, args.repeat)
    print(f"\nChromium start-up (headless): {launch:.3f}s ({before} before, {load_average()} after)")
    print(f"{'rite':<12} {'load+draw cold':>15} {'warm':>8} {'every plate':>12} {'own: ready':>11} {'plates':>8} "
          f"{'elements':>9} {'layouts':>8} {'styles':>7} {'layout':>8} {'style':>8}")
    for rite, d in loads.items():
        print(f"{rite:<12} {d.cold:>14.3f}s {d.warm:>7.3f}s {d.plates:>11.3f}s {d.own_ready_ms:>8.0f} ms "
              f"{d.own_plates_ms:>5.0f} ms {d.elements:>9} {d.layouts:>8} {d.styles:>7} {d.layout_ms:>5.0f} ms "
              f"{d.style_ms:>5.0f} ms")
    shutil.rmtree(folder)
    focus = "dashe" if "dashe" in written else args.rites[0]
    d = loads[focus]
    print(f"\nRESULT sheet_write_first_s[{focus}]={written[focus][2]:.3f}")
    print(f"RESULT sheet_write_s[{focus}]={written[focus][0]:.3f}")
    print(f"RESULT sheet_kept_s[{focus}]={written[focus][3]:.3f}")
    print(f"RESULT text_run_sheet_s[{focus}]={written[focus][1]:.3f}")
    print(f"RESULT chromium_load_draw_cold_s[{focus}]={d.cold:.3f}")
    print(f"RESULT chromium_load_draw_warm_s[{focus}]={d.warm:.3f}")
    print(f"RESULT chromium_every_plate_s[{focus}]={d.plates:.3f}")
    print(f"RESULT page_own_ready_ms[{focus}]={d.own_ready_ms:.0f} "
          f"page_own_every_plate_ms[{focus}]={d.own_plates_ms:.0f} ({load_average()})")
    print(f"RESULT page_elements[{focus}]={d.elements} layouts={d.layouts} style_recalcs={d.styles} "
          f"layout_ms={d.layout_ms:.0f} style_ms={d.style_ms:.0f}")


if __name__ == "__main__":
    main()
