"""Engraving: the LilyPond source holds the piece's pitches and 簡譜 digits; the PDF and SVG hold its text;
score text never runs as LilyPond code; missing engraver or font gives a clear error; the songbook follows the
Timeline."""

from __future__ import annotations

import re
import shutil
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from yuesheng.errors import EngraveError
from yuesheng.fonts import FAMILIES
from yuesheng.music.lulu import Degree, Realization, Tuning
from yuesheng.music.score import load_piece
from yuesheng.outputs import engrave
from yuesheng.outputs.engrave import Notation, Setting, lily_string, score_source

from hang import time_limit

FONT = "Noto Serif CJK TC"  # the source-only tests name a font; they do not need it installed
_PITCH = re.compile(r"(?<![\\\w])([a-g])(isis|eses|is|es)?([',]*)4(?![\w])")
_STEP = dict(zip("cdefgab", (0, 2, 4, 5, 7, 9, 11), strict=True))
_ALTER = {None: 0, "is": 1, "es": -1, "isis": 2, "eses": -2}


def _voices(source: str) -> list[str]:
    """The music of each stanza's voice, with every quoted string removed."""
    unquoted = re.sub(r'"(?:\\.|[^"\\])*"', '""', source)
    return re.findall(r'\\new Voice = "" \{(.*?)\}\s*$', unquoted, flags=re.M)


def _keys(voice: str) -> list[int]:
    """MIDI keys of the LilyPond notes (absolute pitches: c is C3, c' C4) in *voice*."""
    voice = re.sub(r"\\key \S+ \\major|\\clef \S+", "", voice)
    return [48 + _STEP[letter] + _ALTER[a or None] + 12 * (marks.count("'") - marks.count(","))
            for letter, a, marks in _PITCH.findall(voice)]


def _digits(source: str) -> list[str]:
    """The 簡譜 digits of the voices, each with its accidental (drawn small at its upper left): ``♯4``."""
    voices = "\n".join(line for line in source.splitlines() if "\\new Voice" in line)
    heads = re.findall(r"\\overlay \{ \\center-align \\fontsize #\d+ \"(\d)\" (?:\\translate #'\([^)]*\) "
                       r"\\right-align \\fontsize #-?\d+ \"([^\"]+)\")?", voices)
    return [sign + digit for digit, sign in heads]


def _pdf_text(path: Path) -> str:
    pypdf = pytest.importorskip("pypdf")
    return "\n".join(page.extract_text(extraction_mode="layout") for page in pypdf.PdfReader(path).pages)


def test_a_tilde_in_lyrics_is_spelt_not_a_lyric_tie() -> None:
    assert engrave.lyric_syllable("~") == '\\markup \\concat { "" \\char ##x7E "" }'
    assert engrave.lyric_syllable('"') == '"\\""'


def test_lily_string_escapes_backslash_and_quote() -> None:
    assert lily_string('#(system "touch x")') == '"#(system \\"touch x\\")"'
    assert lily_string("\\markup") == '"\\\\markup"'
    assert lily_string('"}') == '"\\"}"'
    assert lily_string("a\nb\x00") == '"a b "'


@pytest.mark.parametrize("huangzhong", [60, 62, 57, 61, 66])
@pytest.mark.parametrize("name", ["鹿鳴", "關雎", "騶虞夾鍾角"])
def test_staff_notes_in_the_source_are_the_pieces_pitches(repertoire, huangzhong: int, name: str) -> None:
    piece = repertoire.find(name)
    real = Realization(huangzhong)
    source = score_source(piece, Setting(realization=real), font=FONT)
    voices = _voices(source)
    assert len(voices) == len(piece.stanzas)
    for voice, stanza in zip(voices, piece.stanzas, strict=True):
        assert _keys(voice) == [real.midi(n.pitch)[0] for n in stanza.notes]


def test_key_signature_is_the_gong_of_the_mode_at_the_chosen_huangzhong(repertoire) -> None:
    guanju = repertoire.find("關雎")  # 無射商: 宫 is 無射, a minor seventh above 黄鍾
    assert "\\key bes \\major" in score_source(guanju, Setting(), font=FONT)
    assert "\\key c \\major" in score_source(guanju, Setting(realization=Realization(62)), font=FONT)


