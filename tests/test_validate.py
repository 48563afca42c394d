"""validate.py: reading, quotes and rules composed; the ``quote`` rule holds every cite to its shipped page.

``load_cuesheet`` (for a build) checks what a build needs; ``check_cuesheet`` (``validate``) everything.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from yuesheng import load
from yuesheng.check.validate import check_cuesheet
from yuesheng.errors import InvalidInputError

MINI = Path(__file__).parent / "data" / "mini_xiangyin.yaml"


def _sheet(tmp_path: Path, old: str, new: str) -> Path:
    text = MINI.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "sheet.yaml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _line_col(path: Path, needle: str) -> tuple[int, int]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return number, line.index(needle) + 1
    raise AssertionError(needle)


def test_the_mini_sheet_quotes_its_pages(repertoire):
    sheet, problems = check_cuesheet(MINI, repertoire)
    assert sheet is not None and problems == []


def test_a_wrong_quote_is_an_error_at_the_quote_with_the_rule_id(repertoire, tmp_path):
    path = _sheet(tmp_path, "quote: 工歌鹿鳴四牡皇皇者華", "quote: 工歌鹿鳴四牡采薇")
    _, problems = check_cuesheet(path, repertoire)
    [problem] = problems
    assert (problem.line, problem.col) == _line_col(path, "工歌鹿鳴四牡采薇")
    assert problem.rule == "quote" and problem.severity == "error"
    assert problem.path.endswith(".cite.quote")
    assert "'工歌鹿鳴四牡采薇' is not on 儀禮集釋 4-20b" in problem.message
    assert load(path, repertoire=repertoire).cues  # a misquote is validate's to report: it does not stop a build


def test_a_reading_options_quote_is_checked_too(repertoire, tmp_path):
    path = _sheet(tmp_path, "quote: 合樂謂歌樂與衆聲俱作", "quote: 合樂謂歌樂與衆聲不作")
    [problem] = check_cuesheet(path, repertoire)[1]
    assert problem.rule == "quote" and problem.path == "readings.heyue.options.zheng.cite.quote"
    assert problem.line == _line_col(path, "衆聲不作")[0]


def test_a_quote_on_the_wrong_page_fails_even_if_it_is_on_another(repertoire, tmp_path):
    path = _sheet(tmp_path, "{page: 4-21b, quote: 主人獻工}", "{page: 4-19b, quote: 主人獻工}")
    [problem] = check_cuesheet(path, repertoire)[1]
    assert problem.rule == "quote" and "儀禮集釋 4-19b" in problem.message


def test_a_page_that_does_not_exist_is_an_error_with_the_nearest_pages(repertoire, tmp_path):
    path = _sheet(tmp_path, "{page: 4-21b, quote: 主人獻工}", "{page: 4-99b, quote: 主人獻工}")
    [problem] = check_cuesheet(path, repertoire)[1]
    assert problem.rule == "quote" and problem.path.endswith(".cite.page")
    assert "unknown page '4-99b' — did you mean" in problem.message


def test_a_chapter_that_is_not_shipped_cannot_be_checked_a_warning(repertoire, tmp_path):
    path = _sheet(tmp_path, "{page: 4-21b, quote: 主人獻工}", "{page: 3-1a, quote: 主人獻工}")
    [problem] = check_cuesheet(path, repertoire)[1]
    assert problem.severity == "warning" and problem.rule == "quote"
    assert "儀禮集釋 卷3 is not shipped" in problem.message


def test_a_malformed_page_is_reported_once_by_the_reader(repertoire, tmp_path):
    path = _sheet(tmp_path, "{page: 4-21b, quote: 主人獻工}", "{page: 4-21, quote: 主人獻工}")
    problems = check_cuesheet(path, repertoire)[1]
    assert [p.rule for p in problems] == ["cite"]


# -- loading for a build apart from checking everything ----------------------------------------------------------

CYCLE_UNDER_A_VARIANT = ("    variant: da-shi\n    action: 大師則爲之洗\n",
                         "    variant: da-shi\n    start: {after: xi-dashi-2}\n    action: 大師則爲之洗\n")
SECOND_CUE = ("  - id: sheng-ru\n", "  - {id: xi-dashi-2, section: 樂賓, variant: da-shi, action: 洗, who: [zhuren], "
              "start: {after: xi-dashi}, duration: 1s, cite: {page: 4-22a, quote: 大師則爲之洗}}\n  - id: sheng-ru\n")


def _cycle_under_a_variant(tmp_path: Path) -> Path:
    path = _sheet(tmp_path, *CYCLE_UNDER_A_VARIANT)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(*SECOND_CUE, 1), encoding="utf-8")
    return path


def test_a_cycle_under_a_variant_is_validates_error_and_the_builds_own(run, repertoire, tmp_path):
    path = _cycle_under_a_variant(tmp_path)
    [problem] = check_cuesheet(path, repertoire)[1]
    assert problem.rule == "cycle" and problem.line == _line_col(path, "start: {after: xi-dashi-2}")[0]
    assert "anchors form a cycle (with da-shi on): xi-dashi → xi-dashi-2 → xi-dashi" in problem.message
    assert load(path, repertoire=repertoire).cues  # the programme as written has no cycle
    assert run("timeline", str(path))[0] == 0
    code, out, err = run("timeline", str(path), "--variant", "da-shi")
    line, col = _line_col(path, "{after: xi-dashi-2}")
    assert code == 1 and out == "" and err.startswith(f"{path}:{line}:{col}: cues[3].start: anchors form a cycle (with "
                                                      "da-shi on): xi-dashi → xi-dashi-2 → xi-dashi [cycle]")
    assert "Traceback" not in err


def test_a_cycle_as_written_stops_loading_with_its_place(repertoire, tmp_path):
    path = _sheet(tmp_path, "    action: 獻工\n", "    start: {after: sheng-ru}\n    action: 獻工\n")
    path.write_text(path.read_text(encoding="utf-8").replace(
        "  - id: sheng-ru\n", "  - id: sheng-ru\n    start: {after: xi-gong}\n", 1), encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"sheet.yaml:\d+:\d+: cues\[\d\]\.start: anchors form a cycle: "):
        load(path, repertoire=repertoire)


def test_a_limit_broken_only_under_a_variant_is_validates_error_and_the_builds_own_at_its_place(run, tmp_path):
    path = _sheet(tmp_path, "    variant: da-shi\n    action: 大師則爲之洗\n    who: [zhuren]\n    duration: 30s",
                  "    variant: da-shi\n    action: 大師則爲之洗\n    who: [zhuren]\n    duration: 47h59min")
    code, _, err = run("validate", str(path))
    assert code == 1 and "the rite would last 48." in err and "(with variant da-shi) [limits]" in err
    assert run("render", str(path), "-o", str(tmp_path / "plain.mid"))[0] == 0
    code, _, err = run("render", str(path), "--variant", "da-shi", "-o", str(tmp_path / "long.mid"))
    pattern = rf"{re.escape(str(path))}:\d+:\d+: cues\[\d+\]: the rite would last 48\.\d+h .* \[limits\]$"
    assert code == 1 and re.match(pattern, err), err
    assert not (tmp_path / "long.mid").exists()


def test_a_misquoted_sheet_builds_but_does_not_validate(run, tmp_path):
    path = _sheet(tmp_path, "quote: 工歌鹿鳴四牡皇皇者華", "quote: 工歌鹿鳴四牡采薇")
    code, out, err = run("validate", str(path))
    assert code == 1 and "INVALID" in out and "[quote]" in err
    code, out, err = run("timeline", str(path))
    assert code == 0 and err == "" and "工歌鹿鳴四牡采薇" not in err


def test_a_sheet_that_breaks_a_ritual_rule_is_still_refused_by_a_build(run, tmp_path):
    path = _sheet(tmp_path, "quote: 主人獻工}", "quote: 主人獻工}\n  - {id: zhengge-bei-0, section: 樂賓, "
                  "action: 工告于樂正曰正歌備, who: [gong], duration: 1s, cite: {page: 4-24b, quote: 正歌備}}")
    for command in ("validate", "timeline"):
        code, _, err = run(command, str(path))
        expected = r"sheet.yaml:\d+:5: cues\[3\]: 正歌備 announced before any 笙 — .* \[zhengge-bei\]$"
        assert code == 1 and re.search(expected, err, re.M), (command, err)


# -- which rules hold for a rite, and what they know of it, is its row of data/rites.json --------------------------


def test_the_rite_table_names_the_shipped_rites_rules_and_pieces_that_exist(repertoire):
    from yuesheng.check.rules import RULES
    from yuesheng.cuesheet import MusicKind, read_cuesheet
    from yuesheng.datafiles import rites
    from yuesheng.music.repertoire import data_dir
    from yuesheng.yamlload import load

    assert set(rites()) == {path.stem for path in data_dir("cues").glob("*.yaml")}
    per_rite = {rule.id for rule in RULES if rule.per_rite}
    for rite in rites().values():
        sheet, _ = read_cuesheet(load(data_dir("cues") / f"{rite.id}.yaml"), repertoire)
        assert sheet is not None and sheet.rite_name == rite.name
        assert rite.round_pieces <= set(repertoire.pieces), rite.round_pieces
        assert rite.rules <= per_rite, rite.rules - per_rite  # a rule for any rite is not listed
        assert all(MusicKind(kind) for kind, _ in rite.zhengge)
        assert rite.listener and (rite.lord is None or rite.lord.seat == rite.listener)
    assert rites()["xiangshe"].round_pieces == {"zouyu-huangzhong-yu", "zouyu-jiazhong-jue", "caipin"}
    assert per_rite == set().union(*(r.rules for r in rites().values()))  # every rite-specific rule holds somewhere
    assert {rid for rid, r in rites().items() if r.lord} == {"yanli", "dashe"}


def test_a_malformed_row_of_the_rite_table_is_said_by_its_rite_and_key():
    from yuesheng.datafiles import rite_row
    from yuesheng.errors import InvalidValueError

    with pytest.raises(InvalidValueError, match="data/rites.json: rite pinli: rules"):
        rite_row("pinli", {"name": "聘禮", "short": "聘禮", "rules": "zhengge-bei"})
    with pytest.raises(InvalidValueError, match="rite pinli.*'seats'.*one of the keys"):
        rite_row("pinli", {"name": "聘禮", "short": "聘禮", "seats": {}})
    assert rite_row("pinli", {"name": "聘禮", "short": "聘"}).rules == frozenset()


@pytest.mark.parametrize(("old", "new", "message"), [
    ("    calls: [宫]\n    cite: {page: 9-31b, quote: 負侯皆許諾以宫}",
     "    calls: [不絶]\n    cite: {page: 9-31b, quote: 負侯皆許諾以宫}",
     "大射's 許諾 is ['不絶']; expected [宫, 商] (儀禮集釋 9-31b 許諾以宫…又諾以商至乏聲止)"),
    ("    hold: {until: fuhou-zhi-fa}\n    cite: {page: 9-31b, quote: 又諾以商至乏聲止}",
     "    cite: {page: 9-31b, quote: 又諾以商至乏聲止}", "大射's 諾 on 商 is held until the walk it answers ends"),
])
def test_the_xunuo_is_on_the_sounds_of_its_rites_row(repertoire, tmp_path, old, new, message):
    from yuesheng.music.repertoire import data_dir

    text = (data_dir("cues") / "dashe.yaml").read_text(encoding="utf-8")
    assert text.count(old) == 1
    path = tmp_path / "dashe.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    problems = [p for p in check_cuesheet(path, repertoire)[1] if p.rule == "calls"]
    assert len(problems) == 1 and message in problems[0].message, problems


def _renamed(tmp_path: Path, rite_id: str, name: str, *, drop: str = "") -> Path:
    """The shipped 鄉飲酒禮 as a sheet of one's own named *name* (id *rite_id*), with the line *drop* taken out."""
    from yuesheng.music.repertoire import data_dir

    text = (data_dir("cues") / "xiangyinjiu.yaml").read_text(encoding="utf-8")
    assert "  id: xiangyinjiu\n  name: 鄉飲酒禮\n" in text and (not drop or text.count(drop) == 1)
    text = text.replace("  id: xiangyinjiu\n  name: 鄉飲酒禮\n", f"  id: {rite_id}\n  name: {name}\n")
    path = tmp_path / f"{rite_id}.yaml"
    path.write_text(text.replace(drop, ""), encoding="utf-8")
    return path


