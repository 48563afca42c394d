"""Score → music21 → MusicXML. The only module that imports music21; import it lazily.

The sources give one pitch per syllable and no durations (一字一音), so every
note gets the same value: ``note_value`` quarter lengths (default 1, a crotchet).
The music is unmetred: one measure per line (句) of the poem, numbered from 1,
each with a hidden time signature of its length (``<time print-object="no">``; x/8 or finer where the note
value needs it: seven notes of half a beat are 7/8), accidentals shown as the engraved score draws them,
as the engraved score has a bar at each line end; a stanza without lines is one
measure. Each stanza starts with a rehearsal mark (its number) and ends with a
double bar. The first measure carries the clef, the key signature of the 宫 of
the mode's 均 (the pitches spelled in that 均, as in the engraved score) and
the tempo (a syllable every 1.5 s unless told). Lyrics, each line named: 詞 the
sung syllable (none for an instrumental line: no placeholder), 律 the 律 with
its register (黄清, 南倍), 俗 the 俗字. The source and its pages are the
``<source>`` of ``<identification>``; nobody is named composer. MusicXML carries
the 12-tone spelling only; 三分損益 cents live in the MIDI output.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from xml.sax.saxutils import escape

from yuesheng.cuesheet import DEFAULT_SYLLABLE
from yuesheng.errors import ExportError
from yuesheng.files import write_atomic
from yuesheng.music.lulu import Realization
from yuesheng.music.score import Note, Piece
from yuesheng.outputs.engrave import clef_name, gong_key, spell

if TYPE_CHECKING:
    import music21

DEFAULT_REALIZATION = Realization()  # the default 黄鍾 and tuning: one frozen value, as the old default was
LYRIC_LINES = ("詞", "律", "俗")
_STEPS: tuple[Literal["C", "D", "E", "F", "G", "A", "B"], ...] = ("C", "D", "E", "F", "G", "A", "B")
_CLEFS = {"treble": "TrebleClef", "treble_8": "Treble8vbClef", "bass": "BassClef"}


def source_text(piece: Piece) -> str:
    """Where the notes come from: the 瑟譜 and its pages, or the passage that says the piece is lost."""
    if piece.source:
        return piece.source.citation()
    lost = f"lost: {piece.lost.citation()}" if piece.lost else "lost"
    return lost + (f"; {piece.realization.label}: {piece.realization.rule}" if piece.realization else "")


def _m21_note(n: Note, key: int, gong: int, note_value: float) -> music21.note.Note:
    from music21 import note, pitch

    letter, alteration, octave = spell(key, gong)
    m21_pitch = pitch.Pitch(step=_STEPS[letter], octave=octave, accidental=alteration or None)
    m21_note = note.Note(m21_pitch, quarterLength=note_value)
    for number, (name, text) in enumerate(zip(LYRIC_LINES, (n.lyric.strip(), n.pitch.name, n.suzi), strict=True), 1):
        if text:
            m21_note.lyrics.append(note.Lyric(text, number=number, identifier=name))
    return m21_note


def piece_to_score(piece: Piece, *, realization: Realization = DEFAULT_REALIZATION, note_value: float = 1.0,
                   syllable: Fraction = DEFAULT_SYLLABLE) -> music21.stream.Score:
    """A music21 Score of *piece*: one part, a measure per line of the poem, three named lyric lines."""
    from music21 import bar, clef, expressions, key, metadata, meter, stream, tempo

    keys = [realization.midi(n.pitch)[0] for n in piece.notes]
    gong = gong_key(piece.mode, keys, realization)
    score = stream.Score()
    score.metadata = metadata.Metadata(title=piece.title)
    if piece.mode:
        score.metadata.movementName = f"{piece.title} · {piece.mode.name}"
    part = stream.Part()
    part.partName = "歌" if any(n.lyric.strip() for n in piece.notes) else "笙"
    by_note = dict(zip(piece.notes, keys, strict=True))
    number, length = 0, None
    for stanza in piece.stanzas:
        lengths = stanza.line_lengths or (len(stanza.notes),)
        start = 0
        for line in lengths:
            number += 1
            measure = stream.Measure(number=number)
            if number == 1:
                letter, alteration, _ = spell(gong, gong)
                measure.insert(0, getattr(clef, _CLEFS[clef_name(keys)])())
                measure.insert(0, key.Key(_STEPS[letter] + {-1: "-", 1: "#"}.get(alteration, ""), "major"))
                measure.insert(0, tempo.MetronomeMark(number=round(60 * note_value / float(syllable), 2)))
            if start == 0:
                measure.insert(0, expressions.RehearsalMark(f"{stanza.number}"))
            if line != length:
                signature = meter.TimeSignature(time_signature(line, note_value, where=f"{piece.id} measure {number}"))
                signature.style.hideObjectOnPrint = True
                measure.insert(0, signature)
                length = line
            for n in stanza.notes[start:start + line]:
                measure.append(_m21_note(n, by_note[n], gong, note_value))
            start += line
            part.append(measure)
        part.getElementsByClass(stream.Measure)[-1].rightBarline = bar.Barline("light-light")
    part.getElementsByClass(stream.Measure)[-1].rightBarline = bar.Barline("final")
    _show_accidentals(part, spell(gong, gong))
    score.insert(0, part)
    return score


def time_signature(notes: int, note_value: float, *, where: str = "") -> str:
    """The time signature of a measure of *notes* notes of *note_value* beats: ``7/4``, ``7/8`` (seven of half a
    beat), ``21/8`` (seven of 1.5); ExportError if no denominator up to 256 holds it.

    >>> time_signature(7, 0.5), time_signature(7, 1.5), time_signature(4, 1.0)
    ('7/8', '21/8', '4/4')
    """
    quarters = notes * Fraction(note_value)
    for denominator in (4, 8, 16, 32, 64, 128, 256):
        count = quarters * denominator / 4
        if count.denominator == 1:
            return f"{count}/{denominator}"
    raise ExportError(f"{where}: {notes} notes of {note_value:g} beats make {float(quarters):g} beats, which no time "
                      "signature (N/4, N/8 … N/256) holds; give --note-value as a whole number of 1/64 beats")


_SIGNATURE_SHARPS = "FCGDAEB"  # the order of sharps (and, reversed, of flats) in a key signature


def _key_alterations(tonic: tuple[int, int, int]) -> dict[int, int]:
    """Letter index → alteration of the major key signature whose tonic is spelled *tonic* (letter, alteration)."""
    letter, alteration, _ = tonic
    fifths = {0: 0, 1: 2, 2: 4, 3: -1, 4: 1, 5: 3, 6: 5}[letter] + 7 * alteration
    order = _SIGNATURE_SHARPS if fifths >= 0 else _SIGNATURE_SHARPS[::-1]
    return {"CDEFGAB".index(name): (1 if fifths >= 0 else -1) for name in order[:abs(fifths)]}


def accidental_signs(bars: list[list[tuple[int, int, int]]], key: dict[int, int]) -> list[list[str]]:
    """For each note (letter, alteration, octave) of each bar: "plain" where common practice needs a sign (its
    alteration differs from the one in force: the key's, or the last in the bar on that letter and octave),
    "cautionary" where a reader expects a courtesy sign (the letter altered otherwise in the bar before, in that
    octave, or earlier in this bar in another octave), else "none" — as the engraved score draws them.

    >>> accidental_signs([[(3, 1, 4), (3, 1, 4)], [(3, 1, 4), (3, 0, 4)]], {})  # C major: F♯ F♯ | F♯ F
    [['plain', 'none'], ['plain', 'plain']]
    """
    shown: list[list[str]] = []
    before: dict[tuple[int, int], int] = {}
    for notes in bars:
        here: dict[tuple[int, int], int] = {}
        signs = []
        for letter, alteration, octave in notes:
            spot = (letter, octave)
            if alteration != here.get(spot, key.get(letter, 0)):
                signs.append("plain")
            elif before.get(spot, alteration) != alteration or any(
                    other == letter and alt != alteration for (other, _), alt in here.items()):
                signs.append("cautionary")
            else:
                signs.append("none")
            here[spot] = alteration
        shown.append(signs)
        before = here
    return shown


def _show_accidentals(part: music21.stream.Part, tonic: tuple[int, int, int]) -> None:
    """Set on every note whether its accidental is shown (``accidental_signs``), so that no reader repeats a sign
    already in force in the bar and music21 guesses none."""
    from music21 import pitch

    measures = list(part.getElementsByClass("Measure"))
    notes = [list(m.notes) for m in measures]
    spelled = [[("CDEFGAB".index(n.pitch.step), int(n.pitch.alter), n.pitch.octave or 0) for n in bar]
               for bar in notes]
    for bar, signs in zip(notes, accidental_signs(spelled, _key_alterations(tonic)), strict=True):
        for n, sign in zip(bar, signs, strict=True):
            if sign != "none" and n.pitch.accidental is None:
                n.pitch.accidental = pitch.Accidental("natural")
            if n.pitch.accidental is not None:
                n.pitch.accidental.displayStatus = sign != "none"
                n.pitch.accidental.displayType = "always" if sign != "none" else "never"
                if sign == "cautionary":
                    n.pitch.accidental.displayStyle = "parentheses"


def musicxml_bytes(piece: Piece, *, realization: Realization = DEFAULT_REALIZATION, note_value: float = 1.0) -> bytes:
    """*piece* as MusicXML, with its source in ``<identification>`` (ExportError if music21 cannot write it)."""
    from music21 import defaults
    from music21.exceptions21 import Music21Exception
    from music21.musicxml.m21ToXml import GeneralObjectExporter

    if (Fraction(note_value) * 64).denominator != 1:  # then every line's time signature can be written too
        raise ExportError(f"{piece.id}: a note of {note_value:g} beats cannot be written in MusicXML (a note is a "
                          "whole number of 1/64 beats: 0.5, 1.5, 0.25 …)")
    try:
        data = GeneralObjectExporter(piece_to_score(piece, realization=realization, note_value=note_value)).parse()
    except Music21Exception as exc:
        raise ExportError(f"{piece.id}: a note of {note_value:g} beats cannot be written in MusicXML ({exc})") from None
    source = f"</encoding>\n    <source>{escape(source_text(piece))}</source>".encode()
    anonymous = f'<creator type="composer">{defaults.author}</creator>'.encode()  # music21's stand-in: nobody's
    return re.sub(rb"\s*" + re.escape(anonymous), b"", data).replace(b"</encoding>", source, 1)


def write_musicxml(piece: Piece, path: str | Path, *, realization: Realization = DEFAULT_REALIZATION,
                   note_value: float = 1.0) -> None:
    """Export *piece* as MusicXML to *path*, atomically."""
    write_atomic(path, musicxml_bytes(piece, realization=realization, note_value=note_value))
