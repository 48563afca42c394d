"""Builds kept between runs: a command that builds a rite again from the same files with the same options reads the
cue sheet as loaded and its Timeline back, instead of loading, checking and building them again.

An entry of ``caches.cache_folder("builds")`` is named by a digest of everything a build reads (``build_name``): each
input file (the cue sheet, every score file, shipped or ``--scores``, a ``--timing`` file) by its path and its bytes,
the options as given, and yuesheng itself (every file of the package by name, size and time of change) with the
Python that runs it. A change to any of them is another name, so an entry is never used for other inputs.

The ground (the blocking beside the sheet and the hall it names) is checked when an entry is read, not named: a kept
Timeline is used only if its ground's own digest (``staging.ground``: the blocking, its hall, the staging code and what
the sheet gives staging) is still what it was, or, without one, if there is still no blocking beside the sheet. A
build whose blocking did not stage (``staging_notice``) is not kept. Only a build that succeeded is kept, and a build
prints nothing, so a kept one gives the command exactly what building would have. An entry that cannot be read, or
holds anything else, is a miss.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from yuesheng.caches import cache_folder, keep, pickled, unpickled
from yuesheng.errors import InvalidInputError
from yuesheng.yamlload import MAX_BYTES, read_bytes

if TYPE_CHECKING:
    from yuesheng.cuesheet import CueSheet
    from yuesheng.timeline import Timeline

FORMAT = "yuesheng-build-1"
CACHE_ENTRIES = 16  # each about 1 MB for 大射儀 (6,810 events)
MAX_KEPT_EVENTS = 50_000  # a larger build (大射 at 1/5 s a syllable) is not kept: 16 of them would fill 100 MB
MAX_KEPT_BYTES = 8 << 20  # nor an entry larger than this, whatever its events hold (long texts)


def build_name(inputs: Sequence[Path], options: Sequence[object]) -> str:
    """The entry's name for a build that reads *inputs* with *options* ('' if a file cannot be read as the build reads
    it, regular and within ``yamlload.MAX_BYTES``: nothing is kept, and the build reports it)."""
    digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{options!r}".encode())
    digest.update(_code())
    for path in inputs:
        try:
            data = read_bytes(path)  # a FIFO or device refused without blocking, as the loader refuses it
        except InvalidInputError:
            return ""
        if len(data) > MAX_BYTES:
            return ""
        digest.update(f"\0{path}\0{os.path.abspath(path)}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        digest.update(data)
    return digest.hexdigest()[:40]


def kept_build(name: str) -> tuple[CueSheet, Timeline] | None:
    """The cue sheet and Timeline kept under *name*, if there are and their ground is as it was; else None."""
    from yuesheng.cuesheet import CueSheet
    from yuesheng.timeline import Timeline

    folder = cache_folder("builds") if name else None
    kept = unpickled(folder / f"{name}.pickle") if folder is not None else None
    if not (isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], CueSheet)
            and isinstance(kept[1], Timeline)):
        return None
    sheet, timeline = kept
    return (sheet, timeline) if _same_ground(sheet, timeline) else None


def keep_build(name: str, sheet: CueSheet, timeline: Timeline) -> None:
    """Keep *sheet* and its *timeline* under *name*: not a build whose blocking did not stage, nor one beyond
    ``MAX_KEPT_EVENTS`` or ``MAX_KEPT_BYTES``."""
    from yuesheng.staging.paths import blocking_beside

    if not name or len(timeline.events) > MAX_KEPT_EVENTS:
        return
    ground = timeline.ground
    if not ground.entry if ground is not None else blocking_beside(sheet) is not None:
        return  # a ground that could not be named, or a blocking that did not stage: it could never be read back
    folder = cache_folder("builds")
    if folder is not None and len(data := pickled((sheet, timeline))) <= MAX_KEPT_BYTES:
        keep(folder, f"{name}.pickle", data, entries=CACHE_ENTRIES)


def _same_ground(sheet: CueSheet, timeline: Timeline) -> bool:
    """Whether the ground *timeline* was built on is the one beside *sheet* now."""
    from yuesheng.staging.ground import entry_name
    from yuesheng.staging.paths import blocking_beside

    path = blocking_beside(sheet)
    ground = timeline.ground
    if ground is None:
        return path is None
    return path == ground.path and bool(ground.entry) and entry_name(sheet, path, ground.variants,
                                                                       dict(ground.readings)) == ground.entry


@cache
def _code() -> bytes:
    """yuesheng itself: each file of the package (code, tables, templates) by name, size and time of change."""
    digest = hashlib.sha256()
    for name, size, changed in sorted(_files(str(Path(__file__).resolve().parent.parent), "")):
        digest.update(f"{name}\0{size}\0{changed}\0".encode("utf-8", "surrogateescape"))
    return digest.digest()


def _files(folder: str, prefix: str) -> list[tuple[str, int, int]]:
    """(name under the package, size, time of change) of every file under *folder*, byte-code caches left out."""
    found = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    found += _files(entry.path, f"{prefix}{entry.name}/")
            elif entry.is_file():
                info = entry.stat()
                found.append((prefix + entry.name, info.st_size, info.st_mtime_ns))
    return found
