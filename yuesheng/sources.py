"""The shipped texts: their pages, the parts of a page, quotes on a page, and private-use characters.

Three Kanseki Repository transcriptions ship in ``yuesheng/texts/`` (licence and
attribution beside them): 儀禮集釋 (KR1d0030, 卷四–十), 周禮注疏 (KR1d0003,
卷二十二–二十四, 三十) and 瑟譜 (KR1i0004, 卷首–卷六).

Page names: 卷-葉面 (the 卷 number, the leaf, a or b for its two sides), with a
text prefix except for 儀禮集釋, the text the cue sheets cite::

    9-23b             儀禮集釋 卷九, leaf 23, side b   (also "儀禮集釋 9-23b", "yili:9-23b")
    zhouli:30-25a     周禮注疏 卷三十, leaf 25, side a  (also "周禮注疏 30-25a")
    sepu:2-3a         瑟譜 卷二, leaf 3, side a        (also "瑟譜 2-3a")

Zero-padded numbers (``009-23b``, as the score files write 瑟譜 pages) and the
transcription's own ids (``KR1d0030_WYG_009-23b``) are accepted too.

A page's text is its printed lines joined (``¶`` ends a line), whitespace
removed. Its parts tell the layers apart: in 儀禮集釋 the 經 runs at the left
margin — and from the heading ``記`` that opens a rite's 記 to the end of its 卷,
the 記 — a note starts with 鄭注 (鄭目録) or 釋曰 and its lines are indented, and ``(案…)``
is a collation note in small double-line print (``/`` divides the two
columns); in 周禮注疏 the layers follow one another inline — 經, then 注, then
音義(…) and 疏(…) in small print, then the next 經. Where the transcription indents a
whole stretch one step more (9-1b: each note opens two steps in, the 經 one), a line
one step in after a note's short last line is 經 again; elsewhere the rare 經 line that
the transcription indents is read as part of the note before it.

A quote's layer (``layer``) is read from the parts it lies in: ``經``, ``記``,
``鄭注``, ``釋曰`` (a collation note or small print counts as the layer it stands in),
several joined by ``+`` where a quote runs over from one into the next.

``&KRnnnn;`` stands for a character outside Unicode's common planes (``characters``:
``display`` shows the standard character for each code in ``PRIVATE_USE``, with where it
comes from; a code not in the table is marked ``〓KRnnnn``). The files and
the cue sheets keep the codes: a quote is matched with both sides displayed, and the
cue sheet reader displays every text it reads, so no output shows a code.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from yuesheng import caches
from yuesheng.characters import display
from yuesheng.errors import InvalidValueError, UnknownPageError

TEXTS_DIR = Path(__file__).resolve().parent / "texts"


@dataclass(frozen=True, slots=True)
class Text:
    """One shipped text: key, folder, Kanseki Repository id, title and the layout of its pages."""

    key: str
    folder: str
    kr_id: str
    title: str
    style: str  # "yili" (經 at the margin, indented notes), "zhushu" (inline 注 音義 疏), "pu" (paragraphs)


TEXTS: dict[str, Text] = {t.key: t for t in (
    Text("yili", "yili-jishi", "KR1d0030", "儀禮集釋", "yili"),
    Text("zhouli", "zhouli-zhushu", "KR1d0003", "周禮注疏", "zhushu"),
    Text("sepu", "sepu", "KR1i0004", "瑟譜", "pu"),
)}
_BY_NAME = {name: t.key for t in TEXTS.values() for name in (t.key, t.title, t.kr_id)}


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    """*pattern* compiled once, on first use: not at import, where the patterns of this module cost a command that
    uses none of them about a millisecond."""
    return re.compile(pattern)


# --- page ids -----------------------------------------------------------------------------------------------------

_PAGE_NAME = (
    r"(?:<pb:)?(?:(?P<kr>KR\w+?)_WYG_|(?P<prefix>[a-z]+):|(?P<title>[^\x00-\x7f\s]+)\s*)?"
    r"(?P<juan>\d{1,3})-(?P<leaf>\d{1,3})(?P<side>[ab])>?")


@dataclass(frozen=True, slots=True, order=True)
class PageId:
    """A page: text key, 卷, leaf and side. ``str`` gives the page's name (``9-23b``, ``sepu:2-3a``)."""

    text: str
    juan: int
    leaf: int
    side: str

    def __str__(self) -> str:
        prefix = "" if self.text == "yili" else f"{self.text}:"
        return f"{prefix}{self.juan}-{self.leaf}{self.side}"

    @property
    def citation(self) -> str:
        """'儀禮集釋 9-23b'."""
        return f"{TEXTS[self.text].title} {self.juan}-{self.leaf}{self.side}"


