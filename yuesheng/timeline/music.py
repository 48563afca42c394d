"""The music of a cue: its marker and notices, its parts, its pieces note by note, and its repeats until an action.

Music lasts its pieces × 終 × syllables × seconds per syllable; music that runs until an action (樂闋) repeats its
pieces and stops at the end of the phrase (``PHRASE`` notes) in progress when that action starts. Each part sounds
the notes its ``Pattern`` gives (``music.instruments``); the 歌 sings the notes that have words. Measuring
(``BuildState.emit`` false), the same rules count the events instead of making them, and the repeats of held
music are skipped over, so that the cost does not grow with the music.

終 (``zhong``): every note carries the 終 of its cue, counted as the texts count them — an ode and its answering
笙 piece are one 終, a 周南 ode with its 召南 ode one 終 — and counted on through repeats. Readings acted on
here: ``heyue`` (the two odes of a 合 in turn, or together) and ``xian``/``xuan`` (the 鍾 in 合樂).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

from yuesheng.cuesheet import Cue, MusicKind, PieceRef
from yuesheng.cuesheet.zhong import BLOWN, SUNG, programme, zhong_of
from yuesheng.music.instruments import PARTS, PHRASE, Part, Pattern, part_for
from yuesheng.music.score import Note, Piece
from yuesheng.timeline.model import TICKS_PER_SECOND, Event, EventKind, ticks
from yuesheng.timeline.state import DRUM_LENGTH, FREE_MUSIC, BuildState, Setting
from yuesheng.timeline.tables import tables

Group = list[tuple[PieceRef, tuple[Part, ...]]]  # pieces sounding together, each on its parts


class _Grid:
    """The ticks of notes *step* seconds apart from *start* (≥ 0): ``ticks(start + n * step)`` in integers."""

    __slots__ = ("base", "step", "scale")

    def __init__(self, start: Fraction, step: Fraction) -> None:
        at, every = start * TICKS_PER_SECOND, step * TICKS_PER_SECOND
        common = math.lcm(at.denominator, every.denominator)
        # ticks(x) = floor(x·960 + 1/2) = (2·N + D) // (2·D) for x·960 = N/D
        self.base = 2 * at.numerator * (common // at.denominator) + common
        self.step = 2 * every.numerator * (common // every.denominator)
        self.scale = 2 * common

    def ticks(self, notes: tuple[int, ...], *, half: bool = False) -> list[int]:
        """The ticks of *notes* (indices), or of half a step after each."""
        base, step, scale = self.base + (self.step // 2 if half else 0), self.step, self.scale
        return [(base + n * step) // scale for n in notes]


def announce(state: BuildState, cue: Cue, start: Fraction, *, rite: str) -> None:
    """The marker of a music cue, and the notices its pieces call for (lost pieces, each cited to rite *rite*'s own
    text where it says so; music without a programme)."""
    title = " ".join(f"{p.piece.title}" + (f"×{p.zhong}" if p.zhong > 1 else "") for p in cue.pieces)
    state.add(EventKind.MARKER, start, Fraction(0), cue.id,
              text=f"{cue.music.value if cue.music else ''} {title}".strip())
    texts = tables().notices
    for ref in cue.pieces:
        if ref.piece.realization:
            state.notice(texts["lost"].format(title=ref.piece.title, id=ref.piece.id, cite=_lost_cite(ref.piece, rite),
                                              label=ref.piece.realization.label, rule=ref.piece.realization.rule))
    if cue.music in FREE_MUSIC and cue.music is not None and cue.pieces:
        until = texts["free_until"].format(action=cue.end_at) if cue.end_at else ""
        state.notice(texts["free"].format(kind=cue.music.value, cue=cue.id, page=cue.cite.page, until=until,
                                          programme=programme(cue)))


def _lost_cite(piece: Piece, rite: str) -> str:
    """Where rite *rite*'s text says *piece* is lost; else where another rite's does, said so."""
    if piece.lost is None:
        return ""
    own = piece.lost.in_rite(rite)
    return own.cite if own else tables().notices["lost_elsewhere"].format(cite=piece.lost.cite)


def play(setting: Setting, state: BuildState, cue: Cue, start: Fraction, stop: Fraction | None) -> Fraction:
    """Play (or count) the music of *cue* from *start*, repeated until *stop* if given; return when it ends."""
    segments = _segments(setting, state, cue)
    if cue.music is MusicKind.JINZOU:
        state.notice(tables().notices["jinzou"])
        start = _onset(setting, state, cue, start)
    if not segments:
        return stop if stop is not None else start
    t, passed = start, 0
    while True:
        began, counted, marked = t, state.counts.get(cue.id, 0), state.marks
        for zhong, group in segments:
            t, stopped = _play_group(setting, state, cue, group, t, passed + zhong, stop)
            if stopped:
                return t
        passed += segments[-1][0]
        if stop is None or t >= stop:
            return t
        if t == began:  # pieces without notes: silence until the action
            return stop
        if not state.emit:
            t = _skip_repeats(state, cue.id, t, t - began, state.counts.get(cue.id, 0) - counted,
                              state.marks - marked, stop)


def _skip_repeats(state: BuildState, cue_id: str, t: Fraction, length: Fraction, events: int, marks: int,
                  stop: Fraction) -> Fraction:
    """Measuring: jump over the repeats of held music that end before *stop*; the time after them."""
    repeats = math.ceil((stop - t) / length) - 1
    state.count(cue_id, repeats * events)
    state.marks += repeats * marks
    return t + repeats * length


def _onset(setting: Setting, state: BuildState, cue: Cue, start: Fraction) -> Fraction:
    """The 金奏's onset drums the cue has (鼗 shaken, 朔鼙, then 應鼙), a second each; when the bells begin."""
    names = [setting.sheet.instruments[i].name for i in cue.instruments]
    t = start
    for name, strokes in tables().onset:
        part = part_for(name)
        if part is None or not any(name in n for n in names):
            continue
        for k in range(strokes):
            state.drum(cue.id, part, t + Fraction(k, strokes), accent=k == 0)
        t += 1
    return t


