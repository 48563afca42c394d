"""The ``yuesheng`` command: argparse subcommands, ``main(argv) -> int``.

One module per command group — ``score`` (lu, score), ``rite`` (validate, timeline, render),
``source``, ``audio``, ``live`` (play), ``console`` (console, retime), ``engrave`` (songbook;
``score engrave``), ``web`` (sheet), ``plan``, ``cast`` (sides, cast), ``video``, ``cache`` — each with its
``ARGUMENTS``; ``parsing`` (the standard library only) and ``common`` hold what they share. ``COMMANDS``
names each command's group and help, so that only the group of the command that runs is imported (and
asked for its arguments). Exit codes: 0 ok (warnings allowed), 1 invalid input (bad file, unknown name,
failed check, an output that cannot be written), 2 usage error, 130 interrupted by Ctrl-C, 143 terminated
by SIGTERM (``play`` and ``console`` stop cleanly and exit 0: ``signals``). Errors and warnings go to
stderr; results to stdout (``streams``).
"""

from __future__ import annotations

import argparse
import gc
import importlib
from collections.abc import Callable, Sequence

from yuesheng.cli.parsing import EXIT_INVALID, EXIT_OK, EXIT_USAGE, Parser
from yuesheng.cli.signals import STOPS, batch_stopped, signals_raise
from yuesheng.cli.streams import say, write_stdout
from yuesheng.errors import InvalidInputError, UsageError, YueshengError

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "UsageError", "build_parser", "main", "main_exit"]

# Each command, in the order ``yuesheng --help`` lists them: its group module (yuesheng.cli.GROUP) and its help.
COMMANDS = {
    "lu": ("score", "the table of the twelve 律: names, 俗字, MIDI key, cents, frequency"),
    "score": ("score", "list, show, check and export the scores"),
    "validate": ("rite", "check cue sheets: YAML, schema, references, ritual rules"),
    "timeline": ("rite", "the run sheet: every cue with its time, duration, cast, words and citation"),
    "render": ("rite", "a Standard MIDI File of the rite, with lyrics, markers, calls and the 節 drum"),
    "source": ("source", "a page of 儀禮集釋, 周禮注疏 or 瑟譜 as shipped, with a quote marked"),
    "audio": ("audio", "the rite as audio (WAV, FLAC, Ogg Vorbis, Opus) through FluidSynth"),
    "play": ("live", "play the rite to a MIDI port in real time; manual mode waits for GO (Enter)"),
    "console": ("console", "the operator's console in a browser: GO, STOP ALL, FADE, jump; OSC and pedal"),
    "retime": ("console", "measured action durations from console logs, as a --timing file"),
    "songbook": ("engrave", "every piece of a rite in the order first heard, engraved, with its cues"),
    "sheet": ("web", "the director's page: timeline, ground plan and run sheet in one HTML file"),
    "plan": ("plan", "the ground plan (儀禮圖): the hall and its places; --at CUE_ID everyone there, the walks, why "
             "the cue lasts as long as it does (JSON or SVG)"),
    "sides": ("cast", "each person's own book (PDF, HTML or JSON): his cues in order, the warning, where he stands "
              "and goes (numbered legs), what he does and says, a plate of each move and his whole track"),
    "cast": ("cast", "every role and its head count, the identities the texts state, the groups, and the fewest "
             "performers who can play every part (who doubles whom)"),
    "video": ("video", "the rite as a video to share: the plate frame by frame, everyone where he is, with the "
              "caption and the sound (H.264 + AAC in MP4, through FFmpeg)"),
    "cache": ("cache", "what yuesheng keeps between runs: info (each folder, its entries and bytes) or clear"),
}
NO_CACHE_HELP = "read and write no cache (also YUESHENG_NO_CACHE=1): every result made anew"


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command; a command's arguments are added, its group imported, when it is parsed."""
    parser = Parser(prog="yuesheng", description="樂聲: the music of the 儀禮 rites — scores, cue sheets, sequencer.")
    parser.add_argument("--no-cache", action="store_true", help=NO_CACHE_HELP)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command, (group, text) in COMMANDS.items():
        command_parser = sub.add_parser(command, help=text, fill=_arguments(command, group))
        command_parser.add_argument("--no-cache", action="store_true", default=argparse.SUPPRESS, help=NO_CACHE_HELP)
    return parser


def _arguments(command: str, group: str) -> Callable[[argparse.ArgumentParser], None]:
    """What adds *command*'s arguments to its parser: its group module's, imported then."""
    def fill(parser: argparse.ArgumentParser) -> None:
        adders: dict[str, Callable[[argparse.ArgumentParser], None]] = (
            importlib.import_module(f"yuesheng.cli.{group}").ARGUMENTS)
        adders[command](parser)

    return fill


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 invalid input, 2 usage, 130 Ctrl-C, 143 SIGTERM;
    ``play`` and ``console`` 0 after either signal)."""
    with signals_raise():
        try:
            return _run(argv)
        except STOPS as stop:
            return batch_stopped(stop)


def _run(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
        func: Callable[[argparse.Namespace], str | tuple[str, int]] = args.func
        result = _without_cache(func, args) if args.no_cache else func(args)
    except UsageError as exc:
        say(f"usage error: {exc}")
        return EXIT_USAGE
    except InvalidInputError as exc:
        say(str(exc))
        return EXIT_INVALID
    except YueshengError as exc:
        say(f"error: {exc}")
        return EXIT_INVALID
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)
    text, code = result if isinstance(result, tuple) else (result, EXIT_OK)
    return write_stdout(text) or code


def _without_cache(func: Callable[[argparse.Namespace], str | tuple[str, int]],
                   args: argparse.Namespace) -> str | tuple[str, int]:
    """*func* run with every cache off (``--no-cache``), on again after it (the process may run other commands)."""
    from yuesheng import caches

    caches.disable()
    try:
        return func(args)
    finally:
        caches.enable()


# The cyclic collector's thresholds for a yuesheng process, mypy's (mypy/main.py): a command makes hundreds of
# thousands of objects (events, loaded YAML, staged stands) and next to no cycles, and at Python's default of 700 the
# collector rescans them again and again (about 15 ms of ``timeline dashe``, 60 ms of ``sheet dashe``). A batch
# command ends before it collects at all; ``play`` and ``console`` freeze what they built and collect at Python's
# own thresholds while they play (``process.collector_frozen``), so a console's web sessions are freed.
GC_THRESHOLDS = (200_000, 30, 30)


def main_exit() -> None:
    """Console-script entry point: ``main`` in a process of its own (with its collector's ``GC_THRESHOLDS``)."""
    gc.set_threshold(*GC_THRESHOLDS)
    raise SystemExit(main())
