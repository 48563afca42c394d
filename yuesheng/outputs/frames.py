"""The plate of a rite frame by frame, for ``video``: the same ground as the director's page and ``plan --at`` (the
堂, walls, stairs, set pieces, places and mats), every person's mark where ``staging.motion`` has him at the instant,
with his facing and his name, and beside it a caption: the time, the cue and its action, the music sounding (its
piece, and the line being sung where the Timeline gives the words), the calls (宮, 商) and the 節 drum as they sound.

Drawn with Pillow, not a browser, in layers kept while they stay: the ground (for each set of set pieces standing,
with a followed person's track) drawn once at the view's scale and cropped to the view; on it everyone standing,
drawn again only when one of them moves, turns or goes; the caption's panel, set again only when its lines change.
A frame draws only the walkers on a copy of those; each label is rendered once and pasted; a frame whose drawn
state is the previous frame's is that frame's bytes again. Each name goes beside its mark where it covers no other
name, mark or facing tick (``Boxes``; the place it had before tried first, so that names do not jump between
frames: a plate draws its frames in order), and is left out where none is clear. Text is set in Noto Sans
CJK (Debian's fonts-noto-cjk) where installed, else in the shipped font (``fonts``), and a character of the
supplementary planes (𤣥, which Noto lacks) always in the shipped font.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng.characters import display
from yuesheng.fonts import FONT_FILES
from yuesheng.outputs.plan import is_mat, person_name
from yuesheng.staging.model import Hall, Point
from yuesheng.timeline import TICKS_PER_SECOND, EventKind, Timeline, clock

if TYPE_CHECKING:
    from PIL import Image, ImageFont

    from yuesheng.cuesheet import CueSheet
    from yuesheng.staging.motion import Motion, Position
    from yuesheng.staging.rite import StagedRite

NOTO = (Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
        Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Medium.ttc"))
PANEL = 0.3  # of the frame's width: the caption beside the plate
MARGIN = 1.5  # 步 of ground shown around the hall
FOLLOW_SPAN = 18.0  # 步 of ground a followed view shows from top to bottom, at least
SHOWN = 1.0  # seconds a call or a drum stroke stays shown after it sounds (or a frame's time, if longer)
FILE_GAP = 1.6  # 步: members of a group standing this close in numbered order share one label
INK = (34, 34, 34)
PERSON = (178, 34, 34)
ROUTE = (34, 102, 204)
TRACK = (90, 140, 220)
PAPER = (250, 248, 242)
PANEL_BG = (38, 36, 33)
PANEL_INK = (236, 230, 214)
PANEL_DIM = (160, 152, 136)
SUNG = (255, 200, 90)


# --- text ----------------------------------------------------------------------------------------------------------


@cache
def _font(size: int, supplementary: bool) -> ImageFont.FreeTypeFont:
    """The face for text of *size* px: Noto Sans CJK TC, else the shipped font; the shipped B font for the
    supplementary planes."""
    from PIL import ImageFont

    if supplementary:
        return ImageFont.truetype(str(FONT_FILES[1]), size)
    for path in NOTO:
        if path.is_file():
            return ImageFont.truetype(str(path), size, index=_tc_index(path))
    return ImageFont.truetype(str(FONT_FILES[0]), size)


@cache
def _tc_index(path: Path) -> int:
    """The index of the traditional-Chinese face in a Noto CJK collection (0 if it has no such face)."""
    from PIL import ImageFont

    for index in range(10):
        try:
            face = ImageFont.truetype(str(path), 10, index=index)
        except OSError:
            break
        if (face.getname()[0] or "").endswith(" TC"):
            return index
    return 0


def _runs(text: str) -> list[tuple[str, bool]]:
    """*text* in runs of one face: (run, of the supplementary planes?)."""
    out: list[tuple[str, bool]] = []
    for ch in text:
        sup = ord(ch) >= 0x20000
        if out and out[-1][1] == sup:
            out[-1] = (out[-1][0] + ch, sup)
        else:
            out.append((ch, sup))
    return out


def text_width(text: str, size: int) -> float:
    """The width in px of *text* set at *size* px."""
    return sum(_font(size, sup).getlength(run) for run, sup in _runs(text))


@cache
def text_image(text: str, size: int, color: tuple[int, int, int]) -> Image.Image:
    """*text* set at *size* px in *color* on a clear ground (RGBA), as tall as the face's line; kept for reuse."""
    from PIL import Image, ImageDraw

    width = max(1, math.ceil(text_width(text, size)) + 2)
    height = math.ceil(size * 1.3)
    image = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    x = 1.0
    for run, sup in _runs(text):
        font = _font(size, sup)
        draw.text((x, size * 1.1), run, font=font, fill=(*color, 255), anchor="ls")
        x += font.getlength(run)
    return image


