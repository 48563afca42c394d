"""Labels on a plate that never overlap, placed without a browser: the rule of the director's page (``placeLabels``
in ``web/templates/sheet.js.j2``) for the SVG of ``yuesheng plan``.

Greedy, in a stable order (``Label.order``, then north to south, west to east, then the text): each label goes next
to its anchor where its box covers no label already placed and no obstacle (a person's dot, a mat, a wall); when
the near places are taken it goes farther out, on rings of growing radius about the anchor, with a leader line back
to it.
A label's size is measured from its characters at its font size (a CJK character one em wide, any other at most
``NARROW`` em; the line box Chromium gives Noto Sans CJK), with a margin of ``PAD``. All lengths are in 步.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from yuesheng.text import width

Box = tuple[float, float, float, float]  # x0, y0 (north-west) and x1, y1 (south-east), in 步

ASCENT, DESCENT = 1.16, 0.29  # em above and below the baseline: Noto Sans CJK's line box, as getBBox measures it
NARROW = 0.6  # em a narrow character takes at most in Noto Sans CJK (digits 0.555, lower case about 0.53)
PAD = 0.05  # 步 kept clear around a label (a 0.6-步 label, 0.97 步 high with it, fits a file 1 步 apart)
ANGLES = tuple(i * math.pi / 8 for i in range(16))  # east first, then turning south (y grows south)
RADII = (0.35, 0.9, 1.6, 2.5, 3.6, 5.0, 7.0, 9.5, 13.0, 17.0, 22.0, 28.0, 35.0)
CELL = 2.0  # 步: the side of the squares boxes are filed by (``_Grid``)
CROSSING = 2  # rings: how much farther out a label goes to spare one crossing of its leader line
LEADER_FROM = 0.5  # 步: a label set farther than this from its anchor gets a leader line


@dataclass(frozen=True, slots=True)
class Label:
    """A text to set near its anchor (x, y): *order* ranks it (people 0, walk times 1, mats 2, places 3)."""

    text: str
    x: float
    y: float
    size: float
    css: str
    order: int


@dataclass(frozen=True, slots=True)
class Placed:
    """A label set in its box, with the leader line from its anchor (x1, y1, x2, y2) if it was moved away."""

    label: Label
    box: Box
    leader: Box | None

    @property
    def baseline(self) -> tuple[float, float]:
        """Where the text's baseline starts (the SVG ``text`` element's x and y)."""
        return self.box[0] + PAD, self.box[1] + PAD + ASCENT * self.label.size


def text_em(text: str) -> float:
    """The width of *text* in em: a wide character (CJK, or East Asian ambiguous as the CJK font draws it) one em,
    any other at most ``NARROW``."""
    return sum(1.0 if width(c) == 2 or unicodedata.east_asian_width(c) == "A" else NARROW for c in text)


def text_size(text: str, size: float) -> tuple[float, float]:
    """The width and height of *text* set at font size *size*, margin not included."""
    return text_em(text) * size, (ASCENT + DESCENT) * size


def overlaps(a: Box, b: Box) -> bool:
    """Whether two boxes share any area (touching edges do not count)."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _candidates(label: Label) -> Iterator[tuple[int, Box]]:
    """Every box the label may take, margin included, with the index of its ring, nearest first: on each ring about
    the anchor (the box's edge ``RADII[ring]`` from it on the axes), each direction from east round."""
    w, h = text_size(label.text, label.size)
    w, h = w + 2 * PAD, h + 2 * PAD
    for ring, r in enumerate(RADII):
        for a in ANGLES:
            cx, cy = label.x + math.cos(a) * (r + w / 2), label.y + math.sin(a) * (r + h / 2)
            yield ring, (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def _leader(label: Label, box: Box) -> Box:
    """The line from the anchor to the nearest point of the label's box."""
    return (label.x, label.y, min(max(label.x, box[0]), box[2]), min(max(label.y, box[1]), box[3]))


def crosses(line: Box, box: Box) -> bool:
    """Whether the segment (x1, y1, x2, y2) passes through the inside of *box* (Liang–Barsky clipping)."""
    x1, y1, x2, y2 = line
    dx, dy = x2 - x1, y2 - y1
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, x1 - box[0]), (dx, box[2] - x1), (-dy, y1 - box[1]), (dy, box[3] - y1)):
        if p == 0:
            if q <= 0:
                return False
        elif p < 0:
            t0 = max(t0, q / p)
        else:
            t1 = min(t1, q / p)
    return t0 < t1


