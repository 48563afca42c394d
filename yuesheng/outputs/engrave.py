"""Piece → LilyPond source → PDF, SVG or PNG: engraved staff notation or 簡譜. The only module that runs LilyPond.

Each piece is a LilyPond ``\\bookpart``: a header (title, mode, final, source;
a lost piece's realization is titled **modern realization** with its rule),
then one ``\\score`` per stanza headed with its number and page, the notes one
crotchet per syllable (the sources give no durations), unmetred (each line (句) of the poem a measure of its
length under a hidden time signature, so a sign holds to its bar line) with a bar line at the end of each line
and nowhere else, and under the notes three lyric
lines aligned per syllable: 詞 the syllable, 律 the 律 with 清 or 倍 marked,
俗 the 俗字. An emended note carries a mark, and the transmitted reading is
given in a note under its stanza. 三分損益 scores get one legend of the cents
deviation of each 律 they use.

簡譜 is drawn by LilyPond itself (the approach of jianpu-ly): a staff without
lines whose note heads are replaced by the digit of the note's degree, with
the 宫 of the mode's 均 as 1 (商 2, 角 3, 變徵 ♯4, 徵 5, 羽 6, 變宫 7) and
octave dots above or below.

Safety: a score is user input and LilyPond runs Scheme. Every text that comes
from a score or cue sheet reaches the source only through ``lily_string`` — a
double-quoted LilyPond string with backslash and quote escaped — never as
source. LilyPond's ``-dsafe`` was removed in 2.23.12, so quoting is the
defence; the process also runs in a private temporary folder with a time
limit and a minimal environment.

PDF and PNG come from LilyPond's Cairo backend (``-dbackend=cairo``, ≥ 2.25),
which keeps the CJK text as searchable text; SVG from its SVG backend, which
writes text as ``<text>`` elements. A CJK font is required (Noto CJK, Debian
``fonts-noto-cjk``).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction
from pathlib import Path

from yuesheng import limits
from yuesheng.datafiles import data_table
from yuesheng.errors import EngraveError, LimitError
from yuesheng.files import atomic_path, check_output, write_atomic
from yuesheng.fonts import FAMILIES, FONT_FILES
from yuesheng.music.lulu import LU, Mode, Realization, Tuning, cents_offset
from yuesheng.music.score import Note, Piece, Stanza
from yuesheng.process import bound_to_us
from yuesheng.text import simplified_forms, standard_forms

LILYPOND_VERSION = "2.25.12"
TIME_LIMIT = 300.0  # seconds for one LilyPond run
_OUT_OF_MEMORY = ("bad_alloc", "Out of memory", "out of memory", "MemoryError")  # a child's words when refused memory
FONT_INSTALL = "apt-get install fonts-noto-cjk"
FORMATS = ("pdf", "svg", "png", "ly")
_FONT_PREFERENCE = ("Noto Serif CJK TC", "Noto Serif CJK SC", "Noto Sans CJK TC", "Noto Sans CJK SC")


class Notation(Enum):
    """Staff notation or 簡譜 (numbered notation)."""

    STAFF = "staff"
    JIANPU = "jianpu"


class KeySignature(Enum):
    """The staff's key signature: the major key of the 宫 of the mode's 均 (every degree a note of the key), or the
    major key that the notes used fit best (the fewest accidentals)."""

    GONG = "gong"
    USED = "used"


@dataclass(frozen=True, slots=True)
class Slot:
    """One syllable of a piece as a part plays it: the score's note and the MIDI key sounded (None: silent)."""

    note: Note
    key: int | None


@dataclass(frozen=True, slots=True)
class Setting:
    """How to engrave: notation, 黄鍾 and tuning, 黄鍾's note as the user wrote it, the part (for a part's line),
    the seconds a syllable lasts as the sequencer sings it (the tempo mark; None: no mark), the key signature, and
    for the 瑟 whether its notes are played 清中雙彈 (``se_string``), and whether to mark (editorial) breaths at
    the ends of the lines."""

    notation: Notation = Notation.STAFF
    realization: Realization = Realization()
    huangzhong_name: str = "C4"
    part: str = ""
    syllable: Fraction | None = None
    key: KeySignature = KeySignature.GONG
    doubled: bool = False  # the 瑟's book: each 正律 note on its 中 and 清 strings together (清中雙彈)
    breath: bool = False  # editorial breath marks at the ends of the lines of the poem


@dataclass(frozen=True, slots=True)
class Markup:
    """A line of LilyPond markup made by yuesheng (every text in it already quoted by ``lily_string``)."""

    source: str


# --- quoting --------------------------------------------------------------------------------------


def lily_string(text: str) -> str:
    """*text* as a double-quoted LilyPond string: backslash and quote escaped, control characters as spaces.

    >>> print(lily_string('#(system "x") \\\\markup'))
    "#(system \\"x\\") \\\\markup"
    """
    clean = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text)
    return '"' + clean.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --- pitches --------------------------------------------------------------------------------------

_LETTERS = "cdefgab"
_OCTAVE_MARKS = ",'"
_NATURAL = (0, 2, 4, 5, 7, 9, 11)
# C Db D Eb E F Gb G Ab A Bb B
_TONIC_LETTER = {0: 0, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 4, 7: 4, 8: 5, 9: 5, 10: 6, 11: 6}
# Semitones above 宫 → (scale step, 簡譜 digit): 變徵 is a raised 4th, other chromatic notes follow the nearest degree.
_DEGREE_STEP = {0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 5: 3, 6: 3, 7: 4, 8: 4, 9: 5, 10: 6, 11: 6}
_ACCIDENTAL = {-2: "eses", -1: "es", 0: "", 1: "is", 2: "isis"}
_SIGN = {-2: "𝄫", -1: "♭", 0: "", 1: "♯", 2: "𝄪"}