SHENGGE_PIECE = "      - {piece: huanghuangzhehua, zhong: 1, part: 歌}\n"  # 升歌's third ode


def test_a_sheet_of_no_known_rite_is_told_which_rules_it_was_not_held_to(repertoire, tmp_path):
    from yuesheng.music.repertoire import data_dir

    assert SHENGGE_PIECE in (data_dir("cues") / "xiangyinjiu.yaml").read_text(encoding="utf-8")
    sheet, problems = check_cuesheet(_renamed(tmp_path, "pinli", "聘禮", drop=SHENGGE_PIECE), repertoire)
    assert sheet is not None and not [p for p in problems if p.severity == "error"], problems
    [warning] = [p for p in problems if p.rule == "rite"]
    assert warning.severity == "warning" and (warning.line, warning.col) == (3, 7)  # at rite.id
    assert "'pinli' (聘禮) has no row in data/rites.json" in warning.message
    assert "zhengge-bei, xiangshe-bu-ge, three-rounds, jie, music-round, gong-after-music" in warning.message


def test_the_same_sheet_of_a_known_rite_is_held_to_its_rules(repertoire, tmp_path):
    """The control: under its own name the sheet with an ode missing breaks 正歌備, and no warning is given."""
    _, problems = check_cuesheet(_renamed(tmp_path, "own", "鄉飲酒禮", drop=SHENGGE_PIECE), repertoire)
    assert not [p for p in problems if p.rule == "rite"]
    assert any(p.rule == "zhengge-bei" and "升歌 has 2 終 before 正歌備, expected 3" in p.message for p in problems)


