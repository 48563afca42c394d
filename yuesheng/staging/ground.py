"""A rite's ground for one build: each action's duration as its blocking gives it, kept between runs, and everyone's
stands only when an output asks for them.

Scheduling needs of the blocking only each cue's duration and its basis; staging the rite to learn them (reading the
blocking and hall, placing everyone at every cue, routing every walk) costs a build more than the rest of it. So the
durations staged once are kept in ``caches.cache_folder("staging")`` (JSON, one small file per configuration; the
whole staged rite beside it as a pickle, for the outputs that draw it), under a
digest of everything staging reads: the blocking file and the hall file it names, the staging code and its table
(``data/staging.json``), and what the cue sheet gives it (its performers and counts, its cue ids, and who acts in each
cue of the programme). A change to any of them is another digest, so an entry is never used for other inputs; an
entry that cannot be read is a miss. Only a rite that staged without a problem is kept: a broken blocking is staged
(and refused) every time.

The staging rule of ``validate`` keeps its clean verdict the same way (``kept_clean``, ``keep_clean``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng.caches import cache_folder, keep, pickled, unpickled
from yuesheng.cuesheet import CueSheet
from yuesheng.errors import InvalidInputError

if TYPE_CHECKING:
    from yuesheng.staging.rite import StagedRite

CACHE_ENTRIES = 64
_FORMAT = "yuesheng-ground-1"
Configuration = tuple[frozenset[str], Mapping[str, str]]  # variants, readings


@dataclass(frozen=True, slots=True)
class CueTime:
    """One action's duration from the ground (None: the cue sheet's estimate is kept) and what it is made of."""

    duration: Fraction | None
    basis: str


@dataclass(frozen=True, slots=True)
class Ground:
    """A rite's blocking under one configuration: each cue's CueTime (cue id → it), and the staged rite on demand.
    A value: the cue sheet it was staged for is given again to ``rite``."""

    path: Path
    cues: Mapping[str, CueTime]
    variants: frozenset[str]
    readings: tuple[tuple[str, str], ...]
    entry: str = ""  # its name in the cache ('' if it cannot be kept)

    def rite(self, sheet: CueSheet) -> StagedRite:
        """Everyone's stands at every cue of *sheet* (the sheet this ground was found for): kept from an earlier
        run, else staged now (and kept).

        The digest is of the files' contents: a rite kept from another copy of them names that copy's files, so it is
        used only where it names this blocking."""
        from yuesheng.staging.rite import StagedRite, staged_rite

        folder = cache_folder("staging") if self.entry else None
        kept = unpickled(folder / f"{self.entry}.rite") if folder is not None else None
        if isinstance(kept, StagedRite) and kept.file == str(self.path):
            return kept
        rite = staged_rite(sheet, self.variants, dict(self.readings), self.path)
        if folder is not None:
            keep(folder, f"{self.entry}.rite", pickled(rite), entries=CACHE_ENTRIES)
        return rite


def ground(sheet: CueSheet, variants: frozenset[str], readings: Mapping[str, str], path: Path) -> Ground:
    """The ground of *sheet* under *variants* and *readings* from the blocking at *path*: kept from an earlier run,
    else staged (InvalidInputError if it does not stage) and kept."""
    folder, name = cache_folder("staging"), _digest(sheet, path, [(variants, readings)])
    cues = _read(folder / f"{name}.json") if folder is not None and name else None
    if cues is None:
        from yuesheng.staging.rite import staged_rite

        rite = staged_rite(sheet, variants, readings, path)
        cues = {cid: CueTime(c.duration, c.basis) for cid, c in rite.cues.items()}
        if folder is not None and name:
            keep(folder, f"{name}.json", _text(cues).encode(), entries=CACHE_ENTRIES)
    return Ground(path, cues, variants, tuple(sorted(readings.items())), name)


def ground_of(sheet: CueSheet, variants: frozenset[str], readings: Mapping[str, str]) -> tuple[Ground | None, str]:
    """The ground of *sheet* under its programme *variants* and *readings* (those ``CueSheet.programme`` gives), and
    why a blocking beside it is not used ('' if it is, or there is none): a blocking that does not stage leaves the
    cue sheet's places and estimated durations in force, as if there were none."""
    from yuesheng.staging.paths import blocking_beside

    if (path := blocking_beside(sheet)) is None:
        return None, ""
    try:
        return ground(sheet, variants, readings, path), ""
    except InvalidInputError as exc:
        where = Path(exc.problems[0].file).name if exc.problems else "the blocking"
        return None, (f"{where}: {len(exc.problems)} problem(s) (yuesheng validate lists them): "
                      "the cue sheet's places and estimated durations are used")


