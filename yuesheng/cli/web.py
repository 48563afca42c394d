"""``yuesheng sheet``: the director's page of a rite — timeline, ground plan and run sheet in one HTML file."""

from __future__ import annotations

import argparse

from yuesheng.cli.common import emit, production_for_output, sequencer_options
from yuesheng.cli.streams import say


def cmd_sheet(args: argparse.Namespace) -> str:
    from yuesheng.web.sheet import sheet_file, unplaced

    production = production_for_output(args, (".html", ".htm"), "an .html file")
    timeline = production.timeline
    missing = unplaced(timeline)
    if missing:
        say(f"warning: {len(missing)} position(s) have no place on the plan (no x, y in the cue sheet), listed "
            f"beside it: {', '.join(p.id for p in missing)}")
    return emit(args, sheet_file(production), f"the page of {timeline.rite}, {len(timeline.cues)} cues")


def _add_sheet(p: argparse.ArgumentParser) -> None:
    sequencer_options(p)
    p.set_defaults(func=cmd_sheet)


ARGUMENTS = {"sheet": _add_sheet}
