"""How late the live player sends MIDI messages, against mido's MidiFile.play() in the same run.

The passage: 1,200 strokes 3 ms apart, drum and bells alternating (2,400
messages in 3.6 s). The player (``yuesheng.live.player.Player`` with its real clock)
sends them to a port; each message's lateness is the time it was sent minus the
time it was due. The port is a python-rtmidi virtual port where the system has
one (ALSA sequencer, CoreMIDI), else an in-process loopback port that just
notes the time: then what is measured is the scheduler itself. The same run
measures mido's own ``MidiFile.play()`` on the same passage as the baseline,
and both again under load: as many busy processes as there are cores, plus a
busy Python thread in the player's own process (as a web console would be).
The player's line says which priority the OS granted it (``yuesheng.live.player.realtime``);
the loaded case is also measured with that priority withheld, to show what it buys.

Run ``python benchmarks/live_jitter.py``; the last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's code, installed or not

from yuesheng.live import player as live
from yuesheng.live.player import Player, RealClock
from yuesheng.music.lulu import Realization
from yuesheng.outputs.midi import to_midi
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Timeline

STROKES = 1200
GAP_MS = 3


def passage(strokes: int) -> Timeline:
    """*strokes* alternating 鼓 and 鐘 strokes, GAP_MS apart, each 2 ms long."""
    events = []
    for n in range(strokes):
        tick = round(n * GAP_MS * TICKS_PER_SECOND / 1000)
        part, key = ("鼓", 35) if n % 2 else ("鐘", 72 + n % 5)
        events.append(Event(start_tick=tick, length_ticks=2, kind=EventKind.DRUM if part == "鼓" else EventKind.NOTE,
                            cue="jie", part=part, key=key,
                            velocity=100))
    return Timeline(rite="jitter", rite_id="jitter", events=tuple(sorted(events, key=lambda e: e.sort_key)),
                    realization=Realization())


class Loopback:
    """An in-process port: it only accepts the message."""

    def send(self, message: object) -> None:
        pass

    def close(self) -> None:
        pass


def open_port() -> tuple[object, str]:
    import mido

    try:
        return mido.open_output("yuesheng-jitter", virtual=True), "python-rtmidi virtual port"
    except Exception as exc:  # no MIDI system on this machine
        return Loopback(), f"in-process loopback (no virtual port here: {str(exc).splitlines()[0]})"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def live_lateness_ms(timeline: Timeline, port: object, *, priority: bool = True) -> tuple[list[float], str]:
    """Each message's lateness in ms, and the priority the player ran at."""
    withheld = mock.patch.object(live, "realtime", _no_priority) if not priority else nullcontext()
    with withheld:
        player = Player(timeline, port, RealClock(), preroll=0.2)  # type: ignore[arg-type]
        player.run()
    return [(sent - due) * 1000 for due, sent, _ in player.sent], player.priority


@contextmanager
def _no_priority() -> Iterator[str]:
    yield "ordinary priority (withheld for comparison)"


@contextmanager
def load(cores: int) -> Iterator[None]:
    """*cores* busy processes."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(cores)]
    try:
        time.sleep(0.3)
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


@contextmanager
def busy_thread() -> Iterator[None]:
    """A Python thread in the player's process that keeps computing (a worst case for the GIL)."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(100))

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def mido_lateness_ms(timeline: Timeline) -> list[float]:
    midi = to_midi(timeline)
    out, start, scheduled = [], time.perf_counter(), 0.0
    for message in midi.play():
        scheduled += message.time
        out.append((time.perf_counter() - start - scheduled) * 1000)
    return out


def report(label: str, values: list[float]) -> tuple[float, float]:
    p99, worst = percentile(values, 0.99), max(values)
    print(f"{label:<32} n={len(values):5d}  median {statistics.median(values):7.3f} ms  p99 {p99:7.3f} ms  "
          f"max {worst:7.3f} ms")
    return p99, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strokes", type=int, default=STROKES, help="the passage's length")
    args = parser.parse_args()
    if args.strokes < 2:
        parser.error(f"--strokes {args.strokes}: expected at least 2")
    timeline = passage(args.strokes)
    port, kind = open_port()
    cores = os.cpu_count() or 1
    print(f"passage: {args.strokes} strokes {GAP_MS} ms apart; port: {kind}; {cores} cores")
    values, priority = live_lateness_ms(timeline, port)
    print(f"yuesheng player priority: {priority}")
    live_p99, live_max = report("yuesheng live (idle)", values)
    mido_p99, _ = report("mido MidiFile.play() (idle)", mido_lateness_ms(timeline))
    with load(cores):
        loaded_p99, loaded_max = report(f"yuesheng live ({cores} busy)", live_lateness_ms(timeline, port)[0])
        report(f"yuesheng live, no priority ({cores} busy)", live_lateness_ms(timeline, port, priority=False)[0])
        mido_loaded_p99, _ = report(f"mido MidiFile.play() ({cores} busy)", mido_lateness_ms(timeline))
        with busy_thread():
            report(f"yuesheng live ({cores} busy + busy thread)", live_lateness_ms(timeline, port)[0])
    port.close()  # type: ignore[attr-defined]
    print(f"RESULT live_loaded_p99_ms={loaded_p99:.3f}")
    print(f"RESULT live_loaded_max_ms={loaded_max:.3f}")
    print(f"RESULT live_p99_ms={live_p99:.3f}")
    print(f"RESULT live_max_ms={live_max:.3f}")
    print(f"RESULT mido_play_p99_ms={mido_p99:.3f}")
    print(f"RESULT mido_play_loaded_p99_ms={mido_loaded_p99:.3f}")


if __name__ == "__main__":
    main()
