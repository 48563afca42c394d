"""``yuesheng source``: a shipped page, its layers labelled, a quote marked; unknown pages and missing quotes exit 1."""

from __future__ import annotations

import json


def test_a_page_prints_its_layers_labelled(run):
    code, out, err = run("source", "4-27b")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith("儀禮集釋 4-27b — KR1d0030 儀禮集釋 卷4, leaf 27b")
    assert "經\u3000司正實觶降自西階階間北面坐奠觶退共少立" in lines
    assert any(line.startswith("鄭注\u3000鄭注階間北面") for line in lines)
    assert "釋曰\u3000釋曰奠觶者以顯其事表其位也" in lines
    assert any(line.startswith("案\u3000\u3000(案此下/原本衍)") for line in lines)


def test_the_quote_is_marked_with_brackets_off_a_terminal(run):
    code, out, _ = run("source", "6-12b", "--quote", "司射遂適階間…不鼓不釋")
    assert code == 0
    assert "經\u3000【司射遂適階間】堂下北面命曰【不鼓不釋】" in out.splitlines()


def test_a_quote_running_on_prints_the_next_page_marked(run):
    code, out, _ = run("source", "6-13b", "--quote", "司射猶袒決遂左執弓右執一个")
    assert code == 0
    assert "→ 儀禮集釋 6-14a (the quote runs on)" in out
    assert "【司射猶袒決遂左執弓】" in out and "經\u3000【右執一个】兼諸弦面鏃" in out


def test_private_use_codes_are_shown_as_characters_with_their_source(run):
    code, out, _ = run("source", "5-4b", "--quote", "當&KR0925;北面")
    assert code == 0
    assert "主人阼階上【當楣北面】再拜" in out and "&KR0925;" not in out.split("private-use characters:")[0]
    assert "&KR0925; → 楣  (image: 木+眉" in out


def test_other_texts_by_prefix_or_title(run):
    assert "【鹿鳴三章章八句】黄鍾宫" in run("source", "sepu:2-2a", "--quote", "鹿鳴三章章八句")[1]
    code, out, _ = run("source", "周禮注疏 30-25a", "--quote", "樂以騶虞九節")
    assert code == 0 and out.startswith("周禮注疏 30-25a — KR1d0003") and "【樂以騶虞九節】" in out
    assert "音義\u3000音義(齊側/皆反)" in out


def test_json_gives_parts_with_source_text_and_the_quote_spans(run):
    code, out, _ = run("source", "5-4b", "--quote", "當&KR0925;北面", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["page"] == "5-4b" and data["citation"] == "儀禮集釋 5-4b"
    text = "".join(p["text"] for p in data["parts"])
    assert [text[a:b] for a, b in data["quote"]["spans"]] == ["當楣北面"]
    assert any("&KR0925;" in p["source"] and "楣" in p["text"] for p in data["parts"])
    assert data["private_use"] == [{"code": "KR0925", "char": "楣", "source": data["private_use"][0]["source"]}]


def test_an_unknown_page_exits_1_with_the_nearest_pages(run):
    code, out, err = run("source", "9-99b")
    assert code == 1 and out == ""
    assert "unknown page '9-99b' — did you mean '9-34a' or '9-34b' or '10-1a'?" in err


def test_a_bad_page_name_exits_1_saying_how_pages_are_named(run):
    code, _, err = run("source", "nine")
    assert code == 1 and "expected 卷-葉面 such as 9-23b, sepu:2-3a or zhouli:30-25a" in err


def test_a_quote_not_on_the_page_exits_1_saying_so(run):
    code, out, err = run("source", "6-12b", "--quote", "大師不興許諾")
    assert code == 1 and out == ""
    assert "quote '大師不興許諾' is not on 儀禮集釋 6-12b nor running on to 6-13a" in err


def test_no_page_is_a_usage_error(run):
    assert run("source")[0] == 2


def test_the_quote_is_marked_in_plain_text_even_on_a_terminal(run, monkeypatch):
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    code, out, _ = run("source", "9-23b", "--quote", "乃歌鹿鳴三終")
    assert code == 0 and "【乃歌鹿鳴三終】" in out and "\x1b" not in out and "\\x1b" not in out
