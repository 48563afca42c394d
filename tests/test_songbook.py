"""The songbook: the pieces of a rite in the order first heard, from the Timeline, with their cues and a part's line."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from yuesheng.cli import build_parser
from yuesheng.cli.common import timeline_of
from yuesheng.errors import UnknownNameError
from yuesheng.music.lulu import Realization, Tuning
from yuesheng.outputs.engrave import Setting, lily_string
from yuesheng.outputs.songbook import songbook, songbook_source

FONT = "Noto Serif CJK TC"



def _timeline(cue: str, *extra: str):
    return timeline_of(build_parser().parse_args(["songbook", cue, "-o", "x.pdf", *extra]))


def test_songbook_pieces_in_the_order_first_heard_with_their_cues() -> None:
    book = songbook(_timeline("xiangyinjiu"))
    titles = [e.piece.title for e in book.entries]
    assert titles[:12] == ["鹿鳴", "四牡", "皇皇者華", "南陔", "白華", "華黍",
                           "魚麗", "由庚", "南有嘉魚", "崇丘", "南山有臺", "由儀"]
    # 合樂: each 周南 ode with its 召南 ode is one 終 (4-26a), sung in turn: 關雎 鵲巢, 葛覃 采蘩, 卷耳 采蘋
    assert titles[12:18] == ["關雎", "鵲巢", "葛覃", "采蘩", "卷耳", "采蘋"] and titles[-1] == "陔夏"
    guanju = next(e for e in book.entries if e.piece.title == "關雎")
    assert [h.cue for h in guanju.hearings][:2] == ["heyue", "wusuanyue"]
    first = guanju.hearings[0]
    assert first.zhong == "1 終" and "4-" in first.cite and "歌" in first.parts
    assert book.notices  # the lost pieces' realizations are named


def test_songbook_part_line_follows_the_timeline() -> None:
    timeline = _timeline("dashe")
    bells = songbook(timeline, part="鑮")
    sixia = bells.entries[0]
    assert sixia.piece.title == "肆夏" and sixia.hearings[0].zhong == "repeated until 樂闋 (yue-que-bin): 樂闋"
    sounding = [i for i, s in enumerate(sixia.slots) if s.key is not None]
    assert sounding and all(i % 4 == 0 for i in sounding)  # the 鑮 strikes the first note of each phrase
    real = timeline.realization
    assert all(s.key == real.midi(s.note.pitch)[0] - 12 for s in sixia.slots if s.key is not None)  # an octave down
    voice = songbook(timeline, part="歌")
    assert all(any(n.lyric.strip() for n in e.piece.notes) for e in voice.entries)
    assert [e.piece.title for e in voice.entries][0] == "鹿鳴"
    arrows = next(e for e in songbook(timeline).entries if e.piece.title == "貍首")
    assert re.fullmatch(r"7 終 for each of \d+ 耦", arrows.hearings[0].zhong)


def test_a_part_that_does_not_play_is_named_with_those_that_do() -> None:
    with pytest.raises(UnknownNameError, match="unknown part playing in 鄉射禮 '鐘' — did you mean '歌' or '瑟'"):
        songbook(_timeline("xiangshe"), part="鐘")


def test_songbook_source_has_contents_notices_and_every_piece() -> None:
    book = songbook(_timeline("xiangshe"))
    source = songbook_source(book, Setting(realization=Realization(60, Tuning.SANFEN)), font=FONT)
    assert "\\markuplist \\table-of-contents" in source
    assert source.count("\\tocItem") == len(book.entries)
    assert source.count("三分損益, cents against equal temperament") == 1
    lost = [(e.piece.title, e.piece.lost, e.piece.realization) for e in book.entries if e.piece.realization]
    here = [(title, (told.in_rite("xiangshe") or told).citation()) for title, told, _ in lost if told]  # the rite's own
    assert lost and len(here) == len(lost)
    assert all(lily_string(f"{title} — {cite}") in source for title, cite in here)  # a line each
    assert lost[0][2] and source.count(lost[0][2].rule) == 1  # the rule once, not a paragraph per piece
    assert all(lily_string("• " + n) in source for n in book.notices if " is lost (" not in n)


def test_lost_pieces_share_the_pages_of_the_piece_before() -> None:
    book = songbook(_timeline("xiangyinjiu"))
    source = songbook_source(book, Setting(), font=FONT)
    transmitted = [e for e in book.entries if not e.piece.realization]
    assert source.count("\\bookpart {") == 1 + len(transmitted)  # the contents, then a page per transmitted piece
    assert 'title = "南陔 — modern realization"' not in source and lily_string("南陔 — modern realization") in source


def test_a_piece_of_two_pages_starts_on_a_left_hand_page() -> None:
    from yuesheng.outputs.songbook import facing_blanks

    assert facing_blanks([(1, 1), (2, 2), (1, 1), (2, 2), (2, 2)], start=2) == {1, 3}  # 2, [3] 4-5, 6, [7] 8-9, ...
    assert facing_blanks([(3, 3), (1, 1), (1, 1)], start=3) == set()  # an odd number of pages lies as it falls
    assert facing_blanks([(2, 1)], start=3) == set()  # a piece of one page, a lost piece set on after it
    book = songbook(_timeline("xiangyinjiu"))
    source = songbook_source(book, Setting(), font=FONT, blanks=frozenset({2}))
    assert source.count("This page is left blank") == 1


def test_songbook_pdf(has_engraver, run, tmp_path: Path) -> None:
    out = tmp_path / "xiangshe.pdf"
    code, stdout, err = run("songbook", "xiangshe", "-o", str(out), "--part", "歌", "--notation", "jianpu")
    assert code == 0, err
    assert "鄉射禮 songbook, part 歌" in stdout
    pypdf = pytest.importorskip("pypdf")
    text = "\n".join(page.extract_text(extraction_mode="layout") for page in pypdf.PdfReader(out).pages)
    assert "Contents" in text and "Notices" in text
    for title in ("關雎", "騶虞", "采蘋"):
        assert title in text


@pytest.mark.parametrize(("extra", "mark"), [((), "\\tempo 4 = 40 "), (("--syllable", "1.4s"), '\\tempo "c." 4 = 43 ')])
def test_every_sounding_piece_carries_the_sequencers_tempo(extra: tuple[str, ...], mark: str) -> None:
    book = songbook(_timeline("xiangyinjiu", *extra))
    source = songbook_source(book, Setting(), font=FONT)
    sounded = [e for e in book.entries if e.syllable]
    assert {e.syllable for e in sounded} == {Fraction(3, 2) if not extra else Fraction(7, 5)}
    assert [e.piece.title for e in book.entries if not e.syllable] == ["陔夏"]  # drums alone: no notes, no tempo
    assert source.count(mark) == len(sounded)  # once a piece, at its first stanza


def test_a_part_book_holds_only_its_own_pieces_and_their_notices() -> None:
    timeline = _timeline("dashe")
    bells = songbook(timeline, part="鐘")
    source = songbook_source(bells, Setting(), font=FONT)
    for other in ("新宮", "貍首", "由庚"):  # sounded by other parts: not described in the 鐘 book
        assert not any(n.startswith(other) for n in bells.notices) and f'"{other} — ' not in source
    voice = songbook(timeline, part="歌")
    assert not any(e.piece.realization for e in voice.entries)  # no 笙 placeholders in the singer's book
    assert not any(" is lost (" in n or n.startswith("金奏") for n in voice.notices)


def test_a_part_book_cues_the_entry_with_the_end_of_the_other_part() -> None:
    mouth_organ = songbook(_timeline("xiangyinjiu"), part="笙")
    yougeng = next(e for e in mouth_organ.entries if e.piece.title == "由庚")
    assert yougeng.cue_line == "Cue: before you come in, 歌 瑟 — 魚麗, ending 「維其時矣」 (應 南 太清 黄清)"
    assert lily_string(yougeng.cue_line) in songbook_source(mouth_organ, Setting(), font=FONT)
    singer = songbook(_timeline("xiangyinjiu"), part="歌")
    assert next(e for e in singer.entries if e.piece.title == "四牡").cue_line == ""  # 歌 goes straight on


def test_a_part_an_octave_lower_marks_bei_and_keeps_its_octave_in_jianpu() -> None:
    from yuesheng.outputs.engrave import Notation

    bells = songbook(_timeline("dashe"), part="鑮")
    sixia = bells.entries[0]
    played = [s for s in sixia.slots if s.key is not None]
    lu_line = next(line for line in songbook_source(bells, Setting(), font=FONT).splitlines()
                   if '\\set stanza = "律"' in line)
    names = re.findall(r'"([^"]+)"', lu_line)[2:]
    assert names[:3] == [s.note.pitch.name.removesuffix("清") if s.note.pitch.name.endswith("清")
                         else s.note.pitch.name + "倍" for s in played[:3]]
    jianpu = songbook_source(bells, Setting(notation=Notation.JIANPU), font=FONT)
    voice = songbook_source(songbook(_timeline("dashe")), Setting(notation=Notation.JIANPU), font=FONT)
    below = "\\translate #'(0 . -0.75)"
    assert jianpu.count(below) > voice.count(below)  # the octave below keeps its dot


def test_headings_name_cues_readings_and_variants_as_people_do() -> None:
    timeline = _timeline("xiangyinjiu")
    book = songbook(timeline, labels={"heyue": "合樂: how the two odes of a 終 sound"})
    source = songbook_source(book, Setting(), font=FONT)
    assert "合樂: how the two odes of a 終 sound — zheng" in book.readings and "heyue=zheng" not in book.readings
    guanju = next(e for e in book.entries if e.piece.title == "關雎")
    headings = [line for line in source.splitlines() if "(4-" in line and "終" in line]
    assert headings and not any(f'"{h.cue}:' in line for h in guanju.hearings for line in headings)  # no cue ids


def _row(source: str, label: str) -> list[list[str]]:
    """The entries of every lyric row named *label* in *source*, one list a stanza."""
    return [re.findall(r'"([^"]+)"', line)[2:] for line in source.splitlines()
            if f'\\set stanza = "{label}"' in line]


def test_the_se_book_numbers_its_strings_as_the_sepu_table_does() -> None:
    """瑟譜 001-2b–3b: strings 1–12 the 中聲 黄鍾…應鍾, 13–24 the 清聲; the middle 極清 neither used nor counted."""
    book = songbook(_timeline("xiangyinjiu"), part="瑟")
    source = songbook_source(book, Setting(), font=FONT)
    order = "黄大太夾姑仲蕤林夷南無應"
    strings, lus = [s for row in _row(source, "弦") for s in row], [n for row in _row(source, "律") for n in row]
    assert len(strings) == len(lus) > 500
    assert all(int(s) == order.index(n[0]) + 1 + (12 if n.endswith("清") else 0)
               for s, n in zip(strings, lus, strict=True))
    assert "001-2b–3b" in source and "極清" in source
    assert not _row(songbook_source(songbook(_timeline("xiangyinjiu"), part="歌"), Setting(), font=FONT), "弦")


def test_qing_zhong_doubles_each_zheng_note_an_octave_above_and_the_four_qing_alone() -> None:
    """清中雙彈 (瑟譜 001-12b 惟正律清中弦雙彈; the 四清 by the right hand alone)."""
    book = songbook(_timeline("xiangyinjiu"), part="瑟")
    source = songbook_source(book, Setting(doubled=True), font=FONT)
    strings = [s for row in _row(source, "弦") for s in row]
    doubled = [s for s in strings if "·" in s]
    assert doubled and all(int(b) == int(a) + 12 for a, b in (s.split("·") for s in doubled))
    assert all(int(s) > 12 for s in strings if "·" not in s)  # a 清 note: its own string only
    assert len(re.findall(r"<[a-g][^>]*>4", source)) == len(doubled)  # the staff sounds the octave of each
    assert "清中雙彈" in source


def test_qing_zhong_is_for_the_se_alone(run, tmp_path: Path) -> None:
    code, _, err = run("songbook", "xiangyinjiu", "--part", "笙", "--qing-zhong", "-o", str(tmp_path / "x.ly"))
    assert code == 2 and "give it with --part 瑟" in err


def test_a_part_in_another_octave_has_no_suzi_row_to_contradict_its_lu() -> None:
    """The 俗字 name the written octave (六 is 黄清): under a part an octave lower they read 六 under 黄."""
    bells = songbook_source(songbook(_timeline("dashe"), part="鑮"), Setting(), font=FONT)
    assert _row(bells, "律") and not _row(bells, "俗")
    voice = songbook_source(songbook(_timeline("dashe"), part="歌"), Setting(), font=FONT)
    assert len(_row(voice, "俗")) == len(_row(voice, "律"))


def test_songbook_practice_midi_plays_each_piece_as_its_book_at_its_tempo_with_markers(run, tmp_path: Path) -> None:
    """--midi: the 笙's pieces as its book gives them, a marker at each piece and stanza, the 宫 and two beats
    before each piece, and each piece at the tempo where it is first heard. Read back with mido."""
    import mido

    out = tmp_path / "sheng.mid"
    code, text, err = run("songbook", "xiangyinjiu", "--part", "笙", "-o", str(tmp_path / "b.ly"), "--midi", str(out),
                          "--count-in", "2")
    assert code == 0 and "practice file" in text, err
    book = songbook(_timeline("xiangyinjiu"), part="笙")
    now, marks, onsets = 0.0, [], []
    for message in mido.MidiFile(out, charset="utf-8"):
        now += message.time
        if message.type == "marker":
            marks.append((now, message.text))
        elif message.type == "note_on" and message.velocity:
            onsets.append(now)
    assert [m for _, m in marks] == [f"{e.piece.title}: 第{s.number}章" for e in book.entries for s in e.piece.stanzas
                                     if any(x.key is not None and x.note.stanza == s.number for x in e.slots)]
    played = sum(1 + 2 + sum(s.key is not None for s in e.slots) for e in book.entries)  # 宫, 2 beats, the line
    assert len(onsets) == played
    first = book.entries[0]
    assert first.syllable is not None
    beat = float(first.syllable)
    assert onsets[:4] == pytest.approx([0, beat, 2 * beat, 3 * beat]) and marks[0][0] == pytest.approx(3 * beat)


def test_jianpu_cue_lines_give_the_notes_as_digits_with_their_octave_dots() -> None:
    """The 笙's cue for 由庚 ends 魚麗 on 應 南 太清 黄清: in 黄鍾宫, 7 6 2̇ 1̇; a 簡譜 reader read 律 names only."""
    from yuesheng.outputs.engrave import Notation

    yougeng = next(e for e in songbook(_timeline("xiangyinjiu"), part="笙").entries if e.piece.title == "由庚")
    assert yougeng.cue_digits == (("7", 0), ("6", 0), ("2", 1), ("1", 1))
    book = songbook(_timeline("xiangyinjiu"), part="笙")
    jianpu = songbook_source(book, Setting(notation=Notation.JIANPU), font=FONT)
    cue = next(line for line in jianpu.splitlines() if lily_string(yougeng.cue_line) in line)
    assert re.findall(r'\\center-align "(\d)"', cue) == ["7", "6", "2", "1"] and cue.count("draw-circle") == 2
    assert "簡譜" not in next(line for line in songbook_source(book, Setting(), font=FONT).splitlines()
                            if lily_string(yougeng.cue_line) in line)  # staff books keep the 律 names alone


