"""``yuesheng video``: the rite as a video to share — the plate frame by frame, everyone where he is at each instant,
with the caption and the sound, H.264 + AAC in MP4 (``outputs/video.py``, ``outputs/frames.py``).

``--from``/``--to`` choose an excerpt by its first and last cue; ``--speed`` plays it faster (the sound is then
left out: a rite's music sped up is not its music); ``--follow PERSON`` keeps one person (or a group) in frame,
zoomed, with his track; ``--audio FILE`` takes the sound from a render of the same rite instead of rendering it
(its tags checked: ``outputs/tags.py``), ``--no-audio`` makes a silent video. The rite's blocking must be complete:
every cue drawn is staged.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from yuesheng.cli.common import check_output_arg, production_of, sequencer_options
from yuesheng.cli.streams import progress_bar
from yuesheng.errors import AmbiguousNameError, AudioError, UnknownNameError, UsageError

if TYPE_CHECKING:
    from yuesheng.outputs.video import Excerpt
    from yuesheng.production import Production

SPEEDS = (0.1, 600.0)  # --speed: slower than a tenth makes a video ten times the rite; faster than ×600, a blur
SIZES = ((160, 120), (3840, 2160))  # --size: the smallest and largest frame, in px
FPS = (1, 60)
MAX_FRAMES = 25 * 3600 * 6  # six hours of video at 25 fps: more is a mistake of --speed or the excerpt
_SIZE = re.compile(r"([0-9]{2,4})[x×X]([0-9]{2,4})")


def size_of(text: str) -> tuple[int, int]:
    """An argparse type: WxH, each even (yuv420p halves them) and within ``SIZES``."""
    match = _SIZE.fullmatch(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"{text!r}: expected WIDTHxHEIGHT in px, e.g. 1280x720")
    w, h = int(match[1]), int(match[2])
    (w0, h0), (w1, h1) = SIZES
    if not (w0 <= w <= w1 and h0 <= h <= h1):
        raise argparse.ArgumentTypeError(f"{text}: expected {w0}x{h0} to {w1}x{h1}")
    if w % 2 or h % 2:
        raise argparse.ArgumentTypeError(f"{text}: width and height must be even (H.264 in yuv420p)")
    return w, h


def speed_of(text: str) -> float:
    """An argparse type: how many times as fast as the rite, within ``SPEEDS``."""
    try:
        value = float(text.strip().lstrip("x×"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and SPEEDS[0] <= value <= SPEEDS[1]):
        raise argparse.ArgumentTypeError(f"{text}: expected {SPEEDS[0]:g} to {SPEEDS[1]:g} (times the rite's pace)")
    return value


def fps_of(text: str) -> int:
    """An argparse type: frames a second, within ``FPS``."""
    if not (text.isascii() and text.isdigit()) or not FPS[0] <= int(text) <= FPS[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of frames a second, {FPS[0]} to {FPS[1]}")
    return int(text)


def _cue(production: Production, name: str, option: str) -> str:
    """The cue *name* of the programme built (UsageError naming the nearest ids)."""
    from yuesheng.text import suggest

    ids = [c.cue.id for c in production.timeline.cues]
    if name in ids:
        return name
    near = suggest(name, ids, 3)
    known = name in {c.id for c in production.sheet.cues}
    why = "is not in the programme with the variants and readings chosen" if known else "is not a cue of this rite"
    raise UsageError(f"{option} {name!r} {why}" + (f"; did you mean {', '.join(near)}?" if near else ""))


def excerpt_of(args: argparse.Namespace, production: Production) -> Excerpt:
    """The excerpt --from, --to, --speed and --fps ask for (UsageError for one that makes no sense)."""
    from yuesheng.outputs.video import Excerpt
    from yuesheng.timeline import seconds

    spans = {c.cue.id: (seconds(c.start_tick), seconds(c.end_tick)) for c in production.timeline.cues}
    order = list(spans)
    first = _cue(production, args.from_cue, "--from") if args.from_cue else order[0]
    last = _cue(production, args.to_cue, "--to") if args.to_cue else order[-1]
    if order.index(first) > order.index(last):
        raise UsageError(f"--from {first} comes after --to {last} in the programme")
    start, end = spans[first][0], max(spans[c][1] for c in order[order.index(first):order.index(last) + 1])
    if end <= start:
        raise UsageError(f"--from {first} --to {last}: the excerpt takes no time")
    excerpt = Excerpt(start, end, args.speed, args.fps)
    if excerpt.frames > MAX_FRAMES:
        raise UsageError(f"the video would be {excerpt.seconds / 3600:.1f} h long ({excerpt.frames} frames): at most "
                         f"{MAX_FRAMES} frames; choose a higher --speed, a shorter excerpt or fewer --fps")
    return excerpt


def followed(production: Production, name: str | None) -> tuple[tuple[str, ...], str]:
    """The member ids --follow names (``staging.persons``), on the ground at some time, and his name."""
    from yuesheng.staging.persons import person

    if name is None:
        return (), ""
    staged, motion = production.staged, production.motion
    assert staged is not None and motion is not None
    try:
        who = person(name, production.sheet, staged.same)
    except (UnknownNameError, AmbiguousNameError) as exc:
        raise UsageError(f"--follow: {exc}") from None
    members = tuple(m for m in who.members if m in motion.members)
    if not members:
        raise UsageError(f"--follow {name}: {who.label} is never on the ground in this rite")
    return members, who.label




def _audio(args: argparse.Namespace, production: Production, excerpt: Excerpt) -> tuple[Path | str | None, str]:
    """What the video's sound is: "render", a checked file, or None; and a note to say why there is none."""
    from yuesheng.outputs.video import audio_check

    if args.no_audio:
        return None, ""
    if excerpt.speed != 1:
        return None, f"no sound at ×{excerpt.speed:g}: the rite's music sped up is not its music (--speed 1 has it)"
    if args.audio is None:
        return "render", ""
    path = Path(args.audio)
    if not path.is_file():
        raise UsageError(f"--audio {path}: no such file")
    from yuesheng.live.resume import plan_digest
    from yuesheng.outputs.tags import checked

    tags = checked(path, production.timeline, production.options, plan_digest(production.timeline))  # exit 1
    if tags.span is not None or tags.cuts is not None:
        raise UsageError(f"--audio {path}: a {'--music-only' if tags.cuts is not None else '--from/--to'} render "
                         "does not keep the rite's clock: give a render of the whole rite")
    try:
        audio_check(path, production.timeline)
    except AudioError as exc:
        raise UsageError(f"--audio: {exc}") from None
    return path, ""


