"""What every external program yuesheng starts (FluidSynth, LilyPond) shares: it dies with yuesheng, and it may be
given a bound on its memory."""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable


def die_with_parent(parent: int, memory: int | None = None) -> None:  # pragma: no cover - in the child before exec
    """In the child: receive SIGKILL when the parent dies (Linux PR_SET_PDEATHSIG), or go now if it already has;
    at most *memory* bytes of address space if given (``RLIMIT_AS``: an allocation beyond it fails)."""
    import ctypes
    import resource

    if memory is not None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    if os.getppid() != parent:
        os._exit(1)


def bound_to_us(*, memory: int | None = None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that ties the child's life to this process where the OS allows it (Linux), else None;
    with *memory*, it also bounds the child's address space to that many bytes.

    With ``start_new_session`` the child has its own process group, so a Ctrl-C at the
    terminal reaches only yuesheng, which then kills the group; this covers SIGKILL too.
    """
    return functools.partial(die_with_parent, os.getpid(), memory) if sys.platform.startswith("linux") else None
