"""Durations from geometry: an action lasts its longest walk plus its formulas, each part explained.

A walk is its route's length (``routes``: by its walker's stair, ``rank``; clear of the set pieces standing, and of
the people standing where a way round exists) times the pace — 行, or 趨 for a move marked ``run`` — plus a stair's
time for each flight climbed or descended, to the tenth of a second. The moves of one cue are taken as made at
once (the longest walk counts); the formulas (``gestures``: 拜, 揖, 坐…) follow one another. Paces and formulas are
the table ``data/staging.json``: the texts give no durations, so each entry is an estimate with its reason.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

from yuesheng.cuesheet.model import CueSheet
from yuesheng.datafiles import data_table
from yuesheng.errors import InvalidInputError, NoRouteError, Problem, UnknownNameError
from yuesheng.staging import rank
from yuesheng.staging.model import Blocking, Break, Derivation, Hall, Move, Point, Walk
from yuesheng.staging.routes import CLEAR, Box, length, near_way, passes, route, stairs_on
from yuesheng.staging.stage import CueStage


def _seconds(value: float) -> Fraction:
    return Fraction(value).limit_denominator(100)


def _tenths(seconds: Fraction) -> Fraction:
    """*seconds* to the nearest tenth (halves up): the time shown is the time taken, and a whole number of ticks."""
    return Fraction(math.floor(seconds * 10 + Fraction(1, 2)), 10)


@cache
def pace(run: bool) -> Fraction:
    """Seconds a 步, walking (行) or at a run (趨)."""
    return _seconds(data_table("staging")["paces"]["趨" if run else "行"]["seconds_per_bu"])


@cache
def gesture_seconds(name: str) -> Fraction:
    """The seconds of a formula of the table (UnknownNameError with the nearest names)."""
    table = data_table("staging")["gestures"]
    if name not in table:
        from yuesheng.text import suggest

        raise UnknownNameError("formula", name, suggest(name, list(table)))
    return _seconds(table[name]["seconds"])


@cache
def _stair() -> Fraction:
    """Seconds to climb or descend one flight."""
    return _seconds(data_table("staging")["stair"]["seconds"])


def walk(blocking: Blocking, who: str, start: Point, end: Point, via: tuple[str, ...], run: bool, *,
         stairs: frozenset[str] | None = None, things: tuple[Box, ...] = (), people: tuple[Point, ...] = ()) -> Walk:
    """A person's walk from *start* to *end* through *via* (places, or a stair's id: its flight, taken the way the walk
    goes), up and down only *stairs* (None: any), clear of *things* and, where it can, of *people*."""
    hall = blocking.hall
    stops = _stops(hall, start, via)
    near = near_way(_way(hall, start, end, stops, stairs, things), people)
    return Walk(who, *_measured(hall, start, end, stops, run, stairs, things, near), run)


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
              people: tuple[Point, ...]) -> tuple[tuple[Point, ...], float, int, Fraction]:
    """A walk's route, its length in 步, its stairs and its seconds (kept: the same walk recurs in a rite)."""
    points = route(hall, start, end, via, stairs=allowed, things=things, people=people)
    steps = round(length(points), 2)  # to the hundredth of a 步 (6 mm): the length shown is the length timed
    stairs = stairs_on(hall, points)
    seconds = _tenths(_seconds(steps) * pace(run) + stairs * _stair()) if steps > 0 else Fraction(0)
    return points, steps, stairs, seconds


def derive(blocking: Blocking, cue: CueStage, sheet: CueSheet) -> Derivation:
    """What *cue*'s duration is made of: its longest walk, then its formulas; with the walks that pass someone
    standing and those that break rank or their texts."""
    names = blocking.hall.places
    ranks = rank.names_of(sheet)
    texts = rank.Texts.of(sheet.cue(cue.cue), blocking.hall, ranks)
    things = tuple(sorted(blocking.hall.things[t].box() for t in cue.things))
    walking = {member for move, member, start, end in cue.moved if start != end or move.via}
    standing = tuple(sorted((s.point for who, s in cue.stands.items() if who not in walking),
                            key=lambda p: (p.x, p.y)))
    walks: list[Walk] = []
    problems: list[Problem] = []
    breaks: list[Break] = []
    passed: list[str] = []
    for move, member, start, end in cue.moved:
        if member not in walking:
            continue
        name = _rank_name(blocking, sheet, member)
        try:
            w = walk(blocking, member, start, end, move.via, move.run, things=things, people=standing,
                     stairs=rank.allowed(blocking, texts, move, member, name, ranks))
        except NoRouteError as exc:
            problems.append(Problem(blocking.file, move.line, move.col, "", str(exc), "staging"))
            continue
        walks.append(w)
        breaks += rank.breaks(blocking, texts, move, w, name, start, ranks, cue.things)
        passed += _passes(blocking, cue, move, w, walking)
    if problems:
        raise InvalidInputError(problems)
    parts: list[tuple[str, Fraction]] = []
    if walks:
        longest = max(walks, key=lambda w: (w.seconds, w.who))
        to = names[next(m.to for m, who, _, _ in cue.moved if who == longest.who)].name
        how = "趨" if longest.run else "行"
        stairs = f" and {longest.stairs} stair(s)" if longest.stairs else ""
        parts.append((f"walk: {longest.who} to {to}, {longest.length:g} 步 at {float(pace(longest.run)):g} s/步 "
                      f"({how}){stairs}", longest.seconds))
    cb = blocking.cues.get(cue.cue)
    for name in cb.gestures if cb else ():
        parts.append((name, gesture_seconds(name)))
    return Derivation(cue.cue, tuple(parts), tuple(walks), tuple(passed), tuple(breaks))


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

