"""What a scholar checks first in the four sheets: each word cited where the text says it, nothing stale, and no
choice presented as the text's (issue 19)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from yuesheng import build, characters, load, sources
from yuesheng.music.repertoire import data_dir


def _yaml(rite: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((data_dir("cues") / f"{rite}.yaml").read_text(encoding="utf-8"))
    return data


def _cue(rite: str, cue_id: str) -> dict[str, Any]:
    return next(c for c in _yaml(rite)["cues"] if c["id"] == cue_id)


def _layer(page: str, quote: str) -> set[str]:
    """The layers of *page* that the quote's first part falls in."""
    found = sources.page(page)
    first = characters.display(quote.split("…")[-1])
    return {p.kind for p in found.parts if first in characters.display(p.text)}


@pytest.mark.parametrize(("rite", "piece", "page"), [
    ("xiangshe", "陔夏", "6-22a"),  # 鄭注 陔陔夏其詩亡
    ("dashe", "陔夏", "10-32b"),
    ("dashe", "新宮", "9-25b"),  # 鄭注 新宫之樂其篇亡
    ("dashe", "肆夏", "9-10a"),  # 鄭注 肆夏樂章名今亡
    ("yanli", "南陔", "8-4a"),
    ("yanli", "由庚", "8-5b"),
])
def test_a_lost_piece_is_cited_to_the_rites_own_page(repertoire, rite, piece, page):
    tl = build(load(data_dir("cues") / f"{rite}.yaml", repertoire=repertoire))
    notice = next(n for n in tl.notices if n.startswith(f"{piece} ("))
    assert f"is lost (儀禮集釋 {page})" in notice


def test_a_lost_piece_the_rites_text_is_silent_on_says_whose_page_it_is(repertoire):
    tl = build(load(data_dir("cues") / "xiangyinjiu.yaml", repertoire=repertoire))
    notice = next(n for n in tl.notices if n.startswith("陔夏 ("))
    assert "10-32b, another rite's text" in notice


@pytest.mark.parametrize("rite", ["xiangyinjiu", "xiangshe", "yanli", "dashe"])
def test_the_notices_name_only_readings_the_rite_has(repertoire, rite):
    sheet = load(data_dir("cues") / f"{rite}.yaml", repertoire=repertoire)
    for notice in build(sheet).notices:
        for named in (w.split("=")[0] for w in notice.replace("(", " ").replace(")", " ").split() if "=" in w):
            assert named in sheet.readings, notice


def test_the_heyue_default_is_credited_to_the_shiyue_and_says_how_the_shorter_ode_fills_the_longer():
    for rite in ("xiangyinjiu", "xiangshe", "yanli"):
        options = _yaml(rite)["readings"]["heyue"]["options"]
        assert options["zheng"]["cite"] == {"page": "4-25b", "quote": "合樂謂堂上歌瑟堂下鍾磬合奏此詩"}
        assert _layer("4-25b", options["zheng"]["cite"]["quote"]) == {"釋曰"}
        assert "rest until the longer ends" in options["li-rugui"]["text"]


def test_xiangyinjiu_heyue_note_is_not_stale():
    note = _cue("xiangyinjiu", "heyue")["note"]
    assert "six 終" not in note and "Three 終 either way" in note


def test_yanli_says_how_many_cues_the_yan_she_variant_has():
    data = _yaml("yanli")
    count = sum(1 for c in data["cues"] if c.get("variant") == "yan-she")
    assert count == 41
    for text in (data["estimates"], data["variants"]["yan-she"]["note"]):
        assert "placeholder" not in text and f"{count} cues" in text


def test_wusuan_yin_cites_the_zhu_whose_words_it_gives():
    cue = _cue("yanli", "wusuan-yin")
    assert cue["cite"]["page"] == "8-16a"
    assert _layer("8-16a", cue["cite"]["quote"]) == {"鄭注"}
    assert cue["action"].replace(" ", "") in cue["cite"]["quote"]


def test_the_east_xuan_is_named_from_sheng_not_from_the_mouth_organ():
    note = _cue("dashe", "wu-suan-yue")["note"]
    assert "笙猶生也東為陽中萬物以生" in note


def test_lishou_words_surviving_in_sheyi_are_shown():
    note = _cue("dashe", "lishou-she")["note"]
    assert "射義所載詩曰曽孫侯氏是也" in note and "曽孫侯氏 四正具舉" in note


def test_fangzhong_is_presented_as_unplaced_not_justified_by_yanyue():
    note = _cue("yanli", "fangzhong-yue")["note"]
    assert "UNPLACED IN THE TEXT" in note and "二樂皆教其鍾磬" in note
    assert "because 鄭 calls" not in note



@pytest.mark.parametrize("rite", ["xiangyinjiu", "xiangshe"])  # their sheets quote 縮&KR0764; and 當&KR0925;
def test_no_kanripo_code_reaches_a_person_in_any_output(run, tmp_path, rite):
    assert "&KR" in (data_dir("cues") / f"{rite}.yaml").read_text(encoding="utf-8")  # the file keeps the codes
    for fmt in ("text", "csv", "json"):
        code, out, _ = run("timeline", rite, "--format", fmt)
        assert code == 0 and "&KR" not in out, fmt
    midi, page = tmp_path / "rite.mid", tmp_path / "rite.html"
    assert run("render", rite, "-o", str(midi))[0] == 0
    assert run("sheet", rite, "-o", str(page))[0] == 0
    assert b"&KR" not in midi.read_bytes()
    assert "&KR" not in page.read_text(encoding="utf-8")


def test_the_console_and_page_read_cues_whose_texts_show_the_characters(repertoire):
    sheet = load(data_dir("cues") / "xiangyinjiu.yaml", repertoire=repertoire)
    texts = [f"{c.cite} {c.action} {c.words} {c.note}" for c in sheet.cues]
    assert not any("&KR" in t for t in texts)
    assert any("縮霤" in t for t in texts) and any("當楣" in t for t in texts)