def spell(key: int, gong_key: int) -> tuple[int, int, int]:
    """(letter index, alteration, octave) of MIDI *key* in the 均 whose 宫 is *gong_key*."""
    gong_class = gong_key % 12
    letter = (_TONIC_LETTER[gong_class] + _DEGREE_STEP[(key - gong_key) % 12]) % 7
    octave = key // 12 - 1
    alteration = key - (12 * (octave + 1) + _NATURAL[letter])
    if alteration > 6:
        octave, alteration = octave + 1, alteration - 12
    elif alteration < -6:
        octave, alteration = octave - 1, alteration + 12
    return letter, alteration, octave


def lily_pitch(key: int, gong_key: int) -> str:
    """A LilyPond absolute pitch (c' is C4) for MIDI *key*, spelled in the 均 of *gong_key*."""
    letter, alteration, octave = spell(key, gong_key)
    marks = "'" * (octave - 3) if octave >= 3 else "," * (3 - octave)
    return _LETTERS[letter] + _ACCIDENTAL[alteration] + marks


def jianpu_key(gong_key: int) -> str:
    """The 簡譜 key as Chinese practice writes it, the sign before the letter: ``1=♭B``, ``1=C``, ``1=♯F``."""
    letter, alteration, _ = spell(gong_key, gong_key)
    return f"1={_SIGN[alteration]}{_LETTERS[letter].upper()}"


def jianpu_digit(key: int, gong_key: int) -> tuple[str, int]:
    """(digit with any accidental, octave dots: + above, − below) of *key* with *gong_key* as 1."""
    offset = key - gong_key
    step = _DEGREE_STEP[offset % 12]
    alteration = offset % 12 - (0, 2, 4, 5, 7, 9, 11)[step]
    return _SIGN[alteration] + str(step + 1), offset // 12


_SIGNATURE_SIZE = {0: 0, 7: 1, 2: 2, 9: 3, 4: 4, 11: 5, 6: 6, 5: 1, 10: 2, 3: 3, 8: 4, 1: 5}  # sharps or flats


def used_key(keys: Sequence[int], gong: int) -> int:
    """The tonic (a MIDI key near *gong*) of the major key that *keys* fit best: the fewest notes outside its
    scale, then the smallest signature, then the 宫's own key.

    >>> used_key([62, 64, 66, 67, 69, 71, 73], 70)  # D major's notes, with B♭ as 宫: D major (at 62 + 12)
    74
    """
    def cost(tonic: int) -> tuple[int, int, int]:
        outside = sum((k - tonic) % 12 not in _NATURAL for k in keys)
        return outside, _SIGNATURE_SIZE[tonic % 12], (tonic - gong) % 12 != 0

    best = min(range(12), key=lambda pc: cost(gong + pc))
    return gong + best - (12 if best > 6 else 0)


def _key_of_notes_used(setting: Setting) -> bool:
    """Whether the staff's key signature is the one the notes fit (``KeySignature.USED``); 簡譜's 1 stays the 宫."""
    return setting.key is KeySignature.USED and setting.notation is Notation.STAFF


def gong_key(mode: Mode | None, keys: Sequence[int], realization: Realization) -> int:
    """The MIDI key of the 宫 of the mode's 均 in the octave that holds most of *keys* (1 of the 簡譜)."""
    base = realization.huangzhong + (mode.jun.index if mode else 0)
    candidates = [base + 12 * k for k in range(-3, 3)]
    return max(candidates, key=lambda g: (sum(g <= k < g + 12 for k in keys), -abs(g - base)))


# --- source ---------------------------------------------------------------------------------------


def _mode_line(piece: Piece) -> str:
    if piece.mode is None:
        return ""
    common = f" (俗呼 {piece.mode_common})" if piece.mode_common else ""
    return f"{piece.mode.name}{common} · final {piece.mode.final.name}"


def _header(piece: Piece, setting: Setting, gong: int) -> list[str]:
    real = setting.realization
    title = piece.title + (f" — {piece.realization.label}" if piece.realization else "")
    if piece.realization:
        subsubtitle = f"lost — {piece.lost.cite} {piece.lost.quote}" if piece.lost else "lost —"
    else:
        subsubtitle = piece.source.citation() if piece.source else ""
    tuning = "三分損益" if real.tuning is Tuning.SANFEN else "equal temperament"
    fields = {
        "title": title,
        "subtitle": _mode_line(piece),
        "subsubtitle": subsubtitle,
        "meter": f"黄鍾 = {setting.huangzhong_name}"
                 + (f" · {jianpu_key(gong)}" if setting.notation is Notation.JIANPU else ""),
        "arranger": tuning + (" · key of the notes used" if _key_of_notes_used(setting) else "")
                    + (f" · {setting.part}" if setting.part else "") + (f" · {BREATH_NOTE}" if setting.breath else ""),
    }
    return ["\\header {"] + [f"  {name} = {lily_string(value)}" for name, value in fields.items()] + ["}"]


def _emendation_marks(piece: Piece) -> dict[tuple[int, int], int]:
    """(stanza, position in the emended line) → the number of the emendation that changed that note."""
    marks: dict[tuple[int, int], int] = {}
    for number, e in enumerate(piece.emendations, start=1):
        shift = sum(len(o.adopted) - len(o.transmitted) for o in piece.emendations
                    if o.stanza == e.stanza and o.line == e.line and o.position < e.position)
        for position in range(e.position + shift, e.position + shift + max(1, len(e.adopted))):
            marks.setdefault((e.stanza, position), number)
    return marks


_LINE_NAMES = {"lyrics": "詩", "lu": "律", "suzi": "俗字"}


