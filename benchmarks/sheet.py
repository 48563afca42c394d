"""How fast the director's page is written and drawn, beside the text run sheet.

Measures, with ``time.perf_counter`` (best of ``--repeat``, 3 by default), for
大射儀 (``dashe``, the longest rite) and, for scale, the other three rites:

1. ``sheet_html(timeline)``: Timeline → the HTML page (the timeline built once,
   outside the timing, as for the text run sheet); the first call, which also
   imports Jinja2 and compiles the templates, is reported apart;
2. ``run_sheet_text(timeline)``: Timeline → the text run sheet, the baseline;
3. Chromium (Debian's ``chromium`` through Playwright, headless): opening the
   page file until its script has laid out the timeline and the plan
   (``html[data-ready=true]``), in a fresh tab of an already running browser —
   parse, style, layout and script; the browser's own start-up is reported
   apart. The first load of a tab pays for font discovery: it is reported as
   ``cold``, the best of the later loads as ``warm``. A blocked rite's page draws its first plate before it is
   ready and the others after (``html[data-plates=drawn]``): the time until every plate is drawn is reported too.

Goal: under 1 s each on this machine. Run ``python benchmarks/sheet.py``
(``--rites dashe`` for one rite). The last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

try:
    import yuesheng  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from yuesheng import load, produce
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


def browser_times(pages: dict[str, Path], repeats: int) -> tuple[float, dict[str, tuple[float, float, float]]]:
    """Chromium's start-up, and per page (cold, warm) seconds from opening the file to the page being ready, and the
    best seconds until every plate is drawn too (the plates after the first are drawn once the page is ready)."""
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
                loads, drawn = [], []
                for _ in range(repeats + 1):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    start = time.perf_counter()
                    page.goto(path.as_uri())
                    page.wait_for_selector("html[data-ready=true]", timeout=30_000)
                    loads.append(time.perf_counter() - start)
                    page.wait_for_selector("html:not([data-plates=drawing])", timeout=60_000)
                    drawn.append(time.perf_counter() - start)
                    page.close()
                out[rite] = (loads[0], min(loads[1:]), min(drawn[1:]))
        finally:
            browser.close()
    return launch, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rites", nargs="+", default=list(RITES), choices=RITES)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: expected at least 1")
    repertoire = load_repertoire()
    folder = Path(tempfile.mkdtemp(prefix="yuesheng-sheet-"))
    pages = {}
    written = {}
    print(f"{'rite':<12} {'events':>7} {'cues':>5} {'page':>9} {'page, 1st':>11} {'page':>11} {'text sheet':>11}")
    for rite in args.rites:
        production = produce(load(data_dir("cues") / f"{rite}.yaml", repertoire=repertoire))
        timeline = production.timeline
        start = time.perf_counter()
        html = sheet_html(production)  # the first call also compiles the templates
        first_s = time.perf_counter() - start
        pages[rite] = folder / f"{rite}.html"
        pages[rite].write_text(html, encoding="utf-8")
        page_s = best_of(args.repeat, partial(sheet_html, production))
        text_s = best_of(args.repeat, partial(run_sheet_text, timeline))
        written[rite] = (page_s, text_s, first_s)
        print(f"{rite:<12} {len(timeline.events):>7} {len(timeline.cues):>5} {len(html.encode()) / 1e6:>7.2f}MB "
              f"{first_s:>10.3f}s {page_s:>10.3f}s {text_s:>10.3f}s")
    launch, loads = browser_times(pages, args.repeat)
    print(f"\nChromium start-up (headless): {launch:.3f}s")
    print(f"{'rite':<12} {'load+draw cold':>15} {'warm':>8} {'every plate':>12}")
    for rite, (cold, warm, plates) in loads.items():
        print(f"{rite:<12} {cold:>14.3f}s {warm:>7.3f}s {plates:>11.3f}s")
    shutil.rmtree(folder)
    focus = "dashe" if "dashe" in written else args.rites[0]
    print(f"\nRESULT sheet_write_first_s[{focus}]={written[focus][2]:.3f}")
    print(f"RESULT sheet_write_s[{focus}]={written[focus][0]:.3f}")
    print(f"RESULT text_run_sheet_s[{focus}]={written[focus][1]:.3f}")
    print(f"RESULT chromium_load_draw_cold_s[{focus}]={loads[focus][0]:.3f}")
    print(f"RESULT chromium_load_draw_warm_s[{focus}]={loads[focus][1]:.3f}")
    print(f"RESULT chromium_every_plate_s[{focus}]={loads[focus][2]:.3f}")


if __name__ == "__main__":
    main()
