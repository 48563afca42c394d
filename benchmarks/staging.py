"""How fast yuesheng computes the blocking (儀禮圖) of the shipped rites.

For each rite with a blocking (``blocking/RITE.yaml``): reading the hall and blocking (YAML cache warm),
``stage`` (everyone's place after every cue) and ``derive`` of every cue (its walks routed through the hall's
graph, its own search), timed separately: cold (no route found before: the graph built and every walk searched), from
disk (the routes kept by an earlier process, ``staging/routecache``, read and checked against the walls) and warm
(a second pass in the same process). Baseline: the same routes by straight lines (``Point.distance``, no graph),
the floor any routing pays. Rites without a blocking are listed as such (their durations stay the cue sheet's).

Times are CPU seconds (``time.process_time``, best of ``--repeat``, 3 by default), with a cache folder of the
benchmark's own (the package's shipped routes unread). Run ``python benchmarks/staging.py`` (``--rites xiangshe``
for one rite); the last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's yuesheng, installed or not

from yuesheng import load
from yuesheng.music.repertoire import data_dir, load_repertoire
from yuesheng.staging import durations, routes
from yuesheng.staging.durations import derive
from yuesheng.staging.model import Hall
from yuesheng.staging.reader import load_blocking
from yuesheng.staging.stage import stage

RITES = ("xiangyinjiu", "xiangshe", "yanli", "dashe")


def best(fn: Callable[[], object], *, before: Callable[[], None] = lambda: None, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        before()
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def cold() -> None:
    """Nothing found before: no graph, no route in memory or on disk."""
    shutil.rmtree(Path(os.environ["XDG_CACHE_HOME"], "yuesheng", "routes"), ignore_errors=True)
    routes._kept.cache_clear()
    routes._graph.cache_clear()
    routes._seen.cache_clear()
    durations._measured.cache_clear()
    durations._way.cache_clear()


def from_disk(hall: Hall) -> None:
    """A new process: the routes of *hall* on disk, nothing in memory."""
    routes._kept(hall).write()
    routes._kept.cache_clear()
    routes._graph.cache_clear()
    routes._seen.cache_clear()
    durations._measured.cache_clear()
    durations._way.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rites", nargs="+", default=list(RITES), choices=RITES)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: expected at least 1")
    with tempfile.TemporaryDirectory(prefix="yuesheng-staging-") as folder:
        os.environ["XDG_CACHE_HOME"] = folder
        os.environ["YUESHENG_NO_SHIPPED"] = "1"  # cold is cold: not the routes the package ships (caches.shipped)
        measure(args.rites, args.repeat)


def measure(rites: list[str], repeat: int) -> None:
    repertoire = load_repertoire()
    timed = partial(best, repeat=repeat)
    results = []
    for rite in rites:
        path = data_dir("blocking") / f"{rite}.yaml"
        if not path.is_file():
            print(f"{rite}: no blocking yet (durations stay the cue sheet's)")
            continue
        sheet = load(data_dir("cues") / f"{rite}.yaml", repertoire=repertoire)
        read = timed(lambda: load_blocking(path, sheet))  # noqa: B023 - timed at once
        blocking = load_blocking(path, sheet)
        staged = stage(blocking, sheet)
        t_stage = timed(lambda: stage(blocking, sheet))  # noqa: B023
        t_cold = timed(lambda: [derive(blocking, c, sheet) for c in staged], before=cold)  # noqa: B023
        t_disk = timed(lambda: [derive(blocking, c, sheet) for c in staged], before=lambda: from_disk(blocking.hall))  # noqa: B023
        t_warm = timed(lambda: [derive(blocking, c, sheet) for c in staged])  # noqa: B023
        straight = timed(lambda: [m[2].distance(m[3]) for c in staged for m in c.moved])  # noqa: B023
        walks = sum(len(c.moved) for c in staged)
        print(f"{rite}: {len(staged)} cues, {walks} member moves, {len(blocking.hall.places)} places")
        results.append((rite, read, t_stage, t_cold, t_disk, t_warm, straight))
    for rite, read, t_stage, t_cold, t_disk, t_warm, straight in results:
        print(f"RESULT staging {rite}: load {read * 1000:.0f} ms, stage {t_stage * 1000:.0f} ms, "
              f"routes+durations cold {t_cold * 1000:.0f} ms, from disk {t_disk * 1000:.0f} ms, "
              f"warm {t_warm * 1000:.0f} ms "
              f"(baseline straight lines {straight * 1000:.1f} ms)")
    total = sum(r[1] + r[2] + r[3] for r in results)
    print(f"RESULT staging all rites with a blocking: {total * 1000:.0f} ms cold")


if __name__ == "__main__":
    main()
