"""How fast yuesheng computes the blocking (儀禮圖) of the shipped rites.

For each rite with a blocking (``blocking/RITE.yaml``): reading the hall and blocking (YAML cache warm),
``stage`` (everyone's place after every cue) and ``derive`` of every cue (its walks routed through the hall's
graph, networkx), timed separately; and the first ``derive`` pass against a second one, since routes are kept per
hall. Baseline: the same routes by straight lines (``Point.distance``, no graph), the floor any routing pays.
Rites without a blocking are listed as such (their durations stay the cue sheet's).

Times are CPU seconds (``time.process_time``, best of 3; the route cache cleared before each cold pass). Run
``python benchmarks/staging.py``; the last lines are ``RESULT`` lines.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's yuesheng, installed or not

from yuesheng.check.validate import load_cuesheet
from yuesheng.music.repertoire import data_dir, load_repertoire
from yuesheng.staging import routes
from yuesheng.staging.durations import derive
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
    routes.route.cache_clear()
    routes._graph.cache_clear()


def main() -> None:
    repertoire = load_repertoire()
    results = []
    for rite in RITES:
        path = data_dir("blocking") / f"{rite}.yaml"
        if not path.is_file():
            print(f"{rite}: no blocking yet (durations stay the cue sheet's)")
            continue
        sheet = load_cuesheet(data_dir("cues") / f"{rite}.yaml", repertoire)
        load = best(lambda: load_blocking(path, sheet))  # noqa: B023 - timed at once
        blocking = load_blocking(path, sheet)
        staged = stage(blocking, sheet)
        t_stage = best(lambda: stage(blocking, sheet))  # noqa: B023
        t_cold = best(lambda: [derive(blocking, c) for c in staged], before=cold)  # noqa: B023
        t_warm = best(lambda: [derive(blocking, c) for c in staged])  # noqa: B023
        straight = best(lambda: [m[2].distance(m[3]) for c in staged for m in c.moved])  # noqa: B023
        walks = sum(len(c.moved) for c in staged)
        print(f"{rite}: {len(staged)} cues, {walks} member moves, {len(blocking.hall.places)} places")
        results.append((rite, load, t_stage, t_cold, t_warm, straight))
    for rite, load, t_stage, t_cold, t_warm, straight in results:
        print(f"RESULT staging {rite}: load {load * 1000:.0f} ms, stage {t_stage * 1000:.0f} ms, "
              f"routes+durations cold {t_cold * 1000:.0f} ms, warm {t_warm * 1000:.0f} ms "
              f"(baseline straight lines {straight * 1000:.1f} ms)")
    total = sum(r[1] + r[2] + r[3] for r in results)
    print(f"RESULT staging all rites with a blocking: {total * 1000:.0f} ms cold")


if __name__ == "__main__":
    main()
