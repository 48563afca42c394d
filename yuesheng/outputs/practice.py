"""Practice files: a piece's Timeline with a count-in before it, so that a singer hears the 宫 and the beat first;
a songbook as one practice file, each piece as its book gives it, at the tempo where it is first heard.

The count-in is the 宫 of the piece's mode (1 of the 簡譜, in the octave the piece mostly lies in), sounded by the
part that leads the piece for one beat, then *beats* strokes of the drum a beat apart; the piece follows on the next
beat. It is for practice only and says so: the sources give no count-in.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

from yuesheng.cuesheet import DEFAULT_SYLLABLE
from yuesheng.music.instruments import PARTS
from yuesheng.music.score import Piece
from yuesheng.outputs.engrave import gong_key
from yuesheng.outputs.songbook import Entry, Songbook
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


BREATH_NOTICE = "breaths (editorial; the sources give none): the last note of each line but a stanza's last half held"


def songbook_timeline(book: Songbook, timeline: Timeline, *, beats: int = 0, breath: bool = False) -> Timeline:
    """The practice file of *book*: each piece in the book's order as its book gives it (a part's book: that part's
    line; the whole book: the voice, or the 笙 where nothing is sung), at the tempo where it is first heard, with a
    marker at each piece and stanza (``鹿鳴: 第1章``) and a count-in of *beats* before each piece; two beats of
    silence between pieces. With *breath*, an editorial breath: the last note of each line but a stanza's last is
    held half its beat."""
    events: list[Event] = []
    start = 0
    for entry in book.entries:
        slots = [s for s in entry.slots if s.key is not None]
        if not slots:
            continue
        beat = entry.syllable or DEFAULT_SYLLABLE
        step = ticks(beat)
        part = book.part or ("歌" if any(s.note.lyric.strip() for s in slots) else "笙")
        breaths = _breaths(entry) if breath else frozenset()
        alone = Timeline(rite=book.rite, rite_id=book.rite_id, events=tuple(
            Event(start_tick=step * n, length_ticks=step // 2 if n in breaths else step, kind=EventKind.NOTE,
                  cue=entry.piece.id, part=part, key=s.key, velocity=PARTS[part].velocity,
                  text=s.note.lyric.strip() if part == "歌" else "",
                  piece=entry.piece.id, zhong=1)
            for n, s in enumerate(entry.slots) if s.key is not None), realization=timeline.realization)
        counted = with_count_in(alone, entry.piece, beats=beats, beat=beat)
        lead = step * (beats + 1) if beats > 0 else 0
        firsts = {s.note.stanza: n for n, s in reversed(list(enumerate(entry.slots)))}
        events += [Event(start_tick=start + lead + step * n, length_ticks=0, kind=EventKind.MARKER,
                         cue=entry.piece.title, text=f"第{stanza}章") for stanza, n in sorted(firsts.items())]
        events += [e._replace(start_tick=e.start_tick + start) for e in counted.events]
        start = max(e.start_tick + e.length_ticks for e in events) + 2 * step
    notices = ((COUNT_IN_NOTICE.format(beats=beats),) if beats > 0 else ()) + ((BREATH_NOTICE,) if breath else ())
    return Timeline(rite=book.rite, rite_id=book.rite_id, events=tuple(sorted(events, key=lambda e: e.start_tick)),
                    notices=notices, realization=timeline.realization)


def _breaths(entry: Entry) -> frozenset[int]:
    """The indices of *entry*'s slots that end a line of the poem, but not a stanza (where a breath is taken)."""
    ends = {s.number: set(s.line_ends) for s in entry.piece.stanzas}  # line_ends leaves out the stanza's last
    return frozenset(n for n, slot in enumerate(entry.slots) if slot.note.position in ends[slot.note.stanza])
