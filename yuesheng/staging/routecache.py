"""The routes found in a hall, kept on disk between processes (``caches.cache_folder("routes")``: JSON in
``$XDG_CACHE_HOME/yuesheng/routes``).

One file per hall geometry: its key is a hash of the walls, the stairs and the source of the routing code, so a
hall whose walls move, or a change to how routes are found, starts afresh. The routes found in a process are
written when it ends, whole (``caches.keep``); an entry that cannot be read or written is ignored without a word (the
cache is only a shortcut, and ``routes`` checks every kept route against the walls before using it). The folder is
the user's alone (0700) and holds at most ``CACHE_ENTRIES`` files.
"""

from __future__ import annotations

import atexit
import hashlib
import json
from functools import cache
from pathlib import Path

from yuesheng.caches import cache_folder, keep

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

    def __init__(self, folder: Path | None, name: str = "") -> None:
        self.folder, self.name = folder, name
        self.found: dict[str, list[tuple[float, float]]] = {}
        self.new = False
        if folder is not None:
            self._read(folder / name)

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
        if self.folder is not None and not self.new:
            atexit.register(self.write)
        self.new = True
        self.found[_text(key)] = points

    def write(self) -> None:
        """Keep the routes in the cache, whole; any failure is ignored."""
        if self.folder is None or not self.new:
            return
        data = json.dumps({"format": _FORMAT, "routes": self.found}, separators=(",", ":"), allow_nan=False)
        keep(self.folder, self.name, data.encode(), entries=CACHE_ENTRIES)
        self.new = False


def open_routes(walls: list[list[tuple[float, float]]], stairs: list[tuple[float, float, float, float]]) -> Routes:
    """The kept routes of the hall with these walls (each its points) and stairs (top x, y, foot x, y)."""
    folder = cache_folder("routes")
    try:
        code = _code()
    except OSError:
        folder = None
    if folder is None:
        return Routes(None)
    shape = json.dumps([_FORMAT, code, [[[float(x), float(y)] for x, y in w] for w in walls],
                        [[float(v) for v in s] for s in stairs]])
    return Routes(folder, f"{hashlib.sha256(shape.encode()).hexdigest()[:32]}.json")
