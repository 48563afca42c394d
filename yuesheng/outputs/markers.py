"""Timeline → markers that audio tools read: an Audacity label track and a CUE sheet.

Both give times from the start of the audio rendered from the same Timeline
(tick 0 is frame 0), so they land on their cues in a full render and, from the
condensed Timeline, in a ``--music-only`` one.

Audacity label track (UTF-8, one label per cue, then one per 終 of each piece and one per stanza of it, in time
order; seconds with six decimals)::

    0.000000<TAB>12.500000<TAB>gongru: 工入
    12.500000<TAB>167.000000<TAB>shengge: ♪升歌 鹿鳴 四牡 皇皇者華
    12.500000<TAB>63.500000<TAB>shengge: 鹿鳴 (第1終)
    12.500000<TAB>32.000000<TAB>shengge: 鹿鳴 (第1終) 第1章

CUE sheet (UTF-8 with a byte-order mark, so players detect the hanzi; one
TRACK per music cue (cues that start together share one), ``WAVE`` for any
audio file as the format has it; INDEX in minutes:seconds:frames at 75 frames
a second, minutes past 99 for long rites; a first track that does not start at
0 gets its pre-gap as INDEX 00)::

    TITLE "鄉飲酒禮"
    FILE "xiangyinjiu.flac" WAVE
      TRACK 01 AUDIO
        TITLE "升歌 鹿鳴 四牡 皇皇者華"
        REM CUE shengge
        INDEX 00 00:00:00
        INDEX 01 00:12:37
"""

from __future__ import annotations

from yuesheng.cuesheet.zhong import programme
from yuesheng.music.score import Piece
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Event, EventKind, Timeline

CD_FRAMES = 75  # CUE-sheet frames a second


def _what(timing: CueTiming) -> str:
    cue = timing.cue
    if cue.is_music:
        return f"{cue.music.value if cue.music else ''} {programme(cue) or cue.words}".strip()
    return cue.action


def audacity_labels(timeline: Timeline) -> str:
    """One label a cue, one a 終 of each piece and one a stanza of it (``piece_labels``): start, end (seconds) and
    the cue's id and what happens, tab-separated, in time order (a cue before its pieces, a piece before its
    stanzas)."""
    labels = [(t.start_tick, t.end_tick, f"{t.cue.id}: {'♪' if t.cue.is_music else ''}{_what(t)}")
              for t in timeline.cues] + piece_labels(timeline)
    lines = [f"{start / TICKS_PER_SECOND:.6f}\t{end / TICKS_PER_SECOND:.6f}\t{text}"
             for start, end, text in sorted(labels, key=lambda label: label[0])]  # stable: cue, 終, stanzas
    return "\n".join(lines) + "\n" if lines else ""


def piece_labels(timeline: Timeline) -> list[tuple[int, int, str]]:
    """(start tick, end tick, text) of each 終 of each piece in *timeline*, numbered as its cue counts them
    (``shengge: 四牡 (第2終)``; in a round of shooting with its 耦, ``san-ou 第1終``), followed by its stanzas if it
    has more than one (``shengge: 四牡 (第2終) 第3章``): a 終 from its first sound to its last; a stanza from its
    first syllable's place to the next's, those a 終 cut short at a phrase end (樂闋) never reaches left out."""
    pieces = {ref.piece.id: ref.piece for t in timeline.cues for ref in t.cue.pieces}
    sounding: dict[tuple[str, str], list[Event]] = {}
    for e in timeline.events:
        if e.piece and e.kind in (EventKind.NOTE, EventKind.DRUM) and e.piece in pieces:
            sounding.setdefault((e.cue, e.piece), []).append(e)
    labels = []
    for (cue, pid), events in sounding.items():
        piece = pieces[pid]
        step = next((e.length_ticks for e in events if e.kind is EventKind.NOTE and e.length_ticks), 0)
        for zhong, pair, start, end in _zhongs(events, step * len(piece.notes)) if step and piece.notes else ():
            title = f"{cue}: {piece.title} ({timeline.names.get(pair, pair) + ' ' if pair else ''}第{zhong}終)"
            labels.append((start, end, title))
            labels += [(start + a * step, min(end, start + b * step), f"{title} 第{number}章")
                       for number, a, b in _stanza_spans(piece) if start + a * step < end and len(piece.stanzas) > 1]
    return labels


def _zhongs(events: list[Event], span: int) -> list[tuple[int, str, int, int]]:
    """(終, the 耦 shooting to it or '', first tick, last tick sounding) of each time a piece is played in *events*
    (in time order): a new one where the 終 changes or a note comes a whole piece (*span* ticks) after the start of
    the one before."""
    found: list[tuple[int, str, int, int]] = []
    for e in events:
        if found and e.zhong == found[-1][0] and e.start_tick < found[-1][2] + span:
            zhong, pair, start, end = found[-1]
            found[-1] = (zhong, pair or e.pair, start, max(end, e.start_tick + e.length_ticks))
        else:
            found.append((e.zhong, e.pair, e.start_tick, e.start_tick + e.length_ticks))
    return found


def _stanza_spans(piece: Piece) -> list[tuple[int, int, int]]:
    """(stanza number, index of its first note, index after its last) of each stanza of *piece*."""
    spans, at = [], 0
    for stanza in piece.stanzas:
        spans.append((stanza.number, at, at + len(stanza.notes)))
        at += len(stanza.notes)
    return spans


def cue_time(tick: int) -> str:
    """Ticks → the CUE sheet's mm:ss:ff (75 frames a second, rounded down: never before the cue)."""
    frames = tick * CD_FRAMES // TICKS_PER_SECOND
    minutes, rest = divmod(frames, 60 * CD_FRAMES)
    return f"{minutes:02d}:{rest // CD_FRAMES:02d}:{rest % CD_FRAMES:02d}"


def _quoted(text: str) -> str:
    return '"' + text.replace('"', "'") + '"'


def cue_sheet(timeline: Timeline, audio_name: str) -> str:
    """A CUE sheet of *audio_name* with one track per music cue of *timeline*."""
    lines = ["\ufeffREM COMMENT \"yuesheng: one track per music cue\"", f"TITLE {_quoted(timeline.rite)}",
             f"FILE {_quoted(audio_name)} WAVE"]
    for n, group in enumerate(tracks(timeline), 1):
        lines += [f"  TRACK {n:02d} AUDIO", f"    TITLE {_quoted(' / '.join(_what(t) for t in group))}",
                  f"    REM CUE {' '.join(t.cue.id for t in group)}"]
        if n == 1 and group[0].start_tick > 0:
            lines.append("    INDEX 00 00:00:00")
        lines.append(f"    INDEX 01 {cue_time(group[0].start_tick)}")
    return "\n".join(lines) + "\n"


def tracks(timeline: Timeline) -> list[list[CueTiming]]:
    """The music cues as CUE tracks: cues that start on the same CUE frame share one (a track cannot be empty)."""
    out: list[list[CueTiming]] = []
    for t in timeline.cues:
        if not t.cue.is_music:
            continue
        if out and cue_time(out[-1][0].start_tick) == cue_time(t.start_tick):
            out[-1].append(t)
        else:
            out.append([t])
    return out
