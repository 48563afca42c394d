"""Nothing on an engraved page touches: every sourced piece, in staff notation and 簡譜, engraved to SVG and
measured glyph by glyph (``glyphboxes``): digits, octave dots, accidentals, bar lines, metre marks and the 詞, 律
and 俗 rows keep apart, neighbouring 律 names by a quarter of a character, and in 簡譜 the lyric rows sit at one
distance under the digits on every line."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from yuesheng.music.score import Piece
from yuesheng.outputs.engrave import Notation, Setting, book_source, engrave, find_cjk_font, piece_bookpart

from glyphboxes import Box, lyric_size, page_boxes, touching

pytest.importorskip("fontTools")


def _sourced(repertoire) -> list[Piece]:
    return [p for p in repertoire if p.playable and not p.realization]


@pytest.fixture(scope="module")
def pages(repertoire, has_engraver, tmp_path_factory: pytest.TempPathFactory) -> dict[Notation, list[Path]]:
    """Every sourced piece engraved as one book per notation, as SVG pages."""
    font = find_cjk_font()
    folder = tmp_path_factory.mktemp("collisions")
    return {notation: engrave(book_source([piece_bookpart(p, Setting(notation=notation)) for p in _sourced(repertoire)],
                                          font=font), folder / f"{notation.value}.svg")
            for notation in Notation}


@pytest.fixture(scope="module")
def part_books(has_engraver, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Two 簡譜 part books: the 笙's (cue lines, lost pieces set on) and the 鑮's (rests, an octave below)."""
    from yuesheng.cli import build_parser
    from yuesheng.cli.common import timeline_of
    from yuesheng.outputs.songbook import engrave_songbook, songbook

    folder = tmp_path_factory.mktemp("parts")
    written = []
    for rite, part in (("xiangyinjiu", "笙"), ("dashe", "鑮")):
        timeline = timeline_of(build_parser().parse_args(["songbook", rite, "-o", "x.pdf"]))
        written += engrave_songbook(songbook(timeline, part=part), Setting(notation=Notation.JIANPU),
                                    folder / f"{rite}.svg", font=find_cjk_font())
    return written


def _describe(pair: tuple[Box, Box, float]) -> str:
    a, b, gap = pair
    return f"{a.kind} {a.text!r} and {b.kind} {b.text!r} at ({a.x0:.1f}, {a.y0:.1f}): gap {gap:.2f}"


@pytest.mark.slow
@pytest.mark.parametrize("notation", list(Notation), ids=lambda n: n.value)
def test_nothing_on_an_engraved_page_touches(pages, repertoire, notation: Notation) -> None:
    font = find_cjk_font()
    texts = set()
    for page in pages[notation]:
        boxes = page_boxes(page, family=font)
        texts |= {b.text for b in boxes}
        problems = [_describe(t) for t in touching(boxes)]
        assert not problems, f"{page.name}: {len(problems)} touching, e.g. {problems[:5]}"
    assert {p.title for p in _sourced(repertoire)} <= texts  # every piece was measured


@pytest.mark.slow
def test_nothing_touches_in_jianpu_part_books(part_books) -> None:
    font = find_cjk_font()
    pages = [page_boxes(page, family=font) for page in part_books]
    row = lyric_size([b for boxes in pages for b in boxes])  # the lyric size of the books, not of a page of prose
    for page, boxes in zip(part_books, pages, strict=True):
        problems = [_describe(t) for t in touching(boxes, row=row)]
        assert not problems, f"{page.name}: {len(problems)} touching, e.g. {problems[:5]}"


def _digit_rows(boxes: list[Box]) -> dict[float, list[Box]]:
    rows: dict[float, list[Box]] = defaultdict(list)
    for b in boxes:
        if b.kind == "text" and b.text.isdigit() and len(b.text) == 1 and b.size > 3:
            rows[b.baseline].append(b)
    return rows


@pytest.mark.slow
def test_jianpu_lyrics_sit_at_one_distance_under_the_digits_and_dots_stand_clear(pages) -> None:
    font = find_cjk_font()
    distances, dots = set(), 0
    for page in pages[Notation.JIANPU]:
        boxes = page_boxes(page, family=font)
        size = lyric_size(boxes)
        lyric_baselines = sorted({b.baseline for b in boxes if b.kind == "text" and b.size == size})
        for baseline, digits in _digit_rows(boxes).items():
            under = [y for y in lyric_baselines if y > baseline]
            if under:
                distances.add(round(under[0] - baseline, 1))
            for circle in (b for b in boxes if b.kind == "circle"):
                digit = next((d for d in digits if d.x0 <= (circle.x0 + circle.x1) / 2 <= d.x1), None)
                if digit is not None and abs(circle.y1 - digit.y0) < 2:  # a dot above this digit
                    assert digit.y0 - circle.y1 >= 0.3, f"{page.name}: a dot sits on its digit at {circle}"
                    dots += 1
    assert dots > 20
    assert max(distances) - min(distances) <= 0.2, distances  # one gap, however crowded the line