def _footnotes(piece: Piece, stanza: int) -> list[str]:
    out = []
    for number, e in enumerate(piece.emendations, start=1):
        if e.stanza == stanza:
            out.append(f"*{number} {_LINE_NAMES.get(e.line, e.line)} line, character {e.position}: transmitted "
                       f"{e.transmitted or '—'}, read {e.adopted or '—'}. {e.reason}")
    return out


# 簡譜 geometry, in staff spaces from the digit's baseline: digits sized to the lyric characters, octave dots
# clear of the digit (so a dotted 1 never reads as "i"), the sharp small at the digit's upper left, bar lines
# from just under the digits to just over the dots, and the lyric rows at a fixed distance under the lowest dot.
JIANPU_DIGIT_SIZE = 3  # LilyPond \fontsize steps: the digit's height is about that of a character of the 詞 row
_DOT_ABOVE, _DOT_BELOW, _DOT_STEP, _DOT_RADIUS = 2.95, -0.75, 0.75, 0.25
_SHARP_AT = (-1.6, 1.1)


def _jianpu_head(digit: str, dots: int) -> str:
    """Tweaks that draw a note head as its 簡譜 digit (an accidental small at its upper left), with octave dots
    above (dots > 0) or below."""
    sign, number = digit[:-1], digit[-1]
    marks = " ".join(f"\\translate #'(0 . {_DOT_ABOVE + _DOT_STEP * n if dots > 0 else _DOT_BELOW - _DOT_STEP * n}) "
                     f"\\center-align \\draw-circle #{_DOT_RADIUS} #0 ##t" for n in range(abs(dots)))
    accidental = (f"\\translate #'({_SHARP_AT[0]} . {_SHARP_AT[1]}) \\right-align \\fontsize #{JIANPU_DIGIT_SIZE - 4} "
                  f"{lily_string(sign)} ") if sign else ""
    text = (f"\\overlay {{ \\center-align \\fontsize #{JIANPU_DIGIT_SIZE} {lily_string(number)} "
            f"{accidental}{marks} }}")
    return f"\\tweak NoteHead.stencil #ly:text-interface::print \\tweak NoteHead.text \\markup {text} "


def _note_token(slot: Slot, gong: int, setting: Setting, mark: int | None) -> str:
    if slot.key is None:
        return "r4" if setting.notation is Notation.STAFF else (
            "\\tweak Rest.stencil #ly:text-interface::print "
            f'\\tweak Rest.text \\markup \\fontsize #{JIANPU_DIGIT_SIZE} "0" r4')
    token = lily_pitch(slot.key, gong) + "4"
    if setting.notation is Notation.JIANPU:
        token = _jianpu_head(*jianpu_digit(slot.key, gong)) + token
    elif setting.doubled and setting.part == SE and "·" in se_string(slot, setting.realization, doubled=True):
        token = _doubled_token(token, slot, gong)
    if mark is not None:
        token += f"^{lily_string(f'*{mark}')}"
    return token


def lyric_syllable(text: str) -> str:
    """A lyric syllable as LilyPond source: a quoted string, or, since LilyPond draws a ~ in lyrics as a lyric
    tie even when quoted, a markup that spells each ~ by its code point."""
    if "~" not in text:
        return lily_string(text)
    pieces = " \\char ##x7E ".join(lily_string(part) for part in text.split("~"))
    return f"\\markup \\concat {{ {pieces} }}"


def _lyric_line(label: str, texts: list[str], notation: Notation) -> str:
    """A lyric row under the notes, named *label*; the singer's row, 詞, in bold so that it stands out from the
    律 and 俗 rows under it."""
    words = " ".join(lyric_syllable(t) for t in texts)
    context = (["\\jianpuLyrics"] if notation is Notation.JIANPU else []) + (
        ["\\override LyricText.font-series = #'bold"] if label == "詞" else []) + (
        # the 瑟's string numbers (8·20) are wider than a note: clear of the ledger lines and stems beside it
        ["\\override VerticalAxisGroup.nonstaff-relatedstaff-spacing.padding = #1.5"]
        if label == "弦" and notation is Notation.STAFF else [])
    spacing = f" \\with {{ {' '.join(context)} }}" if context else ""
    return f"    \\new Lyrics{spacing} \\lyricsto \"v\" {{ \\set stanza = {lily_string(label)} {words} }}"


def tempo_mark(syllable: Fraction) -> str:
    """LilyPond's tempo for one crotchet per *syllable* seconds: ``\\tempo 4 = 40``; ``c.`` where not a whole
    number of crotchets a minute."""
    per_minute = 60 / syllable
    about = "" if per_minute.denominator == 1 else '"c." '
    return f"\\tempo {about}4 = {max(1, round(per_minute))} "


def clef_name(keys: Sequence[int]) -> str:
    """The clef for MIDI *keys*: treble, treble_8 (a part an octave down) or bass."""
    low = min(keys, default=60)
    return "treble" if low >= 55 else "treble_8" if low >= 43 else "bass"


SYSTEM_NOTES = 16  # notes: a line of the poem up to this long is never broken (a system holds about 24)
RAGGED_NOTES = 12  # notes: a stanza up to this long keeps its natural width rather than being stretched to the margin
STANZA_ON_ONE_PAGE = 96  # notes: a page holds about 160 in staff notation and 200 in 簡譜, under a piece's header
_REGISTER_MARK = {-2: "倍倍", -1: "倍", 0: "", 1: "清", 2: "清清"}


def lu_name(slot: Slot, realization: Realization) -> str:
    """The 律 a part sounds on *slot*, with its register: the score's 律 moved by the octaves the part plays it
    away from the written pitch (a part an octave lower sounds 黄 as 黄倍 and 黄清 as 黄)."""
    pitch = slot.note.pitch
    if slot.key is None:
        return pitch.name
    octaves = pitch.register.value + (slot.key - realization.midi(pitch)[0]) // 12
    return pitch.lu.short + _REGISTER_MARK.get(octaves, f"{octaves:+d}")


