"""How long engraving takes: one ode, and each rite's whole songbook.

Measures, with ``time.perf_counter`` (best of ``--repeat``, default 3), end to
end as a user waits for it (finding the font, writing the LilyPond source,
running LilyPond, copying the file into place):

1. one ode, 鹿鳴 (3 stanzas, 103 notes), to PDF in staff notation and in 簡譜,
   and to SVG;
2. the songbook PDF of each shipped rite (timeline build included), staff
   notation, with both LilyPond runs (the first measures the pages for the page turns); the goal is 大射儀's
   under 30 s.

Run ``python benchmarks/engrave.py``; the last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's yuesheng, not an installed one

from yuesheng import build, load
from yuesheng.cuesheet import CueSheet
from yuesheng.music.repertoire import data_dir, load_repertoire
from yuesheng.music.score import Piece
from yuesheng.outputs.engrave import Notation, Setting, engrave, find_cjk_font, score_source
from yuesheng.outputs.songbook import engrave_songbook, songbook

RITES = ("xiangyinjiu", "xiangshe", "yanli", "dashe")


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def ode(piece: Piece, notation: Notation, path: Path) -> None:
    """Engrave *piece* alone in *notation* to *path*."""
    engrave(score_source(piece, Setting(notation=notation)), path)


def book(sheet: CueSheet, path: Path) -> None:
    """Build the timeline of *sheet* and engrave its songbook to *path*."""
    timeline = build(sheet)
    engrave_songbook(songbook(timeline), Setting(realization=timeline.realization), path, font=find_cjk_font())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rites", nargs="*", default=list(RITES), choices=RITES, help="the songbooks to engrave")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: expected at least 1")
    repertoire = load_repertoire()
    luming = repertoire.find("鹿鳴")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        results = {}
        for label, notation, suffix in (("ode_pdf_staff", Notation.STAFF, "pdf"),
                                        ("ode_pdf_jianpu", Notation.JIANPU, "pdf"),
                                        ("ode_svg_staff", Notation.STAFF, "svg")):
            seconds = best(partial(ode, luming, notation, out / f"o.{suffix}"), args.repeat)
            results[label] = seconds
            print(f"鹿鳴 {notation.value} {suffix}: {seconds:.2f} s")
        for rite in args.rites:
            sheet = load(data_dir("cues") / f"{rite}.yaml", repertoire=repertoire)
            seconds = best(partial(book, sheet, out / f"{rite}.pdf"), args.repeat)
            results[f"songbook_{rite}"] = seconds
            pieces = len(songbook(build(sheet)).entries)
            print(f"{rite} songbook: {pieces} pieces, {seconds:.2f} s")
    for label, seconds in results.items():
        print(f"RESULT engrave_{label}_s={seconds:.2f}")


if __name__ == "__main__":
    main()