def kept_clean(sheet: CueSheet, path: Path, configurations: Iterable[Configuration]) -> bool:
    """Whether the blocking at *path* staged without a problem under every one of *configurations* before, with the
    same inputs (``keep_clean``)."""
    folder, name = cache_folder("staging"), _digest(sheet, path, configurations, "clean")
    return folder is not None and bool(name) and (folder / f"{name}.clean").is_file()


def keep_clean(sheet: CueSheet, path: Path, configurations: Iterable[Configuration]) -> None:
    """Record that the blocking at *path* stages without a problem under every one of *configurations*."""
    folder, name = cache_folder("staging"), _digest(sheet, path, configurations, "clean")
    if folder is not None and name:
        keep(folder, f"{name}.clean", b"clean", entries=CACHE_ENTRIES)


def _text(cues: Mapping[str, CueTime]) -> str:
    kept = {cid: [None if t.duration is None else [t.duration.numerator, t.duration.denominator], t.basis]
            for cid, t in cues.items()}
    return json.dumps({"format": _FORMAT, "cues": kept}, ensure_ascii=False, separators=(",", ":"))


def _read(entry: Path) -> dict[str, CueTime] | None:
    """The CueTimes kept in *entry*, or None (none, unreadable or malformed)."""
    try:
        with open(entry, encoding="utf-8") as handle:
            kept = json.load(handle)
        if kept["format"] != _FORMAT:
            return None
        return {str(cid): CueTime(None if d is None else Fraction(int(d[0]), int(d[1])), str(basis))
                for cid, (d, basis) in kept["cues"].items()}
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        return None


def _digest(sheet: CueSheet, path: Path, configurations: Iterable[Configuration], kind: str = "ground") -> str:
    """The name of the entry for these inputs ('' if a file cannot be read: nothing is kept)."""
    try:
        files = [_file_digest(path, *_stat(path))]
        if (hall := _hall_of(path, *_stat(path))) is not None:
            files.append(hall.encode() + _file_digest(path.parent / hall, *_stat(path.parent / hall)))
    except (OSError, InvalidInputError):
        return ""
    digest = hashlib.sha256(f"{_FORMAT} {kind}".encode() + _code() + b"\0".join(files))
    digest.update(repr(_shape(sheet, configurations)).encode())
    return digest.hexdigest()[:40]


def _stat(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


@cache
def _file_digest(path: Path, size: int, mtime_ns: int) -> bytes:
    """The digest of the file at *path* as it is at that size and time: read once a process, however many
    configurations ask. Read as the loader reads it: InvalidInputError for a FIFO, a device or a file over its limit
    (a blocking naming ``hall: /dev/zero`` filled memory, one naming a FIFO hung); the staging says what is wrong."""
    from yuesheng.yamlload import MAX_BYTES, read_bytes

    data = read_bytes(path)
    if len(data) > MAX_BYTES:
        raise InvalidInputError([])
    return hashlib.sha256(data).digest()


@cache
def _hall_of(path: Path, size: int, mtime_ns: int) -> str | None:
    """The hall file the blocking at *path* names (``hall:``), beside it."""
    from yuesheng.yamlload import load

    data = load(path).data
    hall = data.get("hall") if isinstance(data, dict) else None
    return hall if isinstance(hall, str) else None


def _shape(sheet: CueSheet, configurations: Iterable[Configuration]) -> tuple[Any, ...]:
    """What staging reads of *sheet*: its rite, performers and counts, cue ids, and under each configuration who acts
    in each cue of the programme."""
    return (sheet.rite_id, tuple((p, v.count) for p, v in sheet.performers.items()), tuple(c.id for c in sheet.cues),
            tuple(tuple((c.id, c.who, c.performers) for c in sheet.active_cues(variants, dict(readings)))
                  for variants, readings in configurations))


@cache
def _code() -> bytes:
    """The staging code and its table, whose change changes every duration."""
    here = Path(__file__).parent
    files = [*sorted(here.glob("*.py")), here.parent / "data" / "staging.json"]
    return hashlib.sha256(b"".join(f.read_bytes() for f in files)).digest()
