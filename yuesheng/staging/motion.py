"""Where every member of a rite is at any instant: the staged rite (each cue's stands and walks) laid on the cues'
spans in time.

At each cue a member walks his route from the cue's start at the derivation's pace (its stair flights taking the
rest of the walk's seconds), one walk after another where the cue moves him twice, and never before his last walk
is done (cues overlap in time). The cue's formulas (拜, 揖…) follow its longest walk, as the run sheet's
derivation orders them. A cue whose span is shorter than its derivation (a measured duration) plays it faster, so
that everyone stands where the cue leaves him by its end. On arriving he turns, in ``TURN`` seconds, from the way
he walked to the facing his stand gives, and stands so till his next walk. A member on the ground from the start
stands at his first place before the first cue; one first placed at a later cue (no walk to it) is not on the
ground before that cue's start.

Times are float seconds from the start of the rite (the Timeline's ticks / ``TICKS_PER_SECOND``: ``spans``), for
drawing and reading; the staged rite's durations stay exact.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from yuesheng.staging.model import Facing, Hall, Point, Stand, Walk
from yuesheng.staging.paces import Paces, shipped
from yuesheng.staging.rite import StagedRite

TURN = 1.0  # seconds to turn from the way walked to the facing stood (an estimate: the texts time no turn)

Vector = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Leg:
    """One walk of one member: his *number*-th of the rite, at *cue*, from *start* to *end* seconds; from the place
    *origin* (its id; '' where he stood at no place of the hall) to *to*, along *route* (*length* 步), facing
    *facing* on arriving."""

    member: str
    number: int
    cue: str
    start: float
    end: float
    origin: str
    to: str
    route: tuple[Point, ...]
    length: float
    run: bool
    facing: Facing | None

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Position:
    """Where a member is at an instant: his *point*, the way he looks (*heading*, a unit vector x east y south;
    None where nothing states it), the place he stands at ('' while walking), his stated *facing* once arrived and
    turned (None while walking or turning), and the *leg* he is walking (None standing)."""

    member: str
    point: Point
    heading: Vector | None
    place: str
    facing: Facing | None
    leg: Leg | None

    @property
    def walking(self) -> bool:
        return self.leg is not None


@dataclass(frozen=True, slots=True)
class Gesture:
    """One formula of a cue (拜, 揖…), from *start* to *end* seconds."""

    cue: str
    name: str
    start: float
    end: float


@dataclass(frozen=True, slots=True)
class Still:
    """A member standing from *start* (his arrival, or a turn or an entrance the blocking makes where he stands)."""

    start: float
    point: Point
    place: str
    facing: Facing | None
    came: Vector | None  # the way he looked before, to turn from (None: he turns at once)


@dataclass(frozen=True, slots=True)
class Going:
    """A member walking *leg*: the share of its time spent when he reaches each point of its route."""

    leg: Leg
    marks: tuple[float, ...]

    @property
    def start(self) -> float:
        return self.leg.start


Step = Going | Still


class Motion:
    """Every member's track through a staged rite, given each cue's (start, end) in seconds (``spans``: cues the
    spans leave out are not played)."""

    def __init__(self, staged: StagedRite, spans: Mapping[str, tuple[float, float]],
                 paces: Paces | None = None) -> None:
        self._hall = staged.hall
        self._paces = paces or shipped()
        self._spans = {c: spans[c] for c in staged.cues if c in spans}
        self._tracks: dict[str, list[Step]] = {}
        self._gestures: dict[str, tuple[Gesture, ...]] = {}
        self._build(staged)
        self._starts = {m: [s.start for s in track] for m, track in self._tracks.items()}

    @property
    def members(self) -> tuple[str, ...]:
        """Every member on the ground at some time, sorted (``zhongbin#3``; one under several ids by the one he
        stands as)."""
        return tuple(sorted(self._tracks))

    @property
    def cues(self) -> tuple[str, ...]:
        """The cues played, in the programme's order."""
        return tuple(self._spans)

    def legs(self, member: str) -> tuple[Leg, ...]:
        """*member*'s walks in order, numbered from 1 (KeyError for one never on the ground)."""
        return tuple(s.leg for s in self._tracks[member] if isinstance(s, Going))

    def track(self, member: str) -> tuple[Step, ...]:
        """*member*'s steps in time, each a walk (``Going``) or a stand (``Still``), for drawing elsewhere as
        ``position`` places him (KeyError for one never on the ground)."""
        return tuple(self._tracks[member])

    def gestures(self, cue: str) -> tuple[Gesture, ...]:
        """The formulas of *cue* in time, one after another after its longest walk."""
        return self._gestures.get(cue, ())

    def span(self, cue: str) -> tuple[float, float]:
        """*cue*'s start and end in seconds (KeyError for a cue not played)."""
        return self._spans[cue]

    def entrance(self, member: str) -> float:
        """When *member* comes on the ground: -inf for one there from the start (KeyError for one never on it)."""
        first = self._tracks[member][0]
        if isinstance(first, Going):
            return -math.inf if self._spans and first.leg.cue == next(iter(self._spans)) else first.start
        return first.start

    def cue_at(self, t: float) -> str | None:
        """The cue in play at *t*: the last in the programme's order begun by then (None before the first)."""
        begun = [c for c, (start, _) in self._spans.items() if start <= t]
        return begun[-1] if begun else None

    def position(self, member: str, t: float) -> Position | None:
        """Where *member* is at *t* seconds; None before he comes on the ground (KeyError for one never on it)."""
        track = self._tracks[member]
        i = bisect.bisect_right(self._starts[member], t) - 1
        if i < 0:  # before his first step: on the ground from the start only if that step is a walk at the first cue
            first = track[0]
            if not isinstance(first, Going) or self.entrance(member) > t:
                return None
            leg = first.leg
            return Position(member, leg.route[0], _way(leg.route[:2]), leg.origin, None, None)
        step = track[i]
        if isinstance(step, Still):
            return _standing(member, step, t)
        leg = step.leg
        if t >= leg.end:  # his stand follows at once; only a leg of no time is passed here
            return Position(member, leg.route[-1], _way(leg.route), leg.to, leg.facing, None)
        point, heading = _along(step, t)
        return Position(member, point, heading, "", None, leg)

    def at(self, t: float) -> dict[str, Position]:
        """Every member on the ground at *t*: member id → Position."""
        out = {}
        for member in self._tracks:
            p = self.position(member, t)
            if p is not None:
                out[member] = p
        return out

    def _build(self, staged: StagedRite) -> None:
        before: dict[str, tuple[str, Facing | None]] = {}  # member → the place and facing he stands at
        free: dict[str, float] = {}  # member → when his last walk ends
        for n, (cue, (start, end)) in enumerate(self._spans.items()):
            staged_cue = staged.cues[cue]
            derivation = staged_cue.derivation
            total = float(derivation.seconds)
            scale = min(1.0, (end - start) / total) if total > 0 else 1.0
            for w in derivation.walks:
                self._walk(cue, w, staged_cue.stands[w.who], before, free, max(start, free.get(w.who, start)), scale)
            walked = {w.who for w in derivation.walks}
            longest = max((float(w.seconds) for w in derivation.walks), default=0.0)
            self._gestures[cue] = _timed(cue, derivation.parts, start + longest * scale, scale)
            for member, stand in staged_cue.stands.items():
                now = (stand.place, stand.facing)
                if member not in walked and before.get(member) != now:
                    came = before[member][1] if member in before else None
                    at = -math.inf if n == 0 else max(start, free.get(member, start))
                    self._add(member, Still(at, stand.point, stand.place, stand.facing,
                                             came.vector if came else None))
                before[member] = now

    def _walk(self, cue: str, w: Walk, stand: Stand, before: dict[str, tuple[str, Facing | None]],
              free: dict[str, float], at: float, scale: float) -> None:
        """*w* as *w.who*'s next leg from *at*, and his stand at its end (the cue's, at its route's end)."""
        end = at + float(w.seconds) * scale
        origin = before[w.who][0] if w.who in before else _place_at(self._hall, w.route[0])
        arrived = w.route[-1].distance(stand.point) < 1e-6
        to, facing = (stand.place, stand.facing) if arrived else (_place_at(self._hall, w.route[-1]), None)
        number = sum(isinstance(s, Going) for s in self._tracks.get(w.who, ())) + 1
        leg = Leg(w.who, number, cue, at, end, origin, to, w.route, w.length, w.run, facing)
        self._add(w.who, Going(leg, _marks(self._hall, w, self._paces)))
        self._add(w.who, Still(end, w.route[-1], to, facing, _way(w.route)))
        free[w.who] = end
        before[w.who] = (to, facing)

    def _add(self, member: str, step: Step) -> None:
        self._tracks.setdefault(member, []).append(step)


