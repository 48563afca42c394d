"""Timeline → the director's page: one self-contained HTML file with the rite's timeline, ground plan and run sheet.

The page is a view of the Timeline, like the MIDI file and the text run sheet:
this module turns it into markup (Jinja2, autoescaped, templates in
``templates/``) and a JSON island; the page's JavaScript
only selects, highlights and zooms. Nothing is fetched when the page is opened:
the style and script (``sheet.css.j2``, ``sheet.js.j2``, plain CSS and JavaScript kept
beside the page's template) are inlined and the CJK text uses the system's fonts.

Contract for tests and tools: every cue's timeline element and table row carry
``data-cue="<cue id>"``; every position on the plan (or in the list of unplaced
positions beside it) carries ``data-position="<position id>"``; the details
panel has ``id="cue-detail"``.

The plan is drawn in 步 (6 尺) from the middle of the 堂's south edge, x east
and y south (see docs/cuesheet.md), ``PLAN_SCALE`` SVG units to the 步.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng import fonts
from yuesheng.cuesheet import Cue, Member, MusicKind
from yuesheng.files import write_atomic
from yuesheng.music.instruments import PARTS
from yuesheng.outputs.report import cues_by_id, says_que, sections, takes, what_of
from yuesheng.process import collector_paused
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Event, EventKind, Timeline, clock, seconds
from yuesheng.web.pages import kept as kept_page

if TYPE_CHECKING:
    from yuesheng.production import Production
    from yuesheng.web.plates import Plates

PLAN_SCALE = 24  # SVG units per 步
HALL_VIEW = (-14.0, -9.0, 28.0, 24.0)  # 步: the 堂 and the near 庭, the plan's first view
LANE_HEIGHT = 24
LABEL_WIDTH = 64
PLOT_WIDTH = 1100  # the timeline's width before the page's script fits it to the window
LABEL_STEPS = 0.45  # 步 an 11 px character takes on the plan's first view (about 25 px to the 步)
SEGMENT_GAP = 10.0  # seconds: a part silent longer than this (more than a phrase) starts a new block


@dataclass(frozen=True, slots=True)
class Block:
    """A span on a timeline lane."""

    lane: int
    t0: float
    t1: float
    cue: str
    label: str
    title: str
    kind: str


@dataclass(frozen=True, slots=True)
class Mark:
    """A moment on a timeline lane: a 節 stroke, an arrow, a call."""

    lane: int
    t: float
    cue: str
    label: str
    title: str
    kind: str


@dataclass(frozen=True, slots=True)
class Place:
    """A placed position in SVG units, with what stands there."""

    id: str
    name: str
    x: float
    y: float
    w: float
    h: float
    estimate: bool
    note: str
    region: bool
    small: bool
    instruments: str
    crowded: bool = False  # its label would cover another's in the first view: shown on hover and when selected


@dataclass(frozen=True, slots=True)
class Row:
    """A run-sheet table row, its text made once from the cue's data rather than by the template for each row."""

    cue: str
    who_ids: str  # space-separated, for the person filter
    start: str
    dur: str
    estimate: str  # the cue sheet's estimate where rehearsal measured the duration, else ""
    who: str
    where: str
    what: str
    words: str
    page: str
    layer: str  # the quote's layer on its page: 經, 記, 鄭注, 釋曰
    quote: str


# --- the timeline -----------------------------------------------------------------------------------


def _segments(events: list[Event]) -> list[tuple[Event, float, float]]:
    """Runs of one part's notes of one cue, piece and 終, split where the music pauses."""
    runs: dict[tuple[str, str, str, int], list[list[Any]]] = {}
    per_second = TICKS_PER_SECOND  # seconds(tick) is tick / TICKS_PER_SECOND: divided here, without two calls a note
    for e in events:
        key = (e.part, e.cue, e.piece, e.zhong)
        start = e.start_tick
        t0, t1 = start / per_second, (start + e.length_ticks) / per_second
        if (spans := runs.get(key)) is None:  # not setdefault, which makes a list for every note
            spans = runs[key] = []
        if spans and t0 <= (last := spans[-1])[2] + SEGMENT_GAP:
            if t1 > last[2]:
                last[2] = t1
        else:
            spans.append([e, t0, t1])
    return sorted(((e, t0, t1) for spans in runs.values() for e, t0, t1 in spans), key=lambda s: (s[1], s[0].part))


Sorted = tuple[list[Event], list[Event], list[Event], dict[str, set[str]]]  # _sorted_out: music, calls, shots, parts


