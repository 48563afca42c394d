"""Rank on the ground (issue 29 §1): every walk of every rite by its walker's stair, or by the one a text of its cue
names; clear of every set piece standing (a 侯 with its 个, a 乏, the 縣, the 建鼓, the 次, the 楅, the 中); past
people standing only where no way round was found, each such pass reported. Rule ``route`` on the shipped blocking
and on broken ones: a 賓 on the 阼階, a walk through a 侯, a 升自西階 walked up the 阼階.
"""

from __future__ import annotations

import re
import shutil
from itertools import product
from pathlib import Path

import pytest

from yuesheng import load
from yuesheng.check.staging import staging_problems
from yuesheng.cuesheet import variant_configurations
from yuesheng.errors import InvalidInputError
from yuesheng.staging.model import Point
from yuesheng.staging.rank import said, stair_of
from yuesheng.staging.reader import load_blocking, load_hall
from yuesheng.staging.rite import StagedRite, staged_rite
from yuesheng.staging.routes import CLEAR, distance_to_box, flights, grown, route

ROOT = Path(__file__).resolve().parent.parent
BLOCKING = ROOT / "blocking"
RITES = ["xiangyinjiu", "xiangshe", "yanli", "dashe"]
_STATED = re.compile(r"[升降]自(.)階")


def _rites(sheet, every_reading: bool = False) -> list[StagedRite]:
    """The rite of *sheet* staged under each of its configurations of variants (and, *every_reading*, under each of
    them with every choice of the readings its hall is drawn under: 左右房, the 侯道 from the 堂)."""
    path = BLOCKING / f"{sheet.rite_id}.yaml"
    chosen = {r.id: r.chosen for r in sheet.readings.values()}
    hall = staged_rite(sheet, frozenset(), chosen, path).hall
    choices = [chosen | dict(c) for c in product(*([(rid, o) for o in sheet.readings[rid].options]
                                                   for rid in hall.readings))] if every_reading else [chosen]
    return [staged_rite(sheet, variants, readings, path)
            for readings in choices for variants in variant_configurations(sheet)]


def _stated(sheet, blocking_text: str, cue_id: str) -> set[str]:
    """The stairs (西階, 阼階) any text of the cue names with 升自 or 降自: its action, its quote, its moves' quotes."""
    cue = sheet.cue(cue_id)
    block = re.search(rf"^  {re.escape(cue_id)}:\n((?:    .*\n)*)", blocking_text, re.M)
    texts = [cue.action, cue.cite.quote, block[1] if block else ""]
    return {f"{m}階" for text in texts for m in _STATED.findall(text)}


def _inside(p: Point, box: tuple[float, float, float, float]) -> bool:
    return box[0] < p.x < box[2] and box[1] < p.y < box[3]


@pytest.mark.parametrize("rite", RITES)
def test_every_walk_keeps_rank_and_clear_of_the_set_pieces_and_passes_people_only_as_reported(repertoire, rite):
    sheet = load(ROOT / "cues" / f"{rite}.yaml", repertoire=repertoire)
    text = (BLOCKING / f"{rite}.yaml").read_text(encoding="utf-8")
    walks = flights_taken = passes = 0
    for staged in _rites(sheet, every_reading=True):
        hall = staged.hall
        stairs = {s.id: s for s in hall.stairs}
        for cue_id, cue in staged.cues.items():
            moving = {w.who for w in cue.derivation.walks}
            standing = [s.point for who, s in cue.stands.items() if who not in moving]
            found = 0
            for walk in cue.derivation.walks:
                walks += 1
                person = staged.same.get(walk.who.partition("#")[0], walk.who.partition("#")[0])
                rank = stair_of(hall, sheet.performers[person].name)
                for _, sid in flights(hall, walk.route):
                    flights_taken += 1
                    assert rank is not None and (sid == rank.id or stairs[sid].name in _stated(sheet, text, cue_id)), \
                        (cue_id, walk.who, stairs[sid].name)
                for tid in cue.things:
                    box = hall.things[tid].box()
                    for a, b in zip(walk.route, walk.route[1:], strict=False):
                        if not (_inside(a, grown(box)) or _inside(b, grown(box))):  # a stop at it: its player
                            assert distance_to_box(a, b, box) >= CLEAR - 1e-6, (cue_id, walk.who, tid)
                found += sum(any(_near(p, a, b) for a, b in zip(walk.route, walk.route[1:], strict=False))
                             for p in standing)
            assert found == len(cue.derivation.passes), cue_id  # each pass by someone standing is reported
            passes += found
    assert walks > 100 and flights_taken > 50
    print(f"{rite}: {walks} walks, {flights_taken} flights, {passes} passes by someone standing (reported)")


