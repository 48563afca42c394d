"""``yuesheng audio``: the rite rendered through FluidSynth."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from yuesheng.cli.common import UsageError, check_output_arg, sequencer_options, timeline_of
from yuesheng.cli.streams import say
from yuesheng.files import writes_directly


def _progress_bar(fraction: float) -> None:
    if sys.stderr.isatty():
        filled = int(fraction * 30)
        sys.stderr.write(f"\rrendering [{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%}")
        if fraction >= 1:
            sys.stderr.write("\n")
        sys.stderr.flush()


def cmd_audio(args: argparse.Namespace) -> str:
    from yuesheng.audio import describe, render_wav

    if args.output and Path(args.output).suffix.lower() != ".wav" and not writes_directly(args.output):
        raise UsageError(f"-o {args.output}: expected a .wav file")
    check_output_arg(args)
    timeline = timeline_of(args)
    output = args.output or f"{timeline.rite_id}.wav"
    check_output_arg(args, output)  # before the minutes of rendering, not after
    rendered = render_wav(timeline, output, soundfont=args.soundfont, progress=_progress_bar)
    if writes_directly(output):
        say(describe(rendered, timeline))
        return ""
    return describe(rendered, timeline) + "\n"


def register(sub: Any) -> None:
    """Add ``audio`` to the top-level subparsers."""
    p = sub.add_parser("audio", help="a WAV of the rite through FluidSynth and a General MIDI SoundFont")
    sequencer_options(p)
    p.add_argument("--soundfont", metavar="PATH", help="a .sf2/.sf3 SoundFont (default: Debian's fluid-soundfont-gm)")
    p.set_defaults(func=cmd_audio)
