"""Page layout of the songbooks, read back from the PDFs with pypdf: the contents and notices on one page; every
piece's heading, cue lines and first stanza on one page; a page left blank only before a piece that needs the
spread (its last stanza on the page after its first). Every rite's book, in staff notation and 簡譜, and every part
book of every rite.

Three blank pages preceded a piece that fits on one page (鄉飲酒禮 staff p5, 簡譜 p7; 大射儀 staff p11): the first
pass counted the lost pieces set on after it as part of it. Cue lines landed overleaf from their heading (崇丘, 由庚).
The second page of each songbook held the last lines of the notices."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from yuesheng.cli import build_parser
from yuesheng.cli.common import timeline_of
from yuesheng.music.score import Stanza
from yuesheng.outputs.engrave import Notation
from yuesheng.outputs.songbook import PITCHED_PARTS, Entry, _heading, songbook

pypdf = pytest.importorskip("pypdf")

RITES = ("xiangyinjiu", "xiangshe", "yanli", "dashe")
_BLANK = re.compile(r"Thispageisleftblanksothat(.+?)liesopen")


def _pages(path: Path) -> list[str]:
    """Each page's text in layout order, without white space."""
    return ["".join(page.extract_text(extraction_mode="layout").split()) for page in pypdf.PdfReader(path).pages]


def _squeeze(text: str) -> str:
    return "".join(text.split())


def _cjk(text: str) -> str:
    """The Chinese characters of *text* alone: pypdf's layout order of Latin punctuation is not the source's."""
    return "".join(c for c in text if ord(c) >= 0x2E80 and not 0xE000 <= ord(c) <= 0xF8FF)  # not the music font's


def _stanza_on(page: str, entry: Entry, stanza: Stanza) -> bool:
    """Whether *page* holds *stanza*'s heading and every syllable it sings in *entry*."""
    heading = f"第{stanza.number}章"
    sung = Counter(s.note.lyric.strip() for s in entry.slots if s.note.stanza == stanza.number and s.key is not None
                   and s.note.lyric.strip())
    return _cjk(heading) in page and not sung - Counter(page)


def _check_book(path: Path, book) -> None:
    pages = _pages(path)
    notices = "Notices" in pages[0] or not book.notices
    assert "目錄" in pages[0] and notices and "•" not in pages[1], "the contents and notices do not fit on page 1"
    cursor = 1
    for entry in book.entries:
        # the title over the mode line: the piece's heading, not a cue line naming it
        title = _cjk(entry.piece.title + (entry.piece.mode.name if entry.piece.mode else ""))
        at = next(n for n in range(cursor, len(pages)) if title in _cjk(pages[n]))
        page = _cjk(pages[at])[_cjk(pages[at]).index(title):]
        lines = [_heading(h) for h in entry.hearings] + ([entry.cue_line] if entry.cue_line else [])
        for line in lines:  # the heading's lines with the title, and the music after them
            assert _cjk(line)[:12] in page, f"{path.name} p{at + 1}: {entry.piece.title}'s {line[:30]!r} overleaf"
        stanzas = [s for s in entry.piece.stanzas if any(x.note.stanza == s.number for x in entry.slots)]
        if stanzas:
            assert _stanza_on(page, entry, stanzas[0]), f"{path.name} p{at + 1}: {entry.piece.title} apart from music"
        blank = _BLANK.search(pages[at - 1])
        if blank:  # a blank page only before a piece that needs the spread: it ends on the page after it begins
            assert blank[1] == entry.piece.title
            first, second = _cjk(pages[at]), _cjk(pages[at + 1])
            assert not _stanza_on(first, entry, stanzas[-1]) and _stanza_on(second, entry, stanzas[-1]), (
                f"{path.name} p{at}: a blank page before {entry.piece.title}, which fits on p{at + 1}")
        cursor = at


def _books(timeline) -> list[tuple[str, Notation]]:
    playing = sorted({e.part for e in timeline.events if e.piece} & set(PITCHED_PARTS), key=PITCHED_PARTS.index)
    return [("", Notation.STAFF), ("", Notation.JIANPU)] + [(part, Notation.STAFF) for part in playing]


@pytest.mark.slow
@pytest.mark.parametrize("rite", RITES)
def test_every_book_keeps_headings_with_music_and_leaves_no_pointless_blank_page(has_engraver, run, tmp_path: Path,
                                                                                  rite: str) -> None:
    """Each book as the command makes it (its contents page names the variants and readings in full)."""
    timeline = timeline_of(build_parser().parse_args(["songbook", rite, "-o", "x.pdf"]))
    for part, notation in _books(timeline):
        out = tmp_path / f"{rite}-{part or 'all'}-{notation.value}.pdf"
        options = ["--notation", notation.value, *(["--part", part] * bool(part))]
        code, _, err = run("songbook", rite, "-o", str(out), *options)
        assert code == 0, err
        _check_book(out, songbook(timeline, part=part))
