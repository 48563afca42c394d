"""The values of the 儀禮圖: a hall with its places, walls and stairs; the blocking (who moves where at a cue);
where everyone stands at each cue; a walk's route and what an action's duration is made of.

Coordinates are in 步 (6 尺): x east, y south, from the middle of the 堂's south edge (the 堂廉), as the cue sheets'
positions already are. Every place says where it comes from: a page of the text (``cite``) or the project's
estimate and why (``estimate``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from types import MappingProxyType

CHI_PER_BU = 6  # 一步六尺 (the 弓 and 貍步 are 6 尺 too: 6-29b, 9-2b)


@dataclass(frozen=True, slots=True)
class Point:
    """A point on the ground plan, in 步."""

    x: float
    y: float

    def distance(self, other: Point) -> float:
        return math.hypot(self.x - other.x, self.y - other.y)

    def shifted(self, dx: float, dy: float) -> Point:
        return Point(round(self.x + dx, 4), round(self.y + dy, 4))


class Facing(Enum):
    """Which way a person faces (東面 faces east): the unit vector on the plan (x east, y south)."""

    DONG = ("東", 1.0, 0.0)
    XI = ("西", -1.0, 0.0)
    NAN = ("南", 0.0, 1.0)
    BEI = ("北", 0.0, -1.0)
    DONGBEI = ("東北", math.sqrt(0.5), -math.sqrt(0.5))
    XIBEI = ("西北", -math.sqrt(0.5), -math.sqrt(0.5))
    DONGNAN = ("東南", math.sqrt(0.5), math.sqrt(0.5))
    XINAN = ("西南", -math.sqrt(0.5), math.sqrt(0.5))

    @property
    def hanzi(self) -> str:
        return self.value[0]

    @property
    def vector(self) -> tuple[float, float]:
        return self.value[1], self.value[2]

    @classmethod
    def parse(cls, text: str) -> Facing | None:
        """'東面', '東' or 'dong' → DONG; None if it names no direction."""
        bare = text.removesuffix("面")
        for facing in cls:
            if bare in (facing.hanzi, facing.name.lower()):
                return facing
        return None


class FileHead(Enum):
    """Where a file (a row of people) has its head: 北上 — the first stands at the north, the rest to the south."""

    BEI = ("北上", 0.0, 1.0)
    NAN = ("南上", 0.0, -1.0)
    DONG = ("東上", -1.0, 0.0)
    XI = ("西上", 1.0, 0.0)

    @property
    def hanzi(self) -> str:
        return self.value[0]

    @property
    def step(self) -> tuple[float, float]:
        """The direction from one member of the file to the next."""
        return self.value[1], self.value[2]

    @classmethod
    def parse(cls, text: str) -> FileHead | None:
        for head in cls:
            if text in (head.hanzi, head.name.lower() + "-shang"):
                return head
        return None


@dataclass(frozen=True, slots=True)
class Source:
    """Where a value comes from: a page and its quote, or the project's estimate with its reason."""

    page: str = ""
    quote: str = ""
    estimate: str = ""  # why the value is estimated ("" when the text gives it)

    @property
    def layer(self) -> str:
        """The layer the quote is in, read from the page's parse (經, 記, 鄭注, 釋曰; '經+鄭注' where it runs over)."""
        from yuesheng import sources  # the texts, only when a layer is asked for

        return sources.layer(self.page, self.quote) if self.page else ""

    def __str__(self) -> str:
        if not self.page:
            return f"estimate: {self.estimate}"
        return f"儀禮集釋 {self.page} {self.layer} {self.quote}" if self.layer else f"儀禮集釋 {self.page} {self.quote}"


@dataclass(frozen=True, slots=True)
class Place:
    """A named place of the hall: its point, the hanzi name the text uses, a facing the text states there."""

    id: str
    name: str
    point: Point
    source: Source
    facing: Facing | None = None
    head: FileHead | None = None  # a file that stands here has its head so (衆賓 入門左東面北上)
    line: int | None = None  # where the place is defined in the hall file


