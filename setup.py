"""The build step that ships the shipped rites' built data with the package (the rest of the build is pyproject.toml).

When the package is built (a wheel, ``pip install .``, or an editable install, ``pip install -e .``), each shipped
rite (``cues/*.yaml``) is run through the commands a newcomer runs first (``validate``, ``timeline``, ``sheet`` and
``plan``) with an empty cache folder of the build's own, by the package as it is built, and the entries those runs
kept are copied into the package as ``yuesheng/built/FOLDER/NAME`` (``caches.built``): the routes and each action's
duration on the ground, the page's plates, transport and font, the parsed YAML and texts. They are data (checked
JSON and CSS, the cache's own format), named by the same key as the user's cache (the bytes of every input, the
package's files, the options), so a run reads one only for the very inputs it was made from; an edited cue sheet,
hall or blocking, or other code, is another key and builds as before. An entry that names a file of the build (the
staged rite, whose problems carry their paths) is not shipped.

A wheel's data is made in its build folder, by the package copied there; an editable install's in the checkout
(``yuesheng/built/``, ignored by git), by the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUILT = "built"  # yuesheng.caches.BUILT
COMMANDS = (("validate", "{rite}"), ("timeline", "{rite}", "-o", "{out}/{rite}.txt"),
            ("sheet", "{rite}", "-o", "{out}/{rite}.html"), ("plan", "{rite}", "-o", "{out}/{rite}.json"))
NOT_SHIPPED = (".rite.json",)  # the staged rite names the build's files
TIMEOUT = 600  # seconds one command may take (大射's slowest, validate, takes a few on a loaded machine)


def rites(cues: Path) -> list[str]:
    """The shipped rites: the ids of the cue sheets in *cues*."""
    return sorted(p.stem for p in cues.glob("*.yaml"))


def build_data(importable: Path, package: Path, rite_ids: list[str]) -> int:
    """Run each of *rite_ids* through ``COMMANDS`` with yuesheng imported from *importable* (whose package folder is
    *package*) and an empty cache, and copy what they kept into ``PACKAGE/built``; how many entries."""
    target = package / BUILT
    shutil.rmtree(target, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="yuesheng-built-") as folder:
        env = {k: v for k, v in os.environ.items() if k not in ("YUESHENG_NO_CACHE", "PYTHONPYCACHEPREFIX")}
        env |= {"XDG_CACHE_HOME": folder, "PYTHONDONTWRITEBYTECODE": "1", "YUESHENG_NO_SHIPPED": "1",
                "PYTHONPATH": os.pathsep.join([str(importable), *filter(None, [os.environ.get("PYTHONPATH")])])}
        for rite in rite_ids:
            for command in COMMANDS:
                argv = [a.format(rite=rite, out=folder) for a in command]
                try:
                    done = subprocess.run([sys.executable, "-m", "yuesheng", *argv], env=env, cwd=folder,
                                          capture_output=True, text=True, check=False, timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    raise SystemExit(f"building yuesheng's shipped data: yuesheng {' '.join(argv)}: still running "
                                     f"after {TIMEOUT} s, stopped") from None
                if done.returncode != 0:
                    raise SystemExit(f"building yuesheng's shipped data: yuesheng {' '.join(argv)}: exit "
                                     f"{done.returncode}\n{done.stderr}")
        return copy_entries(Path(folder) / "yuesheng", target, [str(importable), folder])


def copy_entries(kept: Path, target: Path, private: list[str]) -> int:
    """Copy each cache folder's entries from *kept* into *target* (but those that name one of the *private* paths,
    and the staged rites); how many."""
    count = 0
    for entry in sorted(kept.glob("*/*")):
        data = entry.read_bytes()
        if entry.name.startswith(".") or entry.name.endswith(NOT_SHIPPED) or \
                any(p.encode() in data or p.encode("unicode_escape") in data for p in private):
            continue
        (target / entry.parent.name).mkdir(parents=True, exist_ok=True)
        (target / entry.parent.name / entry.name).write_bytes(data)
        count += 1
    return count


class BuildWithData(build_py):
    """``build_py``, then the shipped rites' data made by the package as built (``build_data``)."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install runs the checkout: its data goes there
            importable, package = ROOT, ROOT / "yuesheng"
        else:
            importable = Path(self.build_lib).resolve()
            package = importable / "yuesheng"
        count = build_data(importable, package, rites(ROOT / "cues"))
        print(f"yuesheng: {count} built entries shipped in {package / BUILT}")


if __name__ == "__main__":
    setup(cmdclass={"build_py": BuildWithData})