def _only(parts: tuple[Part, ...], names: tuple[str, ...]) -> tuple[Part, ...]:
    return tuple(p for p in parts if p.name in names)


def _segments(setting: Setting, state: BuildState, cue: Cue) -> list[tuple[int, Group]]:
    """The music once through, as groups played one after another, each with the 終 (1-based) it belongs
    to; the pieces of a group sound together. A 終 of two pieces (間; a 周南 ode with its 召南 ode) is
    two groups in turn, or one group when reading heyue sounds the 合 pair together (李如圭)."""
    parts = cue_parts(setting, cue)
    together = setting.readings.get("heyue") == "li-rugui"
    zhongs = zhong_of(cue)
    out: list[tuple[int, Group]] = []
    for n, zhong in enumerate(zhongs, 1):
        if zhong.he and together:
            sung = _only(parts, ("歌", "瑟"))
            out.append((n, [(zhong.pieces[0], sung), (zhong.pieces[1], tuple(p for p in parts if p not in sung))]))
        else:
            out += [(n, [(ref, _role_parts(ref, parts))]) for ref in zhong.pieces]
    if any(z.he for z in zhongs):
        reading = "li-rugui" if together else "zheng" if "heyue" in setting.sheet.readings else "fixed"
        state.notice(tables().notices["heyue"][reading])
    return out


def _role_parts(ref: PieceRef, parts: tuple[Part, ...]) -> tuple[Part, ...]:
    """The parts that sound *ref*: an ode sung (歌: voices and 瑟), a 笙 piece (笙, 和, pipes), or all."""
    if ref.part == SUNG:
        return _only(parts, ("歌", "瑟")) or (PARTS["歌"], PARTS["瑟"])
    if ref.part == BLOWN:
        return _only(parts, ("笙", "和", "管")) or (PARTS["笙"], PARTS["和"])
    return parts


def cue_parts(setting: Setting, cue: Cue) -> tuple[Part, ...]:
    """The parts of a music cue: its instruments' (with the 歌 where the music is sung), else its kind's defaults."""
    found = [p for i in cue.instruments if (p := part_for(setting.sheet.instruments[i].name))]
    sung = cue.music in tables().sung
    names = list(dict.fromkeys((["歌"] if sung else []) + [p.name for p in found]))
    if not found:
        names = list(tables().default_parts.get(cue.music, ()) if cue.music else ())
    if cue.music is MusicKind.HEYUE and "zhong-qing" in (setting.readings.get("xian"), setting.readings.get("xuan")):
        names.insert(names.index("磬") if "磬" in names else len(names), "鐘")  # 堂下鍾磬合奏 (4-25b; 5-16a)
    return tuple(PARTS[n] for n in dict.fromkeys(names))


