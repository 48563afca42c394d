"""Whose stair: the stairs a walker may take at a cue, and the walks that break rank or the texts (rule ``route``).

Each stair of a hall says whose it is (``Stair.whose``): in the 鄉 rites the 阼階 is the 主人's and the 西階 everyone
else's; in the 君's rites the 阼階 is the 公's. A walk goes by its walker's stair unless a text of its cue says
otherwise: a 升自 or 降自 in the move's own quote (said of him, or of no one named), or in the cue's action and
quote (said of him by name: the last rank named before it, not one whose thing is meant: 膳宰徹公俎降自阼階 is the
膳宰's),
or a flight the move names (``via: [zuojie]``). A ``via`` names a stair's flight, never only the place at its top:
that would let the walk climb either stair; nor a place within a set piece standing, but the place of one that is
``open`` (one goes up to the 楅, into the 次) and its edge (the ends of a 侯's 个): no walk goes through a 侯.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from yuesheng.cuesheet.model import Cue, CueSheet
from yuesheng.staging.model import Blocking, Break, Hall, Move, Point, Stair, Walk
from yuesheng.staging.routes import flights

_SAID = re.compile(r"([升降])自(.)階")
_TOP = 0.75  # 步: a place this near a stair's top, on the 堂, is at its top


@dataclass(frozen=True, slots=True)
class Said:
    """A 升自/降自 of a text: which way, by which stair of the hall ('' if the hall has none so named: 北階), of whom
    (a performer id, '' if the text names no one before it), and where it is said."""

    verb: str  # 升 or 降
    stair: str
    who: str
    text: str  # '5-21a 降自西階'

    def __str__(self) -> str:
        return self.text


def _stair_named(hall: Hall, word: str) -> str:
    return next((s.id for s in hall.stairs if s.name == f"{word}階"), "")


def said(text: str, where: str, hall: Hall, names: Mapping[str, str]) -> list[Said]:
    """Every 升自/降自 of *text* (its page *where*), each given to the last rank *names* finds since the one before,
    but not a rank whose thing is meant (公俎, 賓席, 主人之爵)."""
    out = []
    since = 0
    for m in _SAID.finditer(text):
        found = [(at, len(name), pid) for name, pid in names.items() for at in _all(text, name, since, m.start())
                 if text[at + len(name):at + len(name) + 1] not in _OWNED]
        who = max(found)[2] if found else ""
        out.append(Said(m[1], _stair_named(hall, m[2]), who, f"{where} {text[max(0, m.start() - 8):m.end()]}"))
        since = m.end()
    return out


_OWNED = set("俎席爵觶觚之所")  # after a rank's name: his thing, not him


def _all(text: str, name: str, start: int, end: int) -> list[int]:
    """Where *name* begins in text[start:end] (wholly inside it)."""
    out = []
    while 0 <= (at := text.find(name, start, end)):
        out.append(at)
        start = at + 1
    return out


def names_of(sheet: CueSheet) -> dict[str, str]:
    """Each rank's name as the texts write it → the performer id (the first of that name)."""
    out: dict[str, str] = {}
    for pid, member in sheet.performers.items():
        out.setdefault(member.name, pid)
    return out


def stair_of(hall: Hall, name: str) -> Stair | None:
    """The stair of the rank *name*: the one whose ``whose`` names it, else the one of the rest (None: no hall says)."""
    named = next((s for s in hall.stairs if s.whose is not None and name in s.whose.of), None)
    return named or next((s for s in hall.stairs if s.whose is not None and s.whose.rest), None)


@dataclass(frozen=True, slots=True)
class Texts:
    """What a cue's texts say of stairs: its action and quote, given to ranks by name."""

    cue: tuple[Said, ...]

    @classmethod
    def of(cls, cue: Cue, hall: Hall, names: Mapping[str, str]) -> Texts:
        return cls((*said(cue.action, f"cue {cue.id}:", hall, names),
                    *said(cue.cite.quote, cue.cite.page, hall, names)))


