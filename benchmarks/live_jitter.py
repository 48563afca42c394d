"""How late the live player sends MIDI messages, against mido's MidiFile.play() in the same run.

The passage: 1,200 strokes 3 ms apart, drum and bells alternating (2,400
messages in 3.6 s). The player (``yuesheng.live.Player`` with its real clock)
sends them to a port; each message's lateness is the time it was sent minus the
time it was due. The port is a python-rtmidi virtual port where the system has
one (ALSA sequencer, CoreMIDI), else an in-process loopback port that just
notes the time: then what is measured is the scheduler itself. The same run
measures mido's own ``MidiFile.play()`` on the same passage as the baseline,
and both again while another process keeps one core busy.

Run ``python benchmarks/live_jitter.py``; the last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

try:
    import yuesheng  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from yuesheng.live import Player, RealClock
from yuesheng.lulu import Realization
from yuesheng.midi import to_midi
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Timeline

STROKES = 1200
GAP_MS = 3


def passage() -> Timeline:
    """Alternating 鼓 and 鐘 strokes, GAP_MS apart, each 2 ms long."""
    events = []
    for n in range(STROKES):
        tick = round(n * GAP_MS * TICKS_PER_SECOND / 1000)
        part, key = ("鼓", 35) if n % 2 else ("鐘", 72 + n % 5)
        events.append(Event(tick, 2, EventKind.DRUM if part == "鼓" else EventKind.NOTE, "jie", part=part, key=key,
                            velocity=100))
    return Timeline("jitter", "jitter", tuple(sorted(events, key=lambda e: e.sort_key)), (), (), (), Realization())


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


def live_lateness_ms(timeline: Timeline, port: object) -> list[float]:
    player = Player(timeline, port, RealClock(), preroll=0.2)  # type: ignore[arg-type]
    player.run()
    return [(sent - due) * 1000 for due, sent, _ in player.sent]


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
    timeline = passage()
    port, kind = open_port()
    print(f"passage: {STROKES} strokes {GAP_MS} ms apart; port: {kind}")
    live_p99, live_max = report("yuesheng live (idle)", live_lateness_ms(timeline, port))
    mido_p99, _ = report("mido MidiFile.play() (idle)", mido_lateness_ms(timeline))
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        loaded_p99, loaded_max = report("yuesheng live (one core busy)", live_lateness_ms(timeline, port))
        report("mido MidiFile.play() (one core busy)", mido_lateness_ms(timeline))
    finally:
        burner.kill()
        burner.wait()
    port.close()  # type: ignore[attr-defined]
    print(f"RESULT live_p99_ms_loaded={loaded_p99:.3f}")
    print(f"RESULT live_max_ms_loaded={loaded_max:.3f}")
    print(f"RESULT live_p99_ms={live_p99:.3f}")
    print(f"RESULT live_max_ms={live_max:.3f}")
    print(f"RESULT mido_play_p99_ms={mido_p99:.3f}")


if __name__ == "__main__":
    main()
