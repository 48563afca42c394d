"""The shipped texts: page names, parts, quotes, private-use codes — and fidelity: every cite and stanza is on its
page."""

from __future__ import annotations

import json
import marshal
import pickle
import re

import pytest

from yuesheng import caches, characters, sources
from yuesheng.check.validate import _cites
from yuesheng.errors import InvalidValueError, UnknownPageError
from yuesheng.music.repertoire import data_dir
from yuesheng.music.score import Provenance
from yuesheng.yamlload import load

from kanripo import page_and_next

# --- page names ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, text, expected", [
    ("9-23b", "yili", ("yili", 9, 23, "b")),
    ("009-23b", "yili", ("yili", 9, 23, "b")),
    ("儀禮集釋 9-23b", "sepu", ("yili", 9, 23, "b")),
    ("yili:9-23b", "yili", ("yili", 9, 23, "b")),
    ("周禮注疏 30-25a", "yili", ("zhouli", 30, 25, "a")),
    ("zhouli:30-25a", "yili", ("zhouli", 30, 25, "a")),
    ("sepu:2-3a", "yili", ("sepu", 2, 3, "a")),
    ("瑟譜 2-3a", "yili", ("sepu", 2, 3, "a")),
    ("002-3a", "sepu", ("sepu", 2, 3, "a")),
    ("<pb:KR1d0030_WYG_006-12b>", "sepu", ("yili", 6, 12, "b")),
])
def test_every_spelling_of_a_page_names_the_same_page(name, text, expected):
    assert sources.parse_page(name, text=text) == sources.PageId(*expected)


@pytest.mark.parametrize("name, message", [
    ("9-23", "expected 卷-葉面"), ("9-23c", "expected 卷-葉面"), ("foo:9-23b", "unknown text 'foo'"),
    ("毛詩 1-1a", "unknown text '毛詩'"),
])
def test_a_bad_page_name_says_what_is_expected(name, message):
    with pytest.raises(InvalidValueError, match=message):
        sources.parse_page(name)


def test_a_page_is_named_short_for_yili_and_prefixed_for_the_others():
    assert [str(sources.parse_page(n)) for n in ("儀禮集釋 9-23b", "周禮注疏 30-25a", "瑟譜 2-3a")] == \
        ["9-23b", "zhouli:30-25a", "sepu:2-3a"]
    assert sources.parse_page("zhouli:30-25a").citation == "周禮注疏 30-25a"


def test_every_shipped_chapter_is_there():
    juans = {key: sorted({p.juan for p in sources.pages(key)}) for key in sources.TEXTS}
    assert juans == {"yili": [4, 5, 6, 7, 8, 9, 10], "zhouli": [22, 23, 24, 30], "sepu": [0, 1, 2, 3, 4, 5, 6]}


def test_an_unknown_page_suggests_the_nearest_shipped_pages():
    with pytest.raises(UnknownPageError) as caught:
        sources.page("9-99b")
    assert caught.value.suggestions == ("9-34a", "9-34b", "10-1a")
    assert "卷9 has no leaf 99b" in str(caught.value)
    with pytest.raises(UnknownPageError, match=r"卷12 is not shipped; shipped: 卷 4, 5, 6, 7, 8, 9, 10"):
        sources.page("12-1a")


# --- the text of a page and its parts ----------------------------------------------------------------------------

def _raw_page(folder: str, kr_id: str, page: str) -> str:
    """The page as in the file: everything between its page break and the next, whitespace and ¶ removed."""
    juan = page.split("-")[0]
    raw = (sources.TEXTS_DIR / folder / f"{kr_id}_{juan}.txt").read_text(encoding="utf-8")
    body = raw.split(f"<pb:{kr_id}_WYG_{page}>")[1].split("<pb:")[0]
    return re.sub(r"[\s\u3000¶]", "", body)


@pytest.mark.parametrize("key, folder, kr_id", [(t.key, t.folder, t.kr_id) for t in sources.TEXTS.values()])
def test_a_pages_parts_together_are_the_page_as_transcribed(key, folder, kr_id):
    for pid, page in sources.pages(key).items():
        assert page.text == _raw_page(folder, kr_id, f"{pid.juan:03d}-{pid.leaf}{pid.side}"), pid


def test_yili_parts_tell_the_jing_the_notes_and_the_collation_apart():
    parts = [(p.kind, p.text) for p in sources.page("4-27b").parts]
    assert parts[0] == ("經", "司正實觶降自西階階間北面坐奠觶退共少立")
    assert parts[1][0] == "鄭注" and parts[1][1].startswith("鄭注階間北面")
    assert parts[2] == ("釋曰", "釋曰奠觶者以顯其事表其位也")
    assert parts[3] == ("經", "坐取觶不祭遂飲卒觶興坐奠觶遂拜執觶興")
    note = parts[4][1]
    assert parts[4][0] == "案" and note.startswith("(案此下/原本衍)(盥字") and note.endswith("今從疏刪去)")
    assert parts[5] == ("經", "洗北面坐")


