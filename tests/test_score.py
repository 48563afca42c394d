"""Scores: every shipped piece loads and passes its cross-checks; planted errors are caught with their place."""

from __future__ import annotations

import re

import pytest

from yuesheng.errors import AmbiguousNameError, InvalidInputError, UnknownNameError
from yuesheng.music.score import Provenance, read_piece, stated_lines
from yuesheng.yamlload import loads

SOURCED = ["luming", "simu", "huanghuangzhehua", "yuli", "nanyoujiayu", "nanshanyoutai", "guanju", "getan",
           "juaner", "queshao", "caifan", "caipin", "zouyu-huangzhong-yu", "zouyu-jiazhong-jue"]
LOST = ["nangai", "baihua", "huashu", "yougeng", "chongqiu", "youyi", "sixia", "gaixia", "aoxia", "xingong",
        "lishou", "shao"]


def test_the_repertoire_has_the_fourteen_sourced_and_twelve_lost_pieces(repertoire):
    assert sorted(p.id for p in repertoire if p.provenance is Provenance.SOURCED) == sorted(SOURCED)
    assert sorted(p.id for p in repertoire if p.provenance is Provenance.LOST) == sorted(LOST)


@pytest.mark.parametrize("pid", SOURCED)
def test_note_counts_equal_lyric_lengths(repertoire, pid):
    piece = repertoire.find(pid)
    for stanza in piece.stanzas:
        assert len(stanza.notes) == len(stanza.lyrics) == len(stanza.lu_line) == len(stanza.suzi_line)
        assert "".join(n.lyric for n in stanza.notes) == stanza.lyrics
        assert stanza.page


@pytest.mark.parametrize("pid", SOURCED)
def test_each_stanza_ends_on_the_final_or_a_recorded_exception(repertoire, pid):
    piece = repertoire.find(pid)
    excused = {i.stanza for i in piece.irregularities if i.check == "final"}
    for stanza in piece.stanzas:
        assert stanza.notes[-1].pitch.lu == piece.mode.final or stanza.number in excused
    assert piece.notes[-1].pitch.lu == piece.mode.final


def test_modes_of_the_odes(repertoire):
    modes = {p.id: p.mode.name for p in repertoire if p.provenance is Provenance.SOURCED}
    assert {modes[i] for i in SOURCED[:6]} == {"黄鍾宫"}
    assert {modes[i] for i in SOURCED[6:12]} == {"無射商"}
    assert modes["zouyu-huangzhong-yu"] == "黄鍾羽" and modes["zouyu-jiazhong-jue"] == "夾鍾角"


def test_absolute_pitch_comes_from_lu_and_suzi(repertoire):
    first = repertoire.find("luming").stanzas[0].notes
    assert (first[0].lyric, first[0].pitch.name) == ("呦", "黄清")  # 黄 / 六
    assert (first[7].lyric, first[7].pitch.name) == ("苹", "黄")  # 黄 / 合
    assert first[-2].pitch.name == "太清"  # emended 大 → 太, 俗字 五


def test_emendation_keeps_the_transmitted_reading(repertoire):
    piece = repertoire.find("luming")
    (e,) = piece.emendations
    assert (e.stanza, e.line, e.position, e.transmitted, e.adopted) == (1, "lu", 31, "大", "太")
    assert piece.stanzas[0].lu_line[30] == "大"
    assert piece.stanzas[0].notes[30].lu == "太"


def test_yuli_irregularity_is_recorded_from_the_source(repertoire):
    piece = repertoire.find("yuli")
    assert {(i.stanza, i.check) for i in piece.irregularities} == {(4, "final"), (5, "final"), (5, "start")}
    assert all("002-5a" in i.cite for i in piece.irregularities)


@pytest.mark.parametrize("pid", LOST)
def test_lost_pieces_cite_their_loss_and_label_their_realization(repertoire, pid):
    piece = repertoire.find(pid)
    assert piece.lost.cite.startswith("儀禮集釋 ")
    assert piece.realization.label == "modern realization"
    assert "not a reconstruction" in piece.realization.rule
    assert piece.provenance_label == "lost (modern realization)"


# --- planted disagreements -----------------------------------------------------------------------


