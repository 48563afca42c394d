"""What every external program yuesheng starts (FluidSynth, LilyPond) shares: it dies with yuesheng, and it may be
given a bound on its memory; and ``collector_paused``, for this process's work that makes many objects at once."""

from __future__ import annotations

import functools
import gc
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


def die_with_parent(parent: int) -> None:  # pragma: no cover - runs in the child before exec
    """In the child: receive SIGKILL when the parent dies (Linux PR_SET_PDEATHSIG), or go now if it already has."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    if os.getppid() != parent:
        os._exit(1)


def die_with_parent_bounded(parent: int, memory: int) -> None:  # pragma: no cover - in the child before exec
    """``die_with_parent``, and at most *memory* bytes of address space (``RLIMIT_AS``: an allocation beyond it
    fails in the child, which then reports it and stops)."""
    import resource

    die_with_parent(parent)  # first: loading libc allocates, which the bound could refuse in a large parent's copy
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))  # last: nothing more is allocated before exec


def bound_to_us(*, memory: int | None = None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that ties the child's life to this process where the OS allows it (Linux), else None;
    with *memory*, it also bounds the child's address space to that many bytes.

    With ``start_new_session`` the child has its own process group, so a Ctrl-C at the
    terminal reaches only yuesheng, which then kills the group; this covers SIGKILL too.
    """
    if not sys.platform.startswith("linux"):
        return None
    if memory is None:
        return functools.partial(die_with_parent, os.getpid())
    return functools.partial(die_with_parent_bounded, os.getpid(), memory)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (if it runs) for the duration."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
