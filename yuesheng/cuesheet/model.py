"""The cue-sheet model: frozen values for cues, cast, variants, readings and the archery.

A CueSheet is what ``reader.read_cuesheet`` builds from a YAML Document once its
schema and references check; nothing here reads files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from fractions import Fraction
from functools import lru_cache
from types import MappingProxyType

from yuesheng.checking import type_name
from yuesheng.errors import InvalidValueError, UnknownNameError
from yuesheng.music.lulu import Lu
from yuesheng.music.score import Piece
from yuesheng.text import suggest
from yuesheng.yamlload import Document, PathKey

JIE_READING = "lishou-jie"  # the reading whose options are numbers of 節 (大射's 貍首: 7, or 5)
DEFAULT_SYLLABLE = Fraction(3, 2)  # seconds a sung syllable lasts where the cue sheet does not say (docs/sequencer.md)
DEFAULT_OFFSET_SD = Fraction(3, 20)  # seconds: the spread of the shot model's releases around the 節
_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
_UNITS = ("h", "min", "s", "ms")
_DURATION_WHOLE = re.compile("".join(f"(?:({_NUMBER}){unit})?" for unit in _UNITS))  # each unit once, largest first
_DURATION = re.compile(rf"(?:{_NUMBER}(?:h|min|ms|s))+")  # any order: only to say why one is refused
DURATION_FORM = "number+unit parts (h, min, s, ms), e.g. 45s, 2min, 1min30s"
_UNIT_SECONDS = {"h": Fraction(3600), "min": Fraction(60), "s": Fraction(1), "ms": Fraction(1, 1000)}


class MusicKind(Enum):
    """The kinds of music event the texts name."""

    SHENGGE = "升歌"
    SHENG = "笙"
    JIANGE = "間歌"
    HEYUE = "合樂"
    JINZOU = "金奏"
    XIAGUAN = "下管"
    WU = "舞"
    SHEJIE = "射節"
    WUSUAN = "無算樂"
    FANGZHONG = "房中"
    CHANGSHENG = "唱聲"


class Count(Enum):
    """How a round of shooting counts its hits (記 6-31a)."""

    NONE = "none"  # 始射獲而未釋獲: hits are called, not counted
    PIERCE = "pierce"  # 復，釋獲; 不貫不釋 (5-33a)
    DRUM = "drum"  # 復，用樂行之; 不鼓不釋 (6-12b), and 釋獲如初 (6-13a): 不貫不釋 still holds


CALLS = ("宫", "商", "不絶")


def parse_duration(text: object) -> Fraction:
    """'1min30s' → 90 seconds. Raises InvalidValueError with the expected form."""
    if isinstance(text, bool) or isinstance(text, int | float):
        raise InvalidValueError("duration", text, DURATION_FORM,
                                message=f"bare number {text!r}: write it with a unit, e.g. {text}s or {text}min")
    if not isinstance(text, str):
        raise InvalidValueError("duration", text, DURATION_FORM,
                                message=f"expected a duration string such as 90s or 1min30s, got {type_name(text)}")
    return Fraction(_duration_of(text))  # a value of its own: no two cues share one (caches.digest sees sharing)


@lru_cache(maxsize=1024)
def _duration_of(text: str) -> Fraction:
    """``parse_duration`` of a string, kept: a rite writes a few dozen durations hundreds of times (1min, 1min30s),
    and exact seconds come from the decimal text slowly (``Fraction("1.5")`` parses it with a regular expression)."""
    compact = text.strip()
    if len(compact) > 40:
        raise InvalidValueError("duration", text, DURATION_FORM, message=f"duration {text[:20]!r}… is {len(text)} "
                                "characters long: expected e.g. 45s or 1min30s")
    if re.fullmatch(r"[0-9]+:[0-9]+(:[0-9]+)?", compact):
        raise InvalidValueError("duration", text, DURATION_FORM, message=f"{text!r} is ambiguous (YAML 1.1 reads 1:30 "
                                "as 90): write it with units, e.g. 1min30s")
    if (whole := _DURATION_WHOLE.fullmatch(compact)) is None or not any(whole.groups()):
        raise InvalidValueError("duration", text, DURATION_FORM, message=_duration_trouble(text, compact))
    return sum((Fraction(n) * _UNIT_SECONDS[u] for n, u in zip(whole.groups(), _UNITS, strict=True) if n),
               Fraction(0))  # bounds: yuesheng.limits


def _duration_trouble(text: str, compact: str) -> str:
    """Why *text* is not a duration: the reading strictness refuses (Unicode digits, spaces, units repeated or out
    of order, which a reader of the sheet could take otherwise), or just the form."""
    reason = ("ASCII digits 0-9 only" if any(c.isdigit() and not c.isascii() for c in compact) else
              "no spaces inside a duration" if any(c.isspace() for c in compact) else
              "each unit at most once, largest first (h, min, s, ms)" if _DURATION.fullmatch(compact) else "")
    return f"bad duration {text!r}: " + (f"{reason}, e.g. 1min30s" if reason else f"expected {DURATION_FORM}")


@dataclass(frozen=True, slots=True)
class Cite:
    """A passage: a 儀禮集釋 (or 周禮注疏) page id and a short quote."""

    page: str
    quote: str

    @property
    def where(self) -> str:
        """The page with its text: '儀禮集釋 5-4a', '周禮注疏 30-25a'."""
        return self.page if self.page.startswith("周禮") else f"儀禮集釋 {self.page}"

    @property
    def layer(self) -> str:
        """The layer the quote is in, read from the page's parse (經, 記, 鄭注, 釋曰; 注, 疏 of 周禮注疏), '' where the
        quote is not on its page."""
        from yuesheng import sources  # the texts, only when a layer is asked for

        return sources.layer(self.page, self.quote)

    def __str__(self) -> str:
        return f"{self.where} {self.layer} {self.quote}" if self.layer else f"{self.where} {self.quote}"


class Anchor(StrEnum):
    """How a cue's start hangs on another cue: with its start, or after its end."""

    WITH = "with"
    AFTER = "after"


