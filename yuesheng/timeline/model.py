"""The Timeline: every event of a rite in exact time, the one hand-off to every renderer.

Times are integer ticks (``TICKS_PER_SECOND``; the MIDI file runs at 60 beats a
minute, so a tick is a MIDI tick). ``builder`` makes a Timeline from a CueSheet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from typing import Any, NamedTuple, NoReturn, TypeVar

from yuesheng.cuesheet import Cue, Member
from yuesheng.music.lulu import Realization
from yuesheng.timeline.archery import Tally

TICKS_PER_SECOND = 960
K = TypeVar("K")
V = TypeVar("V")


class FrozenDict(dict[K, V]):
    """A dict that refuses changes: the read-only mappings of frozen value objects.

    A dict underneath, so it compares, iterates, pickles and serializes to JSON exactly as the dict it copies.
    """

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[type, tuple[dict[K, V]]]:
        return type(self), (dict(self),)


def frozen(mapping: Mapping[K, V]) -> FrozenDict[K, V]:
    """*mapping* as a FrozenDict (itself if it is one)."""
    return mapping if isinstance(mapping, FrozenDict) else FrozenDict(mapping)


class EventKind(Enum):
    """What an event is."""

    ACTION = "action"
    MARKER = "marker"
    NOTE = "note"
    DRUM = "drum"
    RELEASE = "release"
    CALL = "call"

    __hash__ = object.__hash__  # members are singletons: hash by identity, in C (Enum's hashes the name in Python)


_KIND_ORDER = {k: n for n, k in enumerate(EventKind)}


class Event(NamedTuple):
    """One timed event. Fields that do not apply to a kind keep their defaults.

    A NamedTuple, not a frozen dataclass: a rite makes thousands (6,810 for 大射儀) and a frozen dataclass sets each
    of the 20 fields through ``object.__setattr__``, about four times as slow to make. Build it by keyword.
    """

    start_tick: int
    length_ticks: int
    kind: EventKind
    cue: str
    part: str = ""
    key: int | None = None
    cents: float = 0.0
    velocity: int = 0
    text: str = ""
    piece: str = ""
    zhong: int = 0
    round: str = ""
    pair: str = ""
    jie: int = 0
    archer: str = ""
    arrow: int = 0
    hit: bool | None = None
    pierced: bool | None = None
    counted: bool | None = None
    degree: str = ""

    @property
    def sort_key(self) -> tuple[int, int, str, int, str]:
        return (self.start_tick, _KIND_ORDER[self.kind], self.part, self.key or 0, self.cue)


_SORT_KEY = Event.sort_key.fget  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True, kw_only=True)
class CueTiming:
    """When a cue of the run sheet starts and ends."""

    cue: Cue
    start_tick: int
    end_tick: int
    estimate_ticks: int | None = None  # an action's estimated duration, where a measured one (--timing) replaced it
    measured: Measurement | None = None  # the measurement that replaced it
    basis: str = ""  # in a staged rite, what an action's unmeasured duration is made of (walks, formulas) or why not


@dataclass(frozen=True, slots=True)
class Measurement:
    """An action's duration as rehearsal measured it (``retime``): the median of *takes* takes, and their *spread*
    (the longest less the shortest)."""

    duration: Fraction
    takes: int = 1
    spread: Fraction = Fraction(0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Hold:
    """Music that runs until an action (樂闋): its span as estimated and where its phrases begin."""

    cue: str
    until: str  # the action that stops it
    start_tick: int
    end_tick: int
    phrase_ticks: tuple[int, ...]


_MAPPINGS = ("readings", "programs", "names", "holds", "cast", "layout", "instruments")


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeline:
    """The rite in time: sorted events, the run sheet's cue timings, tallies and notices (mappings read-only). A
    value: no file, cache or YAML document behind it (``yuesheng.production`` gives the staging beside it)."""

    rite: str
    rite_id: str
    events: tuple[Event, ...]
    cues: tuple[CueTiming, ...] = ()
    tallies: tuple[Tally, ...] = ()
    notices: tuple[str, ...] = ()
    realization: Realization
    variants: frozenset[str] = frozenset()
    readings: Mapping[str, str] = field(default_factory=FrozenDict)
    programs: Mapping[str, int] = field(default_factory=FrozenDict)
    names: Mapping[str, str] = field(default_factory=FrozenDict)  # performer and position ids → their names
    holds: Mapping[str, Hold] = field(default_factory=FrozenDict)
    cast: Mapping[str, Member] = field(default_factory=FrozenDict)  # performers, for the ground plan
    layout: Mapping[str, Member] = field(default_factory=FrozenDict)  # positions with their places, for the plan
    instruments: Mapping[str, Member] = field(default_factory=FrozenDict)

    def __post_init__(self) -> None:
        for name in _MAPPINGS:
            object.__setattr__(self, name, frozen(getattr(self, name)))

    @property
    def duration_ticks(self) -> int:
        ends = [e.start_tick + e.length_ticks for e in self.events] + [c.end_tick for c in self.cues]
        return max(ends, default=0)


def ticks(seconds: Fraction) -> int:
    """Seconds → ticks, rounding halves away from zero (exact, in integers: for N/D seconds ≥ 0,
    floor(N·960/D + 1/2) = (1920·N + D) // 2D)."""
    n, d = seconds.as_integer_ratio()
    return (2 * TICKS_PER_SECOND * n + d) // (2 * d) if n >= 0 else -((-2 * TICKS_PER_SECOND * n + d) // (2 * d))


def seconds(tick: int) -> float:
    return tick / TICKS_PER_SECOND


def clock(tick: int) -> str:
    """Ticks → m:ss, or h:mm:ss past an hour."""
    total = round(seconds(tick))
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