def _play_group(setting: Setting, state: BuildState, cue: Cue, group: Group, start: Fraction, zhong: int,
                stop: Fraction | None) -> tuple[Fraction, bool]:
    """Play the pieces of *group* together, once each, as 終 *zhong*; stop at a phrase end after *stop*."""
    end = start
    for ref, parts in group:
        t, stopped = play_piece(setting, state, cue, ref, parts, start, zhong, stop)
        if stopped:
            return t, True
        end = max(end, t)
    return end, False


def play_piece(setting: Setting, state: BuildState, cue: Cue, ref: PieceRef, parts: tuple[Part, ...],
               start: Fraction, zhong: int, stop: Fraction | None) -> tuple[Fraction, bool]:
    """One 終 of a piece; returns its end and whether it was cut at a phrase end (樂闋)."""
    step = ref.syllable or setting.syllable
    jinzou = cue.music is MusicKind.JINZOU
    piece = ref.piece
    played = len(piece.notes)
    if stop is not None:  # the first phrase that would begin at or after *stop* is not played
        played = min(played, -(-max(0, math.ceil((stop - start) / step)) // PHRASE) * PHRASE)
    end = start + played * step
    if not state.emit:
        state.count(cue.id, sum(_sounded(state, piece, part, played, jinzou) for part in parts))
        state.marks += -(-played // PHRASE) if stop is not None else 0
    else:
        if stop is not None:
            state.phrases.setdefault(cue.id, []).extend(start + n * step for n in range(0, played, PHRASE))
        _sound(state, cue.id, piece, _keys(setting, state, piece), parts, _Grid(start, step), played, ticks(step),
               zhong, jinzou)
    return end, stop is not None and (played < len(piece.notes) or end >= stop)


def _keys(setting: Setting, state: BuildState, piece: Piece) -> list[tuple[int, float]]:
    """MIDI key and cents of each note of *piece*, realized once per build."""
    if piece.id not in state.realized:
        state.realized[piece.id] = [setting.real.midi(note.pitch) for note in piece.notes]
    return state.realized[piece.id]


def _sound(state: BuildState, cue_id: str, piece: Piece, keys: list[tuple[int, float]], parts: tuple[Part, ...],
           grid: _Grid, played: int, length: int, zhong: int, jinzou: bool) -> None:
    """The events of the first *played* notes of *piece* on *parts*, each part on its pattern (part by part: the
    notes of one call all have distinct sort keys, so the order they are made in leaves the Timeline unchanged)."""
    notes, drum_ticks, append, pid = piece.notes, ticks(DRUM_LENGTH), state.events.append, piece.id
    for part in parts:
        pattern, name, velocity = part.pattern, part.name, part.velocity
        indices = _indices(pattern, len(notes), played, jinzou)
        at = grid.ticks(indices, half=pattern.late(jinzou=jinzou))
        if part.is_drum:
            for tick in at:
                append(Event(start_tick=tick, length_ticks=drum_ticks, kind=EventKind.DRUM, cue=cue_id, part=name,
                             key=part.drum_key, velocity=velocity, piece=pid, zhong=zhong))
            continue
        shift, sung = 12 * part.octave, name == "歌"
        for n, tick in zip(indices, at, strict=True):
            lyric = notes[n].lyric.strip() if sung else ""
            if sung and not lyric:
                continue  # a lost piece's realization has no words to sing: the instruments play it
            key, cents = keys[n]
            append(Event(start_tick=tick, length_ticks=length, kind=EventKind.NOTE, cue=cue_id, part=name,
                         key=key + shift, cents=cents, velocity=velocity, text=lyric, piece=pid, zhong=zhong))


@functools.lru_cache(maxsize=1024)
def _indices(pattern: Pattern, total: int, played: int, jinzou: bool) -> tuple[int, ...]:
    """The notes among the first *played* of a piece of *total* that *pattern* sounds (``Pattern.sounds``)."""
    return tuple(n for n in range(played) if pattern.sounds(n, total, jinzou=jinzou))


def _sounded(state: BuildState, piece: Piece, part: Part, played: int, jinzou: bool) -> int:
    """How many events ``_sound`` makes for *part* over the first *played* notes of *piece*."""
    if part.name != "歌":
        return part.pattern.count(played, len(piece.notes), jinzou=jinzou)
    if played < len(piece.notes):  # cut short: once per held cue
        return _sung(piece.notes[:played])
    if piece.id not in state.sung:
        state.sung[piece.id] = _sung(piece.notes)
    return state.sung[piece.id]


def _sung(notes: tuple[Note, ...]) -> int:
    """The notes with words to sing."""
    return sum(1 for note in notes if note.lyric.strip())
