"""How loading and checking a cue sheet grow with the number of its variants.

A test sheet (``tests/data/mini_xiangyin.yaml``) is given 10, 100 and 1,000 variants, each switching on one action
of its own (anchored after the cue before it, under a held piece that waits for a later cue: so the anchors
span the variants), and is timed three ways, best of
``--repeat`` (3 by default), in CPU seconds (``time.process_time``, fair on a shared machine; wall-clock beside):

1. the baseline, in the same run: reading the same sheet's YAML, schema and references (``read_cuesheet``), the
   part whose cost is linear in the size of the file;
2. ``yuesheng.load``: what every build pays (the ritual rules on every variant configuration);
3. ``check_cuesheet``: what ``validate`` pays (also anchors under combinations of variants, size under each).

Issue 22 §5: the check of every pair of variants made loading cubic (1,000 variants 84 s). Goal: per variant, the
cost at 1,000 within a few times that at 100. Run ``python benchmarks/variants.py``; the last lines are ``RESULT``
lines, each check's time per variant and its ratio to the baseline.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yuesheng  # noqa: E402
from yuesheng.check.validate import check_cuesheet  # noqa: E402
from yuesheng.cuesheet import read_cuesheet  # noqa: E402
from yuesheng.music.repertoire import Repertoire, load_repertoire  # noqa: E402
from yuesheng.yamlload import load  # noqa: E402

MINI = ROOT / "tests" / "data" / "mini_xiangyin.yaml"
COUNTS = (10, 100, 1000)


def sheet_with_variants(count: int) -> str:
    """The mini sheet with *count* more variants, each with one action after the one before, all of them under the
    held 陔 (whose end waits for a later cue: so every variant's cue is in the span where anchors could cycle)."""
    head, cues = MINI.read_text(encoding="utf-8").split("cues:\n")
    variants = "".join(f"  v{n}:\n    name: 大師則爲之洗\n    cite: {{page: 4-22a, quote: 大師則爲之洗}}\n"
                       for n in range(count))
    actions = "".join(f"""  - id: act-{n}
    section: 賓出
    action: 賓興
    who: [bin]
    duration: 10s
    variant: v{n}
    start: {{after: {f'act-{n - 1}' if n else 'bin-xing'}}}
    cite: {{page: 4-45b, quote: 賓出至于階}}
""" for n in range(count))
    head = head.replace("variants:\n", "variants:\n" + variants)
    return head + "cues:\n" + cues.replace("  - id: bin-chu\n", actions + "  - id: bin-chu\n")


def read_path(path: Path, repertoire: Repertoire) -> object:
    """The baseline: the sheet's YAML read, its schema and references checked."""
    return read_cuesheet(load(path), repertoire)


def best(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The best CPU and wall-clock seconds of *repeat* runs of *action*."""
    cpu, wall = [], []
    for _ in range(repeat):
        c, w = time.process_time(), time.perf_counter()
        action()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return min(cpu), min(wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--counts", type=int, nargs="*", default=list(COUNTS))
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: expected at least 1")
    repertoire = load_repertoire()
    results = []
    with tempfile.TemporaryDirectory() as folder:
        for count in args.counts:
            path = Path(folder) / f"v{count}.yaml"
            path.write_text(sheet_with_variants(count), encoding="utf-8")
            timed = {"read": best(partial(read_path, path, repertoire), args.repeat),
                     "load": best(partial(yuesheng.load, path, repertoire=repertoire), args.repeat),
                     "validate": best(partial(check_cuesheet, path, repertoire), args.repeat)}
            base = timed["read"][0]
            for what, (cpu, wall) in timed.items():
                print(f"{count:>5} variants  {what:<9} {cpu:8.3f} s CPU  {wall:8.3f} s wall  "
                      f"{cpu / count * 1000:7.2f} ms a variant")
            results += [f"RESULT variants_{count}_{what}_s={cpu:.3f} ({cpu / base:.1f}x baseline read)"
                        for what, (cpu, _) in timed.items() if what != "read"]
            results.append(f"RESULT variants_{count}_read_baseline_s={base:.3f}")
    print("\n".join(results))


if __name__ == "__main__":
    main()