def _lanes(timeline: Timeline, sorted_out: Sorted) -> tuple[list[str], list[Block], list[Mark]]:
    """The lanes and what is drawn on them: sections, actions, music cues, each part's pieces and 終, each 耦's
    turn, its 節 strokes and arrows, the calls (*sorted_out*: ``_sorted_out`` of the timeline's events)."""
    music, calls, shots, _ = sorted_out
    archery = any(e.kind is EventKind.RELEASE for e in shots)
    played = {e.part for e in music}
    parts = [p for p in PARTS if p in played]
    lanes = ["節次", "儀", "樂"] + parts + (["耦", "節", "矢"] if archery else []) + (["唱"] if calls else [])
    lane = {name: n for n, name in enumerate(lanes)}
    blocks = [Block(lane["節次"], seconds(s.start_tick), seconds(s.end_tick), "", s.name,
                    f"{s.name} {clock(s.start_tick)}–{clock(s.end_tick)} ({s.cues} cues)", "section")
              for s in sections(timeline)]
    by_id = cues_by_id(timeline)
    for t in timeline.cues:
        cue, what = t.cue, what_of(t, by_id)
        blocks.append(Block(lane["樂" if cue.is_music else "儀"], seconds(t.start_tick), seconds(t.end_tick), cue.id,
                            what, f"{clock(t.start_tick)} {cue.id}: {what}", "music" if cue.is_music else "action"))
    pieces = {p.piece.id: p.piece.title for t in timeline.cues for p in t.cue.pieces}
    for e, t0, t1 in _segments(music):
        title = pieces.get(e.piece, e.piece)
        blocks.append(Block(lane[e.part], t0, t1, e.cue, f"{title} {e.zhong}終" if e.zhong else title,
                            f"{e.part}: {title}, 終 {e.zhong} ({e.cue})", "part"))
    marks: list[Mark] = []
    if archery:
        blocks += _pairs(timeline, shots, lane["耦"])
        marks += _strokes_and_arrows(timeline, shots, lane["節"], lane["矢"])
    if calls:
        marks += [Mark(lane["唱"], seconds(e.start_tick), e.cue, e.text, f"{e.part} {e.text} on {e.degree}"
                       + (f" (arrow {e.arrow} of {e.pair}, {e.round})" if e.pair else ""), "call")
                  for e in calls]
    return lanes, blocks, marks


def _sorted_out(events: tuple[Event, ...]) -> Sorted:
    """In one pass over *events*: the notes and drum strokes not on a 節, the calls, and the shooting's events (the
    arrows, and the drum strokes on a 節 or of a 耦), in order; and the parts each cue sounds (notes, strokes,
    calls)."""
    music, calls, shots = [], [], []
    parts: dict[str, set[str]] = {}
    note, drum, call, release = EventKind.NOTE, EventKind.DRUM, EventKind.CALL, EventKind.RELEASE
    for e in events:
        kind = e.kind
        if kind is note or kind is drum:
            if not e.jie:
                music.append(e)
            if kind is drum and (e.jie or e.pair):
                shots.append(e)
        elif kind is call:
            calls.append(e)
        else:
            if kind is release:
                shots.append(e)
            continue
        if e.part:
            if (cue_parts := parts.get(e.cue)) is None:  # not setdefault: that makes a set for each of ~10,000 events
                cue_parts = parts[e.cue] = set()
            cue_parts.add(e.part)
    return music, calls, shots, parts


def _pairs(timeline: Timeline, shots: list[Event], lane: int) -> list[Block]:
    """Each 耦's turn in each round: from its first stroke or arrow to its last (*shots* from ``_sorted_out``)."""
    spans: dict[tuple[str, str], list[Any]] = {}
    for e in shots:
        if e.pair and e.kind in (EventKind.RELEASE, EventKind.DRUM):
            t0, t1 = seconds(e.start_tick), seconds(e.start_tick + e.length_ticks)
            span = spans.setdefault((e.round, e.pair), [t0, t1, e.cue, set()])
            span[0], span[1] = min(span[0], t0), max(span[1], t1)
            if e.kind is EventKind.RELEASE:
                span[3].add(timeline.names.get(e.text, e.text))
    return [Block(lane, t0, t1, cue, f"{rnd} {pair}", f"{rnd}, {pair}: {' '.join(sorted(who))}", "pair")
            for (rnd, pair), (t0, t1, cue, who) in spans.items()]