def test_a_note_running_over_the_page_break_keeps_its_layer():
    first = sources.page("6-13a").parts[0]
    assert first.kind == "鄭注" and first.text.startswith("鄭注東面者")
    note = sources.PagePart("鄭注", "之命于賤者遥號命之可也樂正亦許諾猶北面不還以賓在堂")
    assert sources.page("6-12b").parts[0] == note


def test_zhouli_parts_follow_jing_zhu_yinyi_shu_inline():
    kinds = [p.kind for p in sources.page("zhouli:30-24b").parts]
    assert kinds == ["疏", "經", "注", "音義", "疏", "經", "注"]
    parts = sources.page("zhouli:30-24b").parts
    assert parts[1].text == "諸侯在朝則皆北面詔相其灋"
    assert parts[3].text == "音義(相息亮反下/及相孤同)"


# --- quotes ------------------------------------------------------------------------------------------------------

def test_a_quote_with_words_left_out_matches_in_order():
    page = sources.page("6-12b")
    match = sources.find_quote("司射遂適階間…不鼓不釋", page)
    assert match is not None and not match.runs_on
    here = characters.display(page.text)
    assert [here[a:b] for a, b in match.spans] == ["司射遂適階間", "不鼓不釋"]
    assert sources.find_quote("不鼓不釋…司射遂適階間", page) is None  # out of order


def test_a_quote_may_run_on_to_the_next_page_but_must_start_on_its_own():
    match = sources.find_quote("司射猶袒決遂左執弓右執一个", sources.page("6-13b"))
    assert match is not None and match.runs_on
    match = sources.find_quote("奏騶虞間若一…大師不興許諾", sources.page("6-12b"))
    assert match is not None and match.runs_on
    assert sources.find_quote("大師不興許諾", sources.page("6-12b")) is None  # wholly on 6-13a
    assert sources.find_quote("大師不興許諾", sources.page("6-13a")) is not None


def test_a_quote_ignores_line_breaks_and_spaces_but_not_a_changed_word():
    page = sources.page("6-12b")
    assert sources.find_quote("司射遂適階間 堂下北面", page) is not None
    assert sources.find_quote("司射遂適階間堂下南面", page) is None
    assert sources.find_quote("…", page) is None


def test_a_private_use_code_matches_its_character_either_way():
    page = sources.page("5-4b")
    assert sources.find_quote("主人阼階上當&KR0925;北面再拜", page) is not None
    assert sources.find_quote("主人阼階上當楣北面再拜", page) is not None


# --- private-use codes -------------------------------------------------------------------------------------------

def test_display_shows_the_standard_character_and_marks_a_code_not_established():
    assert characters.display("當&KR0925;北面") == "當楣北面"
    assert characters.display("縮&KR0764;") == "縮霤"
    assert characters.display("謂&KR0871;肝膋") == "謂⿰月巽肝膋"  # no Unicode character: its description
    assert characters.display("&KR9999;") == "〓KR9999"
    assert characters.display("no codes") == "no codes"


def test_every_code_in_the_texts_is_in_the_table_with_its_source():
    used = {c for key in sources.TEXTS for page in sources.pages(key).values()
            for c in characters.private_use_codes(page.text)}
    assert used == set(characters.PRIVATE_USE)
    for entry in characters.PRIVATE_USE.values():
        assert entry.char and entry.source.startswith(("image: ", "charlist: ")), entry
        described = "ideographic description" in entry.source
        assert len(entry.char) == 1 or (described and entry.char[0] in "⿰⿱⿻"), entry


@pytest.mark.parametrize(("code", "page", "shown"), [
    ("KR0871", "8-10a", "謂⿰月巽肝膋"), ("KR0871", "10-25b", "謂⿰月巽肝膋"), ("KR1969", "9-5b", "從豆⿻凵⿰丰丰聲"),
    ("KR2239", "zhouli:24-10a", "又作帆⿰阝几二皆音耆"), ("KR2503", "zhouli:30-37b", "掚監本訛⿰木兩"),
])
def test_the_four_codes_once_unresolved_are_shown_from_kanripos_glyph_images(code, page, shown):
    text = characters.display(sources.page(page).text)
    assert shown in text and "&KR" not in text and characters.UNRESOLVED not in text
    assert "ideographic description" in characters.PRIVATE_USE[code].source


