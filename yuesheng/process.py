"""What every external program yuesheng starts (FluidSynth, LilyPond) shares: it dies with yuesheng, and it may be
given a bound on its memory; and the cyclic garbage collector: ``collector_paused`` for this process's work that makes
many objects at once, ``collector_frozen`` for a long run (live playback) that must not wait on a full collection."""

from __future__ import annotations

import functools
import gc
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

LIVE_THRESHOLDS = (700, 10, 10)  # Python's own: cheap once what was built is frozen


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


@contextmanager
def collector_frozen() -> Iterator[None]:
    """Collect once, then move every object there is out of the collector's reach (``gc.freeze``) and collect at
    Python's default thresholds (``LIVE_THRESHOLDS``) for the duration.

    A collection then scans only what was made since (a web server's requests and sessions, not a rite's events),
    so it is short, and frequent enough that their cycles are freed: under the CLI's high thresholds
    (``cli.GC_THRESHOLDS``) a console went 200,000 allocations between collections and grew by 50 kB a WebSocket
    session. All is restored at the end (the objects unfrozen unless something else had frozen some before).
    """
    thresholds = gc.get_threshold()
    gc.collect()
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    gc.set_threshold(*LIVE_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if not frozen_before:
            gc.unfreeze()
