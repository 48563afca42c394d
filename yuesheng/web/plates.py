"""The plates of a staged rite (in the manner of 張惠言's 儀禮圖): the data the director's page draws them from.

A rite whose blocking is complete (``Production.staged``) gets one plate per stage of the rite — the cue sheet's
sections (陳設, 迎賓, 第一番射 …) — showing everyone on the ground with his facing, each file with its head, and the
席 with the way their sitters face. The page's script draws the plates from this data (``sheet.js.j2``) so that
one piece of code places the labels, for the plates as printed and for a selected cue: at a cue, everyone as he
stands after it and the cue's walks along their routes with their times; for a person, his track through the rite.

Only the stands that a cue changes are sent (the script replays them), in 步, x east and y south.

The drawing data are kept in ``caches.folder("plates")`` under ``caches.key`` of the ground's entry (itself a key of
everything staging reads) and the order of the timeline's cues (the key holds the package's code too): a page drawn
before neither loads the staged rite nor imports the staging model, which cost it more than the rest of its plates.
The drawing is kept as the JSON the page holds, which goes into the page as it is (``Plates.json``), once it is
checked to be a whole drawing; an entry that cannot be read, or is not what it should be, is a miss.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yuesheng import caches
from yuesheng.timeline import Timeline

if TYPE_CHECKING:
    from yuesheng.production import Production
    from yuesheng.staging.model import Hall, Stand
    from yuesheng.staging.rite import StagedRite

CHI_CM = 23.1  # the 尺 taken for metres (docs/staging.md: the pace's estimate)
MARGIN = 2.0  # 步 around everything drawn
FONT = 0.6  # 步: a label's size where the print needs no more (the page's script: sheet.js.j2)
GAP = 8.0  # 步 of the court with nothing in it that part the 堂 and 庭 from the far end (the 侯, the 門)
PANELS_MM = ((150.0, 176.0), (55.0, 176.0))  # the printed 堂 and 庭, and the far end's inset, on A4 landscape
ALONE_MM = (211.0, 176.0)  # the printed 堂 and 庭 of a court with no far end
MIN_LABEL_MM = 6.5 * 25.4 / 72  # 6.5 pt: every printed label at least 6 pt


def _r(v: float) -> float:
    return round(v, 2)


def _hall(hall: Hall) -> dict[str, Any]:
    from yuesheng.outputs.plan import is_mat, thing_kind, thing_label, thing_path

    (x0, y0), (x1, y1) = (hall.tang[0].x, hall.tang[0].y), (hall.tang[1].x, hall.tang[1].y)
    mats = [[p.name, _r(p.point.x), _r(p.point.y), p.facing.hanzi if p.facing else "",
             list(p.facing.vector) if p.facing else [0, 1], p.head.hanzi if p.head else ""]
            for p in hall.places.values() if is_mat(p.name)]
    return {"name": hall.name, "tang": [_r(x0), _r(y0), _r(x1), _r(y1)],
            "walls": [[w.name, [[_r(p.x), _r(p.y)] for p in w.points]] for w in hall.walls],
            "stairs": [[s.name, _r(s.top.x), _r(s.top.y), _r(s.foot.x), _r(s.foot.y)] for s in hall.stairs],
            "places": [[p.name, _r(p.point.x), _r(p.point.y)] for p in hall.places.values() if not is_mat(p.name)],
            "mats": mats,
            "things": {t.id: [t.name, thing_label(t.name), thing_kind(t.name), _r(t.at.x), _r(t.at.y), _r(t.size[0]),
                              _r(t.size[1]), thing_path(thing_kind(t.name), t.at.x, t.at.y, *t.size)]
                       for t in hall.things.values()}}


def _stand(s: Stand) -> list[Any]:
    fx, fy = s.facing.vector if s.facing else (0.0, 0.0)
    return [s.who, _r(s.point.x), _r(s.point.y), _r(fx), _r(fy), s.facing.hanzi if s.facing else ""]


def _box(staged: StagedRite) -> list[float]:
    """The ground every plate shows (the same for all, so plates compare): the walls, places and everyone placed."""
    hall = staged.hall
    points = [p for w in hall.walls for p in w.points] + [p.point for p in hall.places.values()]
    points += [s.point for c in staged.cues.values() for s in c.stands.values()]
    xs, ys = [p.x for p in points], [p.y for p in points]
    x0, y0 = min(xs) - MARGIN, min(ys) - MARGIN
    # 5 步 more below for the scale bar and the legend's two lines
    return [_r(x0), _r(y0), _r(max(xs) + MARGIN - x0), _r(max(ys) + MARGIN + 5 - y0)]


@dataclass(frozen=True, slots=True)
class Plates:
    """What the page has of the plates: the ground every plate shows, the printed panels, the cues the plates show,
    everyone on the ground (member id → name, in the order he first stands there), and the whole as the JSON the
    page's script draws from."""

    box: tuple[float, ...]
    panels: tuple[tuple[float, ...], ...]  # each printed panel: its box (x, y, width, height), labels' size, mm w, h
    plates: tuple[str, ...]  # the cues whose moments the plates show (the blocking's ``plates``)
    members: Mapping[str, str]
    json: str  # {"hall", "box", "panels", "cues", "members", "chi_per_bu", "chi_cm"}: the hall and each cue's changes


