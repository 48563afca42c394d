"""``yuesheng audio``: the rite rendered through FluidSynth, to WAV, FLAC, Ogg Vorbis or Opus.

``--music-only`` condenses the silences between the music (``--gap``) and writes
the run sheet of what was rendered beside the audio; ``--labels`` writes an
Audacity label track (each cue, each 終 of a piece, each stanza) and a CUE sheet beside it; ``--solo PART`` keeps
that part as it is and every other part ``--others`` dB softer (−12 by default), and ``--breath`` the book's editorial
breaths, for practice; ``--part`` renders some parts,
``--stems DIR`` one file per part; ``--listener`` places every part where it stands, heard from a seat
(``outputs/spatial.py``, docs/seat.md), ``--binaural`` through the HRIRs of a SOFA file (``outputs/sofa.py``).
Every file written says in its tags what it is a render of (``outputs/tags.py``), for ``sheet --audio`` and
``video --audio``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import stat
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from yuesheng.cli.common import (
    check_output_arg,
    decibels,
    excerpt_options,
    excerpt_span,
    listener_options,
    placement_of,
    production_of,
    sequencer_options,
)
from yuesheng.cli.streams import progress_bar
from yuesheng.errors import AudioError, InvalidValueError, UsageError
from yuesheng.outputs.sofa import DEFAULT as DEFAULT_SOFA  # numpy and h5py only when a file is read

FORMATS = ("flac", "wav", "ogg", "opus")  # the suffixes of audio.ENCODINGS, the default first
DEFAULT_GAP = Fraction(3)  # seconds: the longest silence --music-only keeps

if TYPE_CHECKING:  # imported when a command builds (cli.common.timeline_of)
    from yuesheng.outputs.audio import Tags
    from yuesheng.outputs.tags import RenderTags
    from yuesheng.production import Production
    from yuesheng.timeline import Timeline

_TITLE = "yuesheng:"  # a tagged file's title, before the rite's id




def _outputs(args: argparse.Namespace, timeline: Timeline,
             parts: list[str]) -> tuple[list[tuple[Path, frozenset[str]]], Path]:
    """The files to write, each with the parts it holds (empty: all), and the base name of the files beside them."""
    if args.stems:
        if args.output:
            raise UsageError("give either -o FILE or --stems DIR, not both")
        folder = Path(args.stems)
        if not folder.is_dir():
            raise UsageError(f"--stems {folder}: no such folder")
        suffix = "-music" if args.music_only else ""
        base = folder / f"{timeline.rite_id}{suffix}"
        stems = [(folder / f"{timeline.rite_id}{suffix}-{p}.{args.format or 'flac'}", frozenset([p])) for p in parts]
        return stems, base
    output = Path(args.output or f"{timeline.rite_id}{'-music' if args.music_only else ''}.{args.format or 'flac'}")
    extension = output.suffix.lower().lstrip(".")
    if extension not in FORMATS:
        raise UsageError(f"-o {output}: expected a .{', .'.join(FORMATS)} file")
    if args.format and args.format != extension:
        raise UsageError(f"--format {args.format} and -o {output} disagree")
    return [(output, frozenset(parts) if args.part else frozenset())], output.with_suffix("")


def _practice(args: argparse.Namespace, timeline: Timeline) -> Timeline:
    """--breath: *timeline* with the editorial breaths; --solo: with the parts named as they are and every other
    part --others dB softer."""
    if args.others is not None and not args.solo:
        raise UsageError("--others goes with --solo")
    if args.breath:
        from yuesheng.outputs.practice import breathe

        timeline = breathe(timeline)
    if not args.solo:
        return timeline
    if args.stems:
        raise UsageError("--solo goes without --stems (a stem holds one part alone)")
    from yuesheng.outputs.audio import part_names
    from yuesheng.outputs.practice import OTHERS_DB, solo

    try:
        soloed = part_names(args.solo, timeline)
    except AudioError as exc:
        raise UsageError(f"--solo: {exc}") from None
    return solo(timeline, soloed, others_db=OTHERS_DB if args.others is None else args.others)


def _unseekable(path: Path) -> bool:
    """An existing FIFO, socket or character device other than /dev/null (which swallows anything)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and os.path.realpath(path) != os.devnull


