"""How fast yuesheng renders MIDI, and how that cost grows.

Measures (best of 3):

1. each shipped rite (``cues/*.yaml``): ``yuesheng.load`` once, then
   ``yuesheng.build`` and ``midi_bytes`` timed separately;
2. ``midi_bytes`` on a synthetic ceremony Timeline of 10**3, 10**4 and 10**5
   events (mostly 歌/瑟/笙 notes with lyrics, some 鼓 strokes, actions, markers
   and 獲者 calls; ``random.Random(0)``), reported as µs per event: the cost
   should stay roughly flat (linear growth);
3. the baseline: music21's own MIDI export (``streamToMidiFile`` + ``writestr``)
   of the first 3000 synthetic notes, one music21 Part per yuesheng part,
   against ``midi_bytes`` of a Timeline holding exactly those notes;
4. one long piece (鹿鳴's stanzas repeated) sung once, 5,000 and 40,000 notes:
   ``yuesheng.build`` + ``midi_bytes`` per note (it was quadratic: the notes
   were gathered again for every note);
5. a million sung syllables (鹿鳴 ×9,709 終, in 98 升歌 cues, 0.15 s a syllable
   to stay within the 48-hour limit), in a child process: ``yuesheng.build``
   and ``midi_bytes`` timed, and the child's peak resident memory
   (``resource.getrusage``) after each.

Times are CPU seconds (``time.process_time``), the fair figure on a shared,
loaded machine; the music21 comparison and 4 and 5 give wall-clock time
(``time.perf_counter``) too.

Run ``python benchmarks/render.py`` (``--quick``: sizes 10**2..10**4, one
repeat, 300 baseline notes, 10**5 syllables, for a smoke run). The last lines
are ``RESULT`` lines: the speedup over music21, the per-event cost at each
size, the long piece's per-note cost, and the million syllables' times and
memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's yuesheng, installed or not

from yuesheng import build, load
from yuesheng.music.lulu import Realization
from yuesheng.music.repertoire import data_dir, load_repertoire
from yuesheng.outputs.midi import midi_bytes
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Timeline

LYRICS = "呦呦鹿鳴食野之苹我有嘉賓鼓瑟吹笙吹笙鼓簧承筐是將人之好我示我周行"
SYLLABLE = TICKS_PER_SECOND * 3 // 2  # 1.5 s, the default declamation


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and CPU seconds of one run of *fn*."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def best_of(repeats: int, fn: Callable[[], object]) -> tuple[float, float]:
    """The fastest of *repeats* runs of *fn*: (wall-clock, CPU) seconds, each the least seen."""
    runs = [timed(fn) for _ in range(repeats)]
    return min(w for w, _ in runs), min(c for _, c in runs)


def timeline_of(events: list[Event], rite: str = "synthetic") -> Timeline:
    """A Timeline holding *events*, sorted as the builder sorts them."""
    return Timeline(rite=rite, rite_id=rite, events=tuple(sorted(events, key=lambda e: e.sort_key)),
                    realization=Realization())


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
                events.append(Event(start_tick=tick, length_ticks=SYLLABLE, kind=EventKind.NOTE, cue=cue, part=part,
                                    key=max(60, key + shift),
                                    velocity=vel, text=syllable if part == "歌" else "", piece="p", zhong=1))
            tick += SYLLABLE
        elif roll < 0.88:
            events.append(Event(start_tick=tick, length_ticks=TICKS_PER_SECOND // 8, kind=EventKind.DRUM, cue=cue,
                                part="鼓", key=35, velocity=110))
        elif roll < 0.92:
            events.append(Event(start_tick=tick, length_ticks=rng.choice((2, 5, 30)) * TICKS_PER_SECOND,
                                kind=EventKind.ACTION, cue=cue,
                                text="主人拜送，賓答拜"))
            tick += TICKS_PER_SECOND
        elif roll < 0.96:
            events.append(Event(start_tick=tick, length_ticks=0, kind=EventKind.MARKER, cue=cue,
                                text="升歌 鹿鳴 四牡 皇皇者華"))
        else:
            events.append(Event(start_tick=tick + 1, length_ticks=TICKS_PER_SECOND * 4 // 5, kind=EventKind.CALL,
                                cue=cue, part="獲者",
                                key=rng.choice((60, 62)), velocity=100, text="獲", degree="宫"))
    return events


def render_rites(repeats: int) -> None:
    repertoire = load_repertoire()
    print(f"{'events':>8}{'notes':>8}{'build s':>10}{'MIDI s':>10}  rite (CPU seconds)")
    for path in sorted(data_dir("cues").glob("*.yaml")):
        sheet = load(path, repertoire=repertoire)
        timeline = build(sheet)
        notes = sum(e.kind is EventKind.NOTE for e in timeline.events)
        built = best_of(repeats, partial(build, sheet))[1]
        midi = best_of(repeats, partial(midi_bytes, timeline))[1]
        print(f"{len(timeline.events):>8}{notes:>8}{built:>10.4f}{midi:>10.4f}  {timeline.rite} ({path.name})")


def per_event_costs(sizes: list[int], repeats: int) -> list[float]:
    """CPU µs per event of midi_bytes on synthetic timelines of each size."""
    costs = []
    for n in sizes:
        timeline = timeline_of(synthetic_events(n))
        seconds = best_of(repeats, partial(midi_bytes, timeline))[1]
        costs.append(seconds / n * 1e6)
        print(f"synthetic {n:>7} events: midi_bytes {seconds:8.4f} s CPU, {costs[-1]:6.2f} µs/event")
    return costs


def music21_baseline(notes: list[Event], repeats: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """(wall, CPU) seconds, best of *repeats*, of music21's MIDI export and of midi_bytes of the same notes."""
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

    def export(whole: stream.Score) -> io.BytesIO:
        return io.BytesIO(m21midi.translate.streamToMidiFile(whole).writestr())

    runs = []
    for _ in range(repeats):  # a fresh stream each time: the export may cache on it
        whole = score()
        runs.append(timed(partial(export, whole)))
    timeline = timeline_of(notes)
    return (min(w for w, _ in runs), min(c for _, c in runs)), best_of(repeats, lambda: midi_bytes(timeline))


