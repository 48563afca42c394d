"""The Timeline of a rite: its model (``model``), how a CueSheet becomes one (``builder``, with the shooting
and calls in ``shooting``), and ``measure``, the size of a build found before it is made."""

from yuesheng.timeline.builder import (
    DEFAULT_SYLLABLE, PHRASE, Options, Size, build_timeline, measure, piece_timeline,
)
from yuesheng.timeline.model import (
    TICKS_PER_SECOND, CueTiming, Event, EventKind, Hold, Timeline, clock, seconds, ticks,
)
from yuesheng.timeline.shooting import CALL_LENGTH

__all__ = [
    "CALL_LENGTH", "DEFAULT_SYLLABLE", "PHRASE", "TICKS_PER_SECOND", "CueTiming", "Event", "EventKind", "Hold",
    "Options", "Size", "Timeline", "build_timeline", "clock", "measure", "piece_timeline", "seconds", "ticks",
]
