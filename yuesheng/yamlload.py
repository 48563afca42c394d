"""Safe, bounded YAML loading that remembers where every value came from.

Scores and cue sheets are YAML written by people. This loader

- composes the YAML node graph with PyYAML and builds plain values itself, so no
  tag ever constructs an object (``!!python/object`` is an error, like every tag);
- resolves plain scalars by the YAML 1.2 core rules only: ``1:30`` stays the
  string ``"1:30"`` (YAML 1.1 would read 90), ``yes``/``on`` stay strings;
- rejects duplicate keys, files over ``MAX_BYTES``, and alias expansion beyond
  ``MAX_NODES`` nodes (an alias bomb fails at once instead of eating memory);
- reads regular files only (a FIFO or device is refused without blocking), UTF-8
  only (other encodings are reported at the line and column of the first bad byte);
- refuses control characters in text (raw, or made by escapes such as ``"\\e"``)
  and plain numbers longer than ``MAX_NUMBER_CHARS``;
- keeps the line and column of every value, so that a problem can be reported
  as ``file:line:col: path: message``.

``load`` keeps what it built from a file in a per-user cache (``caches.folder("yaml")``,
JSON, one entry per text, named by ``caches.key`` of the file's bytes, PyYAML and yuesheng's
own code): a file read again unchanged is not parsed again, and PyYAML is not even imported.
The file itself is still read and checked (regular, size, UTF-8) every time; an entry that is
not the JSON it should be, or that cannot be read or written, is ignored without a word. The
folder holds at most ``CACHE_ENTRIES`` files: writing one more removes those written longest ago.
"""

from __future__ import annotations

import codecs
import math
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng import caches
from yuesheng.errors import InvalidInputError, Problem, Severity

if TYPE_CHECKING:
    from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_BYTES = 1 << 20
MAX_NODES = 200_000
MAX_DEPTH = 64
MAX_NUMBER_CHARS = 30  # a plain number longer than this is an error (Python refuses ints over 4,300 digits)

PathKey = tuple[str | int, ...]
Mark = tuple[int, int]  # line and column, 1-based

