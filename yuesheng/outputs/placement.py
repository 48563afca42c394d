"""Where each sounding part stands and where the listener sits, and what that does to the sound: the geometry that
``spatial`` (audio) and ``midi`` (controllers) share. Pure Python: no numpy here.

Two halves:

- **Blocking** (``blocking``): for a Timeline, each sounding part's places over time (a ``Stop`` from a tick on,
  with one or more places: the 鐘 of the east and the west 縣 sound together) and the named seats. It is read
  from the cue sheet: an instrument stands at its ``position``; the 瑟 goes where an action cue with ``where`` takes
  its player (遷樂于下 and back); the 歌 sit with the 瑟; a caller (獲者, 負侯者) calls
  from his cue's ``where``, else from where his last cue put him. This is the one function the staging model's
  blocking replaces (see docs/seat.md); there a player who walks while his part sounds gives it a passing stop
  every ``STEP_TICKS`` of the walk, where ``staging.motion`` has him.
- **Hearing** (``hear``): one place heard from one listener: distance, delay, level, air absorption (ISO 9613-1),
  and direction (interaural time and level differences, Woodworth's and Brown and Duda's spherical head).

Coordinates are the cue sheets' (docs/cuesheet.md): 步 east (x) and south (y) of the middle of the 堂's south
edge; a point with y < 0 is on the 堂, raised ``Physics.tang_height_m`` above the 庭.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from yuesheng.datafiles import rite_of
from yuesheng.errors import UsageError
from yuesheng.music.instruments import PARTS, part_for
from yuesheng.text import did_you_mean, normalize
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Timeline

if TYPE_CHECKING:
    from yuesheng.staging.model import Stand
    from yuesheng.staging.motion import Motion
    from yuesheng.staging.rite import StagedRite

CALLERS = ("獲者", "負侯者", "許諾")  # 許諾: the 獲者's answer on no 律 (part 許諾, reading xunuo)
SINGERS = "歌"
PORTABLE = frozenset({"瑟"})  # carried by the 工 (遷樂); the 笙 go up to be offered a cup and come back to play
HELD = frozenset({"瑟", "笙", "和", "管"})  # a staged rite hears these where their players stand
BU_CHI = 6  # 尺 in a 步 (鄭注 9-2b 貍步六尺; 記 6-36a 侯道五十弓, 弓 = 步)
FACINGS = {"north": (0.0, -1.0), "south": (0.0, 1.0), "east": (1.0, 0.0), "west": (-1.0, 0.0),
           "北": (0.0, -1.0), "南": (0.0, 1.0), "東": (1.0, 0.0), "西": (-1.0, 0.0), "东": (1.0, 0.0)}
FACING_NAMES = {(0.0, -1.0): "north", (0.0, 1.0): "south", (1.0, 0.0): "east", (-1.0, 0.0): "west"}
# The seats a listener may name, by position id: who sits there and which way he faces.
SEATS = {
    "bin-xi": ("賓席", "south"),  # 鄭注 4-3b 賓席牖前南面
    "zhuren-xi": ("主人席", "west"),  # the 主人 at 阼階上 faces west (an assumption from the 公's, 7-4b)
    "zuojie-shang": ("主人席", "west"),  # the 主人's place 阼階上; the lord's mat where a rite has one (rites.json)
    "huxi": ("賓席", "south"),  # 大射: 司宫設賓席于户西南面 (9-7a)
    "hu-xi": ("賓席", "south"),  # 燕禮: the 賓's mat west of the door
    "zhongting": ("中庭", "north"),
    "ting": ("庭", "north"),
}
HALL_HALF_WIDTH_BU, HALL_DEPTH_BU = 4.0, 4.0  # the 序 at 4 步 either side of the middle; the 堂 4 步 deep
NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")  # ASCII digits only (not full-width ones)
REFERENCE_VOLUME = 100  # CC7 at the reference distance: the default volume of General MIDI and FluidSynth
SOUNDING = (EventKind.NOTE, EventKind.DRUM, EventKind.CALL)
HALL_HEIGHT_M = 3.5  # from the 堂's floor to the roof over it (assumption)
MAX_BU = 200  # how far --listener x,y may sit from the 堂's edge: past every placed position of the four
# rites (大射's reach 102), well short of an open-air room or a delay line too long for memory
FADE_WALK_S = 0.05  # the shortest crossfade of a listener's walk (seconds)
MOVE_LEAD_TICKS = 2 * TICKS_PER_SECOND  # a part moves at most this long before its first note in the new place
STEP_TICKS = TICKS_PER_SECOND // 4  # a walk is heard at a point every quarter second (0.3 m at 布武), crossfaded


# --- the blocking ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Place:
    """A point of the ground plan, in 步, with the position's id."""

    x: float
    y: float
    name: str = ""


