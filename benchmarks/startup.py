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
5. ``plan``: the ground plan as JSON (every shipped rite has a blocking).

``--rite`` times the rite-wide commands on another rite than 大射儀.

yuesheng keeps what it can make again between runs (``$XDG_CACHE_HOME/yuesheng``: loaded YAML, routes, each
action's duration on the ground and the staged rite, the texts' pages, plates and fonts): a command is timed as a
user meets it after the first run, with the cache that run left (in a temporary folder of this benchmark's own).
``--first`` also times each command as the first run after installing, an empty cache folder for each run
(``NAME_first``, goal 0.5 s): what the package ships for its rites (``caches.built``, made when it is built) is
read, as an installed package reads it, where this checkout has it (``yuesheng/built/``: ``pip install -e .`` makes
it); ``--unshipped`` leaves it unread (``YUESHENG_NO_SHIPPED=1``), the first run of a rite the package does not ship.

``--edit`` times the edit loop (``edit_NAME``): the rite's cue sheet copied with its ``blocking/`` to a temporary
folder, warmed, then before each run one line of one cue changed (a ``duration:`` near the middle of the sheet, a new
value each time), as a director edits and runs again: ``timeline``, ``render`` and ``validate`` and ``sheet``
(goals 0.25, 0.25, 0.35 and 0.4 s).

Each is timed twice: wall-clock (what a user waits) and the CPU time of the child
process (user + system, from ``getrusage``), which moves less with the load of a
shared machine. Each command runs once untimed first, with byte-code caches written to a temporary
folder (``PYTHONPYCACHEPREFIX``) as an installed package has them, so that no run
pays for compiling. The tree measured is the checkout this script is in.

Goal on a quiet machine: each command under 0.25 s, ``validate dashe`` under 0.35 s.
Subprocess times move with the machine's load: the load average is printed before and
after. ``--instructions`` also counts the instructions each command executes under Valgrind (``cachegrind``
without its cache simulation; Debian's ``valgrind``), a figure that a shared machine's load does not move: run
once each after the timed runs, ``NAME_instructions`` in millions. Run ``python benchmarks/startup.py``; the last
lines are ``RESULT`` lines, with each command's ratio to the baseline ``python -c pass``.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINES = {"python_pass": ["-c", "pass"], "import_yuesheng": ["-c", "import yuesheng"]}
COMMANDS = {
    "timeline": ["timeline", "{rite}", "-o", "{out}/{stem}.txt"],
    "render": ["render", "{rite}", "-o", "{out}/{stem}.mid"],
    "sheet": ["sheet", "{rite}", "-o", "{out}/{stem}.html"],
    "source": ["source", "9-31b"],
    "score_list": ["score", "list"],
    "score_show": ["score", "show", "luming"],
    "score_check": ["score", "check", "luming"],
    "validate": ["validate", "{rite}"],
    "plan": ["plan", "{rite}", "-o", "{out}/plan.json"],
}
EDIT = ("timeline", "render", "validate", "sheet")  # the edit loop (--edit)
TARGETS = {"validate": 0.35, "edit_validate": 0.35, "edit_sheet": 0.4}
TARGET = 0.25
FIRST_TARGET = 0.5  # a first run after installing (issue 35), every command


def environment(folder: str) -> dict[str, str]:
    """This checkout first on the path, byte-code cached in *folder* (never in the tree), and yuesheng's caches
    (``$XDG_CACHE_HOME/yuesheng``) in *folder* too, as the run before left them."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["PYTHONPYCACHEPREFIX"] = str(Path(folder) / "pycache")
    env["XDG_CACHE_HOME"] = str(Path(folder) / "cache")
    return env


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def best_of(repeats: int, argv: list[str], env: dict[str, str], *, first: bool = False,
            prepare: Callable[[], None] | None = None) -> tuple[float, float]:
    """The fastest of *repeats* runs of ``python ARGV`` after one untimed run: (wall, CPU) seconds; exit 0 required.
    *first*: each run with an empty cache folder of its own, as the first run after installing; *prepare* is called
    before each run, untimed (``--edit``: one line of the sheet changed)."""
    wall = cpu = float("inf")
    for n in range(repeats + 1):
        if first:
            env = env | {"XDG_CACHE_HOME": tempfile.mkdtemp(dir=env["XDG_CACHE_HOME"])}
        if prepare is not None:
            prepare()
        start, start_cpu = time.perf_counter(), _cpu()
        done = subprocess.run([sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, timeout=120)
        elapsed, used = time.perf_counter() - start, _cpu() - start_cpu
        if done.returncode != 0:
            raise SystemExit(f"python {' '.join(argv)}: exit {done.returncode}\n{done.stderr.decode(errors='replace')}")
        if n:
            wall, cpu = min(wall, elapsed), min(cpu, used)
    return wall, cpu


def instructions(argv: list[str], env: dict[str, str]) -> float:
    """Millions of instructions ``python ARGV`` executes, counted by Valgrind's cachegrind (no cache simulation)."""
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           sys.executable, *argv], cwd=ROOT, env=env, capture_output=True, timeout=600)
    found = re.search(rb"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"valgrind python {' '.join(argv)}: exit {done.returncode}\n"
                         f"{done.stderr.decode(errors='replace')[-2000:]}")
    return int(found[1].replace(b",", b"")) / 1e6


