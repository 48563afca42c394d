"""Cue sheets: the model (``model``), YAML reader (``reader``, then ``references``), scheduling anchors (``anchors``).

The format is in ``docs/cuesheet.md`` (schema ``yuesheng/data/cuesheet.schema.json``);
``yuesheng.check.validate`` composes reading with the ritual rules. Each name is imported from its module on first use
(``yuesheng.lazy``): what reads a loaded sheet imports its model, not the reader.
"""

from typing import TYPE_CHECKING

from yuesheng.lazy import exports

if TYPE_CHECKING:
    from yuesheng.cuesheet.anchors import Point, dependencies, evaluation_order, find_cycle
    from yuesheng.cuesheet.model import (
        CALLS,
        DEFAULT_SYLLABLE,
        JIE_READING,
        Anchor,
        Archery,
        Arrow,
        Cite,
        Count,
        Cue,
        CueSheet,
        Member,
        MusicKind,
        Pair,
        PieceRef,
        Reading,
        Round,
        Shooter,
        Start,
        Timed,
        Variant,
        parse_duration,
        parse_reading,
        rounds_called,
        timed_values,
        variant_configurations,
    )
    from yuesheng.cuesheet.reader import FORMAT, read_cuesheet
else:
    __getattr__, __dir__ = exports(__name__, {
        "yuesheng.cuesheet.anchors": ("Point", "dependencies", "evaluation_order", "find_cycle"),
        "yuesheng.cuesheet.model": ("CALLS", "DEFAULT_SYLLABLE", "JIE_READING", "Anchor", "Archery", "Arrow", "Cite",
                                    "Count", "Cue", "CueSheet", "Member", "MusicKind", "Pair", "PieceRef", "Reading",
                                    "Round", "Shooter", "Start", "Timed", "Variant", "parse_duration",
                                    "parse_reading", "rounds_called", "timed_values", "variant_configurations"),
        "yuesheng.cuesheet.reader": ("FORMAT", "read_cuesheet"),
    })

__all__ = [
    "CALLS", "DEFAULT_SYLLABLE", "FORMAT", "JIE_READING", "Anchor", "Archery", "Arrow", "Cite", "Count", "Cue",
    "CueSheet", "Member", "MusicKind", "Pair", "PieceRef", "Point", "Reading", "Round", "Shooter", "Start", "Timed",
    "Variant", "dependencies", "evaluation_order", "find_cycle", "parse_duration", "parse_reading", "read_cuesheet",
    "rounds_called", "timed_values", "variant_configurations",
]