def _planted(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def _problems(text: str) -> list[str]:
    with pytest.raises(InvalidInputError) as info:
        read_piece(loads(text, "planted.yaml"))
    return [str(p) for p in info.value.problems]


def test_flipped_suzi_is_caught_with_file_line_stanza_and_position(shipped_score_text):
    text = _planted(shipped_score_text("simu"), "suzi: 合一勾一四合", "suzi: 合尺勾一四合")
    (problem,) = _problems(text)
    lu_line = next(i for i, line in enumerate(text.splitlines(), 1) if line.strip().startswith("lu: 黄姑蕤姑太黄"))
    assert problem.startswith(f"planted.yaml:{lu_line}:9: stanzas[0].lu: stanza 1 position 2 (牡): ")
    assert "律 姑 disagrees with 俗字 尺" in problem and problem.endswith("[agree]")


def test_wrong_lu_is_caught(shipped_score_text):
    text = _planted(shipped_score_text("simu"), "lu: 黄姑蕤姑太黄", "lu: 黄姑蕤姑南黄")
    (problem,) = _problems(text)
    assert "stanza 1 position 5 (周): 律 南 disagrees with 俗字 四" in problem
    assert problem.endswith("[agree]")
    assert re.match(r"planted\.yaml:\d+:\d+: stanzas\[0\]\.lu: ", problem)


def test_a_character_that_is_no_lu(shipped_score_text):
    text = _planted(shipped_score_text("simu"), "lu: 黄姑蕤姑太黄", "lu: 黄姑蕤姑上黄")
    assert "stanza 1 position 5 (周): '上' is no 律 [lu]" in _problems(text)[0]


def test_a_lu_outside_the_mode(shipped_score_text):
    text = _planted(shipped_score_text("simu"), "lu: 黄姑蕤姑太黄", "lu: 黄姑蕤姑大黄")
    assert "大 is not in the scale of 黄鍾宫" in _problems(text)[0]


def test_unequal_lines(shipped_score_text):
    text = _planted(shipped_score_text("simu"), "lu: 黄姑蕤姑太黄", "lu: 黄姑蕤姑黄")
    assert "lyrics, 律 and 俗字 lines have 20, 19 and 20 characters" in _problems(text)[0]


def test_an_unrecorded_disagreement_is_an_error_once_the_emendation_is_removed(shipped_score_text):
    text = shipped_score_text("luming")
    text = text[: text.index("emendations:")]
    assert "大 is not in the scale of 黄鍾宫" in _problems(text)[0]


def test_an_emendation_must_match_the_transmitted_text(shipped_score_text):
    text = _planted(shipped_score_text("luming"), "transmitted: 大", "transmitted: 林")
    assert "emendation expects '林' but the transmitted text has '大'" in _problems(text)[0]


def test_a_lost_piece_with_unlabelled_notes_is_an_error(shipped_score_text):
    text = shipped_score_text("nangai")
    text = re.sub(r"realization:\n(  .*\n|    .*\n)+", "", text)
    assert any("must label them" in p for p in _problems(text))


def test_unknown_key_suggests(shipped_score_text):
    text = _planted(shipped_score_text("simu"), "mode_common:", "mode_comon:")
    assert "unknown key 'mode_comon' — did you mean 'mode_common'?" in _problems(text)[0]


def test_problems_are_all_reported_at_once(shipped_score_text):
    text = _planted(shipped_score_text("simu"), "lu: 黄姑蕤姑太黄", "lu: 黄姑蕤姑南黄")
    text = _planted(text, "lu: 黄姑林南應南太黄", "lu: 黄姑林南應南大黄")
    assert len(_problems(text)) == 2


# --- names --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "pid"), [("luming", "luming"), ("鹿鳴", "luming"), ("鹿鸣", "luming"),
                                           ("lu ming", "luming"), ("關雎", "guanju"), ("关雎", "guanju"),
                                           ("闗雎", "guanju"), ("南山有台", "nanshanyoutai"),
                                           ("騶虞黄鍾羽", "zouyu-huangzhong-yu"), ("驺虞夹钟角", "zouyu-jiazhong-jue"),
                                           ("新宮", "xingong"), ("狸首", "lishou")])
def test_find_a_piece_by_any_spelling(repertoire, name, pid):
    assert repertoire.find(name).id == pid


def test_a_shared_title_is_ambiguous(repertoire):
    with pytest.raises(AmbiguousNameError, match="zouyu-huangzhong-yu, zouyu-jiazhong-jue"):
        repertoire.find("騶虞")


def test_unknown_piece_suggests(repertoire):
    with pytest.raises(UnknownNameError, match="did you mean"):
        repertoire.find("鹿明")


