"""Durations from geometry: an action lasts its longest walk plus its formulas, each part explained.

A walk is its route's length (``routes``) times the pace — 行, or 趨 for a move marked ``run`` — plus a stair's
time for each flight climbed or descended, to the tenth of a second. The moves of one cue are taken as made at
once (the longest walk counts); the formulas (``gestures``: 拜, 揖, 坐…) follow one another. Paces and formulas are
the table ``data/staging.json``: the texts give no durations, so each entry is an estimate with its reason.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

from yuesheng.datafiles import data_table
from yuesheng.errors import InvalidInputError, NoRouteError, Problem, UnknownNameError
from yuesheng.staging.model import Blocking, Derivation, Hall, Point, Walk
from yuesheng.staging.routes import length, route, stairs_on
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


def walk(blocking: Blocking, who: str, start: Point, end: Point, via: tuple[str, ...], run: bool) -> Walk:
    """A person's walk from *start* to *end* through the places *via*."""
    hall = blocking.hall
    return Walk(who, *_measured(hall, start, end, tuple(hall.places[v].point for v in via), run), run)


@cache
def _measured(hall: Hall, start: Point, end: Point, via: tuple[Point, ...],
              run: bool) -> tuple[tuple[Point, ...], float, int, Fraction]:
    """A walk's route, its length in 步, its stairs and its seconds (kept: the same walk recurs in a rite)."""
    points = route(hall, start, end, via)
    steps = round(length(points), 2)  # to the hundredth of a 步 (6 mm): the length shown is the length timed
    stairs = stairs_on(hall, points)
    seconds = _tenths(_seconds(steps) * pace(run) + stairs * _stair()) if steps > 0 else Fraction(0)
    return points, steps, stairs, seconds


def derive(blocking: Blocking, cue: CueStage) -> Derivation:
    """What *cue*'s duration is made of: its longest walk, then its formulas."""
    names = blocking.hall.places
    walks: list[Walk] = []
    problems = []
    for move, member, start, end in cue.moved:
        if start == end and not move.via:
            continue
        try:
            walks.append(walk(blocking, member, start, end, move.via, move.run))
        except NoRouteError as exc:
            problems.append(Problem(blocking.file, move.line, move.col, "", str(exc), "staging"))
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
    return Derivation(cue.cue, tuple(parts), tuple(walks))
