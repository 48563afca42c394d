"""The command line's one signal path: Ctrl-C and SIGTERM for every command.

While ``main`` runs, SIGINT raises ``KeyboardInterrupt`` and SIGTERM raises
``errors.Terminated`` in the main thread — SIGINT too when the shell started
yuesheng with it ignored (``nohup``, ``&``): an operator's Ctrl-C must always
work. Both unwind through every ``finally``, so temporary files are removed,
child processes stopped and MIDI ports silenced and closed on the way out.

Exit codes, and the one line each writes on stderr:

- a batch command (render, audio, timeline, songbook …): 130 after Ctrl-C
  (``interrupted (Ctrl-C): stopped, nothing half-written left behind``), 143
  after SIGTERM (``terminated (SIGTERM): …``);
- ``play`` and ``console``, which run until they are told to stop, as servers
  do: 0 after a clean stop (the show stopped, all notes off and all sound off
  sent, the port closed), with ``interrupted (Ctrl-C): the show stopped …`` or
  ``terminated (SIGTERM): the show stopped …`` on stderr and the usual closing
  line on stdout.

The console's web server (uvicorn) takes both signals over while it serves and
raises the one it received again once it has shut down, so the same handlers
end it.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from yuesheng.cli.streams import say
from yuesheng.errors import Terminated

EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143

STOPS = (KeyboardInterrupt, Terminated)  # what a signal raises: ``except STOPS`` in a command that stops cleanly


def _terminate(_signum: int, _frame: object) -> None:
    raise Terminated


@contextmanager
def signals_raise() -> Iterator[None]:
    """While inside, SIGINT raises KeyboardInterrupt and SIGTERM Terminated (in the main thread; elsewhere
    nothing changes); the previous handlers are restored on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, signal.default_int_handler),
                signal.SIGTERM: signal.signal(signal.SIGTERM, _terminate)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _name(stop: BaseException) -> str:
    return "terminated (SIGTERM)" if isinstance(stop, Terminated) else "interrupted (Ctrl-C)"


def batch_stopped(stop: BaseException) -> int:
    """A batch command ended by a signal: its line on stderr, and its exit code (130 or 143)."""
    say(f"{_name(stop)}: stopped, nothing half-written left behind")
    return EXIT_TERMINATED if isinstance(stop, Terminated) else EXIT_INTERRUPTED


def show_stopped(stop: BaseException) -> None:
    """``play`` or ``console`` ended by a signal, cleanly (the caller then exits 0): its line on stderr."""
    say(f"{_name(stop)}: the show stopped, all notes off and all sound off sent")
