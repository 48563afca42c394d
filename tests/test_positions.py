"""The places of a cue sheet's positions on the ground plan: reading, checking, the schema, the shipped sheets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from yuesheng.cuesheet import read_cuesheet
from yuesheng.datafiles import DATA_DIR
from yuesheng.music.repertoire import data_dir
from yuesheng.yamlload import load

MINI = Path(__file__).parent / "data" / "mini_xiangyin.yaml"
RITES = ("xiangyinjiu", "xiangshe", "yanli", "dashe")


def _with_positions(tmp_path: Path, block: str) -> Path:
    """The mini sheet with its positions block replaced by *block* (lines indented two spaces)."""
    text = MINI.read_text(encoding="utf-8")
    text = text.replace("positions:\n  tang: {name: 西階上少東}\n", "positions:\n" + block)
    path = tmp_path / "sheet.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _problems(path: Path, repertoire) -> list[str]:
    sheet, problems = read_cuesheet(load(path), repertoire)
    return [str(p) for p in problems]


def test_a_place_is_read_in_steps_with_its_extent_and_estimate(tmp_path, repertoire):
    path = _with_positions(tmp_path, "  tang: {name: 西階上少東, x: -2, y: -0.5, w: 1.5, h: 2, estimate: true}\n")
    sheet, problems = read_cuesheet(load(path), repertoire)
    assert problems == [] and sheet is not None
    tang = sheet.positions["tang"]
    assert (tang.x, tang.y, tang.w, tang.h, tang.estimate, tang.placed) == (-2.0, -0.5, 1.5, 2.0, True, True)


def test_a_sheet_without_any_place_has_no_plan_warning(repertoire):
    sheet, problems = read_cuesheet(load(MINI), repertoire)
    assert problems == [] and sheet is not None and not sheet.positions["tang"].placed


@pytest.mark.parametrize(("block", "message"), [
    ("  tang: {name: 堂, x: abc, y: 1}\n", "positions.tang.x: expected a number, got a string 'abc' [schema]"),
    ("  tang: {name: 堂, x: true, y: 1}\n", "positions.tang.x: expected a number, got true or false True [schema]"),
    ("  tang: {name: 堂, x: 1}\n", "positions.tang: x and y go together: give both or neither [plan]"),
    ("  tang: {name: 堂, x: 1, y: 2, w: 3}\n", "positions.tang: w and h go together: give both or neither [plan]"),
    ("  tang: {name: 堂, x: 9000, y: 2}\n", "positions.tang.x: x 9000 步, expected -500..500 (1 步 = 6 尺) [plan]"),
    ("  tang: {name: 堂, x: 0, y: 0, w: 0, h: 2}\n",
     "positions.tang.w: w 0 步, expected more than 0 and at most 500 (1 步 = 6 尺) [plan]"),
    ("  tang: {name: 堂, w: 1, h: 2}\n", "positions.tang: w, h and estimate need the position's x and y [plan]"),
    ("  tang: {name: 堂, x: 0, y: 0, estimate: maybe}\n",
     "positions.tang.estimate: expected true or false, got a string 'maybe' [schema]"),
    ("  tang: {name: 堂, x: 0, y: 0, z: 1}\n", "positions.tang.z: unknown key 'z'"),
])
def test_bad_places_are_errors_at_their_line(tmp_path, repertoire, block, message):
    path = _with_positions(tmp_path, block)
    problems = _problems(path, repertoire)
    line = MINI.read_text(encoding="utf-8").splitlines().index("  tang: {name: 西階上少東}") + 1
    found = [p for p in problems if message in p]
    assert found, problems
    assert found[0].startswith(f"{path}:{line}:")


def test_a_position_left_off_a_plan_that_places_others_is_a_warning(tmp_path, repertoire):
    path = _with_positions(tmp_path, "  tang: {name: 堂, x: 0, y: -2}\n  ting: {name: 庭}\n")
    sheet, problems = read_cuesheet(load(path), repertoire)
    assert [(p.severity, p.rule, p.path) for p in problems] == [("warning", "plan", "positions.ting")]
    assert "position 'ting' has no x, y: the ground plan lists it beside the plan" in str(problems[0])


@pytest.mark.parametrize("rite", RITES)
def test_every_shipped_position_is_placed_and_cites_or_estimates(rite, repertoire):
    raw = yaml.safe_load((data_dir("cues") / f"{rite}.yaml").read_text(encoding="utf-8"))["positions"]
    sheet, problems = read_cuesheet(load(data_dir("cues") / f"{rite}.yaml"), repertoire)
    assert [p for p in problems if p.rule == "plan"] == []
    for pid, item in raw.items():
        assert "x" in item and "y" in item, pid
        if not item.get("estimate"):  # derived from the text: the note says from where
            assert item.get("note"), f"{rite} {pid}: a place not marked estimate needs a note citing the text"


@pytest.mark.parametrize("rite", ("xiangshe", "dashe"))
def test_the_archery_ground_follows_the_text(rite, repertoire):
    """侯道 from the 物 (鄉射 五十弓; 大射 干五十 參七十 大侯九十), the 乏 west and north of its 侯."""
    sheet, _ = read_cuesheet(load(data_dir("cues") / f"{rite}.yaml"), repertoire)
    assert sheet is not None
    at = {name: (p.x, p.y) for name, p in sheet.positions.items() if p.x is not None and p.y is not None}
    wu_y = at["wu-jian" if rite == "xiangshe" else "wu"][1]
    if rite == "xiangshe":  # 鄭注 5-3b: 乏去侯北十丈西三丈 (10 丈 = 100 尺 = 16⅔ 步; 3 丈 = 5 步)
        (hou_x, hou_y), (fa_x, fa_y) = at["hou"], at["fa"]
        assert hou_y - wu_y == 50
        assert fa_x == hou_x - 5 and hou_y - fa_y == pytest.approx(100 / 6, abs=0.01)
    else:  # 9-2a: 大侯九十 參七十 干五十 設乏各去其侯西十北十
        for hou, fa, way in (("ganhou", "fa", 50), ("canhou", "fa-can", 70), ("dahou", "fa-da", 90)):
            (hou_x, hou_y), (fa_x, fa_y) = at[hou], at[fa]
            assert hou_y - wu_y == way
            assert (hou_x - fa_x, hou_y - fa_y) == (10, 10)


def test_the_schema_knows_places(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((DATA_DIR / "cuesheet.schema.json").read_text())
    data = yaml.safe_load(MINI.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    data["positions"]["tang"] |= {"x": 1, "y": 2, "w": 3, "h": 4, "estimate": True}
    assert [e.message for e in validator.iter_errors(data)] == []
    data["positions"]["tang"] = {"name": "堂", "x": 1}
    assert any("'y' is a dependency of 'x'" in e.message for e in validator.iter_errors(data))
    data["positions"]["tang"] = {"name": "堂", "x": 1, "y": 600}
    assert any("600 is greater than the maximum of 500" in e.message for e in validator.iter_errors(data))