_DIGIT = {Degree.GONG: "1", Degree.SHANG: "2", Degree.JUE: "3", Degree.BIANZHI: "♯4", Degree.ZHI: "5",
          Degree.YU: "6", Degree.BIANGONG: "7"}


@pytest.mark.parametrize("name, final_digit", [("關雎", "2"), ("騶虞夾鍾角", "3"), ("鹿鳴", "1"), ("騶虞黄鍾羽", "6")])
def test_jianpu_digits_follow_the_mode(repertoire, name: str, final_digit: str) -> None:
    piece = repertoire.find(name)
    digits = _digits(score_source(piece, Setting(notation=Notation.JIANPU), font=FONT))
    assert digits == [_DIGIT[piece.mode.degree_of(n.pitch.lu)] for n in piece.notes]
    assert digits[-1] == final_digit


def test_jianpu_octave_dots_mark_the_register(repertoire) -> None:
    piece = repertoire.find("鹿鳴")  # 黄鍾宫 at C4: 黄 is 1, 黄清 is 1 with a dot above
    source = score_source(piece, Setting(notation=Notation.JIANPU), font=FONT)
    first = source.split("\\new Voice")[1].split("|")[0]
    heads = [(d, marks.strip()) for d, marks in
             re.findall(r"\\overlay \{ \\center-align \\fontsize #\d+ \"(\d)\"(.*?) \} ", first)]
    assert piece.stanzas[0].notes[0].pitch.name == "黄清"
    assert heads[0][0] == "1" and heads[0][1].count("draw-circle") == 1
    assert f"#'(0 . {engrave._DOT_ABOVE})" in heads[0][1]
    assert heads[1][1] == ""  # 南 in the middle octave


def test_lyric_lines_are_the_syllables_lu_and_suzi(repertoire) -> None:
    piece = repertoire.find("鹿鳴")
    source = score_source(piece, Setting(), font=FONT)
    lines = [line for line in source.splitlines() if "\\new Lyrics" in line][:3]
    words = [re.findall(r'"((?:\\.|[^"\\])*)"', line)[2:] for line in lines]  # past "v" and the label
    notes = piece.stanzas[0].notes
    assert words == [[n.lyric for n in notes], [n.pitch.name for n in notes], [n.suzi for n in notes]]


def test_emended_note_is_marked_and_the_transmitted_reading_given(repertoire) -> None:
    piece = repertoire.find("鹿鳴")  # stanza 1, 律 31: transmitted 大, read 太
    source = score_source(piece, Setting(), font=FONT)
    voice = re.sub(r"\\time \d+/4", "", _voices(source)[0])
    tokens = re.findall(r"\S+4(?:\^\"\")?", voice)
    assert tokens[30].endswith('^""') and sum(t.endswith('^""') for t in tokens) == 1
    assert '^"*1"' in source and "*1 律 line, character 31: transmitted 大, read 太." in source


def test_sanfen_scores_get_one_cents_legend(repertoire) -> None:
    piece = repertoire.find("鹿鳴")
    source = score_source(piece, Setting(realization=Realization(60, Tuning.SANFEN)), font=FONT)
    assert source.count("三分損益, cents against equal temperament") == 1
    assert "林 +1.96" in source and "太 +3.91" in source and "黄 +0.00" in source
    assert "三分損益, cents" not in score_source(piece, Setting(), font=FONT)


def test_lost_piece_is_titled_modern_realization_with_its_rule(repertoire) -> None:
    piece = repertoire.find("南陔")
    source = score_source(piece, Setting(), font=FONT)
    assert 'title = "南陔 — modern realization"' in source
    assert lily_string(f"Modern realization, not a transmitted score. Rule: {piece.realization.rule}") in source
    assert "\\new Lyrics" in source and '\\set stanza = "詞"' not in source  # no words to sing


