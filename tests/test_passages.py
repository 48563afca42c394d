"""Every passage of docs/music-passages.md against the timeline it claims.

Each table row ends with a machine-readable ``check`` cell (grammar in the doc's
"The check column"); this test builds the rite's timeline with the row's variants
and readings and checks the pieces in order, the 終, the parts and the anchors,
the calls, and the shooting (pairs, 節, what counts, the tally).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest

from yuesheng import build, load
from yuesheng.cuesheet import CueSheet
from yuesheng.music.repertoire import data_dir
from yuesheng.timeline import CALL_LENGTH, CueTiming, Event, EventKind, Options, Timeline, ticks

DOC = Path(__file__).resolve().parents[1] / "docs" / "music-passages.md"
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
    """The rows of every table; a row whose last cell is not a `check` gets an empty check (and fails)."""
    rows = []
    for n, line in enumerate(DOC.read_text(encoding="utf-8").splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and cells[0] in RITES:
            check = re.fullmatch(r"`(.*)`", cells[-1])
            rows.append(Row(DOC.name, n, cells[0], cells[1], cells[2], check.group(1) if check else ""))
    return rows


ROWS = _rows()


@cache
def _sheet(rite: str) -> CueSheet:
    return load(data_dir("cues") / f"{RITES[rite]}.yaml")


@cache
def _timeline(rite: str, opts: tuple[str, ...]) -> Timeline:
    variants = frozenset(o[1:] for o in opts if o.startswith("+"))
    readings = dict(o.split("=", 1) for o in opts if "=" in o)
    return build(_sheet(rite), Options(variants=variants, readings=readings))


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


# --- the calls and the shooting ----------------------------------------------------------------------


def _check_calls(row: Row, head: str, body: str) -> None:
    """``calls CUE [OPTS] : DEGREES [per hit of ROUND] / PART [/ ANCHORS]``."""
    cue, opts = _spec(head)
    degrees, part, anchors = (field.strip() for field in (body + "/").split("/")[:3])
    timeline = _timeline(row.rite, opts)
    timing = _timing(timeline, cue)
    calls = sorted((e for e in timeline.events if e.cue == cue and e.kind is EventKind.CALL),
                   key=lambda e: e.start_tick)
    assert calls, f"{cue} sounds no call"
    assert {e.part for e in calls} == {part}, f"{cue}: called by {sorted({e.part for e in calls})}"
    wanted, _, per_hit = degrees.partition(" per hit of ")
    if per_hit:
        _check_hit_calls(timeline, cue, calls, wanted.split(), per_hit.strip())
    else:
        assert [e.degree for e in calls] == wanted.split(), f"{cue}: degrees {[e.degree for e in calls]}"
        assert not any(e.round for e in calls), f"{cue}: calls a hit"
    held = [a for a in (a.strip() for a in anchors.split(",")) if a.startswith("held until ")]
    for e in calls[:-1] if held else calls:
        assert e.length_ticks == ticks(CALL_LENGTH), f"{cue}: a {e.degree} call is not short"
    for anchor in filter(None, (a.strip() for a in anchors.split(","))):
        how, _, other = anchor.rpartition(" ")
        ref = _timing(timeline, other)
        if how == "held until":
            last = calls[-1]
            assert last.length_ticks > ticks(CALL_LENGTH), f"{cue}: the last call is not held"
            assert last.start_tick + last.length_ticks == ref.end_tick, f"{cue}: not held until {other} ends"
        elif how == "with":
            assert calls[0].start_tick == ref.start_tick, f"{cue}: the first call is not with {other}"
        elif how == "after":
            assert calls[0].start_tick == ref.end_tick, f"{cue}: the first call is not after {other}"
        else:
            raise AssertionError(f"unknown anchor {anchor!r}")
    assert all(timing.start_tick <= e.start_tick for e in calls)


def _check_hit_calls(timeline: Timeline, cue: str, calls: list[Event], degrees: list[str], rnd: str) -> None:
    """One group of calls on *degrees*, in order, after every hit of *rnd*, and no other call in *cue*."""
    hits = {(e.pair, e.arrow): e for e in _releases(timeline, rnd) if e.hit}
    assert hits, f"{rnd} has no hit"
    groups: dict[tuple[str, int], list[Event]] = {}
    for e in calls:
        assert e.round == rnd, f"{cue} calls a hit of {e.round or 'no round'}"
        groups.setdefault((e.pair, e.arrow), []).append(e)
    assert groups.keys() == hits.keys(), f"{cue}: calls {len(groups)} of the {len(hits)} hits of {rnd}"
    for key, group in groups.items():
        assert [e.degree for e in group] == degrees, f"{cue}: {key} called {[e.degree for e in group]}"
        assert group[0].start_tick > hits[key].start_tick, f"{cue}: {key} called before the hit"


def _releases(timeline: Timeline, rnd: str) -> list[Event]:
    return [e for e in timeline.events if e.kind is EventKind.RELEASE and e.round == rnd]


RULES: dict[str, Callable[[bool, bool], bool]] = {  # whether a hit counts: (pierced, on the drum) → counted
    "none": lambda pierced, on_drum: False,
    "hit": lambda pierced, on_drum: True,
    "pierce": lambda pierced, on_drum: pierced,
    "drum": lambda pierced, on_drum: on_drum,
    "drum+pierce": lambda pierced, on_drum: pierced and on_drum,
}


def _check_round(row: Row, head: str, body: str) -> None:
    """``round ROUND [OPTS] : PAIRS in CUE, … / N節 / RULE[, PERFORMER RULE …]``."""
    rnd, opts = _spec(head)
    groups, jie, count = (field.strip() for field in body.split("/"))
    timeline = _timeline(row.rite, opts)
    releases = sorted(_releases(timeline, rnd), key=lambda e: e.start_tick)
    assert releases, f"{rnd} looses no arrow"
    where = {}
    for group in groups.split(","):
        pairs, _, cue = group.partition(" in ")
        where.update(dict.fromkeys(pairs.split(), cue.strip()))
    assert list(dict.fromkeys(e.pair for e in releases)) == list(where), f"{rnd}: the pairs in order"
    for pair, cue in where.items():
        shots = [e for e in releases if e.pair == pair]
        timing = _timing(timeline, cue)
        assert sorted(e.arrow for e in shots) == list(range(1, 9)), f"{rnd}: {pair} looses {len(shots)} arrows"
        assert all(e.cue == cue and timing.start_tick <= e.start_tick < timing.end_tick for e in shots), \
            f"{rnd}: {pair} does not shoot in {cue}"
    strokes = _check_jie(timeline, rnd, list(where), int(jie.removesuffix("節")), releases)
    archery = _sheet(row.rite).archery
    assert archery is not None, f"{row.rite} has no archery"
    _check_count(rnd, releases, strokes, ticks(archery.tolerance), count)


def _check_count(rnd: str, releases: list[Event], strokes: set[tuple[str, int]], tolerance: int, count: str) -> None:
    """Every arrow counted as ``RULE[, PERFORMER RULE …]`` says, and the arrows tell RULE from the other rules."""
    on_drum = {(e.pair, e.arrow): any(p == e.pair and abs(t - e.start_tick) <= tolerance for p, t in strokes)
               for e in releases}
    (rule,), *exceptions = (part.split() for part in count.split(","))
    special = {who: RULES[name] for who, name in exceptions}

    def agrees(how: Callable[[bool, bool], bool], e: Event) -> bool:
        return e.counted == bool(e.hit and how(bool(e.pierced), on_drum[(e.pair, e.arrow)]))

    for e in releases:
        assert agrees(special.get(e.text, RULES[rule]), e), f"{rnd}: {e.pair} arrow {e.arrow} counted={e.counted}"
    ordinary = [e for e in releases if e.text not in special]
    others = [name for name, how in RULES.items() if name != rule and (strokes or "drum" not in name)
              and all(agrees(how, e) for e in ordinary)]
    assert not others, f"{rnd}: the arrows do not tell {rule} from {others}"
    for who in special:
        assert any(not agrees(RULES[rule], e) for e in releases if e.text == who), f"{rnd}: {who} is not special"


def _check_jie(timeline: Timeline, rnd: str, pairs: list[str], jie: int, releases: list[Event]) -> set[tuple[str, int]]:
    """N 節 of the drum per pair (none for ``0節``), the arrows two to a 節 in the last four; the strokes."""
    drums = [e for e in timeline.events if e.kind is EventKind.DRUM and e.round == rnd]
    for pair in pairs:
        assert sorted({e.jie for e in drums if e.pair == pair}) == list(range(1, jie + 1)), f"{rnd}: {pair} 節"
        if jie:
            shots = sorted((e for e in releases if e.pair == pair), key=lambda e: e.arrow)
            assert [e.jie for e in shots] == [n for n in range(jie - 3, jie + 1) for _ in (0, 1)], f"{rnd}: {pair} 拾發"
    return {(e.pair, e.start_tick) for e in drums}


def _check_tally(row: Row, head: str, body: str) -> None:
    """``tally ROUND [OPTS] : 右 N 左 M`` or ``: none``, and the tally is the counted arrows of each side."""
    rnd, opts = _spec(head)
    timeline = _timeline(row.rite, opts)
    tallies = {t.round: (t.right, t.left) for t in timeline.tallies}
    releases = _releases(timeline, rnd)
    assert releases, f"{rnd} looses no arrow"
    if body.strip() == "none":
        assert rnd not in tallies and not any(e.counted for e in releases), f"{rnd} is counted"
        return
    match = re.fullmatch(r"\s*右 (\d+) 左 (\d+)\s*", body)
    assert match, f"bad tally {body!r}"
    assert tallies.get(rnd) == (int(match.group(1)), int(match.group(2))), f"{rnd}: tally {tallies.get(rnd)}"
    counted = [e.archer for e in releases if e.counted]
    assert tallies[rnd] == (counted.count("上射"), counted.count("下射"))


def _check_first(row: Row, head: str, body: str) -> None:
    """``first ROUND [OPTS] : PAIR ARCHER PERFORMER``: the pair's arrows alternate, the first loosed by ARCHER."""
    rnd, opts = _spec(head)
    pair, archer, performer = body.split()
    shots = sorted((e for e in _releases(_timeline(row.rite, opts), rnd) if e.pair == pair), key=lambda e: e.arrow)
    other = "上射" if archer == "下射" else "下射"
    assert shots and [e.archer for e in shots] == [archer, other] * (len(shots) // 2), f"{rnd}: {pair} order"
    assert shots[0].text == performer, f"{rnd}: {pair} first looses {shots[0].text}"


def _check_jiuwu(row: Row, head: str, body: str) -> None:
    """``jiuwu CUE [OPTS] : ROUND PAIR``: CUE starts once the pair's music has begun, before its first arrow."""
    cue, opts = _spec(head)
    rnd, pair = body.split()
    timeline = _timeline(row.rite, opts)
    start = _timing(timeline, cue).start_tick
    strokes = [e.start_tick for e in timeline.events if e.kind is EventKind.DRUM and e.round == rnd and e.pair == pair]
    shots = [e.start_tick for e in _releases(timeline, rnd) if e.pair == pair]
    assert strokes and shots, f"{rnd}: {pair} does not shoot to music"
    assert min(strokes) <= start < min(shots), f"{cue} does not step on after the pair's music begins"


FORMS = {"calls": _check_calls, "round": _check_round, "tally": _check_tally, "first": _check_first,
         "jiuwu": _check_jiuwu}


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
    elif word in FORMS:
        head, _, body = rest.partition(":")
        FORMS[word](row, head, body)
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
        juan, rest = re.sub(r"\s*\(.*\)$", "", row.page).removeprefix("周禮注疏 ").split("-")  # 5-21a (鄉射)
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