def _near(p: Point, a: Point, b: Point) -> bool:
    dx, dy = b.x - a.x, b.y - a.y
    span = dx * dx + dy * dy
    t = 0.0 if span == 0 else max(0.0, min(1.0, ((p.x - a.x) * dx + (p.y - a.y) * dy) / span))
    return p.distance(Point(a.x + t * dx, a.y + t * dy)) < CLEAR - 1e-9


def test_the_guest_keeps_to_the_west_stair_in_the_lords_rites_where_he_took_the_lords(repertoire):
    sheet = load(ROOT / "cues" / "dashe.yaml", repertoire=repertoire)
    staged = _rites(sheet)[0]
    taken = [sid for w in staged.cues["bin-ying-gong"].derivation.walks if w.who == "bin"
             for _, sid in flights(staged.hall, w.route)]
    assert taken and set(taken) == {"xijie"}


def test_a_walk_goes_round_the_hou_it_once_crossed():
    """大射: the 門 lies 7.5 步 behind the 12-步-wide 大侯; a walk from the 堂 to the 門 goes round it, not through."""
    hall = load_hall(BLOCKING / "dashe.hall.yaml")
    hou = hall.things["dahou"].box()
    start, gate = Point(-3, 2), Point(0, 95)
    straight = route(hall, start, gate)
    around = route(hall, start, gate, things=(hou,))
    assert any(distance_to_box(a, b, hou) == 0 for a, b in zip(straight, straight[1:], strict=False))
    assert all(distance_to_box(a, b, hou) >= CLEAR - 1e-9 for a, b in zip(around, around[1:], strict=False))


def test_a_walker_goes_round_someone_standing_where_there_is_room():
    hall = load_hall(BLOCKING / "xiangshe.hall.yaml")
    start, end, standing = Point(-5, 20), Point(5, 20), Point(0, 20.1)
    points = route(hall, start, end, people=(standing,))
    assert len(points) > 2 and all(not _near(standing, a, b) for a, b in zip(points, points[1:], strict=False))


@pytest.mark.parametrize(("text", "who"), [
    ("膳宰徹公俎降自阼階以東", "shanzai"),  # the 公's 俎, not the 公
    ("主人升復席司正洗觶升自西階", "sizheng"),  # the last rank named before it
    ("升自西階", ""),
])
def test_a_texts_climb_is_given_to_the_rank_it_names(text, who):
    hall = load_hall(BLOCKING / "yanli.hall.yaml")
    names = {"公": "jun", "膳宰": "shanzai", "主人": "zhuren", "司正": "sizheng"}
    (found,) = said(text, "7-1a", hall, names)
    assert (found.who, found.stair) == (who, "zuojie" if "阼" in text else "xijie")


def _broken(tmp_path: Path, rite: str, old: str, new: str, *, hall: bool = False) -> tuple[Path, int]:
    for name in (f"{rite}.yaml", f"{rite}.hall.yaml"):
        shutil.copy(BLOCKING / name, tmp_path / name)
    path = tmp_path / (f"{rite}.hall.yaml" if hall else f"{rite}.yaml")
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    line = next(n for n, row in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if new in row)
    return tmp_path / f"{rite}.yaml", line


def _route_problems(sheet, path: Path) -> list[str]:
    return [f"{Path(p.file).name}:{p.line}:{p.col}: {p.message}" for p in staging_problems(sheet, path)
            if p.rule == "route"]


@pytest.mark.parametrize("rite", RITES)
def test_the_shipped_blocking_breaks_no_rank_and_goes_through_no_set_piece(repertoire, rite):
    sheet = load(ROOT / "cues" / f"{rite}.yaml", repertoire=repertoire)
    assert _route_problems(sheet, BLOCKING / f"{rite}.yaml") == []


