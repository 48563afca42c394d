"""Where everyone stands at each cue: the start, then each cue's moves applied in programme order.

A person stays where the last move put him. A performer with a count (衆賓 8) stands as that many members
(``zhongbin#1`` …), and several people moved together stand in a file: the first at the place, each next one a
``spacing`` further from the head (北上: southward). Two people never share a point; a facing the hall's place
states (from the text) is not contradicted. Both are errors at the move's file:line:col.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from yuesheng.cuesheet.model import CueSheet
from yuesheng.errors import InvalidInputError, Problem
from yuesheng.limits import REACH
from yuesheng.staging.model import Blocking, Move, Point, Stand
from yuesheng.staging.routes import blocked

_SAME = 0.05  # 步: two people closer than this stand on one point


@dataclass(frozen=True, slots=True)
class CueStage:
    """One cue on the ground: who stands where after it, each person's (from, to) for the walks, and the set pieces
    standing while they walk."""

    cue: str
    stands: dict[str, Stand]  # member id → where he stands after the cue
    moved: tuple[tuple[Move, str, Point, Point], ...]  # (move, member, from, to) in the order of the moves
    things: tuple[str, ...] = ()  # the hall's things set up during the cue (those it sets: from the next), sorted


def members(person: str, sheet: CueSheet, same: Mapping[str, str]) -> list[str]:
    """The members a performer stands as: himself, ``id#1`` … ``id#N`` for a group of N, ``id#2-3`` some of them;
    an id the blocking names as another's (``same``: 司馬 is the 相) stands as that one."""
    if person in same:
        return members(same[person], sheet, same)
    base, _, part = person.partition("#")
    count = sheet.performers[base].count
    if part:
        first, _, last = part.partition("-")
        return [f"{base}#{n}" for n in range(int(first), int(last or first) + 1)]
    return [person] if count <= 1 else [f"{person}#{n}" for n in range(1, count + 1)]


def performer_of(member: str) -> str:
    return member.partition("#")[0]


def _placed(move: Move, blocking: Blocking, sheet: CueSheet, problems: list[Problem],
            now: Mapping[str, Stand]) -> list[Stand]:
    """Where the people of *move* stand after it: a file from the place, each facing as the move or the place says,
    else as he faced before (a person turns only where the text or the blocking turns him)."""
    place = blocking.hall.places[move.to]
    who = [m for person in move.who for m in members(person, sheet, blocking.same)]
    head = move.head or place.head
    facing = move.facing or place.facing
    if move.facing and place.facing and move.facing is not place.facing and not move.source.page:
        problems.append(_problem(blocking, move, f"faces {move.facing.hanzi}面 at {place.name}, where the text has "
                                 f"{place.facing.hanzi}面 ({place.source})"))
    if len(who) > 1 and head is None:
        problems.append(_problem(blocking, move, f"{len(who)} people at {place.name} need a file head "
                                 "(file: 北上, 東上 …): they would stand on one point"))
    dx, dy = head.step if head else (0.0, 0.0)
    base = place.point.shifted(*move.offset)
    stands = [Stand(m, move.to, base.shifted(dx * move.spacing * n, dy * move.spacing * n),
                    facing or (now[m].facing if m in now else None)) for n, m in enumerate(who)]
    for s in stands:
        if not (abs(s.point.x) <= REACH and abs(s.point.y) <= REACH):
            problems.append(_problem(blocking, move, f"{s.who} would stand at ({s.point.x:,.0f}, {s.point.y:,.0f}), "
                                     f"beyond any hall (at most {REACH:,} 步 either way): the file from {place.name} "
                                     "runs too far"))
        elif wall := blocked(blocking.hall, s.point, s.point):
            problems.append(_problem(blocking, move, f"{s.who} would stand in the wall {wall} at ({s.point.x:g}, "
                                     f"{s.point.y:g}): the file from {place.name} runs into it"))
    return stands


def _problem(blocking: Blocking, move: Move, message: str) -> Problem:
    return Problem(blocking.file, move.line, move.col, "", message, "staging")


def stage(blocking: Blocking, sheet: CueSheet, variants: frozenset[str] = frozenset(),
          readings: dict[str, str] | None = None) -> list[CueStage]:
    """Each cue of the programme with where everyone stands after it; InvalidInputError on a collision, a
    contradicted facing, or a performer of a cue whom no move has placed."""
    problems: list[Problem] = []
    now: dict[str, Stand] = {}
    by: dict[str, Move] = {}
    cells: dict[tuple[int, int], set[str]] = {}  # who stands on each point (a grid of _SAME)
    for move in blocking.start:
        for s in _placed(move, blocking, sheet, problems, now):
            _put(cells, now, s)
            now[s.who], by[s.who] = s, move
    out: list[CueStage] = []
    reported: set[tuple[str, str, str]] = set()
    things = frozenset(blocking.hall.things) - blocking.absent
    for cue in sheet.active_cues(variants, readings):
        moved = []
        cb = blocking.cues.get(cue.id)
        during = things
        if cb:
            things = (things - frozenset(cb.clears)) | frozenset(cb.sets)
        for move in cb.moves if cb else ():
            for s in _placed(move, blocking, sheet, problems, now):
                before = now[s.who].point if s.who in now else s.point
                moved.append((move, s.who, before, s.point))
                _put(cells, now, s)
                now[s.who], by[s.who] = s, move
        for person in cue.who or cue.performers:
            if person in sheet.performers and not any(m in now for m in members(person, sheet, blocking.same)):
                problems.append(Problem(blocking.file, None, None, f"cues.{cue.id}", f"{person} acts in cue "
                                        f"{cue.id} but no move (nor the start) places him", "staging"))
        # only where someone has just stepped can two newly share a point (the first cue: everyone from the start)
        touched = {_cell(now[who].point) for _, who, _, _ in moved} if out else set(cells)
        problems.extend(_collisions(blocking, now, by, cells, touched, cue.id, reported))
        out.append(CueStage(cue.id, dict(now), tuple(moved), tuple(sorted(during))))
    if problems:
        raise InvalidInputError(list(dict.fromkeys(problems)))
    return out


def _cell(point: Point) -> tuple[int, int]:
    return round(point.x / _SAME), round(point.y / _SAME)


def _put(cells: dict[tuple[int, int], set[str]], now: Mapping[str, Stand], s: Stand) -> None:
    """*s*'s member recorded on his new point and no longer on the one he left."""
    if s.who in now:
        cells[_cell(now[s.who].point)].discard(s.who)
    cells.setdefault(_cell(s.point), set()).add(s.who)


def _collisions(blocking: Blocking, now: dict[str, Stand], by: dict[str, Move],
                cells: dict[tuple[int, int], set[str]], touched: set[tuple[int, int]], cue: str,
                reported: set[tuple[str, str, str]]) -> list[Problem]:
    """Two people on one of the *touched* points after *cue*: reported at the later of the two moves that put them
    there, once (each next to the one before him in the order of their ids)."""
    out = []
    for key in sorted(touched):
        here = sorted(cells[key])
        for other, who in zip(here, here[1:], strict=False):
            s = now[who]
            if (other, who, s.place) in reported:
                continue
            reported.add((other, who, s.place))
            move = max(by[who], by[other], key=lambda m: m.line or 0)
            out.append(_problem(blocking, move, f"{other} and {who} both stand at ({s.point.x:g}, {s.point.y:g}) "
                                f"({blocking.hall.places[s.place].name}) after cue {cue}"))
    return out