class Editor:
    """A copy of a rite's cue sheet with its ``blocking/`` in *folder* (``rite/cues/RITE.yaml``), and one line of
    one cue changed each call: the ``duration:`` nearest the middle of the sheet, a new value every time."""

    def __init__(self, rite: str, folder: str) -> None:
        top = Path(folder, "rite")
        (top / "cues").mkdir(parents=True)
        shutil.copytree(ROOT / "blocking", top / "blocking")
        self.path = top / "cues" / f"{rite}.yaml"
        self.lines = (ROOT / "cues" / f"{rite}.yaml").read_text(encoding="utf-8").splitlines(keepends=True)
        self.path.write_text("".join(self.lines), encoding="utf-8")
        durations = [n for n, line in enumerate(self.lines) if re.fullmatch(r" {4}duration: \S+\n", line)]
        if not durations:
            raise SystemExit(f"{rite}: no cue with a duration: line to edit")
        self.line = min(durations, key=lambda n: abs(n - len(self.lines) // 2))
        self.edits = 0

    def __call__(self) -> None:
        self.edits += 1
        lines = list(self.lines)
        lines[self.line] = f"    duration: {60 + self.edits}s\n"
        self.path.write_text("".join(lines), encoding="utf-8")


def edit_loop(args: argparse.Namespace, env: dict[str, str], folder: str,
              counted: dict[str, float]) -> dict[str, tuple[float, float]]:
    """``edit_NAME``: each command of EDIT on a copy of the rite, warmed on it, then timed after one line changed
    (and, with ``--instructions``, counted after one more edit, in *counted*)."""
    editor = Editor(args.rite, folder)
    times = {}
    for name in EDIT:
        argv = ["-m", "yuesheng", *(a.format(out=folder, rite=editor.path, stem="edited") for a in COMMANDS[name])]
        best_of(1, argv, env)  # warm on the sheet as shipped
        times[f"edit_{name}"] = best_of(args.repeat, argv, env, prepare=editor)
        if args.instructions:
            editor()
            counted[f"edit_{name}"] = instructions(argv, env)
    return times


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="+", choices=list(COMMANDS), default=list(COMMANDS))
    parser.add_argument("--rite", default="dashe", help="the rite of timeline, render, sheet, validate and plan")
    parser.add_argument("--first", action="store_true", help="also time each command as the first run after "
                        "installing, with an empty cache (NAME_first)")
    parser.add_argument("--edit", action="store_true", help="also time the edit loop: timeline, render, validate and "
                        "sheet on a copy of the rite, each run after one line of one cue changed (edit_NAME)")
    parser.add_argument("--unshipped", action="store_true", help="read none of the data the package ships for its "
                        "rites (YUESHENG_NO_SHIPPED=1)")
    parser.add_argument("--instructions", action="store_true", help="also count each command's instructions under "
                        "Valgrind (NAME_instructions, millions), which the machine's load does not move")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat}: expected at least 1")
    if args.instructions and shutil.which("valgrind") is None:
        parser.error("--instructions needs valgrind (apt-get install valgrind)")
    print(f"before: {load()}")
    unshipped = args.unshipped or os.environ.get("YUESHENG_NO_SHIPPED", "") not in ("", "0")
    shipped = "unread (--unshipped, YUESHENG_NO_SHIPPED)" if unshipped else \
        ("read" if (ROOT / "yuesheng" / "built").is_dir() else "none in this checkout (pip install -e . makes it)")
    print(f"shipped data: {shipped}")
    with tempfile.TemporaryDirectory(prefix="yuesheng-startup-") as folder:
        env = environment(folder) | ({"YUESHENG_NO_SHIPPED": "1"} if unshipped else {})
        Path(env["XDG_CACHE_HOME"], "first").mkdir(parents=True)
        times = {name: best_of(args.repeat, argv, env) for name, argv in BASELINES.items()}
        counted = {name: instructions(argv, env) for name, argv in BASELINES.items()} if args.instructions else {}
        for name in args.only:
            argv = ["-m", "yuesheng", *(a.format(out=folder, rite=args.rite, stem=args.rite) for a in COMMANDS[name])]
            times[name] = best_of(args.repeat, argv, env)
            if args.instructions:
                counted[name] = instructions(argv, env)
            if args.first:
                first = env | {"XDG_CACHE_HOME": str(Path(env["XDG_CACHE_HOME"], "first"))}
                times[f"{name}_first"] = best_of(min(args.repeat, 3), argv, first, first=True)
        if args.edit:
            times |= edit_loop(args, env, folder, counted)
    print(f"after:  {load()}\n")
    base, base_cpu = times["python_pass"]
    print(f"{'command':<18} {'wall':>8} {'× python':>9} {'CPU':>8} {'× python':>9} {'target':>8}")
    for name, (wall, cpu) in times.items():
        goal = FIRST_TARGET if name.endswith("_first") else TARGETS.get(name, TARGET)
        target = "" if name in BASELINES else f"{goal:.2f}s"
        print(f"{name:<18} {wall:>7.3f}s {wall / base:>8.1f}× {cpu:>7.3f}s {cpu / base_cpu:>8.1f}× {target:>8}")
    if counted:
        print(f"\n{'command':<16} {'instructions':>13} {'× python':>9}")
        for name, count in counted.items():
            print(f"{name:<16} {count:>12.0f}M {count / counted['python_pass']:>8.1f}×")
    print()
    for name, (wall, cpu) in times.items():
        print(f"RESULT {name}={wall:.3f}")
        print(f"RESULT {name}_cpu={cpu:.3f}")
    for name, count in counted.items():
        print(f"RESULT {name}_instructions={count:.0f}")
    for name, (wall, _) in times.items():
        if name != "python_pass":
            print(f"RESULT {name}_vs_python_pass={wall / base:.2f}")
    for name, count in counted.items():
        if name != "python_pass":
            print(f"RESULT {name}_instructions_vs_python_pass={count / counted['python_pass']:.2f}")


if __name__ == "__main__":
    main()