@cache
def wrap(text: str, size: int, width: float, lines: int) -> tuple[str, ...]:
    """*text* broken into at most *lines* lines of at most *width* px (the last cut with …)."""
    out, line = [], ""
    for ch in text:
        if text_width(line + ch, size) > width:
            out.append(line)
            line = ch.lstrip()
        else:
            line += ch
    out.append(line)
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][:-1] + "…"
    return tuple(out)


# --- what sounds when -------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Syllable:
    """One sung syllable: when, of which piece, stanza and line (its text), and its place in the line."""

    start: float
    end: float
    piece: str
    stanza: int
    line: str
    index: int


@dataclass(frozen=True, slots=True)
class Sound:
    """A call or a 節 drum stroke, from *start* seconds: what the caption shows of it."""

    start: float
    text: str


@dataclass(frozen=True, slots=True)
class Music:
    """A span of music sounding, *start* to *end* seconds, and what it is (its cue's marker: '升歌 鹿鳴×3')."""

    start: float
    end: float
    text: str


class Sounding:
    """What sounds at each instant of a Timeline: the music, the syllable sung, the calls and the 節 strokes."""

    def __init__(self, timeline: Timeline, sheet: CueSheet) -> None:
        titles = {ref.piece.id: ref.piece for cue in sheet.cues for ref in cue.pieces}
        self.syllables = _syllables(timeline, titles)
        self._sung_starts = [s.start for s in self.syllables]
        self.music = _music(timeline, {pid: p.title for pid, p in titles.items()})
        self._music_starts = [m.start for m in self.music]
        self.sounds = _sounds(timeline)
        self._sound_starts = [s.start for s in self.sounds]

    def playing(self, t: float) -> Music | None:
        """The music sounding at *t* (None in silence)."""
        i = bisect.bisect_right(self._music_starts, t) - 1
        return self.music[i] if i >= 0 and t <= self.music[i].end else None

    def sung(self, t: float) -> Syllable | None:
        """The syllable being sung at *t*, or the last one while its line's music goes on (None: no words)."""
        i = bisect.bisect_right(self._sung_starts, t) - 1
        if i < 0:
            return None
        s = self.syllables[i]
        return s if t <= s.end + SHOWN else None

    def heard(self, t: float, window: float) -> list[str]:
        """The calls and 節 strokes sounded in the last *window* seconds up to *t* (at least ``SHOWN``)."""
        lo = bisect.bisect_left(self._sound_starts, t - max(window, SHOWN))
        hi = bisect.bisect_right(self._sound_starts, t)
        return list(dict.fromkeys(s.text for s in self.sounds[lo:hi]))


def _syllables(timeline: Timeline, pieces: Mapping[str, Any]) -> list[Syllable]:
    """Every sung syllable in time, each with its stanza and line: the k-th 歌 note of a 終 is the k-th note of the
    piece with words."""
    counts: dict[tuple[str, str, int], int] = {}
    out = []
    for e in timeline.events:
        if e.kind is not EventKind.NOTE or e.part != "歌" or e.piece not in pieces:
            continue
        piece = pieces[e.piece]
        worded = [n for n in piece.notes if n.lyric.strip()]
        key = (e.cue, e.piece, e.zhong)
        k = counts.get(key, 0)
        counts[key] = k + 1
        if k >= len(worded):
            continue
        note = worded[k]
        line, index = _line_of(piece, note.stanza, note)
        out.append(Syllable(e.start_tick / TICKS_PER_SECOND, (e.start_tick + e.length_ticks) / TICKS_PER_SECOND,
                            piece.title, note.stanza, line, index))
    return out