BREATH_NOTE = "breath marks (’) editorial"  # the sources give none; the sequencer sings on without a pause
SE = "瑟"
SE_TABLE = "瑟譜 001-2b–3b"  # 瑟弦律: the strings of the 二十五弦 瑟 and how they are numbered
SE_DOUBLING = "瑟譜 001-2b, 001-12b"  # 清中雙彈: 陳氏樂書 as quoted; 惟正律清中弦雙彈, the 四清 by the right hand alone


def se_string(slot: Slot, realization: Realization, *, doubled: bool = False) -> str:
    """The 瑟 string(s) of *slot* as the 瑟譜's table numbers them (001-2b–3b): the first string 黄鍾 中聲 … the
    twelfth 應鍾 中, the thirteenth 黄鍾清 … the twenty-fourth 應鍾清; the middle string, 極清, is unused and not
    counted. *doubled* (清中雙彈): a 正律 note on its 中 and 清 strings together (``1·13``); a 清 note on its own.
    '—' for a note the 瑟 has no string for (an octave below 黄鍾 or above 應鍾清).

    >>> from yuesheng.music.lulu import Pitch, Register, lu
    >>> def played(name: str, register: Register, doubled: bool = False) -> str:
    ...     pitch = Pitch(lu(name), register)
    ...     note = Note(lyric="", lu=name, suzi="", pitch=pitch, stanza=1, position=1)
    ...     return se_string(Slot(note, Realization().midi(pitch)[0]), Realization(), doubled=doubled)
    >>> [played("黄", Register.ZHENG), played("應", Register.ZHENG), played("黄", Register.QING),
    ...  played("夾", Register.QING), played("林", Register.ZHENG, True), played("太", Register.QING, True)]
    ['1', '12', '13', '16', '8·20', '15']
    """
    if slot.key is None:
        return ""
    pitch = slot.note.pitch
    octave = pitch.register.value + (slot.key - realization.midi(pitch)[0]) // 12
    middle = pitch.lu.index + 1
    if octave not in (0, 1):
        return "—"
    if octave == 1:
        return str(middle + 12)
    return f"{middle}·{middle + 12}" if doubled else str(middle)


def _doubled_token(token: str, slot: Slot, gong: int) -> str:
    """*token*'s pitch sounded with its octave above (清中雙彈 on a 正律 note): ``<c' c''>4``."""
    assert slot.key is not None
    pitch = lily_pitch(slot.key, gong)
    return token.replace(pitch + "4", f"<{pitch} {lily_pitch(slot.key + 12, gong)}>4", 1)


def _metre_marks(lengths: Sequence[int]) -> dict[int, str]:
    """簡譜's metre mark where the line's length changes: {notes sung before the line: ``\\time 3/4``}.

    The beat is steady (one syllable a crotchet at the sequencer's tempo) and the bar is the line of the poem, so
    the metre is the line's length, marked where it changes as 簡譜 marks a changing metre; 散板 (free rhythm)
    would tell the singer to leave the beat, which the sequencer never does.
    """
    marks, start, previous = {}, 0, 0
    for length in lengths:
        if length != previous:
            marks[start] = f"\\time {length}/4"
        start, previous = start + length, length
    return marks


def _free_breaks(lengths: Sequence[int], count: int) -> set[int]:
    """The positions of the notes before which a system may break inside a line of the poem: any, where the score
    gives no lines; else only inside a line too long for one system (over ``SYSTEM_NOTES``), which would otherwise
    run off the page's edge."""
    if not lengths:
        return set(range(2, count + 1))
    free: set[int] = set()
    start = 0
    for length in lengths:
        if length > SYSTEM_NOTES:
            free.update(range(start + 2, start + length + 1))
        start += length
    return free


# Cautionary signs where a reader expects them: in the bar after an altered note, and in another octave of the bar
# (LilyPond's modern-cautionary, in parentheses); bar numbers are left out, each stanza counting from 1.
_ACCIDENTALS = "\\accidentalStyle modern-cautionary \\omit Score.BarNumber"


