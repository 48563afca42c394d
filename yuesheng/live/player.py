"""Live playback: the Timeline sent to a MIDI port in real time, following the operator's GO.

The rite is cut at its actions. In **auto** mode each action starts at its
estimated time. In **manual** mode each waits for the operator's GO (from any
source of ``control.Control``: Enter, the console page, OSC, a pedal):
everything the timeline puts from one action to the next is played relative to
the moment GO was pressed, so the music follows the ritual as it really
happens. Music that runs until an action (樂闋: 肆夏 until the 主人 returns the
bow) keeps playing — repeating from its start, which is a phrase boundary —
until the GO of that action, then stops at the end of the phrase in progress.
In manual mode a piece of music that begins after an action has begun (升歌
once 工入升 is done) is a GO point of its own, as a cue is in QLab: it is
**armed** from its action's GO and, unless the player waits for music's own GO
(``follow=False``), it auto-follows when its pre-wait (the plan's time from
the action to the music) has passed; the next GO during the pre-wait brings it
in at once. Music that begins with an action sounds on that action's GO. What
the status calls playing is what has begun to sound; the armed music is
reported apart, with the moment it will follow.
The operator may also STOP (all notes and sound off at once), FADE (the held
music — or, if none is held, whatever is playing — fades out over ``FADE``
seconds and stops) and GOTO a cue (the cue before it becomes the current one,
the next GO plays it; what sounds plays on unless the GOTO asks for silence).
``start`` begins at a given cue. Every command is logged with the cue it
concerns when a ``log`` is given (``showlog.Log``); ``resume`` replays a
show's logged commands (``resume.read_resume``) before playing, then brings
back what was sounding.

Time is absolute: every message's due time is its anchor (a GO press, or the
start) plus its offset in the timeline, so no error accumulates over an hour;
each GO re-anchors what follows. The real clock sleeps until shortly before a
message is due and then spins, for sub-millisecond accuracy. While it plays,
the sending thread asks the OS for a real-time priority (``realtime``:
SCHED_FIFO where permitted, else a raised nice value) and the interpreter's
thread switch interval is shortened, so a busy machine — a synthesizer on the
same laptop, a web console in the same process — does not delay a message.

On Ctrl-C, SIGTERM or a port that fails, all notes off and all sound off are
sent on every channel used before the player stops: never a stuck note.
"""

from __future__ import annotations

import gc
import heapq
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from yuesheng.cuesheet import Cue
from yuesheng.cuesheet.zhong import programme
from yuesheng.errors import UnknownNameError
from yuesheng.live.commands import Command
from yuesheng.live.control import Press
from yuesheng.outputs.midi import live_messages, panic_messages, volume_messages
from yuesheng.text import suggest
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Hold, Timeline
from yuesheng.timeline import clock as show_clock

SPIN = 0.0015  # seconds before a message is due when the real clock stops sleeping and starts spinning
RT_PRIORITY = 10  # SCHED_FIFO priority: above every ordinary process, below the kernel's own threads (50)
SWITCH_INTERVAL = 0.0002  # seconds: how long another Python thread may hold the GIL while a message is due
FADE = 3.0  # seconds a FADE takes
FADE_STEPS = 24
FULL_VOLUME = 100  # General MIDI's default channel volume, restored after a fade


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


@dataclass(frozen=True, slots=True)
class Playing:
    """A cue whose messages are still queued: *until* is the action that stops it ("" if none: it plays out)."""

    cue: str
    until: str


