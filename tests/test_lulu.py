"""律呂: names in every spelling, 俗字 both ways, 宮調 against 瑟譜 卷一, tunings."""

from __future__ import annotations

import pytest

from yuesheng.errors import InvalidValueError, UnknownNameError
from yuesheng.music.lulu import (
    LU,
    Degree,
    Pitch,
    Realization,
    Register,
    Tuning,
    cents_offset,
    lu,
    parse_huangzhong,
    parse_mode,
    parse_note_name,
    pitches_of_suzi,
    resolve,
    suzi_of,
)


@pytest.mark.parametrize("spelling", ["黄鍾", "黃鐘", "黄钟", "huangzhong", "HuangZhong", "黄", "黃", 0])
def test_huangzhong_in_every_spelling(spelling):
    assert lu(spelling).index == 0


@pytest.mark.parametrize(
    ("spelling", "index"),
    [("大吕", 1), ("大呂", 1), ("dalü", 1), ("dalv", 1), ("太簇", 2), ("太蔟", 2), ("夾鍾", 3), ("夹钟", 3),
     ("姑洗", 4), ("仲吕", 5), ("中吕", 5), ("蕤賓", 6), ("蕤賔", 6), ("蕤宾", 6), ("林鍾", 7), ("linzhong", 7),
     ("夷則", 8), ("夷则", 8), ("南呂", 9), ("nanlü", 9), ("無射", 10), ("无射", 10), ("wuyi", 10),
     ("應鍾", 11), ("应钟", 11), ("應", 11)],
)
def test_every_lu_spelling(spelling, index):
    assert lu(spelling).index == index


def test_unknown_lu_suggests_the_nearest_spelling():
    with pytest.raises(UnknownNameError) as info:
        lu("huangzong")
    assert "did you mean 'huangzhong'" in str(info.value)


def test_lu_index_out_of_range_is_an_invalid_value():
    with pytest.raises(InvalidValueError, match="0..11"):
        lu(12)


def test_registers_are_octaves():
    huang = lu("黄")
    assert Pitch(huang, Register.QING).semitones == 12
    assert Pitch(huang, Register.BEI).semitones == -12
    assert Pitch(lu("南"), Register.BEI).name == "南倍"


# 瑟譜 卷一 雅律通俗譜例 (001-10b–11a)
SUZI_TABLE_TEXT = ("黄(黄鍾合)大(大吕四下)太(太簇四上)夹(夹鍾一下)姑(姑洗一上)仲(仲吕上)"
                   "蕤(蕤賓勾)林(林鍾尺)夷(夷則工下)南(南吕工上)無(無射凡下)應(應鍾凡上)")


@pytest.mark.parametrize("entry", SUZI_TABLE_TEXT.split(")")[:-1])
def test_suzi_table_matches_yalu_tongsu_pu_li(entry):
    short, rest = entry.split("(")
    symbol = rest[2:]
    pitch = Pitch(lu(short))
    assert suzi_of(pitch) == symbol
    assert pitches_of_suzi(symbol) == (pitch,)


@pytest.mark.parametrize(("lu_name", "symbol"),
                         [("黄", "六"), ("大", "五下"), ("太", "五上"), ("夾", "五緊"), ("夾", "五𦂳")])
def test_qing_suzi(lu_name, symbol):
    assert pitches_of_suzi(symbol) == (Pitch(lu(lu_name), Register.QING),)


def test_bare_suzi_is_ambiguous_until_the_lu_line_decides():
    assert [p.name for p in pitches_of_suzi("四")] == ["大", "太"]
    assert [p.name for p in pitches_of_suzi("五")] == ["大清", "太清", "夾清"]
    assert resolve("太", "五") == Pitch(lu("太"), Register.QING)
    assert resolve("太", "四") == Pitch(lu("太"))


def test_lu_that_contradicts_its_suzi_is_an_error():
    with pytest.raises(InvalidValueError, match="律 林 disagrees with 俗字 六"):
        resolve("林", "六")


def test_unknown_suzi():
    with pytest.raises(UnknownNameError, match="俗字"):
        pitches_of_suzi("七")


# 瑟譜 卷一 旋宫 table (001-6a–10a): each mode, the seven 律 of its 均 from 宫, and its 起調畢曲.
XUANGONG = [
    ("黄鍾宫", "黄太姑蕤林南應", "黄"), ("無射商", "無黄太姑仲林南", "黄"), ("夷則角", "夷無黄太夾仲林", "黄"),
    ("仲吕徴", "仲林南應黄太姑", "黄"), ("夹鍾羽", "夾仲林南無黄太", "黄"),
    ("林鍾宫", "林南應大太姑蕤", "林"), ("夹鍾角", "夾仲林南無黄太", "林"), ("無射羽", "無黄太姑仲林南", "林"),
    ("太簇宫", "太姑蕤夷南應大", "太"), ("黄鍾商", "黄太姑蕤林南應", "太"),
    ("南吕宫", "南應大夾姑蕤夷", "南"), ("黄鍾羽", "黄太姑蕤林南應", "南"), ("太簇徴", "太姑蕤夷南應大", "南"),
    ("姑洗宫", "姑蕤夷無應大夾", "姑"), ("黄鍾角", "黄太姑蕤林南應", "姑"),
    ("應鍾宫", "應大夾仲蕤夷無", "應"), ("蕤賓宫", "蕤夷無黄大夾仲", "蕤"), ("大吕宫", "大夾仲林夷無黄", "大"),
    ("夷則宫", "夷無黄太夾仲林", "夷"), ("蕤賔商", "蕤夷無黄大夾仲", "夷"), ("夾鍾宫", "夾仲林南無黄太", "夾"),
    ("無射宫", "無黄太姑仲林南", "無"), ("蕤賓角", "蕤夷無黄大夾仲", "無"), ("仲吕宫", "仲林南應黄太姑", "仲"),
    ("中吕宫", "仲林南應黄太姑", "仲"),
]


