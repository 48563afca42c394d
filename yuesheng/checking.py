"""Checking loaded YAML against a schema, collecting every problem with its place.

Shared by the score and cue-sheet readers: unknown keys ("did you mean"),
missing keys and wrong types are reported as ``file:line:col: path: message``.
"""

from __future__ import annotations

from typing import Any

from yuesheng.errors import Problem, Severity
from yuesheng.text import did_you_mean
from yuesheng.yamlload import Document, PathKey

MAX_INT = 2**63 - 1  # the largest integer any field takes (a seed; counts have their own, smaller limits)
_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
               list: "a list", dict: "a mapping"}


def type_name(value: Any) -> str:
    """How a user would call the type of *value*."""
    return "null" if value is None else _TYPE_NAMES.get(type(value), type(value).__name__)


Found = tuple[PathKey, str, str, Severity, bool]  # a problem before it is placed: path, message, rule, severity, key


class Checker:
    """Collects problems found in one Document: each placed (``problems``), and as found (``found``: what a kept
    check gives back, to be placed again where its value stands then)."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.problems: list[Problem] = []
        self.found: list[Found] = []

    def error(self, path: PathKey, message: str, rule: str = "", *, key: bool = False) -> None:
        self.report((path, message, rule, "error", key))

    def warn(self, path: PathKey, message: str, rule: str = "") -> None:
        self.report((path, message, rule, "warning", False))

    def report(self, found: Found) -> None:
        """Add a problem as found, placed in the Document."""
        path, message, rule, severity, key = found
        self.found.append(found)
        self.problems.append(self.doc.problem(path, message, rule=rule, severity=severity, key=key))

    def field(self, data: dict[str, Any], path: PathKey, key: str, kind: type, *, required: bool = True) -> Any:
        """``data[key]`` if it is of *kind*; otherwise None and a problem (if required or present)."""
        value = data.get(key)
        if value is None:
            if required:
                self.error(path, f"missing key {key!r}", "schema")
            return None
        wrong_bool = isinstance(value, bool) and kind is not bool
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
            self.error(path + (key,), f"number {value} is too large (at most {MAX_INT:,})", "schema")
            return None
        if kind is float and isinstance(value, int) and not wrong_bool:
            return float(value)
        if not isinstance(value, kind) or wrong_bool:
            self.error(path + (key,),
                       f"expected {_TYPE_NAMES.get(kind, kind.__name__)}, got {type_name(value)} {value!r}", "schema")
            return None
        return value

    def keys(self, data: dict[str, Any], path: PathKey, allowed: tuple[str, ...] | list[str]) -> None:
        """Report every key of *data* not in *allowed*, with the nearest allowed key."""
        for key in data:
            if key not in allowed:
                hint = did_you_mean(key, allowed, n=1) or f"; expected one of {', '.join(allowed)}"
                self.error(path + (key,), f"unknown key {key!r}{hint}", "schema", key=True)

    def mapping(self, value: Any, path: PathKey, what: str) -> dict[str, Any] | None:
        """*value* if it is a mapping, else None and a problem."""
        if isinstance(value, dict):
            return value
        self.error(path, f"expected a mapping ({what}), got {type_name(value)}", "schema")
        return None