class Shooter(StrEnum):
    """The two archers of a 耦."""

    UPPER = "upper"  # 上射
    LOWER = "lower"  # 下射


def parse_reading(text: str) -> tuple[str, str]:
    """'heyue=li-rugui' → ('heyue', 'li-rugui'): a reading's id and the option chosen. InvalidValueError without '='."""
    rid, sep, option = text.partition("=")
    if not sep:
        raise InvalidValueError("reading", text, "ID=OPTION, e.g. heyue=li-rugui")
    return rid, option


@dataclass(frozen=True, slots=True)
class Start:
    """When a cue starts: with or after another cue, plus a delay."""

    anchor: Anchor
    cue: str
    delay: Fraction = Fraction(0)


@dataclass(frozen=True, slots=True)
class PieceRef:
    """A piece played in a music cue: how many 終, by which part."""

    piece: Piece
    zhong: int = 1
    part: str = ""
    syllable: Fraction | None = None  # seconds per syllable for this piece, else the rite's


@dataclass(frozen=True, slots=True)
class Cue:
    """One line of the prompt book: an action or a music event."""

    id: str
    index: int
    section: str
    cite: Cite
    who: tuple[str, ...] = ()
    where: str = ""
    words: str = ""
    note: str = ""
    start: Start | None = None
    variant: str = ""
    unless: str = ""
    reading: str = ""  # 'ID=OPTION': in the programme only when that option of that reading is chosen
    action: str = ""
    duration: Fraction | None = None
    music: MusicKind | None = None
    pieces: tuple[PieceRef, ...] = ()
    performers: tuple[str, ...] = ()
    instruments: tuple[str, ...] = ()
    end_at: str = ""
    end_on_zhong: bool = False  # the sheet says explicitly: ends when its 終 are done
    calls: tuple[str, ...] = ()
    hold_until: str = ""  # 唱聲: the last call is held until this cue ends (聲止)
    hold: Fraction | None = None  # 唱聲: or held this long

    @property
    def is_music(self) -> bool:
        return self.music is not None

    def active(self, variants: frozenset[str]) -> bool:
        """Whether the cue is in the programme with *variants* switched on."""
        return (not self.variant or self.variant in variants) and not (self.unless and self.unless in variants)


@dataclass(frozen=True, slots=True)
class Member:
    """A performer, instrument or position of the cast and layout."""

    id: str
    name: str
    count: int = 1
    player: str = ""
    position: str = ""
    note: str = ""
    program: int | None = None  # instruments: a General MIDI program overriding the part's
    x: float | None = None  # positions: 步 east of the middle of the 堂's south edge (see docs/cuesheet.md)
    y: float | None = None  # positions: 步 south of it
    w: float | None = None  # positions with an extent (堂, 庭, 階, 侯…): east-west, in 步
    h: float | None = None  # and north-south
    estimate: bool = False  # the place is our estimate, not given by the text

    @property
    def placed(self) -> bool:
        """Whether the position has coordinates on the ground plan."""
        return self.x is not None and self.y is not None