@dataclass(frozen=True, slots=True)
class Wall:
    """A barrier no walk crosses: a wall, or an edge of the 堂 (crossed only at a stair)."""

    name: str
    points: tuple[Point, ...]
    source: Source

    def segments(self) -> list[tuple[Point, Point]]:
        return list(zip(self.points, self.points[1:], strict=False))


@dataclass(frozen=True, slots=True)
class Whose:
    """Whose stair it is, as the text sends people up it: the ranks it names (主人; 公), and whether it is also the
    stair of everyone no other stair names (the 西階 of the 賓 and the guests)."""

    of: tuple[str, ...]
    rest: bool
    source: Source


@dataclass(frozen=True, slots=True)
class Stair:
    """A stair: its top on the 堂廉 and its foot in the court. Climbing it costs a 升 or 降 gesture."""

    id: str
    name: str
    top: Point
    foot: Point
    source: Source
    whose: Whose | None = None  # whose stair it is, where the hall says (the 阼階 the 主人's, or the 公's)


@dataclass(frozen=True, slots=True)
class Thing:
    """A set piece no walk goes through (a 侯 with its 个, a 乏, an instrument of the 縣, the 次, the 楅, the 中): its
    footprint, *size* 步 east–west and north–south about the point of its place."""

    id: str
    name: str
    at: Point
    size: tuple[float, float]
    source: Source
    line: int | None = None
    open: bool = False  # one goes to it or into it (the 楅, the 中, the 次): a walk may end or turn at its place

    def box(self, margin: float = 0.0) -> tuple[float, float, float, float]:
        """Its footprint grown by *margin* 步 on every side: x0, y0, x1, y1."""
        w, d = self.size[0] / 2 + margin, self.size[1] / 2 + margin
        return self.at.x - w, self.at.y - d, self.at.x + w, self.at.y + d


@dataclass(frozen=True, slots=True)
class Assumption:
    """A named parameter of the hall that the texts do not give."""

    id: str
    value: float
    text: str


@dataclass(frozen=True, slots=True)
class Statement:
    """A spatial statement of the text, checked against the hall: a distance (其間容弓), a direction (于中西), an
    alignment (南當洗: the same y; 東西當東榮: the same x), a file's head (北上) or a facing (東面)."""

    kind: str  # distance | direction | align | file | facing
    a: str  # the place the statement is about
    b: str = ""  # the place it is measured from (distance, direction, align)
    value: str = ""  # the direction or facing (西, 東面), the file head (北上), the axis (x, y) of an alignment
    steps: float = 0.0  # a distance in 步
    axis: str = ""  # distance along x or y only ('' = straight)
    source: Source = field(default_factory=Source)
    line: int | None = None
    col: int | None = None


@dataclass(frozen=True, slots=True, eq=False)  # compared and hashed by identity: the route graph is kept per hall
class Hall:
    """A rite's hall and court: places, walls, stairs and the assumptions they rest on."""

    file: str
    id: str
    name: str
    has_shi: bool  # a 室 (and 房) behind the 堂: not in a 序 (鄭注 5-22b 序無室)
    tang: tuple[Point, Point]  # the 堂's north-west and south-east corners
    places: Mapping[str, Place]
    walls: tuple[Wall, ...]
    stairs: tuple[Stair, ...]
    assumptions: tuple[Assumption, ...]
    statements: tuple[Statement, ...] = ()
    things: Mapping[str, Thing] = field(default_factory=dict)  # set pieces routes keep clear of
    readings: Mapping[str, str] = field(default_factory=dict)  # the option it is drawn under, of each of its readings

    def __post_init__(self) -> None:
        object.__setattr__(self, "places", MappingProxyType(dict(self.places)))
        object.__setattr__(self, "things", MappingProxyType(dict(self.things)))
        object.__setattr__(self, "readings", MappingProxyType(dict(self.readings)))

    def on_tang(self, p: Point) -> bool:
        """Whether *p* is on the raised 堂 (its edge included)."""
        (x0, y0), (x1, y1) = (self.tang[0].x, self.tang[0].y), (self.tang[1].x, self.tang[1].y)
        return x0 <= p.x <= x1 and y0 <= p.y <= y1


