"""Live playback: the Timeline sent to a MIDI port in real time, following the operator's GO.

The player is a pump around the cueing state machine (``cueing``, where the modes, GO, STOP, FADE, the jump and
held and armed music are described): it waits on the clock and the operator's commands, hands each command to
the machine, sends the machine's due messages to the port at their time, writes the log (``showlog.Log``: every
command with the cue it concerns) and shows the operator's prompts. ``start`` begins at a given cue;
``resume`` replays a show's logged commands (``resume.read_resume``) before playing, then brings back what was
sounding.

The real clock sleeps until shortly before a message is due and then spins, for sub-millisecond accuracy. While it
plays, the sending thread asks the OS for a real-time priority (``realtime``: SCHED_FIFO where permitted, else a
raised nice value) and the interpreter's thread switch interval is shortened, so a busy machine — a synthesizer on
the same laptop, a web console in the same process — does not delay a message. What the build left in memory is
frozen out of the garbage collector's reach while it plays (``process.collector_frozen``), so that a collection
scans only what was made since: short enough not to delay a message, and the collector stays on for the web
server's cycles.

On Ctrl-C, SIGTERM or a port that fails, all notes off and all sound off are sent on every channel used before the
player stops: never a stuck note.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from yuesheng.live.commands import Command
from yuesheng.live.control import Press
from yuesheng.live.cueing import Cueing, Outcome, PlayerStatus, start_tick
from yuesheng.outputs.midi import live_messages, panic_messages
from yuesheng.process import collector_frozen
from yuesheng.timeline import Timeline

SPIN = 0.0015  # seconds before a message is due when the real clock stops sleeping and starts spinning
RT_PRIORITY = 10  # SCHED_FIFO priority: above every ordinary process, below the kernel's own threads (50)
SWITCH_INTERVAL = 0.0002  # seconds: how long another Python thread may hold the GIL while a message is due


@contextmanager
def realtime() -> Iterator[str]:
    """Raise the calling thread's scheduling priority while playing; yields what was in effect.

    SCHED_FIFO where the OS permits it (root, CAP_SYS_NICE or an rtprio limit), else
    nice −10, else nothing; the GIL switch interval is shortened either way. All is
    restored on exit. A FIFO thread that spins is bounded by the kernel's real-time
    throttling (95 % of each second by default), so it cannot lock a machine.
    """
    interval = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL)
    policy, param, nice = _scheduling()
    try:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(RT_PRIORITY))
            in_effect = f"SCHED_FIFO priority {RT_PRIORITY}"
        except (AttributeError, OSError):
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), -10)
                in_effect = "nice -10 (no real-time priority permitted)"
            except (AttributeError, OSError):
                in_effect = "ordinary priority (neither real-time nor a raised nice value permitted)"
        yield in_effect + f", switch interval {SWITCH_INTERVAL * 1000:g} ms"
    finally:
        sys.setswitchinterval(interval)
        _restore(policy, param, nice)


def _scheduling() -> tuple[int | None, Any, int | None]:
    try:
        thread = threading.get_native_id()
        return os.sched_getscheduler(0), os.sched_getparam(0), os.getpriority(os.PRIO_PROCESS, thread)
    except (AttributeError, OSError):
        return None, None, None


def _restore(policy: int | None, param: Any, nice: int | None) -> None:
    try:
        if policy is not None:
            os.sched_setscheduler(0, policy, param)
        if nice is not None:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except OSError:
        pass  # lowering a priority back is always permitted; a failure here changes nothing that matters


class Clock(Protocol):
    def now(self) -> float: ...
    def sleep_until(self, when: float) -> None: ...


class Port(Protocol):
    def send(self, message: Any) -> None: ...


class Commands(Protocol):
    def wait_until(self, deadline: float | None) -> Press | None:
        """The next command before *deadline* (None: wait as long as it takes), else None."""


class Log(Protocol):
    def write(self, event: str, mono: float, **fields: Any) -> None: ...


class NullPort:
    """No MIDI output (``console --no-midi``): messages are accepted and dropped."""

    def send(self, message: Any) -> None:
        pass

    def close(self) -> None:
        pass


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


class Player:
    """Plays a Timeline to a port, in auto mode or following the operator's commands.

    Only the playing thread changes the player; it holds ``lock`` while it does, so ``status`` — the one
    thing another thread reads — is a consistent snapshot.
    """

    def __init__(self, timeline: Timeline, port: Port, clock: Clock, *, control: Commands | None = None,
                 start: str | None = None, show: Callable[[str], None] = print, preroll: float = 0.0,
                 log: Log | None = None, stay: bool = False, follow: bool = True,
                 resume: Sequence[Press] | None = None, resume_warning: str = "") -> None:
        self.timeline, self.port, self.clock, self.control, self.show = timeline, port, clock, control, show
        self.preroll = preroll  # seconds from starting to the first message, so the queue is ready in time
        self.log, self.stay = log, stay  # stay: wait for commands after the last cue (the console), until QUIT
        self.setup, timed = live_messages(timeline)
        self.cueing = Cueing(timeline, timed, begin=start_tick(timeline, start), manual=control is not None,
                             follow=follow)
        self.actions = self.cueing.actions
        self.channels = sorted({m.channel for m in self.setup if hasattr(m, "channel")} |
                               {m.channel for _, _, m in timed})
        self.resume = resume  # logged commands to replay before playing, at their moments on *clock* (``on_clock``)
        self.resume_warning = resume_warning  # said with the RESUMED line (the log's clock not trusted), or ''
        self.lock = threading.Lock()
        self.sent: list[tuple[float, float, Any]] = []  # (due, sent at, message), for checks and benchmarks
        self.priority = ""  # what ``realtime`` obtained from the OS, once playing
        self.ended = ""  # why the player stopped waiting for commands, if a source closed
        self.watchers: list[Callable[[], None]] = []  # called, from the playing thread, when the status changes
        self.listeners: list[Callable[[Press, Outcome], None]] = []  # called with each command carried out

    def run(self) -> None:
        """Play to the end; on any interruption silence every channel, then re-raise."""
        with collector_frozen():
            try:
                with realtime() as self.priority:
                    for message in self.setup:
                        self.port.send(message)
                    self._loop()
            except BaseException:
                self.panic()
                raise

    def _loop(self) -> None:
        """Wait for the next command or message; change the machine under the lock, send and show outside it."""
        origin = self.clock.now() + self.preroll
        with self.lock:
            resumed = self.cueing.restore(self.resume, origin, self.resume_warning) if self.resume is not None else ""
            if self.resume is None:
                self.cueing.start(origin)
        if resumed:
            self.show(resumed)
        while True:
            due = self.cueing.due()
            press = self._next_press(due)
            if press is not None:
                if press.command is Command.QUIT:
                    with self.lock:
                        self.ended = press.cue
                        if self.stay or self.cueing.due() is None:
                            return
                        self.cueing.play_out(press.at)
                    continue
                with self.lock:
                    outcome = self.cueing.press(press)
                self._carry_out(press, outcome)
                continue
            if due is None:
                return
            with self.lock:
                item = self.cueing.take()
            if item is None:
                continue
            self.clock.sleep_until(item.due)
            self.port.send(item.message)
            self.sent.append((item.due, self.clock.now(), item.message))
            if self.cueing.begins(item):
                self._changed()  # a cue has begun to sound

    def _carry_out(self, press: Press, outcome: Outcome) -> None:
        """What a command asks beyond the machine: silence, its log line, the watchers told, the operator's line."""
        if outcome.silence:
            self.panic()
        if outcome.log is not None and self.log is not None:
            event, cue = outcome.log
            extra: dict[str, Any] = {"silence": True} if press.silence else {}
            if press.value is not None:
                extra["value"] = press.value
            self.log.write(event, press.at, cue=cue, source=press.source, **extra)
        self._changed()
        for callback in self.listeners:
            callback(press, outcome)
        if outcome.line:
            self.show(outcome.line)

    def _next_press(self, due: float | None) -> Press | None:
        """The next command if it comes before *due*: the operator's, or the machine's own GO (auto mode, or armed
        music that follows by itself)."""
        auto = self.cueing.auto_go(due)
        if self.control is None or self.cueing.closed:
            return None if auto is None else self._auto(auto)
        if self.cueing.finished and not self.stay and due is None and self.cueing.paused is None:
            return None
        if line := self.cueing.prompt_once(self.clock.now()):
            self.show(line)
        press = self.control.wait_until(auto if auto is not None else due)
        return press if press is not None or auto is None else self._auto(auto)

    def _auto(self, at: float) -> Press:
        self.clock.sleep_until(at)
        return Press(Command.GO, at, "auto")

    def watch(self, callback: Callable[[], None]) -> None:
        """Have *callback* called (from the playing thread: it must be quick) whenever the status changes."""
        self.watchers.append(callback)

    def listen(self, callback: Callable[[Press, Outcome], None]) -> None:
        """Have *callback* called (from the playing thread: it must be quick) with each command carried out."""
        self.listeners.append(callback)

    def _changed(self) -> None:
        for callback in self.watchers:
            callback()

    def status(self) -> PlayerStatus:
        """Where the rite stands now, taken under the lock: safe to call from any thread."""
        with self.lock:
            return self.cueing.status(self.clock.now(), ended=self.ended, priority=self.priority)

    def panic(self) -> None:
        """All notes off and all sound off on every channel used; errors here are ignored (the port may be gone)."""
        for message in panic_messages(self.channels):
            try:
                self.port.send(message)
            except Exception:
                break
