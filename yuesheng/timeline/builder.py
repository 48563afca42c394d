"""Building a Timeline: CueSheet + scores + options → every event of the rite in exact time; or, measuring, its size.

The steps, each in its module: the ``Setting`` of a build (``state``: active cues, readings, tempo, tuning);
the time of each cue (``schedule``), the music being played or counted as its length is needed (``music``, with
the rounds with music in ``shooting``); then the rounds that are actions (``shooting``), the 唱聲 calls
(``calls``) and the tallies. Times are ``Fraction`` seconds while scheduling and integer ticks in the Timeline
(``TICKS_PER_SECOND``; the MIDI file runs at 60 beats a minute, so a tick is a MIDI tick).

Tempo: ``defaults.syllable`` of the cue sheet (1.5 s when absent), a piece's own ``syllable``, or the
``syllable`` option. 1.5 s is a slow, even declamation, one syllable to a 瑟 stroke, as 一字一音 scores imply:
鹿鳴's 103 syllables take 2 min 35 s, and the five 終 of 騶虞 for one 耦 (130 syllables) 3 min 15 s.
Readings acted on while building: ``heyue``, ``xian``/``xuan`` (``music``), ``wusuanyue`` (``state``: the
無算樂 with the 無算爵, or after the clause before it), ``lishou-jie`` and ``shihuo`` (``state``, ``shooting``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from yuesheng import limits
from yuesheng.cuesheet import DEFAULT_SYLLABLE, Cue, CueSheet, MusicKind
from yuesheng.errors import LimitError
from yuesheng.music.instruments import PARTS, part_for
from yuesheng.music.lulu import Realization
from yuesheng.music.score import Piece
from yuesheng.process import collector_paused
from yuesheng.timeline.archery import Tally
from yuesheng.timeline.calls import calls, calls_end
from yuesheng.timeline.model import _SORT_KEY, CueTiming, Event, EventKind, Hold, Timeline, ticks
from yuesheng.timeline.music import announce, play
from yuesheng.timeline.schedule import MusicEnd, basis, duration, estimate, schedule
from yuesheng.timeline.shooting import TALLY_AFTER, shejie, silent_rounds, tallies
from yuesheng.timeline.state import BuildState, Options, Point, Setting

if TYPE_CHECKING:
    from yuesheng.staging.ground import Ground

__all__ = ["DEFAULT_SYLLABLE", "Options", "Size", "build_timeline", "measure", "piece_timeline"]

DEFAULT_REALIZATION = Realization()  # the default 黄鍾 and tuning: one frozen value, as the old default was

Played = list[tuple[Cue, Fraction, Fraction | None]]  # the music cues as scheduled: cue, start, stop (or None)


def _music_end(setting: Setting, state: BuildState, played: Played) -> MusicEnd:
    """The ``schedule`` callback that plays (or counts) a music cue and returns its end, noting it in *played*."""

    def music_end(cue: Cue, start: Fraction, stop: Fraction | None, times: Mapping[Point, Fraction]) -> Fraction:
        played.append((cue, start, stop))
        announce(state, cue, start, rite=setting.sheet.rite_id)
        if cue.music is MusicKind.CHANGSHENG:
            return calls_end(cue, start, stop, times)
        if cue.music is MusicKind.SHEJIE:
            return shejie(setting, state, cue, start)
        return play(setting, state, cue, start, stop)

    return music_end


def _rest(setting: Setting, state: BuildState, times: Mapping[Point, Fraction]) -> tuple[Tally, ...]:
    """After the schedule: the actions, the rounds that are actions, the calls; the tallies."""
    for cue in setting.cues:
        if not cue.is_music:
            state.add(EventKind.ACTION, times[(cue.id, "start")], duration(cue, setting), cue.id,
                      text=cue.action)
    silent_rounds(setting, state, times)
    calls(setting, state, times)
    return tallies(setting, state)


def _count(setting: Setting) -> tuple[Size, dict[Point, Fraction], Played]:
    """The counting pass: the Size of the build, the times of the cues, and the music cues in the order played."""
    state, played = BuildState(emit=False), Played()
    times = schedule(setting, _music_end(setting, state, played))
    _rest(setting, state, times)
    end_point = max(times, key=lambda point: times[point], default=("", "end"))
    end, last_cue = max([(times.get(end_point, Fraction(0)), end_point[0]), *_last_release(state)])
    busiest = max(state.counts, key=lambda cue: state.counts[cue], default="")
    size = Size(events=sum(state.counts.values()), end=end, last_cue=last_cue,
                busiest_cue=busiest, busiest_events=state.counts.get(busiest, 0), marks=state.marks)
    return size, times, played


def _last_release(state: BuildState) -> list[tuple[Fraction, str]]:
    """The time of the tally marker that may follow the last release, with the release's cue (an arrow's offset
    may carry it past every cue's end), if any arrow was loosed."""
    released = [r for rs in state.releases.values() for r in rs]
    if not released:
        return []
    last = max(released, key=lambda r: r.time)
    return [(last.time + TALLY_AFTER, state.cue_of_release[(last.round, last.pair)])]