def person(blocking: Blocking, member: str) -> str:
    """The performer id a member stands for (``zhongbin#3`` → zhongbin; an id the blocking names as another's: his)."""
    base = member.partition("#")[0]
    return blocking.same.get(base, base)


def owned(blocking: Blocking, texts: Texts, move: Move, member: str, names: Mapping[str, str]) -> list[Said]:
    """What the texts of *move* and its cue say of *member*'s stairs."""
    who = person(blocking, member)
    hall = blocking.hall
    own = [s for s in said(move.source.quote, move.source.page, hall, names)
           if s.stair and (not s.who or blocking.same.get(s.who, s.who) == who)]
    return own + [s for s in texts.cue if s.stair and s.who and blocking.same.get(s.who, s.who) == who]


def allowed(blocking: Blocking, texts: Texts, move: Move, member: str, name: str,
            names: Mapping[str, str]) -> frozenset[str] | None:
    """The stairs *member* (of the rank *name*) may take in *move*: those its texts name and its flights, else his
    rank's (None: the hall says of no stair whose it is)."""
    stated = {s.stair for s in owned(blocking, texts, move, member, names)}
    stated |= {v for v in move.via if any(s.id == v for s in blocking.hall.stairs)}
    if stated:
        return frozenset(stated)
    rank = stair_of(blocking.hall, name)
    return frozenset({rank.id}) if rank is not None else None


def breaks(blocking: Blocking, texts: Texts, move: Move, walk: Walk, name: str, start: Point,
           names: Mapping[str, str], things: tuple[str, ...] = ()) -> list[Break]:
    """Where *walk* breaks rank or its texts: a flight against what its texts say, a flight up or down another's
    stair that no text gives it, a ``via`` naming only a stair's top or a place on one of *things* (set up)."""
    hall = blocking.hall
    stairs = {s.id: s for s in hall.stairs}
    told = owned(blocking, texts, move, walk.who, names)
    rank = stair_of(hall, name)
    out = []
    for verb, sid in flights(hall, walk.route):
        way = "up" if verb == "升" else "down"
        same_way = [s for s in told if s.verb == verb]
        if same_way and sid not in {s.stair for s in same_way}:
            out.append(f"{walk.who} ({name}) goes {way} the {stairs[sid].name}, against the text: "
                       f"{'; '.join(dict.fromkeys(map(str, same_way)))}")
        elif not same_way and rank is not None and sid != rank.id and sid not in {s.stair for s in told}:
            whose = stairs[sid].whose
            owner = "、".join(whose.of) if whose is not None else "another rank"
            out.append(f"{walk.who} ({name}) goes {way} the {stairs[sid].name} ({owner}'s), and no text of the cue "
                       f"says so: the {name}'s stair is the {rank.name} ({rank.whose.source if rank.whose else ''})")
    out += _tops(hall, move, start)
    out += [f"via {v} is on the {hall.things[t].name}: no walk goes through a set piece" for v in move.via
            if v in hall.places for t in sorted(things)
            if not (hall.things[t].open and hall.places[v].point == hall.things[t].at)
            and _inside(hall.places[v].point, hall.things[t].box())]
    return [Break(move.line, move.col, message) for message in out]


def _inside(p: Point, box: tuple[float, float, float, float]) -> bool:
    """Within the footprint, not on its edge (the ends of a 侯's 个 are places one goes to)."""
    return box[0] < p.x < box[2] and box[1] < p.y < box[3]


def _tops(hall: Hall, move: Move, start: Point) -> list[str]:
    """A ``via`` naming the place at a stair's top where the walk goes on or off the 堂 there: the flight unnamed."""
    stops = [start, *(hall.places[v].point if v in hall.places else None for v in move.via),
             hall.places[move.to].point.shifted(*move.offset)]
    out = []
    for n, v in enumerate(move.via, 1):
        point = stops[n]
        top = next((s for s in hall.stairs if point is not None and hall.on_tang(point)
                    and point.distance(s.top) < _TOP), None)
        if top is None or not any(p is not None and not hall.on_tang(p) for p in (stops[n - 1], stops[n + 1])):
            continue
        out.append(f"via {v} names only the top of the {top.name}: name its flight ({top.id})")
    return out
