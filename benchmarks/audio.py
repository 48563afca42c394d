"""How fast yuesheng renders each rite to audio, and how big each format is.

For each shipped rite (``cues/*.yaml``, default options) this renders the whole
rite through FluidSynth (``yuesheng.outputs.audio.render``) to FLAC and reports the
real-time factor (seconds of audio per second of wall time, including
FluidSynth's start and the encoding; also per CPU second of yuesheng and
FluidSynth together, which a busy machine does not distort) and the file's size against the WAV's,
which is computed, not written (44.1 kHz 16-bit stereo: 4 bytes a frame plus
the header; RF64 past 4 GiB). ``--formats`` adds Ogg Vorbis and Opus renders
(of ``--format-rites``, default 鄉射禮), and ``--music-only`` a condensed render
of each rite (``--gap 3s``) to Ogg Vorbis.

Goals (issue 9): every rite at least 100× real time in FLAC; the FLAC of 鄉射禮
under 10 % of its WAV.

Run ``python benchmarks/audio.py`` (``--rites xiangshe`` for one rite). The
last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

try:
    import yuesheng  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from yuesheng import build, load
from yuesheng.music.repertoire import data_dir, load_repertoire
from yuesheng.outputs.audio import ENCODINGS, expected_frames, plan, render
from yuesheng.outputs.condense import condense
from yuesheng.timeline import Timeline, ticks

RITES = ("xiangyinjiu", "xiangshe", "yanli", "dashe")
GOAL_RTF, GOAL_FLAC_SHARE = 100.0, 0.10


def wav_bytes(timeline: Timeline) -> int:
    """The size of the 16-bit stereo WAV (RF64 past 4 GiB) of *timeline*, computed."""
    return plan(timeline, "x.wav")[0].size_bytes


def cpu_seconds() -> float:
    """CPU time of this process and its finished children (FluidSynth)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_render(timeline: Timeline, path: Path) -> tuple[float, float, float, int]:
    """(seconds of audio, wall seconds, CPU seconds, bytes) of one render."""
    start, cpu = time.perf_counter(), cpu_seconds()
    rendered = render(timeline, path)
    return rendered.seconds, time.perf_counter() - start, cpu_seconds() - cpu, path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rites", nargs="+", default=list(RITES), choices=RITES)
    parser.add_argument("--formats", action="store_true", help="also Ogg Vorbis and Opus of --format-rites")
    parser.add_argument("--format-rites", nargs="+", default=["xiangshe"], choices=RITES)
    parser.add_argument("--music-only", action="store_true", help="also a --music-only Ogg Vorbis of each rite")
    parser.add_argument("--sheet", type=Path, help="this cue sheet instead of the shipped rites (a smoke run: "
                        "tests/data/golden.yaml)")
    args = parser.parse_args(argv)
    repertoire = load_repertoire()
    sheets = [args.sheet] if args.sheet else [data_dir("cues") / f"{rite}.yaml" for rite in args.rites]
    results: list[str] = []
    with tempfile.TemporaryDirectory(prefix="yuesheng-bench-") as tmp:
        for path in sheets:
            rite = path.stem
            timeline = build(load(path, repertoire=repertoire))
            target, _ = plan(timeline, "x.flac")
            wav = wav_bytes(timeline)
            audio_s, wall, cpu, size = timed_render(timeline, Path(tmp) / f"{rite}.flac")
            rtf = audio_s / wall
            print(f"{rite}: {audio_s / 3600:.2f} h ({target.sound_frames / target.frames:.0%} rendered by FluidSynth), "
                  f"FLAC in {wall:.1f} s ({cpu:.1f} s CPU) = {rtf:.0f}x real time, {size / 1e6:.1f} MB = "
                  f"{size / wav:.2%} of the {wav / 1e9:.2f} GB {plan(timeline, 'x.wav')[0].container}", flush=True)
            results.append(f"RESULT rtf flac {rite} {rtf:.0f}x ({audio_s:.0f} s of audio in {wall:.1f} s wall, "
                           f"{cpu:.1f} s CPU = {audio_s / cpu:.0f}x per CPU second) "
                           f"{'ok' if rtf >= GOAL_RTF else 'BELOW GOAL'} (goal >= {GOAL_RTF:.0f}x)")
            results.append(f"RESULT size {rite} wav {wav / 1e6:.1f} MB (computed) flac {size / 1e6:.1f} MB "
                           f"({size / wav:.2%} of wav)"
                           + (f" {'ok' if size / wav < GOAL_FLAC_SHARE else 'ABOVE GOAL'} (goal < 10%)"
                              if rite == "xiangshe" else ""))
            (Path(tmp) / f"{rite}.flac").unlink()
            if args.formats and rite in args.format_rites:
                for suffix in (".ogg", ".opus"):
                    audio_s, wall, _, size = timed_render(timeline, Path(tmp) / f"{rite}{suffix}")
                    print(f"{rite}{suffix}: {wall:.1f} s = {audio_s / wall:.0f}x, {size / 1e6:.1f} MB", flush=True)
                    results.append(f"RESULT size {rite} {suffix[1:]} {size / 1e6:.1f} MB ({size / wav:.2%} of wav), "
                                   f"{audio_s / wall:.0f}x real time ({ENCODINGS[suffix].name})")
            if args.music_only:
                short = condense(timeline, gap_ticks=ticks(Fraction(3))).timeline
                audio_s, wall, _, size = timed_render(short, Path(tmp) / f"{rite}-music.ogg")
                print(f"{rite} --music-only .ogg: {audio_s / 60:.1f} min of "
                      f"{expected_frames(timeline) / 44100 / 3600:.1f} h, {wall:.1f} s, {size / 1e6:.1f} MB",
                      flush=True)
                results.append(f"RESULT music-only ogg {rite} {audio_s / 60:.1f} min, {size / 1e6:.1f} MB, "
                               f"rendered in {wall:.1f} s")
    print("\n".join(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
