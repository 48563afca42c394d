"""``yuesheng plan``: a rite's ground plan (儀禮圖) — the hall and every place; with ``--at CUE_ID`` everyone present
at that cue, facing which way, the cue's walks and what its duration is made of. JSON or one SVG plate. A rite with
a hall but no blocking yet gives its hall alone."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from yuesheng.cli.common import check_output_arg, cue_path, emit, paces_of, paces_option, readings_of
from yuesheng.errors import UnknownNameError, UsageError


def cmd_plan(args: argparse.Namespace) -> str:
    from yuesheng.outputs.plan import plan_data
    from yuesheng.production import load
    from yuesheng.staging.ground import ground
    from yuesheng.staging.paths import blocking_beside, hall_beside
    from yuesheng.staging.reader import load_hall
    from yuesheng.staging.rite import loaded

    check_output_arg(args)
    readings = readings_of(args)
    # the rules on the programme drawn, as every build checks the one it builds
    sheet = load(cue_path(args.cue), scores=args.scores, variants=args.variant, readings=readings)
    path = blocking_beside(sheet)
    if path is None:
        hall = hall_beside(sheet)
        if hall is None or args.at:
            raise UsageError(f"no blocking for {sheet.rite_id}: expected blocking/{sheet.rite_id}.yaml beside the cue "
                             f"sheet's folder{' (its hall alone is drawn without --at)' if hall else ''}")
        _check_output(args, [hall])
        return _written(args, plan_data(load_hall(hall, readings, sheet.readings), sheet), sheet.rite_id)
    try:  # the programme the timeline plays: variants with those they require, readings known to the sheet
        variants, chosen = sheet.programme(frozenset(args.variant), readings)
    except UnknownNameError as exc:
        raise UsageError(str(exc)) from None
    if not args.at:  # the hall and its places: nothing to stage
        ground_hall = loaded(path, sheet, chosen).hall
        _check_output(args, [path, Path(ground_hall.file)])  # the staging files are inputs too
        return _written(args, plan_data(ground_hall, sheet), sheet.rite_id)
    # everyone at every cue: as kept for this programme (the same inputs), else staged now and kept
    rite = ground(sheet, variants, chosen, path, paces_of(args)).rite(sheet)
    _check_output(args, [path, Path(rite.hall.file)])
    if args.at not in rite.cues:
        sheet.cue(args.at)  # an unknown id: UnknownNameError with the nearest ids
        raise UsageError(f"cue {args.at!r} is not in the programme with the variants and readings chosen")
    return _written(args, plan_data(rite.hall, sheet, at=args.at, staged=rite.cues[args.at]),
                    f"{sheet.rite_id} at {args.at}")


def _check_output(args: argparse.Namespace, inputs: list[Path]) -> None:
    from yuesheng.files import check_output

    if args.output:
        check_output(args.output, inputs)


def _written(args: argparse.Namespace, data: dict[str, object], what: str) -> str:
    """The plan as SVG or JSON, to the output or stdout."""
    from yuesheng.outputs.plan import plan_svg

    text = plan_svg(data) if args.format == "svg" else json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    return emit(args, text, f"the plan of {what}")


def _add_plan(p: argparse.ArgumentParser) -> None:
    p.add_argument("cue", metavar="CUE", help="a cue sheet, e.g. cues/xiangshe.yaml, or a shipped rite's id")
    p.add_argument("--at", metavar="CUE_ID", help="everyone present at this cue, the cue's walks and its duration")
    p.add_argument("--format", choices=("json", "svg"), default="json")
    paces_option(p)
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME", help="switch on a variant (repeatable)")
    p.add_argument("--reading", action="append", default=[], metavar="ID=OPTION",
                   help="choose another reading, e.g. heyue=li-rugui (repeatable)")
    p.add_argument("--scores", action="append", default=[], metavar="PATH",
                   help="a score file or folder of your own; replaces shipped pieces of the same id")
    p.set_defaults(func=cmd_plan)


ARGUMENTS = {"plan": _add_plan}
