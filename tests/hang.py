"""A time limit for tests of inputs that once hung: the test fails instead of blocking the suite."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Fail (TimeoutError) if the block takes longer than *seconds* — a guard against hangs, not a speed test."""

    def expire(_signum: int, _frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
