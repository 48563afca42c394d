"""Rule ``staging``: the 儀禮圖 of a rite checked with its cue sheet — the hall's spatial statements (each quoted
with its page), the blocking (everyone of every cue placed, no two on one point, no facing against the text, a
route for every walk); ``validate`` also holds every quote of the two files (``staging_files``) to its page.

Rule ``route`` (``staging.rank``): every walk by its walker's stair (the hall's ``whose``) unless a text of its cue
says otherwise, every 升自/降自 of a cue's action and quote and of a move's quote walked as it says, every ``via``
naming a stair's flight, not only its top, and none on a set piece standing (a 侯): each at the move's
file:line:col with what the text says.

The blocking of a cue sheet is ``../blocking/RITE.yaml`` beside its folder (the shipped sheets': ``blocking/``); a
sheet without one is not checked here.
"""

from __future__ import annotations

from pathlib import Path

from yuesheng.cuesheet import CueSheet
from yuesheng.errors import InvalidInputError, Problem
from yuesheng.staging.paths import blocking_beside
from yuesheng.yamlload import load


def staging_problems(sheet: CueSheet, path: Path | None = None) -> list[Problem]:
    """Every problem of the blocking at *path* (else the sheet's own) for *sheet*, under every variant."""
    from yuesheng.cuesheet import variant_configurations
    from yuesheng.staging.ground import keep_clean, kept_clean
    from yuesheng.staging.rite import loaded, staged_rite
    from yuesheng.staging.statements import statement_problems

    path = path or blocking_beside(sheet)
    if path is None:
        return []
    readings = {r.id: r.chosen for r in sheet.readings.values()}
    configurations = [(variants, readings) for variants in variant_configurations(sheet)]
    if kept_clean(sheet, path, configurations):  # the same files and code passed before (staging/ground.py)
        return []
    try:
        problems = statement_problems(loaded(path, sheet).hall)
        for variants, chosen in configurations:
            rite = staged_rite(sheet, variants, chosen, path)
            problems += [Problem(rite.file, b.line, b.col, "", b.message, "route")
                         for cue in rite.cues.values() for b in cue.derivation.breaks]
    except InvalidInputError as exc:
        return list(exc.problems)
    if not problems:
        keep_clean(sheet, path, configurations)
    return list(dict.fromkeys(problems))


def staging_files(sheet: CueSheet) -> list[Path]:
    """The blocking file of *sheet* and the hall file it names (for the quote check), if they read."""
    path = blocking_beside(sheet)
    if path is None:
        return []
    doc = load(path)
    hall = doc.data.get("hall") if isinstance(doc.data, dict) else None
    return [path] + ([path.parent / hall] if isinstance(hall, str) and (path.parent / hall).is_file() else [])
