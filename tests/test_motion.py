"""Where every member is at any instant (``staging.motion``, ``Production.motion``): a standing person is where
``plan --at`` puts him, a walker lies on his route, each member's legs are numbered, continuous and in time."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

import yuesheng
from yuesheng.outputs.plan import plan_data
from yuesheng.staging.model import Point
from yuesheng.staging.motion import TURN, Motion


@pytest.fixture(scope="module")
def dashe(repertoire):
    production = yuesheng.produce(yuesheng.load("dashe", repertoire=repertoire))
    assert production.motion is not None and production.staged is not None
    return production


def _to_segment(p: Point, a: Point, b: Point) -> float:
    dx, dy = b.x - a.x, b.y - a.y
    d2 = dx * dx + dy * dy
    f = 0.0 if d2 == 0 else max(0.0, min(1.0, ((p.x - a.x) * dx + (p.y - a.y) * dy) / d2))
    return math.hypot(p.x - a.x - f * dx, p.y - a.y - f * dy)


def _off_route(p: Point, route: tuple[Point, ...]) -> float:
    return min(_to_segment(p, a, b) for a, b in zip(route, route[1:], strict=False))


def test_a_standing_person_is_where_plan_at_puts_him(dashe):
    """Just before each next cue begins, everyone not walking stands where ``plan --at`` draws him at the cue."""
    motion, staged = dashe.motion, dashe.staged
    cues = motion.cues
    checked = 0
    for cue, after in zip(cues, cues[1:], strict=False):
        start, _ = motion.span(cue)
        t = motion.span(after)[0] - 1e-6
        if t < start:
            continue
        assert motion.cue_at(t) == cue
        for person in plan_data(staged.hall, dashe.sheet, at=cue, staged=staged.cues[cue])["people"]:
            at = motion.position(person["id"], t)
            assert at is not None, (cue, person["id"])
            if at.walking:  # held back by a walk of an earlier cue still under way (plan: to 0.001 步)
                continue
            assert [at.point.x, at.point.y] == pytest.approx(person["at"], abs=5e-4), (cue, person["id"])
            assert at.place == person["place"]
            if at.facing is not None:  # None: still turning to it
                assert at.facing.hanzi + "面" == person["facing"]
            checked += 1
    assert checked > 10_000


def test_at_twenty_instants_walkers_lie_on_their_routes(dashe):
    motion = dashe.motion
    legs = sorted((leg for m in motion.members for leg in motion.legs(m)), key=lambda leg: leg.start)
    assert len(legs) > 200
    seen = 0
    for leg in legs[:: len(legs) // 20][:20]:
        for share in (0.0, 0.37, 0.5, 0.93):
            t = leg.start + share * leg.seconds
            at = motion.position(leg.member, t)
            assert at is not None and at.leg == leg
            assert _off_route(at.point, leg.route) < 0.1
            seen += 1
        everyone = motion.at(leg.start + 0.5 * leg.seconds)
        for who, p in everyone.items():
            if p.leg is not None:
                assert _off_route(p.point, p.leg.route) < 0.1, who
    assert seen == 80


def test_a_walk_starts_at_its_route_and_ends_at_its_stand(dashe):
    motion, staged = dashe.motion, dashe.staged
    for member in motion.members:
        legs = motion.legs(member)
        for leg, after in zip(legs, [*legs[1:], None], strict=False):
            start = motion.position(member, leg.start)
            assert start is not None and start.point.distance(leg.route[0]) < 1e-9
            end = motion.position(member, leg.end)
            assert end is not None and end.point.distance(leg.route[-1]) < 1e-9
            assert end.walking == (after is not None and after.start == leg.end)  # straight on to his next walk
            if leg.to == staged.cues[leg.cue].stands[member].place:
                assert end.point == staged.cues[leg.cue].stands[member].point


def test_legs_are_numbered_in_time_and_continuous(dashe):
    motion = dashe.motion
    for member in motion.members:
        legs = motion.legs(member)
        assert [leg.number for leg in legs] == list(range(1, len(legs) + 1))
        for leg in legs:
            assert leg.start <= leg.end and leg.member == member
            assert motion.span(leg.cue)[0] <= leg.start
        for a, b in zip(legs, legs[1:], strict=False):
            assert a.end <= b.start, member
            assert a.route[-1].distance(b.route[0]) < 1e-9, member
            assert a.to == b.origin, member


def test_a_walk_goes_at_the_derivations_pace(dashe):
    """Each leg takes its walk's seconds (cues long enough for their derivation), and its walker turns to his
    facing in TURN seconds after arriving."""
    motion, staged = dashe.motion, dashe.staged
    for cue in motion.cues:
        walks = {w.who: w for w in staged.cues[cue].derivation.walks}
        for member, w in walks.items():
            leg = next(leg for leg in motion.legs(member) if leg.cue == cue)
            assert leg.seconds == pytest.approx(float(w.seconds)) and leg.route == w.route
    leg = next(leg for m in motion.members for leg in motion.legs(m) if leg.facing is not None and leg.seconds > 1)
    turning = motion.position(leg.member, leg.end + TURN / 2)
    assert turning is not None and turning.facing is None and turning.heading is not None
    assert math.hypot(*turning.heading) == pytest.approx(1.0)
    turned = motion.position(leg.member, leg.end + TURN)
    assert turned is not None and turned.facing == leg.facing and turned.heading == leg.facing.vector


def test_the_formulas_follow_the_longest_walk(dashe):
    motion, staged = dashe.motion, dashe.staged
    for cue in motion.cues:
        derivation = staged.cues[cue].derivation
        gestures = motion.gestures(cue)
        named = [name for name, _ in derivation.parts if not name.startswith("walk:")]
        assert [g.name for g in gestures] == named
        longest = max((float(w.seconds) for w in derivation.walks), default=0.0)
        at = motion.span(cue)[0] + longest
        for g in gestures:
            assert g.start == pytest.approx(at)
            at = g.end


def test_a_cue_shorter_than_its_derivation_is_played_faster(dashe):
    """A measured duration shorter than the derivation: everyone stands where the cue leaves him by its end."""
    staged = dashe.staged
    cue = max(staged.cues, key=lambda c: staged.cues[c].derivation.seconds)
    half = float(staged.cues[cue].derivation.seconds / 2)
    spans = {c: (n * 1e4, n * 1e4 + (half if c == cue else 5e3)) for n, c in enumerate(staged.cues)}
    motion = Motion(staged, spans)
    end = spans[cue][1]
    for member, stand in staged.cues[cue].stands.items():
        at = motion.position(member, end)
        assert at is not None and not at.walking and at.point == stand.point
    assert motion.gestures(cue)[-1].end == pytest.approx(end)
    assert staged.cues[cue].derivation.seconds > Fraction(0)


def test_a_member_placed_at_a_later_cue_is_not_on_the_ground_before_it(dashe):
    motion, staged = dashe.motion, dashe.staged
    first = set(staged.cues[motion.cues[0]].stands)
    later = [m for m in motion.members if m not in first]
    for member in later:
        cue = next(c for c in motion.cues if member in staged.cues[c].stands)
        assert motion.position(member, motion.span(cue)[0] - 1e-3) is None
    assert motion.cue_at(-1.0) is None
    everyone = motion.at(-1.0)
    assert set(everyone) == first and all(not p.walking for p in everyone.values())


def test_a_rite_without_a_blocking_has_no_motion(tmp_path, repertoire):
    from yuesheng.production import cue_path

    sheet = tmp_path / "cues" / "xiangshe.yaml"
    sheet.parent.mkdir()
    sheet.write_text(cue_path("xiangshe").read_text(encoding="utf-8"), encoding="utf-8")
    assert yuesheng.produce(yuesheng.load(sheet, repertoire=repertoire)).motion is None