def _timed(cue: str, parts: tuple[tuple[str, Fraction], ...], at: float, scale: float) -> tuple[Gesture, ...]:
    """The derivation's formulas one after another from *at* (its walk part left out: the walks are the legs)."""
    out = []
    for name, seconds in parts:
        if name.startswith("walk:"):
            continue
        length = float(seconds) * scale
        out.append(Gesture(cue, name, at, at + length))
        at += length
    return tuple(out)


def _place_at(hall: Hall, point: Point) -> str:
    """The id of the hall's place at *point* (within 0.05 步), else ''."""
    return next((p.id for p in hall.places.values() if p.point.distance(point) < 0.05), "")


def _way(route: tuple[Point, ...]) -> Vector | None:
    """The way the last step of *route* that moves goes (None where none moves)."""
    for a, b in zip(reversed(route[:-1]), reversed(route[1:]), strict=True):
        d = a.distance(b)
        if d > 1e-9:
            return (b.x - a.x) / d, (b.y - a.y) / d
    return None


def _standing(member: str, still: Still, t: float) -> Position:
    """*member* standing as *still* says at *t*: turning from the way he looked, then facing."""
    goal = still.facing.vector if still.facing else None
    if still.came is None or goal is None or t >= still.start + TURN:
        return Position(member, still.point, goal or still.came, still.place, still.facing, None)
    return Position(member, still.point, _turned(still.came, goal, (t - still.start) / TURN), still.place, None,
                    None)


