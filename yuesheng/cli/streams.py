"""The command line's streams: where messages go.

Results go to stdout; errors, warnings and notices to stderr (``say``), with
control characters escaped so that nothing from an input file reaches the
terminal raw. A stdout that is closed, full, a broken pipe or unable to encode
Chinese is a one-line error (exit 1), never a traceback. Ctrl-C and SIGTERM
are ``signals``' concern.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TextIO

from yuesheng.text import visible

_EXIT_FAILED = 1


def progress_bar(label: str) -> Callable[[float], None]:
    """A progress callback drawing ``LABEL [####....]  40%`` on stderr when it is a terminal (nothing otherwise)."""
    def draw(fraction: float) -> None:
        if sys.stderr.isatty():
            filled = int(fraction * 30)
            sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%}")
            if fraction >= 1:
                sys.stderr.write("\n")
            sys.stderr.flush()
    return draw


def say(message: str) -> None:
    """One message on stderr, control characters escaped; silently dropped if stderr is gone."""
    _line(sys.stderr, message)


def _line(stream: TextIO | None, text: str) -> None:
    """*text* and a newline on *stream*, control characters escaped, what it cannot encode as escapes;
    nothing if the stream is gone, closed or full (a message must never stop the command or the rite)."""
    if stream is None:
        return
    line = visible(text) + "\n"
    try:
        try:
            stream.write(line)
        except UnicodeEncodeError:
            encoding = getattr(stream, "encoding", None) or "ascii"
            stream.write(line.encode(encoding, "backslashreplace").decode(encoding))
        stream.flush()
    except (OSError, ValueError):
        pass


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so that the interpreter's last flush cannot fail again."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def write_stdout(text: str) -> int:
    """Write a command's result to stdout; 0, or the exit code of a one-line error on stderr."""
    stream = sys.stdout
    if not text:
        return 0
    if stream is None:
        say("error: standard output is closed; write to a file with -o FILE")
        return _EXIT_FAILED
    try:
        stream.write(visible(text))
        stream.flush()
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", "?")
        say(f"error: standard output ({encoding}) cannot encode the Chinese text; set PYTHONIOENCODING=utf-8 "
            "(or a UTF-8 locale), or write to a file with -o FILE")
        _silence_stdout()
        return _EXIT_FAILED
    except BrokenPipeError:
        _silence_stdout()  # the reader (e.g. `head`) has what it wanted: no message
        return _EXIT_FAILED
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        say(f"error: cannot write to standard output: {reason}")
        _silence_stdout()
        return _EXIT_FAILED
    return 0


def show(line: str) -> None:
    """A line for the operator during playback: never stops the rite (a failing stdout is skipped,
    characters it cannot encode are escaped)."""
    _line(sys.stdout, line)
