"""Loading and checking a cue-sheet file: ``load_cuesheet`` for the commands that build, ``check_cuesheet`` for
``validate``.

Composes the layers below it — ``yamlload`` (safe, bounded YAML), ``cuesheet.reader``
(schema and references), ``rules`` (the ritual rules), ``sources`` (the shipped texts:
every ``cite.quote`` is on its page, rule ``quote``), ``timeline.measure`` (the size
and length of the rite within ``yuesheng.limits``) and ``staging`` (the 儀禮圖 of the rite,
rule ``staging``, after the sheet's own problems) — none of which calls up.

Two entry points, two costs:

- ``load_cuesheet``: YAML, schema, references (anchors acyclic in the programme as
  written) and the ritual rules on the programme a command builds (its variants and readings;
  every programme when none is named); InvalidInputError holding every error.
  The rules stay in loading on purpose: some guard the builder's assumptions
  (``archery-reference``: every pair a round names exists; ``limits``: every 終, 節,
  syllable and duration in range), and the others keep the refusal a user has always had
  from ``timeline``, ``render`` and the rest: a sheet that breaks a rule in the programme
  built is still refused, with the same ``file:line:col`` messages. A rule broken only
  under a variant not built is ``validate``'s to report (on 大射, the rules on its eight
  programmes cost about 20 ms; on one, about 3 ms).
- ``check_cuesheet``: all of that, and the costly checks only ``validate`` runs, none of
  which a build needs: every quote against the shipped texts (scholarly: a misquote does
  not stop a build); the anchors under every combination of variants and the size under
  every variant configuration (a build finds a cycle in its own programme and measures it
  before it builds, raising ScheduleError or LimitError). Warnings and errors, in file
  order, and the sheet if it reads.

``build_located`` is that build, its refusals given at their place in the file as
``validate`` would: so a command that loads and builds reports a broken sheet as
before, ``file:line:col: path: message [rule]``, and never with a traceback.

The timeline is imported where a sheet is built or measured, so that a command that only loads one (``plan``) does
not import it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng.check.kept import KeptChecks, kept_checks
from yuesheng.check.rules import Programme, check_rules, cue_findings
from yuesheng.check.staging import staging_documents, staging_problems
from yuesheng.checking import Found
from yuesheng.cuesheet import CueSheet, read_cuesheet, variant_configurations
from yuesheng.cuesheet.references import cycle_classes, programme_cycle
from yuesheng.errors import (
    InvalidInputError,
    InvalidValueError,
    LimitError,
    Problem,
    ScheduleError,
    UnknownPageError,
)
from yuesheng.music.repertoire import Repertoire
from yuesheng.yamlload import Document, PathKey, load

if TYPE_CHECKING:
    from yuesheng.staging.ground import Ground
    from yuesheng.timeline import Options, Timeline


@dataclass
class _Read:
    """A cue-sheet file read: its YAML document (None: it does not load), the sheet (None: it does not read), the
    problems so far, and its cues' kept checks (None: caches off)."""

    doc: Document | None
    sheet: CueSheet | None
    problems: list[Problem]
    kept: KeptChecks | None = None

    def rules(self, sheet: CueSheet, chosen: Programme | None = None) -> list[Problem]:
        """``check_rules`` of *sheet* (this file's), a rule of one cue taken as kept where it is."""
        return check_rules(sheet, chosen, cue_findings if self.kept is None else self.kept.rule)


def _read(path: str | Path, repertoire: Repertoire) -> _Read:
    """The file read: YAML, schema and references, each cue's own checks as kept where they are (``check.kept``)."""
    try:
        doc = load(path)
    except InvalidInputError as exc:
        return _Read(None, None, list(exc.problems))
    kept = kept_checks(path, doc, repertoire)
    sheet, problems = read_cuesheet(doc, repertoire, kept)
    return _Read(doc, sheet, problems, kept)


def check_cuesheet(path: str | Path, repertoire: Repertoire) -> tuple[CueSheet | None, list[Problem]]:
    """Every problem of a cue sheet file — YAML, schema, references, quotes, ritual rules, the size under every
    variant — in file order, and the sheet if it reads."""
    read = _read(path, repertoire)
    doc, sheet, problems = read.doc, read.sheet, read.problems
    if doc is None:
        return None, problems
    problems += check_quotes(doc, read.kept)
    staging: list[Problem] = []
    if sheet is not None:
        problems += cycle_problems(sheet, problems)
        problems += read.rules(sheet)
        if not any(p.severity == "error" for p in problems):
            problems += size_problems(sheet)
            staging = staging_problems(sheet)
            staging += [q for doc in staging_documents(sheet) for q in check_quotes(doc)]
    if read.kept is not None:
        read.kept.save()
    return sheet, _in_file_order(problems) + staging


def cycle_problems(sheet: CueSheet, found: list[Problem]) -> list[Problem]:
    """A cycle of start anchors with any combination of variants on (the reader checks the programme as written
    only), unless the references are already broken or a cycle found."""
    if any(p.rule in ("reference", "cycle") for p in found):
        return []
    cycle = programme_cycle(sheet, cycle_classes(sheet))
    return [sheet.doc.problem(cycle[0], cycle[1], rule="cycle")] if cycle else []


def _in_file_order(problems: list[Problem]) -> list[Problem]:
    return sorted(problems, key=lambda p: (p.line or 0, p.col or 0))


