"""Test doubles shared by the live-playback and console tests."""

from __future__ import annotations


class FakeClock:
    """The player's and the guard's time: it moves only when the test moves it (or the player sleeps)."""

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    def sleep_until(self, when: float) -> None:
        self.t = max(self.t, when)