def _side(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> float:
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)


def meet(a: Box, b: Box) -> bool:
    """Whether two segments (x1, y1, x2, y2) cross each other (touching at an end does not count)."""
    d1, d2 = _side(*a[:2], *a[2:], *b[:2]), _side(*a[:2], *a[2:], *b[2:])
    d3, d4 = _side(*b[:2], *b[2:], *a[:2]), _side(*b[:2], *b[2:], *a[2:])
    return d1 * d2 < 0 and d3 * d4 < 0


class _Grid:
    """Boxes, or segments by their bounding box, filed by the ``CELL``-步 squares they touch: what lies near a box
    is found without looking at every box of the plate."""

    def __init__(self, items: Sequence[Box] = ()) -> None:
        self.cells: dict[tuple[int, int], list[Box]] = {}
        for item in items:
            self.add(item)

    @staticmethod
    def _keys(b: Box) -> Iterator[tuple[int, int]]:
        x0, x1 = sorted((b[0], b[2]))
        y0, y1 = sorted((b[1], b[3]))
        for i in range(math.floor(x0 / CELL), math.floor(x1 / CELL) + 1):
            for j in range(math.floor(y0 / CELL), math.floor(y1 / CELL) + 1):
                yield i, j

    def add(self, item: Box) -> None:
        for key in self._keys(item):
            self.cells.setdefault(key, []).append(item)

    def near(self, b: Box) -> list[Box]:
        """Each item filed in a square that *b* touches, once."""
        return list({id(item): item for key in self._keys(b) for item in self.cells.get(key, ())}.values())


def _crossings(here: Placed, taken: _Grid, leaders: _Grid) -> int:
    """How many leader lines already drawn cross the label's box, and how many leaders, labels and obstacles its own
    leader (if any) crosses, but for the obstacles that hold its anchor (a person's own dot)."""
    through = sum(crosses(line, here.box) for line in leaders.near(here.box))
    x, y, line = here.label.x, here.label.y, here.leader
    if line is None:
        return through
    clear_of = [t for t in taken.near(line) if not (t[0] <= x <= t[2] and t[1] <= y <= t[3])]
    return through + sum(crosses(line, t) for t in clear_of) + sum(meet(line, other) for other in leaders.near(line))


def _choose(label: Label, taken: _Grid, leaders: _Grid) -> Placed | None:
    """Of the free boxes (covering nothing *taken*), the one nearest its anchor and with the fewest crossings of
    leader lines: each crossing costs as much as ``CROSSING`` rings farther out."""
    best, cost = None, math.inf
    for ring, box in _candidates(label):
        if ring >= cost:
            break  # nothing farther out can cost less
        if any(overlaps(box, t) for t in taken.near(box)):
            continue
        here = Placed(label, box, _leader(label, box) if RADII[ring] > LEADER_FROM else None)
        n = ring + CROSSING * _crossings(here, taken, leaders)
        if n < cost:
            best, cost = here, n
    return best


def place_labels(labels: Sequence[Label], obstacles: Sequence[Box]) -> list[Placed]:
    """Each label in its box, none over another or over an obstacle, in the stable order: near its anchor, and with
    few leader lines crossing labels, obstacles or one another. A label with no free box within the largest ring is
    left out (its anchor's title still names it)."""
    taken, leaders = _Grid(obstacles), _Grid()
    placed = []
    for label in sorted(labels, key=lambda lb: (lb.order, lb.y, lb.x, lb.text)):
        here = _choose(label, taken, leaders)
        if here is not None:
            taken.add(here.box)
            if here.leader:
                leaders.add(here.leader)
            placed.append(here)
    return placed