def _sung_sheet(path: Path, cues: list[int], syllable: str) -> Path:
    """A cue sheet of 升歌 cues singing 鹿鳴 with the given 終 each, written to *path*."""
    lines = ["format: yuesheng-cues/1", "rite: {id: luming-many, name: 鹿鳴 repeated, rank: 大夫}",
             f"defaults: {{syllable: {syllable}}}", "performers:", "  gong: {name: 工, count: 4}", "instruments:",
             "  se: {name: 瑟, player: gong}", "cues:"]
    for n, zhong in enumerate(cues):
        lines += [f"  - id: ge-{n}", "    section: 樂賓", "    music: 升歌", "    pieces:",
                  f"      - {{piece: luming, zhong: {zhong}}}", "    performers: [gong]", "    instruments: [se]",
                  "    cite: {page: 4-20b, quote: 工歌鹿鳴四牡皇皇者華}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def long_piece_costs(sizes: list[int]) -> list[tuple[int, float, float]]:
    """(notes, wall µs per note, CPU µs per note) of building and rendering one long piece sung once."""
    import tempfile

    repertoire = load_repertoire()
    luming = repertoire.find("luming")
    out = []
    with tempfile.TemporaryDirectory() as folder:
        sheet = load(_sung_sheet(Path(folder) / "one.yaml", [1], "1.5s"), repertoire=repertoire)
    for n in sizes:
        piece = replace(luming, stanzas=luming.stanzas * (n // len(luming.notes)))
        cue = sheet.cues[0]
        long = replace(sheet, cues=(replace(cue, pieces=(replace(cue.pieces[0], piece=piece),)),))
        wall, cpu = time.perf_counter(), time.process_time()
        midi_bytes(build(long))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        notes = len(piece.notes)
        out.append((notes, wall / notes * 1e6, cpu / notes * 1e6))
        print(f"one piece of {notes:>6} notes: build + MIDI {wall:7.3f} s wall, {cpu:7.3f} s CPU, "
              f"{out[-1][1]:6.1f} µs/note")
    return out


def million_child(syllables: int) -> None:
    """In a child process: build and render *syllables* sung syllables; print the figures as JSON."""
    import tempfile

    cues, left = [], -(-syllables // 103)  # 終 of 鹿鳴 (103 syllables), at most 100 to a cue
    while left:
        cues.append(min(100, left))
        left -= cues[-1]
    with tempfile.TemporaryDirectory() as folder:
        sheet = load(_sung_sheet(Path(folder) / "many.yaml", cues, "0.15s"))
    figures: dict[str, float] = {}
    wall, cpu = time.perf_counter(), time.process_time()
    timeline = build(sheet)
    figures.update(build_s=time.perf_counter() - wall, build_cpu_s=time.process_time() - cpu,
                   build_peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    wall, cpu = time.perf_counter(), time.process_time()
    data = midi_bytes(timeline)
    figures.update(render_s=time.perf_counter() - wall, render_cpu_s=time.process_time() - cpu,
                   peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, events=len(timeline.events),
                   syllables=sum(cues) * 103, bytes=len(data))
    print(json.dumps(figures))


def million_syllables(syllables: int) -> dict[str, float]:
    child = subprocess.run([sys.executable, __file__, "--million-child", str(syllables)], capture_output=True,
                           text=True, check=True)
    figures: dict[str, float] = json.loads(child.stdout.splitlines()[-1])
    print(f"{figures['syllables']:,} syllables, {figures['events']:,} events: build {figures['build_s']:.1f} s "
          f"({figures['build_cpu_s']:.1f} s CPU, peak {figures['build_peak_mb']:.0f} MB), MIDI "
          f"{figures['render_s']:.1f} s ({figures['render_cpu_s']:.1f} s CPU), peak {figures['peak_mb']:.0f} MB, "
          f"{figures['bytes']:,} bytes")
    return figures


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat: a smoke run")
    parser.add_argument("--million-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.million_child:
        million_child(args.million_child)
        return
    repeats = 1 if args.quick else 3
    exponents = [2, 3, 4] if args.quick else [3, 4, 5]
    baseline_notes = 300 if args.quick else 3000

    render_rites(repeats)
    costs = per_event_costs([10**x for x in exponents], repeats)
    notes = [e for e in timeline_of(synthetic_events(baseline_notes * 2)).events
             if e.kind is EventKind.NOTE][:baseline_notes]
    (m21_s, m21_cpu), (ours_s, ours_cpu) = music21_baseline(notes, repeats)
    print(f"{len(notes)} notes: music21 streamToMidiFile+writestr {m21_s:.4f} s ({m21_cpu:.4f} s CPU), "
          f"yuesheng midi_bytes {ours_s:.4f} s ({ours_cpu:.4f} s CPU)")
    growth = costs[-1] / costs[0]
    verdict = "linear" if growth <= 2 else "NOT linear"
    print(f"growth: per-event cost at 1e{exponents[-1]} / 1e{exponents[0]} = {growth:.2f}x ({verdict}, limit 2x)")
    long = long_piece_costs([500, 4000] if args.quick else [5000, 40000])
    million = million_syllables(10**5 if args.quick else 10**6)
    print(f"RESULT render_speedup_vs_music21={m21_s / ours_s:.2f} (CPU time: {m21_cpu / ours_cpu:.2f})")
    for x, cost in zip(exponents, costs, strict=True):
        print(f"RESULT per_event_us_1e{x}={cost:.2f}")
    for count, wall_us, cpu_us in long:
        print(f"RESULT long_piece_us_per_note_{count}={wall_us:.1f} (CPU {cpu_us:.1f})")
    print(f"RESULT long_piece_growth={long[-1][2] / long[0][2]:.2f} (CPU per note, {long[-1][0]} / {long[0][0]} notes)")
    tag = "million" if not args.quick else "hundred_thousand"
    print(f"RESULT {tag}_syllables_build_s={million['build_s']:.1f} (CPU {million['build_cpu_s']:.1f}, "
          f"peak {million['build_peak_mb']:.0f} MB)")
    print(f"RESULT {tag}_syllables_render_s={million['render_s']:.1f} (CPU {million['render_cpu_s']:.1f})")
    print(f"RESULT {tag}_syllables_peak_mb={million['peak_mb']:.0f}")


if __name__ == "__main__":
    main()