def cmd_video(args: argparse.Namespace) -> str:
    from yuesheng.cli.cast import grounded
    from yuesheng.cli.streams import say
    from yuesheng.outputs.frames import Plate, clock_tenths
    from yuesheng.outputs.video import describe, find_ffmpeg, render_video

    if args.output is not None and Path(args.output).suffix.lower() != ".mp4":
        raise UsageError(f"-o {args.output}: expected a .mp4 file")
    check_output_arg(args)
    find_ffmpeg()
    production = production_of(args)
    grounded(production)
    excerpt = excerpt_of(args, production)
    members, name = followed(production, args.follow)
    output = args.output or f"{production.timeline.rite_id}.mp4"
    check_output_arg(args, output)
    audio, note = _audio(args, production, excerpt)
    if note:
        say(note)
    staged, motion = production.staged, production.motion
    assert staged is not None and motion is not None
    speed = f" ×{excerpt.speed:g}" if excerpt.speed != 1 else ""
    label = f"{production.timeline.rite}{speed}" + (f" — {name}" if name else "")
    plate = Plate(staged, motion, production.timeline, production.sheet, args.size, members, label=label,
                  track=(excerpt.start, excerpt.end))
    # Ctrl-C and SIGTERM end the command (130, 143) through main(): FFmpeg is killed, its file removed
    written = render_video(plate, excerpt, output, timeline=production.timeline, audio=audio,
                           soundfont=args.soundfont, progress=progress_bar('video'))
    what = f"{production.timeline.rite} from {clock_tenths(excerpt.start)} to {clock_tenths(excerpt.end)}"
    return describe(written, excerpt, what + (f", following {name}" if name else "")) + "\n"


def _add_video(p: argparse.ArgumentParser) -> None:
    sequencer_options(p)
    p.add_argument("--from", dest="from_cue", metavar="CUE_ID", help="begin at this cue (default: the first)")
    p.add_argument("--to", dest="to_cue", metavar="CUE_ID", help="end with this cue (default: the last)")
    p.add_argument("--speed", type=speed_of, default=1.0, metavar="X",
                   help=f"times the rite's pace, {SPEEDS[0]:g} to {SPEEDS[1]:g} (default 1; other than 1: no sound)")
    p.add_argument("--follow", metavar="PERSON", help="keep this person (主人, zhuren, 衆賓 2) in frame, zoomed, "
                   "with his track")
    p.add_argument("--size", type=size_of, default=(1280, 720), metavar="WxH", help="frame size (default 1280x720)")
    p.add_argument("--fps", type=fps_of, default=25, metavar="N", help=f"frames a second, {FPS[0]} to {FPS[1]} "
                   "(default 25)")
    sound = p.add_mutually_exclusive_group()
    sound.add_argument("--audio", metavar="FILE", help="the sound from this render of the same rite (yuesheng audio) "
                       "instead of rendering it")
    sound.add_argument("--no-audio", action="store_true", help="no sound")
    p.add_argument("--soundfont", metavar="PATH", help="a .sf2/.sf3 SoundFont for the sound rendered")
    p.set_defaults(func=cmd_video)


ARGUMENTS = {"video": _add_video}
