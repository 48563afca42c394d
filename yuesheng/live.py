"""Live playback: the Timeline sent to a MIDI port in real time, following the operator's GO.

The rite is cut at its actions. In **auto** mode each action starts at its
estimated time. In **manual** mode each waits for the operator's GO (Enter):
everything the timeline puts from one action to the next is played relative to
the moment GO was pressed, so the music follows the ritual as it really
happens. Music that runs until an action (樂闋: 肆夏 until the 主人 returns the
bow) keeps playing — repeating from its start, which is a phrase boundary —
until the GO of that action, then stops at the end of the phrase in progress.
GO presses closer together than ``guard`` seconds are ignored (a double
press). ``start`` begins at a given cue.

Time is absolute: every message's due time is its anchor (a GO press, or the
start) plus its offset in the timeline, so no error accumulates over an hour;
each GO re-anchors what follows. The real clock sleeps until shortly before a
message is due and then spins, for sub-millisecond accuracy.

On Ctrl-C, SIGTERM or a port that fails, all notes off and all sound off are
sent on every channel used before the player stops: never a stuck note.
"""

from __future__ import annotations

import gc
import heapq
import queue
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from yuesheng.errors import InputClosedError, UnknownNameError
from yuesheng.lulu import suggest
from yuesheng.midi import live_messages, panic_messages
from yuesheng.report import clock as show_clock
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Hold, Timeline

SPIN = 0.0015  # seconds before a message is due when the real clock stops sleeping and starts spinning


class Clock(Protocol):
    def now(self) -> float: ...
    def sleep_until(self, when: float) -> None: ...


class Port(Protocol):
    def send(self, message: Any) -> None: ...


class GoSource(Protocol):
    def wait_until(self, deadline: float | None) -> float | None:
        """The time of a GO press that comes before *deadline* (None: wait as long as it takes), else None."""


class RealClock:
    """perf_counter time; sleeps, then spins the last moments for precision."""

    def now(self) -> float:
        return time.perf_counter()

    def sleep_until(self, when: float) -> None:
        left = when - time.perf_counter()
        if left > SPIN:
            time.sleep(left - SPIN)
        while time.perf_counter() < when:
            pass


class StdinGo:
    """GO presses from lines typed on a terminal (Enter), read by a background thread."""

    def __init__(self, clock: Clock, lines: Iterable[str]) -> None:
        self.clock = clock
        self.presses: queue.Queue[float | None] = queue.Queue()  # None: the input has ended
        threading.Thread(target=self._read, args=(lines,), daemon=True).start()

    def _read(self, lines: Iterable[str]) -> None:
        try:
            for _ in lines:
                self.presses.put(self.clock.now())
        finally:
            self.presses.put(None)

    def wait_until(self, deadline: float | None) -> float | None:
        """As GoSource; InputClosedError when it would wait for a GO that can no longer come."""
        timeout = None if deadline is None else max(0.0, deadline - self.clock.now() - SPIN)
        try:
            pressed = self.presses.get(timeout=timeout)
        except queue.Empty:
            return None
        if pressed is not None:
            return pressed
        self.presses.put(None)  # ended for good
        if timeout is None:
            raise InputClosedError("standard input ended (end of file): no GO can come; manual mode reads Enter "
                                   "from a terminal")
        time.sleep(timeout)
        return None


@dataclass(order=True)
class _Item:
    due: float
    first: int  # 0 for a note-off: at the same moment it goes before any note-on
    seq: int
    cue: str = field(compare=False)
    message: Any = field(compare=False)


@dataclass
class _Looping:
    """A held cue while it plays: where its messages start, and when (if ever) it must stop."""

    hold: Hold
    messages: list[tuple[int, Any]]
    anchor: float  # real time of the hold's start tick in its first pass
    passes: int = 0
    cut: float | None = None  # the phrase boundary it stops at, once its action has come

    @property
    def period(self) -> float:
        return (self.hold.end_tick - self.hold.start_tick) / TICKS_PER_SECOND


