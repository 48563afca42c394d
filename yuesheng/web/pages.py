"""The director's page kept between runs: a page made once is read back, not made again (``web/sheet.py``).

What is kept is the page as the templates make it (``sheet._page``), before its font and the render it plays are put
in, in ``caches.folder("pages")``. Its name is ``caches.key`` of the values the page is made from (``caches.digest``),
not of the files they were read from: the Timeline whole (its events, its cues' timings and the cues, the cast,
layout, names, notices …), the ground's entry (itself a key of everything staging reads: the plates and the
transport are kept under it), the sheet's cast and the pieces its cues sing (the transport's names and words), the
paces' values, the cues given a plate of their own, and the package's code and templates with the Jinja2 and
MarkupSafe that render them. A copy of a cue sheet and its blocking elsewhere is the same page; a piece holds its
score's path among its values, so a score moved is another key (a miss, never a wrong page). A page whose ground
cannot be kept (no entry) is made every time.

An entry is the format's line and the page; it is read back only if it is one whole page (UTF-8, from its doctype to
its end, with its head's end where the font goes): anything else, a damaged or cut-short entry included, is a miss.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from yuesheng import caches
from yuesheng.music.score import Piece

if TYPE_CHECKING:
    from yuesheng.production import Production
    from yuesheng.timeline import Event

CACHE_ENTRIES = 16  # pages of each kind (shipped rites', one's own): 大射's is 1.3 MB
MAX_ENTRY_BYTES = 64 << 20  # a page larger than this is neither kept nor read
_FORMAT = "yuesheng-page-1"
_HEAD = f"{_FORMAT}\n".encode("ascii")
_START, _END, _HEAD_END = b"<!DOCTYPE html>\n", b"</html>", b"</head>"


def kept(production: Production, plate_at: Sequence[str], make: Callable[[], str]) -> bytes:
    """The page of *production* with plates also at *plate_at* as UTF-8: kept from an earlier run, else *make*'s
    (and kept)."""
    folder = caches.folder("pages")
    name = entry(production, plate_at) if folder is not None else None  # no digest with the caches off
    if folder is not None and name is not None and \
            (page := _read(folder.read(name, limit=len(_HEAD) + MAX_ENTRY_BYTES))) is not None:
        return page
    page = make().encode("utf-8")
    if folder is not None and name is not None and len(page) <= MAX_ENTRY_BYTES and _whole(page):
        folder.write(name, _HEAD + page, entries=CACHE_ENTRIES)
    return page


def entry(production: Production, plate_at: Sequence[str]) -> str | None:
    """The name of the kept page of *production* with plates also at *plate_at*; None where it is not kept (a ground
    that cannot be kept, a value that cannot be digested)."""
    timeline, sheet, ground = production.timeline, production.sheet, production.ground
    if ground is not None and not ground.entry:
        return None
    paces = production.options.paces
    values = caches.digest(replace(timeline, events=()), columns(timeline.events),
                           dict(sheet.performers),
                           {ref.piece.id: ref.piece for cue in sheet.cues for ref in cue.pieces},
                           paces.key() if paces is not None else "", sorted(set(plate_at)), apart=(Piece,))
    if values is None:
        return None
    where = ground.entry if ground is not None else ""
    prefix = caches.prefix_of(where) if ground is not None else caches.prefix(sheet.file)
    parts = (caches.library("jinja2"), caches.library("markupsafe"), where.removeprefix(prefix), values)
    return f"{prefix}{caches.key(_FORMAT, *parts)}.html"


def columns(events: tuple[Event, ...]) -> list[tuple[Any, ...]]:
    """*events* as columns, one for each field of ``Event`` in order: what ``entry`` digests of them (a column of one
    kind of value is written at C speed, a named tuple each through Python)."""
    return list(zip(*events, strict=True))


def _whole(page: bytes) -> bool:
    """Whether *page* is a whole page: from its doctype to its end, with its head's end."""
    return page.startswith(_START) and page.rstrip().endswith(_END) and _HEAD_END in page


def _read(kept: bytes | None) -> bytes | None:
    """The page a kept entry holds, if it is one whole page in UTF-8; else None."""
    if kept is None or not kept.startswith(_HEAD):
        return None
    page = kept[len(_HEAD):]
    try:
        page.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return page if _whole(page) else None
