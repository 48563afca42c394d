"""The exceptions of yuesheng: one root, a few kinds, each caught by name. Imports only ``yuesheng.text``.

Every class here derives from ``YueshengError``; no module defines an exception
class of its own (tests/test_errors.py checks both). The CLI turns a
``UsageError`` into exit 2 and every other ``YueshengError`` into exit 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from yuesheng.text import hint

Severity = Literal["error", "warning"]  # an error fails the check; a warning is printed and the check passes


class YueshengError(Exception):
    """Root of every error yuesheng raises on purpose."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem found in an input file, with its place."""

    file: str
    line: int | None
    col: int | None
    path: str
    message: str
    rule: str = ""
    severity: Severity = "error"

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        rule = f" [{self.rule}]" if self.rule else ""
        path = f" {self.path}:" if self.path else ""
        kind = "" if self.severity == "error" else f" {self.severity}:"
        return f"{where}:{kind}{path} {self.message}{rule}"


class OutputError(YueshengError):
    """An output file that cannot be written (no such folder, no permission, disk full)."""


class InvalidInputError(YueshengError):
    """An input file is invalid; holds every problem found, not just the first."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class ScheduleError(YueshengError):
    """A cue sheet that reads but cannot be scheduled with the options chosen (an anchor cycle)."""


class NoRouteError(YueshengError):
    """A walk of the blocking that no route of the hall allows (every way crosses a wall or leaves the 堂 off a
    stair)."""


class InputClosedError(YueshengError):
    """An input the program waits on ended (standard input at end of file in manual playback)."""


class ExportError(YueshengError):
    """A piece that cannot be written in the format asked for (a note value MusicXML cannot express)."""


# --- what went wrong with a value, a name, a command line, a limit, a tool (issue 20) -------------------------------

class InvalidValueError(YueshengError):
    """A value that is not what its field expects: a duration, a note name, a page name, a 律 against its 俗字.

    Carries the *field*, the *value* and what was *expected*; the message reads
    ``bad FIELD 'VALUE': expected EXPECTED`` unless the raiser words it better.
    Not a ``ValueError``: a bug that raises one is not reported as bad input.
    """

    def __init__(self, field: str, value: object, expected: str, *, message: str = "") -> None:
        self.field = field
        self.value = value
        self.expected = expected
        super().__init__(message or f"bad {field} {value!r}: expected {expected}")


class UnknownNameError(YueshengError):
    """A name (律, 宮調, piece, instrument…) that is not known; carries suggestions.

    Not a ``KeyError``: a lookup that fails on a bug must not read as an unknown name.
    """

    def __init__(self, kind: str, name: str, suggestions: Sequence[str] = (), *, message: str = "") -> None:
        self.kind = kind
        self.name = name
        self.suggestions = tuple(suggestions)
        super().__init__(message or f"unknown {kind} {name!r}{hint(self.suggestions)}")


class AmbiguousNameError(UnknownNameError):
    """A title shared by several pieces (騶虞 has two settings), or a name several roles share."""

    def __init__(self, name: str, ids: Sequence[str], kind: str = "piece") -> None:
        super().__init__(kind, name, ids, message=f"{name!r} names {len(ids)} {kind}s: {', '.join(ids)}; give the id")


class UnknownPageError(UnknownNameError):
    """A page that is not in the shipped texts (or a malformed page name); carries the nearest pages."""

    def __init__(self, name: str, suggestions: Sequence[str], why: str = "") -> None:
        message = f"unknown page {name!r}{hint(suggestions)}" + (f" ({why})" if why else "")
        super().__init__("page", name, suggestions, message=message)


class UsageError(YueshengError):
    """A command line that makes no sense (exit 2)."""


class QuoteError(YueshengError):
    """A quote that is not on the page it is said to be on (``yuesheng source PAGE --quote``)."""


class LimitError(YueshengError):
    """A request beyond one of the limits of ``yuesheng.limits``; the message names the limit."""


class MidiError(YueshengError):
    """A Timeline that cannot be written as MIDI (a key or velocity outside 0–127)."""


class AudioError(YueshengError):
    """FluidSynth or a SoundFont is missing or unusable, or the render failed."""


class EngraveError(YueshengError):
    """LilyPond or a CJK font is missing, or the engraving failed."""


class PrintError(YueshengError):
    """Chromium, which prints the sides to PDF, is missing, or the printing failed."""


# -- live playback, the console and the command line's signals ------------------------------------


class PortError(YueshengError):
    """A MIDI port that cannot be listed, opened or written."""


class NetworkError(YueshengError):
    """A TCP or UDP address that cannot be listened on (the console's web port, OSC): busy, unknown, not permitted."""


class DecodeError(YueshengError):
    """Data kept in a cache that is not a value of the type asked for (``datacodec``): read as a miss."""


class OscMessageError(YueshengError):
    """A datagram that is not the OSC the console takes (the listener drops it with a notice)."""


class Terminated(BaseException):
    """SIGTERM arrived: unwind like KeyboardInterrupt (a BaseException, so no ``except Exception`` swallows it)."""