def _tags(production: Production, span: tuple[int, int] | None, length: int) -> RenderTags:
    """What every file of this render says of the rite it is (``outputs/tags.py``): its options, its plan's digest
    (the console's, ``live/resume.plan_digest``), the excerpt's span."""
    from yuesheng.live.resume import plan_digest
    from yuesheng.outputs.tags import RenderTags, options_text

    timeline = production.timeline
    return RenderTags(rite=timeline.rite_id, options=options_text(production.options, timeline),
                      plan=plan_digest(timeline), length=length, span=span)


def _file_tags(tagged: RenderTags, args: argparse.Namespace, held: frozenset[str], listener: str) -> Tags:
    """The tags of one file: the render's, with what this file holds that does not move its time."""
    from yuesheng.outputs.audio import Tags

    render = {"parts": " ".join(sorted(held)), "listener": listener, "solo": " ".join(args.solo),
              "breath": "yes" if args.breath else "", "dry": "yes" if args.dry else ""}
    tagged = dataclasses.replace(tagged, render={k: v for k, v in render.items() if v})
    return Tags(title=f"{_TITLE} {tagged.rite}", document=tagged.document())


def cmd_audio(args: argparse.Namespace) -> str:
    from yuesheng.cuesheet import parse_duration
    from yuesheng.files import write_atomic
    from yuesheng.outputs.audio import describe, only_parts, part_names, render, sounding_parts
    from yuesheng.outputs.condense import condense
    from yuesheng.outputs.markers import audacity_labels, cue_sheet
    from yuesheng.outputs.report import run_sheet_text
    from yuesheng.timeline import ticks

    if args.gap is not None and not args.music_only:
        raise UsageError("--gap goes with --music-only")
    try:
        gap = parse_duration(args.gap) if args.gap is not None else DEFAULT_GAP
    except InvalidValueError as exc:
        raise UsageError(f"--gap: {exc}") from None
    production = production_of(args)
    timeline = production.timeline
    span = excerpt_span(args, timeline)
    if span is not None:
        from yuesheng.outputs.condense import excerpt

        timeline = excerpt(timeline, *span)
    tagged = _tags(production, span, timeline.duration_ticks)
    if args.music_only:
        condensed = condense(timeline, gap_ticks=ticks(gap))
        timeline = condensed.timeline
        tagged = dataclasses.replace(tagged, gap=ticks(gap), cuts=condensed.cuts)
    try:
        parts = sorted(part_names(args.part, timeline)) if args.part else sounding_parts(timeline)
    except AudioError as exc:
        raise UsageError(f"--part: {exc}") from None
    timeline = _practice(args, timeline)
    placed = placement_of(args, production)
    if placed is not None and placed[0].path and args.music_only:
        raise UsageError("--music-only moves the music earlier, and a listener who follows a person walks on the "
                         "rite's clock: use --from and --to for a shorter render")
    if placed is not None and span is not None:
        placed = (placed[0].shifted(span[0]), placed[1])
    if placed is not None and args.dry:
        raise UsageError("--dry goes without --listener (a placed render is always dry, with its own reflections)")
    if placed is None and args.binaural is not None:
        raise UsageError("--binaural goes with --listener")
    if args.ambisonics is not None and (placed is None or args.binaural is not None):
        raise UsageError("--ambisonics goes with --listener, and not with --binaural (the player decodes it)")
    if args.room_figures:
        if placed is None:
            raise UsageError("--room-figures goes with --listener")
        from yuesheng.outputs.spatial import room_figures

        return "\n".join(room_figures(timeline, production.staged, placed[0], placed[1],
                                      frozenset(parts) if args.part else frozenset())) + "\n"
    outputs, base = _outputs(args, timeline, parts)
    beside = [path.with_suffix(".cue") for path, _ in outputs] if args.labels else []
    beside += [Path(f"{base}.labels.txt")] if args.labels else []
    beside += [Path(f"{base}.runsheet.txt")] if args.music_only else []
    for path in [p for p, _ in outputs] + beside:  # before the minutes of rendering, not after
        check_output_arg(args, str(path))
        if path in (p for p, _ in outputs) and _unseekable(path):
            raise UsageError(f"-o {path}: a FIFO or device cannot hold audio (the encoder seeks back to finish "
                             "the file's header): give a file name")
    hrtf = None
    if args.binaural is not None:
        from yuesheng.outputs.sofa import load

        hrtf = load(args.binaural)
    lines: list[str] = []
    # Ctrl-C and SIGTERM end the command (130, 143) through main(); render() stops FluidSynth and removes its files
    for path, held in outputs:
        tags = _file_tags(tagged, args, held, placed[0].describe() if placed else "")
        if placed is None:
            rendered = render(only_parts(timeline, held) if held else timeline, path, soundfont=args.soundfont,
                              effects=not args.dry, progress=progress_bar('rendering'), tags=tags)
        else:
            from yuesheng.outputs.spatial import render_placed

            rendered = render_placed(timeline, production.staged, path, placed[0], physics=placed[1], parts=held,
                                     soundfont=args.soundfont, hrtf=hrtf, progress=progress_bar('rendering'),
                                     order=args.ambisonics or 0, tags=tags)
        heard = f", heard from {placed[0].describe()}" if placed else ""
        heard += f", binaural through {hrtf.path}" if hrtf else ""
        heard += f"; solo {' '.join(args.solo)}, the others at {args.others or -12:+g} dB" if args.solo else ""
        heard += "; editorial breaths at the line ends" if args.breath else ""
        heard += f", AmbiX order {args.ambisonics} (ACN, SN3D)" if args.ambisonics else ""
        lines.append(describe(rendered, timeline) + heard + (f" — {' '.join(sorted(held))}" if held else ""))
        if args.labels:
            write_atomic(path.with_suffix(".cue"), cue_sheet(timeline, path.name))
    if args.labels:
        write_atomic(f"{base}.labels.txt", audacity_labels(timeline))
        lines.append(f"wrote {base}.labels.txt (Audacity labels) and a .cue sheet beside each file")
    if args.music_only:
        note = f"music only: every silence longer than {float(gap):g} s shortened to {float(gap):g} s\n\n"
        write_atomic(f"{base}.runsheet.txt", note + run_sheet_text(timeline))
        lines.append(f"wrote {base}.runsheet.txt (the run sheet of this condensed render)")
    return "\n".join(lines) + "\n"


