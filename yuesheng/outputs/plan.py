"""The ground plan of a rite as data and as one drawing (``yuesheng plan``): the hall and every place, and at a cue
everyone present with his facing, the cue's walks along their routes and what its duration is made of.

JSON (``plan_data``): the unit and axes, the hall (the 堂, walls, stairs, the named assumptions), the places — each
with the hanzi name the text uses and its source — and, with a cue, the people and moves. SVG (``plan_svg``): that
data drawn to scale, north up, with a scale bar in 步 and 尺.
"""

from __future__ import annotations

from html import escape
from typing import Any

from yuesheng.cuesheet import CueSheet
from yuesheng.staging.model import CHI_PER_BU, Derivation, Hall, Point, Stand
from yuesheng.staging.stage import CueStage, performer_of

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
        "stairs": [{"id": s.id, "name": s.name, "top": _xy(s.top), "foot": _xy(s.foot), "source": str(s.source)}
                   for s in hall.stairs],
        "assumptions": [{"id": a.id, "value": a.value, "text": a.text} for a in hall.assumptions],
    }


def _places(hall: Hall) -> list[dict[str, Any]]:
    return [{"id": p.id, "name": p.name, "at": _xy(p.point), "facing": p.facing.hanzi + "面" if p.facing else None,
             "file": p.head.hanzi if p.head else None, "source": str(p.source), "estimate": not p.source.page}
            for p in hall.places.values()]


def _people(stands: dict[str, Stand], sheet: CueSheet) -> list[dict[str, Any]]:
    return [{"id": s.who, "performer": performer_of(s.who), "name": person_name(s.who, sheet), "at": _xy(s.point),
             "facing": s.facing.hanzi + "面" if s.facing else None, "place": s.place}
            for s in sorted(stands.values(), key=lambda s: s.who)]


def plan_data(hall: Hall, sheet: CueSheet, *, at: CueStage | None = None,
              derivation: Derivation | None = None) -> dict[str, Any]:
    """The plan as plain data: the hall and places; with *at*, the cue's people, walks and duration."""
    out: dict[str, Any] = {"rite": sheet.rite_id, "unit": "步", "chi_per_bu": CHI_PER_BU, "axes": AXES,
                           "hall": _hall(hall), "places": _places(hall)}
    if at is not None:
        cue = sheet.cue(at.cue)
        out["cue"] = {"id": cue.id, "section": cue.section, "action": cue.action, "cite": str(cue.cite)}
        out["people"] = _people(at.stands, sheet)
        walks = derivation.walks if derivation else ()
        out["walks"] = [{"who": w.who, "name": person_name(w.who, sheet), "route": [_xy(p) for p in w.route],
                         "steps": w.length, "stairs": w.stairs, "seconds": float(w.seconds),
                         "pace": "趨" if w.run else "行"} for w in walks]
        if derivation is not None:
            out["duration"] = {"seconds": float(derivation.seconds),
                               "parts": [{"what": what, "seconds": float(s)} for what, s in derivation.parts]}
    return out


# --- the drawing ------------------------------------------------------------------------------------------------------

_PX = 12  # pixels a 步


def _box(data: dict[str, Any]) -> tuple[float, float, float, float]:
    points = [p for w in data["hall"]["walls"] for p in w["points"]] + [p["at"] for p in data["places"]]
    points += [p["at"] for p in data.get("people", [])]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs) - 3, min(ys) - 3, max(xs) + 3, max(ys) + 6


def _facing_tick(x: float, y: float, facing: str | None) -> str:
    from yuesheng.staging.model import Facing

    f = Facing.parse(facing) if facing else None
    if f is None:
        return ""
    dx, dy = f.vector
    return (f'<line x1="{x:g}" y1="{y:g}" x2="{x + dx * 0.6:g}" y2="{y + dy * 0.6:g}" class="facing"/>')


