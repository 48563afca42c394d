"""The ``yuesheng`` command: argparse subcommands, ``main(argv) -> int``.

One module per command group — ``score`` (lu, score), ``rite`` (validate,
timeline, render), ``source``, ``audio``, ``live`` (play), ``console`` (console, retime),
``engrave`` (songbook; ``score engrave``), ``web`` (sheet) — each with a ``register``;
``common`` holds what they share. Exit codes: 0 ok (warnings allowed),
1 invalid input (bad file, unknown name, failed check, an output that cannot
be written), 2 usage error, 130 interrupted by Ctrl-C, 143 terminated by
SIGTERM (``play`` and ``console`` stop cleanly and exit 0: ``signals``). Errors and
warnings go to stderr; results to stdout (``streams``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence

from yuesheng.cli import (
    audio,
    console,
    engrave,
    live,
    rite,
    score,
    source,
    web,
)
from yuesheng.cli.common import EXIT_INVALID, EXIT_OK, EXIT_USAGE, Parser
from yuesheng.cli.signals import STOPS, batch_stopped, signals_raise
from yuesheng.cli.streams import say, write_stdout
from yuesheng.errors import InvalidInputError, UsageError, YueshengError

__all__ = ["EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "UsageError", "build_parser", "main", "main_exit"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="yuesheng", description="樂聲: the music of the 儀禮 rites — scores, cue sheets, sequencer.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    groups = (
        score,
        rite,
        source,
        audio,
        live,
        console,
        engrave,
        web,
    )
    for group in groups:
        group.register(sub)
    return parser


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
        result = func(args)
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


def main_exit() -> None:
    """Console-script entry point."""
    raise SystemExit(main())
