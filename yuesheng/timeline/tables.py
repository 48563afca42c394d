"""The builder's domain tables, read once (lazily) from ``yuesheng/data/music.json``: the parts each kind of
music sounds when its cue names none, the kinds that are sung, the 金奏 onset drums, and the notice texts."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

from yuesheng.cuesheet import MusicKind
from yuesheng.datafiles import data_table


@dataclass(frozen=True, slots=True, kw_only=True)
class Tables:
    """The tables of ``music.json``."""

    default_parts: dict[MusicKind, tuple[str, ...]]
    sung: frozenset[MusicKind]
    onset: tuple[tuple[str, int], ...]  # (instrument, strokes), in the order they sound
    notices: dict[str, Any]  # texts, or {reading option: text} for heyue; some with {fields} to fill


@cache
def tables() -> Tables:
    """The tables, read on first use."""
    data = data_table("music")
    return Tables(default_parts={MusicKind(k): tuple(v) for k, v in data["default_parts"].items()},
                  sung=frozenset(MusicKind(k) for k in data["sung"]),
                  onset=tuple((o["instrument"], o["strokes"]) for o in data["onset"]["strokes"]),
                  notices=data["notices"])
