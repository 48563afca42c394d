"""A rite on the ground, for the timeline: the blocking beside a cue sheet, staged under the build's variants and
readings, with each cue's stands and derived duration.

A rite's blocking is *complete* when it stages without a problem: every actor of every cue placed, no two on one
point, every walk routed. Only then do its places and durations replace the cue sheet's (docs/staging.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from yuesheng.cuesheet import CueSheet
from yuesheng.staging.basis import KEPT, NOTHING_TO_TIME
from yuesheng.staging.model import Blocking, Derivation, Hall, Stand
from yuesheng.staging.paces import Paces


@dataclass(frozen=True, slots=True)
class StagedCue:
    """One cue on the ground: who stands where after it (member id → Stand), what its duration is made of, and the
    duration an action takes from it (None: the cue sheet's estimate is kept, for the reason ``basis`` gives)."""

    stands: Mapping[str, Stand]
    derivation: Derivation
    duration: Fraction | None
    basis: str  # "walk: … 12.3 s + 再拜 10 s = 22.3 s", or "estimate: why"
    things: tuple[str, ...] = ()  # the hall's set pieces standing while its walks are made


def _timed(derivation: Derivation, keep: str) -> tuple[Fraction | None, str]:
    """An action's duration from its derivation and the blocking's reason to keep the estimate, and the basis."""
    if keep or not derivation.parts:
        return None, f"{KEPT}{keep or NOTHING_TO_TIME}"
    parts = " + ".join(f"{name} {_s(seconds)}" for name, seconds in derivation.parts)
    return derivation.seconds, f"{parts} = {_s(derivation.seconds)}"


def _s(seconds: Fraction) -> str:
    return f"{float(seconds):.1f} s".replace(".0 s", " s")


@dataclass(frozen=True, slots=True)
class StagedRite:
    """A rite's hall and its cues on the ground (cue id → StagedCue), from the blocking at *file*."""

    file: str
    hall: Hall
    cues: Mapping[str, StagedCue]
    same: Mapping[str, str]  # one person under several ids (司馬 → 相)
    plates: tuple[str, ...] = ()  # the cues whose moments the plates show, from the blocking's ``plates``

    def members(self, person: str, count: int) -> list[str]:
        """The member ids *person* stands as: himself, or ``id#1`` … ``id#N`` for a group of *count*."""
        person = self.same.get(person, person)
        return [person] if count <= 1 or "#" in person else [f"{person}#{n}" for n in range(1, count + 1)]


@dataclass(slots=True)
class _Read:
    """The blocking read last, for one file as it was and one sheet object, and the rite staged from it under each
    variant and reading (a validation builds the rite once per combination of variants, and stages it again)."""

    key: tuple[Path, int, int]  # the path, its size and modification time
    sheet: CueSheet
    blockings: list[Blocking]  # one for each choice of the hall's readings (its hall drawn under them)
    staged: dict[tuple[frozenset[str], tuple[tuple[str, str], ...], Paces | None], StagedRite]
    timed: dict[tuple[object, ...], StagedCue] = field(default_factory=dict)  # a cue as made → it timed


_LAST: list[_Read] = []


def _read(path: Path, sheet: CueSheet) -> _Read:
    info = path.stat()
    key = (path, info.st_size, info.st_mtime_ns)
    if not (_LAST and _LAST[0].key == key and _LAST[0].sheet is sheet):
        _LAST[:] = [_Read(key, sheet, [], {})]
    return _LAST[0]


def loaded(path: Path, sheet: CueSheet, readings: Mapping[str, str] | None = None) -> Blocking:
    """The blocking at *path* for *sheet* (``reader.load_blocking``), its hall under *readings* (else the sheet's
    chosen), kept while the file and the sheet are the same."""
    from yuesheng.staging.reader import load_blocking

    read = _read(path, sheet)
    chosen = {r.id: r.chosen for r in sheet.readings.values()} | dict(readings or {})
    for blocking in read.blockings:  # the readings of the sheet the hall does not have do not load it again
        if all(chosen.get(rid) == option for rid, option in blocking.hall.readings.items()):
            return blocking
    read.blockings.append(load_blocking(path, sheet, chosen))
    return read.blockings[-1]


def staged_rite(sheet: CueSheet, variants: frozenset[str], readings: Mapping[str, str], path: Path,
                paces: Paces | None = None) -> StagedRite:
    """The rite of *sheet* on the ground under *variants* and *readings*, from the blocking at *path*, its walks at
    *paces* (None: the shipped table's); InvalidInputError if it does not stage (incomplete or broken)."""
    from yuesheng.staging.durations import derive
    from yuesheng.staging.stage import stage

    read = _read(path, sheet)
    key = (variants, tuple(sorted(readings.items())), paces)
    if key not in read.staged:
        blocking = loaded(path, sheet, readings)
        cues = {}
        for c in stage(blocking, sheet, variants, dict(readings)):
            # what its walks go by and round: the hall as drawn under its readings too
            made = (c.cue, c.moved, c.things, frozenset(c.stands.items()), paces, tuple(blocking.hall.readings.items()))
            timed = read.timed.get(made)  # the same cue made the same way under another variant
            if timed is None:
                derivation = derive(blocking, c, sheet, paces)
                keep = blocking.cues[c.cue].keep if c.cue in blocking.cues else ""
                timed = read.timed[made] = StagedCue(c.stands, derivation, *_timed(derivation, keep), c.things)
            cues[c.cue] = StagedCue(c.stands, timed.derivation, timed.duration, timed.basis, c.things)
        read.staged[key] = StagedRite(str(path), blocking.hall, cues, blocking.same, blocking.plates)
    return read.staged[key]
