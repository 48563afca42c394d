"""Every passage of docs/music-passages.md (and the archery table beside it) against the timeline it claims.

Each table row ends with a machine-readable ``check`` cell (grammar in the doc's
"The check column"); this test builds the rite's timeline with the row's variants
and readings and checks the pieces in order, the 終, the parts and the anchors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest

from yuesheng.repertoire import data_dir, load_repertoire
from yuesheng.timeline import CueTiming, EventKind, Options, Timeline, build_timeline, ticks
from yuesheng.validate import load_cuesheet

DOCS = Path(__file__).resolve().parents[1] / "docs"
TABLES = ("music-passages.md", "music-passages.archery.md")
RITES = {"鄉飲酒禮": "xiangyinjiu", "鄉射禮": "xiangshe", "燕禮": "yanli", "大射儀": "dashe"}
PHRASE_SLACK = ticks(Fraction(6))  # 樂闋 stops at the end of the phrase in progress: four notes of 1.5 s
SOUNDING = (EventKind.NOTE, EventKind.DRUM)


@dataclass(frozen=True)
class Row:
    table: str
    line: int
    rite: str
    page: str
    quote: str
    check: str

    def __str__(self) -> str:
        return f"{self.table}:{self.line} {self.rite} {self.page}"


def _rows() -> list[Row]:
    """The rows of every table with a ``check`` column (a table without one is tested by its owner's tests)."""
    rows = []
    for name in TABLES:
        path = DOCS / name
        if not path.exists():
            continue
        has_check = False
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("|") and cells[0] == "rite":
                has_check = cells[-1] == "check"
            elif line.startswith("|") and cells[0] in RITES and has_check:
                check = re.fullmatch(r"`(.*)`", cells[-1])
                rows.append(Row(name, n, cells[0], cells[1], cells[2], check.group(1) if check else ""))
    return rows


ROWS = _rows()


@cache
def _timeline(rite: str, opts: tuple[str, ...]) -> Timeline:
    variants = frozenset(o[1:] for o in opts if o.startswith("+"))
    readings = dict(o.split("=", 1) for o in opts if "=" in o)
    sheet = load_cuesheet(data_dir("cues") / f"{RITES[rite]}.yaml", load_repertoire())
    return build_timeline(sheet, Options(variants=variants, readings=readings))


def _spec(text: str) -> tuple[str, tuple[str, ...]]:
    """'heyue [+mingri heyue=li-rugui]' → ('heyue', ('+mingri', 'heyue=li-rugui'))."""
    match = re.fullmatch(r"\s*([a-z0-9-]+)\s*(?:\[([^\]]*)\])?\s*", text)
    assert match, f"bad cue spec {text!r}"
    return match.group(1), tuple(sorted((match.group(2) or "").split()))


def _timing(timeline: Timeline, cue: str) -> CueTiming:
    found = [t for t in timeline.cues if t.cue.id == cue]
    assert found, f"cue {cue} is not in the programme"
    return found[0]


def _check_music(row: Row, head: str, body: str) -> None:
    cue, opts = _spec(head)
    pieces, zhong, parts, anchors = (part.strip() for part in body.split("/"))
    timeline = _timeline(row.rite, opts)
    timing = _timing(timeline, cue)
    notes = [e for e in timeline.events if e.cue == cue and e.kind in SOUNDING and e.piece]
    assert notes, f"{cue} sounds nothing"
    at_least = zhong.endswith("+")
    wanted_zhong = int(zhong.rstrip("+").removesuffix("終"))
    top = max(e.zhong for e in notes)
    assert top >= wanted_zhong if at_least else top == wanted_zhong, f"{cue}: {top} 終, expected {zhong}"
    index = {ref.piece.id: n for n, ref in enumerate(timing.cue.pieces)}
    first: dict[str, tuple[int, int]] = {}
    for e in notes:
        if e.zhong <= wanted_zhong:
            first[e.piece] = min(first.get(e.piece, (e.start_tick, index[e.piece])), (e.start_tick, index[e.piece]))
    titles = {ref.piece.id: ref.piece.title for ref in timing.cue.pieces}
    assert [titles[p] for p in sorted(first, key=first.__getitem__)] == pieces.split(), f"{cue}: pieces"
    assert {e.part for e in notes} == set(parts.split()), f"{cue}: parts"
    for anchor in filter(None, (a.strip() for a in anchors.split(","))):
        _check_anchor(timeline, timing, anchor)


def _check_anchor(timeline: Timeline, timing: CueTiming, anchor: str) -> None:
    how, other = anchor.split()
    ref = _timing(timeline, other)
    if how == "with":
        assert timing.start_tick == ref.start_tick, f"{timing.cue.id} does not start with {other}"
    elif how == "after":
        assert timing.start_tick == ref.end_tick, f"{timing.cue.id} does not start after {other}"
    elif how == "until":
        assert ref.start_tick <= timing.end_tick < ref.start_tick + PHRASE_SLACK, f"{timing.cue.id} not until {other}"
    else:
        raise AssertionError(f"unknown anchor {anchor!r}")


def _check(row: Row, check: str) -> None:
    word, _, rest = check.strip().partition(" ")
    if word in ("silent", "absent"):
        cue, opts = _spec(rest)
        timeline = _timeline(row.rite, opts)
        if word == "absent":
            assert cue not in {t.cue.id for t in timeline.cues}, f"{cue} is in the programme"
        else:
            _timing(timeline, cue)
            assert not [e for e in timeline.events if e.cue == cue and e.kind in SOUNDING + (EventKind.CALL,)]
    elif word == "order":
        first, _, second = rest.partition("<")
        cue_b, opts = _spec(second)
        timeline = _timeline(row.rite, opts)
        assert _timing(timeline, first.strip()).end_tick <= _timing(timeline, cue_b).start_tick
    elif word == "before":
        head, _, kinds = rest.partition(":")
        cue, opts = _spec(head)
        timeline = _timeline(row.rite, opts)
        start = _timing(timeline, cue).start_tick
        sounded = {e.cue for e in timeline.events if e.kind is EventKind.NOTE and e.start_tick < start}
        found = {t.cue.music.value for t in timeline.cues if t.cue.id in sounded and t.cue.music}
        assert found - {"唱聲"} == set(kinds.split()), f"music before {cue}: {found}"
    else:
        head, _, body = check.partition(":")
        _check_music(row, head, body)


def test_the_tables_have_rows_for_every_rite():
    assert {r.rite for r in ROWS} == set(RITES)


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_passage_row(row):
    assert row.check, f"{row}: the row has no check"
    for check in row.check.split(";"):
        _check(row, check)


def test_every_quote_is_on_its_page():
    """Each row's quote is on its page or runs from it onto the next (whitespace removed, as the sheets quote)."""
    kanripo = pytest.importorskip("kanripo")
    if not kanripo.available:
        pytest.skip("the source texts are not available")
    missing = []
    for row in ROWS:
        folder = "zhouli-zhushu" if row.page.startswith("周禮注疏 ") else "yili-jishi"
        juan, rest = row.page.removeprefix("周禮注疏 ").split("-")
        page = f"{int(juan):03d}-{rest}"
        if page not in kanripo.pages(folder) or not _in_order(row.quote, kanripo.page_and_next(folder, page)):
            missing.append(str(row))
    assert missing == []


def _in_order(quote: str, text: str) -> bool:
    """Each part of a quote elided with … is in *text*, in order."""
    position = 0
    for part in quote.split("…"):
        found = text.find(part.strip(), position)
        if found < 0:
            return False
        position = found + len(part.strip())
    return True
