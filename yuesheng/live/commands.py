"""The operator's commands in one table: every source, the guard, the log and its readers take a command from here.

A row says how one command is named wherever it travels: the words typed at the terminal, the key on the page,
its OSC address, its name in the page's JSON, the event of its log line; whether the guard may refuse it (a second
press within the guard; a command never refused is the one that must always get through, and its key acts from
anywhere on the page, a dialog or a text field included); whether it names a cue to go to (its log line then names
that cue); whether it starts an action (its log line names the action, and ``retime`` measures from one to the
next); what the operator calls it; and the command that undoes it, if the two share one place on the page
(PAUSE and RESUME).

A new console control is a member of ``Command`` and a row of ``COMMANDS``; then only its behaviour, a handler in
``cueing``. ``tests/test_commands.py`` holds every place to the table.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any


class Command(Enum):
    GO = "go"
    STOP = "stop"
    FADE = "fade"
    GOTO = "goto"
    STOP_CUE = "stop-cue"
    FADE_CUE = "fade-cue"
    LEVEL = "level"
    PAUSE = "pause"
    RESUME = "resume"
    QUIT = "quit"  # from no source: the control says that no command can come any more


@dataclass(frozen=True, slots=True)
class Spec:
    """One command as every place names it."""

    command: Command
    typed: tuple[str, ...]  # words at the terminal ("" is Enter); one that names a cue is followed by it
    key: str  # the page's key: a KeyboardEvent key ("Space" for the space bar), "" for none
    osc: str  # OSC address
    web: str  # "command" in the page's JSON (POST /command, a WebSocket frame)
    event: str  # "event" of its log line
    guarded: bool  # a second press within the guard is refused
    target: bool  # it names a cue to go to
    starts: bool  # it starts an action (at most one row)
    said: str  # what the operator calls it
    sounding: bool = False  # it names a sounding cue (the cue follows its word at the terminal, first at OSC)
    value: str = ""  # what its number is (a key of VALUES), "" if it takes none; at the terminal and OSC it is last
    pair: str = ""  # the web name of the command that undoes it: the two share one place in the page's fixed bar

    @property
    def names_cue(self) -> bool:
        """Its log line always names a cue: the action it started, the cue it went to, or the sounding cue it acts on
        (a STOP or a FADE names the action current, none before the first GO)."""
        return self.starts or self.target or self.sounding


COMMANDS: tuple[Spec, ...] = (
    Spec(Command.GO, typed=("",), key="Space", osc="/yuesheng/go", web="go", event="go",
         guarded=True, target=False, starts=True, said="GO"),
    Spec(Command.STOP, typed=("s", "stop"), key="Escape", osc="/yuesheng/stop", web="stop", event="stop",
         guarded=False, target=False, starts=False, said="STOP ALL"),
    Spec(Command.FADE, typed=("f", "fade"), key="f", osc="/yuesheng/fade", web="fade", event="fade",
         guarded=True, target=False, starts=False, said="FADE"),
    Spec(Command.GOTO, typed=("g", "goto"), key="", osc="/yuesheng/goto", web="goto", event="goto",
         guarded=True, target=True, starts=False, said="jump"),
    Spec(Command.STOP_CUE, typed=("x", "stop-cue"), key="", osc="/yuesheng/stop-cue", web="stop-cue",
         event="stop-cue", guarded=False, target=False, starts=False, said="STOP this", sounding=True),
    Spec(Command.FADE_CUE, typed=("fc", "fade-cue"), key="", osc="/yuesheng/fade-cue", web="fade-cue",
         event="fade-cue", guarded=True, target=False, starts=False, said="FADE this", sounding=True,
         value="seconds"),
    Spec(Command.LEVEL, typed=("l", "level"), key="", osc="/yuesheng/level", web="level", event="level",
         guarded=False, target=False, starts=False, said="master level", value="level"),
    Spec(Command.PAUSE, typed=("p", "pause"), key="p", osc="/yuesheng/pause", web="pause", event="pause",
         guarded=True, target=False, starts=False, said="PAUSE", pair="resume"),
    Spec(Command.RESUME, typed=("r", "resume"), key="r", osc="/yuesheng/resume", web="resume", event="resume",
         guarded=True, target=False, starts=False, said="RESUME", pair="pause"),
)


@dataclass(frozen=True, slots=True)
class Value:
    """A command's number: its bounds, and what it is when a source leaves it out."""

    low: float
    high: float
    default: float
    unit: str


VALUES = {"seconds": Value(0.0, 60.0, 3.0, "s"), "level": Value(0.0, 127.0, 100.0, "")}


def value_of(row: Spec, given: object) -> tuple[float | None, str]:
    """*row*'s number from what a source *given* (None: its default), and why not ('' if it is one)."""
    if not row.value:
        return None, ""
    bounds = VALUES[row.value]
    if given is None or given == "":
        return bounds.default, ""
    try:
        number = float(given) if isinstance(given, int | float | str) and not isinstance(given, bool) else math.nan
    except (ValueError, OverflowError):
        number = math.nan
    if not bounds.low <= number <= bounds.high:  # NaN is never within
        return None, f"{row.said}: {row.value} {given!r}, expected {bounds.low:g} to {bounds.high:g}"
    return number, ""


def spec(command: Command) -> Spec | None:
    """The row of *command* (None for QUIT, which no source sends)."""
    return next((s for s in COMMANDS if s.command is command), None)


def by_typed(word: str) -> Spec | None:
    """The command a word typed at the terminal names."""
    return next((s for s in COMMANDS if word in s.typed), None)


def by_osc(address: str) -> Spec | None:
    return next((s for s in COMMANDS if s.osc == address), None)


def by_web(name: str) -> Spec | None:
    return next((s for s in COMMANDS if s.web == name), None)


def by_event(event: str) -> Spec | None:
    return next((s for s in COMMANDS if s.event == event), None)


def guarded(command: Command) -> bool:
    """Whether the guard refuses a second *command* within its time."""
    row = spec(command)
    return row is not None and row.guarded


def events() -> tuple[str, ...]:
    """The log events of the commands, in the table's order."""
    return tuple(s.event for s in COMMANDS)


def starting_events() -> frozenset[str]:
    """The log events of the commands that start an action."""
    return frozenset(s.event for s in COMMANDS if s.starts)


def _arguments(s: Spec) -> str:
    """' CUE', ' CUE [SECONDS]', ' [LEVEL]' or ''."""
    return (" CUE" if s.target or s.sounding else "") + (f" [{s.value.upper()}]" if s.value else "")


def typed_help() -> str:
    """The terminal's keys, for the operator: 'Enter GO, s STOP ALL, f FADE, g CUE jump, …'."""
    return ", ".join(f"{s.typed[0] or 'Enter'}{_arguments(s)} {s.said}" for s in COMMANDS if s.typed)


def osc_help() -> str:
    """The OSC addresses, for ``--osc``'s help: '/yuesheng/go, …, /yuesheng/goto CUE, …'."""
    return ", ".join(s.osc + _arguments(s) for s in COMMANDS)


def page_table() -> list[dict[str, Any]]:
    """The table as the page's JavaScript reads it (JSON-ready)."""
    return [{**asdict(s), "command": s.command.value, "typed": list(s.typed),
             **({"bounds": asdict(VALUES[s.value])} if s.value else {})} for s in COMMANDS]