def plan_svg(data: dict[str, Any]) -> str:
    """The plan drawn to scale (north up), with the cue's people and walks if the data has them."""
    x0, y0, x1, y1 = _box(data)
    w, h = x1 - x0, y1 - y0
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="{x0:g} {y0:g} {w:g} {h:g}" width="{w * _PX:.0f}" '
           f'height="{h * _PX:.0f}" font-family="serif">',
           "<style>.wall{fill:none;stroke:#333;stroke-width:.25}.tang{fill:#eee4cf;stroke:#333;stroke-width:.15}"
           ".stair{stroke:#7a5;stroke-width:.8}.place{fill:#999}.plabel{font-size:.55px;fill:#666}"
           ".person{fill:#b22}.facing{stroke:#b22;stroke-width:.12}.who{font-size:.6px;fill:#b22}"
           ".route{fill:none;stroke:#26c;stroke-width:.15;stroke-dasharray:.4 .2}.title{font-size:1.2px}</style>"]
    hall = data["hall"]
    (tx0, ty0), (tx1, ty1) = hall["tang"]["north_west"], hall["tang"]["south_east"]
    out.append(f'<rect class="tang" x="{tx0:g}" y="{ty0:g}" width="{tx1 - tx0:g}" height="{ty1 - ty0:g}"/>')
    for wall in hall["walls"]:
        pts = " ".join(f"{x:g},{y:g}" for x, y in wall["points"])
        out.append(f'<polyline class="wall" points="{pts}"><title>{escape(wall["name"])}</title></polyline>')
    for s in hall["stairs"]:
        out.append(f'<line class="stair" x1="{s["top"][0]:g}" y1="{s["top"][1]:g}" x2="{s["foot"][0]:g}" '
                   f'y2="{s["foot"][1]:g}"><title>{escape(s["name"])}</title></line>')
    for p in data["places"]:
        x, y = p["at"]
        out.append(f'<circle class="place" cx="{x:g}" cy="{y:g}" r=".12"><title>{escape(p["name"])}: '
                   f'{escape(p["source"])}</title></circle>')
        if "people" not in data:
            out.append(f'<text class="plabel" x="{x + 0.2:g}" y="{y - 0.15:g}">{escape(p["name"])}</text>')
    for walk in data.get("walks", []):
        pts = " ".join(f"{x:g},{y:g}" for x, y in walk["route"])
        out.append(f'<polyline class="route" points="{pts}"><title>{escape(walk["name"])}: {walk["steps"]:g} 步, '
                   f'{walk["seconds"]:.0f} s ({walk["pace"]})</title></polyline>')
    for person in data.get("people", []):
        x, y = person["at"]
        out.append(f'<circle class="person" cx="{x:g}" cy="{y:g}" r=".25"><title>{escape(person["name"])}'
                   f'</title></circle>{_facing_tick(x, y, person["facing"])}')
        out.append(f'<text class="who" x="{x + 0.3:g}" y="{y + 0.2:g}">{escape(person["name"])}</text>')
    out += _furniture(data, x0, y1)
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _furniture(data: dict[str, Any], x0: float, y1: float) -> list[str]:
    """The title, a scale bar of 5 步 (30 尺) and the north arrow."""
    title = data["hall"]["name"] + (f" — {data['cue']['id']} {data['cue']['action']}" if "cue" in data else "")
    bx, by = x0 + 1, y1 - 1.5
    return [f'<text class="title" x="{x0 + 1:g}" y="{y1 - 3:g}">{escape(title)}</text>',
            f'<line x1="{bx:g}" y1="{by:g}" x2="{bx + 5:g}" y2="{by:g}" stroke="#000" stroke-width=".15"/>',
            f'<text class="plabel" x="{bx:g}" y="{by + 0.9:g}">5 步 = {5 * CHI_PER_BU} 尺</text>',
            f'<path d="M{bx + 8:g},{by + 0.5:g} l.5,-1.5 l.5,1.5 z" fill="#000"/>',
            f'<text class="plabel" x="{bx + 8.2:g}" y="{by - 1.2:g}">北</text>']