def _emit(setting: Setting, times: Mapping[Point, Fraction], played: Played) -> Timeline:
    """The emitting pass over the counting pass's schedule: the music cues played again in the same order, from
    the same starts to the same stops (counting and emitting give every cue the same times: tests/test_timeline.py),
    then the rest."""
    state = BuildState()
    music_end = _music_end(setting, state, [])
    for cue, start, stop in played:
        music_end(cue, start, stop, times)
    return _timeline(setting, state, times, _rest(setting, state, times))


def _timeline(setting: Setting, state: BuildState, times: Mapping[Point, Fraction],
              tallied: tuple[Tally, ...]) -> Timeline:
    sheet, timing = setting.sheet, setting.options.timing
    cues = sorted((CueTiming(cue=c, start_tick=ticks(times[(c.id, "start")]), end_tick=ticks(times[(c.id, "end")]),
                             estimate_ticks=estimate(c, setting), basis=basis(c, setting),
                             measured=None if c.is_music else timing.get(c.id)) for c in setting.cues),
                  key=lambda t: (t.start_tick, t.cue.index))
    programs = {p.name: m.program for m in sheet.instruments.values()
                if m.program is not None and (p := part_for(m.name))}
    names = {m.id: m.name for table in (sheet.performers, sheet.positions) for m in table.values()}
    holds = {c: Hold(cue=c, until=setting.by_id[c].end_at, start_tick=ticks(times[(c, "start")]),
                     end_tick=ticks(times[(c, "end")]), phrase_ticks=tuple(ticks(t) for t in starts))
             for c, starts in state.phrases.items()}
    notices = (*state.notices, *filter(None, [setting.staging_notice]))
    return Timeline(rite=sheet.rite_name, rite_id=sheet.rite_id, events=tuple(sorted(state.events, key=_SORT_KEY)),
                    cues=tuple(cues), tallies=tallied, notices=notices, realization=setting.real,
                    variants=setting.variants, readings=setting.readings, programs=programs, names=names, holds=holds,
                    cast=sheet.performers, layout=sheet.positions, instruments=sheet.instruments)


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


def measure(sheet: CueSheet, options: Options = Options(), ground: Ground | None = None) -> Size:
    """The Size of the Timeline *sheet* with *options* on *ground* would give, found without making it (LimitError
    for 終, 節 or a syllable beyond their limits)."""
    return _count(Setting.of(sheet, options, ground))[0]


def build_timeline(sheet: CueSheet, options: Options = Options(), ground: Ground | None = None,
                   staging_notice: str = "") -> Timeline:
    """The Timeline of *sheet* with *options* (variants, readings, tempo, tuning, seed), its actions lasting what
    *ground* says they last on the ground (``staging.ground.ground_of``; ``yuesheng.build`` finds it), else what the
    sheet estimates (for *staging_notice*'s reason, a notice of the Timeline, if one is given). Pure: it reads no
    file.

    Measured first: a build that would break a limit (``yuesheng.limits``) raises LimitError before it starts.
    """
    setting = Setting.of(sheet, options, ground, staging_notice)
    size, times, played = _count(setting)
    if problems := size.problems():
        raise LimitError("; ".join(message for _, message in problems))
    with collector_paused():  # millions of new events, none of them in a cycle: the collector would rescan them
        return _emit(setting, times, played)


def piece_timeline(piece: Piece, *, realization: Realization = DEFAULT_REALIZATION,
                   syllable: Fraction = DEFAULT_SYLLABLE) -> Timeline:
    """A Timeline of one piece sung (or played) once, for exporting a score as MIDI."""
    part = PARTS["歌"] if any(n.lyric.strip() for n in piece.notes) else PARTS["笙"]
    events = []
    for n, note in enumerate(piece.notes):
        key, cents = realization.midi(note.pitch)
        events.append(Event(start_tick=ticks(n * syllable), length_ticks=ticks(syllable), kind=EventKind.NOTE,
                            cue=piece.id, part=part.name, key=key, cents=cents, velocity=part.velocity,
                            text=note.lyric.strip() if part.name == "歌" else "", piece=piece.id, zhong=1))
    notices = (f"{piece.title}: {piece.realization.label}: {piece.realization.rule}",) if piece.realization else ()
    return Timeline(rite=piece.title, rite_id=piece.id, events=tuple(events), notices=notices, realization=realization)