def stanza_score(piece: Piece, found: Stanza, slots: Sequence[Slot], setting: Setting, gong: int, *,
                 label: str = "") -> list[str]:
    """One stanza as a LilyPond ``\\score`` with its heading, three lyric lines and its notes on emendations;
    *label*: a ``\\label`` at its last note, so that a book can read the page on which it ends."""
    marks = _emendation_marks(piece)
    keys = [s.key for s in slots if s.key is not None]
    stanza, lengths, ends = found.number, found.line_lengths, set(found.line_ends)
    free = _free_breaks(lengths, len(found.notes))  # a system breaks only at a bar
    # each line of the poem a measure of its length, so that a sign holds to the bar line as a reader expects
    metres = _metre_marks(lengths or (len(found.notes),))
    # no page turn inside a stanza that fits on a page; a longer one takes the pages it needs, not all crushed onto one
    tokens = [_ACCIDENTALS + (" \\autoPageBreaksOff" if len(slots) <= STANZA_ON_ONE_PAGE else "")]
    for n, slot in enumerate(slots):
        if n and slot.note.position - 1 in ends:
            tokens.append('\\bar "|"')
        elif n and slot.note.position in free:
            tokens.append('\\bar ""')
        if slot.note.position - 1 in metres:
            tokens.append(metres[slot.note.position - 1])
        tokens.append(_note_token(slot, gong, setting, marks.get((stanza, slot.note.position))))
        if setting.breath and slot.note.position in ends and slot.key is not None:  # not the stanza's last line
            tokens.append("\\breathe")
    tokens += [f"\\label #'{label}"] if label else []
    tokens.append('\\bar "|."')
    sounding = [s.note for s in slots if s.key is not None]
    staff = "\\new RhythmicStaff \\with { \\jianpuStaff }" if setting.notation is Notation.JIANPU else "\\new Staff"
    key_sig = ("" if setting.notation is Notation.JIANPU
               else f"\\key {lily_pitch(gong, gong).rstrip(_OCTAVE_MARKS)} \\major ")
    clef = "" if setting.notation is Notation.JIANPU else f"\\clef {lily_string(clef_name(keys))} "
    heading = f"第{stanza}章" + (f" · {found.page}" if found.page else "")
    tempo = tempo_mark(setting.syllable) if setting.syllable and stanza == piece.stanzas[0].number else ""
    metre = "" if setting.notation is Notation.JIANPU else "\\omit Staff.TimeSignature "
    titled = _stanza_heading(heading, xieyin_notes(piece, found, setting.part))
    lines = ["\\score {", f"  \\header {{ piece = {titled} }}", "  <<",
             f"    {staff} \\new Voice = \"v\" {{ {metre}{tempo}{key_sig}{clef}"
             f"{' '.join(tokens)} }}"]
    if setting.part == SE:  # the 瑟's own notation first: the strings it plucks
        lines.append(_lyric_line("弦", [se_string(s, setting.realization, doubled=setting.doubled) for s in slots
                                        if s.key is not None], setting.notation))
    if any(n.lyric.strip() for n in sounding):
        lines.append(_lyric_line("詞", [n.lyric.strip() or "·" for n in sounding], setting.notation))
    lines.append(_lyric_line("律", [lu_name(s, setting.realization) for s in slots if s.key is not None],
                             setting.notation))
    if not _octave_shifted(slots, setting.realization):  # the 俗字 name the written octave (六 黄清, 合 黄)
        lines.append(_lyric_line("俗", [n.suzi for n in sounding], setting.notation))
    ragged = " ragged-right = ##t" if len(found.notes) <= RAGGED_NOTES else ""  # a short stanza, not stretched
    lines += ["  >>", f"  \\layout {{{ragged} }}", "}"]
    lines += search_line(found)
    # the emendations under the stanza, each a paragraph of its own (in one column, the last line of one touched
    # the first of the next)
    for text in _footnotes(piece, stanza):
        lines.append(f"\\markup \\smaller \\wordwrap-string {lily_string(text)}")
    return lines


def _stanza_heading(heading: str, xieyin: Sequence[str]) -> str:
    """A stanza's heading ('第2章 · 002-2b'), with the 叶音 of its words under it, above its music: printed under
    the stanza, a page's spacing set it nearer the next stanza's heading than its own music."""
    if not xieyin:
        return lily_string(heading)
    texts = " ".join(f"\\smaller \\wordwrap-string {lily_string(text)}" for text in xieyin)
    return f"\\markup \\column {{ {lily_string(heading)} {texts} }}"


def xieyin_notes(piece: Piece, stanza: Stanza, part: str = "") -> list[str]:
    """The 叶音 the 瑟譜 gives for the characters of *stanza* (``data/xieyin.json``), as a line under it: '叶音 (瑟譜
    003-1b, 001-12a): 虞 read 牙, rhyming with 葭 豝'; in the 瑟's book with the fingering the source gives (帶甲聲)."""
    entry = data_table("xieyin").get(piece.title)
    if not entry or piece.source is None or not set(entry["pages"]) & set(piece.source.pages):
        return []
    sung = {n.lyric.strip() for n in stanza.notes}
    found = [r for r in entry["readings"] if stanza.number in r["stanzas"] and r["character"] in sung]
    if not found:
        return []
    readings = " · ".join(f"{r['character']} read {r['reading']}" + (f", rhyming with {r['rhymes']}" if "rhymes" in r
                                                                      else "")
                          + (f" (瑟: {r['se']})" if part == SE and "se" in r else "") for r in found)
    return [f"叶音 ({entry['ref']}): {readings}"]


_CUE_DOT_ABOVE, _CUE_DOT_BELOW, _CUE_DOT_RADIUS = 2.0, -0.55, 0.16


def jianpu_cue(text: str, digits: Sequence[tuple[str, int]]) -> Markup:
    """A cue line for a 簡譜 book: *text* (its 律 names), then the same notes as 簡譜 digits, each with its octave
    dots drawn above or below (``jianpu_digit``): '… (應 南 太清 黄清) · 簡譜 6 5 2̇ 1̇'."""
    def digit(sign_digit: str, dots: int) -> str:
        marks = " ".join(f"\\translate #'(0 . {_CUE_DOT_ABOVE + 0.4 * n if dots > 0 else _CUE_DOT_BELOW - 0.4 * n})"
                         f" \\draw-circle #{_CUE_DOT_RADIUS} #0 ##t" for n in range(abs(dots)))
        return f"\\overlay {{ \\center-align {lily_string(sign_digit)} {marks} }}"

    notes = " ".join(digit(*d) for d in digits)  # spaced as 簡譜 notes are, wider than words (♯4 3 read as one)
    return Markup(f"\\markup \\line {{ {lily_string(text)} \"· 簡譜\" \\override #'(word-space . 1.5) "
                  f"\\line {{ {notes} }} }}")


def _octave_shifted(slots: Sequence[Slot], realization: Realization) -> bool:
    """Whether a part plays *slots* in another octave than written, where the 俗字 (which name the written octave:
    六 is 黄清, 合 黄) would contradict the 律 row (六 under 黄)."""
    return any(s.key is not None and s.key != realization.midi(s.note.pitch)[0] for s in slots)


def stanza_words(stanza: Stanza) -> str:
    """The stanza's words as one line of text, a space between the lines of the poem: '呦呦鹿鳴 食野之苹 …'."""
    words = [n.lyric.strip() for n in stanza.notes]
    lengths = stanza.line_lengths or (len(words),)
    starts = [sum(lengths[:k]) for k in range(len(lengths))]
    return " ".join("".join(words[a:a + n]) for a, n in zip(starts, lengths, strict=True)).strip()