def _source_problems(tmp_path, text: str) -> list[str]:
    from yuesheng.music.score import source_problems

    path = tmp_path / "planted.yaml"
    path.write_text(text, encoding="utf-8")
    return [str(p) for p in source_problems(path)]


def test_every_shipped_score_is_on_its_pages():
    from yuesheng.music.repertoire import data_dir
    from yuesheng.music.score import source_problems

    assert [p for path in sorted(data_dir("scores").glob("*.yaml")) for p in source_problems(path)] == []


def test_a_lyric_not_as_transmitted_fails_the_source_check_at_its_stanza(tmp_path, shipped_score_text):
    text = _planted(shipped_score_text("simu"), "四牡騑騑周道倭遲", "四牡騑騑周道逶遲")
    text = _planted(text, "周道倭遲 ", "周道逶遲 ")
    [problem] = _source_problems(tmp_path, text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if "周道逶遲" in row)
    assert problem.startswith(f"{tmp_path / 'planted.yaml'}:{line}:13: stanzas[0].lyrics: "
                              "stanza 1: lyrics…(律俗字) '四牡騑騑周道逶遲")
    assert "is not on 瑟譜 2-2b as transmitted" in problem and problem.endswith("[source]")


def test_a_stanza_on_a_page_that_does_not_exist_names_the_nearest(tmp_path, shipped_score_text):
    text = _planted(shipped_score_text("simu"), "page: 002-2b", "page: 002-99b")
    [problem] = _source_problems(tmp_path, text)
    assert "unknown page '002-99b' — did you mean" in problem and problem.endswith("[source]")


def test_a_lost_pieces_quote_is_checked_on_its_page(tmp_path, shipped_score_text):
    text = shipped_score_text("nangai")
    quote = next(line.split("quote:", 1)[1].strip() for line in text.splitlines() if line.strip().startswith("quote:"))
    [problem] = _source_problems(tmp_path, _planted(text, quote, quote[:-1] + "乎"))
    assert "lost.quote: the quote" in problem and problem.endswith("[source]")


@pytest.mark.parametrize(("mode_line", "stated"), [
    ("鹿鳴三章章八句黄鍾宫(俗呼正宫…)", (8, 8, 8)),
    ("闗雎三章一章四句二章章八句無射商(俗呼越調)", (4, 8, 8)),
    ("魚麗六章三章章四句三章章二句黄鍾宫(俗呼正宫)", (4, 4, 4, 2, 2, 2)),
    ("某二章章十二句", (12, 12)),
    ("某三章一章四句一章章八句", None),  # the groups add up to two stanzas, not three
    ("黄鍾宫", None),
])
def test_the_mode_line_states_the_lines_of_each_stanza(mode_line, stated):
    assert stated_lines(mode_line) == stated


@pytest.mark.parametrize("pid", SOURCED)
def test_every_sourced_stanza_has_the_lines_its_mode_line_states(repertoire, pid):
    piece = repertoire.find(pid)
    assert tuple(len(s.line_lengths) for s in piece.stanzas) == stated_lines(piece.source.mode_line)
    for stanza in piece.stanzas:
        assert sum(stanza.line_lengths) == len(stanza.notes)


def test_lines_that_break_where_the_poem_does_not_are_not_the_ode(repertoire):
    lines = {s.number: s.line_lengths for s in repertoire.find("luming").stanzas}
    assert lines[2] == (4, 4, 4, 4, 4, 6, 4, 6)  # 君子是則是傚 … 嘉賓式燕以敖
    assert [s.line_lengths for s in repertoire.find("yuli").stanzas][0] == (4, 2, 4, 3)  # 魚麗于罶 鱨鯊 …


def test_lines_must_spell_the_lyrics(shipped_score_text):
    text = _planted(shipped_score_text("simu"), "lines: 四牡騑騑 周道倭遲", "lines: 四牡騑騑 周道倭")
    (problem,) = _problems(text)
    assert re.match(r"planted\.yaml:\d+:\d+: stanzas\[0\]\.lines: stanza 1: lines '四牡騑騑 周道倭", problem)
    assert problem.endswith("split at the line ends [lines]")


def test_a_stanza_with_more_lines_than_the_mode_line_states(shipped_score_text):
    text = _planted(shipped_score_text("simu"), "lines: 四牡騑騑 周道倭遲", "lines: 四牡騑 騑 周道倭遲")
    (problem,) = _problems(text)
    assert "stanzas[0].lines: stanza 1 has 6 lines; the mode line '四牡五章章五句黄鍾宫(俗呼正宫)' states 5 [lines]" \
        in problem
