"""Practice files: a piece's Timeline with a count-in before it, so that a singer hears the 宫 and the beat first;
a songbook as one practice file, each piece as its book gives it, at the tempo where it is first heard; "my part
loud, the others soft" (``solo``, and a book's other parts at a level of their own).

The count-in is the 宫 of the piece's mode (1 of the 簡譜, in the octave the piece mostly lies in), sounded by the
part that leads the piece for one beat, then *beats* strokes of the drum a beat apart; the piece follows on the next
beat. It is for practice only and says so: the sources give no count-in.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction

from yuesheng.cuesheet import DEFAULT_SYLLABLE
from yuesheng.music.instruments import PARTS
from yuesheng.music.score import Piece
from yuesheng.outputs.engrave import SE, gong_key, se_string
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
OTHERS_DB = -12.0  # the others' level in a practice file of one's own part (audio --solo, songbook --others)
DOUBLED_NOTICE = "瑟 清中雙彈 (瑟譜 001-2b, 001-12b): each 正律 note on its 中 and 清 strings, an octave apart"


def level(velocity: int, db: float) -> int:
    """*velocity* moved by *db* decibels: FluidSynth follows the SoundFont's default velocity curve, a note of velocity
    v sounding 40·log10(v/127) dB below one of 127 (measured with FluidR3_GM: 64 → −11.9 dB, 32 → −24.0 dB)."""
    return max(1, min(127, round(velocity * 10 ** (db / 40))))


def solo(timeline: Timeline, parts: frozenset[str], *, others_db: float = OTHERS_DB) -> Timeline:
    """*timeline* with *parts* as they are and every other part's sound *others_db* decibels away (a practice
    render: my part loud, the others soft); a notice says so."""
    events = tuple(e if e.part in parts or not e.velocity else e._replace(velocity=level(e.velocity, others_db))
                   for e in timeline.events)
    notice = f"practice: {' '.join(sorted(parts))} as written, every other part at {others_db:+g} dB"
    return replace(timeline, events=events, notices=(*timeline.notices, notice))


def breathe(timeline: Timeline) -> Timeline:
    """*timeline* with an editorial breath in the voice, as the book's ’ and the practice file's: each sung note
    that ends a line of the poem, but not a stanza, held half its length; a notice says it is editorial. A note's
    place in its piece is counted from the first sung note of its 終 (a new 終 where the 終 or the 耦 changes, or a
    whole piece's length after the last began)."""
    pieces = {ref.piece.id: ref.piece for t in timeline.cues for ref in t.cue.pieces}
    ends = {pid: frozenset(n for n, note in enumerate(p.notes) if note.position in _line_ends(p, note.stanza))
            for pid, p in pieces.items()}
    begun: dict[tuple[str, str], tuple[int, str, int]] = {}  # (cue, piece) → (終, 耦, first tick)
    events = []
    for e in timeline.events:
        if e.kind is EventKind.NOTE and e.part == "歌" and e.piece in pieces and e.length_ticks:
            last = begun.get((e.cue, e.piece))
            if last is None or last[:2] != (e.zhong, e.pair) or \
                    e.start_tick >= last[2] + e.length_ticks * len(pieces[e.piece].notes):
                last = begun[e.cue, e.piece] = (e.zhong, e.pair, e.start_tick)
            if round((e.start_tick - last[2]) / e.length_ticks) in ends[e.piece]:
                e = e._replace(length_ticks=e.length_ticks // 2)
        events.append(e)
    return replace(timeline, events=tuple(events), notices=(*timeline.notices, BREATH_NOTICE))


def _line_ends(piece: Piece, stanza: int) -> frozenset[int]:
    return frozenset(next(s.line_ends for s in piece.stanzas if s.number == stanza))


def songbook_timeline(book: Songbook, timeline: Timeline, *, beats: int = 0, breath: bool = False,
                      others: Mapping[str, Songbook] | None = None, others_db: float = OTHERS_DB,
                      doubled: bool = False) -> Timeline:
    """The practice file of *book*: each piece in the book's order as its book gives it (a part's book: that part's
    line; the whole book: the voice, or the 笙 where nothing is sung), at the tempo where it is first heard, with a
    marker at each piece and stanza (``鹿鳴: 第1章``) and a count-in of *beats* before each piece; two beats of
    silence between pieces. With *breath*, an editorial breath: the last note of each line but a stanza's last is
    held half its beat. *others*: the books of the other parts, whose lines of the same pieces sound with it at
    *others_db*. *doubled*: the 瑟 plays 清中雙彈, each 正律 note with its octave above (as its book shows it)."""
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
        lines = [(part, entry, 0.0)] + [(name, found, others_db) for name, other in (others or {}).items()
                                        if name != part and (found := _entry(other, entry.piece.id))]
        alone = Timeline(rite=book.rite, rite_id=book.rite_id, events=tuple(
            e for name, line, db in lines  # the breath is the singer's (or the book's player's), not the others'
            for e in _line(line, name, step, breaths if name == part else frozenset(), db, doubled and name == SE,
                           timeline)),
            realization=timeline.realization)
        counted = with_count_in(alone, entry.piece, beats=beats, beat=beat)
        lead = step * (beats + 1) if beats > 0 else 0
        firsts = {s.note.stanza: n for n, s in reversed(list(enumerate(entry.slots)))}
        events += [Event(start_tick=start + lead + step * n, length_ticks=0, kind=EventKind.MARKER,
                         cue=entry.piece.title, text=f"第{stanza}章") for stanza, n in sorted(firsts.items())]
        events += [e._replace(start_tick=e.start_tick + start) for e in counted.events]
        start = max(e.start_tick + e.length_ticks for e in events) + 2 * step
    notices = ((COUNT_IN_NOTICE.format(beats=beats),) if beats > 0 else ()) + ((BREATH_NOTICE,) if breath else ()) \
        + ((f"practice: the other parts ({' '.join(n for n in others if n != book.part)}) at {others_db:+g} dB",)
           if others else ()) + ((DOUBLED_NOTICE,) if doubled else ())
    return Timeline(rite=book.rite, rite_id=book.rite_id, events=tuple(sorted(events, key=lambda e: e.start_tick)),
                    notices=notices, realization=timeline.realization)


def _breaths(entry: Entry) -> frozenset[int]:
    """The indices of *entry*'s slots that end a line of the poem, but not a stanza (where a breath is taken)."""
    ends = {s.number: set(s.line_ends) for s in entry.piece.stanzas}  # line_ends leaves out the stanza's last
    return frozenset(n for n, slot in enumerate(entry.slots) if slot.note.position in ends[slot.note.stanza])


def _entry(book: Songbook, piece: str) -> Entry | None:
    return next((e for e in book.entries if e.piece.id == piece), None)


def _line(entry: Entry, part: str, step: int, breaths: frozenset[int], db: float, doubled: bool,
          timeline: Timeline) -> list[Event]:
    """*part*'s notes of *entry*, a syllable each *step* ticks, *db* decibels from its own level; a breath shortens
    the notes at *breaths*; *doubled*: a 正律 note of the 瑟 with its 清 string an octave above."""
    velocity = level(PARTS[part].velocity, db)
    out = []
    for n, s in enumerate(entry.slots):
        if s.key is None:
            continue
        keys = [s.key] + ([s.key + 12] if doubled and "·" in se_string(s, timeline.realization, doubled=True) else [])
        out += [Event(start_tick=step * n, length_ticks=step // 2 if n in breaths else step, kind=EventKind.NOTE,
                      cue=entry.piece.id, part=part, key=key, velocity=velocity,
                      text=s.note.lyric.strip() if part == "歌" and key == s.key else "", piece=entry.piece.id,
                      zhong=1) for key in keys]
    return out
