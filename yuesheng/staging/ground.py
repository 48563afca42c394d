"""A rite's ground for one build: each action's duration as its blocking gives it, kept between runs, and everyone's
stands only when an output asks for them.

Scheduling needs of the blocking only each cue's duration and its basis; staging the rite to learn them (reading the
blocking and hall, placing everyone at every cue, routing every walk) costs a build more than the rest of it. So the
durations staged once are kept in ``caches.folder("staging")`` (JSON, one small file per configuration; the whole
staged rite beside it as JSON data, ``datacodec``, for the outputs that draw it: ``kept_rite``, ``keep_rite``), under
``caches.key`` of everything staging reads: the blocking file and the hall file it names, what the cue sheet gives it
(its performers and counts, its cue ids, the readings chosen, and who acts in each cue of the programme), the paces
the walks are timed at (the shipped table's or a ``--paces`` file's values), and yuesheng itself (every file
of the package by content: a limit changed in any module is another key). A change to any of them is another key, so
an entry is never used for other inputs; an entry that cannot be read, or is not what its format says, is a miss.
Only a rite that staged without a problem is kept: a broken blocking is staged (and refused) every time.

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

from yuesheng import caches
from yuesheng.cuesheet import CueSheet
from yuesheng.errors import DecodeError, InvalidInputError

if TYPE_CHECKING:
    from yuesheng.staging.paces import Paces
    from yuesheng.staging.rite import StagedRite

CACHE_ENTRIES = 64
MAX_ENTRY_BYTES = 32 << 20  # a kept staged rite (大射: 0.5 MB) or its durations; a larger file is not read
_FORMAT = "yuesheng-ground-3"
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
    paces: Paces | None = None  # the paces its walks are timed at (None: the shipped table's)

    def rite(self, sheet: CueSheet) -> StagedRite:
        """Everyone's stands at every cue of *sheet* (the sheet this ground was found for): kept from an earlier
        run, else staged now (and kept).

        The digest is of the files' contents: a rite kept from another copy of them names that copy's files, so it is
        used only where it names this blocking."""
        from yuesheng.staging.rite import staged_rite

        if (kept := kept_rite(self.entry, self.path)) is not None:
            return kept
        rite = staged_rite(sheet, self.variants, dict(self.readings), self.path, self.paces)
        keep_rite(self.entry, rite)
        return rite


def kept_rite(entry: str, path: Path) -> StagedRite | None:
    """The staged rite kept under the ground's *entry* (``Ground.entry``) for the blocking at *path*, or None (none, or
    not a staged rite of that file: ``datacodec`` checks every value)."""
    from yuesheng.datacodec import decode
    from yuesheng.staging.rite import StagedRite

    folder = caches.folder("staging") if entry else None
    data = folder.read_json(f"{entry}.rite.json", limit=MAX_ENTRY_BYTES) if folder is not None else None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return None
    try:
        rite = decode(data.get("rite"), StagedRite)
    except DecodeError:
        return None
    return rite if rite.file == str(path) else None


def keep_rite(entry: str, rite: StagedRite) -> None:
    """Keep *rite* under the ground's *entry* (nothing if it has none)."""
    from yuesheng.datacodec import encode
    from yuesheng.staging.rite import StagedRite

    folder = caches.folder("staging") if entry else None
    if folder is not None:
        folder.write_json(f"{entry}.rite.json", {"format": _FORMAT, "rite": encode(rite, StagedRite)},
                          entries=CACHE_ENTRIES)


def ground(sheet: CueSheet, variants: frozenset[str], readings: Mapping[str, str], path: Path,
           paces: Paces | None = None) -> Ground:
    """The ground of *sheet* under *variants* and *readings* from the blocking at *path*, its walks at *paces* (None:
    the shipped table's): kept from an earlier run, else staged (InvalidInputError if it does not stage) and kept."""
    folder, name = caches.folder("staging"), _digest(sheet, path, [(variants, readings)], paces=paces)
    cues = _read(folder, f"{name}.json") if folder is not None and name else None
    if cues is None:
        from yuesheng.staging.rite import cue_times

        cues = {cid: CueTime(*timed) for cid, timed in cue_times(sheet, variants, readings, path, paces).items()}
        if folder is not None and name:
            folder.write(f"{name}.json", _text(cues).encode(), entries=CACHE_ENTRIES)
    return Ground(path, cues, variants, tuple(sorted(readings.items())), name, paces)