def parse_page(name: str, *, text: str = "yili") -> PageId:
    """A page name (any accepted spelling) as a PageId; *text* is the text when the name has no prefix.

    InvalidValueError for a malformed name or an unknown text prefix.
    """
    match = _regex(_PAGE_NAME).fullmatch(name.strip())
    if match is None:
        raise InvalidValueError("page name", name, "卷-葉面 such as 9-23b, sepu:2-3a or zhouli:30-25a")
    label = match["kr"] or match["prefix"] or match["title"]
    if label is not None and label not in _BY_NAME:
        expected = "one of " + ", ".join(f"{t.key} ({t.title})" for t in TEXTS.values())
        raise InvalidValueError("text", label, expected,
                                message=f"unknown text {label!r} in page {name!r}: expected {expected}")
    return PageId(_BY_NAME[label] if label else text, int(match["juan"]), int(match["leaf"]), match["side"])


# --- pages and their parts ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PagePart:
    """A stretch of a page in one layer, named as the text marks it: 經, 記, 鄭注, 鄭目録 and 釋曰 (儀禮集釋); 經, 注,
    音義 and 疏 (周禮注疏); 案 (a collation note), 小字, or '' (瑟譜)."""

    kind: str
    text: str  # as transcribed, whitespace removed; private-use codes kept


@dataclass(frozen=True, slots=True)
class Page:
    """One side of a leaf: its id and its parts in order."""

    id: PageId
    parts: tuple[PagePart, ...]

    @property
    def text(self) -> str:
        """The page's text, lines joined, whitespace removed, codes kept."""
        return "".join(p.text for p in self.parts)


_PB = r"<pb:(KR\w+?)_WYG_(\d+)-(\d+)([ab])>"
_SPACE = r"[\s\u3000¶]"
_TOKEN = r"\([^)]*\)?|[^(]+"


