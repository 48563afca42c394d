"""Validation: a cue-sheet file → every problem (YAML, schema, references, quotes, ritual rules) and the sheet.

Composes the layers below it — ``yamlload`` (safe, bounded YAML), ``cuesheet.reader``
(schema and references), ``sources`` (the shipped texts: every ``cite.quote`` is on
its page, rule ``quote``), ``rules`` (the ritual rules) and ``timeline.measure`` (the
size and length of the rite within ``yuesheng.limits``) — none of which calls up.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from yuesheng.cuesheet import CueSheet, read_cuesheet, variant_configurations
from yuesheng.errors import InvalidInputError, LimitError, Problem, ScheduleError, UnknownPageError
from yuesheng.music.repertoire import Repertoire
from yuesheng.check.rules import check_rules
from yuesheng.timeline import Options, measure
from yuesheng.yamlload import Document, PathKey, load


def check_cuesheet(path: str | Path, repertoire: Repertoire) -> tuple[CueSheet | None, list[Problem]]:
    """Every problem of a cue sheet file — YAML, schema, references, ritual rules — and the sheet if it reads."""
    try:
        doc = load(path)
    except InvalidInputError as exc:
        return None, list(exc.problems)
    sheet, problems = read_cuesheet(doc, repertoire)
    problems += check_quotes(doc)
    if sheet is not None:
        problems += check_rules(sheet)
        if not any(p.severity == "error" for p in problems):
            problems += size_problems(sheet)
    return sheet, sorted(problems, key=lambda p: (p.line or 0, p.col or 0))


def size_problems(sheet: CueSheet) -> list[Problem]:
    """The limits of ``yuesheng.limits`` that the rite as written, or with a variant on, would break."""
    found: dict[tuple[str, str], Problem] = {}
    index = {c.id: c.index for c in sheet.cues}
    for variants in variant_configurations(sheet):
        suffix = f" (with variant {', '.join(sorted(variants))})" if variants else ""
        try:
            broken = measure(sheet, Options(variants)).problems()
        except LimitError as exc:
            broken = [("", str(exc))]
        except ScheduleError:  # anchors that form a cycle with this variant: not a question of size
            continue
        for cue_id, message in broken:
            path = ("cues", index[cue_id]) if cue_id in index else ()
            found.setdefault((cue_id, message), sheet.doc.problem(path, message + suffix, rule="limits"))
    return list(found.values())


def load_cuesheet(path: str | Path, repertoire: Repertoire) -> CueSheet:
    """Load and check a cue sheet; InvalidInputError holding every error if there is any."""
    sheet, problems = check_cuesheet(path, repertoire)
    errors = [p for p in problems if p.severity == "error"]
    if errors or sheet is None:
        raise InvalidInputError(errors)
    return sheet


def _cites(data: Any, path: PathKey = ()) -> Iterator[tuple[PathKey, str, str]]:
    """(path, page, quote) of every ``cite: {page, quote}`` anywhere in the document, in order."""
    if isinstance(data, dict):
        cite = data.get("cite")
        if isinstance(cite, dict) and isinstance(cite.get("page"), str) and isinstance(cite.get("quote"), str):
            yield path + ("cite",), cite["page"], cite["quote"]
        for key, value in data.items():
            yield from _cites(value, path + (key,))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _cites(value, path + (index,))


def check_quotes(doc: Document) -> list[Problem]:
    """Rule ``quote``: every cite's quote is on its page of the shipped texts (``…`` for words left out).

    Cues, variants, reading options, the archery's 節 and rounds alike. A page of a
    卷 that is not shipped cannot be checked: a warning. A malformed page id is the
    reader's error (rule ``cite``), not repeated here.
    """
    from yuesheng import sources

    problems: list[Problem] = []
    for path, name, quote in _cites(doc.data):
        try:
            pid = sources.parse_page(name)
        except ValueError:
            continue
        if not sources.has_juan(pid):
            problems.append(doc.problem(path + ("page",), f"cannot check the quote: {sources.TEXTS[pid.text].title} "
                                        f"卷{pid.juan} is not shipped", rule="quote", severity="warning"))
            continue
        try:
            page = sources.page(pid)
        except UnknownPageError as exc:
            problems.append(doc.problem(path + ("page",), str(exc), rule="quote"))
            continue
        if sources.find_quote(quote, page) is None:
            problems.append(doc.problem(path + ("quote",), f"{quote!r} is not on {pid.citation} (nor running on to "
                                        f"the next page); see: yuesheng source {pid}", rule="quote"))
    return problems
