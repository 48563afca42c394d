"""A rite on the ground, for the timeline: the blocking beside a cue sheet, staged under the build's variants and
readings, with each cue's stands and derived duration.

A rite's blocking is *complete* when it stages without a problem: every actor of every cue placed, no two on one
point, every walk routed. Only then do its places and durations replace the cue sheet's (docs/staging.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from yuesheng.cuesheet import CueSheet
from yuesheng.staging.model import Derivation, Hall, Stand


@dataclass(frozen=True, slots=True)
class StagedCue:
    """One cue on the ground: who stands where after it (member id → Stand), and what its duration is made of."""

    stands: Mapping[str, Stand]
    derivation: Derivation


@dataclass(frozen=True, slots=True)
class StagedRite:
    """A rite's hall and its cues on the ground (cue id → StagedCue), from the blocking at *file*."""

    file: str
    hall: Hall
    cues: Mapping[str, StagedCue]
    same: Mapping[str, str]  # one person under several ids (司馬 → 相)

    def members(self, person: str, count: int) -> list[str]:
        """The member ids *person* stands as: himself, or ``id#1`` … ``id#N`` for a group of *count*."""
        person = self.same.get(person, person)
        return [person] if count <= 1 or "#" in person else [f"{person}#{n}" for n in range(1, count + 1)]


def blocking_beside(sheet: CueSheet) -> Path | None:
    """The blocking file of *sheet*'s rite, ``../blocking/RITE.yaml`` beside its folder, or None."""
    path = Path(sheet.file).resolve().parent.parent / "blocking" / f"{sheet.rite_id}.yaml"
    return path if path.is_file() else None


def staged_rite(sheet: CueSheet, variants: frozenset[str], readings: Mapping[str, str]) -> StagedRite | None:
    """The rite of *sheet* on the ground under *variants* and *readings*, or None if it has no blocking;
    InvalidInputError if its blocking does not stage (an incomplete or broken blocking)."""
    path = blocking_beside(sheet)
    if path is None:
        return None
    from yuesheng.staging.durations import derive
    from yuesheng.staging.reader import load_blocking
    from yuesheng.staging.stage import stage

    blocking = load_blocking(path, sheet)
    cues = {c.cue: StagedCue(c.stands, derive(blocking, c)) for c in stage(blocking, sheet, variants, dict(readings))}
    return StagedRite(str(path), blocking.hall, cues, blocking.same)