def _line_of(piece: Any, number: int, note: Any) -> tuple[str, int]:
    """The line (句) of stanza *number* that *note* is in, and its place in it; the stanza's eight syllables about
    it where the score gives no lines."""
    stanza = next(s for s in piece.stanzas if s.number == number)
    notes = [n for n in stanza.notes if n.lyric.strip()]
    at = next((i for i, n in enumerate(notes) if n is note), 0)
    bounds = [0, *stanza.line_ends, len(notes)] if stanza.line_lengths else list(range(0, len(notes), 8)) + [
        len(notes)]
    j = max(bisect.bisect_right(bounds, at) - 1, 0)
    lo, hi = bounds[j], bounds[min(j + 1, len(bounds) - 1)]
    return "".join(n.lyric.strip() for n in notes[lo:hi]), at - lo


def _music(timeline: Timeline, titles: Mapping[str, str]) -> list[Music]:
    """The spans of music: each cue's sounding events from first to last, named by its marker (else its pieces)."""
    spans: dict[str, list[float]] = {}
    named: dict[str, str] = {}
    for e in timeline.events:
        if e.kind is EventKind.MARKER:
            named.setdefault(e.cue, display(e.text))
        elif e.kind in (EventKind.NOTE, EventKind.DRUM) and (e.piece or e.cue in named):
            start, end = e.start_tick / TICKS_PER_SECOND, (e.start_tick + e.length_ticks) / TICKS_PER_SECOND
            span = spans.setdefault(e.cue, [start, end])
            span[0], span[1] = min(span[0], start), max(span[1], end)
            if e.piece:
                named.setdefault(f"{e.cue} pieces", titles.get(e.piece, e.piece))
    out = [Music(a, b, named.get(cue) or named.get(f"{cue} pieces", "")) for cue, (a, b) in spans.items()]
    return sorted(out, key=lambda m: m.start)


def _sounds(timeline: Timeline) -> list[Sound]:
    """The calls (獲者 獲 宮) and the 節 drum's strokes (節 3), in time."""
    out = []
    for e in timeline.events:
        if e.kind is EventKind.CALL:
            out.append(Sound(e.start_tick / TICKS_PER_SECOND, f"{e.part} {e.text} {e.degree}".strip()))
        elif e.kind is EventKind.DRUM and e.jie:
            out.append(Sound(e.start_tick / TICKS_PER_SECOND, f"{e.part} 節 {e.jie}"))
    return sorted(out, key=lambda s: s.start)


# --- the view -------------------------------------------------------------------------------------------------------


def ground_box(hall: Hall) -> tuple[float, float, float, float]:
    """The ground a plate shows: the hall's walls, 堂, places and set pieces, ``MARGIN`` 步 around."""
    xs = [p.x for w in hall.walls for p in w.points] + [p.point.x for p in hall.places.values()]
    ys = [p.y for w in hall.walls for p in w.points] + [p.point.y for p in hall.places.values()]
    for thing in hall.things.values():
        x0, y0, x1, y1 = thing.box()
        xs += [x0, x1]
        ys += [y0, y1]
    xs += [hall.tang[0].x, hall.tang[1].x]
    ys += [hall.tang[0].y, hall.tang[1].y]
    return min(xs) - MARGIN, min(ys) - MARGIN, max(xs) + MARGIN, max(ys) + MARGIN


SPOTS = ((1, 0), (-1, 0), (1, -1), (1, 1), (-1, -1), (-1, 1), (0, -1), (0, 1))  # a name's places about his mark