class _Builder:
    """Collects the parts of every page of one 卷 from its lines."""

    def __init__(self, style: str) -> None:
        self.style = style
        self.parts: dict[PageId, list[list[str]]] = {}  # page → [[kind, text], …]
        self.kind = ""  # the current large-print layer
        self.margin = "經"  # what the margin holds: the 經, or from its heading on the 記 (儀禮集釋)
        self.small = ""  # the kind of the small print just read ('' after large print)
        self.open = False  # inside a ( … ) that runs over a line end
        self.shifted = False  # the notes open two steps in, the 經 one (9-1b)
        self.full = False  # the line before ran to the page's width: a line after it goes on with it

    def add(self, page: PageId, kind: str, text: str, *, new: bool) -> None:
        parts = self.parts.setdefault(page, [])
        if parts and parts[-1][0] == kind and not new:
            parts[-1][1] += text
        elif text:
            parts.append([kind, text])

    def line(self, page: PageId, raw: str) -> None:
        content = raw.lstrip(" \u3000")
        indent = len(raw) - len(content)
        content = _regex(_SPACE).sub("", content)
        if not content:
            if self.style == "pu":
                self.kind = "new"
            return
        if self.style == "pu":
            self.add(page, "", content, new=self.kind == "new")
            self.kind = ""
            return
        new = False
        if self.style == "yili" and not self.open and not content.startswith("("):
            new = self.layer(content, indent)
        self.full = indent + _cells(content) >= _FULL_LINE
        for token in self.tokens(content):
            self.token(page, token, new=new)
            new = False

    def layer(self, content: str, indent: int) -> bool:
        """Set the layer a line of 儀禮集釋 of *indent* steps is in; whether it begins a new part."""
        marker = next((m for m in ("鄭注", "鄭目録", "釋曰") if content.startswith(m)), "")
        if indent == 0 and content.startswith("記"):  # the 記's heading: from here to the end of the 卷
            self.margin = "記"
        if marker or indent == 0:
            self.shifted = indent >= 2
        margin = indent == 0 or (self.shifted and indent == 1 and not self.full)
        new = False
        if marker:
            self.kind, new = marker, True
        elif margin and self.kind != self.margin:
            self.kind, new = self.margin, True
        self.kind = self.kind or "鄭注"
        return new

    def tokens(self, content: str) -> Iterator[tuple[bool, str]]:
        """(small print?, text) runs of a line; a ( … ) may run over the line's end."""
        if self.open:
            close = content.find(")")
            if close < 0:
                yield True, content
                return
            yield True, content[: close + 1]
            self.open = False
            content = content[close + 1:]
        for match in _regex(_TOKEN).finditer(content):
            token = match.group(0)
            small = token.startswith("(")
            self.open = small and not token.endswith(")")
            yield small, token

    def token(self, page: PageId, token: tuple[bool, str], *, new: bool) -> None:
        small, text = token
        if small:
            if not self.small:
                self.small = "案" if text.startswith("(案") else "小字"
            self.add(page, self.small, text, new=False)
            return
        if self.style == "zhushu":
            self.zhushu(page, text)
            return
        self.add(page, self.kind, text, new=new or bool(self.small))
        self.small = ""

    def zhushu(self, page: PageId, text: str) -> None:
        """Large print of 周禮注疏: 經, then from 注 on 注; a trailing 音義 or 疏 names the small print after it."""
        if self.small or not self.kind:
            self.kind = "經"
            new = True
        else:
            new = False
        marker = next((m for m in ("音義", "疏") if text.endswith(m)), "")
        body = text[: len(text) - len(marker)]
        if self.kind == "經" and (at := body.find("注")) >= 0:
            self.add(page, "經", body[:at], new=new)
            self.kind, body, new = "注", body[at:], True
        self.add(page, self.kind, body, new=new)
        if marker:
            self.add(page, marker, marker, new=True)
            self.small = marker
            return
        self.small = ""


_FULL_LINE = 20  # the cells of a full printed line of 儀禮集釋 (21 or 22 as transcribed; a short last line ends a part)


def _cells(content: str) -> float:
    """The width of a line in cells: small double-line print takes half a cell a character."""
    small = sum(len(m.group(0)) - 2 for m in _regex(r"\([^)]*\)").finditer(content))
    return len(content) - small / 2 - content.count("(") - content.count(")")


@cache
def pages(text: str) -> dict[PageId, Page]:
    """Every shipped page of a text (``yili``, ``zhouli``, ``sepu``), in order. Loaded once a process; parsed once
    for its files as they are (the parse kept in ``caches.folder("texts")``, see ``_kept``)."""
    info = TEXTS[text]
    found = _kept(text)
    if found is None:
        files = sorted((TEXTS_DIR / info.folder).glob(f"{info.kr_id}_*.txt"))
        found = [(pid.juan, pid.leaf, pid.side, parts)
                 for path in files for pid, parts in _parse(text, path.read_bytes())]
        _keep(text, found)
    out: dict[PageId, Page] = {}
    for juan, leaf, side, parts in found:
        pid = PageId(text, juan, leaf, side)
        out[pid] = Page(pid, tuple(PagePart(k, t) for k, t in parts))
    return out


def _parse(text: str, data: bytes) -> list[tuple[PageId, list[list[str]]]]:
    """The pages of one file of *text*: each page's id and its parts ([kind, text], …)."""
    builder = _Builder(TEXTS[text].style)
    page: PageId | None = None
    for raw in data.decode("utf-8").splitlines():
        if match := _regex(_PB).fullmatch(raw.rstrip("¶")):
            page = PageId(text, int(match[2]), int(match[3]), match[4])
            builder.parts.setdefault(page, [])
        elif page is not None:
            builder.line(page, raw.rstrip("¶"))
    return list(builder.parts.items())


