"""The operator's commands and where they come from: one queue, one guard, every source.

A command is GO (start the next action), STOP (all notes and sound off at
once), FADE (the held music fades out, then stops), GOTO a cue (jump back or
forward; the next GO plays from there), STOP_CUE and FADE_CUE (one sounding
cue, the fade over a number of seconds), LEVEL (the master level) or QUIT (the
console is closing); each is a row of ``commands.COMMANDS``, which names it for
every source, with its number's bounds (``commands.VALUES``).
Sources: the console page, the terminal (Enter = GO; ``s`` STOP, ``f`` FADE,
``g CUE`` GOTO), OSC (``osc``) and a MIDI foot pedal. One guard serves them all: a GO
within ``guard`` seconds of the last accepted GO, from whatever source, is
ignored as a double press; so is a FADE or a GOTO within ``guard`` seconds of the
last of its kind (a flood of them is at most two a second): the rows ``guarded``.
STOP is never refused.
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from yuesheng.errors import InvalidValueError
from yuesheng.live.commands import Command, by_typed, guarded, typed_help, value_of


class Clock(Protocol):
    def now(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Press:
    """A command as received: what, when (the player's clock), from where, and the cue for GOTO."""

    command: Command
    at: float
    source: str
    cue: str = ""
    silence: bool = False  # GOTO: stop everything that sounds (else it plays on)
    value: float | None = None  # a command's number (``commands.VALUES``): a fade's seconds, the master level


class Control:
    """Commands from every source, through one guard, to the player."""

    def __init__(self, clock: Clock, *, guard: float = 0.5) -> None:
        self.clock, self.guard = clock, guard
        self.presses: queue.Queue[Press] = queue.Queue()
        self.lock = threading.Lock()
        self.last: dict[Command, float] = {}  # when each guarded command was last accepted
        self.ended = ""  # why no more commands can come (a source closed), if so

    def submit(self, command: Command, source: str, cue: str = "", *, silence: bool = False,
               value: float | None = None) -> bool:
        """Queue a command; False if it is a GO, FADE or GOTO inside the guard (ignored)."""
        with self.lock:
            at = self.clock.now()
            if guarded(command):
                if command in self.last and at - self.last[command] < self.guard:
                    return False
                self.last[command] = at
            self.presses.put(Press(command, at, source, cue, silence, value))
        return True

    def close(self, why: str) -> None:
        """No source will send anything more: a player waiting for GO is told *why*."""
        self.ended = why
        self.presses.put(Press(Command.QUIT, self.clock.now(), "end", why))

    def wait_until(self, deadline: float | None) -> Press | None:
        """The next command before *deadline* (None: wait as long as it takes), else None."""
        timeout = None if deadline is None else max(0.0, deadline - self.clock.now() - 0.0015)
        try:
            return self.presses.get(timeout=timeout)
        except queue.Empty:
            return None


def read_keyboard(control: Control, lines: Iterable[str], *, notify: Callable[[str], None] = print,
                  close_at_end: bool = True) -> threading.Thread:
    """Terminal lines as commands (the words of ``commands.COMMANDS``), read in a daemon thread.

    At the end of input the control is closed (unless other sources remain: *close_at_end*
    false), so a player waiting for GO stops with a message instead of waiting forever.
    """

    def read() -> None:
        for line in lines:
            word, *rest = line.split() or [""]
            row = by_typed(word)
            named = row is not None and (row.target or row.sounding)
            cue = rest.pop(0) if named and rest else ""
            value, why = value_of(row, rest.pop(0) if rest else None) if row is not None else (None, "")
            if row is not None and not why and not rest and (cue or not named):
                control.submit(row.command, "key", cue, value=value)
            else:
                notify(why or f"keys: {typed_help()} — not {line.strip()!r}")
        if close_at_end:
            control.close("the terminal's input ended (no more GO can come from it)")

    thread = threading.Thread(target=read, name="yuesheng-keys", daemon=True)
    thread.start()
    return thread


# --- a MIDI foot pedal ------------------------------------------------------------------------------

_PEDAL = re.compile(r"(?P<port>.*?)(?::(?P<kind>note|cc)(?P<number>\d{1,3}))?")


@dataclass(frozen=True, slots=True)
class Pedal:
    """Which MIDI input, and which note or controller on it, means GO (any note-on or pedal-down CC if unsaid)."""

    port: str
    kind: str = ""  # "note" | "cc" | "" (either)
    number: int | None = None

    @classmethod
    def parse(cls, text: str) -> Pedal:
        """'FootSwitch' | 'FootSwitch:note60' | 'FootSwitch:cc64' (a port name may itself hold colons)."""
        match = _PEDAL.fullmatch(text)
        assert match is not None  # the pattern matches every string
        number = int(match["number"]) if match["number"] else None
        if not match["port"] or (number is not None and number > 127):
            raise InvalidValueError("--pedal", text, "PORT, PORT:noteN or PORT:ccN with N 0..127",
                                    message=f"--pedal {text!r}: expected PORT, PORT:noteN or PORT:ccN with N 0..127")
        return cls(match["port"], match["kind"] or "", number)

    def pressed(self, message: Any) -> bool:
        """Whether a MIDI input message is this pedal going down."""
        if message.type == "note_on" and message.velocity > 0 and self.kind in ("", "note"):
            return self.number is None or message.note == self.number
        if message.type == "control_change" and message.value >= 64 and self.kind in ("", "cc"):
            return self.number is None or message.control == self.number
        return False

    def listener(self, control: Control) -> Callable[[Any], None]:
        """A mido input callback that turns this pedal's presses into GO."""

        def on_message(message: Any) -> None:
            if self.pressed(message):
                control.submit(Command.GO, "pedal")

        return on_message