class Player:
    """Plays a Timeline to a port, in auto or manual mode."""

    def __init__(self, timeline: Timeline, port: Port, clock: Clock, *, go: GoSource | None = None,
                 guard: float = 0.5, start: str | None = None, show: Callable[[str], None] = print,
                 preroll: float = 0.0) -> None:
        self.timeline, self.port, self.clock, self.go, self.guard, self.show = timeline, port, clock, go, guard, show
        self.preroll = preroll  # seconds from starting to the first message, so the queue is ready in time
        self.setup, timed = live_messages(timeline)
        actions = [t for t in timeline.cues if not t.cue.is_music]
        begin = self.begin = _start_tick(timeline, start)
        self.points: list[CueTiming] = [t for t in actions if t.start_tick >= begin]
        self.by_segment = _segments([t.start_tick for t in self.points], [m for m in timed if m[0] >= begin])
        self.held = {c: h for c, h in timeline.holds.items() if h.start_tick >= begin}
        self.held_messages = {c: [(tick, m) for tick, cue, m in timed if cue == c] for c in self.held}
        self.channels = sorted({m.channel for m in self.setup if hasattr(m, "channel")} |
                               {m.channel for _, _, m in timed})
        self.heap: list[_Item] = []
        self.looping: dict[str, _Looping] = {}
        self.seq = 0
        self.last_go: float | None = None
        self.prompted = -1
        self.sent: list[tuple[float, float, Any]] = []  # (due, sent at, message), for checks and benchmarks

    # -- the loop ----------------------------------------------------------------------------------

    def run(self) -> None:
        """Play to the end; on any interruption silence every channel, then re-raise.

        The garbage collector is paused while playing: a collection would delay a message.
        """
        collecting = gc.isenabled()
        gc.disable()
        try:
            for message in self.setup:
                self.port.send(message)
            self._loop()
        except BaseException:
            self.panic()
            raise
        finally:
            if collecting:
                gc.enable()

    def _loop(self) -> None:
        next_point = 0
        origin = self.clock.now() + self.preroll
        if self.by_segment.get(-1):
            self._activate(-1, origin)
        while True:
            due = self.heap[0].due if self.heap else None
            if next_point < len(self.points):
                press = self._press(due, next_point, origin)
                if press is not None:
                    self._go(next_point, press)
                    next_point += 1
                    continue
            elif due is None:
                return
            item = heapq.heappop(self.heap)
            if self._dropped(item):
                continue
            self.clock.sleep_until(item.due)
            self.port.send(item.message)
            self.sent.append((item.due, self.clock.now(), item.message))

    def _press(self, due: float | None, point: int, origin: float) -> float | None:
        """The next GO: the operator's (manual) or the estimated time (auto), if it comes before *due*."""
        if self.go is None:
            press = origin + (self.points[point].start_tick - self.begin) / TICKS_PER_SECOND
            if due is not None and due < press:
                return None
            self.clock.sleep_until(press)
            return press
        if self.prompted < point:
            self.prompted = point
            self._prompt(point)
        while True:
            pressed = self.go.wait_until(due)
            if pressed is None or self.last_go is None or pressed - self.last_go >= self.guard:
                return pressed

    def _go(self, point: int, press: float) -> None:
        self.last_go = press
        cue = self.points[point]
        for looping in self.looping.values():
            if looping.hold.until == cue.cue.id and looping.cut is None:
                looping.cut = self._phrase_end(looping, press)
        self._activate(point, press)
        if self.go is not None:
            self.prompted = point + 1
            self._prompt(point + 1, current=cue)

    def _activate(self, segment: int, press: float) -> None:
        base = self.points[segment].start_tick if segment >= 0 else self.begin
        for tick, cue, message in self.by_segment.get(segment, []):
            if cue in self.held:
                if cue not in self.looping:
                    hold = self.held[cue]
                    anchor = press + (hold.start_tick - base) / TICKS_PER_SECOND
                    self.looping[cue] = _Looping(hold, self.held_messages[cue], anchor)
                    self._queue_pass(self.looping[cue])
                continue
            self._push(press + (tick - base) / TICKS_PER_SECOND, cue, message)

    def _queue_pass(self, looping: _Looping) -> None:
        """Queue one more pass of a held cue, starting where the last one ended."""
        offset = looping.anchor + looping.passes * looping.period
        for tick, message in looping.messages:
            self._push(offset + (tick - looping.hold.start_tick) / TICKS_PER_SECOND, looping.hold.cue, message)
        looping.passes += 1

    def _dropped(self, item: _Item) -> bool:
        """Held music: queue its next pass half-way through the last one; after its cut, nothing new starts."""
        looping = self.looping.get(item.cue)
        if looping is None:
            return False
        if looping.cut is None and item.due >= looping.anchor + (looping.passes - 0.5) * looping.period:
            self._queue_pass(looping)
        if looping.cut is None:
            return False
        late = item.due > looping.cut if item.message.type == "note_off" else item.due >= looping.cut
        return late  # a note-off at the cut closes the last note; later ones belong to notes never started

    def _phrase_end(self, looping: _Looping, press: float) -> float:
        """The first phrase boundary of the held cue at or after *press*."""
        starts = [(t - looping.hold.start_tick) / TICKS_PER_SECOND for t in looping.hold.phrase_ticks]
        for n in range(looping.passes + 1):
            for s in starts + [looping.period]:
                at = looping.anchor + n * looping.period + s
                if at >= press:
                    return at
        return press

    def _push(self, due: float, cue: str, message: Any) -> None:
        heapq.heappush(self.heap, _Item(due, 0 if message.type == "note_off" else 1, self.seq, cue, message))
        self.seq += 1

    def _prompt(self, point: int, current: CueTiming | None = None) -> None:
        nxt = self.points[point] if point < len(self.points) else None
        parts = []
        if current is not None:
            parts.append(f"▶ {current.cue.id}: {current.cue.action}")
        if nxt is not None:
            words = f" 「{nxt.cue.words}」" if nxt.cue.words else ""
            parts.append(f"next GO {point + 1}/{len(self.points)} ({show_clock(nxt.start_tick)}): {nxt.cue.id}: "
                         f"{nxt.cue.action}{words}")
        else:
            parts.append("no more cues: the music plays out")
        self.show("  |  ".join(parts))

    def panic(self) -> None:
        """All notes off and all sound off on every channel used; errors here are ignored (the port may be gone)."""
        for message in panic_messages(self.channels):
            try:
                self.port.send(message)
            except Exception:
                break


def _start_tick(timeline: Timeline, start: str | None) -> int:
    if start is None:
        return 0
    for t in timeline.cues:
        if t.cue.id == start:
            return t.start_tick
    raise UnknownNameError("cue", start, suggest(start, [t.cue.id for t in timeline.cues]))


def _segments(points: list[int], timed: list[tuple[int, str, Any]]) -> dict[int, list[tuple[int, str, Any]]]:
    """Messages by the GO point they follow (-1: before the first)."""
    out: dict[int, list[tuple[int, str, Any]]] = {}
    index = -1
    for tick, cue, message in timed:
        while index + 1 < len(points) and points[index + 1] <= tick:
            index += 1
        out.setdefault(index, []).append((tick, cue, message))
    return out
