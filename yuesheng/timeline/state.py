"""What a build works on: the user's ``Options``, the ``Setting`` drawn from them and the cue sheet (read only),
and the ``BuildState`` the music, shooting and calls write into (events or, when measuring, their counts).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from yuesheng import limits
from yuesheng.cuesheet.model import Anchor, Archery, Cue, CueSheet, MusicKind, timed_values
from yuesheng.errors import LimitError
from yuesheng.music.instruments import Part
from yuesheng.music.lulu import Lu, Realization
from yuesheng.timeline.archery import Release
from yuesheng.timeline.model import Event, EventKind, FrozenDict, Measurement, frozen, ticks

if TYPE_CHECKING:
    from yuesheng.staging.ground import Ground
    from yuesheng.staging.paces import Paces

DRUM_LENGTH = Fraction(1, 8)
FREE_MUSIC = (MusicKind.WUSUAN, MusicKind.FANGZHONG)  # the music of the 無算爵 (reading wusuanyue places it)
Point = tuple[str, str]  # (cue id, "start" or "end")


@dataclass(frozen=True)
class Options:
    """What a user may choose: variants, readings, tempo, tuning and 黄鍾, the seed of the shot model."""

    variants: frozenset[str] = frozenset()
    readings: Mapping[str, str] = field(default_factory=FrozenDict)
    syllable: Fraction | None = None
    realization: Realization | None = None
    seed: int | None = None
    call_jun: Lu | None = None  # the 均 of the 宫/商 calls, instead of the cue sheet's
    timing: Mapping[str, Measurement] = field(default_factory=FrozenDict)  # measured action durations (load_timing)
    paces: Paces | None = None  # the paces walks are timed at (staging.paces.load_paces); None: the shipped table's

    def __post_init__(self) -> None:
        object.__setattr__(self, "readings", frozen(self.readings))
        object.__setattr__(self, "timing", frozen(self.timing))


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting:
    """A build's fixed inputs: the sheet, the options, and what follows from them (active cues, tempo, tuning)."""

    sheet: CueSheet
    options: Options
    variants: frozenset[str]
    readings: Mapping[str, str]
    syllable: Fraction
    real: Realization
    cues: tuple[Cue, ...]
    by_id: Mapping[str, Cue]
    archery: Archery | None
    seed: int
    pierce: bool  # 釋獲如初 (6-13a, 10-23a): the round with music keeps 不貫不釋 unless the reading says drum only
    jie_total: int
    ground: Ground | None = None  # what each action lasts on the ground, where its blocking is complete
    staging_notice: str = ""  # why a blocking beside the sheet is not used

    @classmethod
    def of(cls, sheet: CueSheet, options: Options, ground: Ground | None = None, staging_notice: str = "") -> Setting:
        """The setting of *sheet* with *options* on *ground* (the durations its blocking gives under this programme,
        ``staging.ground.ground_of``; None: the cue sheet's estimates, for *staging_notice*'s reason if one is given);
        UnknownNameError for a variant or reading the sheet lacks, LimitError for 終, 節 or a syllable beyond their
        limits."""
        variants, readings = sheet.programme(options.variants, options.readings)
        cues = _placed(sheet.active_cues(variants, readings), readings)
        archery = sheet.active_archery(variants)
        setting = cls(
            sheet=sheet, options=options, variants=variants, readings=FrozenDict(readings),
            syllable=options.syllable if options.syllable is not None else sheet.syllable,  # 0 is a value: refused
            real=options.realization or Realization(sheet.huangzhong), cues=cues,
            by_id=FrozenDict({c.id: c for c in cues}), archery=archery,
            seed=options.seed if options.seed is not None else (archery.seed if archery else 0),
            pierce=readings.get("shihuo", "ru-chu") != "drum-only",
            jie_total=archery.jie_with(readings) if archery else 0, ground=ground, staging_notice=staging_notice)
        setting.check_limits()
        return setting

    def check_limits(self) -> None:
        """The limits a build checks before scheduling: 終, 節, the syllable and every value with a unit
        (LimitError)."""
        source = "--syllable" if self.options.syllable is not None else "defaults.syllable"
        found = [limits.JIE.check("節", self.jie_total), limits.SYLLABLE.check(source, self.syllable),
                 limits.RITE_SECONDS.check(source, self.syllable)]
        found += [limits.RITE_SECONDS.check(f"{t.owner} {t.key}", t.seconds)
                  for t in timed_values(self.sheet, self.cues) if t.owner != "defaults"]
        for cue in self.cues:
            for ref in cue.pieces:
                found.append(limits.ZHONG.check(f"cue {cue.id}: {ref.piece.title} zhong", ref.zhong))
                if ref.syllable is not None:
                    found.append(limits.SYLLABLE.check(f"cue {cue.id}: {ref.piece.title} syllable", ref.syllable))
        if problems := list(dict.fromkeys(m for m in found if m)):
            raise LimitError("; ".join(problems))


def _placed(cues: tuple[Cue, ...], readings: dict[str, str]) -> tuple[Cue, ...]:
    """*cues* with the music of the 無算爵 placed as reading wusuanyue says.

    ``yu-jue`` (as the sheets are written): it starts with the 無算爵 it accompanies. ``jing-ci``: it starts
    where the 經 writes it, after the clause before it — its ``with`` anchor is dropped.
    """
    if readings.get("wusuanyue") != "jing-ci":
        return cues
    return tuple(replace(c, start=None) if c.music in FREE_MUSIC and c.start and c.start.anchor is Anchor.WITH else c
                 for c in cues)


@dataclass(slots=True)
class BuildState:
    """What a build makes as it goes. With ``emit=False`` it only counts: events by cue and phrase marks."""

    emit: bool = True
    events: list[Event] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # measuring: events by cue
    marks: int = 0  # measuring: phrase marks of music held until an action (Timeline.holds)
    notices: dict[str, None] = field(default_factory=dict)  # in the order first given
    releases: dict[str, list[Release]] = field(default_factory=dict)  # by round
    cue_of_release: dict[tuple[str, str], str] = field(default_factory=dict)  # (round, pair) → cue of its arrows
    phrases: dict[str, list[Fraction]] = field(default_factory=dict)  # held music: where its phrases begin, by cue
    realized: dict[str, list[tuple[int, float]]] = field(default_factory=dict)  # by piece id: MIDI key, cents
    sung: dict[str, int] = field(default_factory=dict)  # measuring: sung notes by piece id

    def add(self, kind: EventKind, start: Fraction, length: Fraction, cue: str, **fields: Any) -> None:
        """An event at *start* seconds lasting *length* (or, measuring, one more for *cue*)."""
        if self.emit:
            self.events.append(Event(start_tick=ticks(start), length_ticks=ticks(length), kind=kind, cue=cue, **fields))
        else:
            self.count(cue, 1)

    def count(self, cue_id: str, events: int) -> None:
        self.counts[cue_id] = self.counts.get(cue_id, 0) + events

    def notice(self, text: str) -> None:
        self.notices[text] = None

    def drum(self, cue_id: str, part: Part, t: Fraction, *, piece: str = "", zhong: int = 0, accent: bool = True,
             rnd: str = "", pair: str = "", jie: int = 0) -> None:
        """A drum stroke of *part* at *t*; unaccented strokes at two thirds of its velocity."""
        self.add(EventKind.DRUM, t, DRUM_LENGTH, cue_id, part=part.name, key=part.drum_key,
                 velocity=part.velocity if accent else part.velocity * 2 // 3, piece=piece, zhong=zhong,
                 round=rnd, pair=pair, jie=jie)
