"""The 儀禮圖 layer: halls and their places, the blocking of each cue, routes through the hall and the durations
they give (between the cue sheet and the timeline; docs/staging.md)."""

from yuesheng.staging.model import (
    Blocking,
    CueBlocking,
    Derivation,
    Facing,
    FileHead,
    Hall,
    Move,
    Place,
    Point,
    Stand,
    Walk,
)
from yuesheng.staging.reader import load_blocking, load_hall, shipped_blocking

__all__ = ["Blocking", "CueBlocking", "Derivation", "Facing", "FileHead", "Hall", "Move", "Place", "Point", "Stand",
           "Walk", "load_blocking", "load_hall", "shipped_blocking"]