def search_line(stanza: Stanza) -> list[str]:
    """The stanza's words as a line of text under it, in white: the engraved syllables extract from a PDF one by
    one, in drawing order, so this line is what a search finds ('呦呦鹿鳴'), with the standard forms beside the
    source's variants on a line of their own ('關關雎鳩' under '闗闗雎鳩'), then the simplified forms ('关关雎鸠'), and
    each again without the spaces between the lines of the poem ('呦呦鹿鳴食野之苹', as a reader may type it). []
    for a stanza without words."""
    words = stanza_words(stanza)
    if not words:
        return []
    # the standard forms on a line of their own, and each typed without the spaces between the lines of the poem
    forms = (words, standard_forms(words), simplified_forms(words))
    texts = dict.fromkeys(t for form in forms for t in (form, form.replace(" ", "")))
    return ["\\noPageBreak", "\\markup \\with-color #white \\fontsize #-12 \\column { "
            + " ".join(lily_string(t) for t in texts) + " }"]


def cents_legend(lus: Sequence[int], realization: Realization) -> str:
    """A markup line: the 三分損益 deviation of each 律 in *lus* (indices) from equal temperament."""
    cells = [f"{LU[i].short} {cents_offset(LU[i], realization.tuning):+.2f}" for i in sorted(set(lus))]
    return ("\\markup \\wordwrap-string "
            + lily_string("三分損益, cents against equal temperament from 黄鍾: " + "  ".join(cells)))


def piece_slots(piece: Piece, realization: Realization) -> list[Slot]:
    """Every note of *piece* as sung or played, at the pitch *realization* gives it."""
    return [Slot(n, realization.midi(n.pitch)[0]) for n in piece.notes]


def _run_in_heading(piece: Piece) -> list[str]:
    """The heading of a piece set on from the one before (a songbook's lost piece): title, mode, where it is lost."""
    title = piece.title + (f" — {piece.realization.label}" if piece.realization else "")
    lost = f"lost: {piece.lost.cite}" if piece.lost else "lost"
    rule = "; rule under Notices" if piece.realization else ""
    return [f"\\markup \\column {{ \\vspace #1 \\fill-line {{ \\bold \\fontsize #2 {lily_string(title)} }} "
            f"\\fill-line {{ {lily_string(' · '.join(filter(None, (_mode_line(piece), lost + rule))))} }} }}",
            "\\noPageBreak"]


def piece_bookpart(piece: Piece, setting: Setting, *, slots: Sequence[Slot] | None = None,
                   before: Sequence[str | Markup] = (), toc: bool = False, legend: bool = True, run_in: bool = False,
                   rule: bool = True, end_label: str = "") -> str:
    """*piece* as a LilyPond ``\\bookpart``; *slots* give a part's line (default: the piece as written).

    *before* are lines printed under the header (the songbook's cue headings), text or made markup. *run_in*: the
    piece's heading and music alone, set on the page after the piece before it (a songbook's lost piece, whose notice
    and rule the contents page gives once). *rule*: a realization's rule under its header (a songbook gives it
    once, on the contents page). *end_label*: a ``\\label`` at the piece's last note (the page it ends on).
    """
    slots = list(slots) if slots is not None else piece_slots(piece, setting.realization)
    # 1 of the 簡譜 in the octave of the piece as written, so that a part an octave lower keeps its dots below
    gong = gong_key(piece.mode, [setting.realization.midi(n.pitch)[0] for n in piece.notes], setting.realization)
    if _key_of_notes_used(setting):
        gong = used_key([s.key for s in slots if s.key is not None], gong)
    lines = _run_in_heading(piece) if run_in else ["\\bookpart {"] + _header(piece, setting, gong)
    if toc:
        label = piece.title + (f" · {piece.mode.name}" if piece.mode else "") + (
            f" · {piece.realization.label}" if piece.realization else "")
        lines.append(f"\\tocItem \\markup {lily_string(label)}")
    if piece.realization and not run_in:
        rule_text = f"Rule: {piece.realization.rule}" if rule else "Its rule is under Notices."
        before = [f"{piece.realization.heading}, not a transmitted score. {rule_text}", *before]
    for n, text in enumerate(before):  # the heading and the cue lines stay together and with the music
        made = text.source if isinstance(text, Markup) else f"\\markup \\wordwrap-string {lily_string(text)}"
        lines += ["\\noPageBreak"] * bool(n) + [made]
    if run_in or before:
        lines.append("\\noPageBreak")
    if legend and setting.realization.tuning is Tuning.SANFEN:
        lines.append(cents_legend([s.note.pitch.lu.index for s in slots], setting.realization))
    for stanza in piece.stanzas:
        stanza_slots = [s for s in slots if s.note.stanza == stanza.number]
        if stanza_slots:
            last = stanza is piece.stanzas[-1]
            lines += stanza_score(piece, stanza, stanza_slots, setting, gong, label=end_label if last else "")
    return "\n".join(lines if run_in else [*lines, "}"])