def _strokes_and_arrows(timeline: Timeline, shots: list[Event], jie_lane: int, arrow_lane: int) -> list[Mark]:
    """The 節 strokes (the first of each 節 labelled) and the arrows among *shots* (from ``_sorted_out``)."""
    marks = []
    seen: set[tuple[str, str, int]] = set()
    for e in shots:
        if e.kind is EventKind.DRUM and e.jie:
            first = (e.round, e.pair, e.jie) not in seen
            seen.add((e.round, e.pair, e.jie))
            marks.append(Mark(jie_lane, seconds(e.start_tick), e.cue, f"{e.jie}節" if first else "",
                              f"{e.round} {e.pair}: 節 {e.jie}" + ("" if first else ", the half-節 stroke"),
                              "jie" if first else "half"))
        elif e.kind is EventKind.RELEASE:
            state = ("hit" if e.hit else "miss") + (" pierced" if e.hit and e.pierced else "") + \
                    (" counted" if e.counted else "")
            who = timeline.names.get(e.text, e.text)
            marks.append(Mark(arrow_lane, seconds(e.start_tick), e.cue, "",
                              f"{e.round} {e.pair} arrow {e.arrow}: {e.archer} {who} — {state}", "arrow " + state))
    return marks


# --- the plan ---------------------------------------------------------------------------------------


def _places(timeline: Timeline) -> list[Place]:
    """Placed positions in SVG units, largest regions first so points and small regions stay on top."""
    held: dict[str, list[str]] = {}
    for m in timeline.instruments.values():
        if m.position:
            held.setdefault(m.position, []).append(m.name + (f"×{m.count}" if m.count > 1 else ""))
    out = []
    for p in timeline.layout.values():
        if p.x is None or p.y is None:
            continue
        w, h = p.w or 0.0, p.h or 0.0
        out.append(Place(p.id, p.name, p.x * PLAN_SCALE, p.y * PLAN_SCALE, w * PLAN_SCALE, h * PLAN_SCALE, p.estimate,
                         p.note, bool(w), bool(w) and w * h < 1, " ".join(held.get(p.id, []))))
    return _declutter(sorted(out, key=lambda p: (-(p.w * p.h), p.id)))


def _declutter(places: list[Place]) -> list[Place]:
    """Mark the point labels that would overlap a label already placed (text-derived places first)."""
    unit = LABEL_STEPS
    taken: list[tuple[float, float, float, float]] = []
    for p in places:
        if p.region and not p.small:
            taken.append((p.x - p.w / 2, p.y - p.h / 2, p.x - p.w / 2 + len(p.name) * unit * PLAN_SCALE,
                          p.y - p.h / 2 + unit * 1.2 * PLAN_SCALE))
    out = {}
    for p in sorted((p for p in places if not p.region or p.small), key=lambda p: (p.estimate, p.id)):
        width = (len(p.name) + 1.5) * unit * PLAN_SCALE
        box = (p.x + 0.2 * PLAN_SCALE, p.y - 0.5 * unit * PLAN_SCALE, p.x + 0.2 * PLAN_SCALE + width,
               p.y + 0.6 * unit * PLAN_SCALE)
        crowded = any(box[0] < t[2] and t[0] < box[2] and box[1] < t[3] and t[1] < box[3] for t in taken)
        if not crowded:
            taken.append(box)
        out[p.id] = crowded
    return [replace(p, crowded=out.get(p.id, False)) for p in places]


def unplaced(timeline: Timeline) -> list[Member]:
    """The positions the cue sheet gives no place on the plan."""
    return [p for p in timeline.layout.values() if not p.placed]


def _view_box(places: list[Place], *, hall: bool) -> str:
    if hall:
        x, y, w, h = HALL_VIEW
        return " ".join(f"{v * PLAN_SCALE:g}" for v in (x, y, w, h))
    if not places:
        return "0 0 100 100"
    margin = 2 * PLAN_SCALE
    x0 = min(p.x - p.w / 2 for p in places) - margin
    y0 = min(p.y - p.h / 2 for p in places) - margin
    x1 = max(p.x + p.w / 2 for p in places) + margin
    y1 = max(p.y + p.h / 2 for p in places) + margin
    return f"{x0:g} {y0:g} {x1 - x0:g} {y1 - y0:g}"


# --- who is where -----------------------------------------------------------------------------------


