"""The plates of a staged rite (in the manner of 張惠言's 儀禮圖): the data the director's page draws them from.

A rite whose blocking is complete (``Timeline.staging``) gets one plate per stage of the rite — the cue sheet's
sections (陳設, 迎賓, 第一番射 …) — showing everyone on the ground with his facing, each file with its head, and the
席 with the way their sitters face. The page's script draws the plates from this data (``sheet.js.j2``) so that
one piece of code places the labels, for the plates as printed and for a selected cue: at a cue, everyone as he
stands after it and the cue's walks along their routes with their times; for a person, his track through the rite.

Only the stands that a cue changes are sent (the script replays them), in 步, x east and y south.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from yuesheng.outputs.plan import is_mat, screens, targets
from yuesheng.staging.model import CHI_PER_BU, Hall, Stand
from yuesheng.staging.rite import StagedRite
from yuesheng.timeline import Timeline

CHI_CM = 23.1  # the 尺 taken for metres (docs/staging.md: the pace's estimate)
MARGIN = 2.0  # 步 around everything drawn
INSET = (8.0, 2.0, 16.0)  # 步 the printed inset shows west and east of the 堂, north of it, and south of its edge


def _r(v: float) -> float:
    return round(v, 2)


def _hall(hall: Hall) -> dict[str, Any]:
    (x0, y0), (x1, y1) = (hall.tang[0].x, hall.tang[0].y), (hall.tang[1].x, hall.tang[1].y)
    mats = [[p.name, _r(p.point.x), _r(p.point.y), p.facing.hanzi if p.facing else "",
             list(p.facing.vector) if p.facing else [0, 1], p.head.hanzi if p.head else ""]
            for p in hall.places.values() if is_mat(p.name)]
    return {"name": hall.name, "tang": [_r(x0), _r(y0), _r(x1), _r(y1)],
            "walls": [[w.name, [[_r(p.x), _r(p.y)] for p in w.points]] for w in hall.walls],
            "stairs": [[s.name, _r(s.top.x), _r(s.top.y), _r(s.foot.x), _r(s.foot.y)] for s in hall.stairs],
            "places": [[p.name, _r(p.point.x), _r(p.point.y)] for p in hall.places.values() if not is_mat(p.name)],
            "mats": mats, "targets": [[name, _r(a), _r(b), _r(y)] for name, a, b, y in targets(hall)],
            "screens": [[name, _r(x), _r(y)] for name, x, y in screens(hall)]}


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


def plates_data(timeline: Timeline, names: Mapping[str, str]) -> dict[str, Any] | None:
    """The hall and each cue's changed stands and walks, for the page's plates; None if not staged."""
    staged = timeline.staging
    if staged is None:
        return None
    members: dict[str, str] = {}
    cues: dict[str, Any] = {}
    before: dict[str, Stand] = {}
    for t in timeline.cues:
        cue = t.cue
        on_ground = staged.cues.get(cue.id)
        if on_ground is None:
            continue
        changed = [_stand(s) for who, s in on_ground.stands.items() if before.get(who) is not s]
        before = dict(on_ground.stands)
        for who in on_ground.stands:
            if who not in members:
                base, _, n = who.partition("#")
                members[who] = names.get(base, base) + (f" {n}" if n else "")
        walks = [[w.who, [[_r(p.x), _r(p.y)] for p in w.route], _r(w.length), _r(float(w.seconds)),
                  "趨" if w.run else "行"] for w in on_ground.derivation.walks]
        cues[cue.id] = {"set": changed, "walks": walks}
    (x0, y0), (x1, y1) = (staged.hall.tang[0].x, staged.hall.tang[0].y), (staged.hall.tang[1].x, staged.hall.tang[1].y)
    inset = [_r(x0 - INSET[0]), _r(y0 - INSET[1]), _r(x1 - x0 + 2 * INSET[0]), _r(y1 - y0 + INSET[1] + INSET[2])]
    return {"hall": _hall(staged.hall), "box": _box(staged), "inset": inset, "cues": cues, "members": members,
            "chi_per_bu": CHI_PER_BU, "chi_cm": CHI_CM}