def _add_audio(p: argparse.ArgumentParser) -> None:
    sequencer_options(p)
    p.add_argument("--soundfont", metavar="PATH", help="a .sf2/.sf3 SoundFont (default: Debian's fluid-soundfont-gm)")
    p.add_argument("--format", choices=FORMATS, help="the format when no -o names it (default flac)")
    p.add_argument("--music-only", action="store_true",
                   help="shorten the silences between the music (see --gap); "
                        "write the run sheet of it beside the audio")
    p.add_argument("--gap", metavar="DURATION",
                   help=f"with --music-only: the longest silence kept (default {DEFAULT_GAP}s)")
    p.add_argument("--labels", action="store_true",
                   help="write an Audacity label track (.labels.txt) and a CUE sheet (.cue) beside the audio")
    p.add_argument("--part", action="append", default=[], metavar="PART",
                   help="render only this part (歌 瑟 笙 和 鐘 鑮 磬 管 鼓 鼙 獲者 …); repeatable")
    p.add_argument("--solo", action="append", default=[], metavar="PART",
                   help="for practice: this part as it is, every other part softer (see --others); repeatable")
    p.add_argument("--others", type=decibels, metavar="DB",
                   help="with --solo: how far below their own level the other parts sound (default -12; -60 to 0)")
    p.add_argument("--breath", action="store_true", help="editorial breaths, as the book's ’ (the sources give "
                   "none): each sung line's last note but a stanza's held half its length")
    p.add_argument("--stems", metavar="DIR", help="one file per part in DIR (of the --part ones, if given)")
    p.add_argument("--dry", action="store_true", help="without FluidSynth's reverb and chorus (for a mix of your own)")
    listener_options(p)
    excerpt_options(p)
    p.add_argument("--binaural", nargs="?", const=str(DEFAULT_SOFA), metavar="SOFA",
                   help="with --listener: through the head-related impulse responses of a SOFA file (default: the "
                        f"MIT KEMAR set of Debian's libmysofa1, {DEFAULT_SOFA}); for headphones")
    p.add_argument("--ambisonics", type=int, choices=(1, 2, 3), metavar="ORDER",
                   help="with --listener: write AmbiX (ACN, SN3D) of order 1, 2 or 3 to a .wav file, for "
                        "head-tracked playback (docs/seat.md)")
    p.add_argument("--room-figures", action="store_true",
                   help="with --listener: print each source's distance, T30, EDT and direct-to-reverberant ratio "
                        "as heard from the seat, and render nothing (docs/seat.md)")
    p.set_defaults(func=cmd_audio)


ARGUMENTS = {"audio": _add_audio}