def _stations(timeline: Timeline) -> dict[str, dict[str, Any]]:
    """For each cue: its people's moves (from → to) and where everyone placed so far stands.

    A performer starts at the cast's ``position``; a cue with ``where`` puts its
    people (``who``, or a music cue's performers) there.
    """
    place = {p.id: p.position for p in timeline.cast.values() if p.position}
    out = {}
    at: dict[str, list[str]] = {}
    changed = True
    for t in timeline.cues:
        cue = t.cue
        people = cue.who or cue.performers
        moves = []
        if cue.where:
            for person in people:
                if place.get(person) != cue.where:
                    moves.append({"who": person, "from": place.get(person, ""), "to": cue.where})
                    place[person] = cue.where
                    changed = True
        if changed:  # else the cue shares the last cue's map, which no one changes (it only goes into the JSON)
            at, changed = {}, False
            for person, pos in place.items():
                at.setdefault(pos, []).append(person)
        here = sorted({cue.where} if cue.where else {place[p] for p in people if p in place})
        here += sorted({m.position for i in cue.instruments if (m := timeline.instruments.get(i)) and m.position})
        out[cue.id] = {"moves": moves, "at": at, "here": list(dict.fromkeys(here))}
    return out


# --- the page ---------------------------------------------------------------------------------------


def _kept(timing: CueTiming) -> str | None:
    """Why an action of a staged rite keeps the cue sheet's estimate; None if its duration is derived from the
    blocking (walks and formulas) or the rite is not staged."""
    if not timing.basis:
        return None
    from yuesheng.staging.basis import KEPT  # a basis means a staged rite

    return timing.basis.removeprefix(KEPT) if timing.basis.startswith(KEPT) else None


def _derived(timing: CueTiming) -> bool:
    """Whether an action's unmeasured duration is derived from the blocking (walks and formulas)."""
    return bool(timing.basis) and _kept(timing) is None


def _basis(timing: CueTiming, jie_total: int, by_id: dict[str, Cue]) -> str:
    cue = timing.cue
    if not cue.is_music:
        if timing.estimate_ticks is not None:
            m = timing.measured
            spread = f": the median of {m.takes} takes, spread {float(m.spread):.1f} s" if m else ""
            was = "the blocking's derivation" if _derived(timing) else "the cue sheet's estimate"
            return (f"measured in rehearsal (--timing){spread}; {was} was {clock(timing.estimate_ticks)}"
                    f"{f' ({timing.basis})' if timing.basis else ''}")
        if _derived(timing):
            return f"from the blocking: {timing.basis}"
        if (why := _kept(timing)) is not None:
            return f"the cue sheet's estimate, kept: {why}"
        return "estimated (the cue sheet's estimate)"
    if cue.end_at:
        que = " (樂闋)" if says_que(cue, by_id.get(cue.end_at)) else ""
        return f"until {cue.end_at} starts{que}, at the end of the phrase in progress"
    if cue.music is MusicKind.SHEJIE:
        return f"per 耦, the piece once for each of {jie_total} 節 (from the score)"
    return "from the score: pieces × 終 × syllables × seconds a syllable"


def _cue_data(timeline: Timeline, stations: dict[str, dict[str, Any]], sorted_out: Sorted) -> list[dict[str, Any]]:
    """Each cue's data for the page's script (*sorted_out*: ``_sorted_out`` of the timeline's events)."""
    names = timeline.names
    _, _, shots, parts = sorted_out
    jie_total = max((e.jie for e in shots if e.kind is EventKind.DRUM and e.jie), default=0)
    out = []
    by_id = cues_by_id(timeline)
    rank = {p: n for n, p in enumerate(PARTS)}
    for t in timeline.cues:
        cue = t.cue
        people = cue.who or cue.performers
        out.append({
            "id": cue.id, "section": cue.section, "t0": seconds(t.start_tick), "t1": seconds(t.end_tick),
            "start": clock(t.start_tick), "end": clock(t.end_tick), "dur": clock(t.end_tick - t.start_tick),
            "basis": _basis(t, jie_total, by_id), "what": what_of(t, by_id), "words": cue.words, "note": cue.note,
            "who": [names.get(p, p) for p in people], "who_ids": list(people),
            "where": names.get(cue.where, cue.where), "where_id": cue.where,
            "music": cue.music.value if cue.music else "",
            "pieces": [{"title": p.piece.title, "id": p.piece.id, "zhong": p.zhong,
                        "lost": bool(p.piece.realization)} for p in cue.pieces],
            "parts": sorted(parts.get(cue.id, ()), key=lambda p: rank.get(p, 99)),
            "instruments": [timeline.instruments[i].name for i in cue.instruments if i in timeline.instruments],
            "page": cue.cite.page, "layer": cue.cite.layer, "quote": cue.cite.quote, "cite": str(cue.cite),
            **stations[cue.id],
        })
    return out