# --- the parse kept between runs ------------------------------------------------------------------------------------

_KEPT_FORMAT = "yuesheng-pages-3"
MAX_KEPT_BYTES = 16 << 20  # a text's pages (儀禮集釋's: 0.2 MB); a larger entry is not read
Kept = list[tuple[int, int, str, list[list[str]]]]  # juan, leaf, side, parts


def _kept(text: str) -> Kept | None:
    """The pages of *text* parsed by an earlier run, or None. Kept as JSON under ``caches.key``, whose digest of the
    package holds the texts' files and this code; an entry that cannot be read, or holds anything but pages
    (``_pages``), is a miss."""
    folder = caches.folder("texts")
    kept = folder.read_json(f"{caches.key(_KEPT_FORMAT, text)}.json", limit=MAX_KEPT_BYTES) if folder else None
    return kept if _pages(kept) else None


def _pages(kept: object) -> bool:
    """Whether *kept* is a list of pages as ``_parse`` gives them: [juan, leaf, side, [[kind, text], …]]."""
    return isinstance(kept, list) and all(
        type(p) is list and len(p) == 4 and type(p[0]) is int and type(p[1]) is int and type(p[2]) is str
        and type(p[3]) is list and all(type(q) is list and len(q) == 2 and type(q[0]) is str and type(q[1]) is str
                                       for q in p[3]) for p in kept)


def _keep(text: str, found: Kept) -> None:
    folder = caches.folder("texts")
    if folder is not None:
        folder.write_json(f"{caches.key(_KEPT_FORMAT, text)}.json", found, entries=8)


def page(name: str | PageId, *, text: str = "yili") -> Page:
    """The shipped page *name*; UnknownPageError with the nearest pages if there is none."""
    try:
        pid = name if isinstance(name, PageId) else parse_page(name, text=text)
    except InvalidValueError as exc:
        raise UnknownPageError(str(name), [], str(exc)) from None
    found = pages(pid.text).get(pid)
    if found is None:
        raise UnknownPageError(str(name), [str(p) for p in nearest(pid)], _shipped(pid))
    return found


@cache
def _juans(text: str) -> frozenset[int]:
    return frozenset(p.juan for p in pages(text))


@cache
def _order(text: str) -> tuple[dict[PageId, int], tuple[PageId, ...]]:
    ids = tuple(pages(text))
    return {pid: n for n, pid in enumerate(ids)}, ids


def has_juan(pid: PageId) -> bool:
    """Whether the 卷 of *pid* is shipped at all."""
    return pid.juan in _juans(pid.text)


def _shipped(pid: PageId) -> str:
    juans = sorted({p.juan for p in pages(pid.text)})
    title = TEXTS[pid.text].title
    if pid.juan in juans:
        return f"{title} 卷{pid.juan} has no leaf {pid.leaf}{pid.side}"
    return f"{title} 卷{pid.juan} is not shipped; shipped: 卷 {', '.join(map(str, juans))}"


def nearest(pid: PageId, count: int = 3) -> list[PageId]:
    """The *count* shipped pages nearest to *pid* in page order (where it would stand among them), in order."""
    ids = sorted(pages(pid.text))
    at = bisect.bisect_left(ids, pid)
    return sorted(sorted(ids[max(0, at - count): at + count], key=lambda p: abs(ids.index(p) - at + 0.5))[:count])


def next_page(current: Page) -> Page | None:
    """The page after *current* in its text, or None."""
    index, ids = _order(current.id.text)
    at = index[current.id] + 1
    return pages(current.id.text)[ids[at]] if at < len(ids) else None


# --- quotes ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class QuoteMatch:
    """Where a quote is: spans in ``display(page.text + next page's text)``; whether it runs on to the next page."""

    spans: tuple[tuple[int, int], ...]
    runs_on: bool


def _plain(text: str) -> str:
    return display(_regex(_SPACE).sub("", text))


