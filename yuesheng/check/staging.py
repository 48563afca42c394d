"""Rule ``staging``: the 儀禮圖 of a rite checked with its cue sheet — the hall's spatial statements (each quoted
with its page), the blocking (everyone of every cue placed, no two on one point, no facing against the text, a
route for every walk); ``validate`` also holds every quote of the two files (``staging_documents``) to its page.

Rule ``route`` (``staging.rank``): every walk by its walker's stair (the hall's ``whose``) unless a text of its cue
says otherwise, every 升自/降自 of a cue's action and quote and of a move's quote walked as it says, every ``via``
naming a stair's flight, not only its top, and none on a set piece standing (a 侯): each at the move's
file:line:col with what the text says.

The blocking of a cue sheet is ``../blocking/RITE.yaml`` beside its folder (the shipped sheets': ``blocking/``); a
sheet without one is not checked here.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from yuesheng.cuesheet import CueSheet
from yuesheng.errors import InvalidInputError, Problem
from yuesheng.limits import LONG_ACTION, LONG_GROUND
from yuesheng.staging.paths import BLOCKING_FORMAT, HALL_FORMAT, blocking_beside, hall_named
from yuesheng.yamlload import Document, load

if TYPE_CHECKING:
    from yuesheng.staging.ground import Configuration
    from yuesheng.staging.model import Blocking, CueBlocking
    from yuesheng.staging.rite import StagedCue, StagedRite


def staging_problems(sheet: CueSheet, path: Path | None = None) -> list[Problem]:
    """Every problem of the blocking at *path* (else the sheet's own) for *sheet*, under every variant, and under
    every option of each reading its hall is drawn under."""
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
        blocking = loaded(path, sheet)
        problems: list[Problem] = []  # the other options of the hall's readings: keyed by the hall file already
        for variants, chosen in configurations + _other_readings(sheet, blocking.hall.readings):
            if not variants:  # the hall drawn under these readings: its statements
                problems += statement_problems(loaded(path, sheet, chosen).hall)
            rite = staged_rite(sheet, variants, chosen, path)
            problems += [Problem(rite.file, b.line, b.col, "", b.message, "route")
                         for cue in rite.cues.values() for b in cue.derivation.breaks]
            problems += long_problems(rite, blocking)
    except InvalidInputError as exc:
        return list(exc.problems)
    if not problems:
        keep_clean(sheet, path, configurations)
    return list(dict.fromkeys(problems))


def _other_readings(sheet: CueSheet, hall_readings: Mapping[str, str]) -> list[Configuration]:
    """The plain programme under each other option of each reading the hall is drawn under (the 君's 左右房, the 侯道
    from the 堂): a reading moves places, so its walks are checked too."""
    chosen = {r.id: r.chosen for r in sheet.readings.values()}
    return [(frozenset(), chosen | {rid: option}) for rid in hall_readings for option in sheet.readings[rid].options
            if option != chosen[rid]]


def long_problems(rite: StagedRite, blocking: Blocking) -> list[Problem]:
    """A warning at each cue whose action takes far longer on the ground than any of the texts
    (``limits.LONG_ACTION``), naming the cause (its longest walk, its widest file), and at the blocking when its
    actions together do (``LONG_GROUND``), naming the longest."""
    out = []
    for cid, cue in rite.cues.items():
        if cue.duration is not None and cue.duration > LONG_ACTION:
            out.append(Problem(rite.file, _line(blocking, cid), None, "", f"cue {cid} takes {_time(cue.duration)} on "
                               f"the ground, far longer than any action of the texts (warned beyond "
                               f"{_time(LONG_ACTION)}){_causes(cue, blocking.cues.get(cid))}", "limits", "warning"))
    total = sum((c.duration for c in rite.cues.values() if c.duration is not None), Fraction(0))
    if total > LONG_GROUND:
        longest = max(rite.cues, key=lambda cid: rite.cues[cid].duration or 0)
        out.append(Problem(rite.file, None, None, "", f"the blocking's actions take {_time(total)} together, far "
                           f"longer than a rite of the texts (warned beyond {_time(LONG_GROUND)}); the longest is "
                           f"{longest}, {_time(rite.cues[longest].duration or Fraction(0))}", "limits", "warning"))
    return out


def _time(seconds: Fraction) -> str:
    """'52 min', '25.5 h'."""
    return f"{float(seconds) / 3600:,.3g} h" if seconds >= 3600 else f"{float(seconds) / 60:,.0f} min"


def _causes(cue: StagedCue, moves: CueBlocking | None) -> str:
    """What makes a cue long: its longest walk and its widest file."""
    words = []
    if walks := cue.derivation.walks:
        walk = max(walks, key=lambda w: w.length)
        words.append(f"its longest walk is {walk.who}'s, {walk.length:,.0f} 步 ({_time(walk.seconds)})")
    if moves and (files := [m for m in moves.moves if m.spacing > 1]):
        widest = max(files, key=lambda m: m.spacing)
        words.append(f"its widest file is spaced {widest.spacing:,.4g} 步 (line {widest.line})")
    return f": {'; '.join(words)}" if words else ""


def _line(blocking: Blocking, cid: str) -> int | None:
    return blocking.cues[cid].line if cid in blocking.cues else None


def staging_documents(sheet: CueSheet) -> list[Document]:
    """The blocking of *sheet* and the hall file it names, read (for the quote check); a file that does not read is
    left out (``staging_problems`` reports it, and nothing of a file that is not a hall is shown)."""
    path = blocking_beside(sheet)
    if path is None:
        return []
    try:
        doc = load(path, BLOCKING_FORMAT)
        hall = hall_named(path, doc.data.get("hall") if isinstance(doc.data, dict) else None)
        return [doc] + ([load(hall, HALL_FORMAT)] if isinstance(hall, Path) else [])
    except InvalidInputError:
        return []