@dataclass(frozen=True, slots=True)
class Stop:
    """Where a part sounds from *start_tick* on: one place, or several sounding together; a point its players
    pass while they walk and sound (*passing*); the ticks it takes to glide into it (*glide_ticks*; 0: a move's
    short fade, ``spatial.FADE``)."""

    start_tick: int
    places: tuple[Place, ...]
    glide_ticks: int = 0
    passing: bool = False


@dataclass(frozen=True, slots=True)
class Seat:
    """A place a listener may sit, with the way he faces."""

    id: str
    name: str
    x: float
    y: float
    facing: str


@dataclass(frozen=True, slots=True)
class Blocking:
    """Each sounding part's stops, in time order, and the named seats."""

    stops: Mapping[str, tuple[Stop, ...]]
    seats: Mapping[str, Seat]


def _placed(timeline: Timeline, position: str) -> Place | None:
    member = timeline.layout.get(position)
    if member is None or member.x is None or member.y is None:
        return None
    return Place(member.x, member.y, position)


def _where_each_cue(timeline: Timeline) -> dict[str, dict[str, str]]:
    """For each cue: every performer's position as the cue starts (a cue with ``where`` moves its ``who`` there)."""
    place = {p.id: p.position for p in timeline.cast.values() if p.position}
    out: dict[str, dict[str, str]] = {}
    for timing in sorted(timeline.cues, key=lambda t: (t.start_tick, t.cue.index)):
        cue = timing.cue
        if cue.where and not cue.is_music:
            place.update(dict.fromkeys(cue.who, cue.where))
        out[cue.id] = dict(place)
    return out


def _instrument_places(timeline: Timeline, part: str, cue_instruments: tuple[str, ...],
                       people: Mapping[str, str]) -> list[str]:
    """The positions of the instruments that play *part* (those the cue names, if it names any of them)."""
    members = [m for m in timeline.instruments.values() if (p := part_for(m.name)) is not None and p.name == part]
    named = [m for m in members if m.id in cue_instruments]
    out = []
    for member in named or members:
        moved = people.get(member.player) if part in PORTABLE and member.player else None
        out.append(moved or member.position)
    return out


