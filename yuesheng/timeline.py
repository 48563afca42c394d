"""CueSheet + scores + options → Timeline: every event of the rite in exact time.

Time is kept as ``Fraction`` seconds while scheduling and as integer ticks in the
Timeline (``TICKS_PER_SECOND``; the MIDI file runs at 60 beats a minute, so a
tick is a MIDI tick). The Timeline is the one hand-off to every renderer.

Scheduling (``cuesheet.anchors.dependencies``): a cue starts with or after its anchor, or
when the previous cue ends (when it starts, if that is music running until an
action). An action lasts its estimate. Music lasts its pieces × 終 × syllables
× seconds per syllable; music that runs until an action (樂闋) repeats its pieces
and stops at the end of the phrase (four notes) in progress when that action
starts. A 射節 runs per 耦 (see ``archery``) and the action it runs until waits
for it.

Tempo: ``defaults.syllable`` of the cue sheet (1.5 s when absent), a piece's own
``syllable``, or the ``syllable`` option. 1.5 s is a slow, even declamation,
one syllable to a 瑟 stroke, as 一字一音 scores imply: 鹿鳴's 103 syllables take
2 min 35 s, and the five 終 of 騶虞 for one 耦 (130 syllables) 3 min 15 s.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction

from yuesheng import limits
from yuesheng.archery import Release, Tally, shoot_with_music, shoot_without_music, tally
from yuesheng.cuesheet import (
    Count, Cue, CueSheet, MusicKind, PieceRef, Round, dependencies, evaluation_order, rounds_called,
)
from yuesheng.errors import UnknownNameError
from yuesheng.instruments import PARTS, Part, part_for
from yuesheng.lulu import Degree, Lu, Pitch, Realization, suggest
from yuesheng.score import Note, Piece

TICKS_PER_SECOND = 960
PHRASE = 4  # notes: the four-syllable line of the 詩
DEFAULT_SYLLABLE = Fraction(3, 2)
CALL_LENGTH = Fraction(4, 5)
DRUM_LENGTH = Fraction(1, 8)


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


@dataclass(frozen=True, slots=True)
class Event:
    """One timed event. Fields that do not apply to a kind keep their defaults."""

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
    counted: bool | None = None
    degree: str = ""

    @property
    def sort_key(self) -> tuple[int, int, str, int, str]:
        return (self.start_tick, _KIND_ORDER[self.kind], self.part, self.key or 0, self.cue)


_SORT_KEY = Event.sort_key.fget  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class CueTiming:
    """When a cue of the run sheet starts and ends."""

    cue: Cue
    start_tick: int
    end_tick: int


@dataclass(frozen=True, slots=True)
class Hold:
    """Music that runs until an action (樂闋): its span as estimated and where its phrases begin."""

    cue: str
    until: str  # the action that stops it
    start_tick: int
    end_tick: int
    phrase_ticks: tuple[int, ...]


@dataclass(frozen=True)
class Timeline:
    """The rite in time: sorted events, the run sheet's cue timings, tallies and notices."""

    rite: str
    rite_id: str
    events: tuple[Event, ...]
    cues: tuple[CueTiming, ...]
    tallies: tuple[Tally, ...]
    notices: tuple[str, ...]
    realization: Realization
    variants: frozenset[str] = frozenset()
    readings: dict[str, str] = field(default_factory=dict)
    programs: dict[str, int] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # performer and position ids → their names
    holds: dict[str, Hold] = field(default_factory=dict)

    @property
    def duration_ticks(self) -> int:
        ends = [e.start_tick + e.length_ticks for e in self.events] + [c.end_tick for c in self.cues]
        return max(ends, default=0)


def ticks(seconds: Fraction) -> int:
    """Seconds → ticks, rounding halves up."""
    return int(seconds * TICKS_PER_SECOND + Fraction(1, 2)) if seconds >= 0 else -ticks(-seconds)


def seconds(tick: int) -> float:
    return tick / TICKS_PER_SECOND