def test_songbook_breath_marks_are_editorial_in_the_book_and_the_practice_file(run, tmp_path: Path) -> None:
    import mido

    out, book = tmp_path / "b.mid", tmp_path / "b.ly"
    assert run("songbook", "xiangyinjiu", "--part", "歌", "-o", str(book), "--midi", str(out), "--breath")[0] == 0
    source = book.read_text(encoding="utf-8")
    assert "Breath marks (’) at the ends of the lines are editorial" in source and "\\breathe" in source
    midi = mido.MidiFile(out, charset="utf-8")
    held, now, on = [], 0.0, {}
    for message in midi:
        now += message.time
        if message.type == "note_on" and message.velocity:
            on[message.note] = now
        elif message.type in ("note_off", "note_on") and message.note in on:
            held.append(round(now - on.pop(message.note), 3))
    sung = songbook(_timeline("xiangyinjiu"), part="歌")
    breaths = sum(len(s.line_ends) for e in sung.entries for s in e.piece.stanzas)
    assert held.count(0.75) == breaths and held.count(1.5) == len(held) - breaths  # half the beat, then on time
    texts = [m.text for track in midi.tracks for m in track if m.type == "text"]
    assert any(t.startswith("breaths (editorial; the sources give none)") for t in texts)  # marked in the file


