"""Timeline → songbook: every piece a rite sounds, in the order first heard, with the cues where it sounds.

The songbook reads the Timeline, never the cue sheet: the order is that of the
first note of each piece, the cues are those whose events sound it, and the 終
counted are those the timeline played. Each piece is headed by its cues (id,
music and section, 終, performers, the parts that sound, the page). With a
part (歌 瑟 笙 和 鐘 鑮 磬 管) the book holds only the pieces that part plays, and
each as that part plays it in its first cue: the 鐘 on every note of 金奏, the
鑮 on the first of each phrase, the 磬 closing each phrase, an octave lower
where the part sounds an octave lower; a rest where it is silent.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path

from yuesheng.cuesheet import MusicKind
from yuesheng.errors import UnknownNameError
from yuesheng.music.instruments import PARTS, find_part
from yuesheng.music.lulu import Tuning
from yuesheng.music.score import Piece
from yuesheng.outputs.engrave import (
    SE,
    SE_DOUBLING,
    SE_TABLE,
    Markup,
    Notation,
    Setting,
    Slot,
    book_source,
    cents_legend,
    engrave,
    gong_key,
    jianpu_cue,
    jianpu_digit,
    lily_string,
    measure_pages,
    piece_bookpart,
    piece_slots,
)
from yuesheng.outputs.report import says_que
from yuesheng.text import suggest
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Event, EventKind, Timeline

NOTICE_SIZE = -1.5  # LilyPond font-size steps of the contents page's notices
PITCHED_PARTS = tuple(name for name, p in PARTS.items() if not p.is_drum and name not in ("獲者", "負侯者"))


@dataclass(frozen=True, slots=True)
class Hearing:
    """One cue in which a piece sounds."""

    cue: str
    what: str  # the music and its section, e.g. 升歌 (section 升歌)
    music: str  # the kind of music, e.g. 金奏, 合樂
    zhong: str  # e.g. "1 終", "5 終 for each of 3 耦", "repeated until …"
    performers: str
    parts: str
    cite: str


@dataclass(frozen=True, slots=True)
class Entry:
    """A piece of the songbook: where it is heard and the line to engrave."""

    piece: Piece
    hearings: tuple[Hearing, ...]
    slots: tuple[Slot, ...]
    syllable: Fraction | None = None  # seconds a syllable lasts where first heard (None: not sounded)
    cue_line: str = ""  # a part's book: what the other parts sound just before this part comes in
    cue_digits: tuple[tuple[str, int], ...] = ()  # its notes as 簡譜 digits with their octave dots (jianpu_digit)


@dataclass(frozen=True)
class Songbook:
    """The pieces of a rite in the order first heard, for one part or for all."""

    rite: str
    rite_id: str
    part: str
    entries: tuple[Entry, ...]
    notices: tuple[str, ...]
    variants: tuple[str, ...]
    readings: tuple[str, ...]


def part_name(name: str) -> str:
    """A pitched part by name (歌 瑟 笙 和 鐘 鑮 磬 管, or an instrument such as 笙鍾 or 頌磬)."""
    part = find_part(name)
    if part is None or part.name not in PITCHED_PARTS:
        raise UnknownNameError("part", name, suggest(name, list(PITCHED_PARTS)) or PITCHED_PARTS)
    return part.name


def _sounding(timeline: Timeline) -> dict[tuple[str, str], list[Event]]:
    """The note and drum events of each (cue, piece)."""
    found: dict[tuple[str, str], list[Event]] = defaultdict(list)
    for e in timeline.events:
        if e.piece and e.kind in (EventKind.NOTE, EventKind.DRUM):
            found[(e.cue, e.piece)].append(e)
    return found


def _zhong(timeline: Timeline, timing: CueTiming, events: list[Event], piece: Piece) -> str:
    cue = timing.cue
    ref = next((r for r in cue.pieces if r.piece.id == piece.id), None)
    pairs = {e.pair for e in events if e.pair}
    most = max((e.zhong for e in events), default=ref.zhong if ref else 1)
    if pairs:
        return f"{most} 終 for each of {len(pairs)} 耦"
    if cue.end_at:
        until = next((t.cue for t in timeline.cues if t.cue.id == cue.end_at), None)
        action = until.action if until else ""
        words = f"{action[:14]}…" if len(action) > 15 else action
        ending = "樂闋" if says_que(cue, until) else "the music ends"
        return f"repeated until {words} ({cue.end_at}): {ending}"
    return f"{ref.zhong if ref else most} 終"


def _hearing(timeline: Timeline, timing: CueTiming, events: list[Event], piece: Piece) -> Hearing:
    cue = timing.cue
    names = timeline.names
    parts = " ".join(sorted({e.part for e in events if e.part},
                            key=lambda p: list(PARTS).index(p) if p in PARTS else 99))
    music = cue.music.value if cue.music else ""
    return Hearing(cue.id, f"{music} (section {cue.section})" if cue.section and cue.section != music else music, music,
                   _zhong(timeline, timing, events, piece), "、".join(names.get(p, p) for p in cue.performers), parts,
                   f"{cue.cite.page} {cue.cite.quote}")


def _syllable(events: list[Event]) -> Fraction | None:
    """The seconds one syllable lasts in *events* (the step between a piece's notes), None if none sounds."""
    ticks = next((e.length_ticks for e in events if e.kind is EventKind.NOTE and e.length_ticks), 0)
    return Fraction(ticks, TICKS_PER_SECOND) if ticks else None


def _part_slots(piece: Piece, events: list[Event], part: str) -> tuple[Slot, ...]:
    """The part's line in one cue: its first 終 of *piece*, a slot per syllable, None where it is silent."""
    notes = piece.notes
    start = min(e.start_tick for e in events)
    step = next((e.length_ticks for e in events if e.kind is EventKind.NOTE and e.length_ticks), 0)
    keys: dict[int, int] = {}
    for e in events:
        if e.part == part and e.kind is EventKind.NOTE and e.key is not None and step:
            index = (e.start_tick - start) // step
            if 0 <= index < len(notes):
                keys.setdefault(index, e.key)
    return tuple(Slot(n, keys.get(i)) for i, n in enumerate(notes))


def songbook(timeline: Timeline, *, part: str = "", labels: Mapping[str, str] | None = None) -> Songbook:
    """The songbook of *timeline*: every piece in the order first heard; only those *part* plays if given.
    *labels* name the variants and readings as the cue sheet does (an id without a label is shown as it is)."""
    part = part_name(part) if part else ""
    labels = labels or {}
    sounding = _sounding(timeline)
    first: dict[str, int] = {}
    pieces: dict[str, Piece] = {}
    heard: dict[str, list[Hearing]] = defaultdict(list)
    lines: dict[str, tuple[Slot, ...]] = {}
    syllables: dict[str, Fraction | None] = {}
    entering: dict[str, int] = {}
    for timing in timeline.cues:
        for ref in timing.cue.pieces:
            piece = ref.piece
            events = sounding.get((timing.cue.id, piece.id), [])
            if piece.playable and not events:
                continue  # a cue that names the piece but does not sound it (a part not played, a variant)
            if part and not any(e.part == part for e in events):
                continue
            pieces[piece.id] = piece
            heard_at = min((e.start_tick for e in events), default=timing.start_tick)
            first[piece.id] = min(first.get(piece.id, heard_at), heard_at)
            if timing.cue.id not in {h.cue for h in heard[piece.id]}:
                heard[piece.id].append(_hearing(timeline, timing, events, piece))
            if heard_at == first[piece.id]:
                syllables[piece.id] = _syllable(events)
            if part and piece.id not in lines:
                lines[piece.id] = _part_slots(piece, events, part)
                entering[piece.id] = min(e.start_tick for e in events if e.part == part)
    order = sorted(pieces, key=lambda pid: (first[pid], pid))
    if part and not order:
        raise UnknownNameError(f"part playing in {timeline.rite}", part, playing_parts(timeline))
    entries = tuple(Entry(pieces[pid], tuple(heard[pid]),
                          lines.get(pid) or tuple(piece_slots(pieces[pid], timeline.realization)), syllables.get(pid),
                          *(_cue(timeline, part, entering[pid]) if pid in entering else ("", ())))
                    for pid in order)
    return Songbook(timeline.rite, timeline.rite_id, part, entries, _book_notices(timeline, part, entries),
                    tuple(labels.get(v, v) for v in sorted(timeline.variants)),
                    tuple(f"{labels[k].split(' (')[0]} — {v}" if k in labels else f"{k}={v}"  # the name, not its gloss
                          for k, v in sorted(timeline.readings.items())))


def playing_parts(timeline: Timeline) -> list[str]:
    """The pitched parts that play a piece in *timeline*, in the instrument table's order."""
    found = {e.part for e in timeline.events if e.kind is EventKind.NOTE and e.piece}
    return [name for name in PITCHED_PARTS if name in found]


def _all_pieces(timeline: Timeline) -> dict[str, Piece]:
    return {ref.piece.id: ref.piece for timing in timeline.cues for ref in timing.cue.pieces}


def _cue(timeline: Timeline, part: str, start: int) -> tuple[str, tuple[tuple[str, int], ...]]:
    """What a player hears just before *part* comes in at *start*: the other parts and the end of their piece,
    its last line (句) in words and 律 (as an orchestral part's cue), and those notes as 簡譜 digits in the mode of
    that piece; ('', ()) if nothing sounds before, or if the part played in that music itself (it goes straight
    on)."""
    before = next((e for e in reversed(timeline.events) if e.start_tick < start and e.kind is EventKind.NOTE
                   and e.piece), None)
    if before is None:
        return "", ()
    playing = {e.part for e in timeline.events if e.kind is EventKind.NOTE and e.cue == before.cue
               and e.piece == before.piece}
    if part in playing:
        return "", ()
    piece = _all_pieces(timeline)[before.piece]
    parts = sorted(playing, key=lambda p: PITCHED_PARTS.index(p) if p in PITCHED_PARTS else 99)
    stanza = piece.stanzas[-1]
    last = stanza.notes[-(stanza.line_lengths[-1] if stanza.line_lengths else 4):]
    words = "".join(n.lyric.strip() for n in last)
    lus = " ".join(n.pitch.name for n in last)
    ending = f"「{words}」 ({lus})" if words else f"on {lus}"
    real = timeline.realization
    gong = gong_key(piece.mode, [real.midi(n.pitch)[0] for n in piece.notes], real)
    digits = tuple(jianpu_digit(real.midi(n.pitch)[0], gong) for n in last)
    return f"Cue: before you come in, {' '.join(parts)} — {piece.title}, ending {ending}", digits


def _book_notices(timeline: Timeline, part: str, entries: Sequence[Entry]) -> tuple[str, ...]:
    """The rite's notices that concern the book: a lost piece's only if the book holds it; in a part's book, the
    notices of a kind of music only if the part plays in it (金奏, 合樂, 無算樂 …)."""
    held = {e.piece.id for e in entries}
    others = [p for p in _all_pieces(timeline).values() if p.id not in held]
    kinds = {h.music for e in entries for h in e.hearings}
    music = {m.value for m in MusicKind}
    return tuple(n for n in timeline.notices if not any(_says_lost(n, p) for p in others)
                 and (not part or n.split(" ")[0] not in music or n.split(" ")[0] in kinds))


def _heading(h: Hearing) -> str:
    who = f" — {h.performers}" if h.performers else ""
    parts = f" — parts {h.parts}" if h.parts else ""
    return f"{h.what}, {h.zhong}{who}{parts} ({h.cite})"


def facing_blanks(pages: Sequence[tuple[int, int]], *, start: int = 1) -> frozenset[int]:
    """The bookparts (indices into *pages*: the pages each takes and the pages its transmitted piece takes, the
    first bookpart on page *start*) before which a blank page goes, so that a piece of an even number of pages
    starts on a left-hand (even) page: 2 pages lie open together, 4 need one turn. Page 1 is a right-hand page.
    (The lost pieces set on after a piece are a stanza each, kept on one page.)

    >>> sorted(facing_blanks([(1, 1), (2, 2), (1, 1), (2, 1), (2, 2)], start=2))  # 2, [3] 4-5, 6, 7-8, [9] 10-11
    [1, 4]
    """
    blanks, page = set(), start
    for index, (count, piece) in enumerate(pages):
        if piece % 2 == 0 and page % 2 == 1:
            blanks.add(index)
            page += 1
        page += count
    return frozenset(blanks)


def engrave_songbook(book: Songbook, setting: Setting, output: str | Path, *, font: str) -> list[Path]:
    """Engrave *book* to *output* with no page turn inside a piece that fits on two facing pages: a first run
    measures the pages each piece takes, the second adds a blank page where one is needed (a .ly is written
    without the first run, so without those pages)."""
    if Path(output).suffix.lower() == ".ly":
        return engrave(songbook_source(book, setting, font=font), output)
    laid = measure_pages(songbook_source(book, setting, font=font, log_pages=True))
    front, *counts = laid.bookparts
    starts = [1 + front + sum(counts[:n]) for n in range(len(counts))]
    # the page of the label at the piece's last note, not of what is set on after it: a piece that ends on its first
    # page takes one, however many the lost pieces after it need (one without notes has no label: all the bookpart)
    pieces = [(count, laid.labels[_end_label(n)] - first + 1 if _end_label(n) in laid.labels else count)
              for n, (count, first) in enumerate(zip(counts, starts, strict=True))]
    # the same source as the first run (its page logger included, which draws nothing) but for the blank pages, so
    # that LilyPond lays out every piece as it was measured
    return engrave(songbook_source(book, setting, font=font, blanks=facing_blanks(pieces, start=1 + front),
                                   log_pages=True), output)


def _end_label(group: int) -> str:
    """The label at the last note of a bookpart's first piece (before the lost pieces set on after it)."""
    return f"yuesheng-end-{group}"


def _blank_page(before: Entry) -> str:
    note = f"This page is left blank so that {before.piece.title} lies open on facing pages."
    return f"\\bookpart {{ \\markup \\fill-line {{ \\italic {lily_string(note)} }} }}"


def songbook_source(book: Songbook, setting: Setting, *, font: str, blanks: frozenset[int] = frozenset(),
                    log_pages: bool = False) -> str:
    """The LilyPond file of *book*: a contents page with the notices, then one part per piece; a blank page
    before each piece in *blanks* (indices into its entries: ``facing_blanks``)."""
    setting = replace(setting, part=book.part)
    front = [
        f"\\markup \\fill-line {{ \\fontsize #6 \\bold {lily_string(book.rite)} }}",
        f"\\markup \\fill-line {{ {lily_string('songbook' + (f' — part {book.part}' if book.part else ''))} }}",
        f"\\markup \\wordwrap-string {lily_string(_programme(book, setting))}",
        "\\markup \\vspace #1",
        "\\markuplist \\table-of-contents",
    ]
    if setting.realization.tuning is Tuning.SANFEN:
        front.append(cents_legend([n.pitch.lu.index for e in book.entries for n in e.piece.notes], setting.realization))
    front += _se_notes(setting) if book.part == SE else []
    front += _notices(book)
    parts: list[str] = []
    for number, group in enumerate(_groups(book.entries)):
        if number in blanks:
            parts.append(_blank_page(group[0]))
        pieces = [_piece(entry, setting, run_in=n > 0, end_label=_end_label(number) if n == 0 else "")
                  for n, entry in enumerate(group)]
        parts.append("\n".join(pieces) + "\n}")
    return book_source(parts, font=font, front=front, log_pages=log_pages)


def _is_lost(entry: Entry) -> bool:
    return entry.piece.realization is not None or not entry.piece.playable


def _groups(entries: Sequence[Entry]) -> list[list[Entry]]:
    """The pieces as bookparts: each transmitted piece begins a page, and the lost pieces after it (a modern
    realization's few lines, or only a notice) follow on its pages rather than taking a page each."""
    groups: list[list[Entry]] = []
    for entry in entries:
        if groups and _is_lost(entry):
            groups[-1].append(entry)
        else:
            groups.append([entry])
    return groups


def _piece(entry: Entry, setting: Setting, *, run_in: bool, end_label: str = "") -> str:
    """One piece of the book: its cues, then its music (as a bookpart's opening, or set on after the one before),
    with *end_label* at its last note."""
    cue = jianpu_cue(entry.cue_line, entry.cue_digits) if setting.notation is Notation.JIANPU else entry.cue_line
    before: list[str | Markup] = [_heading(h) for h in entry.hearings]
    before += [cue] if entry.cue_line else []
    if not entry.piece.playable:
        citation = entry.piece.lost.citation() if entry.piece.lost else ": "
        before.append(f"No notation survives ({citation}).")
    text = piece_bookpart(entry.piece, replace(setting, syllable=entry.syllable), slots=entry.slots, before=before,
                          toc=True, legend=False, run_in=run_in, rule=False, end_label=end_label)
    return text if run_in else text.removesuffix("\n}")


def _says_lost(notice: str, piece: Piece) -> bool:
    """Whether *notice* is the timeline's notice that *piece* is lost (data/music.json's ``lost``)."""
    return notice.startswith(f"{piece.title} ({piece.id}) is lost (")


def _lost_here(piece: Piece, rite: str) -> str:
    """The passage that says *piece* is lost, the rite's own where its text says so: '儀禮集釋 4-22b: 南陔…'."""
    lost = piece.lost.in_rite(rite) or piece.lost if piece.lost else None
    return lost.citation() if lost else ""


def _notices(book: Songbook) -> list[str]:
    """The contents page's notices: the lost pieces together (one paragraph for each rule, then a line a piece),
    then the rite's other notices."""
    lost = [e.piece for e in book.entries if e.piece.realization and e.piece.lost]
    lines = []
    for rule in dict.fromkeys(p.realization.rule for p in lost if p.realization):
        pieces = [p for p in lost if p.realization and p.realization.rule == rule]
        paragraph = (f"These {len(pieces)} pieces are lost, and what sounds for each is a modern realization: {rule}"
                     if len(pieces) > 1 else f"This piece is lost, and what sounds is a modern realization: {rule}")
        lines.append(f"\\wordwrap-string {lily_string('• ' + paragraph)}")
        lines += [f"\\concat {{ \\hspace #4 {lily_string(f'{p.title} — {_lost_here(p, book.rite_id)}')} }}"
                  for p in pieces]
    lines += [f"\\wordwrap-string {lily_string('• ' + n)}" for n in book.notices
              if not any(_says_lost(n, p) for p in lost)]
    # in a smaller size, so that the notices stay on the contents page rather than spill onto a page of their own
    return [f"\\markup \\column {{ \\vspace #1 \\bold {lily_string('Notices')} }}",
            *(f"\\markup \\fontsize #{NOTICE_SIZE} {line}" for line in lines)] if lines else []


def _se_notes(setting: Setting) -> list[str]:
    """The 瑟 book's account of its 弦 row: the 瑟譜's string table, cited, and 清中雙彈 where chosen."""
    notes = [f"弦: the strings the 瑟 plucks, numbered as the 瑟譜's table of the 二十五弦 瑟 numbers them (瑟弦律, "
             f"{SE_TABLE}): 1 黄鍾 中聲 … 12 應鍾 中 (the right hand), 13 黄鍾清 … 24 應鍾清 (the left hand); the "
             "middle string, 極清, is neither used nor counted. The 瑟譜 names its modes 清宫 and 清商 because the "
             "瑟 has these 清 strings (以瑟有清弦清調, 002-2a)."]
    if setting.doubled:
        notes.append(f"清中雙彈 ({SE_DOUBLING}: 二均之聲以清中雙彈; 惟正律清中弦雙彈): each 正律 note is plucked on "
                     "its 中 and 清 strings together (8·20: 林鍾 中 and 清), as the staff shows; the 四清 (黄清 大清 "
                     "太清 夾清) by the right hand alone on their own string.")
    return [f"\\markup \\fontsize #{NOTICE_SIZE} \\wordwrap-string {lily_string('• ' + n)}" for n in notes]


def _programme(book: Songbook, setting: Setting) -> str:
    tuning = "三分損益" if setting.realization.tuning is Tuning.SANFEN else "equal temperament"
    return (f"{len(book.entries)} pieces in the order first heard. Variants: {', '.join(book.variants) or 'none'}; "
            f"readings: {'; '.join(book.readings) or 'none'}; 黄鍾 = {setting.huangzhong_name}, {tuning}. "
            f"One crotchet per syllable (the sources give no durations), at the sequencer's tempo: a syllable "
            f"every {_seconds(book)} s." + (" Breath marks (’) at the ends of the lines are editorial: the sources "
                                             "give none, and the sequencer sings on without a pause."
                                             if setting.breath else ""))


def _seconds(book: Songbook) -> str:
    """The syllable's seconds in *book*, e.g. '1.5' (several, if cues differ: '1.2, 1.5')."""
    found = sorted({e.syllable for e in book.entries if e.syllable})
    return ", ".join(f"{float(s):g}" for s in found) or "—"