@cache
def _searched(pid: PageId) -> tuple[int, str, tuple[tuple[int, str], ...]]:
    """What a quote is searched in, for page *pid*: the length of its displayed text, that text with the next page's
    after it, and the end and layer of each part of both in it (small print in the layer of the print before it)."""
    on = pages(pid.text)[pid]
    following = next_page(on)
    both, bounds, kind = "", [], ""
    for part in on.parts + (following.parts if following else ()):
        kind = kind if part.kind in ("案", "小字", "音義") else part.kind
        both += _plain(part.text)
        bounds.append((len(both), kind))
    return len(_plain(on.text)), both, tuple(bounds)


def find_quote(quote: str, on: Page) -> QuoteMatch | None:
    """The quote on page *on*, or None.

    ``…`` marks words left out: each part must follow the one before. The first
    part starts on the page; the rest may run on to the next page. Both sides
    are compared with private-use codes displayed, so 楣 and ``&KR0925;`` match.
    """
    size, both, _ = _searched(on.id)
    here = both[:size]
    parts = [p for p in (_plain(q) for q in quote.split("…")) if p]
    if not parts:
        return None
    spans: list[tuple[int, int]] = []
    position = 0
    for part in parts:
        found = both.find(part, position)
        if found < 0 or (not spans and found >= len(here)):
            return None
        spans.append((found, found + len(part)))
        position = found + len(part)
    return QuoteMatch(tuple(spans), spans[-1][1] > len(here))


def layers(quote: str, on: Page) -> tuple[str, ...]:
    """The layers (經, 記, 鄭注, 鄭目録, 釋曰; 經, 注, 疏 of 周禮注疏) the quote lies in on page *on*, in order;
    () when it is not there, or on a page without layers (瑟譜). A collation note or small print counts as the layer
    of the large print before it."""
    found = find_quote(quote, on)
    if found is None:
        return ()
    bounds = _searched(on.id)[2]
    out: list[str] = []
    for start, stop in found.spans:
        for at, (end, kind) in enumerate(bounds):
            begin = bounds[at - 1][0] if at else 0
            if begin < stop and start < end and kind and kind not in out:
                out.append(kind)
    return tuple(out)


@cache
def layer(page_name: str, quote: str) -> str:
    """The layer of a cite (``layers`` joined by ``+``: '經', '鄭注', '經+鄭注'), '' for a page or quote not found.
    Kept between runs in a table of every cite asked for (``_Layers``): a warm run parses no page to know it."""
    table = _layers()
    if (found := table.found.get(f"{page_name}\0{quote}")) is not None:
        return found
    try:
        found = "+".join(layers(quote, page(page_name)))
    except UnknownPageError:
        found = ""
    table.put(f"{page_name}\0{quote}", found)
    return found


_LAYERS_FORMAT = "yuesheng-layers-1"
MAX_LAYERS = 20_000  # cites in the table (the four shipped rites: about 900); a fuller table is begun again


class _Layers:
    """The layer of each cite asked for (page NUL quote → layer), read once a process from ``caches.folder("texts")``
    under ``caches.key`` (whose digest of the package holds the texts and this code) and written back once, at exit,
    if a cite was added."""

    def __init__(self) -> None:
        self.folder = caches.folder("texts")
        self.name = f"{caches.SHIPPED}{caches.key(_LAYERS_FORMAT)}.json"
        kept = self.folder.read_json(self.name, limit=MAX_KEPT_BYTES) if self.folder is not None else None
        table = kept.get("layers") if isinstance(kept, dict) and kept.get("format") == _LAYERS_FORMAT else None
        self.found: dict[str, str] = {k: v for k, v in table.items() if isinstance(v, str)} \
            if isinstance(table, dict) and len(table) <= MAX_LAYERS else {}
        self.new = False

    def put(self, cite: str, found: str) -> None:
        import atexit

        if self.folder is not None and not self.new:
            atexit.register(self.write)
        if len(self.found) >= MAX_LAYERS:
            self.found.clear()
        self.new = True
        self.found[cite] = found

    def write(self) -> None:
        """Keep the table in the cache, whole; any failure is ignored."""
        if self.folder is not None and self.new:
            self.folder.write_json(self.name, {"format": _LAYERS_FORMAT, "layers": self.found}, entries=8)
            self.new = False


@cache
def _layers() -> _Layers:
    return _Layers()