_JIANPU_STAFF = (r"jianpuStaff = \with { \override StaffSymbol.line-count = #0 "
                 r"\override BarLine.bar-extent = #'(-0.6 . 3.3) "
                 # the metre as 簡譜 prints it, a fraction: its digits apart, a line between (LilyPond's numbered
                 # style stacks them by staff lines, and on a staff without lines the upper digit cut the lower)
                 r"\override TimeSignature.stencil = #(lambda (grob) (let ((f (ly:grob-property grob 'fraction))) "
                 r"(grob-interpret-markup grob (markup #:override '(font-encoding . latin1) #:fraction "
                 r"(number->string (car f)) (number->string (cdr f)))))) "
                 r"\override TimeSignature.break-visibility = #end-of-line-invisible "
                 r"\override TimeSignature.font-size = #-1 \override TimeSignature.Y-offset = #1.1 "
                 r"\override BarLine.space-alist.time-signature = #'(extra-space . 1.2) "
                 r"\omit Stem \omit Clef \omit KeySignature \omit Accidental } "
                 # the lyric rows at a fixed distance under the digits, clear of two octave dots below, and a
                 # fixed distance apart: the same gap on every line, however crowded
                 r"jianpuLyrics = \with { \override VerticalAxisGroup.nonstaff-relatedstaff-spacing = "
                 r"#'((basic-distance . 4.2) (minimum-distance . 4.2) (padding . 0.3) (stretchability . 0)) "
                 r"\override VerticalAxisGroup.nonstaff-nonstaff-spacing = "
                 r"#'((basic-distance . 2.9) (minimum-distance . 2.9) (padding . 0.3) (stretchability . 0)) }")


# Each page, as it is written out, logs its number, whether it ends its bookpart, and the page of every \label:
# the songbook reads the pages each piece takes from a first run and lays the pieces on facing pages in the
# second. The messages are made when the page is output (a delayed stencil), not while LilyPond tries breaks.
PAGE_LOG, LABEL_LOG = "yuesheng-page", "yuesheng-label"
_PAGE_LOGGER = (
    "#(define-markup-command (yueshengPage layout props) () (ly:make-stencil `(delay-stencil-evaluation ,(delay "
    f"(begin (ly:message \"{PAGE_LOG} ~a ~a\" (chain-assoc-get 'page:page-number props 0) "
    "(if (chain-assoc-get 'page:is-bookpart-last-page props #f) \"last\" \"more\")) "
    f"(for-each (lambda (entry) (ly:message \"{LABEL_LOG} ~a ~a\" (car entry) (cdr entry))) "
    "(ly:output-def-lookup layout 'label-page-table '())) '()))) '(0 . 0) '(0 . 0)))")


@dataclass(frozen=True, slots=True)
class Pages:
    """How a first run laid out a book: the pages each bookpart takes, and the page of each ``\\label``."""

    bookparts: tuple[int, ...]
    labels: dict[str, int]


def book_source(bookparts: Sequence[str], *, font: str, title: str = "", front: Sequence[str] = (),
                log_pages: bool = False) -> str:
    """A complete LilyPond file: version, paper with the CJK *font* (then the shipped text font, for the characters
    it lacks: ``fonts.FONT_FILES``), an optional title and front matter, the parts; with *log_pages*, each page logs
    its number, whether it ends its bookpart, and its labels (``measure_pages``)."""
    families = ", ".join((font, *FAMILIES))
    footer = ("oddFooterMarkup = \\markup \\yueshengPage evenFooterMarkup = \\markup \\yueshengPage "
              if log_pages else "")
    lines = [f"\\version {lily_string(LILYPOND_VERSION)}", _JIANPU_STAFF, *([_PAGE_LOGGER] if log_pages else []),
             *(f"#(ly:font-config-add-font {lily_string(str(path))})" for path in FONT_FILES),
             f"\\paper {{ fonts.serif = {lily_string(families)} fonts.sans = {lily_string(families)} {footer}"
             "tagline = ##f ragged-last = ##f markup-markup-spacing.padding = #0.8 "  # lines of prose apart
             "tocTitleMarkup = \\markup \\fill-line { \\bold \"Contents 目錄\" } }",
             "\\layout { \\context { \\Lyrics \\override LyricSpace.minimum-distance = #1.5 } "
             "\\context { \\Voice \\override TextScript.outside-staff-padding = #1.0 } "
             # the tempo clear of a stem that reaches above the staff (the 瑟's octaves: 40 sat on the stem of e'')
             "\\context { \\Score \\override MetronomeMark.outside-staff-padding = #1.0 } }",
             "\\header { tagline = ##f }" if not title
             else f"\\header {{ tagline = ##f title = {lily_string(title)} }}"]
    if front:
        lines += ["\\bookpart {", "\\header { title = ##f subtitle = ##f }"] + list(front) + ["}"]
    return "\n".join(lines + list(bookparts)) + "\n"


# --- running LilyPond -----------------------------------------------------------------------------


def find_lilypond() -> str:
    """The LilyPond executable of the ``lilypond`` package, or EngraveError saying how to install it."""
    try:
        import lilypond
    except ImportError:
        raise EngraveError("LilyPond is not installed (no Python package 'lilypond'); install it with: "
                           "pip install lilypond") from None
    path = Path(lilypond.executable())
    if not path.is_file():
        raise EngraveError(f"the lilypond package has no engraver at {path}; "
                           "reinstall it: pip install --force-reinstall lilypond")
    return str(path)


def run_tool(command: Sequence[str], *, cwd: Path, time_limit: float = TIME_LIMIT, what: str = "LilyPond",
             memory: int = limits.LILYPOND_MEMORY) -> str:
    """Run an external program in *cwd* with a time limit and at most *memory* bytes of address space; kill it on
    any way out (it dies with yuesheng even on SIGKILL, ``process.bound_to_us``); failures → EngraveError.

    Returns its standard error (LilyPond's log).
    """
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    try:
        process = subprocess.Popen(list(command), cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True,
                                   preexec_fn=bound_to_us(memory=memory))
    except (OSError, subprocess.SubprocessError) as exc:  # SubprocessError: the bound refused the child's set-up
        raise EngraveError(f"cannot start {what} ({command[0]}): {getattr(exc, 'strerror', None) or exc}") from None
    try:
        out, err = process.communicate(timeout=time_limit)
    except subprocess.TimeoutExpired:
        raise EngraveError(f"{what} did not finish within {time_limit:g} s and was stopped") from None
    finally:
        if process.poll() is None:  # timed out, or yuesheng itself was interrupted: stop it and its children
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
    log = (out + err).decode("utf-8", errors="replace")
    if process.returncode != 0 and any(sign in log for sign in _OUT_OF_MEMORY):
        raise EngraveError(f"{what} ran out of memory: it may use at most {memory / 2**30:g} GiB; engrave fewer "
                           "notes (a piece, or a songbook with --part)")
    if process.returncode != 0:
        errors = [line for line in log.splitlines() if "error" in line.lower()]
        detail = "; ".join(errors[:5]) or log.strip()[-600:]
        raise EngraveError(f"{what} failed (exit {process.returncode}): {detail}")
    return log


