"""The cueing state machine of live playback: what is armed, what a GO fires, what STOP, FADE and a jump change.

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
PAUSE sets the whole queue aside (every channel's notes off at once) and holds the rite's clocks; RESUME puts it
back, every message later by the time paused, so the music goes on from where it stopped and armed music's
pre-wait, a held cue's phrases and a fade in progress with it. Any other command but the master level resumes
first, then acts (a GO while paused goes on with the show).
``restore`` replays a show's logged commands, then brings back what was sounding (or, paused, what was set aside).

Time is absolute: every message's due time is its anchor (a GO press, or the
start) plus its offset in the timeline, so no error accumulates over an hour;
each GO re-anchors what follows.

Nothing here waits, sleeps, sends or reads a clock: every moment is an argument. The pump (``player``) hands the
machine each command (``press``) and takes each due message from it (``take``); what a command asks of the port
(silence) and of the log comes back as an ``Outcome``. A new command's behaviour is a handler in ``handlers``.
"""

from __future__ import annotations

import heapq
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from yuesheng.cuesheet import Cue
from yuesheng.cuesheet.anchors import dependencies
from yuesheng.cuesheet.zhong import programme
from yuesheng.errors import UnknownNameError
from yuesheng.live.commands import Command, spec
from yuesheng.live.control import Press
from yuesheng.outputs.midi import panic_messages, volume_messages
from yuesheng.text import suggest
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Hold, Timeline
from yuesheng.timeline import clock as show_clock

FADE = 3.0  # seconds a FADE takes
FADE_STEPS = 24
FULL_VOLUME = 100  # General MIDI's default channel volume, restored after a fade


@dataclass(order=True)
class Item:
    """A message in the queue: when it is due, and the cue it belongs to ('' for a fade's own messages)."""

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
    follow: bool = True  # armed music starts by itself after its pre-wait (else it waits for its own GO)
    paused: float | None = None  # when the music was paused (None: it is not)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a command did, for the pump: a line for the operator, whether every channel is to be silenced now,
    and the log's event and the cue it names (None: nothing to log)."""

    line: str = ""
    silence: bool = False
    log: tuple[str, str] | None = None


