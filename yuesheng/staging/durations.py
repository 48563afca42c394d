"""Durations from geometry: an action lasts its longest walk plus its formulas, each part explained.

A walk is its route (``routes``: by its walker's stair, ``rank``; clear of the set pieces standing, and of the people
standing where a way round exists) timed by the ground it crosses (``paces``: its 步 on the 堂 at 接武, below at 布武,
or 趨 for a move marked ``run``, which runs only below: 堂上不趨) plus a stair's time for each flight climbed or
descended, to the tenth of a second. The moves of one cue are taken as made at once (the longest walk counts); the
formulas (``gestures``: 拜, 揖, 坐…) follow one another, and those a cue's ``turns`` names are made by each member of
its group in turn (序進: once for each). A round trip the text states (降盥…升, 反命 又命之) is walked: the move's
``via`` names each place and flight of it. Paces and formulas are the table ``data/staging.json`` (a ``--paces``
file replaces the paces): the texts give no durations, so each entry is an estimate with its reason.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

from yuesheng.cuesheet.model import CueSheet
from yuesheng.datafiles import data_table
from yuesheng.errors import InvalidInputError, NoRouteError, Problem, UnknownNameError
from yuesheng.staging import rank
from yuesheng.staging.model import Blocking, Break, Derivation, Hall, Move, Point, Turns, Walk
from yuesheng.staging.paces import Paces, lengths, shipped, walk_seconds
from yuesheng.staging.routes import CLEAR, Box, length, near_way, passes, route, stairs_on
from yuesheng.staging.stage import CueStage


def _seconds(value: float) -> Fraction:
    return Fraction(value).limit_denominator(100)


def _tenths(seconds: Fraction) -> Fraction:
    """*seconds* to the nearest tenth (halves up): the time shown is the time taken, and a whole number of ticks."""
    return Fraction(math.floor(seconds * 10 + Fraction(1, 2)), 10)


@cache
def gesture_seconds(name: str) -> Fraction:
    """The seconds of a formula of the table (UnknownNameError with the nearest names)."""
    table = data_table("staging")["gestures"]
    if name not in table:
        from yuesheng.text import suggest

        raise UnknownNameError("formula", name, suggest(name, list(table)))
    return _seconds(table[name]["seconds"])


def walk(blocking: Blocking, who: str, start: Point, end: Point, via: tuple[str, ...], run: bool, *,
         stairs: frozenset[str] | None = None, things: tuple[Box, ...] = (), people: tuple[Point, ...] = (),
         paces: Paces | None = None) -> Walk:
    """A person's walk from *start* to *end* through *via* (places, or a stair's id: its flight, taken the way the walk
    goes), up and down only *stairs* (None: any), clear of *things* and, where it can, of *people*, at *paces* (None:
    the shipped table's)."""
    hall = blocking.hall
    stops = _stops(hall, start, via)
    near = near_way(_way(hall, start, end, stops, stairs, things), people)
    return Walk(who, *_measured(hall, start, end, stops, run, stairs, things, near, paces or shipped()), run)


@cache
def _way(hall: Hall, start: Point, end: Point, via: tuple[Point, ...], stairs: frozenset[str] | None,
         things: tuple[Box, ...]) -> tuple[Point, ...]:
    """A walk's route as if no one stood in the way (kept: the same walk recurs in a rite)."""
    return route(hall, start, end, via, stairs=stairs, things=things)


def _stops(hall: Hall, start: Point, via: tuple[str, ...]) -> tuple[Point, ...]:
    """The points of *via*: a place's, or a stair's top and foot in the order the walk reaches them."""
    out: list[Point] = []
    flights = {s.id: s for s in hall.stairs}
    for v in via:
        if v in flights:
            s = flights[v]
            out += [s.top, s.foot] if hall.on_tang(out[-1] if out else start) else [s.foot, s.top]
        else:
            out.append(hall.places[v].point)
    return tuple(out)


@cache
def _measured(hall: Hall, start: Point, end: Point, via: tuple[Point, ...], run: bool,
              allowed: frozenset[str] | None, things: tuple[Box, ...],
              people: tuple[Point, ...], paces: Paces) -> tuple[tuple[Point, ...], float, int, Fraction]:
    """A walk's route, its length in 步, its stairs and its seconds (kept: the same walk recurs in a rite)."""
    points = route(hall, start, end, via, stairs=allowed, things=things, people=people)
    steps = round(length(points), 2)  # to the hundredth of a 步 (6 mm): the length shown is the length timed
    tang, ting = (round(part, 2) for part in lengths(hall, points))
    stairs = stairs_on(hall, points)
    seconds = _tenths(walk_seconds(paces, tang, ting, stairs, run)) if steps > 0 else Fraction(0)
    return points, steps, stairs, seconds


def derive(blocking: Blocking, cue: CueStage, sheet: CueSheet, paces: Paces | None = None) -> Derivation:
    """What *cue*'s duration is made of: its longest walk at *paces* (None: the shipped table's), then its formulas,
    then those its group makes in turn again for each member after the first; with the walks that pass someone
    standing and those that break rank or their texts."""
    paces = paces or shipped()
    names = blocking.hall.places
    ranks = rank.names_of(sheet)
    texts = rank.Texts.of(sheet.cue(cue.cue), blocking.hall, ranks)
    things = tuple(sorted(blocking.hall.things[t].box() for t in cue.things))
    walking = {member for move, member, start, end in cue.moved if start != end or move.via}
    standing = tuple(sorted((s.point for who, s in cue.stands.items() if who not in walking),
                            key=lambda p: (p.x, p.y)))
    walks: list[Walk] = []
    firsts: set[int] = set()  # the walks of moves made first (their indices in walks)
    problems: list[Problem] = []
    breaks: list[Break] = []
    passed: list[str] = []
    for move, member, start, end in cue.moved:
        if member not in walking:
            continue
        name = _rank_name(blocking, sheet, member)
        try:
            w = walk(blocking, member, start, end, move.via, move.run, things=things, people=standing,
                     stairs=rank.allowed(blocking, texts, move, member, name, ranks), paces=paces)
        except NoRouteError as exc:
            problems.append(Problem(blocking.file, move.line, move.col, "", str(exc), "staging"))
            continue
        if move.first:
            firsts.add(len(walks))
        walks.append(w)
        breaks += rank.breaks(blocking, texts, move, w, name, start, ranks, cue.things)
        passed += _passes(blocking, cue, move, w, walking)
    if problems:
        raise InvalidInputError(problems)
    parts: list[tuple[str, Fraction]] = []
    for then in (True, False):  # the walks made first, then the rest at once
        if ways := [w for n, w in enumerate(walks) if (n in firsts) == then]:
            longest = max(ways, key=lambda w: (w.seconds, w.who))
            to = names[next(m.to for m, who, _, _ in cue.moved if who == longest.who)].name
            parts.append((f"walk{' first' if then else ''}: {longest.who} to {to}, "
                          f"{_how(blocking.hall, longest, paces)}", longest.seconds))
    cb = blocking.cues.get(cue.cue)
    for name in cb.gestures if cb else ():
        parts.append((name, gesture_seconds(name)))
    if cb and cb.turns:
        parts += _in_turn(cb.turns, sheet)
    return Derivation(cue.cue, tuple(parts), tuple(walks), tuple(passed), tuple(breaks))


def _how(hall: Hall, w: Walk, paces: Paces) -> str:
    """How a walk is timed: its 步 on each ground at its pace, and its flights."""
    tang, ting = lengths(hall, w.route)
    ways = [f"{tang:.2f}".rstrip("0").rstrip(".") + f" on the 堂 at {float(paces.tang):g} s/步 (接武)"] if tang else []
    if ting:
        below = f"{float(paces.qu):g} s/步 (趨)" if w.run else f"{float(paces.ting):g} s/步 (布武)"
        ways.append(f"{ting:.2f}".rstrip("0").rstrip(".") + f" below at {below}")
    stairs = f" and {w.stairs} stair(s) at {float(paces.stair):g} s" if w.stairs else ""
    return f"{w.length:g} 步: " + ", ".join(ways) + stairs


def _in_turn(turns: Turns, sheet: CueSheet) -> list[tuple[str, Fraction]]:
    """The formulas of *turns* again for each member of its group after the first (序進)."""
    count = sheet.performers[turns.who].count
    name = sheet.performers[turns.who].name
    cite = f"{turns.source.page} {turns.source.quote}".strip() or turns.source.estimate
    again = "once more" if count == 2 else f"{count - 1} times more"
    return [(f"序進: {' '.join(turns.gestures)} {again} ({name}, {count} in turn: {cite})",
             sum((gesture_seconds(g) for g in turns.gestures), Fraction(0)) * (count - 1))]


def _rank_name(blocking: Blocking, sheet: CueSheet, member: str) -> str:
    """The name of *member*'s rank as the texts write it (主人, 賓)."""
    who = rank.person(blocking, member)
    return sheet.performers[who].name if who in sheet.performers else who


def _passes(blocking: Blocking, cue: CueStage, move: Move, w: Walk, moving: set[str]) -> list[str]:
    """Each person standing whom *w* passes within reach of (no way round being open), said at the move."""
    near = set(passes(w.route, [s.point for who, s in cue.stands.items() if who not in moving]))
    return [f"{blocking.file}:{move.line}:{move.col}: cue {cue.cue}: {w.who} passes within {CLEAR:g} 步 of {who} "
            f"at ({s.point.x:g}, {s.point.y:g})" for who, s in sorted(cue.stands.items())
            if who not in moving and s.point in near]