@pytest.mark.parametrize("midi, code, said", [("SHEET", 2, "expected a .mid file"), ("BOOK", 2, "expected a .mid file"),
                                              ("SHEET.mid", 1, "it is one of this command's inputs")])
def test_the_practice_file_never_overwrites_an_input_or_the_book(run, tmp_path, midi, code, said):
    sheet = tmp_path / "rite.yaml"
    sheet.write_bytes((Path(__file__).parent / "data" / "golden.yaml").read_bytes())
    (tmp_path / "rite.yaml.mid").symlink_to(sheet)  # a .mid name that is the cue sheet itself
    target = {"SHEET": str(sheet), "BOOK": str(tmp_path / "b.pdf"), "SHEET.mid": str(tmp_path / "rite.yaml.mid")}
    exit_code, _, err = run("songbook", str(sheet), "-o", str(tmp_path / "b.pdf"), "--midi", target[midi])
    assert exit_code == code and said in err
    assert sheet.read_bytes() == (Path(__file__).parent / "data" / "golden.yaml").read_bytes()
    assert not (tmp_path / "b.pdf").exists()


@pytest.mark.parametrize("beats", ["²", "１２", "17", "-1", ""])
def test_a_count_in_is_ascii_beats_from_0_to_16(run, tmp_path, beats):
    code, _, err = run("songbook", "xiangshe", "-o", str(tmp_path / "b.pdf"), "--midi", str(tmp_path / "p.mid"),
                       "--count-in", beats)
    assert code == 2 and "--count-in" in err


