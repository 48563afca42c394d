"""Issue 29 §2: where the commentators differ on the hall itself, a reading the user selects (``--reading ID=OPTION``,
as every reading of a cue sheet) that moves the hall's places: the 君's hall 東房西室 or 左右房 (鄭注 9-14a 人君左右房),
the 侯道 from the 物 or from the 堂 (鄭注 9-2b 量侯道謂去堂逺近也). Each option's places, its walks (rank, the set
pieces: tests/test_rank.py), its kept ground apart from the other's, and the reading stated by the plan, the page and
the run sheet.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from yuesheng import load, produce
from yuesheng.check.staging import staging_problems
from yuesheng.errors import InvalidInputError
from yuesheng.staging.model import Point
from yuesheng.staging.reader import load_blocking, load_hall
from yuesheng.staging.rite import staged_rite
from yuesheng.timeline.state import Options

ROOT = Path(__file__).resolve().parent.parent
BLOCKING = ROOT / "blocking"
RITES = ["xiangyinjiu", "xiangshe", "yanli", "dashe"]


def _at(rite: str, **readings: str) -> dict[str, Point]:
    return {pid: p.point for pid, p in load_hall(BLOCKING / f"{rite}.hall.yaml", readings).places.items()}


def _walls(rite: str, **readings: str) -> set[str]:
    return {w.name for w in load_hall(BLOCKING / f"{rite}.hall.yaml", readings).walls}


@pytest.mark.parametrize("rite", ["dashe", "yanli"])
def test_zuoyou_gives_the_lords_hall_a_west_fang_and_the_shi_in_the_middle(rite):
    """鄭注 9-14a 左房東房也人君左右房: a 房 on each side of the 室; by default 東房西室, no 西房."""
    plain, zuoyou = _at(rite), _at(rite, fang="zuoyou")
    assert "fang-xi" not in plain and plain["shi"].x < plain["fang"].x and plain["shi"].x < -2
    assert zuoyou["fang-xi"].x < zuoyou["shi"].x < zuoyou["fang"].x and zuoyou["shi"].x == 0
    assert zuoyou["fang-xi"].y == zuoyou["shi"].y == zuoyou["fang"].y
    assert "室房之間" in _walls(rite) and "室房之間" not in _walls(rite, fang="zuoyou")
    assert {"西房室之間", "室東房之間"} <= _walls(rite, fang="zuoyou")
    assert plain["bin-xi"] == zuoyou["bin-xi"] and plain["bin-xi"].x < zuoyou["shi-hu"].x  # the 賓 still 户西


@pytest.mark.parametrize(("rite", "further", "hou", "derived"), [
    ("dashe", 2.5, ["dahou", "canhou", "ganhou"], ["dahou-fa", "ganhou-youge", "fubu", "dashi-wei", "dahou-fa-nan",
                                                   "canhou-fu", "dahou-yin", "huozhe-zun"]),
    ("xiangshe", 4, ["hou"], ["fa", "fa-xi", "fu-hou"]),
])
def test_the_houdao_from_the_tang_stands_each_hou_further_south_and_what_is_measured_from_it(rite, further, hou,
                                                                                               derived):
    """鄭注 9-2b 量侯道謂去堂逺近也: from the 堂's edge, not from the 物 (under the 楣 in 大射, 2.5 步 in; under the 棟
    in 鄉射, 4 步 in): each 侯 that much further, and its 乏, 个 and the places measured from them with it."""
    wu, tang = _at(rite), _at(rite, houdao="tang")
    for pid in hou + derived:
        assert tang[pid].y - wu[pid].y == pytest.approx(further), pid
        assert tang[pid].x == wu[pid].x, pid
    assert wu["wu-jian"] == tang["wu-jian"] and wu[hou[0]].y - wu["wu-jian"].y == tang[hou[0]].y
    assert wu["men"] == tang["men"]  # the court is the same: its 門 where it was


@pytest.mark.parametrize("rite", ["dashe", "xiangshe"])
def test_each_option_of_a_reading_holds_its_own_statements(rite):
    """The 侯道 statement under each option measures from its own place; neither option's hall breaks its statements,
    and the walks of both stage without a problem (rule staging checks every option)."""
    from yuesheng.staging.statements import statement_problems

    for option in ("wu", "tang"):
        hall = load_hall(BLOCKING / f"{rite}.hall.yaml", {"houdao": option})
        assert not statement_problems(hall)
        assert {st.b for st in hall.statements if st.a in ("hou", "dahou") and st.kind == "distance"} == \
            {"wu-jian" if option == "wu" else "tanglian"}


@pytest.mark.parametrize("rite", RITES)
def test_no_one_stands_on_a_set_piece_under_any_reading(repertoire, rite):
    """A stand is never within a set piece's footprint (a 侯, a 乏, an instrument) while it stands, under every option
    of each reading of the hall: the 賓 少進 inside the gate stays clear of the 侯 the 侯道 from the 堂
    brings south."""
    sheet = load(ROOT / "cues" / f"{rite}.yaml", repertoire=repertoire)
    chosen = {r.id: r.chosen for r in sheet.readings.values()}
    path = BLOCKING / f"{rite}.yaml"
    hall_readings = staged_rite(sheet, frozenset(), chosen, path).hall.readings
    choices = [chosen] + [chosen | {rid: o} for rid in hall_readings for o in sheet.readings[rid].options]
    for readings in choices:
        staged = staged_rite(sheet, frozenset(), readings, path)
        for cid, cue in staged.cues.items():
            for tid in cue.things:
                thing = staged.hall.things[tid]
                if thing.open:
                    continue
                x0, y0, x1, y1 = thing.box()
                inside = [who for who, s in cue.stands.items() if x0 < s.point.x < x1 and y0 < s.point.y < y1]
                assert not inside, (readings, cid, tid, inside)


def test_the_reading_moves_the_walks_and_is_kept_apart(repertoire, tmp_path, monkeypatch):
    """A reading is part of the ground's key: the 侯道 from the 堂 makes the walks to the 侯 longer, and a build under
    one option never takes the other's kept durations."""
    monkeypatch.setenv("YUESHENG_CACHE_DIR", str(tmp_path / "cache"))
    sheet = load(ROOT / "cues" / "dashe.yaml", repertoire=repertoire)
    wu = produce(sheet)
    tang = produce(sheet, Options(readings={"houdao": "tang"}))
    again = produce(sheet, Options(readings={"houdao": "tang"}))
    assert wu.ground is not None and tang.ground is not None and again.ground is not None
    assert wu.ground.entry != tang.ground.entry == again.ground.entry
    longer = [cid for cid, t in tang.ground.cues.items()
              if t.duration is not None and (w := wu.ground.cues[cid].duration) is not None and t.duration > w]
    assert "zun-huozhe" in longer, longer  # the 獲者's 尊 set by the 大侯's 乏
    drawn = [rite.hall.places["dahou"].point.y for rite in (tang.staged, wu.staged) if rite is not None]
    assert drawn == [90, 87.5]


