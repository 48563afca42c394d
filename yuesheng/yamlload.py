"""Safe, bounded YAML loading that remembers where every value came from.

Scores and cue sheets are YAML written by people. This loader

- composes the YAML node graph with PyYAML and builds plain values itself, so no
  tag ever constructs an object (``!!python/object`` is an error, like every tag);
- resolves plain scalars by the YAML 1.2 core rules only: ``1:30`` stays the
  string ``"1:30"`` (YAML 1.1 would read 90), ``yes``/``on`` stay strings;
- rejects duplicate keys, files over ``MAX_BYTES``, and alias expansion beyond
  ``MAX_NODES`` nodes (an alias bomb fails at once instead of eating memory);
- keeps the line and column of every value, so that a problem can be reported
  as ``file:line:col: path: message``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner

from yuesheng.errors import InvalidInputError, Problem

MAX_BYTES = 1 << 20
MAX_NODES = 200_000
MAX_DEPTH = 64

PathKey = tuple[str | int, ...]

_DEFAULT_TAGS = {BaseResolver.DEFAULT_SCALAR_TAG, BaseResolver.DEFAULT_SEQUENCE_TAG, BaseResolver.DEFAULT_MAPPING_TAG}
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


class _PureLoader(Reader, Scanner, Parser, Composer, BaseResolver):
    """Composes nodes; resolves no implicit tags (every plain scalar stays a string node)."""

    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        BaseResolver.__init__(self)


# libyaml's parser when PyYAML was built with it (about ten times faster), same node graph.
_Loader: Any = getattr(yaml, "CBaseLoader", _PureLoader)


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
    marks: dict[PathKey, tuple[int, int]] = field(default_factory=dict)
    key_marks: dict[PathKey, tuple[int, int]] = field(default_factory=dict)

    def where(self, path: PathKey, *, key: bool = False) -> tuple[int | None, int | None]:
        """Line and column (1-based) of the value at *path* (of its key if *key*), or of its nearest parent.

        A block value starts on the line after its key; then the key's place is the one a reader wants.
        """
        for cut in range(len(path), -1, -1):
            here = path[:cut]
            key_mark = self.key_marks.get(here)
            if key_mark and ((key and cut == len(path)) or here not in self.marks or self.marks[here][0] > key_mark[0]):
                return key_mark
            if here in self.marks:
                return self.marks[here]
        return None, None

    def problem(
        self, path: PathKey, message: str, *, rule: str = "", severity: str = "error", key: bool = False
    ) -> Problem:
        """A Problem located at the value under *path* (at its key if *key*)."""
        line, col = self.where(path, key=key)
        return Problem(self.file, line, col, format_path(path), message, rule, severity)


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
        return float(text)
    return text


class _Builder:
    """Turns a node graph into plain values, bounded and with marks."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.marks: dict[PathKey, tuple[int, int]] = {}
        self.key_marks: dict[PathKey, tuple[int, int]] = {}
        self.count = 0

    def fail(self, node: Node, message: str, path: PathKey) -> InvalidInputError:
        mark = node.start_mark
        return InvalidInputError([Problem(self.file, mark.line + 1, mark.column + 1, format_path(path), message, "yaml")])

    def build(self, node: Node, path: PathKey) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise self.fail(node, f"document too large: more than {MAX_NODES} values after alias expansion", path)
        if len(path) > MAX_DEPTH:
            raise self.fail(node, f"nesting deeper than {MAX_DEPTH} levels", path)
        if node.tag not in _DEFAULT_TAGS:
            raise self.fail(node, f"YAML tag {node.tag!r} is not allowed (only plain data)", path)
        self.marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, ScalarNode):
            return _scalar(node)
        if isinstance(node, SequenceNode):
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        assert isinstance(node, MappingNode)  # the composer makes only these three kinds
        return self.mapping(node, path)

    def mapping(self, node: MappingNode, path: PathKey) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise self.fail(key_node, "a mapping key must be a plain string", path)
            key = str(key_node.value)
            if key in out:
                raise self.fail(key_node, f"duplicate key {key!r}", path + (key,))
            self.key_marks[path + (key,)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            out[key] = self.build(value_node, path + (key,))
        return out


def loads(text: str, file: str = "<string>") -> Document:
    """Load one YAML document from *text*; raise InvalidInputError with its place."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise InvalidInputError([Problem(file, None, None, "", f"file larger than {MAX_BYTES} bytes", "yaml")])
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (None, None)
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise InvalidInputError([Problem(file, line, col, "", f"YAML syntax error: {message}", "yaml")]) from None
    except yaml.YAMLError as exc:
        raise InvalidInputError([Problem(file, None, None, "", f"YAML error: {exc}", "yaml")]) from None
    if node is None:
        return Document(file, None)
    builder = _Builder(file)
    data = builder.build(node, ())
    return Document(file, data, builder.marks, builder.key_marks)


def load(path: str | Path) -> Document:
    """Read and load a YAML file; unreadable, oversized or non-UTF-8 files are InvalidInputError."""
    name = str(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InvalidInputError([Problem(name, None, None, "", f"cannot read file: {exc.strerror or exc}", "io")]) from None
    if len(raw) > MAX_BYTES:
        raise InvalidInputError([Problem(name, None, None, "", f"file larger than {MAX_BYTES} bytes", "yaml")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InvalidInputError([Problem(name, line, None, "", "not UTF-8 text", "yaml")]) from None
    return loads(text, name)