@dataclass(frozen=True, slots=True)
class PlayerStatus:
    """Where the rite stands at one moment, copied under the player's lock for another thread (the console).

    Times are the player's clock; a cue is named by its id. ``actions`` are the points GO steps through, in
    order, from ``begin_tick`` on; ``first_started`` is when the rite's ``first_tick`` was, reckoned from its first GO
    (a jump does not move it), from which the console reckons elapsed time and over/under-run.
    """

    now: float
    current: str | None  # the action last started
    current_started: float | None
    next: str | None  # the action the next GO starts
    first_started: float | None
    first_tick: int | None
    playing: tuple[Playing, ...]
    ended: str  # why the player stopped waiting for commands, if a source closed
    priority: str  # what ``realtime`` obtained from the OS
    begin_tick: int
    actions: tuple[str, ...]
    armed: tuple[str, ...] = ()  # the music the next GO starts (the next point is music), in timeline order
    follow_at: float | None = None  # when the armed music starts by itself, if it does
    resumed: str = ""  # what a resume from a log brought back, for the page to say


class Player:
    """Plays a Timeline to a port, in auto mode or following the operator's commands.

    Only the playing thread changes the player; it holds ``lock`` while it does, so ``status`` — the one
    thing another thread reads — is a consistent snapshot.
    """

    def __init__(self, timeline: Timeline, port: Port, clock: Clock, *, control: Commands | None = None,
                 start: str | None = None, show: Callable[[str], None] = print, preroll: float = 0.0,
                 log: Log | None = None, stay: bool = False, follow: bool = True,
                 resume: Sequence[Press] | None = None) -> None:
        self.timeline, self.port, self.clock, self.control, self.show = timeline, port, clock, control, show
        self.preroll = preroll  # seconds from starting to the first message, so the queue is ready in time
        self.log, self.stay = log, stay  # stay: wait for commands after the last cue (the console), until QUIT
        self.setup, timed = live_messages(timeline)
        begin = self.begin = start_tick(timeline, start)
        self.follow = follow  # armed music starts by itself when its pre-wait has passed
        self.points: tuple[CueTiming, ...] = go_points(timeline, begin, music=control is not None)
        self.together = {t.cue.id: tuple(c.cue.id for c in timeline.cues if c.cue.is_music
                                         and c.start_tick == t.start_tick) for t in self.points if t.cue.is_music}
        self.actions = tuple(t.cue.id for t in self.points)
        self.by_segment = _segments([t.start_tick for t in self.points], [m for m in timed if m[0] >= begin])
        self.held = {c: h for c, h in timeline.holds.items() if h.start_tick >= begin}
        self.held_messages = {c: [(tick, m) for tick, cue, m in timed if cue == c] for c in self.held}
        self.channels = sorted({m.channel for m in self.setup if hasattr(m, "channel")} |
                               {m.channel for _, _, m in timed})
        self.lock = threading.Lock()
        self.heap: list[_Item] = []
        self.queued: Counter[str] = Counter()  # cue → its messages in the heap
        self.first_due: dict[str, float] = {}  # cue → when its earliest queued message sounds
        self.follow_from = float("-inf")  # no auto-follow due before this moment (a resume)
        self.resumed = ""  # what the resume brought back, said for the operator
        self.resume = resume  # logged commands to replay before playing, times relative to the start (≤ 0)
        self.looping: dict[str, _Looping] = {}
        self.cut: dict[str, float] = {}  # cue → when its remaining messages stop sounding (a fade's end)
        self.silenced: set[str] = set()  # held cues stopped by STOP or FADE: not started again until a jump
        self.point_of_cue = {t.cue.id: n for n, t in enumerate(self.points)}
        self.by_id = {t.cue.id: t for t in timeline.cues}
        self.seq = 0
        self.next_point = 0
        self.current = -1  # the point last started
        self.started: dict[int, float] = {}  # point → when its GO came (or, for the cue before a jump's, the jump)
        self.rite_started: float | None = None  # when the begin tick was, reckoned from the first GO; never moved
        self.base = (begin, 0.0)  # auto mode: this tick plays at this time
        self.prompted = -1
        self.sent: list[tuple[float, float, Any]] = []  # (due, sent at, message), for checks and benchmarks
        self.priority = ""  # what ``realtime`` obtained from the OS, once playing
        self.ended = ""  # why the player stopped waiting for commands, if a source closed
        self.closed = False  # no command can come: what is queued plays out
        self.watchers: list[Callable[[], None]] = []  # called, from the playing thread, when the status changes

    # -- the loop ----------------------------------------------------------------------------------

    def run(self) -> None:
        """Play to the end; on any interruption silence every channel, then re-raise.

        The garbage collector is paused while playing: a collection would delay a message.
        """
        collecting = gc.isenabled()
        gc.disable()
        try:
            with realtime() as self.priority:
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
        """Wait for the next command or message; change the player under the lock, send and show outside it."""
        origin = self.clock.now() + self.preroll
        with self.lock:
            self.base = (self.begin, origin)
            if self.resume is not None:
                self.show(self._restore(origin))
            elif self.by_segment.get(-1):
                self._activate(-1, origin)
        while True:
            due = self.heap[0].due if self.heap else None
            press = self._next_press(due)
            if press is not None:
                if press.command is Command.QUIT:
                    with self.lock:
                        self.ended = press.cue
                        if self.stay or not self.heap:
                            return
                        self._play_out(press.at)
                    continue
                with self.lock:
                    line = self._handle(press)
                self._changed()
                if line:
                    self.show(line)
                continue
            if due is None:
                return
            with self.lock:
                item = heapq.heappop(self.heap)
                self.queued[item.cue] -= 1
                dropped = self._dropped(item)
            if dropped:
                continue
            self.clock.sleep_until(item.due)
            self.port.send(item.message)
            self.sent.append((item.due, self.clock.now(), item.message))
            if item.cue and item.due == self.first_due.get(item.cue):
                self._changed()  # a cue has begun to sound

    def watch(self, callback: Callable[[], None]) -> None:
        """Have *callback* called (from the playing thread: it must be quick) whenever the status changes."""
        self.watchers.append(callback)

    def _changed(self) -> None:
        for callback in self.watchers:
            callback()

    def _play_out(self, at: float) -> None:
        """No command can come any more: let what is queued play out, held music to the end of its phrase."""
        self.closed = True
        for looping in self.looping.values():
            if looping.cut is None:
                looping.cut = self._phrase_end(looping, at)

    def _next_press(self, due: float | None) -> Press | None:
        """The next command if it comes before *due*: the operator's, or in auto mode the next action's time,
        or armed music that auto-follows."""
        follow = self._follow_at()
        if follow is not None and due is not None and due < follow:
            follow = None  # a message comes first
        if self.closed:
            return self._auto_follow(follow) if follow is not None else None
        if self.control is None:
            if self.next_point >= len(self.points):
                return None
            tick, time0 = self.base
            at = time0 + (self.points[self.next_point].start_tick - tick) / TICKS_PER_SECOND
            if due is not None and due < at:
                return None
            self.clock.sleep_until(at)
            return Press(Command.GO, at, "auto")
        if self.next_point >= len(self.points) and not self.stay and due is None:
            return None
        if self.prompted < self.next_point:
            self.prompted = self.next_point
            self.show(self._prompt(self.next_point))
        press = self.control.wait_until(follow if follow is not None else due)
        return press if press is not None or follow is None else self._auto_follow(follow)

    def _follow_at(self, point: int | None = None) -> float | None:
        """When the armed music at *point* (default: the next) starts by itself: its pre-wait after the GO of the
        point before it (None: it waits for its own GO — after a jump, a resume whose pre-wait has passed, or with
        ``follow`` off)."""
        point = self.next_point if point is None else point
        if (not self.follow or self.control is None or point >= len(self.points)
                or not self.points[point].cue.is_music or self.current != point - 1 or point - 1 not in self.started):
            return None
        before = self.points[point - 1]
        at = self.started[point - 1] + (self.points[point].start_tick - before.start_tick) / TICKS_PER_SECOND
        return at if at >= self.follow_from else None

    def _auto_follow(self, at: float) -> Press:
        self.clock.sleep_until(at)
        return Press(Command.GO, at, "auto")

    def _handle(self, press: Press) -> str:
        """Carry out an operator's command; the line to show the operator, if any."""
        if press.command is Command.GO:
            if self.next_point < len(self.points):
                line = self._go(self.next_point, press.at)
                self._log("go", press, self.points[self.current].cue.id)
                self.next_point += 1
                return line
        elif press.command is Command.STOP:
            self.panic()
            self._clear()
            self.silenced |= set(self.looping)
            self.looping.clear()
            self._log("stop", press, self._current_id())
        elif press.command is Command.FADE:
            self._fade(press.at)
            self._log("fade", press, self._current_id())
        elif press.command is Command.GOTO:
            point = self._point_of(press.cue)
            if point is None:
                return f"no cue {press.cue!r} to jump to"
            self._jump(point, press.at, silence=press.silence)
            self._log("goto", press, press.cue)
        return ""

    def _log(self, event: str, press: Press, cue: str) -> None:
        if self.log is not None:
            extra = {"silence": True} if press.silence else {}
            self.log.write(event, press.at, cue=cue, source=press.source, **extra)

    # -- resuming ------------------------------------------------------------------------------------

    def _restore(self, now: float) -> str:
        """Replay the logged commands (silently, unlogged), then bring back what sounded at *now*: held music
        from its beginning, other music from its position; the line that says so."""
        log, self.log = self.log, None
        for press in self.resume or ():
            if press.command is Command.GO and press.cue in self.point_of_cue:
                self.next_point = self.point_of_cue[press.cue]  # a lost line does not shift the rest
            self._handle(Press(press.command, now + press.at, press.source, press.cue, press.silence))
        self.log = log
        self.prompted, self.follow_from = -1, now
        self.heap = [i for i in self.heap if i.due >= now and i.cue not in self.looping]
        heapq.heapify(self.heap)
        self.queued = Counter(i.cue for i in self.heap)
        self.first_due = {}
        for item in self.heap:
            self.first_due[item.cue] = min(item.due, self.first_due.get(item.cue, item.due))
        said = [self._restart(cue, now) for cue in list(self.looping)]
        said += [f"{label(self.by_id[c])} from {show_clock(self._position(c, now))}" for c in sorted(self.queued)
                 if c in self.by_id and self.by_id[c].cue.is_music and self.first_due[c] <= now + 1.0]
        where = f"at {self.points[self.current].cue.id}" if self.current >= 0 else "before the first GO"
        self.resumed = f"resumed from the log {where}" + ("; " + "; ".join(s for s in said if s) if said else "")
        return self.resumed

    def _restart(self, cue: str, now: float) -> str:
        """A held cue sounding at *now* starts again from its beginning; one already ending is let go."""
        looping = self.looping[cue]
        if looping.cut is not None:
            del self.looping[cue]
            return ""
        looping.anchor, looping.passes = now, 0
        self._queue_pass(looping)
        return f"{label(self.by_id[cue])} restarted from its beginning"

    def _position(self, cue: str, now: float) -> int:
        """How far into music *cue* the rite is at *now*, in ticks (for saying where it resumes)."""
        timing = self.by_id[cue]
        point = max((n for n, p in enumerate(self.points) if p.start_tick <= timing.start_tick), default=-1)
        if point < 0 or point not in self.started:
            return 0
        into = now - self.started[point] - (timing.start_tick - self.points[point].start_tick) / TICKS_PER_SECOND
        return max(0, round(into * TICKS_PER_SECOND))

    def _current_id(self) -> str:
        return self.points[self.current].cue.id if self.current >= 0 else ""

    def _go(self, point: int, press: float) -> str:
        """Start action *point*; the prompt for the next (manual mode)."""
        cue = self.points[point]
        self.current = point
        self.started[point] = press
        self.follow_from = float("-inf")
        if self.rite_started is None:
            self.rite_started = press - (cue.start_tick - self.begin) / TICKS_PER_SECOND
        for looping in self.looping.values():
            if looping.hold.until == cue.cue.id and looping.cut is None:
                looping.cut = self._phrase_end(looping, press)
        self._activate(point, press)
        if self.control is None:
            return ""
        self.prompted = point + 1
        return self._prompt(point + 1, current=cue)

    def _jump(self, point: int, at: float, *, silence: bool) -> None:
        """Make *point* the next to play and the one before it the current, its cue clock restarting now.

        With *silence*, everything stops and is forgotten; without, what sounds plays on, and held music whose
        ending action was jumped over ends at its phrase. Armed music waits for its GO.
        """
        if silence:
            for message in panic_messages(self.channels):
                self.port.send(message)
            self._clear()
            self.looping.clear()
            self.cut.clear()
            self.silenced.clear()
        for looping in self.looping.values():
            if looping.cut is None and self.point_of_cue.get(looping.hold.until, len(self.points)) < point:
                looping.cut = self._phrase_end(looping, at)
        self.next_point = point
        self.current = point - 1
        if point > 0:
            self.started[point - 1] = at
        self.base = (self.points[point].start_tick, at)
        self.prompted = -1
        self.follow_from = float("inf")

    def _point_of(self, cue_id: str) -> int | None:
        """The action point of *cue_id*; for a music cue, the action it plays after."""
        timing = next((t for t in self.timeline.cues if t.cue.id == cue_id), None)
        if timing is None or timing.start_tick < self.begin:
            return None
        before = [n for n, p in enumerate(self.points) if p.start_tick <= timing.start_tick]
        exact = [n for n, p in enumerate(self.points) if p.cue.id == cue_id]
        return exact[0] if exact else (before[-1] if before else 0)

    def _fade(self, at: float) -> None:
        """The held music (else everything playing) down to silence over FADE seconds, then stopped."""
        cues = {c for c, looping in self.looping.items() if looping.cut is None} or {i.cue for i in self.heap}
        channels = sorted({i.message.channel for i in self.heap if i.cue in cues and hasattr(i.message, "channel")})
        if not channels:
            return
        end = at + FADE
        for step in range(1, FADE_STEPS + 1):
            value = round(FULL_VOLUME * (1 - step / FADE_STEPS))
            for message in volume_messages(channels, value):
                self._push(at + FADE * step / FADE_STEPS, "", message)
        for message in panic_messages(channels) + volume_messages(channels, FULL_VOLUME):
            self._push(end, "", message)
        for cue in cues:
            if cue in self.looping:
                self.looping[cue].cut = end
                self.silenced.add(cue)
            else:
                self.cut[cue] = end

    def status(self) -> PlayerStatus:
        """Where the rite stands now, taken under the lock: safe to call from any thread."""
        with self.lock:
            now = self.clock.now()
            return PlayerStatus(
                now=now, current=self._current_id() or None, current_started=self.started.get(self.current),
                next=self.actions[self.next_point] if self.next_point < len(self.actions) else None,
                first_started=self.rite_started, first_tick=None if self.rite_started is None else self.begin,
                playing=tuple(Playing(c, self._until(c)) for c in sorted(self.queued)
                              if c and self.queued[c] > 0 and self.first_due.get(c, now) <= now
                              and not self._cut_by(c, now)),
                ended=self.ended, priority=self.priority, begin_tick=self.begin, actions=self.actions,
                armed=self.together.get(self.actions[self.next_point], ()) if self.next_point < len(self.actions)
                else (), follow_at=self._follow_at(), resumed=self.resumed)

    def _until(self, cue: str) -> str:
        looping = self.looping.get(cue)
        return looping.hold.until if looping is not None else ""

    def _cut_by(self, cue: str, now: float) -> bool:
        """Whether *cue*'s remaining messages were cut (STOP at a phrase, FADE) at or before *now*."""
        looping = self.looping.get(cue)
        cut = looping.cut if looping is not None else self.cut.get(cue)
        return cut is not None and cut <= now

    def _activate(self, segment: int, press: float) -> None:
        base = self.points[segment].start_tick if segment >= 0 else self.begin
        for tick, cue, message in self.by_segment.get(segment, []):
            if cue in self.held:
                hold = self.held[cue]
                stopped = segment >= self.point_of_cue.get(hold.until, len(self.points)) or cue in self.silenced
                if cue not in self.looping and not stopped:
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
            cut = self.cut.get(item.cue)
            return cut is not None and (item.due > cut if item.message.type == "note_off" else item.due >= cut)
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
        if self.queued[cue] <= 0 or due < self.first_due.get(cue, due):
            self.first_due[cue] = due
        self.queued[cue] += 1
        self.seq += 1

    def _clear(self) -> None:
        """Forget every queued message."""
        self.heap.clear()
        self.queued.clear()
        self.first_due.clear()

    def _prompt(self, point: int, current: CueTiming | None = None) -> str:
        nxt = self.points[point] if point < len(self.points) else None
        parts = []
        if current is not None:
            parts.append(f"▶ {current.cue.id}: {label(current)}")
        if nxt is not None:
            words = f" 「{nxt.cue.words}」" if nxt.cue.words else ""
            follow = self._follow_at(point)
            armed = f" (armed: starts by itself in {follow - self.clock.now():.0f} s)" if follow is not None else ""
            parts.append(f"next GO {point + 1}/{len(self.points)} ({show_clock(nxt.start_tick)}): {nxt.cue.id}: "
                         f"{label(nxt)}{words}{armed}")
        else:
            parts.append("no more cues: the music plays out")
        return "  |  ".join(parts)

    def panic(self) -> None:
        """All notes off and all sound off on every channel used; errors here are ignored (the port may be gone)."""
        for message in panic_messages(self.channels):
            try:
                self.port.send(message)
            except Exception:
                break