def test_a_realization_label_keeps_the_authors_case(repertoire) -> None:
    piece = repertoire.find("南陔")
    piece = replace(piece, realization=replace(piece.realization, label="after ZHU Zaiyu"))
    source = score_source(piece, Setting(), font=FONT)
    assert 'title = "南陔 — after ZHU Zaiyu"' in source
    assert lily_string(f"After ZHU Zaiyu, not a transmitted score. Rule: {piece.realization.rule}") in source


def test_pdf_text_holds_the_syllables_and_lu_names(repertoire, has_engraver, tmp_path: Path) -> None:
    piece = repertoire.find("鹿鳴")
    engrave.engrave(score_source(piece, Setting()), tmp_path / "luming.pdf")
    text = _pdf_text(tmp_path / "luming.pdf")
    chars = Counter(text)
    for stanza in piece.stanzas:
        needed = Counter(n.lyric for n in stanza.notes)
        assert not needed - chars, f"stanza {stanza.number}: missing {needed - chars}"
    tokens = set(text.split())
    assert {n.pitch.name for n in piece.stanzas[0].notes} <= tokens
    assert "鹿鳴" in text and "黄鍾宫" in text


def test_svg_holds_every_syllable(repertoire, has_engraver, tmp_path: Path) -> None:
    piece = repertoire.find("關雎")
    written = engrave.engrave(score_source(piece, Setting(notation=Notation.JIANPU)), tmp_path / "guanju.svg")
    texts: Counter[str] = Counter()
    for path in written:
        for element in ET.parse(path).iter():
            if element.tag.endswith("tspan") and element.text:
                texts[element.text] += 1
    assert not Counter(n.lyric for n in piece.notes) - texts
    assert not Counter(n.suzi for n in piece.notes) - texts
    families = {e.get("font-family") for path in written for e in ET.parse(path).iter() if e.tag.endswith("text")}
    named = ", ".join(f"'{f}'" for f in (engrave.find_cjk_font(), *FAMILIES))
    assert families == {f"{named}, serif"}  # the faces the PDF uses, not a browser's choice


HOSTILE = ['#(system "touch pwned")', '$(system "touch pwned")', '\\markup { \\bold "}" }', '"}']


def _hostile_score(tmp_path: Path) -> Path:
    lyrics = "#$\\\"}{()~"  # every character a syllable
    text = f"""\
id: hostile
title: '{HOSTILE[0]} {HOSTILE[1]} {HOSTILE[3]}'
mode: 黄鍾宫
mode_common: '{HOSTILE[2]}'
provenance: sourced
source: {{text: '{HOSTILE[0]}', pages: ['{HOSTILE[3]} {HOSTILE[2]}']}}
stanzas:
  - page: '{HOSTILE[1]}'
    lyrics: '{lyrics}'
    lu: 黄太姑林南林太姑黄
    suzi: 合四一尺工尺四一合
"""
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_score_text_is_quoted_never_run(tmp_path: Path, has_engraver, run, monkeypatch) -> None:
    path = _hostile_score(tmp_path)
    piece = load_piece(path)
    assert piece.title == '#(system "touch pwned") $(system "touch pwned") "}'
    ran_code = []
    real_run = engrave.run_tool

    def watched(command, *, cwd, **kw):  # LilyPond runs in a private folder: look there after each run
        log = real_run(command, cwd=cwd, **kw)
        ran_code.append((cwd / "pwned").exists())
        return log

    monkeypatch.setattr(engrave, "run_tool", watched)
    monkeypatch.chdir(tmp_path)
    for out in ("hostile.pdf", "hostile.svg"):
        code, _, err = run("score", "engrave", "hostile", "--scores", str(path), "-o", out)
        assert code == 0, err
    assert ran_code == [False, False, False, False]  # fc-list and LilyPond, twice
    assert not (tmp_path / "pwned").exists()
    text = _pdf_text(tmp_path / "hostile.pdf")
    assert piece.title in text and HOSTILE[2] in text
    assert "".join(n.lyric for n in piece.notes) in "".join(text.split())  # as text, not run, and in order
    spans = [e.text for e in ET.parse(tmp_path / "hostile.svg").iter() if e.tag.endswith("tspan")]
    assert piece.title in spans and all(n.lyric in spans for n in piece.notes)