def _cues_json(cues: list[dict[str, Any]]) -> Encoded:
    """``_cue_data`` as JSON, each map of who stands where (``at``: one object for a run of cues that move no one)
    written once, not for every cue of the run (it is 40 % of the island): the cues are written with each map's number,
    then each number replaced by its map (``"at":N,"here":`` with its quotes bare is never inside a JSON string)."""
    numbers: dict[int, int] = {}
    maps: list[str] = []
    numbered = []
    for cue in cues:
        if (n := numbers.get(id(cue["at"]))) is None:
            n = numbers[id(cue["at"])] = len(maps)
            maps.append(_json(cue["at"]))
        numbered.append({**cue, "at": n})
    return Encoded(_AT.sub(lambda m: f',"at":{maps[int(m[1])]},"here":', _json(numbered)))


_AT = re.compile(r',"at":(\d+),"here":')


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _rows(timeline: Timeline, cues: list[dict[str, Any]]) -> list[tuple[str, list[Row]]]:
    """The run sheet's rows from ``_cue_data``, grouped by runs of one section."""
    groups: list[tuple[str, list[Row]]] = []
    for t, c in zip(timeline.cues, cues, strict=True):
        if not groups or groups[-1][0] != c["section"]:
            groups.append((c["section"], []))
        estimate = f"{clock(t.estimate_ticks)} ({takes(t)})" if t.estimate_ticks is not None else ""
        groups[-1][1].append(Row(c["id"], " ".join(c["who_ids"]), c["start"], c["dur"], estimate, "、".join(c["who"]),
                                 c["where"], c["what"], c["words"], c["page"], c["layer"],
                                 c["quote"]))
    return groups


def _table(groups: list[tuple[str, list[Row]]], *, measured: bool) -> list[tuple[str, Any]]:
    """Each section of the run sheet with its rows' markup (escaped here, as Jinja2 would: the Markup tells the
    template so), written in Python because a template loop over every cell took a third of the page's rendering."""
    from markupsafe import Markup

    return [(section, Markup("\n".join(_row(r, _escaped(section), measured) for r in rows)))
            for section, rows in groups]


def _escaped(text: str) -> str:
    """*text* escaped as Jinja2's autoescape (markupsafe) escapes it, without making a Markup of each cell."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;") \
        .replace("'", "&#39;")


def _row(r: Row, section: str, measured: bool) -> str:
    e = _escaped
    estimate = f'<td class="time">{e(r.estimate)}</td>' if measured else ""  # on the line before, as it always was
    return (f'      <tr data-cue="{e(r.cue)}" data-section="{section}" data-who=" {e(r.who_ids)} ">\n'
            f'        <td class="time">{e(r.start)}</td>\n'
            f'        <td class="time">{e(r.dur)}</td>\n'
            f'{estimate}        <td><code>{e(r.cue)}</code></td>\n'
            f'        <td>{e(r.who)}</td>\n'
            f'        <td>{e(r.where)}</td>\n'
            f'        <td>{e(r.what)}</td>\n'
            f'        <td>{e(r.words)}</td>\n'
            f'        <td class="cite"><b>{e(r.page)}</b> <i>{e(r.layer)}</i> {e(r.quote)}</td>\n'
            f'      </tr>')


def _plate_items(rows: list[Row]) -> Any:
    """A plate's list of its stage's cues (escaped here, as ``_table``)."""
    from markupsafe import Markup

    e = _escaped
    return Markup("\n".join(f'<li data-cue="{e(r.cue)}"><span class="time">{e(r.start)}</span> '
                             f'<span class="time">{e(r.dur)}</span> {e(r.what)}</li>' for r in rows))


class Encoded(str):
    """A value of the island that is JSON already: the plates' drawing as kept (parsed and written again, it took a
    third of the island's time), the cues with each map of who stands where written once (``_cues_json``)."""

    __slots__ = ()


def json_island(data: Mapping[str, Any]) -> str:
    """JSON for a <script> element: no '<', '>' or '&' survives, so no '</script>' can end it early. A value that is
    ``Encoded`` goes in as it is; the rest as ``json.dumps`` writes it."""
    text = "{" + ",".join(f"{_json(k)}:{v if isinstance(v, Encoded) else _json(v)}" for k, v in data.items()) + "}"
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


