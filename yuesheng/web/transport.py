"""What the director's page plays the rite from: every member's track (``Production.motion``) and what sounds, as the
JSON its transport animates (``sheet.js.j2``: the plate at any instant, playing, scrubbed or jumped to a cue).

The script places a member exactly as ``Motion.position`` does, from the same steps: a walk (``Going``) is linear
along its route by the leg's per-point marks (the share of its seconds spent on reaching each point), a stand
(``Still``) turns from the way he walked to his facing in ``TURN`` seconds. Times are seconds from the start of the
rite, places in 步 (x east, y south); a start of -inf (on the ground from the start) is written null.

The whole is kept in ``caches.folder("transport")`` under a key of the ground's entry (everything staging reads),
every cue's span, the paces, the performers, the sung and sounding events and the words of the pieces sung, as the
plates are (``web/plates.py``): a page drawn again neither stages the rite nor imports the staging model.

``{"turn", "tracks": {member: {"first": bool, "steps": [...]}}, "gestures": {cue: [[name, start, end]]},
"music": [[start, end, text]], "sung": [[start, end, piece, stanza, line, index]], "sounds": [[start, text]],
"names": {name: member}, "fold": {character: form}}`` (every name of a person on the ground, ``key``-folded, for
``?follow=NAME``, and the characters the page folds a name's by: ``text.fold_table``);
a walk is ``["go", start, end, number, cue, route, marks, to, [fx, fy] | null]`` and a stand
``["at", start | null, x, y, place, [fx, fy] | null, [cx, cy] | null]`` (his facing, and the way he looked before).
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

from yuesheng import caches
from yuesheng.text import fold, fold_table
from yuesheng.timeline import Event, EventKind
from yuesheng.web.pages import columns

if TYPE_CHECKING:
    from yuesheng.production import Production
    from yuesheng.staging.motion import Motion, Step
    from yuesheng.staging.rite import StagedRite


def _r(v: float) -> float:
    return round(v, 4)


def _vector(v: tuple[float, float] | None) -> list[float] | None:
    return [_r(v[0]), _r(v[1])] if v is not None else None


def _step(step: Step) -> list[Any]:
    """One step of a track as the script reads it (the module's docstring)."""
    from yuesheng.staging.motion import Going

    if isinstance(step, Going):
        leg = step.leg
        return ["go", _r(leg.start), _r(leg.end), leg.number, leg.cue, [[_r(p.x), _r(p.y)] for p in leg.route],
                [_r(m) for m in step.marks], leg.to, _vector(leg.facing.vector if leg.facing else None)]
    start = None if step.start == -math.inf else _r(step.start)
    return ["at", start, _r(step.point.x), _r(step.point.y), step.place,
            _vector(step.facing.vector if step.facing else None), _vector(step.came)]


def tracks(motion: Motion) -> dict[str, Any]:
    """Every member's steps, and whether he stands at his first walk's start from the beginning of the rite."""
    return {m: {"first": motion.entrance(m) == -math.inf, "steps": [_step(s) for s in motion.track(m)]}
            for m in motion.members}


def key(name: str) -> str:
    """A name as the page looks it up: folded (``text.fold``: NFKC, every form of a character as one, lower case),
    without spaces and '#' (the page's script does the same, with the characters of ``fold_table``)."""
    return re.sub(r"[\s#]", "", fold(name))


def names(production: Production, staged: StagedRite, on_ground: set[str]) -> dict[str, str]:
    """Every name ``persons.person`` reads as one member on the ground (衆賓 2, zhongbin#2, 主人, zhuren, a role the
    blocking names as another's; not a name two roles
    share) → that member, for the page's ``?follow=NAME``."""
    from yuesheng.errors import AmbiguousNameError
    from yuesheng.staging.persons import person

    sheet, out = production.sheet, {}
    for role, member in sheet.performers.items():
        numbered = [f" {n}" for n in range(1, member.count + 1)] if member.count > 1 else [""]
        for n in numbered:
            for name in (role + n, member.name + n):
                try:
                    found = person(name, sheet, staged.same).members
                except AmbiguousNameError:  # a name two roles share (卿 1): each by its id
                    continue
                if len(found) == 1 and found[0] in on_ground:
                    out[key(name)] = found[0]
    out.update({key(m): m for m in on_ground})
    return out


def transport_data(production: Production) -> dict[str, Any] | None:
    """The tracks, the formulas and what sounds, for the page's transport; None where no blocking is in force."""
    from yuesheng.outputs.frames import Sounding
    from yuesheng.staging.motion import TURN

    motion, staged = production.motion, production.staged
    if motion is None or staged is None:
        return None
    sounding = Sounding(production.timeline, production.sheet)
    gestures = {c: [[g.name, _r(g.start), _r(g.end)] for g in motion.gestures(c)] for c in motion.cues}
    named = names(production, staged, set(motion.members))
    return {"turn": TURN, "tracks": tracks(motion), "names": named, "fold": fold_table(list(named)),
            "gestures": {c: g for c, g in gestures.items() if g},
            "music": [[_r(m.start), _r(m.end), m.text] for m in sounding.music],
            "sung": [[_r(s.start), _r(s.end), s.piece, s.stanza, s.line, s.index] for s in sounding.syllables],
            "sounds": [[_r(s.start), s.text] for s in sounding.sounds]}


CACHE_ENTRIES = 64
MAX_ENTRY_BYTES = 32 << 20  # 大射儀's: about 0.2 MB
_FORMAT = "yuesheng-transport-3"
_KEYS = {"turn", "tracks", "names", "fold", "gestures", "music", "sung", "sounds"}


def transport_json(production: Production) -> str | None:
    """``transport_data`` as JSON, kept between runs; None where no blocking is in force."""
    ground = production.ground
    if ground is None:
        return None
    inputs = _inputs(production) if ground.entry else None
    folder = caches.folder("transport") if inputs is not None else None
    name = f"{caches.prefix_of(ground.entry)}{caches.key(_FORMAT, ground.entry, *inputs or ())}.json"
    if folder is not None and (kept := _read(folder.read(name, limit=MAX_ENTRY_BYTES))) is not None:
        return kept
    data = transport_data(production)
    if data is None:
        return None
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    if folder is not None:
        folder.write(name, text.encode("utf-8"), entries=CACHE_ENTRIES)
    return text


def _inputs(production: Production) -> list[str] | None:
    """What the data depend on besides the ground: the cues' spans, the paces, the performers' names and counts, and
    a digest of the events the page names (sung syllables, markers, calls, 節 strokes: each one's time, kind, cue,
    part, text, piece, 終, 節 and degree) and of the pieces' words; None where they cannot be digested."""
    timeline, sheet = production.timeline, production.sheet
    note, marker, call, drum = EventKind.NOTE, EventKind.MARKER, EventKind.CALL, EventKind.DRUM
    named = columns(tuple(e for e in timeline.events if (e.kind is note and e.part == "歌") or e.kind is marker
                          or e.kind is call or (e.kind is drum and (e.jie or e.piece))))
    pieces = {ref.piece.id: ref.piece for cue in sheet.cues for ref in cue.pieces}
    words = [(p.id, p.title, [(s.number, s.line_lengths, [n.lyric for n in s.notes]) for s in p.stanzas])
             for p in pieces.values()]
    digest = caches.digest([named[n] for n in _NAMED] if named else [], words)
    spans = ",".join(f"{t.cue.id}:{t.start_tick}:{t.end_tick}" for t in timeline.cues)
    cast = ",".join(f"{r}:{m.name}:{m.count}" for r, m in sheet.performers.items())
    return [spans, repr(production.options.paces), cast, digest] if digest is not None else None


_NAMED = tuple(Event._fields.index(f) for f in ("start_tick", "length_ticks", "kind", "cue", "part", "text", "piece",
                                                  "zhong", "jie", "degree"))  # the fields of an event the page reads


def _read(entry: bytes | None) -> str | None:
    """A kept entry's JSON, if it is one whole (a dict with every key), else None."""
    try:
        if entry is None:
            return None
        text = entry.decode("utf-8")
        value = json.loads(text)
        return text if _whole(value) else None
    except (ValueError, RecursionError):
        return None


def _num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _pair(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(map(_num, v))


def _rows(v: Any, *kinds: Any) -> bool:
    """Whether *v* is a list of rows, each of *kinds* (``_num``, or a type) in order."""
    def fits(k: Any, x: Any) -> bool:
        return bool(k(x)) if k is _num else isinstance(x, k) and not isinstance(x, bool)

    return isinstance(v, list) and all(
        isinstance(r, list) and len(r) == len(kinds) and all(fits(k, x) for k, x in zip(kinds, r, strict=True))
        for r in v)


def _step_ok(s: Any) -> bool:
    if not isinstance(s, list) or not s:
        return False
    if s[0] == "go" and len(s) == 9:
        _, a, b, n, cue, route, marks, to, facing = s
        return (_num(a) and _num(b) and isinstance(n, int) and isinstance(cue, str) and isinstance(route, list)
                and len(route) >= 2 and all(map(_pair, route)) and isinstance(marks, list)
                and len(marks) == len(route) and all(map(_num, marks)) and isinstance(to, str)
                and (facing is None or _pair(facing)))
    if s[0] == "at" and len(s) == 7:
        _, a, x, y, place, facing, came = s
        return ((a is None or _num(a)) and _num(x) and _num(y) and isinstance(place, str)
                and all(v is None or _pair(v) for v in (facing, came)))
    return False


def _whole(v: Any) -> bool:
    """Whether *v* is a whole ``transport_data``: every key, every value of its shape (a kept entry is read back)."""
    if not isinstance(v, dict) or set(v) != _KEYS or not _num(v["turn"]):
        return False
    tracks, names, gestures = v["tracks"], v["names"], v["gestures"]
    return (isinstance(tracks, dict) and all(
                isinstance(t, dict) and set(t) == {"first", "steps"} and isinstance(t["first"], bool)
                and isinstance(t["steps"], list) and t["steps"] and all(map(_step_ok, t["steps"]))
                for t in tracks.values())
            and isinstance(names, dict) and all(isinstance(m, str) and m in tracks for m in names.values())
            and isinstance(v["fold"], dict) and all(isinstance(c, str) and len(c) == 1 and isinstance(f, str)
                                                     for c, f in v["fold"].items())
            and isinstance(gestures, dict) and all(_rows(g, str, _num, _num) for g in gestures.values())
            and _rows(v["music"], _num, _num, str) and _rows(v["sung"], _num, _num, str, int, str, int)
            and _rows(v["sounds"], _num, str))

