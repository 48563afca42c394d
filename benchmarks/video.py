"""How fast ``yuesheng video`` renders: a 10-minute excerpt of 大射儀 at 1280×720, 25 fps, ×1, with its sound.

The excerpt is the busiest ten minutes of the rite (the most seconds of walking in them, over every cue's start),
rendered through the command's own path (``outputs.video.render_video``: the plate drawn, the sound rendered
through FluidSynth, both through FFmpeg to MP4). It reports the ratio of render time to excerpt time (goal ≤ 1:
real time or faster, on a 2-core machine), the same in CPU seconds of yuesheng, FluidSynth and FFmpeg together
(which a busy machine does not distort), the share of frames that were drawn anew, and the load average beside it.

Run ``python benchmarks/video.py`` (``--minutes 1 --no-audio`` for a shorter run). The last lines are ``RESULT``
lines.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

try:
    import yuesheng  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from yuesheng import load, produce
from yuesheng.outputs.frames import Plate
from yuesheng.outputs.video import Excerpt, render_video
from yuesheng.staging.motion import Motion

GOAL = 1.0  # render time / excerpt time


def cpu_seconds() -> tuple[float, float]:
    """CPU time (user and system) of this process, and of its finished children (FluidSynth, FFmpeg)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def busiest(motion: Motion, seconds: float) -> float:
    """The cue start from which *seconds* hold the most seconds of walking."""
    legs = [leg for m in motion.members for leg in motion.legs(m)]

    def walking(start: float) -> float:
        return sum(max(0.0, min(leg.end, start + seconds) - max(leg.start, start)) for leg in legs)

    return max((motion.span(c)[0] for c in motion.cues), key=walking)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rite", default="dashe")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--size", default="1280x720")
    parser.add_argument("--fps", type=int, default=25)
    parser.add_argument("--no-audio", action="store_true", help="the picture alone")
    args = parser.parse_args(argv)
    production = produce(load(args.rite))
    staged, motion = production.staged, production.motion
    assert staged is not None and motion is not None
    length = args.minutes * 60
    start = busiest(motion, length)
    excerpt = Excerpt(start, start + length, 1.0, args.fps)
    width, height = (int(v) for v in args.size.split("x"))
    plate = Plate(staged, motion, production.timeline, production.sheet, (width, height),
                  label=production.timeline.rite)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="yuesheng-bench-") as tmp:
        wall, (own, children) = time.perf_counter(), cpu_seconds()
        written = render_video(plate, excerpt, Path(tmp) / "v.mp4", timeline=production.timeline,
                               audio=None if args.no_audio else "render")
        wall = time.perf_counter() - wall
        own, children = (after - before for after, before in zip(cpu_seconds(), (own, children), strict=True))
    load_after = os.getloadavg()
    cpu = own + children
    ratio = wall / excerpt.seconds
    sound = "no sound" if args.no_audio else "with its sound"
    print(f"{production.timeline.rite} from {start:.0f} s, {excerpt.seconds:.0f} s at {width}x{height} {args.fps} fps "
          f"{sound}: {wall:.1f} s wall, {cpu:.1f} s CPU (yuesheng {own:.1f}, FFmpeg and FluidSynth {children:.1f}); "
          f"{plate.drawn} of {excerpt.frames} frames drawn anew, {written.pictures} sent to the encoder")
    verdict = "ok" if ratio <= GOAL else "SLOWER THAN REAL TIME"
    print(f"RESULT video_render_vs_real_time={ratio:.2f} ({verdict}; goal <= {GOAL:g}) cpu_vs_real_time="
          f"{cpu / excerpt.seconds:.2f} wall_s={wall:.1f} cpu_s={cpu:.1f} load_average={load_before[0]:.1f}->"
          f"{load_after[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
