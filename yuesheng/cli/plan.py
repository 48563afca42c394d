"""``yuesheng plan``: a rite's ground plan (儀禮圖) — the hall and every place; with ``--at CUE_ID`` everyone present
at that cue, facing which way, the cue's walks and what its duration is made of. JSON or one SVG plate."""

from __future__ import annotations

import argparse
import json

from yuesheng.cli.common import cue_path, emit
from yuesheng.errors import UsageError


def cmd_plan(args: argparse.Namespace) -> str:
    from yuesheng.check.staging import blocking_of
    from yuesheng.check.validate import load_cuesheet
    from yuesheng.cuesheet import parse_reading
    from yuesheng.music.repertoire import load_repertoire, score_paths
    from yuesheng.outputs.plan import plan_data, plan_svg
    from yuesheng.staging.durations import derive
    from yuesheng.staging.reader import load_blocking
    from yuesheng.staging.stage import stage

    sheet = load_cuesheet(cue_path(args.cue), load_repertoire(score_paths(args.scores)))
    path = blocking_of(sheet)
    if path is None:
        raise UsageError(f"no blocking for {sheet.rite_id}: expected blocking/{sheet.rite_id}.yaml beside the cue "
                         "sheet's folder")
    blocking = load_blocking(path, sheet)
    readings = dict(parse_reading(r) for r in args.reading)
    at = derivation = None
    if args.at:
        stages = {s.cue: s for s in stage(blocking, sheet, frozenset(args.variant), readings)}
        if args.at not in stages:
            sheet.cue(args.at)  # an unknown id: UnknownNameError with the nearest ids
            raise UsageError(f"cue {args.at!r} is not in the programme with the variants and readings chosen")
        at = stages[args.at]
        derivation = derive(blocking, at)
    data = plan_data(blocking, sheet, at=at, derivation=derivation)
    text = plan_svg(data) if args.format == "svg" else json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    return emit(args, text, f"the plan of {sheet.rite_id}" + (f" at {args.at}" if args.at else ""))


def _add_plan(p: argparse.ArgumentParser) -> None:
    p.add_argument("cue", metavar="CUE", help="a cue sheet, e.g. cues/xiangshe.yaml, or a shipped rite's id")
    p.add_argument("--at", metavar="CUE_ID", help="everyone present at this cue, the cue's walks and its duration")
    p.add_argument("--format", choices=("json", "svg"), default="json")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (atomically)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME", help="switch on a variant (repeatable)")
    p.add_argument("--reading", action="append", default=[], metavar="ID=OPTION",
                   help="choose another reading, e.g. heyue=li-rugui (repeatable)")
    p.add_argument("--scores", action="append", default=[], metavar="PATH",
                   help="a score file or folder of your own; replaces shipped pieces of the same id")
    p.set_defaults(func=cmd_plan)


ARGUMENTS = {"plan": _add_plan}