class _Grid:
    """The ticks of notes *step* seconds apart from *start* (≥ 0): ``ticks(start + n * step)`` in integers."""

    __slots__ = ("base", "step", "scale")

    def __init__(self, start: Fraction, step: Fraction) -> None:
        at, every = start * TICKS_PER_SECOND, step * TICKS_PER_SECOND
        common = math.lcm(at.denominator, every.denominator)
        # ticks(x) = floor(x·960 + 1/2) = (2·N + D) // (2·D) for x·960 = N/D
        self.base = 2 * at.numerator * (common // at.denominator) + common
        self.step = 2 * every.numerator * (common // every.denominator)
        self.scale = 2 * common

    def tick(self, n: int, *, half: bool = False) -> int:
        """The tick of note *n*, or of half a step after it."""
        return (self.base + n * self.step + (self.step // 2 if half else 0)) // self.scale


# --- options ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Options:
    """What a user may choose: variants, readings, tempo, tuning and 黄鍾, the seed of the shot model."""

    variants: frozenset[str] = frozenset()
    readings: dict[str, str] = field(default_factory=dict)
    syllable: Fraction | None = None
    realization: Realization | None = None
    seed: int | None = None
    call_jun: Lu | None = None  # the 均 of the 宫/商 calls, instead of the cue sheet's


def _check_options(sheet: CueSheet, options: Options) -> tuple[frozenset[str], dict[str, str]]:
    for name in options.variants:
        if name not in sheet.variants:
            raise UnknownNameError("variant", name, suggest(name, list(sheet.variants)))
    readings = {r.id: r.chosen for r in sheet.readings.values()}
    for rid, option in options.readings.items():
        if rid not in sheet.readings:
            raise UnknownNameError("reading", rid, suggest(rid, list(sheet.readings)))
        if option not in sheet.readings[rid].options:
            raise UnknownNameError(f"option of reading {rid}", option, suggest(option, list(sheet.readings[rid].options)))
        readings[rid] = option
    return sheet.with_requirements(options.variants), readings


# --- building --------------------------------------------------------------------------------------


class _Builder:
    """Schedules cues and realizes their music; one per build.

    With ``emit=False`` it only measures: it schedules every cue exactly as a build
    would, but counts the events instead of making them, and skips the repeats of
    music held until an action, so its cost does not grow with the music.
    """

    def __init__(self, sheet: CueSheet, options: Options, *, emit: bool = True) -> None:
        self.sheet, self.options, self.emit = sheet, options, emit
        self.counts: dict[str, int] = {}  # measuring: events by cue
        self.marks = 0  # measuring: phrase marks of music held until an action (Timeline.holds)
        self.sung: dict[str, int] = {}  # measuring: sung notes by piece id
        self.realized: dict[str, list[tuple[int, float]]] = {}  # by piece id: MIDI key and cents of each note
        self.drum_ticks = ticks(DRUM_LENGTH)
        self.tallies: tuple[Tally, ...] = ()
        self.variants, self.readings = _check_options(sheet, options)
        self.syllable = options.syllable or sheet.syllable or DEFAULT_SYLLABLE
        self.real = options.realization or Realization(sheet.huangzhong)
        self.seed = options.seed if options.seed is not None else (sheet.archery.seed if sheet.archery else 0)
        self.cues = sheet.active_cues(self.variants)
        self.by_id = {c.id: c for c in self.cues}
        self.deps = dependencies(self.cues)
        self.times: dict[tuple[str, str], Fraction] = {}
        self.events: list[Event] = []
        self.releases: dict[str, list[Release]] = {}  # by round
        self.cue_of_release: dict[str, str] = {}  # round → the cue its arrows were loosed in
        self.notices: dict[str, None] = {}
        self.phrases: dict[str, list[Fraction]] = {}
        archery = sheet.archery
        self.jie_total = archery.jie_total if archery else 0
        if "lishou-jie" in self.readings and self.readings["lishou-jie"].isdigit():
            self.jie_total = int(self.readings["lishou-jie"])
        self.check_limits()

    def check_limits(self) -> None:
        """The limits a build checks before scheduling: 終, 節 and the syllable (LimitError)."""
        source = "--syllable" if self.options.syllable else "defaults.syllable"
        found = [limits.JIE.check("節", self.jie_total), limits.SYLLABLE.check(source, self.syllable)]
        for cue in self.cues:
            for ref in cue.pieces:
                found.append(limits.ZHONG.check(f"cue {cue.id}: {ref.piece.title} zhong", ref.zhong))
                if ref.syllable is not None:
                    found.append(limits.SYLLABLE.check(f"cue {cue.id}: {ref.piece.title} syllable", ref.syllable))
        if problems := list(dict.fromkeys(m for m in found if m)):
            raise limits.LimitError("; ".join(problems))

    def run(self) -> None:
        """Schedule every cue and make (or count) its events."""
        order, cycle = evaluation_order(self.deps)
        if cycle:
            raise ValueError(f"anchors form a cycle: {' → '.join(cycle)}")
        for cue_id, point in order:
            cue = self.by_id[cue_id]
            self.times[(cue_id, point)] = self.start_of(cue) if point == "start" else self.end_of(cue)
        for cue in self.cues:
            if not cue.is_music:
                self.add(EventKind.ACTION, self.times[(cue.id, "start")], cue.duration or Fraction(0), cue.id,
                         text=cue.action)
        self.silent_rounds()
        self.calls()
        rounds = self.sheet.archery.rounds if self.sheet.archery else ()
        self.tallies = tuple(tally(r.id, self.releases[r.id]) for r in rounds
                             if r.id in self.releases and r.count is not Count.NONE)
        for t in self.tallies:
            last = max(self.releases[t.round], key=lambda r: r.time)
            self.add(EventKind.MARKER, last.time + 1, Fraction(0), self.cue_of_release[t.round],
                     text=f"釋獲 {t.round}: {t.announcement} (右 {t.right} 算, 左 {t.left} 算)")

    def build(self) -> Timeline:
        self.run()
        timings = tuple(sorted((CueTiming(c, ticks(self.times[(c.id, "start")]), ticks(self.times[(c.id, "end")]))
                                for c in self.cues), key=lambda t: (t.start_tick, t.cue.index)))
        programs = {p.name: m.program for m in self.sheet.instruments.values()
                    if m.program is not None and (p := part_for(m.name))}
        names = {m.id: m.name for table in (self.sheet.performers, self.sheet.positions) for m in table.values()}
        holds = {c: Hold(c, self.by_id[c].end_at, ticks(self.times[(c, "start")]), ticks(self.times[(c, "end")]),
                         tuple(ticks(t) for t in starts)) for c, starts in self.phrases.items()}
        return Timeline(self.sheet.rite_name, self.sheet.rite_id, tuple(sorted(self.events, key=_SORT_KEY)),
                        timings, self.tallies, tuple(self.notices), self.real, self.variants, self.readings, programs, names,
                        holds)

    # -- time of each cue -------------------------------------------------------------------------

    def start_of(self, cue: Cue) -> Fraction:
        deps = [self.times[d] for d in self.deps[(cue.id, "start")]]
        anchor = deps[0] if deps else Fraction(0)
        start = anchor + (cue.start.delay if cue.start else 0)
        return max([start] + deps[1:])  # an action a 射節 runs until waits for it

    def end_of(self, cue: Cue) -> Fraction:
        start = self.times[(cue.id, "start")]
        if not cue.is_music:
            return start + (cue.duration or 0)
        stop = self.times.get((cue.end_at, "start")) if cue.end_at and cue.music is not MusicKind.SHEJIE else None
        return self.music(cue, start, stop)

    # -- music --------------------------------------------------------------------------------------

    def music(self, cue: Cue, start: Fraction, stop: Fraction | None) -> Fraction:
        """Emit the music of *cue* from *start*; return when it ends."""
        title = " ".join(f"{p.piece.title}" + (f"×{p.zhong}" if p.zhong > 1 else "") for p in cue.pieces)
        self.add(EventKind.MARKER, start, Fraction(0), cue.id, text=f"{cue.music.value if cue.music else ''} {title}".strip())
        for ref in cue.pieces:
            if ref.piece.realization:
                self.notices[f"{ref.piece.title} ({ref.piece.id}) is lost ({ref.piece.lost.get('cite') if ref.piece.lost else ''}); "
                             f"what sounds is a {ref.piece.realization.label}: {ref.piece.realization.rule}"] = None
        if cue.music is MusicKind.CHANGSHENG:
            return stop if stop is not None else start + CALL_LENGTH * 2
        if cue.music is MusicKind.SHEJIE:
            return self.shejie(cue, start)
        segments = self.segments(cue)
        if cue.music is MusicKind.JINZOU:
            self.notices["金奏 pattern (a modern realization): the 鐘 strike every note of the piece, the 鑮 each "
                         "phrase, the drums answer each stroke half a syllable later, the 磬 close each phrase."] = None
        if not segments:
            return stop if stop is not None else start
        t = start
        while True:
            began, counted, marked = t, self.counts.get(cue.id, 0), self.marks
            for group in segments:
                t, stopped = self.play_group(cue, group, t, stop)
                if stopped:
                    return t
            if stop is None or t >= stop:
                return t
            if t == began:  # pieces without notes: silence until the action
                return stop
            if not self.emit:
                t = self.skip_repeats(cue.id, t, t - began, self.counts.get(cue.id, 0) - counted, self.marks - marked,
                                      stop)

    def skip_repeats(self, cue_id: str, t: Fraction, length: Fraction, events: int, marks: int,
                     stop: Fraction) -> Fraction:
        """Measuring: jump over the repeats of held music that end before *stop*; the time after them."""
        repeats = math.ceil((stop - t) / length) - 1
        self.count(cue_id, repeats * events)
        self.marks += repeats * marks
        return t + repeats * length

    def segments(self, cue: Cue) -> list[list[tuple[PieceRef, tuple[Part, ...]]]]:
        """The music as groups played one after another; the pieces of a group sound together."""
        parts = self.parts(cue)
        if cue.music is MusicKind.JIANGE:
            sung = tuple(p for p in parts if p.name in ("歌", "瑟")) or (PARTS["歌"], PARTS["瑟"])
            blown = tuple(p for p in parts if p.name in ("笙", "和", "管")) or (PARTS["笙"], PARTS["和"])
            return [[(ref, blown if ref.part == "笙" else sung)] for ref in cue.pieces]
        if cue.music is MusicKind.HEYUE and len(cue.pieces) == 6:
            reading = self.readings.get("heyue", "zheng")
            zhounan, shaonan = cue.pieces[:3], cue.pieces[3:]
            if reading == "li-rugui":  # each 召南 ode with its 周南 ode, together: one 終 per pair
                self.notices["合樂 after 李如圭 (4-26a): each 召南 ode sounds with its 周南 ode, 歌 and 瑟 on the "
                             "周南, 笙 and 磬 on the 召南; three 終."] = None
                sung = tuple(p for p in parts if p.name in ("歌", "瑟"))
                rest = tuple(p for p in parts if p.name not in ("歌", "瑟"))
                return [[(z, sung), (s, rest)] for z, s in zip(zhounan, shaonan)]
            if reading == "zhu-zaiyu":  # the pairs one after the other
                return [[(ref, parts)] for pair in zip(zhounan, shaonan) for ref in pair]
        return [[(ref, parts)] for ref in cue.pieces]

    def parts(self, cue: Cue) -> tuple[Part, ...]:
        found = [p for i in cue.instruments if (p := part_for(self.sheet.instruments[i].name))]
        sung = cue.music in (MusicKind.SHENGGE, MusicKind.JIANGE, MusicKind.HEYUE, MusicKind.SHEJIE, MusicKind.WUSUAN)
        defaults = {
            MusicKind.SHENGGE: ("歌", "瑟"), MusicKind.SHENG: ("笙", "和"), MusicKind.JIANGE: ("歌", "瑟", "笙", "和"),
            MusicKind.HEYUE: ("歌", "瑟", "笙", "和", "磬"), MusicKind.JINZOU: ("鐘", "鑮", "鼓", "磬"),
            MusicKind.XIAGUAN: ("管",), MusicKind.WUSUAN: ("歌", "瑟", "笙"), MusicKind.WU: ("管", "鼓"),
            MusicKind.SHEJIE: ("歌", "瑟"),
        }.get(cue.music, ()) if cue.music else ()
        names = list(dict.fromkeys((["歌"] if sung else []) + [p.name for p in found]))
        if not found:
            names = list(defaults)
        return tuple(PARTS[n] for n in names)

    def play_group(self, cue: Cue, group: list[tuple[PieceRef, tuple[Part, ...]]], start: Fraction,
                   stop: Fraction | None) -> tuple[Fraction, bool]:
        """Play the pieces of *group* together, each for its 終; stop at a phrase end after *stop*."""
        end = start
        for ref, parts in group:
            t = start
            for zhong in range(1, ref.zhong + 1):
                t, stopped = self.play_piece(cue, ref, parts, t, zhong, stop)
                if stopped:
                    return t, True
            end = max(end, t)
        return end, False

    def play_piece(self, cue: Cue, ref: PieceRef, parts: tuple[Part, ...], start: Fraction, zhong: int,
                   stop: Fraction | None) -> tuple[Fraction, bool]:
        """One 終 of a piece; returns its end and whether it was cut at a phrase end (樂闋)."""
        step = ref.syllable or self.syllable
        jinzou = cue.music is MusicKind.JINZOU
        notes = ref.piece.notes
        played = len(notes)
        if stop is not None:  # the first phrase that would begin at or after *stop* is not played
            played = min(played, -(-max(0, math.ceil((stop - start) / step)) // PHRASE) * PHRASE)
        end = start + played * step
        if not self.emit:
            self.count(cue.id, sum(self.sounded(ref.piece, part, played, jinzou) for part in parts))
            self.marks += -(-played // PHRASE) if stop is not None else 0
        else:
            if stop is not None:
                self.phrases.setdefault(cue.id, []).extend(start + n * step for n in range(0, played, PHRASE))
            grid, length, keys = _Grid(start, step), ticks(step), self.keys(ref.piece)
            parts = tuple(p for p in parts if self.sounded(ref.piece, p, len(notes), jinzou))  # none that stay silent
            for n in range(played):
                for part in parts:
                    self.sound(cue.id, ref.piece.id, notes[n], keys[n], part, grid, n, length, zhong, jinzou=jinzou,
                               last=n == len(notes) - 1)
        return end, stop is not None and (played < len(notes) or end >= stop)

    def keys(self, piece: Piece) -> list[tuple[int, float]]:
        """MIDI key and cents of each note of *piece*, realized once per build."""
        if piece.id not in self.realized:
            self.realized[piece.id] = [self.real.midi(note.pitch) for note in piece.notes]
        return self.realized[piece.id]

    def sound(self, cue_id: str, piece_id: str, note: Note, realized: tuple[int, float], part: Part, grid: _Grid,
              n: int, length: int, zhong: int, *, jinzou: bool, last: bool) -> None:
        """Note *n* of a piece on one part; drums, 鑮 and 磬 play their pattern rather than every note."""
        if part.name == "歌" and not note.lyric.strip():
            return  # a lost piece's realization has no words to sing: the instruments play it
        if part.is_drum:
            if jinzou or n % PHRASE == 0:  # 金奏: the drums answer each stroke half a syllable later
                self.events.append(Event(grid.tick(n, half=jinzou), self.drum_ticks, EventKind.DRUM, cue_id, part.name,
                                         part.drum_key, 0.0, part.velocity, "", piece_id, zhong))
            return
        if part.name == "鑮" and n % PHRASE:
            return
        if part.name == "磬" and not (n % PHRASE == PHRASE - 1 or last):
            return
        key, cents = realized
        self.events.append(Event(grid.tick(n, half=jinzou and part.name == "磬"), length, EventKind.NOTE, cue_id,
                                 part.name, key + 12 * part.octave, cents, part.velocity,
                                 note.lyric.strip() if part.name == "歌" else "", piece_id, zhong))

    def drum(self, cue_id: str, part: Part, t: Fraction, piece: str = "", zhong: int = 0, *, accent: bool = True,
             rnd: str = "", pair: str = "", jie: int = 0) -> None:
        self.add(EventKind.DRUM, t, DRUM_LENGTH, cue_id, part=part.name, key=part.drum_key,
                 velocity=part.velocity if accent else part.velocity * 2 // 3, piece=piece, zhong=zhong,
                 round=rnd, pair=pair, jie=jie)

    # -- the shooting ------------------------------------------------------------------------------

    def round_cue(self, rnd: Round) -> Cue | None:
        """The round's cue in this programme (the first of its alternatives that is active)."""
        return next((self.by_id[c] for c in rnd.cues if c in self.by_id), None)

    def rounds_of(self, cue: Cue) -> list[Round]:
        rounds = self.sheet.archery.rounds if self.sheet.archery else ()
        return [r for r in rounds if cue.id in r.cues]

    def shejie(self, cue: Cue, start: Fraction) -> Fraction:
        """A round with music: per 耦, the piece for each 節, the drum, and the releases."""
        rounds = self.rounds_of(cue)
        archery = self.sheet.archery
        if not rounds or archery is None or not cue.pieces:
            return start
        rnd, ref = rounds[0], cue.pieces[0]
        parts = tuple(p for p in self.parts(cue) if not p.is_drum)
        drum = next((p for p in self.parts(cue) if p.is_drum), PARTS["鼓"])
        length = len(ref.piece.notes) * (ref.syllable or self.syllable)
        t = start
        for n, pid in enumerate(rnd.pairs):
            if n:
                t += archery.change
            pair = archery.pairs[pid]
            for zhong in range(1, self.jie_total + 1):
                self.play_piece(cue, ref, parts, t + (zhong - 1) * length, zhong, None)
            strokes, releases = shoot_with_music(archery, rnd, pair, t, length, jie_total=self.jie_total, seed=self.seed)
            for jie, at, accent in strokes:
                self.drum(cue.id, drum, at, ref.piece.id, jie, accent=accent, rnd=rnd.id, pair=pid, jie=jie)
            self.shots(cue.id, rnd, releases)
            t += self.jie_total * length
        return t

    def shots(self, cue_id: str, rnd: Round, releases: list[Release]) -> None:
        """Record a pair's releases in its round and emit them."""
        self.releases.setdefault(rnd.id, []).extend(releases)
        self.cue_of_release[rnd.id] = cue_id
        for r in releases:
            self.add(EventKind.RELEASE, r.time, Fraction(0), cue_id, round=r.round, pair=r.pair, jie=r.jie,
                     archer=r.archer, arrow=r.arrow, hit=r.hit, counted=r.counted, text=r.performer)

    def silent_rounds(self) -> None:
        """Rounds that are actions: the pairs shoot one after another across the action."""
        archery = self.sheet.archery
        if archery is None:
            return
        for rnd in archery.rounds:
            cue = self.round_cue(rnd)
            if cue is None or cue.is_music or not rnd.pairs:
                continue
            start, end = self.times[(cue.id, "start")], self.times[(cue.id, "end")]
            share = (end - start) / len(rnd.pairs)
            for n, pid in enumerate(rnd.pairs):
                self.shots(cue.id, rnd, shoot_without_music(archery, rnd, archery.pairs[pid], start + n * share, share,
                                                            seed=self.seed))

    # -- calls ---------------------------------------------------------------------------------------

    def calls(self) -> None:
        """唱聲: hit calls on 宫 then 商 for every hit; 許諾 and 諾 where the cue sheet puts them."""
        gong = Pitch(self.options.call_jun or self.sheet.call_jun)
        degrees = {"宫": gong, "商": gong.up(Degree.SHANG.value), "不絶": gong.up(Degree.ZHI.value)}
        for cue in self.cues:
            if cue.music is not MusicKind.CHANGSHENG or not cue.calls:
                continue
            caller = "負侯者" if any("負侯" in self.sheet.performers[p].name for p in cue.performers) else "獲者"
            start, end = self.times[(cue.id, "start")], self.times[(cue.id, "end")]
            if "獲" in cue.words:
                for release in self.covered_hits(cue):
                    for n, degree in enumerate(cue.calls):
                        self.call(cue.id, caller, degrees[degree], degree, "獲", release.time + 1 + n, CALL_LENGTH,
                                  release)
            else:
                syllable = "諾" if "諾" in cue.words else cue.words[:1]
                for n, degree in enumerate(cue.calls):
                    length = max(end - start, CALL_LENGTH) if degree == "不絶" else CALL_LENGTH
                    self.call(cue.id, caller, degrees[degree], degree, syllable, start + n, length, None)
        if any(c.music is MusicKind.CHANGSHENG and "不絶" in c.calls for c in self.cues):
            self.notices["鄉射's 許諾 is one unbroken sound, not on 宫 or 商 (聲不絶, 5-25a): yuesheng holds it on "
                         "徵 of the calls' 均, a choice of its own."] = None

    def covered_hits(self, cue: Cue) -> list[Release]:
        """The hits of the rounds a hit-call cue answers."""
        rounds = self.sheet.archery.rounds if self.sheet.archery else ()
        return [r for rnd in rounds_called(cue, self.cues, rounds) for r in self.releases.get(rnd.id, []) if r.hit]

    def call(self, cue_id: str, caller: str, pitch: Pitch, degree: str, syllable: str, t: Fraction, length: Fraction,
             release: Release | None) -> None:
        key, cents = self.real.midi(pitch)
        self.add(EventKind.CALL, t, length, cue_id, part=caller, key=key, cents=cents, velocity=PARTS[caller].velocity,
                 text=syllable, degree=degree, round=release.round if release else "",
                 pair=release.pair if release else "", arrow=release.arrow if release else 0)

    def add(self, kind: EventKind, start: Fraction, length: Fraction, cue: str, **fields: object) -> None:
        if self.emit:
            self.events.append(Event(ticks(start), ticks(length), kind, cue, **fields))  # type: ignore[arg-type]
        else:
            self.count(cue, 1)

    def count(self, cue_id: str, events: int) -> None:
        self.counts[cue_id] = self.counts.get(cue_id, 0) + events

    def sounded(self, piece: Piece, part: Part, played: int, jinzou: bool) -> int:
        """How many events ``sound`` makes for *part* over the first *played* notes of *piece*."""
        if part.name != "歌":
            return _pattern_count(part, played, len(piece.notes), jinzou)
        if played < len(piece.notes):  # cut short: once per held cue
            return _sung(piece.notes[:played])
        if piece.id not in self.sung:
            self.sung[piece.id] = _sung(piece.notes)
        return self.sung[piece.id]


def _sung(notes: tuple[Note, ...]) -> int:
    """The notes with words to sing."""
    return sum(1 for note in notes if note.lyric.strip())


def _pattern_count(part: Part, played: int, length: int, jinzou: bool) -> int:
    """How many of the first *played* notes of a piece of *length* notes a part other than the 歌 sounds."""
    phrases = -(-played // PHRASE)
    if part.is_drum:
        return played if jinzou else phrases
    if part.name == "鑮":
        return phrases
    if part.name == "磬":
        return played // PHRASE + (played == length and played % PHRASE != 0)
    return played


@dataclass(frozen=True, slots=True)
class Size:
    """What a build would make: how many events, when it ends, and the cues that account for them."""

    events: int
    end: Fraction  # seconds
    last_cue: str  # the cue that ends last
    busiest_cue: str  # the cue with the most events
    busiest_events: int
    marks: int = 0  # phrase marks of music held until an action: entries of the timeline too

    def problems(self) -> list[tuple[str, str]]:
        """(cue id, message) for each limit a build of this size breaks."""
        marks = f", with {self.marks:,} phrase marks of held music" if self.marks else ""
        found = [(self.busiest_cue, limits.EVENTS.check(
                     "the timeline would hold", self.events + self.marks,
                     f" events ({self.busiest_events:,} in cue {self.busiest_cue}{marks})")),
                 (self.last_cue, limits.RITE_SECONDS.check("the rite would last", self.end,
                                                           f" (cue {self.last_cue} ends last)"))]
        return [(cue, message) for cue, message in found if message]


def measure(sheet: CueSheet, options: Options = Options()) -> Size:
    """The Size of the Timeline *sheet* with *options* would give, found without making it (LimitError for
    終, 節 or a syllable beyond their limits)."""
    builder = _Builder(sheet, options, emit=False)
    builder.run()
    end_point = max(builder.times, key=lambda point: builder.times[point], default=("", "end"))
    busiest = max(builder.counts, key=lambda cue: builder.counts[cue], default="")
    return Size(sum(builder.counts.values()), builder.times.get(end_point, Fraction(0)), end_point[0], busiest,
                builder.counts.get(busiest, 0), builder.marks)


def build_timeline(sheet: CueSheet, options: Options = Options()) -> Timeline:
    """The Timeline of *sheet* with *options* (variants, readings, tempo, tuning, seed).

    Measured first: a build that would break a limit (``yuesheng.limits``) raises LimitError before it starts.
    """
    if problems := measure(sheet, options).problems():
        raise limits.LimitError("; ".join(message for _, message in problems))
    with _collector_paused():  # millions of new events, none of them in a cycle: the collector would rescan them
        return _Builder(sheet, options).build()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (if it runs) for the duration."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def piece_timeline(piece: Piece, *, realization: Realization = Realization(), syllable: Fraction = DEFAULT_SYLLABLE) -> Timeline:
    """A Timeline of one piece sung (or played) once, for exporting a score as MIDI."""
    part = PARTS["歌"] if any(n.lyric.strip() for n in piece.notes) else PARTS["笙"]
    events = []
    for n, note in enumerate(piece.notes):
        key, cents = realization.midi(note.pitch)
        events.append(Event(ticks(n * syllable), ticks(syllable), EventKind.NOTE, piece.id, part=part.name, key=key,
                            cents=cents, velocity=part.velocity, text=note.lyric.strip() if part.name == "歌" else "",
                            piece=piece.id, zhong=1))
    notices = (f"{piece.title}: {piece.realization.label}: {piece.realization.rule}",) if piece.realization else ()
    return Timeline(piece.title, piece.id, tuple(events), (), (), notices, realization)