TEMPLATES = Path(__file__).resolve().parent / "templates"
PRECOMPILED = TEMPLATES / "compiled"  # each template compiled to Python, part of the package (``precompile``)
_SETTINGS = "autoescape trim_blocks lstrip_blocks StrictUndefined"  # what ``_environment`` sets, in every stamp
_STAMP = "# yuesheng precompiled from "


@lru_cache(maxsize=1)
def environment() -> Any:
    """The Jinja2 environment of the web templates (autoescaped, strict), made once. Each template is taken as
    compiled into the package (``templates/compiled/``, made by ``precompile``: package code, never a cache) where
    that was compiled from the template as it is, with this Jinja2 and these settings; else compiled now."""
    import jinja2

    class Precompiled(jinja2.FileSystemLoader):
        def load(self, environment: Any, name: str, globals: Any = None) -> Any:  # noqa: A002 (Jinja2's name)
            code = _precompiled(name)
            if code is None:
                return super().load(environment, name, globals)
            return environment.template_class.from_code(environment, code, globals or {}, lambda: True)

    return _environment(Precompiled(str(TEMPLATES)))


def _environment(loader: Any) -> Any:
    import jinja2

    return jinja2.Environment(loader=loader, autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True)


def _stamp(name: str) -> str:
    """What a precompiled template's last line says it was compiled from: a digest of the template's text, the
    Jinja2 version and the settings ('' if the template cannot be read)."""
    import hashlib

    import jinja2

    try:
        source = (TEMPLATES / name).read_bytes()
    except OSError:
        return ""
    return f"{_STAMP}{hashlib.sha256(source + f'{jinja2.__version__} {_SETTINGS}'.encode()).hexdigest()}"


def _precompiled(name: str) -> Any:
    """The code of template *name* as precompiled, or None (none, or compiled from another text of it)."""
    try:
        text = (PRECOMPILED / f"{name}.py.txt").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    body, _, last = text.rstrip("\n").rpartition("\n")
    stamp = _stamp(name)
    return compile(body, str(TEMPLATES / name), "exec") if stamp and last == stamp else None


def precompile() -> list[Path]:
    """Compile every template to Python in ``templates/compiled/`` (run when the package is built or a template
    changes: ``python -c "from yuesheng.web.sheet import precompile; precompile()"``); the files written."""
    import jinja2

    PRECOMPILED.mkdir(exist_ok=True)
    plain = _environment(jinja2.FileSystemLoader(str(TEMPLATES)))
    written = []
    for path in sorted(TEMPLATES.glob("*.j2")):
        code = plain.compile(path.read_text(encoding="utf-8"), path.name, str(path), raw=True)
        target = PRECOMPILED / f"{path.name}.py.txt"
        write_atomic(target, f"{code}\n{_stamp(path.name)}\n".encode())
        written.append(target)
    return written


def timeline_view(timeline: Timeline) -> dict[str, Any]:
    """What ``timeline.svg.j2`` draws: the lanes, and each block and mark with where it goes."""
    return _view(timeline, _sorted_out(timeline.events), timeline.duration_ticks)


def _view(timeline: Timeline, sorted_out: Sorted, duration_ticks: int) -> dict[str, Any]:
    """``timeline_view`` from what the caller has already found (each is a scan of every event)."""
    lanes, blocks, marks = _lanes(timeline, sorted_out)
    duration = max(seconds(duration_ticks), 1.0)
    return {"lanes": lanes, "blocks": blocks, "marks": marks, "duration": duration, "lane_height": LANE_HEIGHT,
            "label_width": LABEL_WIDTH, "plot_width": PLOT_WIDTH, "plot": _plot(blocks, marks, duration)}


def _plot(blocks: list[Block], marks: list[Mark], duration: float) -> Any:
    """The SVG of every block and mark, at its time on its lane in the timeline's first view (*duration* seconds
    across ``PLOT_WIDTH``), escaped here: the Markup tells the template so. Written in Python, with each place
    computed as it is written, because a template loop over thousands took most of the page's time."""
    from markupsafe import Markup

    svg = [_block_svg(b, duration) for b in blocks]
    svg += [_mark_svg(m, duration) for m in marks]
    return Markup("\n".join(svg))


