"""How fast a command answers from a cold process, beside bare Python and ``import yuesheng``.

Measures, with ``time.perf_counter`` around a subprocess (best of ``--repeat``, 5 by
default), ``python -m yuesheng ...`` on 大射儀 (``dashe``, the longest rite) and its
pieces and pages:

1. the baselines, measured in the same run: ``python -c pass`` (the interpreter's own
   start-up) and ``python -c "import yuesheng"`` (the package's public API);
2. the commands that build the rite: ``timeline``, ``render`` (MIDI) and ``sheet``
   (the director's page), each to a file in a temporary folder;
3. the commands that read a piece or a page: ``source 9-31b`` (大射's 許諾以宫),
   ``score list``, ``score show luming`` and ``score check luming`` (升歌鹿鳴);
4. ``validate dashe``: every check, the quotes against the shipped texts and the size
   and anchors under every combination of variants included, and the staging rule (the
   blocking staged and every walk routed) for a rite with a blocking;
5. ``plan``: the ground plan as JSON (only for a rite with a blocking: ``--rite xiangshe``).

``--rite`` times the rite-wide commands on another rite than 大射儀.

Each is timed twice: wall-clock (what a user waits) and the CPU time of the child
process (user + system, from ``getrusage``), which moves less with the load of a
shared machine. Each command runs once untimed first, with byte-code caches written to a temporary
folder (``PYTHONPYCACHEPREFIX``) as an installed package has them, so that no run
pays for compiling. The tree measured is the checkout this script is in.

Goal on a quiet machine: each command under 0.25 s, ``validate dashe`` under 0.35 s.
Subprocess times move with the machine's load: the load average is printed before and
after. Run ``python benchmarks/startup.py``; the last lines are ``RESULT`` lines, with
each command's ratio to the baseline ``python -c pass``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINES = {"python_pass": ["-c", "pass"], "import_yuesheng": ["-c", "import yuesheng"]}
COMMANDS = {
    "timeline": ["timeline", "{rite}", "-o", "{out}/{rite}.txt"],
    "render": ["render", "{rite}", "-o", "{out}/{rite}.mid"],
    "sheet": ["sheet", "{rite}", "-o", "{out}/{rite}.html"],
    "source": ["source", "9-31b"],
    "score_list": ["score", "list"],
    "score_show": ["score", "show", "luming"],
    "score_check": ["score", "check", "luming"],
    "validate": ["validate", "{rite}"],
    "plan": ["plan", "{rite}", "-o", "{out}/plan.json"],
}
TARGETS = {"validate": 0.35}
TARGET = 0.25


def environment(cache: str) -> dict[str, str]:
    """This checkout first on the path, byte-code cached in *cache* (never in the tree)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["PYTHONPYCACHEPREFIX"] = cache
    return env


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def best_of(repeats: int, argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The fastest of *repeats* runs of ``python ARGV`` after one untimed run: (wall, CPU) seconds; exit 0 required."""
    wall = cpu = float("inf")
    for n in range(repeats + 1):
        start, start_cpu = time.perf_counter(), _cpu()
        done = subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, timeout=120)
        elapsed, used = time.perf_counter() - start, _cpu() - start_cpu
        if done.returncode != 0:
            raise SystemExit(f"python {' '.join(argv)}: exit {done.returncode}\n{done.stderr.decode(errors='replace')}")
        if n:
            wall, cpu = min(wall, elapsed), min(cpu, used)
    return wall, cpu


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="+", choices=list(COMMANDS), default=[c for c in COMMANDS if c != "plan"])
    parser.add_argument("--rite", default="dashe", help="the rite of timeline, render, sheet, validate and plan")
    args = parser.parse_args()
    print(f"before: {load()}")
    with tempfile.TemporaryDirectory(prefix="yuesheng-startup-") as folder:
        env = environment(str(Path(folder) / "pycache"))
        times = {name: best_of(args.repeat, argv, env) for name, argv in BASELINES.items()}
        for name in args.only:
            argv = [a.format(out=folder, rite=args.rite) for a in COMMANDS[name]]
            times[name] = best_of(args.repeat, ["-m", "yuesheng", *argv], env)
    print(f"after:  {load()}\n")
    base, base_cpu = times["python_pass"]
    print(f"{'command':<16} {'wall':>8} {'× python':>9} {'CPU':>8} {'× python':>9} {'target':>8}")
    for name, (wall, cpu) in times.items():
        target = "" if name in BASELINES else f"{TARGETS.get(name, TARGET):.2f}s"
        print(f"{name:<16} {wall:>7.3f}s {wall / base:>8.1f}× {cpu:>7.3f}s {cpu / base_cpu:>8.1f}× {target:>8}")
    print()
    for name, (wall, cpu) in times.items():
        print(f"RESULT {name}={wall:.3f}")
        print(f"RESULT {name}_cpu={cpu:.3f}")
    for name, (wall, _) in times.items():
        if name != "python_pass":
            print(f"RESULT {name}_vs_python_pass={wall / base:.2f}")


if __name__ == "__main__":
    main()