_DEFAULT_TAGS = {"tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"}  # PyYAML's BaseResolver's
_INT = re.compile(r"[-+]?[0-9]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


@cache
def pure_loader() -> Any:
    """PyYAML's own parser as a loader class that composes nodes and resolves no implicit tags (every plain scalar
    stays a string node). PyYAML is imported here, when a file is first parsed, not with this module."""
    from yaml.composer import Composer
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.resolver import BaseResolver
    from yaml.scanner import Scanner

    class PureLoader(Reader, Scanner, Parser, Composer, BaseResolver):
        def __init__(self, stream: str) -> None:
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            Composer.__init__(self)
            BaseResolver.__init__(self)

    return PureLoader


_Loader: Any = None  # the loader class; None: libyaml's parser when PyYAML was built with it (about ten times faster)


def _loader() -> Any:
    import yaml

    return _Loader or getattr(yaml, "CBaseLoader", None) or pure_loader()


def format_path(path: PathKey) -> str:
    """('cues', 3, 'start') → 'cues[3].start'."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


@dataclass
class Document:
    """Plain data loaded from a YAML file, with the (line, column) of each value."""

    file: str
    data: Any
    marks: Mapping[PathKey, Mark] = field(default_factory=dict)
    key_marks: Mapping[PathKey, Mark] = field(default_factory=dict)

    def where(self, path: PathKey, *, key: bool = False) -> tuple[int | None, int | None]:
        """Line and column (1-based) of the value at *path* (of its key if *key*), or of its nearest parent.

        A block value starts on the line after its key; then the key's place is the one a reader wants.
        """
        if isinstance(self.marks, _KeptMarks):  # from the cache: paired now, and plain dicts from here on
            self.marks, self.key_marks = self.marks.kept.pairs
        marks, key_marks = self.marks, self.key_marks
        for cut in range(len(path), -1, -1):
            here = path[:cut]
            key_mark = key_marks.get(here)
            if key_mark and ((key and cut == len(path)) or here not in marks or marks[here][0] > key_mark[0]):
                return key_mark
            if here in marks:
                return marks[here]
        return None, None

    def problem(
        self, path: PathKey, message: str, *, rule: str = "", severity: Severity = "error", key: bool = False
    ) -> Problem:
        """A Problem located at the value under *path* (at its key if *key*)."""
        line, col = self.where(path, key=key)
        return Problem(self.file, line, col, format_path(path), message, rule, severity)


def _check_scalar(node: ScalarNode) -> str | None:
    """Why *node*'s text cannot be taken (a control character, a number too large), or None."""
    bad = _CONTROL.search(node.value)
    if bad:
        return (f"control character U+{ord(bad.group()):04X} in text (only tab and newline are allowed; "
                "escape sequences such as \\e or \\0 make them too)")
    if node.style or len(node.value) <= MAX_NUMBER_CHARS:
        return None
    if _INT.fullmatch(node.value) or _FLOAT.fullmatch(node.value):
        return (f"number of {len(node.value)} characters is too large (at most {MAX_NUMBER_CHARS}): "
                "quote it if it is text")
    return None


def _scalar(node: ScalarNode) -> Any:
    if node.style:  # quoted or block scalar: always a string (plain is None, or "" from libyaml)
        return node.value
    text = node.value
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        value = float(text)
        return value if math.isfinite(value) else text
    return text


def _node_kinds() -> tuple[type[ScalarNode], type[SequenceNode], type[MappingNode]]:
    """PyYAML's three kinds of node (imported when a file is parsed)."""
    from yaml.nodes import MappingNode, ScalarNode, SequenceNode

    return ScalarNode, SequenceNode, MappingNode


def _expanded_size(node: Node, memo: dict[int, int], depth: int) -> int:
    """How many values *node* becomes once every alias is expanded (each shared node counted once per use)."""
    if depth > MAX_DEPTH or id(node) in memo:
        return memo.get(id(node), 1)
    memo[id(node)] = 1  # a recursive alias counts once
    if isinstance(node.value, list):  # a sequence's items, or a mapping's (key, value) pairs
        memo[id(node)] = 1 + sum(_expanded_size(item[1] if isinstance(item, tuple) else item, memo, depth + 1)
                                 for item in node.value)
    return memo[id(node)]


class _Builder:
    """Turns a node graph into plain values, bounded and with marks."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.marks: dict[PathKey, Mark] = {}
        self.key_marks: dict[PathKey, Mark] = {}
        self.count = 0
        self.checked: set[int] = set()
        self.scalar_kind, self.sequence_kind, self.mapping_kind = _node_kinds()

    def fail(self, node: Node, message: str, path: PathKey) -> InvalidInputError:
        mark = node.start_mark
        return InvalidInputError(
            [Problem(self.file, mark.line + 1, mark.column + 1, format_path(path), message, "yaml")])

    def build(self, node: Node, path: PathKey) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(node, f"document too large: more than {MAX_NODES} values after alias expansion", path)
        if len(path) > MAX_DEPTH:
            raise self.fail(node, f"nesting deeper than {MAX_DEPTH} levels", path)
        if node.tag not in _DEFAULT_TAGS:
            raise self.fail(node, f"YAML tag {node.tag!r} is not allowed (only plain data)", path)
        self.marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, self.scalar_kind):
            if id(node) not in self.checked:  # an alias repeats a node: check it once
                if (why := _check_scalar(node)) is not None:
                    raise self.fail(node, why, path)
                self.checked.add(id(node))
            return _scalar(node)
        if isinstance(node, self.sequence_kind):
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        assert isinstance(node, self.mapping_kind)  # the composer makes only these three kinds
        return self.mapping(node, path)

    def mapping(self, node: MappingNode, path: PathKey) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, self.scalar_kind):
                raise self.fail(key_node, "a mapping key must be a plain string", path)
            key = str(key_node.value)
            if (why := _check_scalar(key_node)) is not None:
                raise self.fail(key_node, why, path)
            if key in out:
                raise self.fail(key_node, f"duplicate key {key!r}", path + (key,))
            self.key_marks[path + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[key] = self.build(value_node, path + (key,))
        return out


def loads(text: str, file: str = "<string>") -> Document:
    """Load one YAML document from *text*; raise InvalidInputError with its place."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise InvalidInputError([Problem(file, None, None, "", f"file larger than {MAX_BYTES} bytes", "yaml")])
    node = _compose(text, file)
    if node is None:
        return Document(file, None)
    _bounded(node, file)
    builder = _Builder(file)
    data = builder.build(node, ())
    return Document(file, data, builder.marks, builder.key_marks)


def _bounded(node: Node, file: str) -> int:
    """How many values *node* makes; InvalidInputError (an alias bomb) before it is expanded, over MAX_NODES."""
    if (size := _expanded_size(node, {}, 0)) > MAX_NODES:
        mark = node.start_mark
        raise InvalidInputError([Problem(file, mark.line + 1, mark.column + 1, "", f"document too large: {size:,} "
                                         f"values after alias expansion, more than {MAX_NODES}", "yaml")])
    return size


def _compose(text: str, file: str) -> Node | None:
    """The node graph of *text* (None: empty); InvalidInputError at the place of a syntax error."""
    import yaml
    from yaml.reader import ReaderError

    loader = _loader()
    try:
        node = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise InvalidInputError([Problem(file, line, col, "", f"YAML syntax error: {message}", "yaml")]) from None
    except ReaderError as exc:  # a character YAML does not allow (NUL, ESC, BEL…), by its place in *text*
        # libyaml counts the position in bytes of UTF-8, PyYAML's own reader in characters
        before = text.encode("utf-8")[: exc.position].decode("utf-8", "ignore") if loader is not pure_loader() else \
            text[: exc.position]
        line, col = _line_col(before, len(before))
        what = f"U+{exc.character:04X}" if isinstance(exc.character, int) else repr(exc.character)
        raise InvalidInputError([Problem(file, line, col, "", f"control character {what} is not allowed in YAML "
                                         f"({exc.reason})", "yaml")]) from None
    except yaml.YAMLError as exc:
        raise InvalidInputError([Problem(file, None, None, "", f"YAML error: {exc}", "yaml")]) from None
    return node


def _line_col(text: str, position: int) -> tuple[int, int]:
    """1-based line and column of the character at *position* of *text*."""
    before = text[:position]
    return before.count("\n") + 1, position - (before.rfind("\n") + 1) + 1


def read_bytes(path: str | Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file, at most *limit* + 1 of them.

    A FIFO, device, socket or directory is refused without blocking (it is opened non-blocking
    and checked before anything is read). Raises InvalidInputError.
    """
    name = str(path)

    def fail(message: str) -> InvalidInputError:
        return InvalidInputError([Problem(name, None, None, "", message, "io")])

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise fail(f"cannot read file: {exc.strerror or exc}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
        raise fail(f"not a regular file ({kind}); yuesheng reads cue sheets and scores from files only")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as handle:
        try:
            return handle.read(limit + 1)
        except OSError as exc:
            raise fail(f"cannot read file: {exc.strerror or exc}") from None


def _decode(raw: bytes, name: str) -> str:
    """UTF-8 text of *raw*; anything else is reported at its line and column, with a hint at the encoding."""
    head = raw[:32]
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) or (len(head) > 1 and b"\0" * (len(head) // 2) in
                                                                      (head[0::2], head[1::2])):
        raise InvalidInputError([Problem(name, 1, 1, "", "not UTF-8 text: the file is UTF-16 (a byte-order mark or "
                                         "a zero byte beside every letter); save it as UTF-8", "yaml")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        good = raw[: exc.start].decode("utf-8")
        line, col = _line_col(good, len(good))
        bad = raw[exc.start:exc.start + 4].hex(" ")
        raise InvalidInputError([Problem(name, line, col, "", f"not UTF-8 text (bytes {bad}; perhaps GBK or Big5): "
                                         "save it as UTF-8", "yaml")]) from None
    if (nul := text.find("\0")) >= 0:
        line, col = _line_col(text, nul)
        raise InvalidInputError(
            [Problem(name, line, col, "", "NUL byte: not a text file; save it as UTF-8 text", "yaml")])
    return text


def load(path: str | Path, fmt: str = "") -> Document:
    """Read and load a YAML file; unreadable, oversized, non-regular or non-UTF-8 files are InvalidInputError.

    With *fmt* the file must have a top-level line ``format: FMT``, or it is refused before it is parsed, with a
    message that quotes nothing of it: a file named by another (a blocking's ``hall:``) may be anyone's, and an
    error must not print a line of ``/etc/shadow``. What a file's text gave before is taken from the cache (see the
    module's docstring).
    """
    name = str(path)
    raw = read_bytes(path)
    if len(raw) > MAX_BYTES:
        raise InvalidInputError([Problem(name, None, None, "", f"file larger than {MAX_BYTES} bytes", "yaml")])
    if fmt and not re.search(rb"(?m)^format:[ \t]*(['\"]?)" + re.escape(fmt.encode()) + rb"\1[ \t]*(#.*)?\r?$", raw):
        raise InvalidInputError([Problem(name, None, None, "", f"not a {fmt} file: it has no line 'format: {fmt}' "
                                         "(nothing of it is shown)", "schema")])
    text = _decode(raw, name)
    folder = caches.folder("yaml")
    entry = caches.prefix(path) + _cache_entry(raw) if folder is not None else ""
    cached = _read_cache(folder.read_json(entry, limit=MAX_ENTRY_BYTES), text, name) if folder is not None else None
    if cached is not None:
        return cached
    if folder is not None and (pieced := _pieced(folder, path, text, name)) is not None:
        folder.write_json(entry, pieced, entries=CACHE_ENTRIES)
        return _read_cache(pieced, text, name) or loads(text, name)
    doc = loads(text, name)
    if folder is not None:
        _write_cache(folder, entry, doc)
    return doc


# --- the cache of loaded files ---------------------------------------------------------------------------------------

_CACHE_FORMAT = "yuesheng-yaml-3"
CACHE_ENTRIES = 256  # the most files kept: writing one more removes the entries written longest ago
MAX_ENTRY_BYTES = 64 * MAX_BYTES  # an entry of a file within MAX_BYTES is well below this; a larger one is not read


def _cache_entry(raw: bytes) -> str:
    """The name of the cache entry of a file whose bytes are *raw* (``caches.key``: PyYAML and yuesheng included)."""
    return f"{caches.key(_CACHE_FORMAT, caches.library('yaml'), raw)}.json"


def _read_cache(cached: Any, text: str, name: str) -> Document | None:
    """The Document kept in an entry (its JSON value, *cached*) for *text*, or None (no entry, another format,
    malformed). Its marks are paired with their paths only when first read (``_Kept``)."""
    try:
        marks, key_marks = cached["marks"], cached["key_marks"]
        if cached["format"] != _CACHE_FORMAT or not _numbers(marks) or not _numbers(key_marks):
            return None
        kept = _Kept(name, text, cached["data"], marks, key_marks)
        return Document(name, cached["data"], _KeptMarks(kept, 0), _KeptMarks(kept, 1))
    except (ValueError, KeyError, TypeError):
        return None


def _numbers(flat: Any) -> bool:
    """Whether *flat* is a list of integers (line and column numbers): ``map(type)`` runs in C, a genexpr would take
    the 33,000 of a 大射 build one by one in Python."""
    return isinstance(flat, list) and set(map(type, flat)) <= {int}


class _Kept:
    """The marks of a file's entry in the cache, in ``_visit``'s order: paired with the paths of *data* when first
    asked for — pairing them costs more than reading the entry, and a build that reports nothing never asks. If they
    do not pair (a damaged entry), *text* is parsed again for its own."""

    def __init__(self, name: str, text: str, data: Any, marks: list[int], key_marks: list[int]) -> None:
        self.name, self.text, self.data, self.flat = name, text, data, (marks, key_marks)

    @cached_property
    def pairs(self) -> tuple[dict[PathKey, Mark], dict[PathKey, Mark]]:
        paths: list[PathKey] = []
        key_paths: list[PathKey] = []
        try:
            _visit(self.data, (), paths, key_paths)
            return (dict(zip(paths, _pairs(self.flat[0]), strict=True)),
                    dict(zip(key_paths, _pairs(self.flat[1]), strict=True)))
        except (ValueError, TypeError, RecursionError):
            doc = loads(self.text, self.name)
            return dict(doc.marks), dict(doc.key_marks)


class _KeptMarks(Mapping[PathKey, Mark]):
    """One of a ``_Kept``'s two mappings (0: values, 1: keys)."""

    def __init__(self, kept: _Kept, which: int) -> None:
        self.kept, self.which = kept, which

    def __getitem__(self, path: PathKey) -> Mark:
        return self.kept.pairs[self.which][path]

    def __iter__(self) -> Iterator[PathKey]:
        return iter(self.kept.pairs[self.which])

    def __len__(self) -> int:
        return len(self.kept.pairs[self.which])


def _visit(value: Any, path: PathKey, paths: list[PathKey], key_paths: list[PathKey]) -> None:
    """The path of every value (and of every key) of *value* in the order ``_Builder`` records their marks."""
    paths.append(path)
    if isinstance(value, dict):
        for key, item in value.items():
            key_paths.append(path + (key,))
            _visit(item, path + (key,), paths, key_paths)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _visit(item, path + (i,), paths, key_paths)


def _pairs(flat: list[int]) -> list[Mark]:
    """[1, 2, 3, 4] → [(1, 2), (3, 4)]."""
    if len(flat) % 2:
        raise ValueError("an odd number of line and column numbers")
    numbers = iter(flat)
    return list(zip(numbers, numbers, strict=True))


def _write_cache(folder: caches.Folder, entry: str, doc: Document) -> None:
    """Keep *doc* in *entry*, whole (``Folder.write``, which also keeps the folder to ``CACHE_ENTRIES``); any failure
    is ignored (the cache is only a shortcut)."""
    paths: list[PathKey] = []
    key_paths: list[PathKey] = []
    _visit(doc.data, (), paths, key_paths)
    if paths != list(doc.marks) or key_paths != list(doc.key_marks):  # what _read_cache could not rebuild
        return
    content = {"format": _CACHE_FORMAT, "data": doc.data,
               "marks": [n for mark in doc.marks.values() for n in mark],  # in the order of _visit's paths
               "key_marks": [n for mark in doc.key_marks.values() for n in mark]}
    folder.write_json(entry, content, entries=CACHE_ENTRIES)  # not a value JSON cannot hold (.nan): not kept


# --- a cue sheet's cues, each parsed once ----------------------------------------------------------------------------
#
# An edit changes one cue of a sheet: its other cues need not be parsed again. A file whose top level has a line
# ``cues:`` followed by a block sequence (each item a line ``  - ``, at one indentation) is cut into its frame (the
# file with the cues' lines left empty) and its cues; each piece is parsed alone (its lines counted from its own
# start) and kept, by a digest of its text, in one entry of the file's (``_PIECES``); the document is put together
# from the pieces as the whole would have parsed. Anything else — another layout, a document marker, a piece that does
# not parse alone (an alias to another piece, a scalar running on into the next cue), more than MAX_NODES values —
# is parsed whole, as before, which also gives any error its place.

_PIECES = "yuesheng-yaml-pieces-1"
_CUES_LINE = re.compile(r"cues:[ \t]*(#.*)?\r?")
_ITEM = re.compile(r"( +)-( |\r?$)")
_MARKER = re.compile(r"^(---|\.\.\.|%)", re.MULTILINE)  # a document marker or a directive
MAX_PIECES = 4096  # pieces kept for one file: those of its latest text first
parsed_pieces = [0]  # the pieces parsed (not kept) in this process: the tests count what an edit parses again


@dataclass(frozen=True, slots=True)
class _Cut:
    """A file cut into pieces: its frame's text, the line of ``cues:`` (0-based), and each cue's first line and text."""

    frame: str
    line: int
    items: tuple[tuple[int, str], ...]


def _cut(text: str) -> _Cut | None:
    """*text* cut into its frame and cues, or None where it is not laid out as a cue sheet is (see above)."""
    if _MARKER.search(text):
        return None
    lines = text.split("\n")
    heads = [n for n, line in enumerate(lines) if _CUES_LINE.fullmatch(line)]
    if len(heads) != 1:
        return None
    head = heads[0]
    end = next((n for n in range(head + 1, len(lines)) if lines[n][:1] not in ("", " ", "#", "\r")), len(lines))
    body = [n for n in range(head + 1, end) if lines[n].strip() and not lines[n].lstrip().startswith("#")]
    first = _ITEM.match(lines[body[0]]) if body else None
    if first is None:
        return None
    indent = " " * len(first[1])
    if any(not lines[n].startswith(indent) for n in body):
        return None
    starts = [n for n in body if (item := _ITEM.match(lines[n])) is not None and item[1] == indent]
    bounds = [*starts, end]
    items = tuple((a, "\n".join(lines[a:b])) for a, b in zip(bounds, bounds[1:], strict=False))
    frame = "\n".join(line if not head < n < end else "" for n, line in enumerate(lines))
    return _Cut(frame, head, items)


def _piece(text: str, name: str, path: PathKey) -> list[Any]:
    """[data, marks, key marks] of one piece, its marks flat and counted from its own first line: a cue (its text is
    a sequence of one item, built at *path*, a cue's place: its depth is the depth it has in the file), or the frame
    (*path* ())."""
    node = _compose(text, name)
    parsed_pieces[0] += 1
    if path:
        if node is None or not isinstance(node.value, list) or len(node.value) != 1 or \
                not isinstance(node.value[0], _node_kinds()[2]):
            raise InvalidInputError([])
        node = node.value[0]
    if node is None:
        raise InvalidInputError([])
    _bounded(node, name)
    builder = _Builder(name)
    data = builder.build(node, path)
    return [data, [n for mark in builder.marks.values() for n in mark],
            [n for mark in builder.key_marks.values() for n in mark]]


def _pieced(folder: caches.Folder, path: str | Path, text: str, name: str) -> dict[str, Any] | None:
    """The cache entry of *text* (as ``_write_cache`` makes it), put together from its pieces, those of an earlier text
    of the file kept; None where it is not cut (see above) or a piece does not parse alone."""
    cut = _cut(text)
    if cut is None:
        return None
    entry = f"{caches.prefix(path)}{caches.key(_PIECES, caches.library('yaml'), str(Path(path).resolve()))}.pieces.json"
    kept = folder.read_json(entry, limit=MAX_ENTRY_BYTES)
    kept = kept.get("pieces") if isinstance(kept, dict) and kept.get("format") == _PIECES else None
    kept = kept if isinstance(kept, dict) else {}
    used: dict[str, Any] = {}
    try:
        frame = _kept_piece(kept, used, cut.frame, name, ())
        items = [_kept_piece(kept, used, item, name, ("cues", 0)) for _, item in cut.items]
    except InvalidInputError:
        return None
    whole = _whole(cut, frame, items)
    if whole is not None:
        folder.write_json(entry, {"format": _PIECES, "pieces": caches.newest(used, kept, MAX_PIECES)},
                          entries=CACHE_ENTRIES)
    return whole


def _kept_piece(kept: dict[str, Any], used: dict[str, Any], text: str, name: str, path: PathKey) -> list[Any]:
    """A piece's [data, marks, key marks], kept (by a digest of its text and whether it is a cue or the frame: not of
    its place, so a cue added before it changes nothing of it) or parsed now at *path*."""
    import hashlib

    digest = hashlib.sha256(f"{bool(path)}\0{text}".encode("utf-8", "surrogatepass")).hexdigest()[:32]
    piece = kept.get(digest)
    if not (isinstance(piece, list) and len(piece) == 3 and _numbers(piece[1]) and _numbers(piece[2])):
        piece = _piece(text, name, path)
    used[digest] = piece
    return piece


def _whole(cut: _Cut, frame: list[Any], items: list[list[Any]]) -> dict[str, Any] | None:
    """The entry of the whole file from its pieces: the frame's data with its cues, and the marks in ``_visit``'s
    order, each cue's lines moved to where it stands in the file; None if they do not fit (the frame has no empty
    ``cues:``, or too many values)."""
    data, marks, key_marks = frame
    if not isinstance(data, dict) or "cues" not in data or data["cues"] is not None:
        return None
    if sum(len(item[1]) for item in items) // 2 > MAX_NODES:
        return None
    paths: list[PathKey] = []
    key_paths: list[PathKey] = []
    _visit(data, (), paths, key_paths)
    at, key_at = 2 * paths.index(("cues",)), 2 * key_paths.index(("cues",)) + 2
    first_line, first_text = cut.items[0]
    cue_marks = [first_line + 1, len(first_text) - len(first_text.lstrip(" ")) + 1]  # the sequence: its first "-"
    cue_keys: list[int] = []
    for (line, _), (_, item_marks, item_keys) in zip(cut.items, items, strict=True):
        cue_marks += _moved(item_marks, line)
        cue_keys += _moved(item_keys, line)
    return {"format": _CACHE_FORMAT, "data": {**data, "cues": [item[0] for item in items]},
            "marks": marks[:at] + cue_marks + marks[at + 2:], "key_marks": key_marks[:key_at] + cue_keys +
            key_marks[key_at:]}


def _moved(flat: list[int], lines: int) -> list[int]:
    """Flat (line, column) marks moved down by *lines*."""
    out = list(flat)
    out[::2] = [line + lines for line in flat[::2]]
    return out