def size_problems(sheet: CueSheet) -> list[Problem]:
    """The limits of ``yuesheng.limits`` that the rite as written, or with a variant on, would break (each on its
    ground, where its blocking stages)."""
    from yuesheng.staging.ground import ground_of
    from yuesheng.timeline import Options

    found: dict[tuple[str, str], Problem] = {}
    for variants in variant_configurations(sheet):
        suffix = f" (with variant {', '.join(sorted(variants))})" if variants else ""
        try:
            ground = ground_of(sheet, *sheet.programme(variants, {}))[0]
            broken = _broken_limits(sheet, Options(variants), ground)
        except ScheduleError:  # anchors that form a cycle with this variant: not a question of size
            continue
        for cue_id, message in broken:
            found.setdefault((cue_id, message), _limit_problem(sheet, cue_id, message + suffix))
    return list(found.values())


def _broken_limits(sheet: CueSheet, options: Options, ground: Ground | None) -> list[tuple[str, str]]:
    """(cue id or "", message) of every limit a build of *sheet* with *options* on *ground* would break."""
    from yuesheng.timeline import measure

    try:
        return measure(sheet, options, ground).problems()
    except LimitError as exc:
        return [("", str(exc))]


def _limit_problem(sheet: CueSheet, cue_id: str, message: str) -> Problem:
    index = {c.id: c.index for c in sheet.cues}
    return sheet.doc.problem(("cues", index[cue_id]) if cue_id in index else (), message, rule="limits")


def build_located(sheet: CueSheet, options: Options, ground: Ground | None = None,
                  staging_notice: str = "") -> Timeline:
    """``build_timeline``, its refusals at the cues that cause them (a limit broken there, a cycle of anchors in this
    programme) as InvalidInputError at their place in the file, as ``validate`` gives them."""
    from yuesheng.timeline import build_timeline

    try:
        return build_timeline(sheet, options, ground, staging_notice)
    except LimitError:
        broken = _broken_limits(sheet, options, ground)
        if not all(cue_id for cue_id, _ in broken):  # a limit of the options (--syllable, a 節 reading): said as is
            raise
        raise InvalidInputError([_limit_problem(sheet, cue_id, message) for cue_id, message in broken]) from None
    except ScheduleError:
        cycle = programme_cycle(sheet, [sheet.with_requirements(options.variants)])
        if cycle is None:
            raise
        raise InvalidInputError([sheet.doc.problem(cycle[0], cycle[1], rule="cycle")]) from None


def load_cuesheet(path: str | Path, repertoire: Repertoire, build: Programme | None = None) -> CueSheet:
    """Load a cue sheet for a build: YAML, schema, references and ritual rules (not the quotes, not the size under
    every variant: see the module's docstring) — the rules on the programme of the *build* (its variants, with
    those they require, and readings) if given, else on every programme; InvalidInputError holding every error if
    there is any."""
    read = _read(path, repertoire)
    sheet, problems = read.sheet, read.problems
    if sheet is not None:
        chosen = None if build is None else (sheet.with_requirements(build[0]), build[1])
        problems += read.rules(sheet, chosen)
    if read.kept is not None:
        read.kept.save()
    errors = _in_file_order([p for p in problems if p.severity == "error"])
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


def check_quotes(doc: Document, kept: KeptChecks | None = None) -> list[Problem]:
    """Rule ``quote``: every cite's quote is on its page of the shipped texts (``…`` for words left out), in one
    layer of it (a quote that runs from the 經 into its 鄭注 splices two voices: cite each on its own).

    Cues, variants, reading options, the archery's 節 and rounds alike; each cue's as *kept* where it is. A page of
    a 卷 that is not shipped cannot be checked: a warning. A malformed page id is the reader's error (rule
    ``cite``), not repeated here.
    """
    data = doc.data
    if not isinstance(data, dict):
        return []
    given = data.get("cues")
    cues: list[Any] = given if isinstance(given, list) else []  # a cue sheet's (a blocking's is a mapping)
    found = [f for key, value in data.items() if not (key == "cues" and cues) for f in _quote_findings(value, (key,))]
    for n, raw in enumerate(cues):
        find = partial(_quote_findings, raw, ("cues", n))
        found += kept.quotes(n, find) if kept is not None else find()
    return [doc.problem(path, message, rule=rule, severity=severity) for path, message, rule, severity, _ in found]


def _quote_findings(data: Any, at: PathKey) -> list[Found]:
    """The problems of rule ``quote`` of every cite in *data* (at *at* in its document), as found."""
    from yuesheng import sources

    found: list[Found] = []
    for path, name, quote in _cites(data, at):
        try:
            pid = sources.parse_page(name)
        except InvalidValueError:  # a malformed page id: the reader's error (rule cite), not repeated here
            continue
        if not sources.has_juan(pid):
            found.append((path + ("page",), f"cannot check the quote: {sources.TEXTS[pid.text].title} "
                          f"卷{pid.juan} is not shipped", "quote", "warning", False))
            continue
        try:
            page = sources.page(pid)
        except UnknownPageError as exc:
            found.append((path + ("page",), str(exc), "quote", "error", False))
            continue
        if sources.find_quote(quote, page) is None:
            found.append((path + ("quote",), f"{quote!r} is not on {pid.citation} (nor running on to the next page); "
                          f"see: yuesheng source {pid}", "quote", "error", False))
        elif len(layers := sources.layers(quote, page)) > 1:
            found.append((path + ("quote",), f"{quote!r} on {pid.citation} runs over {' and '.join(layers)}: quote "
                          f"one layer (the others in a note, each with its own cite); see: yuesheng source {pid}",
                          "quote", "error", False))
    return found
