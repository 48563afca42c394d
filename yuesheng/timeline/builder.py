"""Building a Timeline: CueSheet + scores + options → every event of the rite in exact time.

Time is kept as ``Fraction`` seconds while scheduling and as integer ticks in the
Timeline (``TICKS_PER_SECOND``; the MIDI file runs at 60 beats a minute, so a
tick is a MIDI tick). The Timeline is the one hand-off to every renderer.

Scheduling (``cuesheet.anchors.dependencies``): a cue starts with or after its anchor, or
when the previous cue ends (when it starts, if that is music running until an
action). An action lasts its estimate. Music lasts its pieces × 終 × syllables
× seconds per syllable; music that runs until an action (樂闋) repeats its pieces
and stops at the end of the phrase (four notes) in progress when that action
starts. A 射節 runs per 耦 (see ``archery``) and the action it runs until waits
for it. A 唱聲 cue sounds its calls a second apart; with ``hold`` its last call
lasts until the named action ends (大射: 又諾以商至乏聲止) or for the given time.

終 (``zhong``): every note carries the 終 of its cue, counted as the texts count
them — an ode and its answering 笙 piece are one 終, a 周南 ode with its 召南 ode
one 終 — and counted on through repeats. Readings acted on here: ``heyue`` (the two
odes of a 合 in turn, or together), ``wusuanyue`` (the 無算樂 with the 無算爵, or
after the clause before it), ``xian``/``xuan`` (the 鍾 in 合樂), ``lishou-jie``.

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
from dataclasses import dataclass, field, replace
from fractions import Fraction

from yuesheng import limits
from yuesheng.timeline.archery import Release, Tally, tally
from yuesheng.cuesheet import (
    DEFAULT_SYLLABLE, Count, Cue, CueSheet, MusicKind, PieceRef, dependencies, evaluation_order,
)
from yuesheng.errors import ScheduleError, UnknownNameError
from yuesheng.music.instruments import PARTS, Part, part_for
from yuesheng.music.lulu import Lu, Realization
from yuesheng.text import suggest
from yuesheng.music.score import Note, Piece
from yuesheng.timeline.model import (
    _SORT_KEY, TICKS_PER_SECOND, CueTiming, Event, EventKind, Hold, Timeline, ticks,
)
from yuesheng.timeline.shooting import calls, calls_end, shejie, silent_rounds
from yuesheng.cuesheet.zhong import BLOWN, SUNG, programme, zhong_of

PHRASE = 4  # notes: the four-syllable line of the 詩
DRUM_LENGTH = Fraction(1, 8)
HEYUE_NOTICES = {
    "zheng": "合樂 (reading heyue=zheng): three 終 (鄭注 8-7a 合樂三終), each a 周南 ode with its 召南 ode "
             "(4-26a 每合爲一終), the two in turn, each sung with all the instruments (鄭注 4-24b 歌樂與衆聲俱作).",
    "li-rugui": "合樂 (reading heyue=li-rugui, 4-26a): three 終, each 召南 ode sounding together with its 周南 ode, "
                "歌 and 瑟 on the 周南 ode, the instruments below on the 召南 ode.",
}
ONSET = (("鼗", 3), ("朔鼙", 1), ("應鼙", 1))  # 9-5b 鼗…賓至摇之以奏樂; 9-4b 先擊朔鼙應鼙應之: (instrument, strokes)
FREE_MUSIC = (MusicKind.WUSUAN, MusicKind.FANGZHONG)  # the music of the 無算爵 (reading wusuanyue places it)


def _only(parts: tuple[Part, ...], names: tuple[str, ...]) -> tuple[Part, ...]:
    return tuple(p for p in parts if p.name in names)



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
    timing: dict[str, Fraction] = field(default_factory=dict)  # measured action durations (rehearsal.load_timing)


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


def _placed(cues: tuple[Cue, ...], readings: dict[str, str]) -> tuple[Cue, ...]:
    """*cues* with the music of the 無算爵 placed as reading wusuanyue says.

    ``yu-jue`` (as the sheets are written): it starts with the 無算爵 it accompanies. ``jing-ci``: it starts
    where the 經 writes it, after the clause before it — its ``with`` anchor is dropped.
    """
    if readings.get("wusuanyue") != "jing-ci":
        return cues
    return tuple(replace(c, start=None) if c.music in FREE_MUSIC and c.start and c.start.anchor == "with" else c
                 for c in cues)


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
        self.syllable = options.syllable if options.syllable is not None else sheet.syllable  # 0 is a value: refused
        self.real = options.realization or Realization(sheet.huangzhong)
        self.cues = _placed(sheet.active_cues(self.variants, self.readings), self.readings)
        self.archery = sheet.active_archery(self.variants)
        self.seed = options.seed if options.seed is not None else (self.archery.seed if self.archery else 0)
        # 釋獲如初 (6-13a, 10-23a): the round with music keeps 不貫不釋 unless the reading says drum only
        self.pierce = self.readings.get("shihuo", "ru-chu") != "drum-only"
        self.by_id = {c.id: c for c in self.cues}
        self.deps = dependencies(self.cues)
        self.times: dict[tuple[str, str], Fraction] = {}
        self.events: list[Event] = []
        self.releases: dict[str, list[Release]] = {}  # by round
        self.cue_of_release: dict[tuple[str, str], str] = {}  # (round, pair) → the cue its arrows were loosed in
        self.notices: dict[str, None] = {}
        self.phrases: dict[str, list[Fraction]] = {}
        self.jie_total = self.archery.jie_with(self.readings) if self.archery else 0
        self.check_limits()

    def check_limits(self) -> None:
        """The limits a build checks before scheduling: 終, 節 and the syllable (LimitError)."""
        source = "--syllable" if self.options.syllable is not None else "defaults.syllable"
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
            raise ScheduleError(f"{self.sheet.file}: anchors form a cycle: {' → '.join(cycle)}")
        for cue_id, point in order:
            cue = self.by_id[cue_id]
            self.times[(cue_id, point)] = self.start_of(cue) if point == "start" else self.end_of(cue)
        for cue in self.cues:
            if not cue.is_music:
                self.add(EventKind.ACTION, self.times[(cue.id, "start")], self.duration(cue), cue.id,
                         text=cue.action)
        silent_rounds(self)
        calls(self)
        rounds = self.archery.rounds if self.archery else ()
        self.tallies = tuple(tally(r.id, self.releases[r.id]) for r in rounds
                             if r.id in self.releases and r.count is not Count.NONE)
        for t in self.tallies:
            last = max(self.releases[t.round], key=lambda r: r.time)
            self.add(EventKind.MARKER, last.time + 1, Fraction(0), self.cue_of_release[(t.round, last.pair)],
                     text=f"釋獲 {t.round}: {t.announcement} (右 {t.right} 算, 左 {t.left} 算)")

    def build(self) -> Timeline:
        self.run()
        timings = tuple(sorted((CueTiming(c, ticks(self.times[(c.id, "start")]), ticks(self.times[(c.id, "end")]),
                                          self.estimate(c)) for c in self.cues), key=lambda t: (t.start_tick, t.cue.index)))
        programs = {p.name: m.program for m in self.sheet.instruments.values()
                    if m.program is not None and (p := part_for(m.name))}
        names = {m.id: m.name for table in (self.sheet.performers, self.sheet.positions) for m in table.values()}
        holds = {c: Hold(c, self.by_id[c].end_at, ticks(self.times[(c, "start")]), ticks(self.times[(c, "end")]),
                         tuple(ticks(t) for t in starts)) for c, starts in self.phrases.items()}
        return Timeline(self.sheet.rite_name, self.sheet.rite_id, tuple(sorted(self.events, key=_SORT_KEY)),
                        timings, self.tallies, tuple(self.notices), self.real, self.variants, self.readings, programs, names,
                        holds, self.sheet.performers, self.sheet.positions, self.sheet.instruments)

    # -- time of each cue -------------------------------------------------------------------------

    def start_of(self, cue: Cue) -> Fraction:
        deps = [self.times[d] for d in self.deps[(cue.id, "start")]]
        anchor = deps[0] if deps else Fraction(0)
        start = anchor + (cue.start.delay if cue.start else 0)
        return max([start] + deps[1:])  # an action a 射節 runs until waits for it

    def duration(self, cue: Cue) -> Fraction:
        """An action's duration: measured in rehearsal (``Options.timing``) if it was, else the estimate."""
        measured = self.options.timing.get(cue.id)
        return measured if measured is not None else cue.duration or Fraction(0)

    def estimate(self, cue: Cue) -> int | None:
        """The estimate in ticks, where a measured duration replaced it."""
        return ticks(cue.duration or Fraction(0)) if cue.id in self.options.timing and not cue.is_music else None

    def end_of(self, cue: Cue) -> Fraction:
        start = self.times[(cue.id, "start")]
        if not cue.is_music:
            return start + self.duration(cue)
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
        if cue.music in FREE_MUSIC and cue.pieces:
            until = f", begun again until {cue.end_at}" if cue.end_at else ""
            self.notices[f"{cue.music.value} ({cue.id}, {cue.cite.page}): the text sets no programme (which pieces, "
                         f"in what order); what sounds is the cue sheet's choice{until}: {programme(cue)} "
                         "(see the cue's note)"] = None
        if cue.music is MusicKind.CHANGSHENG:
            return calls_end(self, cue, start, stop)
        if cue.music is MusicKind.SHEJIE:
            return shejie(self, cue, start)
        segments = self.segments(cue)
        if cue.music is MusicKind.JINZOU:
            self.notices["金奏 pattern (a modern realization): the 鐘 strike every note of the piece, the 鑮 each "
                         "phrase, the drums answer each stroke half a syllable later, the 磬 close each phrase (鄭注 "
                         "9-4a 奏樂以鼓鑮為節 has the drums and 鑮 keep the beat: here the bells lead). Where the cue "
                         "has them, the 鼗 is shaken, the 朔鼙 struck and the 應鼙 answers, a second each, before the "
                         "bells (9-5b 鼗…賓至摇之以奏樂也; 9-4b 先擊朔鼙應鼙應之)."] = None
            start = self.onset(cue, start)
        if not segments:
            return stop if stop is not None else start
        t, passed = start, 0
        while True:
            began, counted, marked = t, self.counts.get(cue.id, 0), self.marks
            for zhong, group in segments:
                t, stopped = self.play_group(cue, group, t, passed + zhong, stop)
                if stopped:
                    return t
            passed += segments[-1][0]
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

    def onset(self, cue: Cue, start: Fraction) -> Fraction:
        """The 金奏's onset drums the cue has (鼗 shaken, 朔鼙, then 應鼙), a second each; when the bells begin."""
        names = [self.sheet.instruments[i].name for i in cue.instruments]
        t = start
        for name, strokes in ONSET:
            part = part_for(name)
            if part is None or not any(name in n for n in names):
                continue
            for k in range(strokes):
                self.drum(cue.id, part, t + Fraction(k, strokes), accent=k == 0)
            t += 1
        return t

    def segments(self, cue: Cue) -> list[tuple[int, list[tuple[PieceRef, tuple[Part, ...]]]]]:
        """The music once through, as groups played one after another, each with the 終 (1-based) it belongs
        to; the pieces of a group sound together. A 終 of two pieces (間; a 周南 ode with its 召南 ode) is
        two groups in turn, or one group when reading heyue sounds the 合 pair together (李如圭)."""
        parts = self.parts(cue)
        together = self.readings.get("heyue") == "li-rugui"
        zhongs = zhong_of(cue)
        out: list[tuple[int, list[tuple[PieceRef, tuple[Part, ...]]]]] = []
        for n, zhong in enumerate(zhongs, 1):
            if zhong.he and together:
                sung = _only(parts, ("歌", "瑟"))
                out.append((n, [(zhong.pieces[0], sung), (zhong.pieces[1], tuple(p for p in parts if p not in sung))]))
            else:
                out += [(n, [(ref, self.role_parts(ref, parts))]) for ref in zhong.pieces]
        if any(z.he for z in zhongs):
            self.notices[HEYUE_NOTICES["li-rugui" if together else "zheng"]] = None
        return out

    @staticmethod
    def role_parts(ref: PieceRef, parts: tuple[Part, ...]) -> tuple[Part, ...]:
        """The parts that sound *ref*: an ode sung (歌: voices and 瑟), a 笙 piece (笙, 和, pipes), or all."""
        if ref.part == SUNG:
            return _only(parts, ("歌", "瑟")) or (PARTS["歌"], PARTS["瑟"])
        if ref.part == BLOWN:
            return _only(parts, ("笙", "和", "管")) or (PARTS["笙"], PARTS["和"])
        return parts

    def parts(self, cue: Cue) -> tuple[Part, ...]:
        found = [p for i in cue.instruments if (p := part_for(self.sheet.instruments[i].name))]
        sung = cue.music in (MusicKind.SHENGGE, MusicKind.JIANGE, MusicKind.HEYUE, MusicKind.SHEJIE, MusicKind.WUSUAN,
                             MusicKind.FANGZHONG)
        defaults = {
            MusicKind.SHENGGE: ("歌", "瑟"), MusicKind.SHENG: ("笙", "和"), MusicKind.JIANGE: ("歌", "瑟", "笙", "和"),
            MusicKind.HEYUE: ("歌", "瑟", "笙", "和", "磬"), MusicKind.JINZOU: ("鐘", "鑮", "鼓", "磬"),
            MusicKind.XIAGUAN: ("管",), MusicKind.WUSUAN: ("歌", "瑟", "笙"), MusicKind.WU: ("管", "鼓"),
            MusicKind.SHEJIE: ("歌", "瑟"), MusicKind.FANGZHONG: ("歌", "瑟"),
        }.get(cue.music, ()) if cue.music else ()
        names = list(dict.fromkeys((["歌"] if sung else []) + [p.name for p in found]))
        if not found:
            names = list(defaults)
        if cue.music is MusicKind.HEYUE and "zhong-qing" in (self.readings.get("xian"), self.readings.get("xuan")):
            names.insert(names.index("磬") if "磬" in names else len(names), "鐘")  # 堂下鍾磬合奏 (4-25b; 5-16a)
        return tuple(PARTS[n] for n in dict.fromkeys(names))

    def play_group(self, cue: Cue, group: list[tuple[PieceRef, tuple[Part, ...]]], start: Fraction, zhong: int,
                   stop: Fraction | None) -> tuple[Fraction, bool]:
        """Play the pieces of *group* together, once each, as 終 *zhong*; stop at a phrase end after *stop*."""
        end = start
        for ref, parts in group:
            t, stopped = self.play_piece(cue, ref, parts, start, zhong, stop)
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
