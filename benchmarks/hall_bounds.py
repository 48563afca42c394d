"""How reading and staging a hall grow with the counts docs/limits.md bounds: places, ``via`` stops and stairs.

1. **Places** in chains of 30, each given relative to the next (``of:``), written in the worst order (every place
   before the one it hangs from), ``--places`` of them (default 250, 500, 1,000 and 1,900: with the hall's own 89,
   near the limit of 2,000): ``load_hall`` in CPU seconds beside the baseline of the same run, the YAML parse of the
   same file. Issue 34: the old resolver went round the places once per level (2,000 / 6,000 / 18,000 places: 1.5 /
   8.9 / 74 s). Goal: linear, the cost per place at the limit within 2× of that at the smallest count.
2. **via stops**: one route through 1, 4 and 16 (the limit) stops across the shipped 鄉射 hall, searched afresh.
3. **Stairs**: ``--stairs`` extra stairs (default 0, 50, 100, 150 and 250, near the limit's 254 with the shipped walls
   and set pieces) on the 鄉射 hall, read and one route searched afresh: the visibility graph grows with the square of
   its points, so this is a measured curve, not a line.

Run ``python benchmarks/hall_bounds.py``; the ``RESULT`` lines are the figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from yuesheng.staging import routes  # noqa: E402
from yuesheng.staging.model import Hall, Point  # noqa: E402
from yuesheng.staging.reader import load_hall  # noqa: E402
from yuesheng.yamlload import loads  # noqa: E402

HALL = ROOT / "blocking" / "xiangshe.hall.yaml"


def cpu(call: Callable[[], object], repeat: int) -> float:
    """The least CPU seconds of *repeat* calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def with_text(old: str, new: str, folder: Path, name: str) -> Path:
    """The 鄉射 hall with *old* replaced by *new*, written to *folder*/*name*."""
    text = HALL.read_text(encoding="utf-8")
    path = folder / name
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def places(count: int, folder: Path, repeat: int) -> tuple[float, float]:
    """(load_hall, the YAML parse) of the hall with *count* relative places in chains of 30 (the limit is 32), each
    place written before the one it hangs from, in CPU seconds."""
    def place(i: int) -> str:
        if i % 30 == 29 or i == count - 1:
            return f"  c{i}: {{name: c{i}, at: [{-300 + 9 * (i // 30)}, 100], estimate: e}}\n"
        return f"  c{i}: {{name: c{i}, of: c{i + 1}, dir: 南, dist: 0.1, estimate: e}}\n"
    path = with_text("places:\n", "places:\n" + "".join(place(i) for i in range(count)), folder,
                     f"places{count}.hall.yaml")
    text = path.read_text(encoding="utf-8")
    return cpu(lambda: load_hall(path), repeat), cpu(lambda: loads(text, str(path)), repeat)


def _fresh_route(hall: Hall, stops: tuple[Point, ...]) -> tuple[Point, ...]:
    """A route from the gate through *stops* to the top of the 西階, searched afresh (the graph's caches cleared, and
    no kept route used)."""
    routes._graph.cache_clear()
    routes._seen.cache_clear()
    ends = [hall.places["men-zuo"].point, *stops, hall.places["xijie-shang"].point]
    return routes._kept_route(_NoKeep(), hall, ends, None, (), ())  # type: ignore[arg-type]


class _NoKeep:
    """A store of routes that keeps nothing, so that each search is measured."""

    def get(self, key: object) -> None:
        return None

    def put(self, key: object, value: object) -> None:
        return None


def stairs(count: int, folder: Path, repeat: int) -> float:
    """load_hall and one fresh route on the hall with *count* extra stairs along the 堂's edge."""
    extra = "".join(f"  extra{i}: {{name: 階{i}, x: {-5.5 + i * 11 / max(count, 1):.4f}, run: 1, estimate: e}}\n"
                    for i in range(count))
    path = with_text("stairs:\n", "stairs:\n" + extra, folder, f"stairs{count}.hall.yaml")

    def staged() -> None:
        hall = load_hall(path)
        _fresh_route(hall, (hall.places["tang-xi"].point,))
    return cpu(staged, repeat)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--places", type=int, nargs="+", default=[250, 500, 1000, 1900])
    parser.add_argument("--stairs", type=int, nargs="+", default=[0, 50, 100, 150, 250])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        first = 0.0
        for count in args.places:
            hall_s, parse_s = places(count, folder, args.repeat)
            per = hall_s / count
            first = first or per
            print(f"RESULT places_{count}_load_hall_ms={hall_s * 1000:.1f} ({hall_s / parse_s:.2f}x baseline YAML "
                  f"parse; per place {per / first:.2f}x the first count's)")
        _via(1, 1)  # the routing modules imported, outside the figures
        for count in (1, 4, 16):
            print(f"RESULT via_{count}_route_ms={_via(count, args.repeat) * 1000:.1f}")
        for count in args.stairs:
            print(f"RESULT stairs_{count}_load_and_route_ms={stairs(count, folder, args.repeat) * 1000:.1f}")
    return 0


def _via(count: int, repeat: int) -> float:
    hall = load_hall(HALL)
    stops = tuple(hall.places["tang-xi" if n % 2 else "tang-dong"].point for n in range(count))
    return cpu(lambda: _fresh_route(hall, stops), repeat)


if __name__ == "__main__":
    sys.exit(main())
