"""validate.py: reading, quotes and rules composed; the ``quote`` rule holds every cite to its shipped page."""

from __future__ import annotations

from pathlib import Path

import pytest

from yuesheng.check.validate import check_cuesheet, load_cuesheet
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
    with pytest.raises(InvalidInputError, match=r"sheet.yaml:\d+:\d+: .*\[quote\]"):
        load_cuesheet(path, repertoire)


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