def test_validate_says_so_on_the_command_line_and_stays_valid(run, tmp_path):
    code, out, err = run("validate", str(_renamed(tmp_path, "pinli", "聘禮")))
    assert code == 0 and re.search(r"pinli\.yaml:3:7: warning: rite\.id: .*has no row in data/rites\.json.* \[rite\]",
                                   out + err), (out, err)


@pytest.mark.parametrize("rite_id, name, rite", [
    ("xiangshe", "鄉射禮", "xiangshe"), ("xiangshe", "鄉射禮（試演）", "xiangshe"),  # the id decides
    ("my-rite", "鄉射禮", "xiangshe"),  # a sheet of one's own: its exact name
    ("my-rite", "鄉射禮（試演）", None), ("my-rite", "大射儀之鄉射禮", None),  # no longer a part of the name
])
def test_a_sheet_is_of_the_rite_of_its_id_else_of_its_exact_name(repertoire, rite_id, name, rite):
    from dataclasses import replace

    from yuesheng.check.rules import rite_of

    sheet = replace(load(MINI, repertoire=repertoire), rite_id=rite_id, rite_name=name)
    found = rite_of(sheet)
    assert (found.id if found else None) == rite


def test_a_xiangshe_round_to_another_piece_breaks_the_rule_from_the_table(repertoire, tmp_path):
    golden = Path(__file__).parent / "data" / "golden.yaml"
    text = golden.read_text(encoding="utf-8")
    assert "id: golden" in text and "piece: zouyu-huangzhong-yu" in text
    path = tmp_path / "xiangshe-own.yaml"
    path.write_text(text.replace("piece: zouyu-huangzhong-yu", "piece: luming"), encoding="utf-8")
    problems = [p for p in check_cuesheet(path, repertoire)[1] if p.rule == "music-round"]
    assert any("鄉射 shoots to 騶虞 or 采蘋, not 鹿鳴" in p.message for p in problems), problems