def _turned(a: Vector, b: Vector, f: float) -> Vector:
    """The heading a fraction *f* of the way from *a* to *b*, turning the shorter way."""
    ta, tb = math.atan2(a[1], a[0]), math.atan2(b[1], b[0])
    angle = ta + ((tb - ta + math.pi) % (2 * math.pi) - math.pi) * max(0.0, min(1.0, f))
    return math.cos(angle), math.sin(angle)


def _marks(hall: Hall, w: Walk, paces: Paces) -> tuple[float, ...]:
    """The share of *w*'s seconds spent on reaching each point of its route: each level stretch at its ground's
    pace (接武 on the 堂, 布武 or 趨 below), the stair flights sharing what is left of the walk's seconds."""
    flights = {frozenset((s.top, s.foot)) for s in hall.stairs}
    segments = list(zip(w.route, w.route[1:], strict=False))
    on_stair = [frozenset(seg) in flights for seg in segments]
    below = float(paces.qu if w.run else paces.ting)
    level = [0.0 if up else a.distance(b) * (float(paces.tang) if hall.on_tang(a) and hall.on_tang(b) else below)
             for (a, b), up in zip(segments, on_stair, strict=True)]
    stair = max(0.0, float(w.seconds) - sum(level)) / on_stair.count(True) if any(on_stair) else 0.0
    times = [stair if up else t for t, up in zip(level, on_stair, strict=True)]
    whole = sum(times)
    marks, run = [0.0], 0.0
    for dt in times:
        run += dt
        marks.append(run / whole if whole > 0 else 1.0)
    return tuple(marks)


def _along(going: Going, t: float) -> tuple[Point, Vector | None]:
    """Where on its leg the walker of *going* is at *t*, and the way he goes."""
    leg, marks = going.leg, going.marks
    f = (t - leg.start) / leg.seconds if leg.seconds > 0 else 1.0
    i = min(max(bisect.bisect_right(marks, f) - 1, 0), len(marks) - 2)
    while i > 0 and marks[i + 1] <= marks[i]:  # a stretch of no time: the one before it
        i -= 1
    a, b = leg.route[i], leg.route[i + 1]
    share = (f - marks[i]) / (marks[i + 1] - marks[i]) if marks[i + 1] > marks[i] else 1.0
    share = max(0.0, min(1.0, share))
    d = a.distance(b)
    heading = ((b.x - a.x) / d, (b.y - a.y) / d) if d > 1e-9 else _way(leg.route[: i + 2])
    return Point(a.x + (b.x - a.x) * share, a.y + (b.y - a.y) * share), heading