def test_the_plan_states_the_reading_it_draws(run):
    code, out, _ = run("plan", "dashe", "--reading", "fang=zuoyou")
    data = json.loads(out)
    assert code == 0 and data["hall"]["readings"] == {"fang": "zuoyou", "houdao": "wu"}
    assert any(p["id"] == "fang-xi" and p["layer"] == "鄭注" for p in data["places"])
    code, svg, _ = run("plan", "xiangshe", "--reading", "houdao=tang", "--at", "san-yi", "--format", "svg")
    assert code == 0 and "(reading houdao=tang)" in svg
    code, _, err = run("plan", "dashe", "--reading", "fang=zuo")
    assert code == 2 and "fang" in err and "zuoyou" in err


def test_the_run_sheet_and_the_page_state_the_reading(run, tmp_path):
    code, out, _ = run("timeline", "xiangshe", "--reading", "houdao=tang", "--format", "text")
    assert code == 0 and "houdao=tang" in out
    page = tmp_path / "page.html"
    code, _, _ = run("sheet", "xiangshe", "--reading", "houdao=tang", "-o", str(page))
    assert code == 0 and "houdao=tang" in page.read_text(encoding="utf-8")


def _copy(tmp_path: Path, rite: str) -> tuple[Path, Path]:
    for folder in ("cues", "blocking"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    return tmp_path / "cues" / f"{rite}.yaml", tmp_path / "blocking" / f"{rite}.hall.yaml"


def test_a_hall_reading_the_cue_sheet_does_not_declare_is_an_error_at_the_hall(repertoire, tmp_path):
    cues, hall = _copy(tmp_path, "xiangshe")
    hall.write_text(hall.read_text(encoding="utf-8").replace("  houdao:\n    options: [wu, tang]",
                                                             "  houdao2:\n    options: [wu, tang]"), encoding="utf-8")
    sheet = load(cues, repertoire=repertoire)
    with pytest.raises(InvalidInputError) as err:
        load_blocking(tmp_path / "blocking" / "xiangshe.yaml", sheet)
    text = "\n".join(map(str, err.value.problems))
    assert "xiangshe.hall.yaml" in text and "no reading 'houdao2'" in text and "houdao=tang" in text


def test_a_default_other_than_the_sheets_chosen_is_an_error(repertoire, tmp_path):
    cues, hall = _copy(tmp_path, "xiangshe")
    hall.write_text(hall.read_text(encoding="utf-8").replace("default: wu", "default: tang"), encoding="utf-8")
    problems = staging_problems(load(cues, repertoire=repertoire))
    assert any("xiangshe.hall.yaml" in p.file and "chooses wu" in p.message for p in problems)


def test_validate_checks_the_other_option_too(repertoire, tmp_path):
    """A statement that fails only under the option not chosen is still found: rule staging draws the hall under each
    option of its readings."""
    cues, hall = _copy(tmp_path, "xiangshe")
    text = hall.read_text(encoding="utf-8")
    broken = text.replace("{kind: distance, a: hou, b: tanglian, steps: 50,", "{kind: distance, a: hou, b: tanglian, "
                          "steps: 49,")
    assert broken != text
    hall.write_text(broken, encoding="utf-8")
    problems = staging_problems(load(cues, repertoire=repertoire))
    assert [p.line for p in problems if "9-2b" in p.message] == \
        [n for n, line in enumerate(broken.splitlines(), 1) if "steps: 49" in line]
