"""A fifth rite added as ARCHITECTURE.md's recipe says ("A fifth rite"), from the fixtures in ``tests/data/fifth``:
a cue sheet ``cues/nabin.yaml``, its hall and blocking in ``blocking/``, and its row of ``data/rites.json``
(``rites.json`` there). The row is the one change the recipe makes to the package; here it is added to a copy of the
shipped tables that ``datafiles`` is pointed at, as a maintainer would add it to ``yuesheng/data/rites.json``."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from yuesheng import datafiles, load, produce
from yuesheng.check.validate import check_cuesheet
from yuesheng.errors import UsageError
from yuesheng.music.repertoire import Repertoire
from yuesheng.outputs.placement import FACINGS, Listener, listener
from yuesheng.timeline import TICKS_PER_SECOND

FIFTH = Path(__file__).parent / "data" / "fifth"
SHEET = FIFTH / "cues" / "nabin.yaml"
Run = Callable[..., tuple[int, str, str]]  # the conftest fixture: the CLI in-process
AN_ODE = "      - {piece: simu, zhong: 1, part: 歌}\n"  # one of the three odes of its 升歌


def _fresh_tables() -> None:
    datafiles.data_table.cache_clear()
    datafiles.rites.cache_clear()


def _tables_with(added: dict[str, dict[str, object]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Point ``datafiles`` at a copy of the shipped data tables whose rites.json has the rows *added*."""
    data = tmp_path / "data"
    data.mkdir()
    for table in datafiles.DATA_DIR.glob("*.json"):
        shutil.copy(table, data)
    rites = json.loads((data / "rites.json").read_text(encoding="utf-8"))
    (data / "rites.json").write_text(json.dumps(rites | added, ensure_ascii=False), encoding="utf-8")
    monkeypatch.setattr(datafiles, "DATA_DIR", data)
    _fresh_tables()


def _fifth_row() -> dict[str, dict[str, object]]:
    rows = json.loads((FIFTH / "rites.json").read_text(encoding="utf-8"))
    return {rid: r for rid, r in rows.items() if not rid.startswith("$")}


@pytest.fixture
def row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The shipped data tables with the fifth rite's row added to rites.json."""
    _tables_with(_fifth_row(), tmp_path, monkeypatch)
    yield
    _fresh_tables()  # the monkeypatch puts DATA_DIR back; the tables read from the copy go too


def _without_an_ode(tmp_path: Path) -> Path:
    """The fifth rite copied with its hall and blocking, one ode of its 升歌 taken out (two 終 before 正歌備)."""
    copy = tmp_path / "fifth"
    shutil.copytree(FIFTH, copy)
    sheet = copy / "cues" / "nabin.yaml"
    text = sheet.read_text(encoding="utf-8")
    assert text.count(AN_ODE) == 1
    sheet.write_text(text.replace(AN_ODE, ""), encoding="utf-8")
    return sheet


def test_without_its_row_the_rite_is_checked_by_the_rules_for_any_rite_and_told_so(repertoire: Repertoire,
                                                                                    tmp_path: Path) -> None:
    assert "nabin" not in datafiles.rites()
    sheet, problems = check_cuesheet(_without_an_ode(tmp_path), repertoire)
    assert sheet is not None and not [p for p in problems if p.severity == "error"], problems
    [warning] = [p for p in problems if p.rule == "rite"]
    assert (warning.line, warning.col) == (3, 7) and "'nabin' (納賓) has no row in data/rites.json" in warning.message


@pytest.mark.usefixtures("row")
def test_with_its_row_validate_holds_it_to_the_rules_the_row_lists(run: Run, repertoire: Repertoire,
                                                                   tmp_path: Path) -> None:
    code, out, err = run("validate", str(SHEET))
    assert code == 0 and "valid — 7 cues, 0 error(s), 0 warning(s)" in out, (out, err)
    _, problems = check_cuesheet(_without_an_ode(tmp_path), repertoire)
    # zhengge-bei, with the row's own programme (升歌 and 合樂, three 終 each): no 笙 or 間歌 is asked for
    assert [(p.rule, p.message.split(" — ")[0]) for p in problems if p.severity == "error"] == [
        ("zhengge-bei", "升歌 has 2 終 before 正歌備, expected 3")]
    assert not [p for p in problems if p.rule == "rite"]


