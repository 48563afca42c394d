"""Timeline → Timeline with its long silences shortened: the music of the rite in its order, without the waits.

A *silence* is a stretch where nothing sounds: no note, drum stroke or call is
held, each counted from its start to its end plus *ring_ticks* (room for its
release). ``condense`` shortens every silence longer than *gap_ticks* and moves
what follows earlier by the time removed:

- sounding events keep their length and their distance from one another within
  a stretch of sound (they never lie in a silence);
- what lies inside a silence (actions, markers, the start and end of cues) is
  squeezed with it, in proportion, so the run sheet keeps its order.

*quantum_ticks* makes the time removed from each silence a multiple of it: the
audio renderer uses this to shift sound by whole steps of FluidSynth's clock
(see ``audio.py``). ``Condensed.position`` maps a tick of the rite to the
condensed one, and the cuts say where silence was taken out.
"""

from __future__ import annotations

import bisect
import dataclasses
from dataclasses import dataclass

from yuesheng.timeline import CueTiming, Event, EventKind, Hold, Timeline

SOUNDING = (EventKind.NOTE, EventKind.DRUM, EventKind.CALL)


@dataclass(frozen=True, slots=True)
class Cut:
    """A silence of the rite, from *start_tick* for *length_ticks*, of which *removed_ticks* were taken out."""

    start_tick: int
    length_ticks: int
    removed_ticks: int

    @property
    def end_tick(self) -> int:
        return self.start_tick + self.length_ticks


@dataclass(frozen=True)
class Condensed:
    """The condensed Timeline and the cuts that made it, in order."""

    timeline: Timeline
    cuts: tuple[Cut, ...]

    @property
    def removed_ticks(self) -> int:
        return sum(c.removed_ticks for c in self.cuts)


def sounds(event: Event) -> bool:
    """Whether *event* makes a sound (a note, drum stroke or call on a part)."""
    return event.kind in SOUNDING and bool(event.part) and event.key is not None


def silences(timeline: Timeline, *, ring_ticks: int = 0) -> list[tuple[int, int]]:
    """The stretches (start, end) of the rite where nothing sounds or rings, from tick 0 to its end."""
    spans = sorted((e.start_tick, e.start_tick + max(1, e.length_ticks) + ring_ticks)
                   for e in timeline.events if sounds(e))
    out: list[tuple[int, int]] = []
    edge = 0
    for start, end in spans:
        if start > edge:
            out.append((edge, start))
        edge = max(edge, end)
    if timeline.duration_ticks > edge:
        out.append((edge, timeline.duration_ticks))
    return out


class _Map:
    """Rite ticks → condensed ticks: unchanged before the first cut, squeezed inside a cut, shifted after it."""

    def __init__(self, cuts: tuple[Cut, ...]) -> None:
        self.cuts = cuts
        self.starts = [c.start_tick for c in cuts]
        self.before: list[int] = []  # ticks removed by the cuts before each cut
        removed = 0
        for c in cuts:
            self.before.append(removed)
            removed += c.removed_ticks

    def __call__(self, tick: int) -> int:
        n = bisect.bisect_right(self.starts, tick) - 1
        if n < 0:
            return tick
        cut, shift = self.cuts[n], self.before[n]
        if tick >= cut.end_tick:
            return tick - shift - cut.removed_ticks
        kept = cut.length_ticks - cut.removed_ticks
        return cut.start_tick - shift + (tick - cut.start_tick) * kept // cut.length_ticks


def condense(timeline: Timeline, *, gap_ticks: int, ring_ticks: int = 0, quantum_ticks: int = 1) -> Condensed:
    """*timeline* with every silence longer than *gap_ticks* shortened to between gap and gap + quantum."""
    if gap_ticks < 0 or ring_ticks < 0 or quantum_ticks < 1:
        raise ValueError("gap and ring must not be negative, the quantum must be at least one tick")
    cuts = tuple(Cut(start, end - start, (end - start - gap_ticks) // quantum_ticks * quantum_ticks)
                 for start, end in silences(timeline, ring_ticks=ring_ticks)
                 if end - start - gap_ticks >= quantum_ticks)
    at = _Map(cuts)

    def moved(e: Event) -> Event:
        start = at(e.start_tick)
        return e._replace(start_tick=start, length_ticks=at(e.start_tick + e.length_ticks) - start)

    events = tuple(sorted((moved(e) for e in timeline.events), key=lambda e: e.sort_key))
    cues = tuple(CueTiming(cue=t.cue, start_tick=at(t.start_tick), end_tick=at(t.end_tick)) for t in timeline.cues)
    holds = {c: Hold(cue=h.cue, until=h.until, start_tick=at(h.start_tick), end_tick=at(h.end_tick),
                     phrase_ticks=tuple(at(p) for p in h.phrase_ticks))
             for c, h in timeline.holds.items()}
    return Condensed(dataclasses.replace(timeline, events=events, cues=cues, holds=holds), cuts)



def excerpt(timeline: Timeline, start_tick: int, end_tick: int) -> Timeline:
    """*timeline* from *start_tick* to *end_tick*, moved to begin at 0: the events that begin in it (a note held
    past its end cut there) and the cues that overlap it, clipped to it."""
    length = end_tick - start_tick
    events = tuple(e._replace(start_tick=e.start_tick - start_tick,
                              length_ticks=min(e.length_ticks, end_tick - e.start_tick))
                   for e in timeline.events if start_tick <= e.start_tick < end_tick)
    cues = tuple(CueTiming(cue=t.cue, start_tick=max(0, t.start_tick - start_tick),
                           end_tick=min(length, t.end_tick - start_tick))
                 for t in timeline.cues if t.end_tick > start_tick and t.start_tick < end_tick)
    return dataclasses.replace(timeline, events=events, cues=cues, holds={})