def find_cjk_font() -> str:
    """The family name of an installed CJK font (Noto CJK preferred), or EngraveError naming the package."""
    if not shutil.which("fc-list"):
        raise EngraveError(f"fontconfig is not installed (no 'fc-list' command), so no CJK font can be found; "
                           f"install both with: apt-get install fontconfig {FONT_INSTALL.split()[-1]}")
    with tempfile.TemporaryDirectory(prefix="yuesheng-fc-") as tmp:
        listing = run_tool(["fc-list", ":lang=zh", "family"], cwd=Path(tmp), time_limit=30, what="fc-list")
    families = [name.strip() for line in listing.splitlines() for name in line.split(",") if name.strip()]
    for preferred in _FONT_PREFERENCE:
        if preferred in families:
            return preferred
    if families:
        return sorted(families)[0]
    raise EngraveError(f"no CJK font found (fc-list :lang=zh lists none), so the Chinese text cannot be printed; "
                       f"install one with: {FONT_INSTALL}")


def measure_pages(source: str, *, time_limit: float = TIME_LIMIT) -> Pages:
    """The pages each bookpart of *source* (made with ``log_pages``) takes, in order, and the page of each of its
    labels: one LilyPond run whose output is thrown away."""
    with tempfile.TemporaryDirectory(prefix="yuesheng-ly-") as tmp:
        folder = Path(tmp)
        (folder / "score.ly").write_text(source, encoding="utf-8")
        log = run_tool([find_lilypond(), "-dbackend=cairo", "--pdf", "-dno-point-and-click", "-o", "out", "score.ly"],
                       cwd=folder, time_limit=time_limit)
    counts, labels, pages = [], {}, 0
    for line in log.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == PAGE_LOG:
            pages += 1
            if words[2] == "last":
                counts.append(pages)
                pages = 0
        elif len(words) == 3 and words[0] == LABEL_LOG and words[2].isdigit():
            labels[words[1]] = int(words[2])
    return Pages(tuple(counts), labels)


def engrave(source: str, output: str | Path, *, time_limit: float = TIME_LIMIT) -> list[Path]:
    """Write *source* as .ly, or engrave it to the PDF, SVG or PNG that *output*'s suffix names, atomically.

    A PNG or SVG of several pages is written as one file per page: OUT.png, OUT-2.png, …
    Returns the files written.
    """
    target = Path(output)
    fmt = target.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise EngraveError(f"{target}: expected a .pdf, .svg, .png or .ly file")
    if fmt == "ly":
        write_atomic(target, source)
        return [target]
    command = [find_lilypond(), "-dbackend=svg" if fmt == "svg" else "-dbackend=cairo", f"--{fmt}",
               "-dno-point-and-click", "-dresolution=150", "-o", "out", "score.ly"]
    with tempfile.TemporaryDirectory(prefix="yuesheng-ly-") as tmp:
        folder = Path(tmp)
        (folder / "score.ly").write_text(source, encoding="utf-8")
        run_tool(command, cwd=folder, time_limit=time_limit)
        made = sorted(folder.glob(f"out*.{fmt}"), key=lambda p: (len(p.name), p.name))
        if not made:
            raise EngraveError(f"LilyPond wrote no {fmt.upper()} file")
        written = [target if n == 1 else target.with_name(f"{target.stem}-{n}{target.suffix}")
                   for n in range(1, len(made) + 1)]
        for path in written[1:]:  # the first was checked by the command; the others only now exist by name
            check_output(path)
        for page, path in zip(made, written, strict=True):
            if fmt == "svg":
                name_svg_font(page, source)
            with atomic_path(path) as tmp_path:
                shutil.copyfile(page, tmp_path)
    return written


_PAPER_FONT = re.compile(r'fonts\.serif = "((?:\\.|[^"\\])*)"')


def name_svg_font(svg: Path, source: str) -> None:
    """Name in *svg* the CJK font *source* was set in, before the generic serif LilyPond's SVG backend writes, so
    that a browser shows the face the PDF shows (with serif only, it substitutes a CJK face of its own)."""
    found = _PAPER_FONT.search(source)
    if found is None:
        return
    families = found[1].replace('\\"', '"').replace("\\\\", "\\").split(",")
    quoted = ", ".join(f"'{html.escape(f.strip().replace(chr(39), ''), quote=True)}'" for f in families if f.strip())
    named = f"font-family=\"{quoted}, serif\""
    svg.write_text(svg.read_text(encoding="utf-8").replace('font-family="serif"', named), encoding="utf-8")


def check_notes(count: int, what: str) -> None:
    """LimitError if an engraving of *count* notes (of *what*) is beyond ``limits.ENGRAVED_NOTES``."""
    if message := limits.ENGRAVED_NOTES.check(f"{what}: an engraving of", count, " notes"):
        raise LimitError(message)


def score_source(piece: Piece, setting: Setting, *, font: str | None = None) -> str:
    """The LilyPond file of one piece (finding a CJK font unless *font* is given); LimitError for a piece of
    more notes than ``limits.ENGRAVED_NOTES``."""
    check_notes(len(piece.notes), piece.title)
    return book_source([piece_bookpart(piece, setting)], font=font or find_cjk_font())
