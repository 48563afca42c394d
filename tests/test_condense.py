"""Condensing a Timeline: silences shortened, sound moved rigidly, cues squeezed in order."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from yuesheng import build, load
from yuesheng.music.lulu import Realization
from yuesheng.outputs.condense import Cut, condense, silences, sounds
from yuesheng.timeline import Event, EventKind, Timeline, ticks

DATA = Path(__file__).parent / "data"
S = ticks(Fraction(1))


def _note(at: float, length: float = 1) -> Event:
    return Event(start_tick=int(at * S), length_ticks=int(length * S), kind=EventKind.NOTE, cue="m", part="瑟", key=60,
                 velocity=90)


def _timeline(*events: Event) -> Timeline:
    return Timeline(rite="t", rite_id="t", events=tuple(sorted(events, key=lambda e: e.sort_key)),
                    realization=Realization())


def test_silences_run_from_the_start_between_the_sounds_to_the_end():
    action = Event(start_tick=0, length_ticks=100 * S, kind=EventKind.ACTION, cue="a", text="拜")
    timeline = _timeline(action, _note(10), _note(10.5), _note(40))
    assert silences(timeline) == [(0, 10 * S), (int(11.5 * S), 40 * S), (41 * S, 100 * S)]
    assert silences(timeline, ring_ticks=2 * S) == [(0, 10 * S), (int(13.5 * S), 40 * S), (43 * S, 100 * S)]


def test_condense_shortens_long_silences_and_moves_sound_rigidly():
    action = Event(start_tick=0, length_ticks=100 * S, kind=EventKind.ACTION, cue="a", text="拜")
    marker = Event(start_tick=int(25.75 * S), length_ticks=0, kind=EventKind.MARKER, cue="mk", text="in the silence")
    timeline = _timeline(action, marker, _note(10), _note(10.5), _note(40))
    condensed = condense(timeline, gap_ticks=3 * S)
    assert condensed.cuts == (Cut(0, 10 * S, 7 * S), Cut(int(11.5 * S), int(28.5 * S), int(25.5 * S)),
                              Cut(41 * S, 59 * S, 56 * S))
    notes = [e for e in condensed.timeline.events if sounds(e)]
    # 0.5 s apart as before; 3 s from the end of one to the next
    assert [e.start_tick for e in notes] == [3 * S, int(3.5 * S), int(7.5 * S)]
    assert all(e.length_ticks == S for e in notes)
    assert condensed.timeline.duration_ticks == int(11.5 * S)  # the trailing silence is 3 s too
    moved = next(e for e in condensed.timeline.events if e.kind is EventKind.MARKER)
    assert 4.5 * S < moved.start_tick < 7.5 * S  # squeezed with its silence, still between the notes


def test_a_quantum_removes_whole_steps_only():
    timeline = _timeline(_note(0), _note(20))
    condensed = condense(timeline, gap_ticks=0, ring_ticks=2 * S, quantum_ticks=3 * S)
    assert condensed.cuts == (Cut(3 * S, 17 * S, 15 * S),)
    assert [e.start_tick for e in condensed.timeline.events] == [0, 5 * S]


def test_a_rite_condensed_keeps_its_cues_in_order_and_its_music_intact(repertoire):
    timeline = build(load(DATA / "mini_xiangshe.yaml", repertoire=repertoire))
    condensed = condense(timeline, gap_ticks=3 * S)
    short = condensed.timeline
    assert short.duration_ticks == timeline.duration_ticks - condensed.removed_ticks < timeline.duration_ticks
    assert [t.cue.id for t in short.cues] == [t.cue.id for t in timeline.cues]
    assert all(a.start_tick <= b.start_tick for a, b in zip(short.cues, short.cues[1:], strict=False))
    before = [e for e in timeline.events if sounds(e)]
    after = [e for e in short.events if sounds(e)]
    assert len(before) == len(after)
    assert all(a.length_ticks == b.length_ticks and a.key == b.key for a, b in zip(before, after, strict=True))
    assert all(end - start <= 3 * S for start, end in silences(short))
