"""The shooting model: which hits count in each round, who looses first, where the arrows fall, the tally."""

from __future__ import annotations

from fractions import Fraction

import pytest

from yuesheng.cuesheet import Archery, Arrow, Cite, Count, Pair, Round, Shooter
from yuesheng.timeline.archery import Tally, counts, shoot_with_music, shoot_without_music, tally

CITE = Cite("6-12b", "不鼓不釋")
TOLERANCE = Fraction(1, 4)
PIERCED, UNPIERCED, MISS = Arrow(True, True), Arrow(True, False), Arrow(False, False)


def _round(count: Count, **kw) -> Round:
    return Round("r", ("she",), ("ou",), count, CITE, **kw)


def _off(arrow: Arrow, seconds: str) -> Arrow:
    return Arrow(arrow.hit, arrow.pierce, Fraction(seconds))


@pytest.mark.parametrize(("count", "arrow", "pierce", "expected"), [
    (Count.NONE, PIERCED, True, False),  # 獲而未釋獲
    (Count.PIERCE, PIERCED, True, True),
    (Count.PIERCE, UNPIERCED, True, False),  # 不貫不釋
    (Count.PIERCE, MISS, True, False),
    (Count.DRUM, PIERCED, True, True),
    (Count.DRUM, UNPIERCED, True, False),  # 釋獲如初: 不貫不釋 still holds
    (Count.DRUM, UNPIERCED, False, True),  # reading drum-only
    (Count.DRUM, _off(PIERCED, "0.3"), True, False),  # 不鼓不釋
    (Count.DRUM, _off(PIERCED, "-0.25"), True, True),  # on the edge of the tolerance
    (Count.DRUM, _off(UNPIERCED, "0.3"), False, False),
])
def test_what_counts(count, arrow, pierce, expected):
    assert counts(_round(count), arrow, "a", tolerance=TOLERANCE, pierce=pierce) is expected


def test_exempt_and_any_hit_performers():
    rnd = _round(Count.DRUM, exempt=("jun",), any_hit=("jun",))
    off_unpierced = _off(UNPIERCED, "2")
    assert counts(rnd, off_unpierced, "jun", tolerance=TOLERANCE)  # 不以樂志, 公則釋獲
    assert not counts(rnd, off_unpierced, "bin", tolerance=TOLERANCE)
    assert not counts(_round(Count.DRUM, exempt=("jun",)), off_unpierced, "jun", tolerance=TOLERANCE)
    assert counts(_round(Count.PIERCE, any_hit=("jun",)), UNPIERCED, "jun", tolerance=TOLERANCE)
    assert not counts(rnd, MISS, "jun", tolerance=TOLERANCE)


def _archery(script: tuple[Arrow, ...], first: Shooter = Shooter.UPPER) -> tuple[Archery, Round, Pair]:
    pair = Pair("ou", "耦", "bin", "jun", first)
    rnd = _round(Count.DRUM, exempt=("jun",))
    return Archery(5, 1, CITE, TOLERANCE, {"ou": pair}, (rnd,), script={("r", "ou"): script}), rnd, pair


def test_with_music_the_first_archer_aims_at_the_stroke_and_the_second_at_the_half():
    archery, rnd, pair = _archery((PIERCED,) * 8)
    strokes, releases = shoot_with_music(archery, rnd, pair, Fraction(10), Fraction(20), jie_total=5, seed=0)
    assert [t for _, t, accent in strokes if accent] == [10, 30, 50, 70, 90]  # 間若一
    assert [r.archer for r in releases] == ["上射", "下射"] * 4
    assert [r.jie for r in releases] == [2, 2, 3, 3, 4, 4, 5, 5]  # the first 節 is for listening
    assert [r.time for r in releases[:2]] == [30, 40]


def test_the_lower_archer_may_loose_first():
    archery, rnd, pair = _archery((PIERCED,) * 8, first=Shooter.LOWER)  # 公下射也而先發 (鄭注 10-9a)
    _, releases = shoot_with_music(archery, rnd, pair, Fraction(0), Fraction(20), jie_total=5, seed=0)
    assert [(r.archer, r.performer) for r in releases[:2]] == [("下射", "jun"), ("上射", "bin")]
    assert releases[0].target == 20 and releases[1].target == 30
    silent = shoot_without_music(archery, rnd, pair, Fraction(0), Fraction(80), seed=0)
    assert [r.performer for r in silent] == ["jun", "bin"] * 4


def test_releases_carry_pierce_and_the_tally_adds_them_by_side():
    archery, rnd, pair = _archery((PIERCED, UNPIERCED, PIERCED, MISS, UNPIERCED, PIERCED, MISS, MISS))
    _, releases = shoot_with_music(archery, rnd, pair, Fraction(0), Fraction(20), jie_total=5, seed=0)
    assert [r.pierce for r in releases[:3]] == [True, False, True]
    assert [r.counted for r in releases] == [True, False, True, False, False, True, False, False]
    assert tally("r", releases) == Tally("r", 2, 1)
    assert tally("r", releases).announcement == "右賢于左1奇"