def blocking(timeline: Timeline, rite: StagedRite | None) -> Blocking:
    """Each sounding part's stops over *timeline* and the named seats: from the rite on the ground where its blocking
    is complete (*rite*, ``Production.staged``), else from the cue sheet's places.

    A part with no place on the plan (a cue sheet without coordinates) is left out: it is heard unplaced.
    """
    timings = {t.cue.id: t for t in timeline.cues}
    if rite is not None:
        staged, on_ground = _Staged(timeline, rite), rite

        def where(event: Event) -> tuple[Place, ...]:
            return staged.places(event, on_ground.cues[event.cue].stands, timings) if event.cue in on_ground.cues \
                else ()
    else:
        people = _where_each_cue(timeline)

        def where(event: Event) -> tuple[Place, ...]:
            return _places_of(timeline, event, people.get(event.cue, {}), timings)

    stops: dict[str, list[Stop]] = {}
    last_end: dict[str, int] = {}
    cache: dict[tuple[str, str], tuple[Place, ...]] = {}
    for event in timeline.events:
        if event.kind not in SOUNDING or not event.part or event.key is None:
            continue
        key = (event.part, event.cue)
        if key not in cache:
            cache[key] = where(event)
        places = cache[key]
        if not places:
            continue
        run = stops.setdefault(event.part, [])
        if not run or run[-1].places != places:
            before = last_end.get(event.part, 0)
            lead = min(MOVE_LEAD_TICKS, max(0, event.start_tick - before) // 2)
            run.append(Stop(event.start_tick - lead if run else 0, places))
        last_end[event.part] = max(last_end.get(event.part, 0), event.start_tick + event.length_ticks)
    if rite is not None:
        _walks_heard(timeline, rite, stops)
    ordered = {name: tuple(stops[name]) for name in PARTS if name in stops}
    return Blocking(ordered, seats(timeline, rite))


def _walks_heard(timeline: Timeline, rite: StagedRite, stops: dict[str, list[Stop]]) -> None:
    """Each part's *stops* with the walks its players take while it sounds (``staging.motion`` on *timeline*'s
    cue spans): a passing stop every ``STEP_TICKS`` of the walk, each player where the motion has him then, and
    the stop in force at the walk's end from its end; the stops the blocking made in the walk (or just before it,
    a move's lead) give way to them."""
    from yuesheng.staging.motion import Motion

    motion = Motion(rite, {t.cue.id: (t.start_tick / TICKS_PER_SECOND, t.end_tick / TICKS_PER_SECOND)
                           for t in timeline.cues})
    members = set(motion.members)
    sounds: dict[str, list[tuple[int, int]]] = {}
    for event in timeline.events:
        if event.kind in SOUNDING and event.part in stops and event.key is not None:
            sounds.setdefault(event.part, []).append((event.start_tick, event.start_tick + event.length_ticks))
    for part, run in stops.items():
        spans = sorted(sounds.get(part, ()))
        walkers = sorted({p.name for stop in run for p in stop.places} & members)
        windows = _merged([(a, b) for m in walkers for leg in motion.legs(m)
                           if (a := round(leg.start * TICKS_PER_SECOND)) < (b := round(leg.end * TICKS_PER_SECOND))
                           and _plays(tuple(run), spans, m, a, b)])
        if not windows:
            continue
        kept = [s for s in run if not any(a - MOVE_LEAD_TICKS <= s.start_tick < b for a, b in windows)]
        for a, b in windows:
            end = stop_at(tuple(run), b)
            points = range(a, b, STEP_TICKS)
            kept += [Stop(t, _passed(end.places, motion, members, t), STEP_TICKS, True) for t in points]
            kept.append(Stop(b, end.places, b - points[-1]))
        stops[part] = sorted(kept, key=lambda s: s.start_tick)


def _plays(run: tuple[Stop, ...], spans: list[tuple[int, int]], member: str, a: int, b: int) -> bool:
    """Does *member* sound the part of *run* (its stops; *spans*, its sounds' ticks, sorted) between *a* and *b*?"""
    longest = max((end - start for start, end in spans), default=0)
    starts = [start for start, _ in spans]
    return any(end > a and member in {p.name for p in stop_at(run, start).places}
               for start, end in spans[bisect.bisect_left(starts, a - longest):bisect.bisect_left(starts, b)])


def _merged(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping spans of ticks as one."""
    out: list[tuple[int, int]] = []
    for a, b in sorted(windows):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _passed(places: tuple[Place, ...], motion: Motion, members: set[str], tick: int) -> tuple[Place, ...]:
    """*places*, each player's (a place named by his member id) where *motion* has him at *tick*."""
    out = []
    for p in places:
        at = motion.position(p.name, tick / TICKS_PER_SECOND) if p.name in members else None
        out.append(Place(at.point.x, at.point.y, p.name) if at is not None else p)
    return tuple(out)


class _Staged:
    """Where the parts sound from in a staged rite: a held instrument (``HELD``) and the voices where their players
    stand at the cue, each instrument played by its own members of the player's group (the 瑟 by the first two of
    the 工, the 歌 by the others); a fixed one (磬, 鼓, 鐘) at the hall's place of its position; a caller where he
    stands."""

    def __init__(self, timeline: Timeline, rite: StagedRite) -> None:
        self.timeline, self.rite = timeline, rite
        self.players: dict[str, list[str]] = {}  # instrument id → the member ids who play it
        taken: dict[str, int] = {}
        for member in timeline.instruments.values():
            if member.player and (performer := timeline.cast.get(member.player)) is not None:
                group = rite.members(member.player, performer.count)
                first = taken.get(member.player, 0)
                self.players[member.id] = group[first:first + member.count] or group[:member.count]
                taken[member.player] = first + member.count
        se = [m for m in timeline.instruments.values() if m.name == "瑟" and m.player]
        self.singers = [p for m in se for p in _rest_of(rite, timeline, m.player or "", self.players[m.id])]

    def places(self, event: Event, stands: Mapping[str, Stand], timings: Mapping[str, object]) -> tuple[Place, ...]:
        cue = getattr(timings.get(event.cue), "cue", None)
        if event.part in CALLERS:  # the performer of the caller's name (獲者), else the cue's
            cast = self.timeline.cast
            callers = [p for p, m in cast.items() if m.name == event.part]
            people = [m for p in (callers or (cue.who or cue.performers if cue is not None else ())) if p in cast
                      for m in self.rite.members(p, cast[p].count)]
            return self._at(people, stands)
        if event.part == SINGERS:
            return self._at(self.singers, stands)
        playing = [m for m in self.timeline.instruments.values()
                   if (p := part_for(m.name)) is not None and p.name == event.part]
        named = [m for m in playing if cue is not None and m.id in cue.instruments] or playing
        found: list[Place] = []
        for member in named:
            if member.name in HELD and member.id in self.players:
                found += self._at(self.players[member.id], stands)
            elif (place := self.rite.hall.places.get(member.position or "")) is not None:
                found.append(Place(place.point.x, place.point.y, place.id))
            elif (sheet_place := _placed(self.timeline, member.position or "")) is not None:
                found.append(sheet_place)
        return tuple(sorted(set(found), key=lambda p: p.name))

    @staticmethod
    def _at(members: list[str], stands: Mapping[str, Stand]) -> tuple[Place, ...]:
        return tuple(sorted({Place(s.point.x, s.point.y, who) for who in members if (s := stands.get(who))},
                            key=lambda p: p.name))


def _rest_of(rite: StagedRite, timeline: Timeline, player: str, playing: list[str]) -> list[str]:
    """The members of *player*'s group who play no instrument (the 工 who sing), or all of them if none is free."""
    group = rite.members(player, timeline.cast[player].count) if player in timeline.cast else []
    return [m for m in group if m not in playing] or group


def _places_of(timeline: Timeline, event: Event, people: Mapping[str, str],
               timings: Mapping[str, object]) -> tuple[Place, ...]:
    timing = timings.get(event.cue)
    cue = getattr(timing, "cue", None)
    if event.part in CALLERS:
        ids = [cue.where] if cue is not None and cue.where else \
            [people.get(p, "") for p in (cue.performers if cue is not None else ())]
    elif event.part == SINGERS:  # the 工 sing beside the 瑟 (工四人二瑟, 鄉射 5-15a)
        ids = _instrument_places(timeline, "瑟", (), people)
    else:
        ids = _instrument_places(timeline, event.part, cue.instruments if cue is not None else (), people)
    found = {p.name: p for i in ids if i and (p := _placed(timeline, i)) is not None}
    return tuple(found[name] for name in sorted(found))


def seats(timeline: Timeline, rite: StagedRite | None) -> dict[str, Seat]:
    """The seats of *timeline*'s plan: the known mats (賓席, 主人席, 公席) and the 庭, where the plan places them
    (the staged hall's places first)."""
    out = {}
    hall = rite.hall.places if rite is not None else {}
    row = rite_of(timeline.rite_id, timeline.rite)  # its lord's seat is his: 公席 (燕禮 7-4b, 大射 9-7a)
    for pid, (name, facing) in SEATS.items():
        name, at = (row.seat_name(pid, name), row.seat_place(pid, hall)) if row is not None else (name, pid)
        place = Place(hall[at].point.x, hall[at].point.y, pid) if at in hall else _placed(timeline, pid)
        if place is not None:
            out[pid] = Seat(pid, name, place.x, place.y, facing)
    return out


def stop_at(stops: tuple[Stop, ...], tick: int) -> Stop:
    """The stop in force at *tick* (the first one before any)."""
    found = stops[0]
    for stop in stops:
        if stop.start_tick > tick:
            break
        found = stop
    return found


# --- the listener --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Listener:
    """Where the listener sits (步) and the way he faces, as a unit vector (x east, y south)."""

    x: float
    y: float
    facing: tuple[float, float]
    name: str = ""
    path: tuple[Walked, ...] = ()  # a listener who follows a person: each walk he takes, and where it ends

    def describe(self) -> str:
        where = f"{self.name} " if self.name else ""
        follows = f", following him through {len(self.path)} walks" if self.path else ""
        return (f"{where}({self.x:g}, {self.y:g}) facing {FACING_NAMES.get(self.facing) or f'{self.degrees:g}°'}"
                + follows)

    def shifted(self, tick: int) -> Listener:
        """The same listener on a clock that begins at *tick* of the rite's (an excerpt's): where he is then, and
        the walks after it."""
        start = self.at(tick)
        walks = tuple(Walked(w.start_tick - tick, w.end_tick - tick, w.to,
                             tuple((t - tick, passed) for t, passed in w.between))
                      for w in self.path if w.start_tick > tick)
        return dataclasses.replace(start, path=walks)

    @property
    def still(self) -> Listener:
        """Where he is, without his walks."""
        return dataclasses.replace(self, path=())

    def at(self, tick: int) -> Listener:
        """Where he sits or stands at *tick*: the end of the last walk begun by then (still)."""
        found = self.still
        for walk in self.path:
            if walk.start_tick > tick:
                break
            found = walk.to
        return found

    def hearing(self, tick: int) -> Listener:
        """Where he is at *tick*, the points he passes on a walk included (``Walked.between``)."""
        for walk in reversed(self.path):
            if walk.start_tick <= tick:
                if walk.between and tick < walk.between[-1][0] + STEP_TICKS:
                    return [passed for t, passed in walk.between if t <= tick][-1]
                break
        return self.at(tick)

    @property
    def degrees(self) -> float:
        """The facing as compass degrees (0 north, 90 east)."""
        return round(math.degrees(math.atan2(self.facing[0], -self.facing[1])) % 360, 1)


@dataclass(frozen=True, slots=True)
class Walked:
    """A walk of a listener who follows a person: from *start_tick* to *end_tick* he goes to *to*, passing
    *between* (from *start_tick*, every ``STEP_TICKS``, through the turn to his stand's facing after he stops:
    where he is and the way he looks then)."""

    start_tick: int
    end_tick: int
    to: Listener
    between: tuple[tuple[int, Listener], ...] = ()


def following(label: str, member: str, motion: Motion) -> Listener:
    """A listener who is *member* (``staging.persons``' member id) through the rite: where *motion* has him at the
    start, and each of his walks, ending where he stands and facing as he then faces (``motion``)."""
    from yuesheng.staging.motion import TURN

    def seconds_ticks(t: float) -> int:
        return round(t * TICKS_PER_SECOND)

    first = motion.position(member, 0.0)
    legs = motion.legs(member)
    start = first.point if first is not None else (legs[0].route[0] if legs else None)
    if start is None:
        raise UsageError(f"--listener {label}: {member} never stands on the ground of this rite")
    facing = _vector(first.heading if first is not None else None, (0.0, -1.0))
    walks = []
    for n, leg in enumerate(legs):
        after = motion.position(member, leg.end + 1.5)  # turned to his stand's facing (motion.TURN is 1 s)
        facing = _vector(after.heading if after is not None else None, facing)
        end = leg.route[-1]
        start_tick, end_tick = seconds_ticks(leg.start), seconds_ticks(max(leg.end, leg.start + FADE_WALK_S))
        between = []
        turned = min(leg.end + TURN, legs[n + 1].start if n + 1 < len(legs) else math.inf)  # he turns as he stops
        for tick in range(start_tick, max(end_tick, seconds_ticks(turned)), STEP_TICKS):
            at = motion.position(member, tick / TICKS_PER_SECOND)
            if at is not None:
                between.append((tick, Listener(at.point.x, at.point.y, _vector(at.heading, facing), label)))
        walks.append(Walked(start_tick, end_tick, Listener(end.x, end.y, facing, label), tuple(between)))
    return Listener(start.x, start.y, _vector(first.heading if first is not None else None, (0.0, -1.0)), label,
                    tuple(walks))


def _vector(heading: tuple[float, float] | None, otherwise: tuple[float, float]) -> tuple[float, float]:
    if heading is None or not (heading[0] or heading[1]):
        return otherwise
    norm = math.hypot(*heading)
    return round(heading[0] / norm, 9) + 0.0, round(heading[1] / norm, 9) + 0.0


def _facing(text: str, what: str) -> tuple[float, float]:
    """A facing word (north … 西) or compass degrees (0 north, 90 east, 180 south, 270 west)."""
    key = normalize(text.strip()).lower()
    if key.endswith("°"):
        key = key[:-1]
    if _is_number(key):
        turn = math.radians(float(key) % 360)
        east, south = round(math.sin(turn), 12) + 0.0, round(-math.cos(turn), 12) + 0.0
        return east, south
    if key not in FACINGS:
        raise UsageError(f"--listener {what}: facing {text!r}: expected north, south, east, west, 北 南 東 西, "
                         "or compass degrees (0 north, 90 east)")
    return FACINGS[key]


def listener(text: str, timeline: Timeline, rite: StagedRite | None) -> Listener:
    """``default``, a seat (its id or name: bin-xi, 賓席, 公席, or any placed position), or ``x,y[,FACING]`` in 步."""
    spec = text.strip()
    if spec == "default":  # the rite's own (rites.json): the 賓 where he is the guest honoured, the lord's mat
        spec = row.listener if (row := rite_of(timeline.rite_id, timeline.rite)) is not None else ""
        if not spec:
            raise UsageError(f"--listener default: {timeline.rite} has no default seat; "
                             f"name one of: {' '.join(seats(timeline, rite)) or '(none placed)'}")
    if _is_number(spec.split(",")[0]):
        return _coordinates(spec)
    head, _, facing = spec.partition(",")
    found = _seat(head, timeline, rite)
    direction = _facing(facing, text) if facing else FACINGS[found.facing]
    return Listener(found.x, found.y, direction, found.name)


def _is_number(text: str) -> bool:
    """A finite decimal number written in ASCII (not full-width digits, ``nan`` or ``1e999``)."""
    return NUMBER.fullmatch(text.strip()) is not None and math.isfinite(float(text))


def _coordinates(spec: str) -> Listener:
    parts = [p.strip() for p in spec.split(",")]
    if len(parts) not in (2, 3) or not all(_is_number(p) for p in parts[:2]):
        raise UsageError(f"--listener {spec}: expected x,y or x,y,FACING (步 east and south of the 堂's edge)")
    x, y = float(parts[0]), float(parts[1])
    if max(abs(x), abs(y)) > MAX_BU:
        raise UsageError(f"--listener {spec}: expected x and y within {MAX_BU} 步 of the 堂's edge")
    facing = _facing(parts[2], spec) if len(parts) == 3 else FACINGS["north"]
    return Listener(x, y, facing)


def _seat(name: str, timeline: Timeline, rite: StagedRite | None) -> Seat:
    """A seat by id or name, or any placed position of the plan (facing north, toward the 堂, unless it is a seat)."""
    known = seats(timeline, rite)
    wanted = normalize(name)
    for seat in known.values():
        if wanted in (seat.id, normalize(seat.name)):
            return seat
    for pid, member in timeline.layout.items():
        if wanted in (pid, normalize(member.name)) and member.x is not None and member.y is not None:
            return Seat(pid, member.name, member.x, member.y, "north" if member.y >= 0 else "south")
    choices = sorted(set(known) | {s.name for s in known.values()})
    hint = did_you_mean(name, choices + [p for p, m in timeline.layout.items() if m.placed])
    raise UsageError(f"--listener {name}: no such seat or placed position in {timeline.rite}{hint}; "
                     f"seats: {' '.join(choices) or '(none)'}")


# --- the physics ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Physics:
    """Every assumed constant of the model (docs/seat.md says where each comes from)."""

    chi_m: float = 0.231  # one 尺 in metres (the Han 尺 of surviving rulers, about 23.1 cm)
    speed_m_s: float = 343.0  # the speed of sound in air at 20 °C
    temperature_c: float = 20.0
    humidity_pct: float = 50.0
    reference_m: float = 4.0  # at this distance a part sounds as loud as in the plain render
    nearest_m: float = 1.0  # nearer than this the level stops rising
    head_radius_m: float = 0.0875
    tang_height_m: float = 1.2  # the 堂's floor above the 庭
    ear_height_m: float = 0.8  # a seated listener's ears, and a seated player's instrument, above the floor
    standing_m: float = 1.5  # a standing source (in the 庭: callers, the 縣) above the ground
    # the 堂 between the 序 (步): its west and east walls' x and its depth; the cue sheets' estimate, or a staged
    # rite's hall (``with_hall``)
    hall_bu: tuple[float, float, float] = (-HALL_HALF_WIDTH_BU, HALL_HALF_WIDTH_BU, HALL_DEPTH_BU)

    @property
    def bu_m(self) -> float:
        return BU_CHI * self.chi_m


def sound_speed(celsius: float) -> float:
    """The speed of sound in air at *celsius* (m/s): 331.3 √(1 + T / 273.15)."""
    return 331.3 * math.sqrt(1 + celsius / 273.15)


def with_hall(physics: Physics, rite: StagedRite | None) -> Physics:
    """*physics* with the 堂 of the staged *rite*'s hall, whose places the blocking then gives: between its 序
    walls (the 堂's sides without them) and as deep as its 堂; unchanged for a rite placed by its cue sheet (None)."""
    if rite is None:
        return physics
    hall = rite.hall
    xs = [p.x for wall in hall.walls if wall.name in ("西序", "東序") for p in wall.points]
    west, east = (min(xs), max(xs)) if len(xs) > 1 else (hall.tang[0].x, hall.tang[1].x)
    return dataclasses.replace(physics, hall_bu=(west, east, -min(hall.tang[0].y, hall.tang[1].y)))


@dataclass(frozen=True, slots=True)
class Heard:
    """One place as one listener hears it."""

    distance_m: float
    delay_s: float
    gain: float  # amplitude, 1 at the reference distance
    azimuth: float  # radians from the facing, positive to the listener's right
    itd_s: float  # how much later the far ear hears it (Woodworth)
    cutoff_hz: float  # where air absorption over the path reaches 3 dB (ISO 9613-1)
    hall: bool  # source and listener both on the 堂: the hall's reflections apply


def height(y: float, physics: Physics, *, source: bool) -> float:
    """Metres above the 庭: on the 堂 (y < 0) seated on its floor; in the 庭 a source stands, a listener sits."""
    if y < 0:
        return physics.tang_height_m + physics.ear_height_m
    return physics.standing_m if source else physics.ear_height_m


def position_m(x: float, y: float, physics: Physics, *, source: bool) -> tuple[float, float, float]:
    return x * physics.bu_m, y * physics.bu_m, height(y, physics, source=source)


def bearing(place: Place, who: Listener, physics: Physics) -> tuple[float, float, float]:
    """Where *place* lies from *who*'s head: metres ahead, to his right, and up."""
    sx, sy, sz = position_m(place.x, place.y, physics, source=True)
    lx, ly, lz = position_m(who.x, who.y, physics, source=False)
    dx, dy = sx - lx, sy - ly
    fx, fy = who.facing
    return dx * fx + dy * fy, dx * -fy + dy * fx, sz - lz  # the right hand is (-fy, fx), x east and y south


def hear(place: Place, who: Listener, physics: Physics) -> Heard:
    """*place* heard from *who*: distance, delay, level, direction and air absorption."""
    ahead, right, up = bearing(place, who, physics)
    distance = max(1e-6, math.sqrt(ahead * ahead + right * right + up * up))
    azimuth = math.atan2(right, ahead) if ahead or right else 0.0
    lateral = math.asin(max(-1.0, min(1.0, math.sin(azimuth))))
    itd = physics.head_radius_m / physics.speed_m_s * (abs(lateral) + math.sin(abs(lateral)))
    gain = physics.reference_m / max(distance, physics.nearest_m)
    return Heard(distance, distance / physics.speed_m_s, gain, azimuth, itd,
                 air_cutoff(distance, physics), in_hall(place.x, place.y, physics) and in_hall(who.x, who.y, physics))


def in_hall(x: float, y: float, physics: Physics) -> bool:
    """Whether a point is inside the 堂 between the 序 (``Physics.hall_bu``)."""
    west, east, depth = physics.hall_bu
    return -depth <= y < 0 and west <= x <= east


def absorption_db_per_m(frequency: float, physics: Physics) -> float:
    """ISO 9613-1:1993 pure-tone attenuation by air, dB per metre, at the physics' temperature and humidity
    and standard pressure (equations 3 to 5 and B.1)."""
    t, t0, t01 = physics.temperature_c + 273.15, 293.15, 273.16
    csat = -6.8346 * (t01 / t) ** 1.261 + 4.6151
    h = physics.humidity_pct * 10 ** csat  # molar concentration of water vapour, %, at 1 atm
    fro = 24 + 4.04e4 * h * (0.02 + h) / (0.391 + h)
    frn = (t / t0) ** -0.5 * (9 + 280 * h * math.exp(-4.170 * ((t / t0) ** (-1 / 3) - 1)))
    f2 = frequency * frequency
    return float(8.686 * f2 * (1.84e-11 * (t / t0) ** 0.5 + (t / t0) ** -2.5 * (
        0.01275 * math.exp(-2239.1 / t) / (fro + f2 / fro) + 0.1068 * math.exp(-3352.0 / t) / (frn + f2 / frn))))


def air_cutoff(distance_m: float, physics: Physics, *, top: float = 22_000.0) -> float:
    """The frequency where air absorbs 3 dB over *distance_m* (*top* if it absorbs less below it)."""
    if absorption_db_per_m(top, physics) * distance_m < 3:
        return top
    low, high = 20.0, top
    for _ in range(40):
        mid = math.sqrt(low * high)
        low, high = (mid, high) if absorption_db_per_m(mid, physics) * distance_m < 3 else (low, mid)
    return low


# --- MIDI: the same picture, coarse --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Controls:
    """A channel's pan (CC10), volume (CC7) and reverb send (CC91) from *start_tick* on."""

    start_tick: int
    channel: int
    pan: int
    volume: int
    reverb: int


def _mix(places: tuple[Place, ...], who: Listener, physics: Physics) -> tuple[float, float, bool]:
    """Several places as one: (power-summed gain, power-weighted lateral position −1…1, all in the hall)."""
    heard = [hear(p, who, physics) for p in places]
    power = sum(h.gain ** 2 for h in heard) / len(heard)
    lateral = sum(h.gain ** 2 * math.sin(h.azimuth) for h in heard) / max(1e-12, sum(h.gain ** 2 for h in heard))
    return math.sqrt(power), lateral, all(h.hall for h in heard)


def controls(stops: Mapping[str, tuple[Stop, ...]], who: Listener, physics: Physics) -> list[Controls]:
    """The controllers of every channel at every stop, and at the end of each walk of a listener who follows a
    person: pan from the direction (right = 127), volume from the level (GM's 40·log10 curve:
    ``REFERENCE_VOLUME`` at the reference distance, up to 127 nearer), reverb send rising with distance.

    Drums share channel 10: its controllers follow the first drum part that moves or starts.
    """
    out: dict[tuple[int, int], Controls] = {}
    arrivals = [walk.end_tick for walk in who.path]
    for name, part_stops in stops.items():
        channel = PARTS[name].channel
        ticks = sorted({stop.start_tick for stop in part_stops} | {t for t in arrivals if t > part_stops[0].start_tick})
        for tick in ticks:
            stop = stop_at(part_stops, tick)
            gain, lateral, hall = _mix(stop.places, who.at(tick), physics)
            # GM: dB = 40·log10(CC7/127); at the reference distance CC7 is FluidSynth's (and GM's) default, so a
            # placed MIDI file there sounds as loud as an unplaced one; nearer, up to 127 (+4.2 dB)
            volume = max(1, min(127, round(REFERENCE_VOLUME * gain ** 0.5)))
            pan = max(0, min(127, round(64 + 63 * lateral)))
            distance = physics.reference_m / max(gain, 1e-6)
            reverb = max(0, min(127, round((60 if hall else 20) + 20 * math.log10(max(1.0, distance / 4)))))
            out.setdefault((tick, channel), Controls(tick, channel, pan, volume, reverb))
    return [out[k] for k in sorted(out)]


def midi_controllers(stops: Mapping[str, tuple[Stop, ...]], who: Listener,
                     physics: Physics) -> dict[int, list[tuple[int, int, int]]]:
    """``controls`` as the MIDI writer takes them: by channel, (tick, controller, value) for CC10, CC7 and CC91."""
    out: dict[int, list[tuple[int, int, int]]] = {}
    for c in controls(stops, who, physics):
        out.setdefault(c.channel, []).extend([(c.start_tick, 10, c.pan), (c.start_tick, 7, c.volume),
                                              (c.start_tick, 91, c.reverb)])
    return out
