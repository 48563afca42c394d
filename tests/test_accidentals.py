"""Right pitches on the staff: what LilyPond draws, read back by an engraver that logs every bar line and note head
(``accidentals``), against what common practice needs of a reader (a sign holds to its bar line, in its octave;
a courtesy sign, in parentheses, in the bar after and in another octave). Every sourced piece alone, in both key
signatures; the four rites' books and every part book of each.

Under ``\\cadenzaOn`` a sign held for the whole stanza: the 14 sourced pieces need 106 signs in the 宫's key and
LilyPond drew 48 (鹿鳴 stanza 1: 蕤 F♯ in bars 1, 3 and 5, the ♯ in bar 1 only)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from accidentals import Head, Reading, Staff, drawn, read

from yuesheng.cli import build_parser
from yuesheng.cli.common import timeline_of
from yuesheng.outputs.engrave import KeySignature, Setting, book_source, find_cjk_font, piece_bookpart
from yuesheng.outputs.songbook import PITCHED_PARTS, songbook, songbook_source

RITES = ("xiangyinjiu", "xiangshe", "yanli", "dashe")


def _check(staves: list[Staff], stanzas: list[tuple[str, tuple[int, ...]]]) -> tuple[int, int]:
    """Assert every staff (one per stanza, described with its line lengths) draws a bar at each line's end and the
    signs a reader needs; returns (signs needed, signs drawn)."""
    assert len(staves) == len(stanzas)
    needed = shown = 0
    problems = []
    for staff, (where, lengths) in zip(staves, stanzas, strict=True):
        assert staff.count(None) == len(lengths), f"{where}: {staff.count(None)} bar lines for {len(lengths)} lines"
        reading = read(staff, where)
        problems += reading.missing + reading.unexplained
        needed, shown = needed + reading.needed, shown + reading.drawn
    assert not problems, f"{len(problems)} wrong: {problems[:6]}"
    return needed, shown


def _lines(title: str, stanza) -> tuple[str, tuple[int, ...]]:
    return f"{title} 第{stanza.number}章", stanza.line_lengths or (len(stanza.notes),)


@pytest.mark.slow
@pytest.mark.parametrize("key", list(KeySignature), ids=lambda k: k.value)
def test_every_sourced_piece_draws_the_signs_a_reader_needs(repertoire, has_engraver, key: KeySignature) -> None:
    pieces = [p for p in repertoire if p.playable and not p.realization]
    source = book_source([piece_bookpart(p, Setting(key=key)) for p in pieces], font=find_cjk_font())
    needed, shown = _check(drawn(source), [_lines(p.title, s) for p in pieces for s in p.stanzas])
    if key is KeySignature.GONG:
        assert (len(pieces), needed) == (14, 106)  # the count, all of them now drawn
        assert shown == needed


@pytest.mark.slow
@pytest.mark.parametrize("rite", RITES)
def test_every_book_and_part_book_draws_the_signs_a_reader_needs(has_engraver, rite: str) -> None:
    timeline = timeline_of(build_parser().parse_args(["songbook", rite, "-o", "x.pdf"]))
    playing = {e.part for e in timeline.events if e.piece} & set(PITCHED_PARTS)
    assert playing
    total = 0
    books = [("", False), *((part, False) for part in sorted(playing)), *([("瑟", True)] if "瑟" in playing else [])]
    for part, doubled in books:  # the 瑟 also played 清中雙彈: each 正律 note with its octave
        book = songbook(timeline, part=part)
        source = songbook_source(book, Setting(doubled=doubled), font=find_cjk_font())
        stanzas = [_lines(f"{rite} {part or 'all'} {e.piece.title}", s) for e in book.entries if e.piece.playable
                   for s in e.piece.stanzas]
        total += _check(drawn(source), stanzas)[0]
    assert total


def _head(letter: int, alteration: int, drawn: str, octave: int = 0) -> Head:
    return Head(letter, octave, Fraction(alteration), Fraction(0), drawn)


def test_the_reader_holds_a_sign_to_its_bar_line_in_its_octave() -> None:
    """The rule itself, on staves made by hand: C major, F♯ twice in a bar, then F♯ after the bar line."""
    sharp, again, bar = _head(3, 1, "plain"), _head(3, 1, "none"), None
    assert read([sharp, again, bar, _head(3, 1, "plain")]) == Reading(2, 2, [], [])
    dropped = read([sharp, again, bar, _head(3, 1, "none")])  # what \cadenzaOn drew: the ♯ only in bar 1
    assert dropped.needed == 2 and len(dropped.missing) == 1 and "bar 2" in dropped.missing[0]
    assert read([sharp, _head(3, 0, "plain", octave=1)]).missing == [  # another octave: a courtesy ♮ expected
        " bar 1: F+1 ♮ expects a courtesy sign, drawn plain"]
    assert read([sharp, bar, _head(3, 0, "cautionary")]) == Reading(1, 2, [], [])  # the bar after: (♮)
    assert read([_head(3, 0, "plain")]).unexplained  # a ♮ on a plain F in C major: nobody needs it