class Cueing:
    """The state of a rite being played: the queue of timed messages, the GO points, what is held and armed.

    *timed* is the timeline's messages as ``outputs.midi.live_messages`` gives them; *manual*: GO comes from the
    operator (else each action starts at its planned time); *follow*: armed music starts by itself.
    """

    def __init__(self, timeline: Timeline, timed: Sequence[tuple[int, str, Any]], *, begin: int = 0,
                 manual: bool = False, follow: bool = True) -> None:
        self.timeline, self.begin, self.manual, self.follow = timeline, begin, manual, follow
        self.points: tuple[CueTiming, ...] = go_points(timeline, begin, music=manual)
        root = beginnings(timeline)
        self.together = {t.cue.id: tuple(c.cue.id for c in timeline.cues if c.cue.is_music
                                         and root[c.cue.id] == root[t.cue.id]) for t in self.points if t.cue.is_music}
        self.actions = tuple(t.cue.id for t in self.points)
        groups = {c: n for n, t in enumerate(self.points) for c in self.together.get(t.cue.id, ())}
        self.by_segment = _segments([t.start_tick for t in self.points], groups, [m for m in timed if m[0] >= begin])
        self.held = {c: h for c, h in timeline.holds.items() if h.start_tick >= begin}
        self.held_messages = {c: [(tick, m) for tick, cue, m in timed if cue == c] for c in self.held}
        self.point_of_cue = {t.cue.id: n for n, t in enumerate(self.points)}
        self.by_id = {t.cue.id: t for t in timeline.cues}
        self.heap: list[Item] = []
        self.queued: Counter[str] = Counter()  # cue → its messages in the heap
        self.first_due: dict[str, float] = {}  # cue → when its earliest queued message sounds
        self.seq = 0
        self.looping: dict[str, _Looping] = {}
        self.cut: dict[str, float] = {}  # cue → when its remaining messages stop sounding (a fade's end)
        self.silenced: set[str] = set()  # held cues stopped by STOP or FADE: not started again until a jump
        self.next_point = 0
        self.current = -1  # the point last started
        self.started: dict[int, float] = {}  # point → when its GO came (or, for the cue before a jump's, the jump)
        self.rite_started: float | None = None  # when the begin tick was, reckoned from the first GO; never moved
        self.base = (begin, 0.0)  # auto mode: this tick plays at this time
        self.follow_from = float("-inf")  # no auto-follow due before this moment (a resume)
        self.prompted = -1  # the point whose prompt was last given
        self.closed = False  # no command can come: what is queued plays out
        self.resumed = ""  # what a resume brought back, said for the operator
        self.level = FULL_VOLUME  # the master level: every channel's volume, and what a fade restores
        self.paused: float | None = None  # when PAUSE set the queue aside (None: not paused)
        self.set_aside: list[Item] = []  # the queue while paused
        self.channels = sorted({m.channel for _, _, m in timed if hasattr(m, "channel")})
        self.handlers: dict[Command, Callable[[Press], Outcome]] = {
            Command.GO: self._on_go, Command.STOP: self._on_stop, Command.FADE: self._on_fade,
            Command.GOTO: self._on_goto, Command.STOP_CUE: self._on_stop_cue, Command.FADE_CUE: self._on_fade_cue,
            Command.LEVEL: self._on_level, Command.PAUSE: self._on_pause, Command.RESUME: self._on_resume}

    # -- what the pump asks ----------------------------------------------------------------------------

    def start(self, origin: float) -> None:
        """The rite's begin tick plays at *origin*; what comes before the first GO point is queued."""
        self.base = (self.begin, origin)
        if self.by_segment.get(-1):
            self._activate(-1, origin)

    def press(self, press: Press) -> Outcome:
        """Carry out an operator's command (any but QUIT, which is the pump's) at ``press.at``; while paused, any
        but PAUSE, RESUME and the master level resumes first."""
        if self.paused is not None and press.command not in (Command.PAUSE, Command.RESUME, Command.LEVEL):
            self._unpause(press.at)
        return self.handlers[press.command](press)

    def due(self) -> float | None:
        """When the next queued message is due (None: nothing is queued)."""
        return self.heap[0].due if self.heap else None

    def take(self) -> Item | None:
        """The next queued message, to send at its ``due``; None if it is dropped (cut by a STOP, a FADE, a phrase
        end). Held music's next pass is queued as its last one is taken."""
        item = heapq.heappop(self.heap)
        self.queued[item.cue] -= 1
        return None if self._dropped(item) else item

    def begins(self, item: Item) -> bool:
        """Whether *item* is the first sound of its cue (the status changes)."""
        return bool(item.cue) and item.due == self.first_due.get(item.cue)

    @property
    def finished(self) -> bool:
        """Every GO point has been played."""
        return self.next_point >= len(self.points)

    def auto_go(self, due: float | None) -> float | None:
        """When the machine gives itself the next GO, if not after the message due at *due*: in auto mode the next
        action's planned time, in manual mode the moment armed music follows by itself."""
        if self.paused is not None:
            at = None
        elif self.manual:
            at = self.follow_at()
        elif not self.finished:
            tick, time0 = self.base
            at = time0 + (self.points[self.next_point].start_tick - tick) / TICKS_PER_SECOND
        else:
            at = None
        return None if at is None or (due is not None and due < at) else at

    def prompt_once(self, now: float) -> str:
        """The prompt for the next GO the first time it is asked for since the next point changed ('' after)."""
        if self.prompted >= self.next_point:
            return ""
        self.prompted = self.next_point
        return self._prompt(self.next_point, now)

    def play_out(self, at: float) -> None:
        """No command can come any more: let what is queued play out, held music to the end of its phrase."""
        self.closed = True
        for looping in self.looping.values():
            if looping.cut is None:
                looping.cut = self._phrase_end(looping, at)

    def follow_at(self, point: int | None = None) -> float | None:
        """When the armed music at *point* (default: the next) starts by itself: its pre-wait after the GO of the
        point before it (None: it waits for its own GO — after a jump, a resume whose pre-wait has passed, or with
        ``follow`` off)."""
        point = self.next_point if point is None else point
        if (not self.follow or not self.manual or point >= len(self.points)
                or not self.points[point].cue.is_music or self.current != point - 1 or point - 1 not in self.started):
            return None
        before = self.points[point - 1]
        at = self.started[point - 1] + (self.points[point].start_tick - before.start_tick) / TICKS_PER_SECOND
        return at if at >= self.follow_from else None

    def status(self, now: float, *, ended: str = "", priority: str = "") -> PlayerStatus:
        """Where the rite stands at *now*; *ended* and *priority* are the pump's to say."""
        nxt = self.next_point
        return PlayerStatus(
            now=now, current=self._current_id() or None, current_started=self.started.get(self.current),
            next=self.actions[nxt] if nxt < len(self.actions) else None,
            first_started=self.rite_started, first_tick=None if self.rite_started is None else self.begin,
            playing=tuple(Playing(c, self._until(c)) for c in sorted(self.queued)
                          if c and self.queued[c] > 0 and self.first_due.get(c, now) <= now
                          and not self._cut_by(c, now)),
            ended=ended, priority=priority, begin_tick=self.begin, actions=self.actions,
            armed=self.together.get(self.actions[nxt], ()) if nxt < len(self.actions) else (),
            follow_at=None if self.paused is not None else self.follow_at(), resumed=self.resumed,
            follow=self.follow and self.manual, paused=self.paused)

    # -- the commands ----------------------------------------------------------------------------------

    def _on_go(self, press: Press) -> Outcome:
        """GO: the next point, or the point a GO names (the page's playhead, moved off the next: a jump there, what
        sounds playing on, then its GO)."""
        point = self.point_of_cue.get(press.cue) if press.cue else None
        if point is not None and point != self.next_point:
            self._jump(point, press.at, silence=False)
        if self.finished:
            return Outcome()
        line = self._go(self.next_point, press.at)
        self.next_point += 1
        return self._done(press, line)

    def _on_stop(self, press: Press) -> Outcome:
        self._clear()
        self.silenced |= set(self.looping)
        self.looping.clear()
        return self._done(press, silence=True)

    def _on_fade(self, press: Press) -> Outcome:
        self._fade(press.at)
        return self._done(press)

    def _on_stop_cue(self, press: Press) -> Outcome:
        """One sounding cue stopped at once (all notes off on its channels), the rest sounding on."""
        return self._done(press, self._fade(press.at, {press.cue}, 0.0))

    def _on_fade_cue(self, press: Press) -> Outcome:
        """One sounding cue faded out over the seconds given, then stopped."""
        seconds = FADE if press.value is None else press.value
        return self._done(press, self._fade(press.at, {press.cue}, seconds))

    def _on_level(self, press: Press) -> Outcome:
        """The master level: every channel's volume now, and the level a fade ends by restoring."""
        self.level = round(FULL_VOLUME if press.value is None else press.value)
        for message in volume_messages(self.channels, self.level):
            self._push(press.at, "", message)
        return self._done(press, f"master level {self.level}")

    def _on_pause(self, press: Press) -> Outcome:
        """Everything queued set aside and every channel silenced (no note hangs); the clocks held."""
        if self.paused is not None:
            return Outcome("already paused: RESUME goes on")
        self.paused = press.at
        self.set_aside, self.heap = self.heap, []
        return self._done(press, "paused: RESUME goes on from here", silence=True)

    def _on_resume(self, press: Press) -> Outcome:
        if self.paused is None:
            return Outcome("not paused")
        self._unpause(press.at)
        return self._done(press, "resumed")

    def _unpause(self, at: float) -> None:
        """The queue set aside by PAUSE put back, every moment still to come later by the time paused."""
        assert self.paused is not None
        late = max(0.0, at - self.paused)
        for item in self.set_aside:
            item.due += late
        self.heap = self.set_aside + self.heap
        heapq.heapify(self.heap)
        self.set_aside, self.paused = [], None
        self.first_due = {cue: due + late for cue, due in self.first_due.items()}
        self.cut = {cue: end + late for cue, end in self.cut.items()}
        for looping in self.looping.values():
            looping.anchor += late
            looping.cut = None if looping.cut is None else looping.cut + late
        if self.current in self.started:
            self.started[self.current] += late
        self.base = (self.base[0], self.base[1] + late)
        self.follow_from += late

    def _on_goto(self, press: Press) -> Outcome:
        point = self._point_of(press.cue)
        if point is None:
            return Outcome(f"no cue {press.cue!r} to jump to")
        self._jump(point, press.at, silence=press.silence)
        return self._done(press, silence=press.silence)

    def _done(self, press: Press, line: str = "", *, silence: bool = False) -> Outcome:
        """A command carried out: its log line names the cue it names, else the action current after it."""
        row = spec(press.command)
        if row is None:
            return Outcome(line, silence)
        return Outcome(line, silence, (row.event, press.cue if row.target or row.sounding else self._current_id()))

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
        if not self.manual:
            return ""
        self.prompted = point + 1
        return self._prompt(point + 1, press, current=cue)

    def _jump(self, point: int, at: float, *, silence: bool) -> None:
        """Make *point* the next to play and the one before it the current, its cue clock restarting now.

        With *silence*, everything stops and is forgotten; without, what sounds plays on, and held music whose
        ending action was jumped over ends at its phrase. Armed music waits for its GO.
        """
        if silence:
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
        timing = self.by_id.get(cue_id)
        if timing is None or timing.start_tick < self.begin:
            return None
        before = [n for n, p in enumerate(self.points) if p.start_tick <= timing.start_tick]
        exact = [n for n, p in enumerate(self.points) if p.cue.id == cue_id]
        return exact[0] if exact else (before[-1] if before else 0)

    def _fade(self, at: float, only: set[str] | None = None, seconds: float = FADE) -> str:
        """*only* these cues (default: the held music, else everything playing) down to silence over *seconds*,
        then stopped, their channels' notes off and their volume back at the master level; '' or why nothing was."""
        cues = only if only is not None else (
            {c for c, looping in self.looping.items() if looping.cut is None} or {i.cue for i in self.heap})
        channels = sorted({i.message.channel for i in self.heap if i.cue in cues and hasattr(i.message, "channel")})
        if not channels:
            return f"{', '.join(sorted(cues))}: nothing of it sounds" if only is not None else ""
        end = at + seconds
        steps = FADE_STEPS if seconds > 0 else 0
        for step in range(1, steps + 1):
            value = round(self.level * (1 - step / steps))
            for message in volume_messages(channels, value):
                self._push(at + seconds * step / steps, "", message)
        for message in panic_messages(channels) + volume_messages(channels, self.level):
            self._push(end, "", message)
        for cue in cues:
            if cue in self.looping:
                self.looping[cue].cut = end
                self.silenced.add(cue)
            else:
                self.cut[cue] = end
        return ""

    # -- resuming --------------------------------------------------------------------------------------

    def restore(self, presses: Sequence[Press], now: float, warning: str = "") -> str:
        """Replay logged commands (at their moments, before *now*), then bring back what sounded at *now*: held
        music from its beginning, other music from its position; the line that says so (with *warning*, what the
        operator must know of the log: its clock not trusted)."""
        self.base = (self.begin, now)
        for press in presses:
            if press.command is Command.GO and press.cue in self.point_of_cue:
                self.next_point = self.point_of_cue[press.cue]  # a lost line does not shift the rest
            self.press(press)
        self.prompted, self.follow_from = -1, now
        if self.paused is not None:
            return self._restore_paused(now, warning)
        self.heap = [i for i in self.heap if i.due >= now and i.cue not in self.looping]
        heapq.heapify(self.heap)
        if self.level != FULL_VOLUME:  # the master level the show had, set again
            for message in volume_messages(self.channels, self.level):
                self._push(now, "", message)
        self._count_queued(self.heap)
        said = [self._restart(cue, now) for cue in list(self.looping)]
        said += [f"{label(self.by_id[c])} from {show_clock(self._position(c, now))}" for c in sorted(self.queued)
                 if c in self.by_id and c not in self.looping and self.by_id[c].cue.is_music
                 and self.first_due[c] <= now + 1.0]  # held music was said above: restarted from its beginning
        return self._resumed_line(said, warning)

    def _restore_paused(self, now: float, warning: str) -> str:
        """A show paused when its console stopped: it stays paused, its queue set aside as the pause left it (held
        music's passes and all), so RESUME goes on from where the music stopped."""
        assert self.paused is not None
        self.set_aside = [i for i in self.set_aside if i.due >= self.paused]  # sounded before the pause
        if self.level != FULL_VOLUME:
            self.heap = [Item(now, 1, self.seq + n, "", m)
                         for n, m in enumerate(volume_messages(self.channels, self.level))]
            self.seq += len(self.heap)
        self._count_queued(self.set_aside + self.heap)
        music = sorted({label(self.by_id[i.cue]) for i in self.set_aside if i.cue in self.by_id
                        and self.by_id[i.cue].cue.is_music})
        return self._resumed_line([f"PAUSED ({', '.join(music) or 'nothing sounding'}): RESUME goes on from where "
                                   f"it paused"], warning)

    def _count_queued(self, items: list[Item]) -> None:
        self.queued = Counter(i.cue for i in items)
        self.first_due = {}
        for item in items:
            self.first_due[item.cue] = min(item.due, self.first_due.get(item.cue, item.due))

    def _resumed_line(self, said: list[str], warning: str) -> str:
        where = f"at {self.points[self.current].cue.id}" if self.current >= 0 else "before the first GO"
        self.resumed = f"resumed from the log {where}" + ("; " + "; ".join(s for s in said if s) if said else "")
        self.resumed += f" — WARNING: {warning}" if warning else ""
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

    # -- the queue -------------------------------------------------------------------------------------

    def _current_id(self) -> str:
        return self.points[self.current].cue.id if self.current >= 0 else ""

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

    def _dropped(self, item: Item) -> bool:
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
        heapq.heappush(self.heap, Item(due, 0 if message.type == "note_off" else 1, self.seq, cue, message))
        if self.queued[cue] <= 0 or due < self.first_due.get(cue, due):
            self.first_due[cue] = due
        self.queued[cue] += 1
        self.seq += 1

    def _clear(self) -> None:
        """Forget every queued message."""
        self.heap.clear()
        self.queued.clear()
        self.first_due.clear()

    def _prompt(self, point: int, now: float, current: CueTiming | None = None) -> str:
        nxt = self.points[point] if point < len(self.points) else None
        parts = []
        if current is not None:
            parts.append(f"▶ {current.cue.id}: {label(current)}")
        if nxt is not None:
            words = f" 「{nxt.cue.words}」" if nxt.cue.words else ""
            follow = self.follow_at(point)
            armed = f" (armed: starts by itself in {follow - now:.0f} s)" if follow is not None else ""
            parts.append(f"next GO {point + 1}/{len(self.points)} ({show_clock(nxt.start_tick)}): {nxt.cue.id}: "
                         f"{label(nxt)}{words}{armed}")
        else:
            parts.append("no more cues: the music plays out")
        return "  |  ".join(parts)


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
    no action begins with (one point for music that begins together, named by the longest of it).

    "Begins with" is the cue sheet's, not the clock's: two cues begin together when their starts hang on the same
    point with the same delay (``beginnings``). So a timing file that makes an action last no time (a fast
    rehearsal) never folds the music after it into the next action: the points, and their numbers, are the same
    with or without one.
    """
    actions = [t for t in timeline.cues if not t.cue.is_music and t.start_tick >= begin]
    if not music:
        return tuple(actions)
    root = beginnings(timeline)
    taken = {root[t.cue.id] for t in actions}
    order = {t.cue.id: n for n, t in enumerate(timeline.cues)}
    points = list(actions)
    longest_first = sorted((t for t in timeline.cues if t.cue.is_music and t.start_tick > begin),
                           key=lambda t: (t.start_tick, t.start_tick - t.end_tick, order[t.cue.id]))
    for t in longest_first:
        if root[t.cue.id] not in taken:
            taken.add(root[t.cue.id])
            points.append(t)
    return tuple(sorted(points, key=lambda t: (t.start_tick, order[t.cue.id])))


Beginning = tuple[str, str, Fraction]  # the point a cue's start hangs on at last (cue id, "start" | "end"), delay


def beginnings(timeline: Timeline) -> dict[str, Beginning]:
    """Each cue's start traced through every "with" to what it hangs on at last, and the delays on the way: cues
    with the same beginning begin together by the cue sheet, whatever their durations."""
    cues = tuple(t.cue for t in timeline.cues)
    by_id = {c.id: c for c in cues}
    deps = dependencies(cues)
    out: dict[str, Beginning] = {}

    def trace(cue_id: str, seen: frozenset[str]) -> Beginning:
        if cue_id in out:
            return out[cue_id]
        start = by_id[cue_id].start
        delay = start.delay if start is not None and start.cue in by_id else Fraction(0)
        on = deps.get((cue_id, "start"), [])
        if not on:
            found: Beginning = (cue_id, "start", Fraction(0))
        elif on[0][1] == "start" and on[0][0] not in seen:
            first, kind, more = trace(on[0][0], seen | {cue_id})
            found = (first, kind, more + delay)
        else:
            found = (on[0][0], on[0][1], delay)
        out[cue_id] = found
        return found

    for cue in cues:
        trace(cue.id, frozenset())
    return out


def _segments(points: list[int], groups: dict[str, int],
              timed: list[tuple[int, str, Any]]) -> dict[int, list[tuple[int, str, Any]]]:
    """Messages by the GO point they follow (-1: before the first). Where points share a tick (an action timed to
    last no time, and the music after it), a message at that tick goes to its music's point (*groups*: music cue →
    its point), any other to the first of them."""
    out: dict[int, list[tuple[int, str, Any]]] = {}
    index = -1
    for tick, cue, message in timed:
        while index + 1 < len(points) and points[index + 1] <= tick:
            index += 1
        at = index
        if at > 0 and points[at - 1] == tick:
            own = groups.get(cue)
            at = own if own is not None and points[own] == tick else points.index(tick)
        out.setdefault(at, []).append((tick, cue, message))
    return out