class Boxes:
    """Boxes taken on a frame (px: left, top, right, bottom), kept by cells of ``CELL`` px, so that whether a new
    one touches any is asked of the few near it."""

    CELL = 48

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[tuple[float, float, float, float]]] = {}
        self.boxes: list[tuple[float, float, float, float]] = []  # in the order taken

    def _cells(self, box: tuple[float, float, float, float]) -> list[tuple[int, int]]:
        c = self.CELL
        return [(i, j) for i in range(int(box[0] // c), int(box[2] // c) + 1)
                for j in range(int(box[1] // c), int(box[3] // c) + 1)]

    def add(self, box: tuple[float, float, float, float]) -> None:
        self.boxes.append(box)
        for cell in self._cells(box):
            self.cells.setdefault(cell, []).append(box)

    def clear(self, box: tuple[float, float, float, float]) -> bool:
        """Whether *box* touches none taken."""
        return all(box[2] <= o[0] or box[0] >= o[2] or box[3] <= o[1] or box[1] >= o[3]
                   for cell in self._cells(box) for o in self.cells.get(cell, ()))

    def copy(self) -> Boxes:
        out = Boxes()
        out.cells = {cell: list(boxes) for cell, boxes in self.cells.items()}
        out.boxes = list(self.boxes)
        return out


@dataclass(frozen=True, slots=True)
class Layout:
    """Where things go in a frame of *width* × *height* px: the plate on the left, the caption panel on the right."""

    width: int
    height: int

    @property
    def plate(self) -> tuple[int, int]:
        return self.width - self.panel, self.height

    @property
    def panel(self) -> int:
        return round(self.width * PANEL)

    @property
    def unit(self) -> int:
        """The caption's text size in px."""
        return max(10, round(self.height / 36))


class Plate:
    """Frames of a staged rite moving on *motion*, drawn at *size* (width, height); *follow*: the member ids the view
    keeps in frame, zoomed, with their track (legs from *track_from* to *track_to* seconds)."""

    def __init__(self, staged: StagedRite, motion: Motion, timeline: Timeline, sheet: CueSheet,
                 size: tuple[int, int], follow: Sequence[str] = (), *, label: str = "",
                 track: tuple[float, float] = (-math.inf, math.inf)) -> None:
        self.staged, self.motion, self.timeline, self.sheet = staged, motion, timeline, sheet
        self.layout = Layout(*size)
        self.follow = tuple(follow)
        self.label = label
        self.sounding = Sounding(timeline, sheet)
        self.names = {m: person_name(m, sheet) for m in motion.members}
        box = ground_box(staged.hall)
        pw, ph = self.layout.plate
        fit = min(pw / (box[2] - box[0]), ph / (box[3] - box[1]))
        self.scale = max(fit, ph / FOLLOW_SPAN) if self.follow else fit
        self.box = box
        self.legs = [leg for m in self.follow for leg in motion.legs(m)
                     if leg.end >= track[0] and leg.start <= track[1]]
        self._grounds: dict[tuple[str, ...], Image.Image] = {}
        self._last: tuple[object, bytes] | None = None
        self._view: tuple[object, Image.Image] | None = None
        self._kept: tuple[object, Image.Image, Boxes] | None = None
        self._spots: dict[str, int] = {}  # member → where his name was last put (of SPOTS)
        self._panel: tuple[object, Image.Image] | None = None
        self.drawn = 0  # frames drawn anew (the others were the frame before again)
        self._cues = [(motion.span(c)[0], c) for c in motion.cues]
        self._cue_starts = [s for s, _ in self._cues]

    # the ground, drawn once per set of set pieces standing

    def _px(self, p: Point | tuple[float, float]) -> tuple[float, float]:
        x, y = (p.x, p.y) if isinstance(p, Point) else p
        return (x - self.box[0]) * self.scale, (y - self.box[1]) * self.scale

    def _ground(self, things: tuple[str, ...]) -> Image.Image:
        if things not in self._grounds:
            self._grounds[things] = self._draw_ground(things)
        return self._grounds[things]

    def _draw_ground(self, things: Iterable[str]) -> Image.Image:
        from PIL import Image, ImageDraw

        s, hall = self.scale, self.staged.hall
        size = (math.ceil((self.box[2] - self.box[0]) * s), math.ceil((self.box[3] - self.box[1]) * s))
        image = Image.new("RGB", size, PAPER)
        draw = ImageDraw.Draw(image)
        (x0, y0), (x1, y1) = self._px(hall.tang[0]), self._px(hall.tang[1])
        draw.rectangle((x0, y0, x1, y1), fill=(238, 228, 207), outline=INK, width=max(1, round(0.15 * s)))
        for thing in (hall.things[t] for t in things if t in hall.things):
            a, b, c, d = thing.box()
            draw.rectangle((*self._px((a, b)), *self._px((c, d))), fill=(196, 160, 120), outline=(122, 82, 45))
        for wall in hall.walls:
            draw.line([self._px(p) for p in wall.points], fill=INK, width=max(2, round(0.25 * s)))
        for stair in hall.stairs:
            draw.line([self._px(stair.top), self._px(stair.foot)], fill=(119, 170, 85), width=max(3, round(0.8 * s)))
        small = max(9, round(0.55 * s))
        for place in hall.places.values():
            x, y = self._px(place.point)
            if is_mat(place.name):
                vx, vy = place.facing.vector if place.facing else (0.0, 1.0)
                ux, uy = -vy, vx
                corners = [(x + (ux * a * 0.8 + vx * b * 0.3) * s, y + (uy * a * 0.8 + vy * b * 0.3) * s)
                           for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
                draw.polygon(corners, fill=(232, 217, 176), outline=(91, 74, 54))
                continue
            r = max(1.5, 0.12 * s)
            draw.ellipse((x - r, y - r, x + r, y + r), fill=(153, 153, 153))
            if len(place.name) <= 2:
                name = text_image(display(place.name), small, (110, 110, 110))
                image.paste(name, (round(x + r + 1), round(y - name.height / 2)), name)
        self._draw_track(image, draw)
        return image

    def _draw_track(self, image: Image.Image, draw: Any) -> None:
        """The followed persons' legs, numbered at their starts."""
        width = max(2, round(0.12 * self.scale))
        for leg in self.legs:
            draw.line([self._px(p) for p in leg.route], fill=TRACK, width=width, joint="curve")
        size = max(10, round(0.5 * self.scale))
        for leg in self.legs:
            x, y = self._px(leg.route[0])
            r = size * 0.7
            draw.ellipse((x - r, y - r, x + r, y + r), fill=(255, 255, 255), outline=TRACK, width=2)
            number = text_image(str(leg.number), size, TRACK)
            image.paste(number, (round(x - number.width / 2), round(y - number.height * 0.55)), number)

    # the frame

    def _window(self, at: Mapping[str, Position]) -> tuple[int, int]:
        """The top-left corner, in the ground image, of the plate's view: the whole ground centred, or the followed
        persons in the middle (kept within the ground where it is larger than the view)."""
        pw, ph = self.layout.plate
        gw, gh = (self.box[2] - self.box[0]) * self.scale, (self.box[3] - self.box[1]) * self.scale
        points = [self._px(at[m].point) for m in self.follow if m in at]
        if not points:
            cx, cy = gw / 2, gh / 2
        else:
            cx = (min(p[0] for p in points) + max(p[0] for p in points)) / 2
            cy = (min(p[1] for p in points) + max(p[1] for p in points)) / 2

        def corner(c: float, view: int, whole: float) -> int:
            if whole <= view:
                return round((whole - view) / 2)
            return round(min(max(c - view / 2, 0), whole - view))

        return corner(cx, pw, gw), corner(cy, ph, gh)

    def frame(self, t: float, step: float) -> bytes:
        """The frame at *t* seconds into the rite (*step*: the rite's seconds between frames), as RGB bytes."""
        at = self.motion.at(t)
        cue = self._cue(t)
        things = self.staged.cues[cue].things if cue is not None and cue in self.staged.cues else ()
        corner = self._window(at)
        marks = self._marks(at, corner)
        caption = self._caption(t, cue, step)
        state = (things, corner, marks, caption)
        if self._last is not None and self._last[0] == state:
            return self._last[1]
        image = self._compose(things, corner, marks, caption)
        self.drawn += 1
        data = image.tobytes()
        self._last = (state, data)
        return data

    def image(self, t: float, step: float = 0.0) -> Image.Image:
        """The frame at *t* as an image (for a still, or a test)."""
        from PIL import Image

        return Image.frombytes("RGB", (self.layout.width, self.layout.height), self.frame(t, step))

    def drawn_at(self, t: float) -> dict[str, tuple[float, float]]:
        """Where each member's mark is drawn in the frame at *t* (px), for the tests."""
        at = self.motion.at(t)
        cx, cy = self._window(at)
        return {m: (x - cx, y - cy) for m, p in at.items() for x, y in [self._px(p.point)]}

    def _cue(self, t: float) -> str | None:
        i = bisect.bisect_right(self._cue_starts, t) - 1
        return self._cues[i][1] if i >= 0 else None

    def _marks(self, at: Mapping[str, Position], corner: tuple[int, int]) -> tuple[Any, ...]:
        """Each mark as drawn: px position, heading tick end, label (or ''), route of a walk in progress."""
        out = []
        labels = self._labels(at)
        s = self.scale
        for m in sorted(at):
            p = at[m]
            x, y = self._px(p.point)
            x, y = round(x - corner[0]), round(y - corner[1])
            tick = None
            if p.heading is not None:
                tick = (round(x + p.heading[0] * max(7, 0.6 * s)), round(y + p.heading[1] * max(7, 0.6 * s)))
            route: tuple[tuple[int, int], ...] = ()
            if p.leg is not None:
                route = tuple((round(a - corner[0]), round(b - corner[1])) for a, b in map(self._px, p.leg.route))
            out.append((x, y, tick, labels.get(m, ""), route, m in self.follow, m))
        return tuple(out)

    def _labels(self, at: Mapping[str, Position]) -> dict[str, str]:
        """One label a person; the members of a group standing in numbered order, close together, one for the
        run at its first ('衆賓 1–3')."""
        out: dict[str, str] = {}
        groups: dict[str, list[tuple[int, str]]] = {}
        for m, p in at.items():
            base, _, n = m.partition("#")
            if n and not p.walking:
                groups.setdefault(base, []).append((int(n), m))
            else:
                out[m] = self.names[m]
        for members in groups.values():
            members.sort()
            run = [members[0]]
            for k, who in [*members[1:], (-1, "")]:
                last_k, last = run[-1]
                if who and k == last_k + 1 and at[who].point.distance(at[last].point) <= FILE_GAP:
                    run.append((k, who))
                    continue
                name = self.names[run[0][1]].rsplit(" ", 1)[0]
                out[run[0][1]] = f"{name} {run[0][0]}–{run[-1][0]}" if len(run) > 1 else self.names[run[0][1]]
                run = [(k, who)]
        return out

    def _compose(self, things: tuple[str, ...], corner: tuple[int, int], marks: tuple[Any, ...],
                 caption: tuple[tuple[str, int, tuple[int, int, int]], ...]) -> Image.Image:
        """The frame: the view's ground with everyone standing (kept while neither changes), the walkers drawn on a
        copy of it, then the caption's panel (kept while its lines stay)."""
        standing = tuple(mark for mark in marks if not mark[4])
        still, taken = self._still(things, corner, standing)
        image = still.copy()
        self._draw_marks(image, tuple(mark for mark in marks if mark[4]), taken.copy())
        image.paste(self._captioned(caption), (self.layout.plate[0], 0))  # over a label that ran past the plate
        return image

    def _still(self, things: tuple[str, ...], corner: tuple[int, int],
               standing: tuple[Any, ...]) -> tuple[Image.Image, Boxes]:
        """The view's ground with the marks of those standing, and the boxes they and their names take: kept while
        the view and everyone standing stay."""
        key = (things, corner, standing)
        if self._kept is None or self._kept[0] != key:
            image, taken = self._base(things, corner).copy(), Boxes()
            self._draw_marks(image, standing, taken)
            self._kept = (key, image, taken)
        return self._kept[1], self._kept[2]

    def _draw_marks(self, image: Image.Image, marks: tuple[Any, ...], taken: Boxes) -> None:
        """*marks* on *image*: the routes of walks in progress, each person's facing and dot, then the names, each
        beside its mark where it covers no other name nor mark in *taken* (the followed first; the place a
        person's name had kept while it stays clear), left out where none is; what they take added to *taken*."""
        from PIL import ImageDraw

        draw = ImageDraw.Draw(image)
        r = max(3.0, 0.25 * self.scale)
        size = max(11, min(round(0.45 * self.scale), self.layout.unit))
        for _, _, _, _, route, _, _ in marks:
            if route:
                draw.line(list(route), fill=ROUTE, width=max(1, round(0.1 * self.scale)))
        for x, y, tick, _, _, followed, _ in marks:
            if tick is not None:
                draw.line([(x, y), tick], fill=PERSON, width=max(2, round(0.12 * self.scale)))
            color = (20, 90, 200) if followed else PERSON
            draw.ellipse((x - r, y - r, x + r, y + r), fill=color, outline=(255, 255, 255) if followed else None)
            tx, ty = tick if tick is not None else (x, y)
            taken.add((min(x - r, tx), min(y - r, ty), max(x + r, tx), max(y + r, ty)))
        for x, y, _, label, _, followed, member in sorted(marks, key=lambda mark: not mark[5]):
            if not label:
                continue
            name = text_image(label, size + (2 if followed else 0), (20, 60, 160) if followed else PERSON)
            spot = self._spot(member, (x, y), r + 2, name.size, taken)
            if spot is not None:
                image.paste(name, spot, name)

    def _spot(self, member: str, at: tuple[int, int], r: float, size: tuple[int, int],
              taken: Boxes) -> tuple[int, int] | None:
        """Where *member*'s name of *size* goes beside his mark at *at*, clear of *taken* (then taken), or None."""
        (x, y), (w, h) = at, size
        kept = self._spots.get(member)
        for n in ([kept] if kept is not None else []) + list(range(len(SPOTS))):
            sx, sy = SPOTS[n]
            left = x + r if sx > 0 else x - r - w if sx < 0 else x - w / 2
            top = y - h / 2 if sy == 0 else y - r - h if sy < 0 else y + r
            box = (left, top, left + w, top + h)
            if taken.clear(box):
                taken.add(box)
                self._spots[member] = n
                return round(left), round(top)
        return None

    def _base(self, things: tuple[str, ...], corner: tuple[int, int]) -> Image.Image:
        """The frame's ground as the view shows it: kept while the view stays."""
        from PIL import Image

        if self._view is not None and self._view[0] == (things, corner):
            return self._view[1]
        image = Image.new("RGB", (self.layout.width, self.layout.height), PAPER)
        ground = self._ground(things)
        pw, ph = self.layout.plate
        x0, y0 = max(corner[0], 0), max(corner[1], 0)
        x1, y1 = min(corner[0] + pw, ground.width), min(corner[1] + ph, ground.height)
        image.paste(ground.crop((x0, y0, x1, y1)), (x0 - corner[0], y0 - corner[1]))
        self._view = ((things, corner), image)
        return image

    # the caption

    def _captioned(self, lines: tuple[tuple[str, int, tuple[int, int, int]], ...]) -> Image.Image:
        """The caption's panel with *lines* set on it: kept while they stay."""
        from PIL import Image

        if self._panel is None or self._panel[0] != lines:
            image = Image.new("RGB", (self.layout.panel, self.layout.height), PANEL_BG)
            self._draw_caption(image, lines)
            self._panel = (lines, image)
        return self._panel[1]

    def _caption(self, t: float, cue: str | None, step: float) -> tuple[tuple[str, int, tuple[int, int, int]], ...]:
        """The caption's lines at *t*: (text, size, colour)."""
        u = self.layout.unit
        width = self.layout.panel - 2 * u
        lines: list[tuple[str, int, tuple[int, int, int]]] = [(self.label, u, PANEL_DIM)]
        lines.append((clock_tenths(t), round(u * 1.6), PANEL_INK))
        if cue is not None:
            c = self.sheet.cue(cue)
            lines.append((f"{display(c.section)}  {cue}", u, PANEL_DIM))
            action = display(c.action or "")
            lines += [(line, round(u * 1.15), PANEL_INK) for line in wrap(action, round(u * 1.15), width, 3) if line]
        lines.append(("", u // 2, PANEL_INK))
        music = self.sounding.playing(t)
        sung = self.sounding.sung(t)
        if music is not None:
            lines.append((f"樂  {music.text}", u, PANEL_INK))
        if sung is not None and (music is None or sung.start >= music.start):
            lines.append((f"{sung.piece} 第{sung.stanza}章", u, PANEL_DIM))
            lines.append((f"\x00{sung.index}\x00{sung.line}", round(u * 1.4), SUNG))
        for heard in self.sounding.heard(t, step):
            lines.append((heard, round(u * 1.2), SUNG))
        return tuple(lines)

    def _draw_caption(self, image: Image.Image, lines: Sequence[tuple[str, int, tuple[int, int, int]]]) -> None:
        u = self.layout.unit
        x, y = u, u
        for text, size, color in lines:
            if text.startswith("\x00"):  # a line sung: the syllables sung so far bright, the rest dim
                _, index, line = text.split("\x00", 2)
                done = line[: int(index) + 1]
                first = text_image(done, size, color)
                image.paste(first, (x, y), first)
                if line[len(done):]:
                    rest = text_image(line[len(done):], size, PANEL_DIM)
                    image.paste(rest, (x + first.width - 2, y), rest)
            elif text:
                drawn = text_image(text, size, color)
                image.paste(drawn, (x, y), drawn)
            y += round(size * 1.35)
            if y > self.layout.height - u:
                break


def clock_tenths(t: float) -> str:
    """Seconds as h:mm:ss (m:ss under an hour)."""
    return clock(round(max(t, 0.0) * TICKS_PER_SECOND))