def _block_svg(b: Block, duration: float) -> str:
    x0, x1 = LABEL_WIDTH + b.t0 / duration * PLOT_WIDTH, LABEL_WIDTH + b.t1 / duration * PLOT_WIDTH
    y = b.lane * LANE_HEIGHT
    cue = f' data-cue="{escape(b.cue)}"' if b.cue else ""
    return (f'<g class="block {escape(b.kind)}"{cue} data-t0="{b.t0}" data-t1="{b.t1}" data-title="{escape(b.title)}">'
            f'<rect x="{x0}" y="{y + 3}" width="{max(x1 - x0, 1)}" height="{LANE_HEIGHT - 6}"/>'
            f'<text x="{x0 + 2}" y="{y + LANE_HEIGHT * 0.68}">{escape(b.label)}</text></g>')


def _mark_svg(m: Mark, duration: float) -> str:
    x = LABEL_WIDTH + m.t / duration * PLOT_WIDTH
    y = m.lane * LANE_HEIGHT
    if m.kind.startswith("arrow"):
        shape = f'<circle cx="{x}" cy="{y + LANE_HEIGHT / 2}" r="4"/>'
    else:
        shape = f'<line x1="{x}" x2="{x}" y1="{y + 3}" y2="{y + LANE_HEIGHT - 3}"/>'
        if m.label:
            shape += f'<text x="{x + 2}" y="{y + LANE_HEIGHT * 0.68}">{escape(m.label)}</text>'
    return (f'<g class="mark {escape(m.kind)}" data-cue="{escape(m.cue)}" data-t="{m.t}" '
            f'data-title="{escape(m.title)}">{shape}</g>')


def sheet_html(production: Production, *, plate_at: Sequence[str] = ()) -> str:
    """The page of a rite built (*production*): timeline, ground plan, cue details and run sheet, and the plates
    of its staging where its blocking is in force (a plate also at each cue of *plate_at*), in one HTML file."""
    return sheet_file(production, plate_at=plate_at).decode("utf-8")


def sheet_file(production: Production, *, plate_at: Sequence[str] = (),
               audio: Mapping[str, Any] | None = None) -> bytes:
    """``sheet_html`` as its file holds it (UTF-8): the page is encoded once, both to find the characters its font is
    cut for and to be written (encoding a 1.2 MB page costs as much as the rest of finding its font). With *audio*
    (``src``, ``map``, ``rite``, ``digest``: the render it plays in step, ``cli/web.py``), the page holds it as
    ``<script type="application/json" id="audio-data">``. The page as made, before its font and audio, is kept
    between runs (``web/pages.py``): made once for the same values, then read back."""
    with collector_paused():  # tens of thousands of new objects, none in a cycle: the collector would rescan them
        data = kept_page(production, plate_at, lambda: _page(production, plate_at))  # made once, then kept
    if audio is not None:
        data = data.replace(b"</head>", f'<script type="application/json" id="audio-data">{json_island(audio)}'
                                        "</script>\n</head>".encode(), 1)
    faces = fonts.face_css_utf8(data)
    return data.replace(b"</head>", _style(faces).encode("ascii"), 1) if faces else data


def _page(production: Production, plate_at: Sequence[str] = ()) -> str:
    from markupsafe import Markup

    timeline = production.timeline
    total = timeline.duration_ticks  # not a stored field: each read scans every event
    sorted_out = _sorted_out(timeline.events)
    shots = sorted_out[2]
    view = _view(timeline, sorted_out, total)
    blocks, duration = view["blocks"], view["duration"]
    stations = _stations(timeline)
    places = _places(timeline)
    names = timeline.names
    performers = sorted({p for t in timeline.cues for p in (t.cue.who or t.cue.performers)},
                        key=lambda p: (names.get(p, p), p))
    real = timeline.realization
    readings = ", ".join(f"{k}={v}" for k, v in sorted(timeline.readings.items())) or "none"
    cues = _cue_data(timeline, stations, sorted_out)
    groups = _rows(timeline, cues)
    measured = any(t.estimate_ticks is not None for t in timeline.cues)
    data = {"rite": timeline.rite, "duration": duration, "cues": _cues_json(cues), "names": names,
            "scale": PLAN_SCALE,
            "zooms": _zooms(shots, blocks, duration)}
    plates = None
    if production.ground is not None:  # a rite without blocking pays nothing for the plates
        from yuesheng.web.plates import plates_data

        if (staged := plates_data(production, names)) is not None:
            plates, data["plates"] = _plates_view(staged, groups, plate_at), Encoded(staged.json)
            from yuesheng.web.transport import transport_json

            if (motion := transport_json(production)) is not None:
                data["motion"] = Encoded(motion)  # the transport's tracks and what sounds
    page: str = environment().get_template("sheet.html.j2").render(
        timeline=timeline, **view, now_line="motion" in data,  # the transport's time on the timeline
        places=places, unplaced=unplaced(timeline), scale=PLAN_SCALE,
        hall_box=_view_box(places, hall=True), whole_box=_view_box(places, hall=False),
        table=_table(groups, measured=measured), names=names, performers=performers, plates=plates,
        measured=measured,
        sections=[s for s, _ in groups], tallies=timeline.tallies, notices=timeline.notices,
        settings=f"variants: {', '.join(sorted(timeline.variants)) or 'none'}; readings: {readings}; "
                 f"tuning {real.tuning.value}, 黄鍾 = MIDI {real.huangzhong}; total {clock(total)}",
        data=Markup(json_island(data)),
    )
    return page


