"""``yuesheng sheet``: the director's page of a rite — timeline, ground plan and run sheet in one HTML file."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng.cli.common import emit, production_for_output, sequencer_options
from yuesheng.cli.streams import say
from yuesheng.errors import AudioError, UnknownNameError, UsageError
from yuesheng.files import writes_directly

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
    audio = _audio_data(production, args.audio, args.output) if args.audio is not None else None
    heard = f", playing {args.audio} in step" if audio is not None else ""
    return emit(args, sheet_file(production, plate_at=args.plate_at, audio=audio),
                f"the page of {timeline.rite}, {len(timeline.cues)} cues{heard}")


def _audio_data(production: Production, file: str, output: str) -> dict[str, Any]:
    """What the page's player needs of the render *file* (``#audio-data``): where it is from the page at *output*
    (a relative URL), the map from the rite's seconds to the file's (None: the same), the rite and the plan's digest.
    AudioError (before anything is written) for a file without yuesheng's tags, or of another rite or options."""
    from urllib.parse import quote

    from yuesheng.live.resume import plan_digest
    from yuesheng.outputs.tags import checked, rite_map

    path = Path(file)
    if not path.is_file():
        raise UsageError(f"--audio {file}: no such file")
    timeline = production.timeline
    digest = plan_digest(timeline)
    try:
        tags = checked(path, timeline, production.options, digest)
    except AudioError as exc:
        raise AudioError(f"--audio {exc}") from None
    page = Path(output).absolute().parent if not writes_directly(output) else Path.cwd()
    src = quote(Path(os.path.relpath(path.absolute(), page)).as_posix())
    return {"src": src, "map": rite_map(tags), "rite": timeline.rite_id, "digest": digest}


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
    p.add_argument("--audio", metavar="FILE",
                   help="a render of this rite with these options (yuesheng audio) for the page to play in step; "
                        "the page refers to it where it lies, relative to the page")
    p.set_defaults(func=cmd_sheet)


ARGUMENTS = {"sheet": _add_sheet}
