"""The exceptions of yuesheng: one root, a few kinds. Imports only ``yuesheng.text``."""

from __future__ import annotations

from dataclasses import dataclass

from yuesheng.text import hint


class YueshengError(Exception):
    """Root of every error yuesheng raises on purpose."""


class UnknownNameError(YueshengError, KeyError):
    """A name (律, 宮調, piece, instrument…) that is not known; carries suggestions."""

    def __init__(self, kind: str, name: str, suggestions: list[str] | tuple[str, ...] = ()) -> None:
        self.kind = kind
        self.name = name
        self.suggestions = tuple(suggestions)
        super().__init__(f"unknown {kind} {name!r}{hint(self.suggestions)}")

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem found in an input file, with its place."""

    file: str
    line: int | None
    col: int | None
    path: str
    message: str
    rule: str = ""
    severity: str = "error"

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


class ScheduleError(YueshengError, ValueError):
    """A cue sheet that reads but cannot be scheduled with the options chosen (an anchor cycle)."""


class InputClosedError(YueshengError):
    """An input the program waits on ended (standard input at end of file in manual playback)."""


class ExportError(YueshengError):
    """A piece that cannot be written in the format asked for (a note value MusicXML cannot express)."""


# -- live playback, the console and the command line's signals ------------------------------------


class PortError(YueshengError):
    """A MIDI port that cannot be listed, opened or written."""


class NetworkError(YueshengError):
    """A TCP or UDP address that cannot be listened on (the console's web port, OSC): busy, unknown, not permitted."""


class Terminated(BaseException):
    """SIGTERM arrived: unwind like KeyboardInterrupt (a BaseException, so no ``except Exception`` swallows it)."""
