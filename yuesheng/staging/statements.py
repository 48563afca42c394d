"""The texts' spatial statements, checked against a hall: each holds, or is a problem at its file:line:col.

Kinds: ``distance`` (其間容弓: the two 物 1 步 apart; ``along: y`` measures north–south only, as 侯道五十弓),
``direction`` (于中西: the place lies west of the other, within 22.5°; ``along: x``: only east or west of it),
``align`` (南當洗: the same y; 西當西序: the same x), ``file`` (the place's file has this head: 北上) and
``facing`` (who stands there faces so: 東面).
"""

from __future__ import annotations

import math

from yuesheng.errors import Problem
from yuesheng.staging.model import Facing, Hall, Statement

_TOLERANCE = 0.05  # 步


def _holds(hall: Hall, st: Statement) -> str:
    """'' if *st* holds in *hall*, else what is found instead."""
    a = hall.places[st.a]
    b = hall.places[st.b].point if st.b else None
    if st.kind == "distance" and b is not None:
        found = {"x": abs(a.point.x - b.x), "y": abs(a.point.y - b.y)}.get(st.axis, a.point.distance(b))
        return "" if abs(found - st.steps) <= _TOLERANCE else f"{found:.2f} 步 apart, not {st.steps:g}"
    if st.kind == "direction" and b is not None:
        want = Facing.parse(st.value)
        dx, dy = a.point.x - b.x, a.point.y - b.y
        if want is None or math.hypot(dx, dy) == 0:
            return f"no direction {st.value!r} from a point to itself"
        wx, wy = want.vector
        if st.axis:  # only east–west (x) or north–south (y) is stated: 門左 is west of the gate, however far in
            ok = dx * wx > _TOLERANCE if st.axis == "x" else dy * wy > _TOLERANCE
            return "" if ok else f"it lies at ({dx:+.2f}, {dy:+.2f}) 步 from it"
        cos = (dx * wx + dy * wy) / math.hypot(dx, dy)
        return "" if cos >= math.cos(math.radians(22.5)) else f"it lies at ({dx:+.2f}, {dy:+.2f}) 步 from it"
    if st.kind == "align" and b is not None:
        off = abs(a.point.y - b.y) if st.value == "y" else abs(a.point.x - b.x)
        return "" if off <= _TOLERANCE else f"{off:.2f} 步 off the line"
    if st.kind == "file":
        return "" if a.head and a.head.hanzi == st.value else f"its file has {a.head.hanzi if a.head else 'no'} head"
    if st.kind == "facing":
        return "" if a.facing and a.facing is Facing.parse(st.value) else \
            f"faces {a.facing.hanzi + '面' if a.facing else 'no way'}"
    return f"unknown kind {st.kind!r}"


def statement_problems(hall: Hall) -> list[Problem]:
    """Every statement of *hall* that does not hold, quoting its page."""
    out = []
    for st in hall.statements:
        if found := _holds(hall, st):
            about = f"{hall.places[st.a].name}" + (f" / {hall.places[st.b].name}" if st.b else "")
            out.append(Problem(hall.file, st.line, st.col, "", f"{st.kind} {about}: the text says {st.value or ''}"
                               f"{f'{st.steps:g} 步' if st.kind == 'distance' else ''} ({st.source}); {found}",
                               "staging"))
    return out
