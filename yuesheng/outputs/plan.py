"""The ground plan of a rite as data and as one drawing (``yuesheng plan``): the hall and every place, and at a cue
everyone present with his facing, the cue's walks along their routes and what its duration is made of.

JSON (``plan_data``): the unit and axes, the hall (the 堂, walls, stairs and whose each is, the named assumptions), the
places — each with the hanzi name the text uses and its source — the rite's lord and default seat (its row of
``data/rites.json``), and, with a cue, the people and moves. SVG (``plan_svg``): that data drawn to scale, north up,
with a scale bar in 步 and 尺; its labels are placed clear of each other, of people, mats and walls (``labels``), and
the drawing grows to hold them.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from html import escape
from typing import TYPE_CHECKING, Any

from yuesheng.cuesheet import CueSheet
from yuesheng.datafiles import rite_of
from yuesheng.outputs.labels import Box, Label, Placed, place_labels, text_size
from yuesheng.staging.model import CHI_PER_BU, Hall, Point, Stand, Whose

if TYPE_CHECKING:
    from yuesheng.staging.rite import StagedCue

AXES = "x east, y south, in 步 (6 尺) from the middle of the 堂's south edge (堂廉)"


def _xy(p: Point) -> list[float]:
    return [round(p.x, 3), round(p.y, 3)]


def person_name(member: str, sheet: CueSheet) -> str:
    """'衆賓 3' for 'zhongbin#3', '主人' for 'zhuren'."""
    base, _, n = member.partition("#")
    name = sheet.performers[base].name if base in sheet.performers else base
    return f"{name} {n}" if n else name


def _hall(hall: Hall) -> dict[str, Any]:
    return {
        "id": hall.id, "name": hall.name, "file": hall.file, "has_shi": hall.has_shi,
        "readings": dict(hall.readings),  # the option it is drawn under, of each reading of the hall (fang, houdao)
        "tang": {"north_west": _xy(hall.tang[0]), "south_east": _xy(hall.tang[1])},
        "walls": [{"name": w.name, "points": [_xy(p) for p in w.points], "source": str(w.source)} for w in hall.walls],
        "stairs": [{"id": s.id, "name": s.name, "top": _xy(s.top), "foot": _xy(s.foot), "source": str(s.source),
                    "layer": s.source.layer, "whose": _whose(s.whose)} for s in hall.stairs],
        "assumptions": [{"id": a.id, "value": a.value, "text": a.text} for a in hall.assumptions],
        "targets": [{"name": name, "from": [x0, y], "to": [x1, y]} for name, x0, x1, y in targets(hall)],
        "screens": [{"name": name, "at": [x, y]} for name, x, y in screens(hall)],
        "things": _things(hall),
    }


def _whose(whose: Whose | None) -> dict[str, Any] | None:
    """Whose the stair is: the ranks it names, whether the rest go by it too, and the source; None where unsaid."""
    if whose is None:
        return None
    return {"of": list(whose.of), "rest": whose.rest, "source": str(whose.source), "layer": whose.source.layer}


_TARGET = re.compile(r"([大參干]?侯)(?: \(.*\))?")  # 侯, 大侯, 參侯, 干侯, 侯 (獸侯) — not 負侯, 侯道 (…)
_SCREEN = re.compile(r"(?:[大參干]?侯之)?乏")  # 乏, 大侯之乏 — not 乏南 (大侯), 乏 (獲者 大侯)
NOMINAL_TARGET = 2.0  # 步: a 侯 drawn without its 个 placed (not to scale)


def targets(hall: Hall) -> list[tuple[str, float, float, float]]:
    """Each 侯 of the hall as drawn: its name and the x of its 左个 and 右个 at its y (the places ``左个 (大侯)`` …,
    or ``左个``/``右个`` where the hall has one 侯); NOMINAL_TARGET wide about its place where they are not placed."""
    found = [(m.group(1), p.point) for p in hall.places.values() if (m := _TARGET.fullmatch(p.name))]
    out = []
    for name, at in found:
        owner = {name, ""} if len(found) == 1 else {name}
        ends = [q.point.x for q in hall.places.values() if q.name.split(" (")[0] in ("左个", "右个")
                and (q.name.partition(" (")[2].rstrip(")") in owner)]
        x0, x1 = (min(ends), max(ends)) if len(ends) == 2 else (at.x - NOMINAL_TARGET / 2, at.x + NOMINAL_TARGET / 2)
        out.append((name, round(x0, 3), round(x1, 3), round(at.y, 3)))
    return out


def screens(hall: Hall) -> list[tuple[str, float, float]]:
    """Each 乏 (the 獲者's screen) of the hall: its name and place."""
    return [(p.name, round(p.point.x, 3), round(p.point.y, 3)) for p in hall.places.values()
            if _SCREEN.fullmatch(p.name)]


# --- the set pieces, drawn as 張惠言's 儀禮圖 draws them: each by its kind, to its size, named ------------------------

_KINDS = (("侯", "hou"), ("乏", "fa"), ("物", "wu"), ("次", "ci"), ("楅", "fu"), ("篚", "fei"), ("洗", "xi"),
          ("磬", "frame"), ("鐘", "frame"), ("鑮", "frame"), ("縣", "frame"), ("鼓", "drum"), ("鼙", "drum"),
          ("鼗", "drum"), ("尊", "vessel"), ("壺", "vessel"), ("罍", "vessel"), ("甒", "vessel"), ("水", "vessel"),
          ("豐", "vessel"), ("亨", "vessel"), ("中", "zhong"))


def thing_label(name: str) -> str:
    """The name a set piece is labelled by: its name without the parenthesis ('笙磬 (東縣)' → '笙磬')."""
    return name.split(" (")[0]


def thing_kind(name: str) -> str:
    """How a set piece is drawn, from the word its name ends in (大侯 → hou, 笙磬 → frame); 'piece' for the rest."""
    label = thing_label(name)
    return next((kind for word, kind in _KINDS if word in label[-2:]), "piece")


def _c(x: float, y: float) -> str:
    return f"{_n(x)},{_n(y)}"


def thing_path(kind: str, x: float, y: float, w: float, d: float) -> str:
    """The outline of a set piece of *kind* at (*x*, *y*), *w* 步 east–west and *d* north–south, as an SVG path:
    a 侯 its cloth with its 个 and 中, a 乏 a screen open to the south, an instrument of the 縣 its frame (虡) with the
    beam it hangs from, a drum or vessel a circle, a 洗 two, the 次 a shelter with its roof's ridges, an 物 a cross."""
    x0, y0, x1, y1 = x - w / 2, y - d / 2, x + w / 2, y + d / 2
    box = f"M{_c(x0, y0)}H{_n(x1)}V{_n(y1)}H{_n(x0)}Z"
    r = max(min(w, d) / 2, 0.05)
    circle = _circle(x, y, r)
    if kind == "hou":  # the 个 at its ends, reaching south, and the 中 a quarter of its width
        return (f"{box}M{_c(x0, y0)}v{_n(d + 0.4)}M{_c(x1, y0)}v{_n(d + 0.4)}"
                f"M{_c(x - w / 8, y0 - 0.15)}H{_n(x + w / 8)}V{_n(y1 + 0.15)}H{_n(x - w / 8)}Z")
    if kind == "fa":
        return f"M{_c(x0, y1 + 0.1)}V{_n(y0)}H{_n(x1)}V{_n(y1 + 0.1)}"
    if kind == "wu":
        return f"M{_c(x0, y)}H{_n(x1)}M{_c(x, y0)}V{_n(y1)}"
    if kind == "ci":
        return f"{box}M{_c(x0, y0)}L{_c(x1, y1)}M{_c(x1, y0)}L{_c(x0, y1)}"
    if kind in ("frame", "fei"):  # the beam along its length
        along = f"M{_c(x, y0)}V{_n(y1)}" if d > w else f"M{_c(x0, y)}H{_n(x1)}"
        return box + along
    if kind in ("drum", "vessel"):
        return circle
    if kind == "xi":
        return circle + _circle(x, y, r / 2)
    return box


def _circle(x: float, y: float, r: float) -> str:
    return f"M{_c(x - r, y)}a{_n(r)},{_n(r)} 0 1,0 {_n(2 * r)},0a{_n(r)},{_n(r)} 0 1,0 {_n(-2 * r)},0"


def _things(hall: Hall) -> list[dict[str, Any]]:
    """Every set piece of the hall (its ``things``): its name, kind, place, size and source."""
    return [{"id": t.id, "name": t.name, "label": thing_label(t.name), "kind": thing_kind(t.name), "at": _xy(t.at),
             "size": [t.size[0], t.size[1]], "source": str(t.source)} for t in hall.things.values()]


def _places(hall: Hall) -> list[dict[str, Any]]:
    return [{"id": p.id, "name": p.name, "at": _xy(p.point), "facing": p.facing.hanzi + "面" if p.facing else None,
             "file": p.head.hanzi if p.head else None, "source": str(p.source), "layer": p.source.layer,
             "estimate": not p.source.page}
            for p in hall.places.values()]


def _people(stands: Mapping[str, Stand], sheet: CueSheet) -> list[dict[str, Any]]:
    from yuesheng.staging.stage import performer_of  # with its routes: a plan without a cue stages nothing

    return [{"id": s.who, "performer": performer_of(s.who), "name": person_name(s.who, sheet), "at": _xy(s.point),
             "facing": s.facing.hanzi + "面" if s.facing else None, "place": s.place}
            for s in sorted(stands.values(), key=lambda s: s.who)]


def _seats(hall: Hall, sheet: CueSheet) -> dict[str, Any]:
    """The rite's lord (his name, the place of his mat in this hall, the cite) and the seat a listener takes by
    default, from its row of ``data/rites.json``; None for what the row does not give or the hall does not place."""
    rite = rite_of(sheet.rite_id, sheet.rite_name)
    if rite is None:
        return {"lord": None, "default_seat": None}
    lord, seat = rite.lord, rite.listener
    mat = rite.seat_place(lord.seat, hall.places) if lord is not None else ""
    at = rite.seat_place(seat, hall.places)
    return {"lord": {"name": lord.name, "mat": mat if mat in hall.places else None, "cite": lord.cite}
            if lord is not None else None,
            "default_seat": {"id": seat, "place": at if at in hall.places else None} if seat else None}


def plan_data(hall: Hall, sheet: CueSheet, *, at: str | None = None, staged: StagedCue | None = None) -> dict[str, Any]:
    """The plan as plain data: the hall and places; at cue *at*, as it stands *staged*, the people, walks and
    duration."""
    out: dict[str, Any] = {"rite": sheet.rite_id, "unit": "步", "chi_per_bu": CHI_PER_BU, "axes": AXES,
                           "hall": _hall(hall), "places": _places(hall), **_seats(hall, sheet)}
    if at is not None and staged is not None:
        cue, derivation = sheet.cue(at), staged.derivation
        out["cue"] = {"id": cue.id, "section": cue.section, "action": cue.action, "cite": str(cue.cite),
                      "layer": cue.cite.layer}
        out["people"] = _people(staged.stands, sheet)
        out["standing"] = list(staged.things)  # the set pieces standing while its walks are made
        out["walks"] = [{"who": w.who, "name": person_name(w.who, sheet), "route": [_xy(p) for p in w.route],
                         "steps": w.length, "stairs": w.stairs, "seconds": float(w.seconds),
                         "pace": "趨" if w.run else "行"} for w in derivation.walks]
        out["duration"] = {"seconds": float(derivation.seconds),
                           "parts": [{"what": what, "seconds": float(s)} for what, s in derivation.parts]}
    return out


# --- the drawing ------------------------------------------------------------------------------------------------------

_PX = 12  # pixels a 步
FONT = 0.6  # 步: the size of a person's or a walk's label
PLACE_FONT = 0.55  # 步: a place's or a mat's label
TITLE_FONT = 1.2
FONTS = "'Noto Sans CJK TC', 'Noto Sans CJK SC', 'Noto Sans CJK JP', 'Source Han Sans TC', sans-serif"  # fonts-noto-cjk
PLACE_R = 0.12  # 步: a place's dot
FILE_GAP = 1.6  # 步: members of a group this close stand in one file and share one label
_STYLE = ("<style>.wall{fill:none;stroke:#333;stroke-width:.25}.tang{fill:#eee4cf;stroke:#333;stroke-width:.15}"
          ".stair{stroke:#7a5;stroke-width:.8}.target{stroke:#a0522d;stroke-width:.4}"
          ".screen{fill:none;stroke:#555;stroke-width:.2}.place{fill:#999}.mat{fill:#e8d9b0;stroke:#5b4a36;stroke-width:.06}"
          ".person{fill:#b22}.facing{stroke:#b22;stroke-width:.12}"
          ".route{fill:none;stroke:#26c;stroke-width:.15;stroke-dasharray:.4 .2}.leader{stroke:#999;stroke-width:.05}"
          ".thing{fill:#e6d8b4;stroke:#5b4a36;stroke-width:.06}.thing.hou,.thing.fa,.thing.wu{fill:none;stroke:#a0522d;"
          "stroke-width:.14}.who{fill:#b22}.time{fill:#2456b0}.mlabel,.tlabel{fill:#5b4a36}.plabel{fill:#666}</style>")


def _n(v: float) -> str:
    """A coordinate as the SVG writes it: at most three decimals, the same every run."""
    return f"{round(v, 3) + 0.0:g}"


def is_mat(name: str) -> bool:
    """A place that is a 席 (賓席, 衆賓之席, 工席 …), not the spot before one (賓席前) nor a 序端 or 階西."""
    return "席" in name and "席前" not in name


def _facing(facing: str | None) -> tuple[float, float] | None:
    from yuesheng.staging.model import Facing

    f = Facing.parse(facing) if facing else None
    return f.vector if f else None


def _facing_tick(x: float, y: float, facing: str | None) -> str:
    v = _facing(facing)
    if v is None:
        return ""
    return f'<line x1="{_n(x)}" y1="{_n(y)}" x2="{_n(x + v[0] * 0.6)}" y2="{_n(y + v[1] * 0.6)}" class="facing"/>'


def _person_boxes(x: float, y: float, facing: str | None) -> list[Box]:
    """What a person's label must not cover: his dot, and the tick that shows his facing."""
    boxes: list[Box] = [(x - 0.3, y - 0.3, x + 0.3, y + 0.3)]
    v = _facing(facing)
    if v is not None:
        tx, ty = x + v[0] * 0.6, y + v[1] * 0.6
        boxes.append((min(x, tx) - 0.08, min(y, ty) - 0.08, max(x, tx) + 0.08, max(y, ty) + 0.08))
    return boxes


def _line_boxes(points: list[list[float]], half: float) -> list[Box]:
    """What a label must not cover of a drawn line (a wall, a stair): each straight piece of it, *half* around; a
    slanting one in pieces of 1 步, so that its boxes hug it."""
    boxes = []
    for (ax, ay), (bx, by) in itertools.pairwise(points):
        n = 1 if ax == bx or ay == by else math.ceil(math.hypot(bx - ax, by - ay))
        for i in range(n):
            (px, py), (qx, qy) = ((ax + (bx - ax) * k / n, ay + (by - ay) * k / n) for k in (i, i + 1))
            boxes.append((min(px, qx) - half, min(py, qy) - half, max(px, qx) + half, max(py, qy) + half))
    return boxes


def _mat_corners(x: float, y: float, facing: str | None) -> list[tuple[float, float]]:
    """A 席's corners: 1.6 by 0.6 步, lying across the way its sitter faces."""
    vx, vy = _facing(facing) or (0.0, 1.0)
    ux, uy = -vy, vx  # along the mat
    return [(x + ux * a * 0.8 + vx * b * 0.3, y + uy * a * 0.8 + vy * b * 0.3) for a, b in ((-1, -1), (1, -1), (1, 1),
                                                                                        (-1, 1))]


def _mat_box(x: float, y: float, facing: str | None) -> Box:
    corners = _mat_corners(x, y, facing)
    xs, ys = [c[0] for c in corners], [c[1] for c in corners]
    return min(xs), min(ys), max(xs), max(ys)


def _file_head(members: list[tuple[int, float, float]]) -> str:
    """A file's head from its first two members (the next stands south of the head in 北上), as the page says it."""
    if len(members) < 2:
        return ""
    dx, dy = members[1][1] - members[0][1], members[1][2] - members[0][2]
    if abs(dy) >= abs(dx):
        return "北上" if dy > 0 else "南上"
    return "西上" if dx > 0 else "東上"


def _people_labels(people: list[dict[str, Any]]) -> list[Label]:
    """One label a person; the members of a group in runs that stand together (a file) one label for the run, at
    its head: '衆賓 1–3 北上'."""
    out, groups = [], dict[str, tuple[str, list[tuple[int, float, float]]]]()
    for p in people:
        base, _, n = p["id"].partition("#")
        if not n:
            out.append(Label(p["name"], p["at"][0], p["at"][1], FONT, "who", 0))
            continue
        name = p["name"].removesuffix(" " + n)
        groups.setdefault(base, (name, []))[1].append((int(n), p["at"][0], p["at"][1]))
    for name, members in groups.values():
        members.sort()
        runs = [[members[0]]]
        for m in members[1:]:
            last = runs[-1][-1]
            if math.hypot(m[1] - last[1], m[2] - last[2]) <= FILE_GAP:
                runs[-1].append(m)
            else:
                runs.append([m])
        for run in runs:
            span = f"{run[0][0]}–{run[-1][0]} {_file_head(run)}" if len(run) > 1 else str(run[0][0])
            out.append(Label(f"{name} {span}".strip(), run[0][1], run[0][2], FONT, "who", 0))
    return out


def standing(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The set pieces the plan draws: at a cue those standing, else every one of the hall."""
    things = data["hall"].get("things", [])
    return [t for t in things if t["id"] in data["standing"]] if "standing" in data else things


def _thing_box(t: dict[str, Any]) -> Box:
    (x, y), (w, d) = t["at"], t["size"]
    return x - w / 2 - 0.05, y - d / 2 - 0.05, x + w / 2 + 0.05, y + d / 2 + 0.05


def plate_labels(data: dict[str, Any], k: float = 1.0) -> tuple[list[Label], list[Box]]:
    """The labels of the plate (people, walk times, set pieces, mats, places) at *k* times their size, and what
    they must not cover: people, set pieces, mats, the places' dots, walls and stairs."""
    people = data.get("people", [])
    labels = [Label(la.text, la.x, la.y, la.size * k, la.css, la.order) for la in _people_labels(people)]
    obstacles = [b for p in people for b in _person_boxes(p["at"][0], p["at"][1], p["facing"])]
    obstacles += [b for w in data["hall"]["walls"] for b in _line_boxes(w["points"], 0.13)]
    obstacles += [b for s in data["hall"]["stairs"] for b in _line_boxes([s["top"], s["foot"]], 0.4)]
    for t in standing(data):
        obstacles.append(_thing_box(t))
        labels.append(Label(t["label"], t["at"][0], t["at"][1], PLACE_FONT * k, "tlabel", 2))
    for walk in data.get("walks", []):
        route = walk["route"]
        if walk["steps"] > 0.3:
            mid = (len(route) - 1) // 2
            (ax, ay), (bx, by) = route[mid], route[min(mid + 1, len(route) - 1)]
            labels.append(Label(f"{walk['seconds']:.0f} s", (ax + bx) / 2, (ay + by) / 2, FONT * k, "time", 1))
    for p in data["places"]:
        x, y = p["at"]
        if is_mat(p["name"]):
            obstacles.append(_mat_box(x, y, p["facing"]))
            labels.append(Label(p["name"].split(" (")[0], x, y, PLACE_FONT * k, "mlabel", 2))  # where it lies
            continue
        obstacles.append((x - PLACE_R, y - PLACE_R, x + PLACE_R, y + PLACE_R))
        if "people" not in data:  # without a cue, every place named; at a cue, the people and set pieces
            labels.append(Label(p["name"], x, y, PLACE_FONT * k, "plabel", 3))
    return labels, obstacles


GAP = 8.0  # 步 of empty court that part the 堂 and 庭 from the far end (the 侯, the 門): drawn as its own panel


def split(ys: list[float]) -> tuple[float, float] | None:
    """Where the court south of the 堂 is empty for GAP 步 or more (the first such stretch of *ys*), or None."""
    south = sorted({y for y in ys if y > 0})
    return next(((a, b) for a, b in itertools.pairwise(south) if b - a >= GAP), None)


def _grounds(data: dict[str, Any], cut: tuple[float, float] | None) -> list[Box]:
    """The ground each panel shows, 1 步 around: the 堂 and 庭 (all of it where nothing parts them), and the far end."""
    walls = [p for w in data["hall"]["walls"] for p in w["points"]]
    points = [p["at"] for p in data["places"]] + [p["at"] for p in data.get("people", [])]
    points += [t["at"] for t in standing(data)]
    near = [p for p in points + walls if cut is None or p[1] <= cut[0]]
    boxes = [_around(near)]
    if cut is not None:
        boxes.append(_around([p for p in points if p[1] >= cut[1]]))
    return boxes


def _around(points: list[Any]) -> Box:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs) - 1, min(ys) - 1, max(xs) + 1, max(ys) + 1


def _grown(box: Box, placed: list[Placed]) -> Box:
    """*box* grown to hold every label placed and its leader."""
    x0, y0, x1, y1 = box
    for p in placed:
        x0, y0, x1, y1 = min(x0, p.box[0]), min(y0, p.box[1]), max(x1, p.box[2]), max(y1, p.box[3])
    return x0, y0, x1, y1


def _title(data: dict[str, Any]) -> str:
    """The hall, the cue drawn, and the readings the hall is drawn under (fang=zuoyou: 左右房)."""
    cue = f" — {data['cue']['id']} {data['cue']['action']}" if "cue" in data else ""
    readings = ", ".join(f"{rid}={option}" for rid, option in sorted(data["hall"].get("readings", {}).items()))
    return f"{data['hall']['name']}{cue}{f' (reading {readings})' if readings else ''}"


A4_MM = (277.0, 190.0)  # A4 landscape inside margins of 10 mm: what the SVG's width and height are at most
LEGEND_MM = 24.0  # mm below the panels: the title, the legend and the scale bars
MIN_LABEL_MM = 9 * 25.4 / 72  # 9 pt: the least a label prints at on A4
TEXT_MM = 3.6  # the title's, legend's and scale's words (about 10 pt)
PANEL_GAP_MM = 6.0


def _scales(boxes: list[Box]) -> list[float]:
    """Millimetres a 步 each panel prints at: as high as the page allows, all narrowed alike to fit its width."""
    height = A4_MM[1] - LEGEND_MM
    scales = [height / (b[3] - b[1]) for b in boxes]
    width = sum((b[2] - b[0]) * s for b, s in zip(boxes, scales, strict=True)) + PANEL_GAP_MM * (len(boxes) - 1)
    fit = min(1.0, (A4_MM[0] - PANEL_GAP_MM * (len(boxes) - 1)) / (width - PANEL_GAP_MM * (len(boxes) - 1)))
    return [s * fit for s in scales]


def plan_svg(data: dict[str, Any], crop: Box | None = None) -> str:
    """The plan drawn to scale (north up), with the cue's people and walks if the data has them: the 堂 and 庭, and
    the far end (the 侯, the 門) as a panel of its own where GAP 步 of empty court part them; each panel's labels
    placed clear of each other, of people, set pieces and mats (``labels``), sized to print at 9 pt or more on A4
    (the SVG's width and height are in mm); below, the title, a legend and each panel's scale in 步, 尺 and m.
    With *crop* (a box in 步), one panel shows that ground alone, labelled only where it shows."""
    people = data.get("people", [])
    cut = None if crop else split([p["at"][1] for p in data["places"]] + [p["at"][1] for p in people])
    grounds = [crop] if crop else _grounds(data, cut)
    ks = [1.0] * len(grounds)
    for _ in range(5):  # a label's size grows its panel, which shrinks it on the page: until each prints large enough
        panels = [_panel_labels(data, cut, i, k, g, crop is not None)
                  for i, (k, g) in enumerate(zip(ks, grounds, strict=True))]
        scales = _scales([box for box, _ in panels])
        short = [MIN_LABEL_MM / (min(PLACE_FONT, FONT) * k * s) for k, s in zip(ks, scales, strict=True)]
        if max(short) <= 1:
            break
        ks = [k * max(1.0, r) * 1.02 for k, r in zip(ks, short, strict=True)]
    out, x = [], 0.0
    height = max((b[3] - b[1]) * s for (b, _), s in zip(panels, scales, strict=True))
    for (box, placed), s in zip(panels, scales, strict=True):
        x0, y0, x1, y1 = box
        out.append(f'<svg x="{_n(x)}" y="0" width="{_n((x1 - x0) * s)}" height="{_n((y1 - y0) * s)}" '
                   f'viewBox="{_n(x0)} {_n(y0)} {_n(x1 - x0)} {_n(y1 - y0)}" class="panel">')
        out += _ground(data) + _drawn_labels(placed) + ["</svg>"]
        out += _scale_bar(x, height + 15, s)
        x += (x1 - x0) * s + PANEL_GAP_MM
    w, h = max(x - PANEL_GAP_MM, 150.0), height + LEGEND_MM
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_n(w)} {_n(h)}" width="{_n(w)}mm" '
            f'height="{_n(h)}mm" font-family="{FONTS}">')
    return "\n".join([head, _STYLE, *out, *_furniture(_title(data), height), "</svg>"]) + "\n"


