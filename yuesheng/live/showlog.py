"""The console's log, written during the rite: whole lines, bursts merged, and a full disk never stops the show.

One JSON object a line (the format is ``rehearsal``'s), each line written by a single ``write`` to a file opened
for appending, so a crash or ``kill -9`` loses nothing already pressed and never leaves half a line (a write the
disk cut short is truncated back).

- **Bursts merged.** The first of a burst of the same command (not GO) on the same cue from the same source is
  written at once; the repeats that follow it, each within ``BURST`` seconds of the last, are counted and written
  as one more line of that command carrying ``"repeats": N`` (how many it stands for), when the burst ends, another
  entry comes, ``SPAN`` seconds have passed or the log closes. A flood of STOPs is thus a line or two a minute::

    {"event": "stop", "cue": "bin-ru", "source": "page", "wall": "…", "mono": 20.0}
    {"event": "stop", "cue": "bin-ru", "source": "page", "repeats": 19999, "wall": "…", "mono": 22.4}

- **A log that cannot be written** (a full disk, an I/O error) is a warning, on the terminal once and in
  ``trouble`` for the page, and the show goes on: lines are counted as lost. When a line can be written again,
  it carries ``"lost": N`` (the entries before it that are missing), and ``retime`` measures nothing across it.

At start, a log that is not a regular file (a FIFO, a device such as ``/dev/full``) or cannot be opened or written
is refused (``OutputError``) before anything is served.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from yuesheng.errors import InvalidInputError, OutputError, Problem
from yuesheng.live.commands import starting_events
from yuesheng.yamlload import read_bytes

MAX_LOG_BYTES = 64 << 20  # the largest log read back (resume, retime)
BURST = 1.0  # seconds between repeats of one burst
SPAN = 10.0  # seconds a burst's count may wait before it is written


class Log:
    """An append-only JSON Lines log that never raises once open (see the module's docstring)."""

    def __init__(self, path: str | Path, *, notify: Callable[[str], None] = print) -> None:
        self.path, self.notify = Path(path), notify
        self.fd = _open(self.path)
        self.lock = threading.Lock()
        self.lost = 0  # entries not written since the last line that was
        self.trouble = ""  # why the log is not being written, for the page ('' when it is)
        self.burst: tuple[Any, ...] | None = None  # (event, cue, source) of the burst being counted
        self.burst_fields: dict[str, Any] = {}
        self.repeats, self.burst_first, self.burst_last = 0, 0.0, 0.0

    def start(self, mono: float, **fields: Any) -> None:
        """The session's first line; OutputError if it cannot be written (the console then does not start)."""
        try:
            _write_line(self.fd, _line("session", mono, fields))
        except OSError as exc:
            os.close(self.fd)
            raise OutputError(f"--log {self.path}: cannot write it ({exc.strerror or exc})") from None

    def write(self, event: str, mono: float, **fields: Any) -> None:
        """One entry: the event, wall-clock and monotonic time, and *fields* (cue, source…); a repeat is counted."""
        key = (event, fields.get("cue"), fields.get("source"))
        with self.lock:
            if (key == self.burst and mono - self.burst_last < BURST and mono - self.burst_first < SPAN):
                self.repeats += 1
                self.burst_last = mono
                return
            self._end_burst()
            self._emit(event, mono, fields)
            self.burst = key if event not in starting_events() else None  # each GO is a take of its own
            self.burst_fields, self.burst_first, self.burst_last = fields, mono, mono

    def _end_burst(self) -> None:
        if self.burst is not None and self.repeats:
            self._emit(self.burst[0], self.burst_last, {**self.burst_fields, "repeats": self.repeats})
        self.burst, self.repeats = None, 0

    def _emit(self, event: str, mono: float, fields: dict[str, Any]) -> None:
        if self.lost:
            fields = {**fields, "lost": self.lost}
        try:
            _write_line(self.fd, _line(event, mono, fields))
        except OSError as exc:
            self.lost += 1
            if not self.trouble:
                self.notify(f"warning: the log {self.path} cannot be written ({exc.strerror or exc}); the show goes "
                            "on, and the log resumes when it can")
            self.trouble = (f"the log cannot be written ({exc.strerror or exc}): {self.lost} "
                            f"entr{'y' if self.lost == 1 else 'ies'} lost; the show goes on")
            return
        if self.lost:
            self.notify(f"the log {self.path} is written again; {self.lost} entries before this one were lost")
            self.lost, self.trouble = 0, ""

    def close(self) -> None:
        with self.lock:
            self._end_burst()
        os.close(self.fd)


def read_log_bytes(path: str | Path) -> bytes:
    """The bytes of the log at *path*, for reading it back; InvalidInputError if it is not a readable regular file
    or is over MAX_LOG_BYTES."""
    raw = read_bytes(path, MAX_LOG_BYTES)
    if len(raw) > MAX_LOG_BYTES:
        raise InvalidInputError([Problem(str(path), None, None, "", f"log over {MAX_LOG_BYTES >> 20} MiB",
                                         rule="log")])
    return raw


def log_object(line: str) -> dict[str, Any] | None:
    """One line of a log read back: its JSON object, or None for a line that is not one (cut short, nested past
    what the parser recurses through, or not an object)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _open(path: Path) -> int:
    """The log's descriptor, opened for appending; a FIFO or device refused without blocking."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0), 0o644)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO with no reader, opened non-blocking
            raise OutputError(f"--log {path}: it is a FIFO, not a file (a log is a regular file)") from None
        raise OutputError(f"--log {path}: cannot open it ({exc.strerror or exc})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "a device or socket"
        raise OutputError(f"--log {path}: it is {kind}, not a file (a log is a regular file)")
    os.set_blocking(fd, True)
    return fd


def _line(event: str, mono: float, fields: dict[str, Any]) -> bytes:
    wall = datetime.now(UTC).isoformat(timespec="milliseconds")
    data = {"event": event, **fields, "wall": wall, "mono": round(mono, 6)}
    return (json.dumps(data, ensure_ascii=False) + "\n").encode("utf-8")


def _write_line(fd: int, line: bytes) -> None:
    """*line* appended whole, or OSError with nothing of it left in the file."""
    end = os.lseek(fd, 0, os.SEEK_END)
    try:
        written = os.write(fd, line)
    except OSError:
        _truncate(fd, end)
        raise
    if written < len(line):  # the disk filled in the middle of the line
        _truncate(fd, end)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _truncate(fd: int, size: int) -> None:
    try:
        os.ftruncate(fd, size)
    except OSError:
        pass
