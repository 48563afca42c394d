"""Score → music21 → MusicXML. The only module that imports music21; import it lazily.

The sources give one pitch per syllable and no durations (一字一音), so every
note gets the same value: ``note_value`` quarter lengths (default 1, a crotchet).
In 4/4, each stanza starts a new measure (rehearsal mark = stanza number), its
last measure is filled with a rest, and it ends with a double bar. Lyrics: line 1 is
the sung syllable, line 2 the 律, line 3 the 俗字 — so a singer reads the text
and a scholar the notation under the same note. MusicXML carries the 12-tone
spelling only; 三分損益 cents live in the MIDI output.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from yuesheng.errors import ExportError
from yuesheng.files import write_atomic
from yuesheng.music.lulu import Realization
from yuesheng.music.score import Piece

if TYPE_CHECKING:
    import music21

DEFAULT_REALIZATION = Realization()  # the default 黄鍾 and tuning: one frozen value, as the old default was


def piece_to_score(piece: Piece, *, realization: Realization = DEFAULT_REALIZATION,
                   note_value: float = 1.0) -> music21.stream.Score:
    """A music21 Score of *piece*: one part, one measure group per stanza, three lyric lines."""
    from music21 import bar, expressions, metadata, meter, note, stream

    score = stream.Score()
    score.metadata = metadata.Metadata(title=f"{piece.title} ({piece.mode.name if piece.mode else ''})")
    score.metadata.composer = piece.provenance_label
    part = stream.Part()
    part.partName = "歌" if any(n.lyric.strip() for n in piece.notes) else "笙"
    per_bar = max(1, round(4 / note_value))
    for stanza in piece.stanzas:
        notes = []
        for n in stanza.notes:
            m21_note = note.Note(realization.midi(n.pitch)[0], quarterLength=note_value)
            for text in (n.lyric.strip() or "·", n.lu, n.suzi):
                m21_note.addLyric(text)
            notes.append(m21_note)
        for start in range(0, len(notes), per_bar):
            measure = stream.Measure()
            if start == 0:
                measure.insert(0, expressions.RehearsalMark(f"{stanza.number}"))
                if stanza.number == 1:
                    measure.insert(0, meter.TimeSignature("4/4"))
            chunk = notes[start:start + per_bar]
            for m21_note in chunk:
                measure.append(m21_note)
            if len(chunk) < per_bar:
                measure.append(note.Rest(quarterLength=(per_bar - len(chunk)) * note_value))
            part.append(measure)
        part.getElementsByClass(stream.Measure)[-1].rightBarline = bar.Barline("light-light")
    score.insert(0, part)
    return score


def write_musicxml(piece: Piece, path: str | Path, *, realization: Realization = DEFAULT_REALIZATION,
                   note_value: float = 1.0) -> None:
    """Export *piece* as MusicXML to *path*, atomically."""
    from music21.exceptions21 import Music21Exception
    from music21.musicxml.m21ToXml import GeneralObjectExporter

    try:
        data = GeneralObjectExporter(piece_to_score(piece, realization=realization, note_value=note_value)).parse()
    except Music21Exception as exc:
        raise ExportError(f"{piece.id}: a note of {note_value:g} beats cannot be written in MusicXML ({exc})") from None
    write_atomic(path, data)