def _panel_labels(data: dict[str, Any], cut: tuple[float, float] | None, panel: int, k: float,
                  ground: Box, cropped: bool = False) -> tuple[Box, list[Placed]]:
    """The labels of panel *panel* (those whose anchor it shows; *cropped*: within its ground) at *k* times their
    size, placed, and the ground it shows grown to hold them."""
    labels, obstacles = plate_labels(data, k)
    mine = [la for la in labels if cut is None or (la.y >= cut[1]) == (panel == 1)]
    if cropped:
        mine = [la for la in mine if ground[0] <= la.x <= ground[2] and ground[1] <= la.y <= ground[3]]
    placed = place_labels(mine, obstacles)
    return _grown(ground, placed), placed


def _ground(data: dict[str, Any]) -> list[str]:
    """The hall, the places and mats, the walks and the people."""
    hall = data["hall"]
    (tx0, ty0), (tx1, ty1) = hall["tang"]["north_west"], hall["tang"]["south_east"]
    out = [f'<rect class="tang" x="{_n(tx0)}" y="{_n(ty0)}" width="{_n(tx1 - tx0)}" height="{_n(ty1 - ty0)}"/>']
    for wall in hall["walls"]:
        pts = " ".join(f"{_n(x)},{_n(y)}" for x, y in wall["points"])
        out.append(f'<polyline class="wall" points="{pts}"><title>{escape(wall["name"])}</title></polyline>')
    for t in standing(data):
        (x, y), (w, d) = t["at"], t["size"]
        out.append(f'<path class="thing {t["kind"]}" d="{thing_path(t["kind"], x, y, w, d)}">'
                   f'<title>{escape(t["name"])}: {escape(t["source"])}</title></path>')
    for s in hall["stairs"]:
        out.append(f'<line class="stair" x1="{_n(s["top"][0])}" y1="{_n(s["top"][1])}" x2="{_n(s["foot"][0])}" '
                   f'y2="{_n(s["foot"][1])}"><title>{escape(s["name"])}</title></line>')
    for p in data["places"]:
        x, y = p["at"]
        title = f'<title>{escape(p["name"])}: {escape(p["source"])}</title>'
        if is_mat(p["name"]):
            pts = " ".join(f"{_n(cx)},{_n(cy)}" for cx, cy in _mat_corners(x, y, p["facing"]))
            out.append(f'<polygon class="mat" points="{pts}">{title}</polygon>')
        else:
            out.append(f'<circle class="place" cx="{_n(x)}" cy="{_n(y)}" r="{_n(PLACE_R)}">{title}</circle>')
    for walk in data.get("walks", []):
        pts = " ".join(f"{_n(x)},{_n(y)}" for x, y in walk["route"])
        out.append(f'<polyline class="route" points="{pts}"><title>{escape(walk["name"])}: {walk["steps"]:g} 步, '
                   f'{walk["seconds"]:.0f} s ({walk["pace"]})</title></polyline>')
    for person in sorted(data.get("people", []), key=lambda p: str(p["id"])):
        x, y = person["at"]
        facing = f' {person["facing"]}' if person["facing"] else ""
        out.append(f'<circle class="person" cx="{_n(x)}" cy="{_n(y)}" r=".25"><title>{escape(person["name"])}'
                   f'{facing}</title></circle>{_facing_tick(x, y, person["facing"])}')
    return out


