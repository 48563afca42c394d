"""How fast a placed render (``--listener``, issue 21) is beside a plain one, in the same run.

For each shipped rite (default options, its default seat), the music condensed as ``yuesheng audio --music-only``
does (silences over 3 s shortened to 3 s) is rendered to FLAC twice: plainly (``audio.render``) and placed
(``spatial.render_placed``: one FluidSynth per part, each rendering only where its part sounds, then distance,
delay, air, head and the room's responses by FFT convolution) twice: first cold (every source–listener pair
simulated by pyroomacoustics, unless the cache ``rooms`` holds it) and then warm (every response from the cache).
Each ``RESULT`` line gives the seconds of audio, the wall time and the real-time factor of each, the CPU seconds of
each (this process and its children, FluidSynth's included), the warm placed render's CPU over the plain's, and
the placed render's peak; a rite that cannot be placed (a sounding part with no place on its plan) gets a
``RESULT`` line saying why.

Goals: issue 21, the placed render at 50× real time or better; issue 32, a placed render with cached responses
within 3× the plain render's CPU.

Run ``python benchmarks/placed_audio.py`` (``--rites xiangshe`` for one rite).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import soundfile

try:
    import yuesheng  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from yuesheng import load, produce
from yuesheng.errors import AudioError
from yuesheng.music.repertoire import data_dir, load_repertoire
from yuesheng.outputs.audio import render
from yuesheng.outputs.condense import condense
from yuesheng.outputs.placement import listener
from yuesheng.outputs.spatial import render_placed
from yuesheng.timeline import ticks


def _cpu() -> float:
    """CPU seconds of this process and its finished children (FluidSynth)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


RITES = ("xiangyinjiu", "xiangshe", "yanli", "dashe")
GAP_SECONDS = Fraction(3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rites", nargs="+", default=list(RITES), choices=RITES)
    parser.add_argument("--sheet", type=Path, help="this cue sheet instead of the shipped rites (a smoke run: "
                        "tests/data/placed.yaml)")
    parser.add_argument("--listener", default="default", help="the seat, as yuesheng audio --listener takes it")
    args = parser.parse_args()
    repertoire = load_repertoire()
    sheets = [args.sheet] if args.sheet else [data_dir("cues") / f"{rite}.yaml" for rite in args.rites]
    for path in sheets:
        rite = path.stem
        production = produce(load(path, repertoire=repertoire))
        timeline, staged = condense(production.timeline, gap_ticks=ticks(GAP_SECONDS)).timeline, production.staged
        seat = listener(args.listener, timeline, staged)
        with tempfile.TemporaryDirectory() as tmp:
            start, cpu = time.perf_counter(), _cpu()
            plain = render(timeline, Path(tmp) / "plain.flac")
            plain_s, plain_cpu = time.perf_counter() - start, _cpu() - cpu
            runs = []
            try:
                for _ in ("cold", "warm"):
                    start, cpu = time.perf_counter(), _cpu()
                    placed = render_placed(timeline, staged, Path(tmp) / "placed.flac", seat)
                    runs.append((time.perf_counter() - start, _cpu() - cpu))
            except AudioError as exc:
                print(f"RESULT placed_audio {rite} not placed: {exc}", flush=True)
                continue
            peak = max(float(np.abs(b).max()) for b in soundfile.blocks(placed.path, 1 << 20, dtype="float32"))
        (cold_s, cold_cpu), (warm_s, warm_cpu) = runs
        ratio = warm_cpu / max(plain_cpu, 1e-9)
        print(f"RESULT placed_audio {rite} audio={placed.seconds:.0f}s seat={seat.name} "
              f"plain={plain_s:.1f}s ({plain.seconds / plain_s:.0f}x real time, cpu {plain_cpu:.1f}s) "
              f"placed cold={cold_s:.1f}s ({placed.seconds / cold_s:.0f}x, cpu {cold_cpu:.1f}s) "
              f"warm={warm_s:.1f}s ({placed.seconds / warm_s:.0f}x, cpu {warm_cpu:.1f}s) "
              f"cpu warm/plain={ratio:.2f} ({'ok' if ratio <= 3 else 'ABOVE GOAL'}: goal <= 3) peak={peak:.3f}",
              flush=True)


if __name__ == "__main__":
    main()