def test_missing_cjk_font_says_what_to_install(repertoire, tmp_path: Path, run, monkeypatch) -> None:
    monkeypatch.setattr(engrave, "run_tool", lambda *a, **k: "")  # fc-list finds no Chinese font
    with pytest.raises(EngraveError, match="apt-get install fonts-noto-cjk"):
        engrave.find_cjk_font()
    code, _, err = run("score", "engrave", "鹿鳴", "-o", str(tmp_path / "x.pdf"))
    assert code == 1 and "no CJK font found" in err and "apt-get install fonts-noto-cjk" in err
    assert not (tmp_path / "x.pdf").exists()


def test_missing_fontconfig_says_what_to_install(monkeypatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(EngraveError, match="no 'fc-list' command.*apt-get install fontconfig fonts-noto-cjk"):
        engrave.find_cjk_font()


def test_missing_engraver_says_what_to_install(tmp_path: Path, run, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "lilypond", None)  # import lilypond → ImportError
    monkeypatch.setattr(engrave, "find_cjk_font", lambda: FONT)
    code, _, err = run("score", "engrave", "鹿鳴", "-o", str(tmp_path / "x.pdf"))
    assert code == 1 and "LilyPond is not installed" in err and "pip install lilypond" in err
    assert not list(tmp_path.iterdir())
    code, _, err = run("score", "engrave", "鹿鳴", "-o", str(tmp_path / "x.ly"))
    assert code == 0 and (tmp_path / "x.ly").read_text(encoding="utf-8").startswith("\\version")


def test_engraver_failure_and_time_limit_become_errors(has_engraver, tmp_path: Path) -> None:
    with pytest.raises(EngraveError, match="LilyPond failed"):
        engrave.engrave("\\version \"2.25.12\"\n{ c'4 \\nosuchcommand }\n", tmp_path / "bad.pdf")
    assert not list(tmp_path.iterdir())
    with time_limit(5), pytest.raises(EngraveError, match="did not finish within 0.3 s"):
        engrave.run_tool(["sleep", "30"], cwd=tmp_path, time_limit=0.3, what="sleep")


def test_cli_rejects_unknown_output_and_part(run, tmp_path: Path) -> None:
    code, _, err = run("score", "engrave", "鹿鳴", "-o", str(tmp_path / "x.doc"))
    assert code == 2 and "expected a .pdf, .svg, .png or .ly" in err
    code, _, err = run("songbook", "xiangyinjiu", "-o", str(tmp_path / "x.ly"), "--part", "琴")
    assert code == 1 and "unknown part '琴'" in err
    code, _, err = run("score", "engrave", "南陔", "-o", str(tmp_path / "x.ly"), "--notation", "tab")
    assert code == 2


def test_every_page_file_is_checked_before_any_is_written(has_engraver, tmp_path):
    from yuesheng.errors import OutputError

    (tmp_path / "book-2.png").mkdir()  # where the second page would go
    source = "\\version \"2.24.0\"\n{ c'1 \\pageBreak c'1 }\n"  # two pages
    with pytest.raises(OutputError, match="book-2.png: it is a directory"):
        engrave.engrave(source, tmp_path / "book.png")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["book-2.png"]  # not even the first page


@pytest.mark.parametrize("notation", list(Notation))
def test_bars_fall_at_the_ends_of_the_poems_lines_and_nowhere_else(repertoire, notation: Notation) -> None:
    for piece in repertoire:
        if not piece.playable:
            continue
        source = score_source(piece, Setting(notation=notation), font=FONT).replace('\\bar "|"', "BARLINE")
        for stanza, voice in zip(piece.stanzas, _voices(source), strict=True):
            assert "\\cadenzaOn" not in voice  # real measures: a sign holds to the bar line, not the stanza's end
            bars = voice.split("BARLINE")
            assert tuple(len(_keys(bar)) for bar in bars) == stanza.line_lengths, (piece.id, stanza.number)
            metres = [int(n) for n in re.findall(r"\\time (\d+)/4", voice)]  # each line a measure of its length
            assert metres == [n for k, n in enumerate(stanza.line_lengths) if not k or stanza.line_lengths[k - 1] != n]


def test_score_engrave_marks_one_crotchet_per_syllable_at_the_sequencers_tempo(run, tmp_path: Path) -> None:
    code, _, err = run("score", "engrave", "鹿鳴", "-o", str(tmp_path / "luming.ly"))
    assert code == 0, err
    source = (tmp_path / "luming.ly").read_text(encoding="utf-8")
    assert source.count("\\tempo 4 = 40 ") == 1  # DEFAULT_SYLLABLE 1.5 s: 40 crotchets a minute


@pytest.mark.parametrize(("name", "huangzhong", "key"),
                         [("關雎", 60, "1=♭B"), ("鹿鳴", 60, "1=C"), ("鹿鳴", 66, "1=♭G")])
def test_jianpu_key_is_written_as_chinese_practice_writes_it(repertoire, name: str, huangzhong: int, key: str) -> None:
    setting = Setting(notation=Notation.JIANPU, realization=Realization(huangzhong))
    assert f"· {key}\"" in score_source(repertoire.find(name), setting, font=FONT)


def test_a_stanza_longer_than_a_page_may_turn_the_page(repertoire) -> None:
    """A stanza is kept on one page only if it fits on one: a longer one was crushed onto a single page, illegible."""
    piece = repertoire.find("鹿鳴")
    first = piece.stanzas[0]
    assert score_source(piece, Setting(), font=FONT).count("\\autoPageBreaksOff") == len(piece.stanzas)
    times = engrave.STANZA_ON_ONE_PAGE // len(first.notes) + 1
    long = replace(first, notes=first.notes * times, line_lengths=first.line_lengths * times)
    source = score_source(replace(piece, stanzas=(long,)), Setting(), font=FONT)
    assert "\\autoPageBreaksOff" not in source and "\\accidentalStyle modern-cautionary" in source


def test_a_line_too_long_for_a_system_may_break(repertoire) -> None:
    """A system breaks only between the lines of the poem, unless a line is too long for one: it ran off the page."""
    piece = repertoire.find("鹿鳴")
    assert '\\bar ""' not in score_source(piece, Setting(), font=FONT)  # 4-character lines: never broken inside
    first = piece.stanzas[0]
    one_line = replace(first, line_lengths=(len(first.notes),))
    assert len(first.notes) > engrave.SYSTEM_NOTES
    source = score_source(replace(piece, stanzas=(one_line,)), Setting(), font=FONT)
    assert source.count('\\bar ""') == len(first.notes) - 1  # a break allowed before every note but the first


def test_jianpu_marks_the_metre_where_the_line_length_changes(repertoire) -> None:
    assert engrave._metre_marks((4, 2, 4, 4, 3)) == {0: "\\time 4/4", 4: "\\time 2/4", 6: "\\time 4/4",
                                                     14: "\\time 3/4"}
    piece = repertoire.find("魚麗")  # 魚麗于罶 | 鱨鯊 | 君子有酒 | 㫖且多
    jianpu = _voices(score_source(piece, Setting(notation=Notation.JIANPU), font=FONT))[0]
    assert re.findall(r"\\time (\d)/4", jianpu) == ["4", "2", "4", "3"]
    staff = _voices(score_source(piece, Setting(), font=FONT))[0]
    assert re.findall(r"\\time (\d)/4", staff) == ["4", "2", "4", "3"]  # measures too, but no metre shown
    assert "\\omit Staff.TimeSignature" in staff


def test_key_used_gives_the_signature_the_notes_fit(repertoire) -> None:
    piece = repertoire.find("關雎")  # 無射商: the 宫's key is B♭ major, and every 變徵 (E) needs a natural
    keys = [Realization().midi(n.pitch)[0] for n in piece.notes]

    def outside(tonic: int) -> int:
        return sum((k - tonic) % 12 not in (0, 2, 4, 5, 7, 9, 11) for k in keys)

    gong = engrave.gong_key(piece.mode, keys, Realization())
    used = engrave.used_key(keys, gong)
    assert outside(gong) >= 10 and outside(used) < outside(gong)
    assert "\\key bes \\major" in score_source(piece, Setting(), font=FONT)
    source = score_source(piece, Setting(key=engrave.KeySignature.USED), font=FONT)
    assert f"\\key {engrave.lily_pitch(used, used).rstrip(chr(39) + ',')} \\major" in source
    assert "key of the notes used" in source
    jianpu = score_source(piece, Setting(notation=Notation.JIANPU, key=engrave.KeySignature.USED), font=FONT)
    assert "1=♭B" in jianpu and "key of the notes used" not in jianpu  # 簡譜's 1 stays the mode's 宫, as it says


# -- issue 22 §6: LilyPond's memory and the notes of one engraving are bounded ---------------------------------------

def test_lilypond_runs_with_its_address_space_bounded(tmp_path: Path) -> None:
    from yuesheng import limits
    from yuesheng.outputs.engrave import run_tool

    probe = "import resource; print('AS', resource.getrlimit(resource.RLIMIT_AS)[0])"
    log = run_tool([sys.executable, "-c", probe], cwd=tmp_path, what="probe")
    assert f"AS {limits.LILYPOND_MEMORY}" in log


def test_a_child_out_of_its_memory_is_a_clear_error(tmp_path: Path) -> None:
    from yuesheng.errors import EngraveError
    from yuesheng.outputs.engrave import run_tool

    hog = "b = bytearray(1 << 30)"
    with pytest.raises(EngraveError, match=r"^probe ran out of memory: it may use at most 0.25 GiB; engrave fewer"):
        run_tool([sys.executable, "-c", hog], cwd=tmp_path, what="probe", memory=1 << 28)


def test_a_piece_of_too_many_notes_is_refused_before_lilypond_starts(repertoire, run, tmp_path: Path) -> None:
    from yuesheng.errors import LimitError

    piece = repertoire.find("鹿鳴")
    huge = replace(piece, stanzas=piece.stanzas * 200)  # 20,600 notes
    with pytest.raises(LimitError, match=r"鹿鳴: an engraving of 20,600 notes, beyond the limit of notes in one "
                                         r"engraving \(at most 20,000\)"):
        score_source(huge, Setting(), font=FONT)


@pytest.mark.parametrize("name", ["騶虞夾鍾角", "騶虞黄鍾羽"])
def test_zouyu_shows_the_xieyin_of_each_stanza_cited(repertoire, name: str) -> None:
    """瑟譜 003-1b 虞(一章牙二章紅), 001-12a: the same note, sung 牙 in stanza 1 and 紅 in stanza 2."""
    piece = repertoire.find(name)
    first, second = (engrave.xieyin_notes(piece, s) for s in piece.stanzas)
    assert first == ["叶音 (瑟譜 003-1b, 001-12a): 虞 read 牙, rhyming with 葭 豝"]
    assert second == ["叶音 (瑟譜 003-1b, 001-12a): 虞 read 紅, rhyming with 蓬 豵"]
    source = score_source(piece, Setting(), font=FONT)
    assert source.index("虞 read 牙") < source.index("第2章") < source.index("虞 read 紅")
    assert "(瑟: 帶甲聲, the nail)" in engrave.xieyin_notes(piece, piece.stanzas[0], engrave.SE)[0]
    assert "(瑟:" not in first[0]  # the fingering in the 瑟 book alone


def test_luming_xieyin_hold_only_in_their_stanzas(repertoire) -> None:
    """瑟譜 002-2a: 鳴 叶 芒 in stanzas 1 and 2, 三章如字 (as written) in the third."""
    piece = repertoire.find("鹿鳴")
    notes = [engrave.xieyin_notes(piece, s) for s in piece.stanzas]
    assert "鳴 read 芒" in notes[0][0] and "苹 read 旁" in notes[0][0] and "鳴 read 芒" in notes[1][0]
    assert "鳴" not in notes[2][0] and "湛 read 持林切" in notes[2][0] and "(瑟譜 002-2a)" in notes[2][0]
    assert engrave.xieyin_notes(repertoire.find("關雎"), repertoire.find("關雎").stanzas[0]) == []  # none in stanza 1
    assert engrave.xieyin_notes(repertoire.find("關雎"), repertoire.find("關雎").stanzas[1]) == [
        "叶音 (瑟譜 002-8b): 服 read 蒲北切"]


def _sepu_xieyin() -> dict[str, str]:
    """By title (standard forms), the page of each 叶音 line the 瑟譜 prints after a poem's heading ('四牡五章章五句
    黄鍾宫(俗呼正宫)叶音…'), read from the shipped text."""
    from yuesheng.sources import pages
    from yuesheng.text import standard_forms

    found: dict[str, str] = {}
    where = [(standard_forms(p.text), p.id) for p in pages("sepu").values()]
    text = "".join(t for t, _ in where)
    starts = [sum(len(t) for t, _ in where[:n]) for n in range(len(where))]
    for heading in re.finditer(r"([^)]{1,4}?)[一二三四五六七八九十]+章[^叶]{0,120}?\)(叶音)", text):
        at = max(n for n, start in enumerate(starts) if start <= heading.start(2))
        pid = where[at][1]
        found[heading[1]] = f"{pid.juan:03d}-{pid.leaf}{pid.side}"
    return found


def test_every_xieyin_of_the_sepu_under_a_shipped_piece_is_shown_quoted_at_its_rhymes(repertoire) -> None:
    """Each 叶音 line of the 瑟譜 under a piece yuesheng ships is in data/xieyin.json with the page that prints it;
    its quote is on that page, and each reading's character is sung in each of its stanzas at a rhyme (the line's
    last syllable, or the one before its closing particle)."""
    from yuesheng.datafiles import data_table
    from yuesheng.sources import find_quote, page
    from yuesheng.text import standard_forms

    table = data_table("xieyin")
    printed = _sepu_xieyin()
    shipped = {standard_forms(p.title) for p in repertoire if p.source is not None}
    assert {title for title in printed if title in shipped} == {standard_forms(t) for t in table if t != "_"}
    for title, entry in ((t, e) for t, e in table.items() if t != "_"):
        assert entry["ref"].split(",")[0] == f"瑟譜 {printed[standard_forms(title)]}"
        for passage in entry["cite"].removeprefix("瑟譜 ").split("; "):
            where, quote = passage.split(" ", 1)
            assert find_quote(quote, page(f"sepu:{where}")), f"{title}: {quote!r} not on 瑟譜 {where}"
        piece = next(p for p in repertoire if p.title == title and p.source)
        for reading in entry["readings"]:
            for number in reading["stanzas"]:
                rhymes = _rhyme_syllables(piece.stanzas[number - 1])
                assert reading["character"] in rhymes, f"{title} stanza {number}: {reading['character']} not a rhyme"


def _rhyme_syllables(stanza) -> set[str]:
    """The syllables of *stanza* that end a line of the poem, or come before its closing particle (之 矣 兮 思)."""
    words = [n.lyric.strip() for n in stanza.notes]
    ends = [sum(stanza.line_lengths[:k + 1]) - 1 for k in range(len(stanza.line_lengths))]
    return {words[e - 1] if words[e] in "之矣兮思" else words[e] for e in ends}


def test_breath_marks_are_optional_at_the_line_ends_and_marked_editorial(repertoire) -> None:
    for piece in (repertoire.find("魚麗"), repertoire.find("鹿鳴")):
        plain = score_source(piece, Setting(), font=FONT)
        marked = score_source(piece, Setting(breath=True), font=FONT)
        assert "\\breathe" not in plain and "editorial" not in plain
        assert marked.count("\\breathe") == sum(len(s.line_ends) for s in piece.stanzas)  # not at a stanza's end
        assert "breath marks (’) editorial" in marked
        assert marked.count('\\breathe \\bar "|"') == marked.count("\\breathe")  # a line's end: before its bar
