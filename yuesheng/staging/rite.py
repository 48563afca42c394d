"""A rite on the ground, for the timeline: the blocking beside a cue sheet, staged under the build's variants and
readings, with each cue's stands and derived duration.

A rite's blocking is *complete* when it stages without a problem: every actor of every cue placed, no two on one
point, every walk routed. Only then do its places and durations replace the cue sheet's (docs/staging.md).

Who stands where after each cue is staged afresh every time (a few milliseconds); what each cue's walks and formulas
take (``durations.derive``: its routes) is kept between runs, cue by cue (``_Derived``), under a digest of what the
derivation reads: the cue as staged (its moves, the stands before and after, the set pieces standing), its action and
quote, the cast's names and counts, the paces, and the blocking and hall files. An edit to one cue of a sheet derives
again only the cues whose stands or text it changes; the others are carried forward.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

from yuesheng import caches
from yuesheng.cuesheet import CueSheet
from yuesheng.errors import DecodeError, InvalidInputError
from yuesheng.staging.basis import KEPT, NOTHING_TO_TIME
from yuesheng.staging.model import Blocking, Derivation, Hall, Stand
from yuesheng.staging.paces import Paces

if TYPE_CHECKING:
    from yuesheng.cuesheet import Cue
    from yuesheng.staging.stage import CueStage


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
    derived: dict[tuple[Paces | None, tuple[tuple[str, str], ...]], _Derived] = field(default_factory=dict)  # each
    # cue's derivation, by the paces and the hall's readings


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
    from yuesheng.staging.stage import stage

    read = _read(path, sheet)
    key = (variants, tuple(sorted(readings.items())), paces)
    if key not in read.staged:
        blocking = loaded(path, sheet, readings)
        derived = _derived(read, blocking, paces)
        cues = {c.cue: derived.staged(c) for c in stage(blocking, sheet, variants, dict(readings))}
        derived.keep()
        read.staged[key] = StagedRite(str(path), blocking.hall, cues, blocking.same, blocking.plates)
    return read.staged[key]


def cue_times(sheet: CueSheet, variants: frozenset[str], readings: Mapping[str, str], path: Path,
              paces: Paces | None = None) -> dict[str, tuple[Fraction | None, str]]:
    """Each cue's duration on the ground (None: the sheet's estimate is kept) and its basis, as ``staged_rite`` gives
    them, without making the rest of the staged rite: what a build needs; InvalidInputError as ``staged_rite``."""
    from yuesheng.staging.stage import stage

    read = _read(path, sheet)
    if (rite := read.staged.get((variants, tuple(sorted(readings.items())), paces))) is not None:
        return {cue: (c.duration, c.basis) for cue, c in rite.cues.items()}
    blocking = loaded(path, sheet, readings)
    derived = _derived(read, blocking, paces)
    times = {c.cue: derived.timed(c) for c in stage(blocking, sheet, variants, dict(readings))}
    derived.keep()
    return times


def _derived(read: _Read, blocking: Blocking, paces: Paces | None) -> _Derived:
    key = (paces, tuple(sorted(blocking.hall.readings.items())))
    if key not in read.derived:
        read.derived[key] = _Derived.of(blocking, read.sheet, paces)
    return read.derived[key]


DERIVED_ENTRIES = 64  # blockings (with their halls, casts and paces) whose cues' derivations are kept
DERIVED_CUES = 4096  # derivations kept for one of them: the latest run's first (大射's: 259 a programme)
_DERIVED_FORMAT = "yuesheng-derived-2"
MAX_DERIVED_BYTES = 32 << 20  # 大射's 259: about 0.15 MB; a larger entry is not read
_MASK = (1 << 128) - 1


class _Derived:
    """Each cue's derivation (``durations.derive``), its duration and basis, kept between runs for one blocking and
    hall, cast and paces: read once, looked up by a digest of the cue as staged and its texts (``_name``), written
    back when a cue was derived anew. ``counts`` says how many were kept and how many derived (the tests count what
    an edit derives again)."""

    counts = {"kept": 0, "derived": 0}

    def __init__(self, entry: str, kept: dict[str, Any], blocking: Blocking, sheet: CueSheet,
                 paces: Paces | None) -> None:
        self.entry, self.kept, self.blocking, self.sheet, self.paces = entry, kept, blocking, sheet, paces
        self.cues: dict[str, Cue] = {c.id: c for c in sheet.cues}
        self.used: dict[str, Any] = {}
        self.made: dict[str, Derivation] = {}  # derived or decoded in this process
        self.new = False
        self.hashes: dict[int, tuple[Stand, int]] = {}  # id(Stand) → it and the hash of its text
        self.last: tuple[Mapping[str, Stand], int] = ({}, 0)  # the stands digested last and their digest

    @classmethod
    def of(cls, blocking: Blocking, sheet: CueSheet, paces: Paces | None) -> _Derived:
        """The derivations kept for *blocking* (its file and its hall's) with *sheet*'s cast at *paces*."""
        from yuesheng.yamlload import read_bytes

        try:
            files = [hashlib.sha256(read_bytes(name)).digest() for name in (blocking.file, blocking.hall.file)]
        except (OSError, InvalidInputError):  # a file gone or changed since it was read: nothing is kept
            return cls("", {}, blocking, sheet, paces)
        entry = caches.prefix(sheet.file, blocking.file, blocking.hall.file) + caches.key(
            _DERIVED_FORMAT, *files, blocking.file, repr(tuple(sorted(blocking.hall.readings.items()))),
            repr(tuple(sheet.performers.items())),
            "" if paces is None else paces.key())
        folder = caches.folder("staging")
        data = folder.read_json(f"{entry}.cues.json", limit=MAX_DERIVED_BYTES) if folder is not None else None
        kept = data.get("cues") if isinstance(data, dict) and data.get("format") == _DERIVED_FORMAT else None
        return cls(entry, kept if isinstance(kept, dict) else {}, blocking, sheet, paces)

    def timed(self, cue: CueStage) -> tuple[Fraction | None, str]:
        """*cue*'s duration on the ground and its basis."""
        record = self._record(cue)[1]
        return (None if record["t"] is None else Fraction(*record["t"])), record["b"]

    def staged(self, cue: CueStage) -> StagedCue:
        """*cue* on the ground, its derivation with it."""
        from yuesheng.datacodec import decode

        name, record = self._record(cue)
        if name not in self.made:
            try:
                self.made[name] = decode(record["d"], Derivation)
            except DecodeError:
                self._derive(name, cue)
        return StagedCue(cue.stands, self.made[name], *self.timed(cue), cue.things)

    def _record(self, cue: CueStage) -> tuple[str, dict[str, Any]]:
        name = self._name(cue)
        record = self.used.get(name) or self.kept.get(name)
        if not _record(record):
            return name, self._derive(name, cue)
        self.used[name] = record
        _Derived.counts["kept"] += name not in self.made
        return name, record

    def _derive(self, name: str, cue: CueStage) -> dict[str, Any]:
        from yuesheng.datacodec import encode
        from yuesheng.staging.durations import derive

        derivation = self.made[name] = derive(self.blocking, cue, self.sheet, self.paces)
        keep = self.blocking.cues[cue.cue].keep if cue.cue in self.blocking.cues else ""
        duration, basis = _timed(derivation, keep)
        self.used[name] = record = {"t": None if duration is None else [duration.numerator, duration.denominator],
                                    "b": basis, "d": encode(derivation, Derivation)}
        self.new = True
        _Derived.counts["derived"] += 1
        return record

    def _name(self, cue: CueStage) -> str:
        """A digest of what deriving *cue* reads besides the files and cast of the entry: the cue as staged (its
        moves, everyone's stand and the set pieces standing) and its action and quote; plain text, the same in every
        process."""
        of = self.cues[cue.cue]
        made = (cue.cue, repr(cue.moved), cue.things, self._stands(cue.stands), of.action, of.cite.page, of.cite.quote)
        return hashlib.sha256(repr(made).encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def _stands(self, stands: Mapping[str, Stand]) -> int:
        """A digest of everyone's stand: the sum of a hash of each (a multiset's), so that it is updated with only the
        stands that changed since the cue digested before (a stage keeps each Stand from cue to cue until he moves)."""
        before, total = self.last
        for who, stand in stands.items():
            if before.get(who) is not stand:
                total += self._hash(stand) - (self._hash(before[who]) if who in before else 0)
        for who in before.keys() - stands.keys():
            total -= self._hash(before[who])
        self.last = (stands, total & _MASK)
        return total & _MASK

    def _hash(self, stand: Stand) -> int:
        seen = self.hashes.get(id(stand))
        if seen is None or seen[0] is not stand:
            text = f"{stand.who}\t{stand.place}\t{stand.point.x!r}\t{stand.point.y!r}\t{stand.facing!r}"
            digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            seen = self.hashes[id(stand)] = (stand, int.from_bytes(digest, "big"))
        return seen[1]

    def keep(self) -> None:
        """Write the derivations back if any was made now: those used now, then the others kept, to DERIVED_CUES."""
        folder = caches.folder("staging") if self.new and self.entry else None
        if folder is None:
            return
        cues = caches.newest(self.used, self.kept, DERIVED_CUES)
        folder.write_json(f"{self.entry}.cues.json", {"format": _DERIVED_FORMAT, "cues": cues},
                          entries=DERIVED_ENTRIES)
        self.kept, self.new = cues, False


def _record(record: Any) -> TypeGuard[dict[str, Any]]:
    """Whether *record* is a kept cue's: its duration (None or [numerator, denominator > 0]), basis and derivation."""
    if not isinstance(record, dict) or not isinstance(record.get("b"), str) or "d" not in record:
        return False
    t = record.get("t")
    return t is None or (isinstance(t, list) and len(t) == 2 and all(type(n) is int for n in t) and t[1] > 0)