def plates_data(production: Production, names: Mapping[str, str]) -> Plates | None:
    """The hall and each cue's changed stands and walks, for the page's plates; None if not staged."""
    timeline, ground = production.timeline, production.ground
    if ground is None:
        return None
    folder = caches.folder("plates") if ground.entry else None
    name = _entry(ground.entry, [t.cue.id for t in timeline.cues])
    kept = _read(folder.read(name, limit=MAX_ENTRY_BYTES)) if folder is not None else None
    if kept is None:
        staged = production.staged
        assert staged is not None  # a production with a ground has a staged rite
        kept = _kept(_drawing(timeline, staged))
        if folder is not None:
            folder.write(name, _text(kept).encode("utf-8"), entries=CACHE_ENTRIES)
    head, drawn = kept
    members = {who: _label(who, names) for who in head["members"]}
    rest = {"members": members, "chi_per_bu": head["chi_per_bu"], "chi_cm": CHI_CM}
    return Plates(tuple(head["box"]), tuple(tuple(p) for p in head["panels"]), tuple(head["plates"]), members,
                  f"{drawn[:-1]},{_json(rest)[1:]}")


Kept = tuple[dict[str, Any], str]  # what the template needs, and the drawing's JSON without the names


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _label(who: str, names: Mapping[str, str]) -> str:
    """'衆賓 3' for 'zhongbin#3'."""
    base, _, n = who.partition("#")
    return names.get(base, base) + (f" {n}" if n else "")


def _kept(drawing: dict[str, Any]) -> Kept:
    """*drawing* (``_drawing``) as kept: the head the template needs, and the hall, box, panels and cues as JSON."""
    head = {k: drawing[k] for k in ("box", "panels", "plates", "members", "chi_per_bu")}
    return head, _json({k: drawing[k] for k in ("hall", "box", "panels", "cues")})


def _drawing(timeline: Timeline, staged: StagedRite) -> dict[str, Any]:
    """What the plates draw, without names: the hall, the box, the printed panels, each cue's changed stands and
    walks and the set pieces standing after it where they change, the cues the plates show, and everyone on the
    ground in the order he first stands there."""
    from yuesheng.staging.model import CHI_PER_BU

    members: dict[str, None] = {}
    cues: dict[str, Any] = {}
    before: dict[str, Stand] = {}
    on = [(t.cue.id, c) for t in timeline.cues if (c := staged.cues.get(t.cue.id)) is not None]
    up: tuple[str, ...] | None = None
    for n, (cid, on_ground) in enumerate(on):
        changed = [_stand(s) for who, s in on_ground.stands.items() if before.get(who) is not s]
        before = dict(on_ground.stands)
        members.update(dict.fromkeys(on_ground.stands))
        walks = [[w.who, [[_r(p.x), _r(p.y)] for p in w.route], _r(w.length), _r(float(w.seconds)),
                  "趨" if w.run else "行"] for w in on_ground.derivation.walks]
        cues[cid] = {"set": changed, "walks": walks}
        after = on[n + 1][1].things if n + 1 < len(on) else on_ground.things  # the next cue's walks go round them
        if after != up:
            cues[cid]["things"] = list(after)
            up = after
    return {"hall": _hall(staged.hall), "box": _box(staged), "panels": panels(staged), "cues": cues,
            "plates": list(staged.plates), "members": list(members), "chi_per_bu": CHI_PER_BU}