def _drawn_labels(placed: list[Placed]) -> list[str]:
    """The leader lines, then the labels over them."""
    out = [f'<line class="leader" x1="{_n(a)}" y1="{_n(b)}" x2="{_n(c)}" y2="{_n(d)}"/>'
           for p in placed if p.leader for a, b, c, d in [p.leader]]
    for p in placed:
        x, y = p.baseline
        out.append(f'<text class="label {p.label.css}" x="{_n(x)}" y="{_n(y)}" font-size="{p.label.size:g}">'
                   f'{escape(p.label.text)}</text>')
    return out


CHI_M = 0.231  # m a 尺 (the estimate docs/staging.md names: the pace's)


def _scale_bar(x: float, y: float, s: float) -> list[str]:
    """A panel's scale bar under it, at (*x*, *y*) mm, *s* mm a 步: 5 步 in steps of one, and 步, 尺 and metres."""
    ticks = "".join(f"M{_n(x + i * s)},{_n(y)}v-1.2" for i in range(6))
    metres = 5 * CHI_PER_BU * CHI_M
    return [f'<path class="scale" d="M{_n(x)},{_n(y)}h{_n(5 * s)}{ticks}" fill="none" stroke="#000" '
            f'stroke-width=".3"/>',
            f'<text class="plabel" x="{_n(x + 5 * s + 1.5)}" y="{_n(y)}" font-size="{TEXT_MM:g}">'
            f'5 步 = {5 * CHI_PER_BU} 尺 ≈ {metres:.1f} m</text>']