def test_every_code_the_cue_sheets_and_scores_use_is_established():
    text = "".join(p.read_text(encoding="utf-8") for folder in ("cues", "scores")
                   for p in data_dir(folder).glob("*.yaml"))
    codes = set(characters.private_use_codes(text))
    assert codes == {"KR0764", "KR0925"}
    assert all(characters.PRIVATE_USE[c].char for c in codes)


# --- fidelity: the shipped cue sheets and scores against the shipped texts -------------------------------------

@pytest.mark.parametrize("path", sorted(data_dir("cues").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_cite_of_a_cue_sheet_quotes_its_page(path):
    cites = list(_cites(load(path).data))
    assert len(cites) > 100
    missing = [f"{where}: {name} {quote}" for where, name, quote in cites
               if sources.find_quote(quote, sources.page(name)) is None]
    assert missing == []


@pytest.mark.parametrize("piece_id", ["luming", "simu", "huanghuangzhehua", "yuli", "nanyoujiayu", "nanshanyoutai",
                                      "guanju", "getan", "juaner", "queshao", "caifan", "caipin",
                                      "zouyu-huangzhong-yu", "zouyu-jiazhong-jue"])
def test_every_stanza_is_on_its_cited_page_as_transmitted(repertoire, piece_id):
    piece = repertoire.find(piece_id)
    assert piece.provenance is Provenance.SOURCED
    for stanza in piece.stanzas:
        text = page_and_next("sepu", stanza.page)
        assert stanza.lyrics in text, f"stanza {stanza.number}: lyrics not on {stanza.page}"
        block = f"({stanza.lu_line}{stanza.suzi_line})"
        assert block in text, f"stanza {stanza.number}: pitch block not on {stanza.page}"
    assert piece.source.mode_line in page_and_next("sepu", piece.source.mode_page)


@pytest.mark.parametrize("piece_id", ["nangai", "baihua", "huashu", "yougeng", "chongqiu", "youyi", "sixia", "gaixia",
                                      "aoxia", "xingong", "lishou", "shao"])
def test_the_loss_is_quoted_from_its_page(repertoire, piece_id):
    piece = repertoire.find(piece_id)
    assert sources.find_quote(piece.lost.quote, sources.page(piece.lost.cite)) is not None


@pytest.mark.parametrize(("page", "ji"), [
    ("4-44a", "磬階間縮&KR0764;"), ("6-34b", "歌騶虞若采蘋皆五終"), ("8-28a", "有房中之樂"),
])
def test_the_ji_is_labelled_ji_not_jing(page, ji):
    parts = sources.page(page).parts
    assert "經" not in {p.kind for p in parts}
    assert any(p.kind == "記" and ji in p.text for p in parts)


def test_the_ji_begins_at_its_heading():
    kinds = [(p.kind, p.text[:4]) for p in sources.page("4-39a").parts]
    assert ("經", "鄉樂惟欲") in kinds and ("記", "記鄉朝服") in kinds
    assert kinds.index(("經", "鄉樂惟欲")) < kinds.index(("記", "記鄉朝服"))
    assert {k for k, _ in kinds} <= {"經", "記", "鄭注", "釋曰", "案"}


def test_the_texts_parse_is_kept_for_the_next_run_and_a_damaged_entry_is_parsed_again(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    sources.pages.cache_clear()
    parsed = sources.pages("sepu")
    entry = tmp_path / "yuesheng" / "texts" / f"{caches.key(sources._KEPT_FORMAT, 'sepu')}.json"
    assert entry.is_file()

    def no_parse(*args):
        raise AssertionError("parsed again")

    sources.pages.cache_clear()
    with monkeypatch.context() as m:
        m.setattr(sources, "_parse", no_parse)
        assert sources.pages("sepu") == parsed  # from the kept entry
    folder = caches.folder("texts")
    assert folder is not None
    kept = json.loads(folder.read(entry.name, limit=1 << 24) or b"")
    wrong = [[*kept[0][:3], [["經", 1]]], *kept[1:]]  # a part's text that is not a string
    for damage in (b"", b"\x00garbage", entry.read_bytes()[:1000], b"{}", json.dumps(wrong).encode(),
                   pickle.dumps(kept), marshal.dumps(kept)):
        entry.write_bytes(damage)  # damaged on disk: it fails its digest
        sources.pages.cache_clear()
        assert sources.pages("sepu") == parsed
        folder.write(entry.name, damage, entries=8)  # written whole, but not pages
        sources.pages.cache_clear()
        assert sources.pages("sepu") == parsed
    sources.pages.cache_clear()