def _plates_view(staged: Plates, groups: list[tuple[str, list[Row]]], at: Sequence[str] = ()) -> dict[str, Any]:
    """What the template needs for the plates: each plate (a stage, or a part of one) with its moment and rows, the
    people to track, the plates' box and the printed panels."""
    members = sorted(staged.members.items(), key=lambda m: (m[1], m[0]))
    moments = set(staged.plates) | set(at)
    plates = [{"name": name, "part": part, "at": moment, "cues": rows,
               "action": action, "cue_list": _plate_items(rows)}
              for name, stage in groups for part, moment, action, rows in tableaux(stage, moments)]
    return {"stages": plates, "members": members, "box": " ".join(f"{v:g}" for v in staged.box),
            "panels": [{"box": " ".join(f"{v:g}" for v in p[:4]), "font": p[4], "mm": p[5:]} for p in staged.panels],
            "first": plates[0]["at"] if plates else ""}


def tableaux(rows: list[Row], moments: set[str]) -> list[tuple[str, str, str, list[Row]]]:
    """A stage's plates: one at each of its cues in *moments* (the stage's last cue where none is), each with the
    stage's cues up to it (the last with the rest): its part ('2/3', '' for a stage on one plate), the cue whose
    moment it shows, that cue's action, and its rows."""
    ends = [n for n, r in enumerate(rows) if r.cue in moments] or [len(rows) - 1]
    starts = [0] + [n + 1 for n in ends[:-1]]
    stops = [n + 1 for n in ends[:-1]] + [len(rows)]
    return [(f"{k}/{len(ends)}" if len(ends) > 1 else "", rows[end].cue, rows[end].what, rows[a:b])
            for k, (end, a, b) in enumerate(zip(ends, starts, stops, strict=True), 1)]


def with_fonts(page: str, *, more: str = "") -> str:
    """*page* with the shipped text font embedded (``fonts.face_css``) for every character it shows, and for those
    of *more* (text it will show later, such as the console's cues), so that none falls back to a missing glyph."""
    faces = fonts.face_css(page + more)
    return page.replace("</head>", _style(faces), 1) if faces else page


def _style(faces: str) -> str:
    """The end of a page's head with its font rules *faces* before it."""
    return f"<style>\n{faces}\n</style>\n</head>"


def _zooms(shots: list[Event], blocks: list[Block], duration: float) -> list[dict[str, Any]]:
    """The views the zoom menu offers: the whole rite (*duration* seconds, at least 1), each section, each 耦's turn,
    each 節 of it (its strokes among *shots*, from ``_sorted_out``)."""
    views = [{"label": "the whole rite", "t0": 0.0, "t1": duration}]
    views += [{"label": f"section {b.label}", "t0": b.t0, "t1": b.t1} for b in blocks if b.kind == "section"]
    for b in blocks:
        if b.kind == "pair":
            views.append({"label": f"耦 {b.label}", "t0": b.t0, "t1": b.t1})
    jie: dict[tuple[str, str, int], list[float]] = {}
    for e in shots:
        if e.kind is EventKind.DRUM and e.jie:
            jie.setdefault((e.round, e.pair, e.jie), []).append(seconds(e.start_tick))
    starts = sorted(jie.items(), key=lambda kv: min(kv[1]))
    for n, ((rnd, pair, j), times) in enumerate(starts):
        following = [min(v) for k, v in starts[n + 1:] if k[:2] == (rnd, pair)]
        end = following[0] if following else max(times) + (max(times) - min(times)) * 2 + 1
        views.append({"label": f"節 {rnd} {pair} {j}", "t0": min(times), "t1": end})
    return views
