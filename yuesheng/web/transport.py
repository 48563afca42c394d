"""What the director's page plays the rite from: every member's track (``Production.motion``) and what sounds, as the
JSON its transport animates (``sheet.js.j2``: the plate at any instant, playing, scrubbed or jumped to a cue).

The script places a member exactly as ``Motion.position`` does, from the same steps: a walk (``Going``) is linear
along its route by the leg's per-point marks (the share of its seconds spent on reaching each point), a stand
(``Still``) turns from the way he walked to his facing in ``TURN`` seconds. Times are seconds from the start of the
rite, places in 步 (x east, y south); a start of -inf (on the ground from the start) is written null.

``{"turn", "tracks": {member: {"first": bool, "steps": [...]}}, "gestures": {cue: [[name, start, end]]},
"music": [[start, end, text]], "sung": [[start, end, piece, stanza, line, index]], "sounds": [[start, text]],
"names": {name: member}}`` (every name of a person on the ground, ``key``-folded, for ``?follow=NAME``);
a walk is ``["go", start, end, number, cue, route, marks, to, [fx, fy] | null]`` and a stand
``["at", start | null, x, y, place, [fx, fy] | null, [cx, cy] | null]`` (his facing, and the way he looked before).
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yuesheng.production import Production
    from yuesheng.staging.motion import Motion, Step
    from yuesheng.staging.rite import StagedRite


def _r(v: float) -> float:
    return round(v, 4)


def _vector(v: tuple[float, float] | None) -> list[float] | None:
    return [_r(v[0]), _r(v[1])] if v is not None else None


def _step(step: Step) -> list[Any]:
    """One step of a track as the script reads it (the module's docstring)."""
    from yuesheng.staging.motion import Going

    if isinstance(step, Going):
        leg = step.leg
        return ["go", _r(leg.start), _r(leg.end), leg.number, leg.cue, [[_r(p.x), _r(p.y)] for p in leg.route],
                [_r(m) for m in step.marks], leg.to, _vector(leg.facing.vector if leg.facing else None)]
    start = None if step.start == -math.inf else _r(step.start)
    return ["at", start, _r(step.point.x), _r(step.point.y), step.place,
            _vector(step.facing.vector if step.facing else None), _vector(step.came)]


def tracks(motion: Motion) -> dict[str, Any]:
    """Every member's steps, and whether he stands at his first walk's start from the beginning of the rite."""
    return {m: {"first": motion.entrance(m) == -math.inf, "steps": [_step(s) for s in motion.track(m)]}
            for m in motion.members}


def key(name: str) -> str:
    """A name as the page looks it up: NFKC, without spaces and '#', lower case (the page's script does the same)."""
    return re.sub(r"[\s#]", "", unicodedata.normalize("NFKC", name)).lower()


def names(production: Production, staged: StagedRite, on_ground: set[str]) -> dict[str, str]:
    """Every name ``persons.person`` reads as one member on the ground (衆賓 2, zhongbin#2, 主人, zhuren, a role the
    blocking names as another's; not a name two roles
    share) → that member, for the page's ``?follow=NAME``."""
    from yuesheng.errors import AmbiguousNameError
    from yuesheng.staging.persons import person

    sheet, out = production.sheet, {}
    for role, member in sheet.performers.items():
        numbered = [f" {n}" for n in range(1, member.count + 1)] if member.count > 1 else [""]
        for n in numbered:
            for name in (role + n, member.name + n):
                try:
                    found = person(name, sheet, staged.same).members
                except AmbiguousNameError:  # a name two roles share (卿 1): each by its id
                    continue
                if len(found) == 1 and found[0] in on_ground:
                    out[key(name)] = found[0]
    out.update({key(m): m for m in on_ground})
    return out


def transport_data(production: Production) -> dict[str, Any] | None:
    """The tracks, the formulas and what sounds, for the page's transport; None where no blocking is in force."""
    from yuesheng.outputs.frames import Sounding
    from yuesheng.staging.motion import TURN

    motion, staged = production.motion, production.staged
    if motion is None or staged is None:
        return None
    sounding = Sounding(production.timeline, production.sheet)
    gestures = {c: [[g.name, _r(g.start), _r(g.end)] for g in motion.gestures(c)] for c in motion.cues}
    return {"turn": TURN, "tracks": tracks(motion), "names": names(production, staged, set(motion.members)),
            "gestures": {c: g for c, g in gestures.items() if g},
            "music": [[_r(m.start), _r(m.end), m.text] for m in sounding.music],
            "sung": [[_r(s.start), _r(s.end), s.piece, s.stanza, s.line, s.index] for s in sounding.syllables],
            "sounds": [[_r(s.start), s.text] for s in sounding.sounds]}
