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
from yuesheng.outputs.labels import ASCENT, Box, Label, Placed, place_labels, text_size
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
        "tang": {"north_west": _xy(hall.tang[0]), "south_east": _xy(hall.tang[1])},
        "walls": [{"name": w.name, "points": [_xy(p) for p in w.points], "source": str(w.source)} for w in hall.walls],
        "stairs": [{"id": s.id, "name": s.name, "top": _xy(s.top), "foot": _xy(s.foot), "source": str(s.source),
                    "layer": s.source.layer, "whose": _whose(s.whose)} for s in hall.stairs],
        "assumptions": [{"id": a.id, "value": a.value, "text": a.text} for a in hall.assumptions],
        "targets": [{"name": name, "from": [x0, y], "to": [x1, y]} for name, x0, x1, y in targets(hall)],
        "screens": [{"name": name, "at": [x, y]} for name, x, y in screens(hall)],
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
          ".who{fill:#b22}.time{fill:#2456b0}.mlabel{fill:#5b4a36}.plabel{fill:#666}</style>")


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


def plate_labels(data: dict[str, Any]) -> tuple[list[Label], list[Box]]:
    """The labels of the plate (people, walk times, mats, places) and what they must not cover: people, mats, the
    places' dots, walls and stairs."""
    people = data.get("people", [])
    labels = _people_labels(people)
    obstacles = [b for p in people for b in _person_boxes(p["at"][0], p["at"][1], p["facing"])]
    obstacles += [b for w in data["hall"]["walls"] for b in _line_boxes(w["points"], 0.13)]
    obstacles += [b for s in data["hall"]["stairs"] for b in _line_boxes([s["top"], s["foot"]], 0.4)]
    obstacles += [b for t in data["hall"]["targets"] for b in _line_boxes([t["from"], t["to"]], 0.25)]
    obstacles += [(x - 0.55, y - 0.05, x + 0.55, y + 0.35) for f in data["hall"]["screens"] for x, y in [f["at"]]]
    for walk in data.get("walks", []):
        route = walk["route"]
        if walk["steps"] > 0.3:
            mid = (len(route) - 1) // 2
            (ax, ay), (bx, by) = route[mid], route[min(mid + 1, len(route) - 1)]
            labels.append(Label(f"{walk['seconds']:.0f} s", (ax + bx) / 2, (ay + by) / 2, FONT, "time", 1))
    for p in data["places"]:
        x, y = p["at"]
        if is_mat(p["name"]):
            obstacles.append(_mat_box(x, y, p["facing"]))
            labels.append(Label(p["name"].split(" (")[0], x, y, PLACE_FONT, "mlabel", 2))  # where it lies: the title
            continue
        obstacles.append((x - PLACE_R, y - PLACE_R, x + PLACE_R, y + PLACE_R))
        if "people" not in data or len(p["name"]) <= 2:  # at a cue, the short names (物, 中, 楅 …) alone
            labels.append(Label(p["name"], x, y, PLACE_FONT, "plabel", 3))
    return labels, obstacles


def _bounds(data: dict[str, Any], placed: list[Placed]) -> Box:
    """The ground the plate shows: walls, places, people, routes and every label with its leader, 1 步 around."""
    points = [p for w in data["hall"]["walls"] for p in w["points"]] + [p["at"] for p in data["places"]]
    points += [p["at"] for p in data.get("people", [])] + [p for w in data.get("walks", []) for p in w["route"]]
    points += [(b[0], b[1]) for p in placed for b in [p.box]] + [(p.box[2], p.box[3]) for p in placed]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs) - 1, min(ys) - 1, max(xs) + 1, max(ys) + 1


def _title(data: dict[str, Any]) -> str:
    cue = f" — {data['cue']['id']} {data['cue']['action']}" if "cue" in data else ""
    return f"{data['hall']['name']}{cue}"


def plan_svg(data: dict[str, Any]) -> str:
    """The plan drawn to scale (north up), with the cue's people and walks if the data has them; no label covers
    another label, a person or a mat (``labels``), and the drawing grows to hold every label."""
    labels, obstacles = plate_labels(data)
    placed = place_labels(labels, obstacles)
    x0, y0, x1, y1 = _bounds(data, placed)
    x1 = max(x1, x0 + 2 + max(text_size(_title(data), TITLE_FONT)[0], 12))
    w, h = x1 - x0, y1 + 5 - y0  # 5 步 below for the title, the scale and north
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{_n(x0)} {_n(y0)} {_n(w)} {_n(h)}" '
           f'width="{w * _PX:.0f}" height="{h * _PX:.0f}" font-family="{FONTS}">', _STYLE]
    out += _ground(data)
    out += _drawn_labels(placed)
    out += _furniture(_title(data), x0, y1)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _ground(data: dict[str, Any]) -> list[str]:
    """The hall, the places and mats, the walks and the people."""
    hall = data["hall"]
    (tx0, ty0), (tx1, ty1) = hall["tang"]["north_west"], hall["tang"]["south_east"]
    out = [f'<rect class="tang" x="{_n(tx0)}" y="{_n(ty0)}" width="{_n(tx1 - tx0)}" height="{_n(ty1 - ty0)}"/>']
    for wall in hall["walls"]:
        pts = " ".join(f"{_n(x)},{_n(y)}" for x, y in wall["points"])
        out.append(f'<polyline class="wall" points="{pts}"><title>{escape(wall["name"])}</title></polyline>')
    for t in hall["targets"]:
        (ax, ay), (bx, by) = t["from"], t["to"]
        out.append(f'<line class="target" x1="{_n(ax)}" y1="{_n(ay)}" x2="{_n(bx)}" y2="{_n(by)}">'
                   f'<title>{escape(t["name"])}</title></line>')
    for f in hall["screens"]:
        x, y = f["at"]
        out.append(f'<path class="screen" d="M{_n(x - 0.5)},{_n(y + 0.3)} v-.3 h1 v.3">'
                   f'<title>{escape(f["name"])}</title></path>')
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


def _furniture(title: str, x0: float, y: float) -> list[str]:
    """Below the drawing (from *y*): the title, a scale bar of 5 步 (30 尺) and the north arrow."""
    bx, by = x0 + 1, y + 3.2
    return [f'<text class="title" x="{_n(bx)}" y="{_n(y + 0.2 + ASCENT * TITLE_FONT)}" font-size="{TITLE_FONT:g}">'
            f'{escape(title)}</text>',
            f'<line x1="{_n(bx)}" y1="{_n(by)}" x2="{_n(bx + 5)}" y2="{_n(by)}" stroke="#000" stroke-width=".15"/>',
            f'<text class="plabel" x="{_n(bx)}" y="{_n(by + 0.9)}" font-size="{PLACE_FONT:g}">'
            f'5 步 = {5 * CHI_PER_BU} 尺</text>',
            f'<path d="M{_n(bx + 8)},{_n(by + 0.8)} l.5,-1.5 l.5,1.5 z" fill="#000"/>',
            f'<text class="plabel" x="{_n(bx + 9.3)}" y="{_n(by + 0.8)}" font-size="{PLACE_FONT:g}">北</text>']