@dataclass(frozen=True, slots=True)
class Move:
    """One move of a cue: who (one person, a group, or a file of several) goes to a place, facing which way."""

    who: tuple[str, ...]
    to: str
    facing: Facing | None
    source: Source
    via: tuple[str, ...] = ()  # places the route passes (由楹內, 由上射之後, 出于司馬之南), or a stair's id: its flight
    head: FileHead | None = None  # a file's head (北上); None: the place's, else the people stand as one
    spacing: float = 1.0  # 步 between the members of a file
    run: bool = False  # 趨, at a run
    offset: tuple[float, float] = (0.0, 0.0)  # 步 from the place (少進, 少退 and the like): stated in the source
    line: int | None = None
    col: int | None = None
    first: bool = False  # made before the cue's other moves begin (小臣師納諸公卿大夫: he fetches, they enter)


@dataclass(frozen=True, slots=True)
class Turns:
    """Formulas a group makes one member after another (序進: 序進盥洗角觶 9-16a), not all at once: each member
    makes them in turn, so they take as long as the members are many."""

    who: str  # a performer id with a count
    gestures: tuple[str, ...]
    source: Source


@dataclass(frozen=True, slots=True)
class CueBlocking:
    """What a cue does on the ground: its moves in order, and its formulas (拜, 揖…) for the duration."""

    cue: str
    moves: tuple[Move, ...]
    gestures: tuple[str, ...] = ()
    line: int | None = None
    keep: str = ""  # why the cue sheet's estimate is kept over the derived duration ('' = derived)
    sets: tuple[str, ...] = ()  # things set up at this cue (in the way from the next cue on)
    clears: tuple[str, ...] = ()  # things taken away at this cue (out of the way from the next cue on)
    turns: Turns | None = None  # formulas its group makes in turn (序進)


@dataclass(frozen=True, slots=True)
class Blocking:
    """A rite's blocking: where everyone stands before the first cue, and each cue's moves."""

    file: str
    rite: str
    hall: Hall
    start: tuple[Move, ...]
    cues: Mapping[str, CueBlocking]
    same: Mapping[str, str] = field(default_factory=dict)  # one person under several ids: 司馬 → the 相 (xiang)
    absent: frozenset[str] = frozenset()  # things of the hall not set up before the first cue
    plates: tuple[str, ...] = ()  # the cues whose moments the plates show: each stage's tableau (docs/staging.md)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cues", MappingProxyType(dict(self.cues)))
        object.__setattr__(self, "same", MappingProxyType(dict(self.same)))


@dataclass(frozen=True, slots=True)
class Stand:
    """Where one person (or one member of a group: ``who`` = 'zhongbin#3') stands, facing which way."""

    who: str
    place: str
    point: Point
    facing: Facing | None


@dataclass(frozen=True, slots=True)
class Walk:
    """A person's walk at a cue: the route's points, its length in 步 and its seconds at the pace."""

    who: str
    route: tuple[Point, ...]
    length: float
    stairs: int  # how many times the route climbs or descends a stair
    seconds: Fraction
    run: bool


@dataclass(frozen=True, slots=True)
class Break:
    """A walk against rank or its texts, at its move's line and column of the blocking (rule ``route``)."""

    line: int | None
    col: int | None
    message: str


@dataclass(frozen=True, slots=True)
class Derivation:
    """What an action's duration is made of: the longest walk and the formulas, each with its seconds."""

    cue: str
    parts: tuple[tuple[str, Fraction], ...]  # ("walk 主人 門外→門右 4.2 步 at 1.5 s/步", 6.3), ("再拜", 10)
    walks: tuple[Walk, ...] = field(default=())
    passes: tuple[str, ...] = ()  # each walk that passes within reach of someone standing, no other way being open
    breaks: tuple[Break, ...] = ()  # walks against rank, their texts' 升自/降自, or through a thing (rule route)

    @property
    def seconds(self) -> Fraction:
        return sum((s for _, s in self.parts), Fraction(0))
