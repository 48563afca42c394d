"""The routes found in a hall, kept on disk between processes (``$XDG_CACHE_HOME/yuesheng/routes``, JSON).

One file per hall geometry: its key is a hash of the walls, the stairs and the source of the routing code, so a
hall whose walls move, or a change to how routes are found, starts afresh. The routes found in a process are
written when it ends, atomically; an entry that cannot be read or written is ignored without a word (the cache is
only a shortcut, and ``routes`` checks every kept route against the walls before using it). The folder is the
user's alone (0700) and holds at most ``CACHE_ENTRIES`` files.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
from functools import cache
from pathlib import Path

CACHE_ENTRIES = 32
_FORMAT = "yuesheng-routes-1"

Key = tuple[tuple[float, float], ...]  # the stops of a walk: start, via…, end


@cache
def _code() -> str:
    """A hash of the routing code: its routes change when the code does."""
    here = Path(__file__).parent
    return hashlib.sha256(b"".join((here / name).read_bytes() for name in ("routes.py", "routecache.py"))).hexdigest()


def _text(key: Key) -> str:
    return ";".join(f"{float(x)!r},{float(y)!r}" for x, y in key)


class Routes:
    """The routes of one hall: those read from its file, and those found since (written at exit)."""

    def __init__(self, entry: Path | None) -> None:
        self.entry = entry
        self.found: dict[str, list[tuple[float, float]]] = {}
        self.new = False
        if entry is not None:
            self._read(entry)

    def _read(self, entry: Path) -> None:
        try:
            with open(entry, encoding="utf-8") as handle:
                kept = json.load(handle)
            if kept["format"] == _FORMAT:
                self.found = {k: [(float(x), float(y)) for x, y in v] for k, v in kept["routes"].items()}
        except (OSError, ValueError, KeyError, TypeError):
            self.found = {}

    def get(self, key: Key) -> list[tuple[float, float]] | None:
        return self.found.get(_text(key))

    def put(self, key: Key, points: list[tuple[float, float]]) -> None:
        if self.entry is not None and not self.new:
            atexit.register(self.write)
        self.new = True
        self.found[_text(key)] = points

    def write(self) -> None:
        """Keep the routes in the entry, atomically; any failure is ignored."""
        if self.entry is None or not self.new:
            return
        temporary = self.entry.with_name(f"{self.entry.name}.{os.getpid()}.tmp")
        try:
            self.entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            with open(temporary, "w", encoding="utf-8") as handle:
                json.dump({"format": _FORMAT, "routes": self.found}, handle, separators=(",", ":"), allow_nan=False)
            os.replace(temporary, self.entry)
            self.new = False
            _prune(self.entry.parent)
        except (OSError, ValueError, TypeError):
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)


def open_routes(walls: list[list[tuple[float, float]]], stairs: list[tuple[float, float, float, float]]) -> Routes:
    """The kept routes of the hall with these walls (each its points) and stairs (top x, y, foot x, y)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return Routes(None)
    try:
        code = _code()
    except OSError:
        return Routes(None)
    shape = json.dumps([_FORMAT, code, [[[float(x), float(y)] for x, y in w] for w in walls],
                        [[float(v) for v in s] for s in stairs]])
    return Routes(Path(base, "yuesheng", "routes", f"{hashlib.sha256(shape.encode()).hexdigest()[:32]}.json"))


def _prune(folder: Path) -> None:
    """Remove all but the ``CACHE_ENTRIES`` entries written most recently."""
    entries = list(folder.glob("*.json"))
    if len(entries) > CACHE_ENTRIES:
        for old in sorted(entries, key=_written)[: len(entries) - CACHE_ENTRIES]:
            with contextlib.suppress(OSError):
                old.unlink()


def _written(entry: Path) -> float:
    try:
        return entry.stat().st_mtime
    except OSError:
        return 0.0