# -- validate's anchors under every programme: one programme of each class that cannot differ ---------------------

def _sheets(repertoire, tmp_path):
    from yuesheng.cuesheet import read_cuesheet
    from yuesheng.music.repertoire import data_dir
    from yuesheng.yamlload import load

    paths = [*sorted(data_dir("cues").glob("*.yaml")), *sorted((Path(__file__).parent / "data").glob("*.yaml")),
             _cycle_under_a_variant(tmp_path)]
    return [read_cuesheet(load(path), repertoire)[0] for path in paths]


def test_every_reference_to_a_later_point_of_any_programme_lies_in_the_cycle_span(repertoire, tmp_path):
    from yuesheng.cuesheet.anchors import dependencies
    from yuesheng.cuesheet.references import cycle_span, every_programme

    for sheet in _sheets(repertoire, tmp_path):
        span, index = cycle_span(sheet), {c.id: c.index for c in sheet.cues}
        for variants in every_programme(sheet):
            for point, waits in dependencies(sheet.active_cues(variants)).items():
                for other in waits:
                    if (index[other[0]], other[1] == "end") > (index[point[0]], point[1] == "end"):
                        assert set(range(index[point[0]], index[other[0]] + 1)) <= span, (sheet.rite_id, point, other)


def test_the_classes_find_the_cycle_every_programme_finds(repertoire, tmp_path):
    from yuesheng.cuesheet.anchors import find_cycle
    from yuesheng.cuesheet.references import cycle_classes, every_programme, programme_cycle

    for sheet in _sheets(repertoire, tmp_path):
        every = list(every_programme(sheet))
        classes = list(cycle_classes(sheet))
        assert programme_cycle(sheet, classes) == programme_cycle(sheet, every), sheet.rite_id
        cyclic = {v: bool(find_cycle(sheet.active_cues(v))) for v in every}
        assert any(cyclic.values()) == any(cyclic[v] for v in classes)
    dashe = _sheets(repertoire, tmp_path)[0]
    assert dashe.rite_id == "dashe" and len(list(cycle_classes(dashe))) < 8