@pytest.mark.usefixtures("row")
def test_with_its_row_the_timeline_builds_it_on_its_ground(repertoire: Repertoire) -> None:
    production = produce(load(SHEET, repertoire=repertoire))
    timeline = production.timeline
    assert production.staged is not None and production.staged.hall.name == "寢"
    timings = {t.cue.id: t for t in timeline.cues}
    ji_wei = timings["ji-wei"]  # the 公's walk up the 阼階 to his mat, not the sheet's 30 s
    assert ji_wei.basis.startswith("walk: jun to 公席 (阼階上)") and ji_wei.end_tick - ji_wei.start_tick < \
        30 * TICKS_PER_SECOND
    assert [t.cue.id for t in timeline.cues][-1] == "zhengge-bei" and timeline.events


@pytest.mark.usefixtures("row")
def test_with_its_row_plan_and_the_default_listener_take_its_lord_and_seat(run: Run, repertoire: Repertoire,
                                                                           tmp_path: Path) -> None:
    code, out, _ = run("plan", str(SHEET))
    data = json.loads(out)
    assert code == 0 and data["lord"] == {"name": "公", "mat": "jun-xi", "cite": "儀禮集釋 7-4b 小臣設公席于阼階上西鄉"}
    assert data["default_seat"] == {"id": "zuojie-shang", "place": "jun-xi"}
    assert {s["name"]: (s["whose"]["of"], s["whose"]["rest"]) for s in data["hall"]["stairs"]} == {
        "阼階": (["公"], False), "西階": (["賓"], True)}
    production = produce(load(SHEET, repertoire=repertoire))
    heard = listener("default", production.timeline, production.staged)
    assert heard == Listener(4.0, -1.5, FACINGS["west"], "公席")  # his mat, jun-xi
    code, out, _ = run("render", str(SHEET), "--listener", "default", "-o", str(tmp_path / "nabin.mid"))
    assert code == 0 and re.search(r"heard from 公席 \(4, -1\.5\) facing west", out), out


def test_without_its_row_there_is_no_lord_and_no_default_seat(run: Run, repertoire: Repertoire) -> None:
    code, out, _ = run("plan", str(SHEET))
    data = json.loads(out)
    assert code == 0 and data["lord"] is None and data["default_seat"] is None
    production = produce(load(SHEET, repertoire=repertoire))
    timeline, staged = production.timeline, production.staged
    with pytest.raises(UsageError, match="納賓 has no default seat; name one of: .*zuojie-shang"):
        listener("default", timeline, staged)
    assert listener("zuojie-shang", timeline, staged).name == "主人席"  # the seat at the 阼階上 is no lord's


@pytest.mark.parametrize(("key", "value", "said"), [
    ("rules", ["zhengge-bel"], "bad data/rites.json: rite nabin: rules 'zhengge-bel': expected one of zhengge-bei"),
    ("zhengge", {"kinds": {"升哥": 3}}, "bad data/rites.json: rite nabin: zhengge '升哥': expected one of 升歌"),
    ("seats", {}, "bad data/rites.json: rite nabin 'seats': expected one of the keys name, short, rules"),
])
def test_a_row_with_a_typo_is_refused_in_one_line_not_applied_in_part(run: Run, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch, key: str,
                                                                       value: object, said: str) -> None:
    rows = _fifth_row()
    rows["nabin"] = {**rows["nabin"], key: value}
    try:
        _tables_with(rows, tmp_path, monkeypatch)
        code, out, err = run("validate", str(SHEET))
    finally:
        _fresh_tables()
    assert code == 1 and said in err and "Traceback" not in err, (out, err)