@dataclass(frozen=True, slots=True)
class Variant:
    """A conditional programme of the text, switched on by name; it may need others on too."""

    id: str
    name: str
    cite: Cite | None
    requires: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class Reading:
    """Where commentators differ: the chosen option among named alternatives."""

    id: str
    name: str
    chosen: str
    options: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Pair:
    """A 耦: the 上射 and the 下射."""

    id: str
    name: str
    upper: str
    lower: str
    first: Shooter = Shooter.UPPER  # who looses first: the lower for the 公 (大射, 鄭注 10-9a)


@dataclass(frozen=True, slots=True)
class Round:
    """One round of shooting."""

    id: str
    cues: tuple[str, ...]  # the round's cue; alternatives by variant, the first active one counts
    pairs: tuple[str, ...]
    count: Count
    cite: Cite
    music: PieceRef | None = None
    exempt: tuple[str, ...] = ()  # need not be on the drum (大射: 公 不以樂志, 10-23a)
    any_hit: tuple[str, ...] = ()  # every hit counts, pierced or not (大射: 公則釋獲, 10-5a)
    pair_cues: tuple[tuple[str, str], ...] = ()  # (pair, action cue) where a pair shoots in its own action

    def cue_of_pair(self, pair: str) -> str:
        """The action a pair of a round without music shoots in: its own, if given, else ''."""
        return dict(self.pair_cues).get(pair, "")


@dataclass(frozen=True, slots=True)
class Arrow:
    """A scripted arrow: hit or miss, pierced or not, offset from its 節 in seconds."""

    hit: bool
    pierce: bool
    offset: Fraction = Fraction(0)


@dataclass(frozen=True, slots=True)
class Archery:
    """The shooting: 節 rule, pairs, rounds, and the shot script or random model."""

    jie_total: int
    jie_listen: int
    jie_cite: Cite
    tolerance: Fraction
    pairs: Mapping[str, Pair]
    rounds: tuple[Round, ...]
    seed: int = 0
    hit_rate: float = 0.5
    pierce_rate: float = 0.8
    offset_sd: Fraction = DEFAULT_OFFSET_SD
    change: Fraction = Fraction(0)  # between one 耦 and the next in a round with music
    script: Mapping[tuple[str, str], tuple[Arrow, ...]] = field(default_factory=dict)
    variant: str = ""  # the section applies only with this variant on (燕禮: 若射)

    def __post_init__(self) -> None:
        _freeze(self, "pairs", "script")

    def active(self, variants: frozenset[str]) -> bool:
        """Whether the shooting is in the programme with *variants* switched on."""
        return not self.variant or self.variant in variants

    def jie_with(self, readings: dict[str, str]) -> int:
        """The 節 of a round with music: the sheet's, or the number the reading ``JIE_READING`` chose."""
        option = readings.get(JIE_READING, "")
        return int(option) if option.isascii() and option.isdigit() else self.jie_total


@dataclass(frozen=True)
class CueSheet:
    """A validated cue sheet. ``doc`` keeps the places of values for later rule checks."""

    file: str
    rite_id: str
    rite_name: str
    rank: str
    source: str
    syllable: Fraction
    call_jun: Lu
    huangzhong: int
    estimates: str
    readings: Mapping[str, Reading]
    performers: Mapping[str, Member]
    instruments: Mapping[str, Member]
    positions: Mapping[str, Member]
    variants: Mapping[str, Variant]
    cues: tuple[Cue, ...]
    archery: Archery | None
    doc: Document = field(repr=False, compare=False)

    def __post_init__(self) -> None:
        _freeze(self, "readings", "performers", "instruments", "positions", "variants")

    def cue(self, cue_id: str) -> Cue:
        """The cue of *cue_id* (UnknownNameError with the nearest ids if there is none)."""
        found = next((c for c in self.cues if c.id == cue_id), None)
        if found is None:
            raise UnknownNameError("cue", cue_id, suggest(cue_id, [c.id for c in self.cues]))
        return found

    def with_requirements(self, variants: frozenset[str]) -> frozenset[str]:
        """*variants* plus every variant they require."""
        out = set(variants)
        while missing := {r for v in out if v in self.variants for r in self.variants[v].requires} - out:
            out |= missing
        return frozenset(out)

    def programme(self, variants: frozenset[str], readings: Mapping[str, str]) -> tuple[frozenset[str], dict[str, str]]:
        """*variants* with those they require, and every reading's option: *readings*' where given, else its default
        (UnknownNameError for a variant, reading or option the sheet does not have)."""
        for name in variants:
            if name not in self.variants:
                raise UnknownNameError("variant", name, suggest(name, list(self.variants)))
        chosen = {r.id: r.chosen for r in self.readings.values()}
        for rid, option in readings.items():
            if rid not in self.readings:
                raise UnknownNameError("reading", rid, suggest(rid, list(self.readings)))
            if option not in self.readings[rid].options:
                raise UnknownNameError(f"option of reading {rid}", option,
                                       suggest(option, list(self.readings[rid].options)))
            chosen[rid] = option
        return self.with_requirements(variants), chosen

    def active_cues(self, variants: frozenset[str] = frozenset(),
                    readings: dict[str, str] | None = None) -> tuple[Cue, ...]:
        """The programme with *variants* switched on and *readings* chosen (else each reading's default), in order."""
        chosen = {r.id: r.chosen for r in self.readings.values()} | (readings or {})
        return tuple(c for c in self.cues if c.active(variants) and _reads(c, chosen))

    def active_archery(self, variants: frozenset[str] = frozenset()) -> Archery | None:
        """The archery section if the shooting is in the programme with *variants* switched on."""
        return self.archery if self.archery is not None and self.archery.active(variants) else None


