"""The shooting: 節 per 耦, the releases of 拾發, which hits count, and the 釋獲 tally.

How a round with music is laid out (鄭注 6-12b: 鄉射之鼓五節，歌五終，所以將八矢。
一節之間當拾發，四節四拾，其一節先以聽也; 6-34b: 每一耦射歌五終也):

- each 耦 gets the piece sung ``jie_total`` times, one 終 per 節; the song starts
  again for the next 耦, after the round's changeover time;
- the 節 fall at the start of each 終, evenly spaced (間若一者，重節, 6-13a);
- in the first ``jie_listen`` 節 nobody shoots; in each later 節 the pair loose one
  arrow each, 上射 then 下射 (拾發), or 下射 first where the pair says so (大射:
  the 公 is 下射 but looses first, 鄭注 10-9a 公下射也而先發不留尊也). The texts
  do not say where in the 節 each arrow falls: yuesheng aims the first archer's
  arrow at the 節's drum stroke and the second's at the half-節 stroke, which the
  drum also sounds, so that both arrows can answer the drum (皆應鼓與歌之節乃釋算, 6-13a);
- a release counts in such a round only if it hits within ``tolerance`` of its
  stroke (不鼓不釋, 6-12b) and, by default, pierces: the round's counting is 釋獲如初
  (鄉射 6-13a, 大射 10-23a), so the second round's 不貫不釋 (5-33a, 10-6a) still
  holds. The reading that counts every hit on the drum, pierced or not, passes
  ``pierce=False``. Performers exempt from the music (大射: 公 不以樂志, 10-23a)
  need not be on the drum; those of a round's ``any_hit`` need not pierce (大射:
  中離維綱揚觸梱復公則釋獲, 10-5a).

A round without music is an action of a given length: the pairs shoot one after
another, the eight arrows of a pair evenly spread over its share. The first
round counts nothing (獲而未釋獲); the second counts hits that pierce (不貫不釋).

The tally (6-4a–4b): the 上射's counted hits go to the right, the 下射's to the
left; two 算 make a 純, one left over is a 奇; the winner is announced as
右賢于左 N純 M奇, 左賢于右 …, or 左右鈞.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction

from yuesheng.cuesheet.model import Archery, Arrow, Count, Pair, Round, Shooter

ARROWS_PER_PAIR = 8  # 乘矢: four each


@dataclass(frozen=True, slots=True)
class Release:
    """One arrow loosed: who, when (seconds), aimed at which stroke, and whether it counts."""

    round: str
    pair: str
    archer: str  # 上射 | 下射
    performer: str
    arrow: int  # 1..8 in shooting order
    time: Fraction
    target: Fraction | None  # the drum stroke aimed at, in a round with music
    jie: int  # the 節 it belongs to (0 in a round without music)
    hit: bool
    pierce: bool
    counted: bool


def counts(rnd: Round, arrow: Arrow, performer: str, *, tolerance: Fraction, pierce: bool = True) -> bool:
    """Whether *arrow* of *performer* is counted (釋獲) in *rnd*.

    NONE counts nothing; PIERCE counts hits that pierce (不貫不釋); DRUM counts hits on
    the drum (不鼓不釋) that also pierce unless *pierce* is False (釋獲如初). The round's
    ``exempt`` performers need not be on the drum (不以樂志), its ``any_hit`` performers
    need not pierce (公則釋獲).
    """
    if rnd.count is Count.NONE or not arrow.hit:
        return False
    pierced = arrow.pierce or performer in rnd.any_hit
    if rnd.count is Count.PIERCE:
        return pierced
    return (pierced or not pierce) and (performer in rnd.exempt or abs(arrow.offset) <= tolerance)


@dataclass(frozen=True, slots=True)
class Tally:
    """The 釋獲 count of a round: 算 on the right (上射) and left (下射), and the announcement."""

    round: str
    right: int
    left: int

    @property
    def announcement(self) -> str:
        """右賢于左 N純 M奇 / 左賢于右 … / 左右鈞 (鄭注 6-4b)."""
        if self.right == self.left:
            return "左右鈞"
        winner = "右賢于左" if self.right > self.left else "左賢于右"
        chun, qi = divmod(abs(self.right - self.left), 2)
        return winner + (f"{chun}純" if chun else "") + (f"{qi}奇" if qi else "")


def arrows(archery: Archery, rnd: Round, pair: Pair, *, seed: int) -> tuple[Arrow, ...]:
    """The pair's eight arrows: those scripted, then the seeded random model for the rest."""
    scripted = archery.script.get((rnd.id, pair.id), ())
    rng = random.Random(f"{seed}:{rnd.id}:{pair.id}")
    out = list(scripted)
    while len(out) < ARROWS_PER_PAIR:
        hit = rng.random() < archery.hit_rate
        pierce = hit and rng.random() < archery.pierce_rate
        offset = Fraction(round(rng.gauss(0, float(archery.offset_sd)) * 1000), 1000)
        out.append(Arrow(hit, pierce, offset))
    return tuple(out)


def _archer(pair: Pair, n: int) -> tuple[str, str]:
    """Who looses the *n*-th arrow (from 0): the pair alternate, 上射 first unless the pair says lower."""
    upper_turn = (n % 2 == 0) == (pair.first == Shooter.UPPER)
    return ("上射", pair.upper) if upper_turn else ("下射", pair.lower)


def shoot_with_music(archery: Archery, rnd: Round, pair: Pair, start: Fraction, zhong_length: Fraction, *,
                     jie_total: int, seed: int,
                     pierce: bool = True) -> tuple[list[tuple[int, Fraction, bool]], list[Release]]:
    """Drum strokes (節 number, time, accented) and releases of one 耦 whose song starts at *start*."""
    strokes: list[tuple[int, Fraction, bool]] = []
    for jie in range(1, jie_total + 1):
        at = start + (jie - 1) * zhong_length
        strokes += [(jie, at, True), (jie, at + zhong_length / 2, False)]
    listen = jie_total - ARROWS_PER_PAIR // 2
    releases = []
    for n, arrow in enumerate(arrows(archery, rnd, pair, seed=seed)):
        jie = listen + 1 + n // 2
        target = start + (jie - 1) * zhong_length + (zhong_length / 2 if n % 2 else 0)
        archer, performer = _archer(pair, n)
        releases.append(Release(rnd.id, pair.id, archer, performer, n + 1, max(start, target + arrow.offset), target,
                                jie, arrow.hit, arrow.pierce,
                                counts(rnd, arrow, performer, tolerance=archery.tolerance, pierce=pierce)))
    return strokes, releases


def shoot_without_music(archery: Archery, rnd: Round, pair: Pair, start: Fraction, length: Fraction, *,
                        seed: int) -> list[Release]:
    """The releases of one 耦 spread evenly over *length* seconds from *start*."""
    slot = length / ARROWS_PER_PAIR
    out = []
    for n, arrow in enumerate(arrows(archery, rnd, pair, seed=seed)):
        archer, performer = _archer(pair, n)
        out.append(Release(rnd.id, pair.id, archer, performer, n + 1, start + slot * n + slot / 2, None, 0,
                           arrow.hit, arrow.pierce, counts(rnd, arrow, performer, tolerance=archery.tolerance)))
    return out


def tally(round_id: str, releases: list[Release]) -> Tally:
    """The 釋獲 count of a round's releases."""
    right = sum(1 for r in releases if r.counted and r.archer == "上射")
    left = sum(1 for r in releases if r.counted and r.archer == "下射")
    return Tally(round_id, right, left)
