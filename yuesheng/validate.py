"""Validation: a cue-sheet file → every problem (YAML, schema, references, ritual rules) and the sheet.

Composes the layers below it — ``yamlload`` (safe, bounded YAML), ``cuesheet.reader``
(schema and references) and ``rules`` (the ritual rules) — none of which calls up.
"""

from __future__ import annotations

from pathlib import Path

from yuesheng.cuesheet import CueSheet, read_cuesheet
from yuesheng.errors import InvalidInputError, Problem
from yuesheng.repertoire import Repertoire
from yuesheng.rules import check_rules
from yuesheng.yamlload import load


def check_cuesheet(path: str | Path, repertoire: Repertoire) -> tuple[CueSheet | None, list[Problem]]:
    """Every problem of a cue sheet file — YAML, schema, references, ritual rules — and the sheet if it reads."""
    try:
        doc = load(path)
    except InvalidInputError as exc:
        return None, list(exc.problems)
    sheet, problems = read_cuesheet(doc, repertoire)
    if sheet is not None:
        problems += check_rules(sheet)
    return sheet, sorted(problems, key=lambda p: (p.line or 0, p.col or 0))


def load_cuesheet(path: str | Path, repertoire: Repertoire) -> CueSheet:
    """Load and check a cue sheet; InvalidInputError holding every error if there is any."""
    sheet, problems = check_cuesheet(path, repertoire)
    errors = [p for p in problems if p.severity == "error"]
    if errors or sheet is None:
        raise InvalidInputError(errors)
    return sheet
