"""How fast yuesheng renders MIDI, and how that cost grows.

Measures, with ``time.perf_counter`` (best of 3):

1. each shipped rite (``cues/*.yaml``): ``load_cuesheet`` once, then
   ``build_timeline`` and ``midi_bytes`` timed separately;
2. ``midi_bytes`` on a synthetic ceremony Timeline of 10**3, 10**4 and 10**5
   events (mostly 歌/瑟/笙 notes with lyrics, some 鼓 strokes, actions, markers
   and 獲者 calls; ``random.Random(0)``), reported as µs per event: the cost
   should stay roughly flat (linear growth);
3. the baseline: music21's own MIDI export (``streamToMidiFile`` + ``writestr``)
   of the first 3000 synthetic notes, one music21 Part per yuesheng part,
   against ``midi_bytes`` of a Timeline holding exactly those notes.

Run ``python benchmarks/render.py`` (``--quick``: sizes 10**2..10**4, one
repeat, 300 baseline notes, for a smoke run). The last lines are ``RESULT``
lines: the speedup over music21 and the per-event cost at each size.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's yuesheng, installed or not

from yuesheng.validate import load_cuesheet
from yuesheng.lulu import Realization
from yuesheng.midi import midi_bytes
from yuesheng.repertoire import data_dir, load_repertoire
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Timeline, build_timeline

LYRICS = "呦呦鹿鳴食野之苹我有嘉賓鼓瑟吹笙吹笙鼓簧承筐是將人之好我示我周行"
SYLLABLE = TICKS_PER_SECOND * 3 // 2  # 1.5 s, the default declamation


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    """The fastest of *repeats* runs of *fn*, in seconds."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def timeline_of(events: list[Event], rite: str = "synthetic") -> Timeline:
    """A Timeline holding *events*, sorted as build_timeline sorts them."""
    return Timeline(rite, rite, tuple(sorted(events, key=lambda e: e.sort_key)), (), (), (), Realization())


def synthetic_events(n: int, seed: int = 0) -> list[Event]:
    """*n* events of a made-up ceremony: ~82% notes, 6% drum, 4% actions, 4% markers, 4% calls."""
    rng = random.Random(seed)
    events: list[Event] = []
    tick = 0
    while len(events) < n:
        roll = rng.random()
        cue = f"c{len(events) // 500}"
        if roll < 0.82:  # one syllable on the three melodic parts at once (fewer if near n)
            key, syllable = rng.randint(60, 84), LYRICS[rng.randrange(len(LYRICS))]
            for part, shift, vel in (("歌", 0, 90), ("瑟", 0, 75), ("笙", -12, 70))[: n - len(events)]:
                events.append(Event(tick, SYLLABLE, EventKind.NOTE, cue, part=part, key=max(60, key + shift),
                                    velocity=vel, text=syllable if part == "歌" else "", piece="p", zhong=1))
            tick += SYLLABLE
        elif roll < 0.88:
            events.append(Event(tick, TICKS_PER_SECOND // 8, EventKind.DRUM, cue, part="鼓", key=35, velocity=110))
        elif roll < 0.92:
            events.append(Event(tick, rng.choice((2, 5, 30)) * TICKS_PER_SECOND, EventKind.ACTION, cue,
                                text="主人拜送，賓答拜"))
            tick += TICKS_PER_SECOND
        elif roll < 0.96:
            events.append(Event(tick, 0, EventKind.MARKER, cue, text="升歌 鹿鳴 四牡 皇皇者華"))
        else:
            events.append(Event(tick + 1, TICKS_PER_SECOND * 4 // 5, EventKind.CALL, cue, part="獲者",
                                key=rng.choice((60, 62)), velocity=100, text="獲", degree="宫"))
    return events


def render_rites(repeats: int) -> None:
    repertoire = load_repertoire()
    print(f"{'events':>8}{'notes':>8}{'build s':>10}{'MIDI s':>10}  rite")
    for path in sorted(data_dir("cues").glob("*.yaml")):
        sheet = load_cuesheet(path, repertoire)
        timeline = build_timeline(sheet)
        notes = sum(e.kind is EventKind.NOTE for e in timeline.events)
        build = best_of(repeats, lambda: build_timeline(sheet))
        midi = best_of(repeats, lambda: midi_bytes(timeline))
        print(f"{len(timeline.events):>8}{notes:>8}{build:>10.4f}{midi:>10.4f}  {timeline.rite} ({path.name})")


def per_event_costs(sizes: list[int], repeats: int) -> list[float]:
    """µs per event of midi_bytes on synthetic timelines of each size."""
    costs = []
    for n in sizes:
        timeline = timeline_of(synthetic_events(n))
        seconds = best_of(repeats, lambda: midi_bytes(timeline))
        costs.append(seconds / n * 1e6)
        print(f"synthetic {n:>7} events: midi_bytes {seconds:8.4f} s, {costs[-1]:6.2f} µs/event")
    return costs


def music21_baseline(notes: list[Event], repeats: int) -> tuple[float, float]:
    """Seconds (best of *repeats*) for music21's MIDI export and for midi_bytes of the same notes."""
    import io

    from music21 import midi as m21midi
    from music21 import note, stream

    def score() -> stream.Score:
        parts: dict[str, stream.Part] = {}
        for e in notes:
            if e.part not in parts:
                parts[e.part] = stream.Part()
                parts[e.part].partName = e.part
            m21_note = note.Note(e.key, quarterLength=e.length_ticks / TICKS_PER_SECOND)
            if e.text:
                m21_note.lyric = e.text
            parts[e.part].insert(e.start_tick / TICKS_PER_SECOND, m21_note)
        whole = stream.Score()
        for part in parts.values():
            whole.insert(0, part)
        return whole

    m21_best = float("inf")
    for _ in range(repeats):  # a fresh stream each time: the export may cache on it
        whole = score()
        start = time.perf_counter()
        data = m21midi.translate.streamToMidiFile(whole).writestr()
        io.BytesIO(data)
        m21_best = min(m21_best, time.perf_counter() - start)
    timeline = timeline_of(notes)
    ours = best_of(repeats, lambda: midi_bytes(timeline))
    return m21_best, ours


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat: a smoke run")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else 3
    exponents = [2, 3, 4] if args.quick else [3, 4, 5]
    baseline_notes = 300 if args.quick else 3000

    render_rites(repeats)
    costs = per_event_costs([10**x for x in exponents], repeats)
    notes = [e for e in timeline_of(synthetic_events(baseline_notes * 2)).events
             if e.kind is EventKind.NOTE][:baseline_notes]
    m21_s, ours_s = music21_baseline(notes, repeats)
    print(f"{len(notes)} notes: music21 streamToMidiFile+writestr {m21_s:.4f} s, yuesheng midi_bytes {ours_s:.4f} s")
    growth = costs[-1] / costs[0]
    verdict = "linear" if growth <= 2 else "NOT linear"
    print(f"growth: per-event cost at 1e{exponents[-1]} / 1e{exponents[0]} = {growth:.2f}x ({verdict}, limit 2x)")
    print(f"RESULT render_speedup_vs_music21={m21_s / ours_s:.2f}")
    for x, cost in zip(exponents, costs):
        print(f"RESULT per_event_us_1e{x}={cost:.2f}")


if __name__ == "__main__":
    main()