def _furniture(title: str, y: float) -> list[str]:
    """Below the panels (from *y* mm): the title, then the legend, and the north arrow."""
    out = [f'<text class="title" x="0" y="{_n(y + 7)}" font-size="{TEXT_MM * 1.3:g}">{escape(title)}</text>']
    out += _legend(0, y + 21)
    out += [f'<path class="north" d="M{_n(A4_MM[0] - 12)},{_n(y + 22)} l2,-6 l2,6 z" fill="#000"/>',
            f'<text class="plabel" x="{_n(A4_MM[0] - 7)}" y="{_n(y + 22)}" font-size="{TEXT_MM:g}">北</text>']
    return out


def _legend(x: float, y: float) -> list[str]:
    """One line of what the marks mean (mm): a person and his facing, a 席, a place, a walk, a set piece."""
    out = ['<g class="legend">']
    for text in _LEGEND:  # each mark, then its words
        out.append(_legend_mark(text, x, y - 1.2))
        out.append(f'<text class="plabel" x="{_n(x + 5.4)}" y="{_n(y)}" font-size="{TEXT_MM:g}">{escape(text)}</text>')
        x += 5.4 + text_size(text, TEXT_MM)[0] + 4
    out.append("</g>")
    return out


_LEGEND = ("person, facing", "席", "place", "walk, its time", "set piece, named")


def _legend_mark(what: str, x: float, y: float) -> str:
    """The mark of the legend's entry *what*, 3.6 mm wide, about (*x*, *y*) mm."""
    if what == "person, facing":
        return (f'<circle class="person" cx="{_n(x + 1.2)}" cy="{_n(y)}" r="1.2"/><line class="facing" '
                f'x1="{_n(x + 1.2)}" y1="{_n(y)}" x2="{_n(x + 4.2)}" y2="{_n(y)}" style="stroke-width:.5"/>')
    if what == "place":
        return f'<circle class="place" cx="{_n(x + 1.2)}" cy="{_n(y)}" r=".6"/>'
    if what.startswith("walk"):
        return (f'<line class="route" x1="{_n(x)}" y1="{_n(y)}" x2="{_n(x + 3.6)}" y2="{_n(y)}" '
                f'style="stroke-width:.5;stroke-dasharray:1.5 .8"/>')
    kind = "mat" if what == "席" else "thing piece"
    return f'<rect class="{kind}" x="{_n(x)}" y="{_n(y - 0.9)}" width="3.6" height="1.8" style="stroke-width:.2"/>'
