"""``yuesheng sheet``: the director's page of a rite — timeline, ground plan and run sheet in one HTML file."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from yuesheng.cli.common import emit, production_for_output, sequencer_options
from yuesheng.cli.streams import say
from yuesheng.errors import UnknownNameError, UsageError

if TYPE_CHECKING:
    from yuesheng.production import Production


def cmd_sheet(args: argparse.Namespace) -> str:
    from yuesheng.web.sheet import sheet_file, unplaced

    production = production_for_output(args, (".html", ".htm"), "an .html file")
    timeline = production.timeline
    missing = unplaced(timeline)
    if missing:
        say(f"warning: {len(missing)} position(s) have no place on the plan (no x, y in the cue sheet), listed "
            f"beside it: {', '.join(p.id for p in missing)}")
    _check_plate_at(production, args.plate_at)
    return emit(args, sheet_file(production, plate_at=args.plate_at),
                f"the page of {timeline.rite}, {len(timeline.cues)} cues")


def _check_plate_at(production: Production, cues: list[str]) -> None:
    """Each ``--plate-at`` a cue of the programme on the ground (UsageError naming the nearest ids otherwise)."""
    if not cues:
        return
    staged = production.staged
    if staged is None:
        raise UsageError(f"--plate-at: {production.timeline.rite} has no blocking, so no plates")
    for cue in cues:
        if cue not in staged.cues:
            try:
                production.sheet.cue(cue)
            except UnknownNameError as exc:
                raise UsageError(f"--plate-at: {exc}") from None
            raise UsageError(f"--plate-at {cue}: not in the programme with the variants and readings chosen")


def _add_sheet(p: argparse.ArgumentParser) -> None:
    sequencer_options(p)
    p.add_argument("--plate-at", action="append", default=[], metavar="CUE_ID",
                   help="a plate also at this cue: everyone as he stands after it (repeatable)")
    p.set_defaults(func=cmd_sheet)


ARGUMENTS = {"sheet": _add_sheet}
