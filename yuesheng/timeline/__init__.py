"""The Timeline of a rite: its model (``model``), how a CueSheet becomes one (``builder``, composing ``state``,
``schedule``, ``music``, ``shooting`` and ``calls``), and ``measure``, the size of a build found before it is made.

Each name is imported from its module on first use (``yuesheng.lazy``): an output that reads a Timeline imports its
model, not the builder.
"""

from typing import TYPE_CHECKING

from yuesheng.lazy import exports

if TYPE_CHECKING:
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
else:
    __getattr__, __dir__ = exports(__name__, {
        "yuesheng.music.instruments": ("PHRASE",),
        "yuesheng.timeline.builder": ("DEFAULT_SYLLABLE", "Options", "Size", "build_timeline", "measure",
                                      "piece_timeline"),
        "yuesheng.timeline.calls": ("CALL_LENGTH",),
        "yuesheng.timeline.model": ("TICKS_PER_SECOND", "CueTiming", "Event", "EventKind", "Hold", "Measurement",
                                    "Timeline", "clock", "seconds", "ticks"),
    })

__all__ = [
    "CALL_LENGTH", "DEFAULT_SYLLABLE", "PHRASE", "TICKS_PER_SECOND", "CueTiming", "Event", "EventKind", "Hold",
    "Measurement", "Options", "Size", "Timeline", "build_timeline", "clock", "measure", "piece_timeline", "seconds",
    "ticks",
]
