"""Practice files: a piece's Timeline with a count-in before it, so that a singer hears the 宫 and the beat first.

The count-in is the 宫 of the piece's mode (1 of the 簡譜, in the octave the piece mostly lies in), sounded by the
part that leads the piece for one beat, then *beats* strokes of the drum a beat apart; the piece follows on the next
beat. It is for practice only and says so: the sources give no count-in.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from yuesheng.music.instruments import PARTS
from yuesheng.music.score import Piece
from yuesheng.outputs.engrave import gong_key
from yuesheng.timeline import Event, EventKind, Timeline, ticks

COUNT_IN_DRUM = "鼓"
COUNT_IN_NOTICE = "count-in (for practice; the sources give none): the 宫, then {beats} beats of the drum"


def with_count_in(timeline: Timeline, piece: Piece, *, beats: int, beat: Fraction) -> Timeline:
    """*timeline* (one piece sounding from tick 0) after a count-in: the 宫 for a beat, then *beats* drum strokes
    *beat* seconds apart; every event of the piece moved that much later."""
    if beats <= 0:
        return timeline
    keys = [timeline.realization.midi(n.pitch)[0] for n in piece.notes]
    gong = gong_key(piece.mode, keys, timeline.realization)
    lead = next((e for e in timeline.events if e.kind is EventKind.NOTE), None)
    step = ticks(beat)
    drum = PARTS[COUNT_IN_DRUM]
    count = [Event(start_tick=0, length_ticks=step, kind=EventKind.NOTE, cue=piece.id, part=lead.part if lead else "歌",
                   key=gong, velocity=lead.velocity if lead else 80, piece=piece.id)]
    count += [Event(start_tick=step * n, length_ticks=step // 2, kind=EventKind.DRUM, cue=piece.id,
                    part=COUNT_IN_DRUM, key=drum.drum_key, velocity=drum.velocity, piece=piece.id)
              for n in range(1, beats + 1)]
    later = [e._replace(start_tick=e.start_tick + step * (beats + 1)) for e in timeline.events]
    return replace(timeline, events=(*count, *later), notices=(*timeline.notices, COUNT_IN_NOTICE.format(beats=beats)))
