"""``yuesheng validate``, ``timeline`` and ``render``: check a cue sheet, print its run sheet, write its MIDI."""

from __future__ import annotations

import argparse
from typing import Any

from yuesheng.cli.common import (
    check_output_arg,
    cue_path,
    emit,
    listener_options,
    placement_of,
    production_for_output,
    production_of,
    say_blocking_not_found,
    scores_option,
    sequencer_options,
)
from yuesheng.cli.parsing import EXIT_INVALID, EXIT_OK, dump_json, format_option
from yuesheng.cli.streams import say
from yuesheng.errors import Problem
from yuesheng.music.repertoire import load_repertoire


def _problem_json(p: Problem) -> dict[str, Any]:
    return {"line": p.line, "col": p.col, "path": p.path, "message": p.message, "rule": p.rule}


def cmd_validate(args: argparse.Namespace) -> tuple[str, int]:
    from yuesheng.check.validate import check_cuesheet

    repertoire = load_repertoire(args.scores)
    results: list[dict[str, Any]] = []
    out: list[str] = []
    failed = False
    for path in args.cues:
        sheet, problems = check_cuesheet(cue_path(path), repertoire)
        errors = [p for p in problems if p.severity == "error"]
        warnings = [p for p in problems if p.severity != "error"]
        failed |= bool(errors) or sheet is None
        results.append({"file": path, "valid": not errors and sheet is not None,
                        "rite": sheet.rite_name if sheet else None,
                        "cues": len(sheet.cues) if sheet else 0,
                        "errors": [_problem_json(p) for p in errors], "warnings": [_problem_json(p) for p in warnings]})
        if args.format == "text":
            for problem in problems:
                say(str(problem))
        if sheet is not None:
            say_blocking_not_found(sheet)
        verdict = "valid" if not errors and sheet else "INVALID"
        out.append(f"{path}: {verdict} — {len(sheet.cues) if sheet else 0} cues, {len(errors)} error(s), "
                   f"{len(warnings)} warning(s)")
    code = EXIT_INVALID if failed else EXIT_OK
    if args.format == "json":
        return dump_json(results), code
    return "\n".join(out) + "\n", code


def cmd_timeline(args: argparse.Namespace) -> str:
    from yuesheng.outputs.report import run_sheet_csv, run_sheet_json, run_sheet_text

    check_output_arg(args)
    production = production_of(args)
    timeline = production.timeline
    text = run_sheet_json(timeline, production.staged) if args.format == "json" else \
        (run_sheet_csv if args.format == "csv" else run_sheet_text)(timeline)
    return emit(args, text, f"run sheet of {timeline.rite}, {len(timeline.cues)} cues")


def cmd_render(args: argparse.Namespace) -> str:
    from yuesheng.outputs.midi import midi_bytes
    from yuesheng.timeline import EventKind, seconds

    production = production_for_output(args, (".mid", ".midi"), "a .mid file")
    timeline = production.timeline
    placed = placement_of(args, production)
    heard = ""
    if placed is None:
        data = midi_bytes(timeline)
    else:
        from yuesheng.outputs.placement import blocking, midi_controllers

        data = midi_bytes(timeline, controls=midi_controllers(blocking(timeline, production.staged).stops, *placed))
        heard = f", heard from {placed[0].describe()} (pan, volume, reverb send)"
    notes = sum(1 for e in timeline.events if e.kind is EventKind.NOTE)
    minutes = seconds(timeline.duration_ticks) / 60
    return emit(args, data, f"{timeline.rite}, {len(data)} bytes, {notes} notes, {minutes:.1f} min{heard}")


def _add_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument("cues", nargs="+", metavar="CUE", help="cue sheet files (YAML) or shipped rite ids")
    format_option(p)
    scores_option(p)
    p.set_defaults(func=cmd_validate)


def _add_timeline(p: argparse.ArgumentParser) -> None:
    sequencer_options(p)
    format_option(p, "text", "csv", "json")
    p.set_defaults(func=cmd_timeline)


def _add_render(p: argparse.ArgumentParser) -> None:
    sequencer_options(p)
    listener_options(p)
    p.set_defaults(func=cmd_render)


ARGUMENTS = {"validate": _add_validate, "timeline": _add_timeline, "render": _add_render}
