"""The one build path (``yuesheng.production``): the public API as the README shows it, the Timeline a value, and every
command, the console, the tests and the benchmarks building a rite through it."""

from __future__ import annotations

import ast
import gc
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import yuesheng
from yuesheng.cli import main
from yuesheng.cuesheet import CueSheet
from yuesheng.errors import InvalidInputError, UnknownNameError
from yuesheng.staging.ground import Ground
from yuesheng.staging.rite import StagedRite
from yuesheng.timeline import Timeline
from yuesheng.yamlload import Document

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "yuesheng"
# The functions that make a rite; only the production (and the modules that define them) may call them.
MAKERS = {"load_cuesheet", "build_located", "build_timeline", "ground_of"}
HOMES = {"production.py", "check/validate.py", "timeline/builder.py", "staging/ground.py"}


def test_the_readme_example_writes_the_midi_the_command_writes(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    code = readme.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 5
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True)
    assert main(["render", "xiangshe", "-o", str(tmp_path / "cli.mid")]) == 0
    assert (tmp_path / "xiangshe.mid").read_bytes() == (tmp_path / "cli.mid").read_bytes()


def test_build_is_the_timeline_of_produce_and_takes_a_name_or_a_sheet(repertoire) -> None:
    sheet = yuesheng.load("xiangshe", repertoire=repertoire)
    options = yuesheng.Options(seed=3)
    production = yuesheng.produce(sheet, options)
    assert production.timeline == yuesheng.build(sheet, options) == yuesheng.build("xiangshe", options)
    assert isinstance(production.ground, Ground) and isinstance(production.staged, StagedRite)
    assert production.staged is production.staged  # staged once


def test_a_rite_without_blocking_has_no_ground_and_no_staging(repertoire) -> None:
    production = yuesheng.produce(yuesheng.load(ROOT / "tests" / "data" / "golden.yaml", repertoire=repertoire))
    assert production.ground is None and production.staged is None


def test_load_checks_the_rules_of_the_programme_asked_for_and_names_a_wrong_variant(repertoire) -> None:
    with pytest.raises(InvalidInputError):
        yuesheng.load(ROOT / "tests" / "data" / "no-such-file.yaml")
    sheet = yuesheng.load("yanli", repertoire=repertoire, variants=["yi-yue-na-bin"])
    with pytest.raises(UnknownNameError, match="nothing-of-the-sort"):
        yuesheng.produce(sheet, yuesheng.Options(variants=frozenset({"nothing-of-the-sort"})))


def _reachable(root: object) -> set[type]:
    """The types of every object reachable from *root* (the collector's referents)."""
    seen, kinds, todo = set(), set(), [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        kinds.add(type(obj))
        todo.extend(gc.get_referents(obj))
    return kinds


@pytest.mark.parametrize("rite", ["xiangshe", "dashe"])
def test_the_timeline_is_a_value_with_no_sheet_document_ground_or_staging_behind_it(rite: str, repertoire) -> None:
    production = yuesheng.produce(yuesheng.load(rite, repertoire=repertoire))
    assert production.staged is not None
    kinds = _reachable(production.timeline)
    assert not kinds & {CueSheet, Document, Ground, StagedRite, Path, type(Path())}
    assert not hasattr(production.timeline, "staging") and not hasattr(production.timeline, "ground")


def test_the_builder_reads_no_file(tmp_path: Path) -> None:
    """An audit hook refuses every open once the sheet and its ground are loaded: the Timeline is built all the same,
    equal to the one built with files open."""
    code = textwrap.dedent("""
        import sys
        import yuesheng
        from yuesheng.staging.ground import ground_of
        from yuesheng.timeline import build_timeline
        sheet = yuesheng.load("dashe")
        options = yuesheng.Options()
        ground, notice = ground_of(sheet, *sheet.programme(options.variants, options.readings))
        expected = yuesheng.build(sheet, options)
        import yuesheng.timeline.builder, yuesheng.timeline.music, yuesheng.timeline.shooting  # imports read files
        def refuse(event, args):
            if event == "open":
                raise PermissionError(f"the builder opened {args[0]!r}")
        sys.addaudithook(refuse)
        assert build_timeline(sheet, options, ground, notice) == expected
        print("built", len(expected.events))
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("built ")


def _callers(name: str) -> list[str]:
    """Where in the package (file:line) a function called *name* is called."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called == name:
                    found.append(f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno}")
    return found


@pytest.mark.parametrize("name", sorted(MAKERS))
def test_only_the_production_makes_a_rite(name: str) -> None:
    """Every command, the console and the rest build through ``yuesheng.production``: no other module of the package
    loads a cue sheet, finds a ground or builds a Timeline by itself (validate's own checks excepted: they size every
    variant, which is not a build)."""
    outside = [where for where in _callers(name) if where.split(":")[0] not in HOMES]
    assert outside == []


@pytest.mark.parametrize("folder", ["tests", "benchmarks"])
def test_tests_and_benchmarks_build_through_the_public_api(folder: str) -> None:
    used = [f"{path.name}:{n}" for path in sorted((ROOT / folder).glob("*.py")) if path.name != "test_production.py"
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if "load_cuesheet(" in line or "build_timeline(" in line]
    assert used == []


def test_timeline_is_importable_without_the_staging_layer() -> None:
    code = ("import sys; import yuesheng.timeline.model, yuesheng.timeline.builder; "
            "print(sorted(m for m in sys.modules if m.startswith('yuesheng.staging')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out == "[]\n"


def test_a_timeline_equals_itself_rebuilt(repertoire) -> None:
    sheet = yuesheng.load("xiangyinjiu", repertoire=repertoire)
    first, second = yuesheng.build(sheet), yuesheng.build(sheet)
    assert first == second and first is not second
    assert isinstance(first, Timeline)