def _freeze(value: object, *names: str) -> None:
    """Make the mappings *names* of a frozen dataclass read-only views of copies (the reader builds them as dicts)."""
    for name in names:
        object.__setattr__(value, name, MappingProxyType(dict(getattr(value, name))))


def _reads(cue: Cue, chosen: dict[str, str]) -> bool:
    """Whether *cue* belongs to the chosen readings (a cue without ``reading`` always does)."""
    if not cue.reading:
        return True
    rid, option = parse_reading(cue.reading)
    return chosen.get(rid) == option


def variant_configurations(sheet: CueSheet) -> list[frozenset[str]]:
    """The programme as written, then each variant on (with what it requires)."""
    return [frozenset()] + [sheet.with_requirements(frozenset({v})) for v in sorted(sheet.variants)]


def rounds_called(call: Cue, cues: tuple[Cue, ...], rounds: tuple[Round, ...]) -> list[Round]:
    """The rounds whose hits a hit-call cue answers: those it starts with, or whose cue it runs over.

    A cue runs over the cues from its own place in the list to the action that ends it (樂闋).
    """
    place = {c.id: c.index for c in cues}
    until = place.get(call.end_at, call.index)
    def answers(cid: str) -> bool:
        return cid in place and ((call.start is not None and call.start.cue == cid)
                                 or call.index <= place[cid] <= until)

    return [r for r in rounds if any(answers(cid) for cid in r.cues)]


@dataclass(frozen=True, slots=True)
class Timed:
    """A value with a unit in a cue sheet: where it is written, whose it is ('cue ID', 'archery'), its key, and
    its size in seconds (an offset by its magnitude)."""

    path: PathKey
    owner: str
    key: str
    seconds: Fraction


def timed_values(sheet: CueSheet, cues: tuple[Cue, ...] | None = None) -> Iterator[Timed]:
    """Every value with a unit in *sheet* (of its *cues*, or of all): each reaches the timeline as a time, so each
    is measured against the limits (``yuesheng.limits``) in ``validate`` and in every build."""
    yield Timed(("defaults", "syllable"), "defaults", "syllable", sheet.syllable)
    for cue in sheet.cues if cues is None else cues:
        path, owner = ("cues", cue.index), f"cue {cue.id}"
        for n, ref in enumerate(cue.pieces):
            if ref.syllable is not None:
                yield Timed(path + ("pieces", n, "syllable"), owner, "syllable", ref.syllable)
        for key, value in (("duration", cue.duration), ("hold", cue.hold)):
            if value is not None:
                yield Timed(path + (key,), owner, key, value)
        if cue.start is not None:
            yield Timed(path + ("start", "delay"), owner, "delay", cue.start.delay)
    if (archery := sheet.archery) is not None:
        for key, value in (("tolerance", archery.tolerance), ("change", archery.change)):
            yield Timed(("archery", key), "archery", key, value)
        yield Timed(("archery", "shots", "offset_sd"), "archery", "offset_sd", archery.offset_sd)
        for (rid, pid), arrows in archery.script.items():
            for n, arrow in enumerate(arrows):
                yield Timed(("archery", "shots", "script", rid, pid, n), f"archery {rid} {pid} arrow {n + 1}",
                            "arrow offset", abs(arrow.offset))