def test_a_guest_up_the_lords_stair_is_an_error_at_the_move(repertoire, tmp_path):
    sheet = load(ROOT / "cues" / "dashe.yaml", repertoire=repertoire)
    path, line = _broken(tmp_path, "dashe", "{who: bin, to: gong-qian, via: [xi-nan, zun,",
                         "{who: bin, to: gong-qian, via: [xi-nan, zuojie, zun,")
    problems = _route_problems(sheet, path)
    assert f"dashe.yaml:{line}:9: bin (賓) goes up the 阼階 (公's), and no text of the cue says so: the 賓's stair " \
           "is the 西階 (儀禮集釋 9-10a 經 賓升自西階主人從之)" in problems


def test_a_climb_against_its_own_quote_is_an_error_quoting_it(repertoire, tmp_path):
    sheet = load(ROOT / "cues" / "dashe.yaml", repertoire=repertoire)
    path, line = _broken(tmp_path, "dashe", "{who: bin, to: xijie-shang, cite: {page: 9-10a, quote: 賓升自西階}}",
                         "{who: bin, to: xijie-shang, via: [zuojie], cite: {page: 9-10a, quote: 賓升自西階}}")
    problems = _route_problems(sheet, path)
    assert any(p.startswith(f"dashe.yaml:{line}:9: bin (賓) goes up the 阼階, against the text: ") and
               "9-10a 賓升自西階" in p for p in problems), problems


def test_a_walk_through_a_hou_is_an_error_at_the_move(repertoire, tmp_path):
    sheet = load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire)
    moved = "{who: zhuren, to: menwai-dong, via: [zhi-nan, hou],"
    path, line = _broken(tmp_path, "xiangshe", "{who: zhuren, to: menwai-dong,", moved)
    assert f"xiangshe.yaml:{line}:9: via hou is on the 侯 (with its 个): no walk goes through a set piece" in \
        _route_problems(sheet, path)


def test_a_hou_with_no_way_round_leaves_the_walk_no_route(repertoire, tmp_path):
    sheet = load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire)
    path, _ = _broken(tmp_path, "xiangshe", "at: hou, size: [6.66, 0.2]", "at: hou, size: [40, 0.2]", hall=True)
    problems = staging_problems(sheet, path)
    assert any(re.match(r".*xiangshe\.yaml$", p.file) and "no route from" in p.message for p in problems), problems


def test_an_unknown_thing_in_a_blocking_is_named_with_a_suggestion(repertoire, tmp_path):
    sheet = load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire)
    path, line = _broken(tmp_path, "xiangshe", "    set: [hou]", "    set: [hu]")
    told = rf"xiangshe.yaml:{line}:\d+: cues.zhang-hou.set\[0\]: unknown thing 'hu' — did you mean 'hou'"
    with pytest.raises(InvalidInputError, match=told):
        load_blocking(path, sheet)


@pytest.mark.parametrize(("rite", "cue", "who", "stair"), [
    ("xiangshe", "qian-yue", "gong#1", "xijie"),  # 5-21a 降自西階
    ("xiangshe", "gong-ji-wei", "gong#4", "xijie"),  # 6-15a 升自西階反坐
    ("xiangshe", "na-sheqi", "sishe", "xijie"),  # 5-20a 司射降自西階
    ("yanli", "xian-shuzi", "zhuren", "xijie"),  # 8-15a 主人洗升自西階
    ("yanli", "che-zu", "sheren", "xijie"),  # 8-8b 升自西階東楹之東請徹俎
    ("yanli", "che-zu", "bin", "xijie"),
    ("yanli", "che-zu", "shanzai", "zuojie"),  # 膳宰徹公俎降自阼階以東
    ("dashe", "qing-zhimi", "zhimizhe", "xijie"),  # 9-9b 執幂者升自西階
    ("dashe", "bin-sheng-bai-zhi", "bin", "xijie"),  # 9-10a 賓升自西階主人從之
    ("dashe", "bin-sheng-bai-zhi", "zhuren", "xijie"),
    ("xiangyinjiu", "qing-an", "xiang", "xijie"),  # 4-27a 司正洗觶升自西階
])
def test_the_moves_that_contradicted_their_quotes_climb_the_stair_the_text_names(repertoire, rite, cue, who, stair):
    sheet = load(ROOT / "cues" / f"{rite}.yaml", repertoire=repertoire)
    staged = _rites(sheet)[0]
    walk = next(w for w in staged.cues[cue].derivation.walks if w.who == who)
    assert {sid for _, sid in flights(staged.hall, walk.route)} == {stair}
