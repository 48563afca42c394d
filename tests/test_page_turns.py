"""Page turns in the songbooks, read back from the PDFs with pypdf: no stanza is split by a page turn, and a piece
that fits on two pages lies on facing pages (a left-hand, even page and the right-hand page after it). Checked on
the four rites' books and two part books each."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from yuesheng.cli import build_parser
from yuesheng.cli.common import timeline_of
from yuesheng.outputs.engrave import Setting, find_cjk_font
from yuesheng.outputs.songbook import engrave_songbook, songbook

pypdf = pytest.importorskip("pypdf")

BOOKS = [("xiangyinjiu", ""), ("xiangyinjiu", "歌"), ("xiangyinjiu", "笙"),
         ("xiangshe", ""), ("xiangshe", "歌"), ("xiangshe", "瑟"),
         ("yanli", ""), ("yanli", "歌"), ("yanli", "笙"),
         ("dashe", ""), ("dashe", "歌"), ("dashe", "鐘")]


def _pages(path: Path) -> list[str]:
    """Each page's text in layout order, without white space."""
    return ["".join(page.extract_text(extraction_mode="layout").split()) for page in pypdf.PdfReader(path).pages]


@pytest.mark.slow
@pytest.mark.parametrize(("rite", "part"), BOOKS, ids=[f"{r}-{p or 'all'}" for r, p in BOOKS])
def test_no_page_turn_inside_a_stanza_or_a_two_page_piece(has_engraver, tmp_path: Path, rite: str, part: str) -> None:
    timeline = timeline_of(build_parser().parse_args(["songbook", rite, "-o", "x.pdf"]))
    book = songbook(timeline, part=part)
    out = tmp_path / "book.pdf"
    engrave_songbook(book, Setting(), out, font=find_cjk_font())
    pages = _pages(out)
    chars = [Counter(text) for text in pages]
    checked = 0
    for entry in book.entries:
        if entry.piece.realization or not entry.piece.playable:
            continue
        spans = []
        for stanza in entry.piece.stanzas:
            heading = f"第{stanza.number}章" + (f"·{stanza.page}" if stanza.page else "")
            sung = Counter(s.note.lyric for s in entry.slots if s.note.stanza == stanza.number and s.key is not None
                           and s.note.lyric.strip())
            # the page with the stanza's heading holds every syllable it sings: the stanza is not split
            whole = [n for n, text in enumerate(pages, start=1) if heading in text and not sung - chars[n - 1]]
            assert whole, f"{entry.piece.title} {heading}: no page holds the whole stanza"
            spans.append(whole)
            checked += 1
        first = min(s[0] for s in spans)
        last = max(min(s for s in candidates if s >= first) for candidates in spans)
        if last - first == 1:  # two pages: the first a left-hand page, so that they lie open together
            assert first % 2 == 0, f"{entry.piece.title} on pages {first}-{last}: a page turn inside it"
    assert checked
