"""The routes found in a hall, kept on disk between processes (``caches.folder("routes")``: JSON in
``$XDG_CACHE_HOME/yuesheng/routes``).

One file per hall geometry: its key (``caches.key``) is of the walls, the stairs and yuesheng's own code (which finds
them), so a hall whose walls move, or a change to how routes are found, starts afresh. The routes found
in a process are written when it ends, whole; an entry that cannot be read or written, or is not the JSON it should
be, is ignored without a word (the cache is only a shortcut, and ``routes`` checks every kept route against the walls
before using it). The folder holds at most ``CACHE_ENTRIES`` files.
"""

from __future__ import annotations

import atexit
import json
import math

from yuesheng import caches

CACHE_ENTRIES = 32
MAX_ENTRY_BYTES = 32 << 20  # a hall's routes (大射's: about 0.2 MB); a larger file is not read
_FORMAT = "yuesheng-routes-2"

Key = tuple[tuple[float, float], ...]  # the stops of a walk: start, via…, end


def _text(key: Key) -> str:
    return ";".join(f"{float(x)!r},{float(y)!r}" for x, y in key)


class Routes:
    """The routes of one hall: those read from its file, and those found since (written at exit)."""

    def __init__(self, folder: caches.Folder | None, name: str = "") -> None:
        self.folder, self.name = folder, name
        self.found: dict[str, list[tuple[float, float]]] = {}
        self.new = False
        if folder is not None:
            self._read(folder.read_json(name, limit=MAX_ENTRY_BYTES))

    def _read(self, kept: object) -> None:
        """The routes of a kept entry (its JSON value): each a key and a list of [x, y] of finite numbers."""
        try:
            if not isinstance(kept, dict) or kept["format"] != _FORMAT:
                return
            self.found = {k: [_point(p) for p in v] for k, v in kept["routes"].items() if isinstance(v, list)}
        except (ValueError, KeyError, TypeError, AttributeError):
            self.found = {}

    def get(self, key: Key) -> list[tuple[float, float]] | None:
        return self.found.get(_text(key))

    def put(self, key: Key, points: list[tuple[float, float]]) -> None:
        if self.folder is not None and not self.new:
            atexit.register(self.write)
        self.new = True
        self.found[_text(key)] = points

    def write(self) -> None:
        """Keep the routes in the cache, whole; any failure is ignored."""
        if self.folder is None or not self.new:
            return
        self.folder.write_json(self.name, {"format": _FORMAT, "routes": self.found}, entries=CACHE_ENTRIES)
        self.new = False


def _point(kept: object) -> tuple[float, float]:
    """A route's point as kept: [x, y], finite numbers; ValueError for anything else."""
    if isinstance(kept, list) and len(kept) == 2 and all(type(v) in (int, float) and math.isfinite(v) for v in kept):
        return float(kept[0]), float(kept[1])
    raise ValueError("not a point")


def open_routes(walls: list[list[tuple[float, float]]], stairs: list[tuple[float, float, float, float]]) -> Routes:
    """The kept routes of the hall with these walls (each its points) and stairs (top x, y, foot x, y)."""
    folder = caches.folder("routes")
    if folder is None:
        return Routes(None)
    walled = json.dumps([[[float(x), float(y)] for x, y in w] for w in walls])
    stepped = json.dumps([[float(v) for v in s] for s in stairs])
    return Routes(folder, f"{caches.key(_FORMAT, walled, stepped)}.json")