def ground_of(sheet: CueSheet, variants: frozenset[str], readings: Mapping[str, str],
              paces: Paces | None = None) -> tuple[Ground | None, str]:
    """The ground of *sheet* under its programme *variants* and *readings* (those ``CueSheet.programme`` gives), at
    *paces* (None: the shipped table's), and
    why a blocking beside it is not used ('' if it is, or there is none): a blocking that does not stage leaves the
    cue sheet's places and estimated durations in force, as if there were none."""
    from yuesheng.staging.paths import blocking_beside

    if (path := blocking_beside(sheet)) is None:
        return None, ""
    try:
        return ground(sheet, variants, readings, path, paces), ""
    except InvalidInputError as exc:
        where = Path(exc.problems[0].file).name if exc.problems else "the blocking"
        return None, (f"{where}: {len(exc.problems)} problem(s) (yuesheng validate lists them): "
                      "the cue sheet's places and estimated durations are used")


def kept_clean(sheet: CueSheet, path: Path, configurations: Iterable[Configuration]) -> bool:
    """Whether the blocking at *path* staged without a problem under every one of *configurations* before, with the
    same inputs (``keep_clean``)."""
    folder, name = caches.folder("staging"), _digest(sheet, path, configurations, "clean")
    return folder is not None and bool(name) and folder.read(f"{name}.clean", limit=5) == b"clean"


def keep_clean(sheet: CueSheet, path: Path, configurations: Iterable[Configuration]) -> None:
    """Record that the blocking at *path* stages without a problem under every one of *configurations*."""
    folder, name = caches.folder("staging"), _digest(sheet, path, configurations, "clean")
    if folder is not None and name:
        folder.write(f"{name}.clean", b"clean", entries=CACHE_ENTRIES)


def _text(cues: Mapping[str, CueTime]) -> str:
    kept = {cid: [None if t.duration is None else [t.duration.numerator, t.duration.denominator], t.basis]
            for cid, t in cues.items()}
    return json.dumps({"format": _FORMAT, "cues": kept}, ensure_ascii=False, separators=(",", ":"))


def _read(folder: caches.Folder, entry: str) -> dict[str, CueTime] | None:
    """The CueTimes kept in *entry*, or None (none, unreadable or malformed)."""
    kept = folder.read_json(entry, limit=MAX_ENTRY_BYTES)
    try:
        if kept["format"] != _FORMAT:
            return None
        return {cid: _cue_time(time) for cid, time in kept["cues"].items()}
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def _cue_time(kept: object) -> CueTime:
    """A CueTime as kept: [duration, basis], the duration None or [numerator, denominator] (integers, the
    denominator positive); ValueError for anything else."""
    if not (isinstance(kept, list) and len(kept) == 2 and isinstance(kept[1], str)):
        raise ValueError("not a cue's time")
    duration = kept[0]
    if duration is None:
        return CueTime(None, kept[1])
    if isinstance(duration, list) and len(duration) == 2 and all(type(n) is int for n in duration) and duration[1] > 0:
        return CueTime(Fraction(duration[0], duration[1]), kept[1])
    raise ValueError("not a duration")


def _digest(sheet: CueSheet, path: Path, configurations: Iterable[Configuration], kind: str = "ground", *,
            paces: Paces | None = None) -> str:
    """The name of the entry for these inputs, the paces among them ('' if a file cannot be read: nothing is
    kept). The shipped paces are keyed by the package's files, as everything shipped; a --paces table by its values
    (the paces module is not imported for a build at the shipped paces: a warm start stages nothing)."""
    try:
        files: list[bytes | str] = [_file_digest(path, *_stat(path))]
        if (hall := _hall_of(path, *_stat(path))) is not None:
            files += [hall, _file_digest(path.parent / hall, *_stat(path.parent / hall))]
    except (OSError, InvalidInputError):
        return ""
    shipped = caches.prefix(sheet.file, path, path.parent / hall if hall is not None else path)
    return shipped + caches.key(f"{_FORMAT} {kind}", *files, repr(_shape(sheet, configurations)),
                                "" if paces is None else paces.key())


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
    """What staging reads of *sheet*: its rite, performers' names and counts, cue ids, and under each configuration
    its readings (the hall is drawn under them: a reading may move its places) and who acts in each cue of the
    programme and what its action and quote say (``rank`` reads the stairs they name)."""
    return (sheet.rite_id, tuple((p, v.name, v.count) for p, v in sheet.performers.items()),
            tuple(c.id for c in sheet.cues),
            tuple((tuple(sorted(readings.items())),
                   tuple((c.id, c.who, c.performers, c.action, c.cite.page, c.cite.quote)
                         for c in sheet.active_cues(variants, dict(readings))))
                  for variants, readings in configurations))
