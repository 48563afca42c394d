"""The Timeline of a rite: its model (``model``), how a CueSheet becomes one (``builder``, composing ``state``,
``schedule``, ``music``, ``shooting`` and ``calls``), and ``measure``, the size of a build found before it is made."""

from yuesheng.music.instruments import PHRASE
from yuesheng.timeline.builder import DEFAULT_SYLLABLE, Options, Size, build_timeline, measure, piece_timeline
from yuesheng.timeline.calls import CALL_LENGTH
from yuesheng.timeline.model import (
    TICKS_PER_SECOND,
    CueTiming,
    Event,
    EventKind,
    Hold,
    Measurement,
    Timeline,
    clock,
    seconds,
    ticks,
)

__all__ = [
    "CALL_LENGTH", "DEFAULT_SYLLABLE", "PHRASE", "TICKS_PER_SECOND", "CueTiming", "Event", "EventKind", "Hold",
    "Measurement", "Options", "Size", "Timeline", "build_timeline", "clock", "measure", "piece_timeline", "seconds",
    "ticks",
]