def panels(staged: StagedRite) -> list[list[float]]:
    """The printed panels, each its box (x, y, width, height in 步), its labels' size (步) and its printed width and
    height (mm): the 堂 and 庭, and the far end (the 侯, the 門) as its own inset where GAP 步 of empty court part
    them, else what lies outside the 門; a label at least 6 pt on A4 in the panel that shows its anchor."""
    hall = staged.hall
    points = [p.point for p in hall.places.values()] + [t.at for t in hall.things.values()]
    points += [s.point for c in staged.cues.values() for s in c.stands.values()]
    ys = sorted({p.y for p in points if p.y > 0})
    walls = [p for w in hall.walls for p in w.points]
    gate = max(p.y for p in walls)  # the court's south wall: outside it, the far end where the court has no gap
    split = next(((a, b) for a, b in zip(ys, ys[1:], strict=False) if b - a >= GAP), None)
    if split is None and ys[-1] > gate:
        split = (max(y for y in ys if y <= gate), min(y for y in ys if y > gate))
    near = [p for p in points if split is None or p.y <= split[0]] + [p for p in walls if p.y <= 0]
    x0, x1 = min(p.x for p in near + walls) - 1, max(p.x for p in near + walls) + 1
    y0, y1 = min(p.y for p in near) - 1, max(p.y for p in near) + 2
    if split is None:
        return [_panel(x0, y0, x1, y1, ALONE_MM)]
    far, cut = [p for p in points if p.y >= split[1]], min(split[0] + 2, (split[0] + split[1]) / 2)
    return [_panel(x0, y0, x1, cut, PANELS_MM[0]),  # the two meet, never overlap: a label shows in one panel
            _panel(min(p.x for p in far) - 2, max(cut, split[1] - 2), max(p.x for p in far) + 2,
                   max(p.y for p in far) + 2, PANELS_MM[1])]


def _panel(x0: float, y0: float, x1: float, y1: float, mm: tuple[float, float]) -> list[float]:
    """A panel of the ground from (*x0*, *y0*) to (*x1*, *y1*) printed within *mm* wide and high: its box, its
    labels' size (at least MIN_LABEL_MM at the scale it prints at) and the millimetres it prints (to scale)."""
    scale = min(mm[0] / (x1 - x0), mm[1] / (y1 - y0))  # mm a 步
    return [_r(x0), _r(y0), _r(x1 - x0), _r(y1 - y0), max(FONT, math.ceil(MIN_LABEL_MM / scale * 20) / 20),
            math.floor((x1 - x0) * scale), math.floor((y1 - y0) * scale)]


CACHE_ENTRIES = 64
MAX_ENTRY_BYTES = 32 << 20  # a kept drawing (大射: about 0.3 MB); a larger file is not read
_FORMAT = "yuesheng-plates-4"


def _entry(ground: str, cues: list[str]) -> str:
    """The name of the kept drawing of the ground entry *ground* with the timeline's *cues* in this order."""
    return f"{caches.prefix_of(ground)}{caches.key(_FORMAT, ground, *cues)}.json"


def _text(kept: Kept) -> str:
    """*kept* as a file: the head with the format on the first line, the drawing (JSON, which holds no newline) on
    the second."""
    head, drawn = kept
    return f"{_json({'format': _FORMAT, **head})}\n{drawn}"


def _read(entry: bytes | None) -> Kept | None:
    """What an entry's bytes keep, or None (none, or malformed)."""
    try:
        if entry is None:
            return None
        first, drawn = entry.decode("utf-8").split("\n")
        head = json.loads(first)
        shapes = {"format": str, "box": list, "panels": list, "plates": list, "members": list, "chi_per_bu": int}
        if any(not isinstance(head[k], t) for k, t in shapes.items()) or head.pop("format") != _FORMAT:
            return None
        if not all(isinstance(v, int | float) for v in head["box"] + [v for p in head["panels"] for v in p]):
            return None
        if not all(isinstance(c, str) for c in head["plates"]):
            return None
        if not isinstance(body := json.loads(drawn), dict) or body.keys() != {"hall", "box", "panels", "cues"}:
            return None  # the drawing goes into the page unparsed: it must at least be one, whole (about 1 ms)
        return (head, drawn) if all(isinstance(who, str) for who in head["members"]) else None
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