def _velocities(path: Path) -> dict[str, dict[int, set[int]]]:
    """By track (part) name: each note's velocities, read back with mido."""
    import mido

    found: dict[str, dict[int, set[int]]] = {}
    for track in mido.MidiFile(path, charset="utf-8").tracks:
        name = next((m.name for m in track if m.type == "track_name"), "")
        for m in track:
            if m.type == "note_on" and m.velocity:
                found.setdefault(name, {}).setdefault(m.note, set()).add(m.velocity)
    return found


def test_a_part_practice_file_has_the_others_soft_by_the_decibels_asked(run, tmp_path: Path) -> None:
    """songbook --part 瑟 --midi --others -12: the 瑟 at its own level, the voice, 笙 … at −12 dB by FluidSynth's
    velocity curve (40·log10(v/127): half the velocity); --others -24, a quarter; without --others, the 瑟 alone."""
    from yuesheng.music.instruments import PARTS

    levels = {}
    for db in ("-12", "-24", None):
        out = tmp_path / f"se{db}.mid"
        code, text, err = run("songbook", "xiangyinjiu", "--part", "瑟", "-o", str(tmp_path / "b.ly"), "--midi",
                              str(out), *(["--others", db] if db else []))
        assert code == 0, err
        levels[db] = {part: set().union(*keys.values()) for part, keys in _velocities(out).items()}
    assert levels[None].keys() == {"瑟"} and levels[None]["瑟"] == {PARTS["瑟"].velocity}
    assert {"瑟", "歌", "笙"} <= levels["-12"].keys()
    for part, found in levels["-12"].items():
        own = PARTS[part].velocity
        assert found == ({own} if part == "瑟" else {round(own * 10 ** (-12 / 40))}), part
        assert levels["-24"][part] == ({own} if part == "瑟" else {round(own * 10 ** (-24 / 40))}), part
    code, _, err = run("songbook", "xiangyinjiu", "-o", str(tmp_path / "b.ly"), "--others", "-12")
    assert code == 2 and "--others is for the practice file" in err
    for bad in ("6", "-61", "x", "-１２"):
        code, _, err = run("songbook", "xiangyinjiu", "-o", str(tmp_path / "b.ly"), "--midi", str(tmp_path / "p.mid"),
                           "--others", bad)
        assert code == 2 and "decibels from -60 to 0" in err, bad