@pytest.mark.parametrize(("name", "scale", "final"), XUANGONG)
def test_mode_against_the_xuangong_table(name, scale, final):
    mode = parse_mode(name)
    assert "".join(the_lu.short for the_lu in mode.scale) == scale
    assert mode.final.short == final


def test_qing_modes_keep_their_jun_and_final():
    mode = parse_mode("黄鍾清宫")
    assert (mode.jun.short, mode.degree, mode.qing, mode.final.short) == ("黄", Degree.GONG, True, "黄")
    assert parse_mode("無射清商").final.short == "黄"


def test_degree_of_a_lu_in_its_jun():
    mode = parse_mode("黄鍾宫")
    assert mode.degree_of(lu("蕤")) is Degree.BIANZHI
    assert mode.degree_of(lu("應")) is Degree.BIANGONG
    assert mode.degree_of(lu("大")) is None
    assert mode.pitch_of(Degree.SHANG).short == "太"


@pytest.mark.parametrize("bad", ["黄鍾公", "黄鍾變宫", "xx"])
def test_unknown_mode_suggests(bad):
    with pytest.raises(UnknownNameError, match="宮調"):
        parse_mode(bad)


# 三分損益 against equal temperament from 黄鍾 (cents): the known values.
SANFEN_CENTS = {"黄": 0.0, "林": 1.96, "太": 3.91, "南": 5.87, "姑": 7.82, "應": 9.78, "蕤": 11.73,
                "大": 13.69, "夷": 15.64, "夾": 17.60, "無": 19.55, "仲": 21.51}


@pytest.mark.parametrize(("name", "cents"), SANFEN_CENTS.items())
def test_sanfen_sunyi_cents(name, cents):
    assert cents_offset(lu(name), Tuning.SANFEN) == pytest.approx(cents, abs=0.005)
    assert cents_offset(lu(name), Tuning.EQUAL) == 0.0


def test_sanfen_lin_is_a_pure_fifth_above_huang():
    real = Realization(60, Tuning.SANFEN)
    ratio = real.frequency(Pitch(lu("林"))) / real.frequency(Pitch(lu("黄")))
    assert ratio == pytest.approx(1.5, rel=1e-9)


def test_realization_moves_with_huangzhong():
    assert Realization(parse_note_name("D4")).midi(Pitch(lu("林"))) == (69, 0.0)
    assert Realization().frequency(Pitch(lu("黄"))) == pytest.approx(261.6256, abs=1e-3)


@pytest.mark.parametrize(("name", "key"), [("C4", 60), ("D4", 62), ("F#3", 54), ("Eb4", 63), ("c4", 60)])
def test_note_names(name, key):
    assert parse_note_name(name) == key


@pytest.mark.parametrize("bad", ["H4", "C", "C44", "C#-2"])
def test_bad_note_names(bad):
    with pytest.raises(InvalidValueError):
        parse_note_name(bad)


def test_twelve_lu_in_order():
    assert "".join(the_lu.short for the_lu in LU) == "黄大太夾姑仲蕤林夷南無應"


@pytest.mark.parametrize(("start", "up", "name"),
                         [("黄", 2, "太"), ("應", 2, "大清"), ("南", 5, "太清"), ("黄", -1, "應倍")])
def test_transposing_a_pitch_crosses_registers(start, up, name):
    assert Pitch(lu(start)).up(up).name == name


@pytest.mark.parametrize("name, key", [("C0", 12), ("G#7", 104), ("C4", 60)])
def test_huangzhong_keeps_every_pitch_a_midi_key(name, key):
    assert parse_huangzhong(name) == key
    real = Realization(key)
    assert 0 <= real.midi(Pitch(LU[0], Register.BEI))[0] and real.midi(Pitch(LU[11], Register.QING))[0] <= 127


@pytest.mark.parametrize("name", ["B-1", "A7", "G9", "C-1"])
def test_huangzhong_outside_the_range_is_refused(name):
    with pytest.raises(InvalidValueError, match="outside the MIDI keys 0–127"):
        parse_huangzhong(name)
    with pytest.raises(InvalidValueError, match="expected 12..104"):
        Realization(parse_note_name(name))
