"""The ink boxes of what LilyPond's SVG backend draws, for tests that assert nothing on a page touches.

LilyPond writes each grob as ``<g transform="translate(x, y)">`` holding a ``<text>`` (one run of characters in
the CJK font named in ``\\paper``), a ``<rect>`` (bar lines, stems), a ``<line>`` (staff lines), a ``<circle>``
(簡譜 octave dots) or a ``<path>`` (the music font's glyphs, with its own ``scale``). A text's box is the union of
its glyphs' outlines, measured in the font file that fontconfig names for the family (fontTools), so two rows of
characters a line apart are not taken to touch because their em boxes do.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SVG = "{http://www.w3.org/2000/svg}"
_NUMBER = r"-?\d+(?:\.\d+)?"


@dataclass(frozen=True, slots=True)
class Box:
    """One drawn thing: what it is (text, rect, line, circle, path), its text, its font size, its ink box, and
    for a text the baseline it stands on."""

    kind: str
    text: str
    size: float
    x0: float
    y0: float
    x1: float
    y1: float
    base: float = 0.0

    def gap(self, other: Box) -> float:
        """The distance between the two boxes (negative: they overlap by that much in the lesser direction)."""
        dx = max(other.x0 - self.x1, self.x0 - other.x1)
        dy = max(other.y0 - self.y1, self.y0 - other.y1)
        return max(dx, dy)

    @property
    def baseline(self) -> float:
        return round(self.base, 1)


@cache
def _font(family: str, bold: bool):  # -> fontTools TTFont
    from fontTools.ttLib import TTFont

    spec = f"{family}:bold" if bold else family
    found = subprocess.run(["fc-match", "-f", "%{file}:%{index}", spec], capture_output=True, text=True,
                           check=True).stdout
    path, index = found.rsplit(":", 1)
    return TTFont(path, fontNumber=int(index or 0), lazy=True)


@cache
def _glyph(family: str, bold: bool, char: str) -> tuple[float, tuple[float, float, float, float] | None]:
    """(advance, ink bounds or None for a blank) of *char* in font units per em = 1."""
    from fontTools.pens.boundsPen import BoundsPen

    font = _font(family, bold)
    upm = font["head"].unitsPerEm
    name = font.getBestCmap().get(ord(char))
    if name is None:  # drawn by a fallback font: take the whole em as its ink
        return 1.0, (0.0, -0.12, 1.0, 0.88)
    glyphs = font.getGlyphSet()
    pen = BoundsPen(glyphs)
    glyphs[name].draw(pen)
    advance = glyphs[name].width / upm
    if pen.bounds is None:
        return advance, None
    x0, y0, x1, y1 = (v / upm for v in pen.bounds)
    return advance, (x0, y0, x1, y1)


def text_box(text: str, *, family: str, bold: bool, size: float, x: float, y: float) -> Box | None:
    """The ink box of *text* set from (x, y) on its baseline (SVG y grows downward)."""
    pen_x, ink = 0.0, []
    for char in text:
        advance, bounds = _glyph(family, bold, char)
        if bounds:
            ink.append((pen_x + bounds[0], bounds[1], pen_x + bounds[2], bounds[3]))
        pen_x += advance
    if not ink:
        return None
    return Box("text", text, size, x + size * min(b[0] for b in ink), y - size * max(b[3] for b in ink),
               x + size * max(b[2] for b in ink), y - size * min(b[1] for b in ink), y)


def _translate(transform: str) -> tuple[float, float]:
    found = re.search(rf"translate\(({_NUMBER}),\s*({_NUMBER})\)", transform or "")
    return (float(found[1]), float(found[2])) if found else (0.0, 0.0)


def _scale(transform: str) -> tuple[float, float]:
    found = re.search(rf"scale\(({_NUMBER}),\s*({_NUMBER})\)", transform or "")
    return (float(found[1]), float(found[2])) if found else (1.0, 1.0)


def _path_box(element: ET.Element, x: float, y: float) -> Box | None:
    from fontTools.pens.boundsPen import BoundsPen
    from fontTools.svgLib.path import parse_path

    pen = BoundsPen(None)
    parse_path(element.get("d", ""), pen)
    if pen.bounds is None:
        return None
    sx, sy = _scale(element.get("transform", ""))
    xs = sorted((x + sx * pen.bounds[0], x + sx * pen.bounds[2]))
    ys = sorted((y + sy * pen.bounds[1], y + sy * pen.bounds[3]))
    return Box("path", "", 0.0, xs[0], ys[0], xs[1], ys[1])


def _shape_box(element: ET.Element, x: float, y: float, family: str) -> Box | None:
    tag = element.tag.removeprefix(SVG)
    number = lambda name: float(element.get(name, "0"))  # noqa: E731
    if tag == "text":
        text = "".join(element.itertext()).strip("\n")
        return text_box(text, family=family, bold=element.get("font-weight") == "bold",
                        size=number("font-size"), x=x, y=y)
    if tag == "rect":
        return Box("rect", "", 0.0, x + number("x"), y + number("y"), x + number("x") + number("width"),
                   y + number("y") + number("height"))
    if tag == "circle":
        r = number("r") + number("stroke-width") / 2
        return Box("circle", "", 0.0, x + number("cx") - r, y + number("cy") - r, x + number("cx") + r,
                   y + number("cy") + r)
    if tag == "line":
        half = number("stroke-width") / 2
        xs = sorted((number("x1"), number("x2")))
        ys = sorted((number("y1"), number("y2")))
        return Box("line", "", 0.0, x + xs[0] - half, y + ys[0] - half, x + xs[1] + half, y + ys[1] + half)
    if tag == "path":
        return _path_box(element, x, y)
    return None


def page_boxes(svg: Path | str, *, family: str) -> list[Box]:
    """Every drawn thing of one SVG page, texts measured in *family* (the CJK font the score was set in)."""
    root = ET.fromstring(Path(svg).read_text(encoding="utf-8"))
    boxes = []

    def walk(node: ET.Element, x: float, y: float) -> None:
        for child in node:
            dx, dy = _translate(child.get("transform", ""))
            if child.tag in (f"{SVG}g", f"{SVG}a"):  # a group, or a point-and-click link around one
                walk(child, x + dx, y + dy)
                continue
            box = _shape_box(child, x, y, family)
            if box is not None:
                boxes.append(box)

    walk(root, 0.0, 0.0)
    return boxes


def _rule(box: Box) -> bool:
    """A staff line or a ledger line: a line, or a rect far wider than it is thin."""
    return box.kind == "line" or (box.kind == "rect" and box.y1 - box.y0 < 0.3 < box.x1 - box.x0)


def _stem(box: Box) -> bool:
    """A stem or a bar line: a rect far taller than it is thin."""
    return box.kind == "rect" and box.x1 - box.x0 < 0.3 < box.y1 - box.y0


def _key_signature(a: Box, b: Box) -> bool:
    """Two signs of a key signature, which LilyPond sets edge to edge: the same glyph side by side, one higher."""
    same = abs((a.x1 - a.x0) - (b.x1 - b.x0)) < 1e-3 and abs((a.y1 - a.y0) - (b.y1 - b.y0)) < 1e-3
    side_by_side = max(b.x0 - a.x1, a.x0 - b.x1) >= 0
    return a.kind == b.kind == "path" and same and side_by_side and abs(a.y0 - b.y0) > 0.2


def by_design(a: Box, b: Box) -> bool:
    """Two drawn shapes that touch by design: a head, a stem, a clef or a sign on its staff or ledger line, a stem
    on its note head or ledger line, the signs of a key signature. Every other pair is compared: two glyphs of the
    music font (the digits of a metre, a sign and its head), a bar line and a digit, two bar lines."""
    shapes = {a.kind, b.kind} <= {"rect", "line", "path", "circle"}
    return shapes and (_rule(a) or _rule(b) or (_stem(a) and b.kind == "path") or (_stem(b) and a.kind == "path")
                       or _key_signature(a, b))


def lyric_size(boxes: list[Box]) -> float:
    """The font size of the lyric rows: the commonest size of text on a page of music."""
    commonest = Counter(b.size for b in boxes if b.kind == "text").most_common(1)
    return commonest[0][0] if commonest else 0.0


def touching(boxes: list[Box], *, gap: float = 0.1, word_gap: float = 0.25,
             row: float | None = None) -> list[tuple[Box, Box, float]]:
    """Pairs of *boxes* closer than *gap* (syllables side by side in a lyric row, of size *row* — by default the
    page's commonest —: closer than *word_gap* of their size, so two neighbouring 律 names never read as one
    run). Two drawn shapes are compared too, but for those that touch by design (``by_design``)."""
    row = row if row is not None else lyric_size(boxes) if boxes else 0.0
    found = []
    ordered = sorted(boxes, key=lambda b: b.x0)
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            if b.x0 > a.x1 + max(gap, word_gap * max(a.size, b.size)):
                break
            if by_design(a, b):
                continue
            same_row = a.kind == b.kind == "text" and a.baseline == b.baseline and a.size == b.size == row
            need = word_gap * a.size if same_row else gap
            if a.gap(b) < need:
                found.append((a, b, a.gap(b)))
    return found