def start_tick(timeline: Timeline, start: str | None) -> int:
    """The tick of cue *start* (0 for None); UnknownNameError with suggestions for a cue the timeline lacks."""
    if start is None:
        return 0
    for t in timeline.cues:
        if t.cue.id == start:
            return t.start_tick
    raise UnknownNameError("cue", start, suggest(start, [t.cue.id for t in timeline.cues]))


def label(timing: CueTiming) -> str:
    """An action's words, or '♪ ' and the music with its programme."""
    cue = timing.cue
    return f"♪ {music_name(cue)}" if cue.music else cue.action


def music_name(cue: Cue) -> str:
    """A music cue as the operator names it: its kind and its programme (金奏 肆夏)."""
    return f"{cue.music.value if cue.music else ''} {programme(cue)}".strip()


def go_points(timeline: Timeline, begin: int, *, music: bool) -> tuple[CueTiming, ...]:
    """The points GO steps through from *begin*: every action and, with *music*, each moment music begins that
    no action begins with (one point for music that begins together, named by the longest of it)."""
    actions = [t for t in timeline.cues if not t.cue.is_music and t.start_tick >= begin]
    if not music:
        return tuple(actions)
    taken = {t.start_tick for t in actions}
    order = {t.cue.id: n for n, t in enumerate(timeline.cues)}
    points = list(actions)
    longest_first = sorted((t for t in timeline.cues if t.cue.is_music and t.start_tick > begin),
                           key=lambda t: (t.start_tick, t.start_tick - t.end_tick, order[t.cue.id]))
    for t in longest_first:
        if t.start_tick not in taken:
            taken.add(t.start_tick)
            points.append(t)
    return tuple(sorted(points, key=lambda t: (t.start_tick, order[t.cue.id])))


def _segments(points: list[int], timed: list[tuple[int, str, Any]]) -> dict[int, list[tuple[int, str, Any]]]:
    """Messages by the GO point they follow (-1: before the first)."""
    out: dict[int, list[tuple[int, str, Any]]] = {}
    index = -1
    for tick, cue, message in timed:
        while index + 1 < len(points) and points[index + 1] <= tick:
            index += 1
        out.setdefault(index, []).append((tick, cue, message))
    return out