def test_qing_zhong_plays_each_zheng_note_of_the_se_with_its_octave_in_the_practice_file(run, tmp_path) -> None:
    """--qing-zhong --midi: each 正律 note of the 瑟 struck with its 清 string, an octave above, as the book shows it
    (``8·20``); a 清 note alone; and a notice citing 瑟譜 001-2b, 001-12b in the file."""
    import mido

    from yuesheng.outputs.engrave import se_string

    timeline = _timeline("xiangyinjiu")
    book = songbook(timeline, part="瑟")
    out = tmp_path / "se.mid"
    assert run("songbook", "xiangyinjiu", "--part", "瑟", "--qing-zhong", "-o", str(tmp_path / "b.ly"), "--midi",
               str(out))[0] == 0
    starts: dict[float, list[int]] = {}
    now = 0.0
    midi = mido.MidiFile(out, charset="utf-8")
    for message in midi:
        now += message.time
        if message.type == "note_on" and message.velocity:
            starts.setdefault(round(now, 3), []).append(message.note)
    slots = [s for e in book.entries for s in e.slots if s.key is not None]
    chords = list(starts.values())
    assert len(chords) == len(slots)
    for slot, chord in zip(slots, chords, strict=True):
        assert slot.key is not None
        doubled = "·" in se_string(slot, timeline.realization, doubled=True)
        assert sorted(chord) == ([slot.key, slot.key + 12] if doubled else [slot.key])
    assert any(len(c) == 1 for c in chords) and any(len(c) == 2 for c in chords)
    texts = [m.text for track in midi.tracks for m in track if m.type == "text"]
    assert any("清中雙彈 (瑟譜 001-2b, 001-12b)" in t for t in texts)
