"""Bounded work: every input that asked for unbounded time or memory is refused, naming the limit.

Each test runs its reproducer under a deadline (SIGALRM), so a hang fails instead of blocking.
The scaling itself is measured in benchmarks/render.py, not here.
"""

from __future__ import annotations

import csv
import io
import re
import tracemalloc
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest

import yuesheng
from yuesheng import build, limits
from yuesheng.cuesheet import MusicKind, read_cuesheet, variant_configurations
from yuesheng.errors import InvalidInputError, LimitError
from yuesheng.music.repertoire import data_dir
from yuesheng.timeline import Options, measure, ticks
from yuesheng.yamlload import load

from hang import time_limit

DATA = Path(__file__).parent / "data"
MINI = (DATA / "mini_xiangyin.yaml").read_text(encoding="utf-8")
DEADLINE = 60  # seconds: generous for a loaded machine; each reproducer takes well under 5 s here


def deadline(seconds: int = DEADLINE):
    """Fail (TimeoutError) instead of hanging."""
    return time_limit(seconds)


def _write(tmp_path: Path, text: str, name: str = "rite.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _validate(run, path: Path) -> tuple[int, str]:
    """Exit code and report of ``validate`` (on stdout today; issue 13 §4 may move errors to stderr)."""
    code, out, err = run("validate", str(path))
    return code, out + err


def _place(path: Path, needle: str) -> str:
    """``file:line:col`` of the first value *needle* in *path* (col of its first character)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if needle in line:
            return f"{path}:{number}:{line.index(needle) + 1}"
    raise AssertionError(f"{needle!r} not in {path}")


def _held_jinzou(count: int) -> str:
    """The mini sheet with *count* 金奏 cues held from 賓興 until 賓出, ten hours later (the 2.9 GB sheet)."""
    head, cues = MINI.split("cues:\n")
    held = "".join(f"""  - id: jin-{n}
    section: 賓出
    music: 金奏
    start: {{with: bin-xing}}
    end: {{at: bin-chu}}
    pieces:
      - {{piece: gaixia}}
    performers: [guzhe]
    instruments: [gu]
    cite: {{page: 4-45b, quote: 陔作}}
""" for n in range(count))
    return head + "cues:\n" + cues.replace("""  - id: bin-chu
    section: 賓出
    action: 賓出""", held + """  - id: deng
    section: 賓出
    action: 賓出
    who: [bin]
    duration: 10h
    start: {after: bin-xing}
    cite: {page: 4-45b, quote: 賓出至于階}
  - id: bin-chu
    section: 賓出
    start: {after: deng}
    action: 賓出""")


# -- 1. a hang: music held until an action, of a piece with no notes --------------------------------------------


def test_held_music_without_notes_ends_at_its_action(run, tmp_path):
    scores = tmp_path / "scores"
    scores.mkdir()
    _write(scores, "id: gaixia\ntitle: 陔夏\nprovenance: lost\nlost: {cite: 儀禮集釋 10-32b, quote: 其篇今亡}\n",
           "gaixia.yaml")
    sheet = _write(tmp_path, MINI.replace("""  - id: bin-chu
    section: 賓出
    action: 賓出""", """  - id: bin-chu
    section: 賓出
    start: {after: bin-xing, delay: 1min}
    action: 賓出"""))
    with deadline():
        code, out, err = run("timeline", str(sheet), "--scores", str(scores), "--format", "csv")
    assert code == 0, err
    rows = {row["cue"]: row for row in csv.DictReader(io.StringIO(out))}
    assert (rows["gai"]["start_s"], rows["gai"]["duration_s"]) == ("1712.000", "58.000")  # silent 賓興+2 s → 賓出
    assert rows["bin-chu"]["start_s"] == "1770.000"


# -- 2. bounds: 終, syllable, held cues, 節, hours ---------------------------------------------------------------


def test_a_million_zhong_is_invalid_in_validate_and_timeline(run, tmp_path):
    sheet = _write(tmp_path, MINI.replace("      - {piece: luming}", "      - {piece: luming, zhong: 1000000}"))
    with deadline():
        code, err = _validate(run, sheet)
    assert code == 1
    expected = (f"{_place(sheet, '1000000')}: cues[1].pieces[0].zhong: zhong 1,000,000, beyond the limit of "
                "終 of one piece in one cue (at most 100)")
    assert expected in err and "error(s), 0 warning(s)" in err and "[limits]" in err
    with deadline():
        code, out, err = run("timeline", str(sheet))
    assert code == 1 and expected in err and not out


def test_a_syllable_of_a_microsecond_is_refused_before_building(run):
    with deadline():
        code, out, err = run("timeline", "yanli", "--syllable", "0.001ms")
    assert (code, out) == (1, "")
    assert err == "error: --syllable 1e-06s, beyond the limit of the shortest syllable (at least 0.05s)\n"


def test_a_syllable_below_the_limit_in_the_sheet_is_invalid(run, tmp_path):
    sheet = _write(tmp_path, MINI.replace("  syllable: 1.5s", "  syllable: 10ms"))
    code, err = _validate(run, sheet)
    assert code == 1
    assert (f"{_place(sheet, '10ms')}: defaults.syllable: syllable 0.01s, beyond the limit of the shortest "
            "syllable (at least 0.05s)") in err


@pytest.mark.slow  # builds a 3,000-cue sheet and validates it
def test_three_thousand_held_jinzou_cues_are_refused_by_validate_and_timeline(run, tmp_path):
    sheet = _write(tmp_path, _held_jinzou(3000))
    with deadline():
        code, err = _validate(run, sheet)
    assert code == 1
    line = re.search(r"^(\S+):(\d+):(\d+): cues\[10\]: the timeline would hold ([\d,]+) events \(([\d,]+) in cue "
                     r"jin-0, with [\d,]+ phrase marks of held music\), beyond the limit of events in a timeline "
                     r"\(at most 3,000,000\) \[limits\]$", err, re.M)
    assert line and line[1] == str(sheet) and int(line[4].replace(",", "")) > 3_000_000
    assert f"{sheet}:{line[2]}:{line[3]}" == _place(sheet, "id: jin-0")
    with deadline():
        code, out, err = run("render", str(sheet), "-o", str(tmp_path / "x.mid"))
    assert code == 1 and "beyond the limit of events in a timeline" in err
    assert not (tmp_path / "x.mid").exists()


def test_the_build_refuses_before_it_allocates(repertoire, tmp_path):
    doc = load(_write(tmp_path, _held_jinzou(300)))
    sheet, _ = read_cuesheet(doc, repertoire)  # read, not validated: the build must defend itself
    assert sheet is not None
    tracemalloc.start()
    try:
        with deadline(), pytest.raises(InvalidInputError, match=r"beyond the limit of events in a timeline"):
            build(sheet)  # refused at the cue that would make them, as the commands give it
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20  # the timeline would be over 70 million events: gigabytes


def test_a_reading_of_a_hundred_thousand_jie_is_invalid(run, tmp_path):
    text = (data_dir("cues") / "dashe.yaml").read_text(encoding="utf-8")
    assert "      '5':\n" in text
    sheet = _write(tmp_path, text.replace("      '5':\n", "      '100000':\n"))
    with deadline():
        code, err = _validate(run, sheet)
    assert code == 1
    assert (f"{_place(sheet, chr(39) + '100000' + chr(39))}: readings.lishou-jie.options.100000: 節 100,000, "
            "beyond the limit of 節 of a round with music (at most 12)") in err
    with deadline():
        code, _, err = run("timeline", str(sheet), "--reading", "lishou-jie=100000")
    assert code == 1 and "beyond the limit of 節 of a round with music (at most 12)" in err


def test_the_build_refuses_too_many_jie_from_a_reading(repertoire):
    sheet = yuesheng.load(data_dir("cues") / "dashe.yaml", repertoire=repertoire)
    wide = replace(sheet.readings["lishou-jie"], options=sheet.readings["lishou-jie"].options + ("13",))
    sheet = replace(sheet, readings={**sheet.readings, "lishou-jie": wide})  # built in code: never validated
    with deadline(), pytest.raises(LimitError, match=r"節 13, beyond the limit of 節 of a round with music"):
        build(sheet, Options(readings={"lishou-jie": "13"}))


def test_one_duration_beyond_the_rite_limit_is_invalid(run, tmp_path):
    sheet = _write(tmp_path, MINI.replace("    duration: 2min\n", "    duration: 49h\n"))
    code, err = _validate(run, sheet)
    assert code == 1
    assert (f"{_place(sheet, '49h')}: cues[2].duration: duration 49h, beyond the limit of the length of a rite "
            "(and of any one duration in it) (at most 48h)") in err


def test_a_rite_longer_than_the_limit_is_invalid_at_the_cue_that_ends_last(run, tmp_path):
    long = MINI.replace("    duration: 1min\n    cite: {page: 4-45b, quote: 賓出至于階}",
                        "    duration: 47h\n    cite: {page: 4-45b, quote: 賓出至于階}")
    sheet = _write(tmp_path, long.replace("    duration: 2min\n", "    duration: 2h\n"))
    code, err = _validate(run, sheet)
    assert code == 1
    assert re.search(r":\d+:\d+: cues\[\d+\]: the rite would last 49.\d+h \(cue bin-chu ends last\), beyond the "
                     r"limit of the length of a rite .* \(at most 48h\) \[limits\]$", err, re.M), err
    code, _, err = run("render", str(sheet), "-o", str(tmp_path / "long.mid"))
    assert code == 1 and "the rite would last 49." in err


# -- the measure is exact, and the shipped rites are far inside the limits ---------------------------------------


def _assert_measure_is_exact(sheet, options: Options) -> None:
    production = yuesheng.produce(sheet, options)  # measured on the same ground as built
    size, timeline = measure(sheet, options, production.ground), production.timeline
    assert size.events == len(timeline.events)
    assert size.marks == sum(len(hold.phrase_ticks) for hold in timeline.holds.values())
    assert ticks(size.end) == max(t.end_tick for t in timeline.cues)
    assert not size.problems()


@pytest.mark.parametrize("rite, options", [
    ("xiangyinjiu", Options(readings={"heyue": "li-rugui"})),  # the 合 pair together
    ("xiangshe", Options(syllable=Fraction(7, 3))),  # 射節 and held music off the tick grid
    # 金奏, held music repeated often
    ("yanli", Options(frozenset({"yan-she"}), syllable=Fraction(limits.SYLLABLE.value))),
    ("dashe", Options(readings={"wusuanyue": "jing-ci"})),
])
def test_measure_counts_exactly_the_events_a_build_makes(repertoire, rite, options):
    """A few configurations end to end; the playing rules themselves are checked in test_instruments."""
    _assert_measure_is_exact(yuesheng.load(data_dir("cues") / f"{rite}.yaml", repertoire=repertoire), options)


@pytest.mark.slow
@pytest.mark.parametrize("rite", ["xiangyinjiu", "xiangshe", "yanli", "dashe"])
def test_measure_is_exact_for_every_variant_configuration(repertoire, rite):
    """Every variant configuration at three tempi (about a minute: slow, so a quick run leaves it out)."""
    sheet = yuesheng.load(data_dir("cues") / f"{rite}.yaml", repertoire=repertoire)
    for variants in variant_configurations(sheet):
        for syllable in (None, Fraction(limits.SYLLABLE.value), Fraction(7, 3)):
            _assert_measure_is_exact(sheet, Options(variants, syllable=syllable))


def test_every_limit_lives_in_one_module():
    names = {"ZHONG": 100, "JIE": 12, "RITE_SECONDS": 48 * 3600, "SYLLABLE": Fraction(1, 20), "EVENTS": 3_000_000}
    assert {n: getattr(limits, n).value for n in names} == names


# -- every value with a unit is measured: the archery's offsets too (issue 22 §4) ---------------------------------

MINI_SHE = (DATA / "mini_xiangshe.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize("old, new, needle, what", [
    ("offset_sd: 100ms", "offset_sd: 1000000h", "1000000h", "offset_sd 1e+06h"),
    ("offset_sd: 100ms", "offset_sd: 99999999999999999999999999h", "9999", "offset_sd over"),
    ("H+100ms", "H+99999999999s", "H+99999999999s", "arrow offset 2.778e+07h"),
    ("H-300ms", "H-99999999999s", "H-99999999999s", "arrow offset 2.778e+07h"),
    ("tolerance: 250ms", "tolerance: 49h", "49h", "tolerance 49h"),
])
def test_every_archery_time_is_measured_in_validate_and_every_build(run, tmp_path, old, new, needle, what):
    sheet = _write(tmp_path, MINI_SHE.replace(old, new))
    with deadline():
        code, err = _validate(run, sheet)
        assert code == 1
        assert f"{_place(sheet, needle)}: " in err and what in err and "(at most 48h) — " in err, err
        assert err.rstrip().endswith("[limits]"), err
        for command in (("render", str(sheet), "-o", str(tmp_path / "x.mid")),
                        ("sheet", str(sheet), "-o", str(tmp_path / "x.html")), ("console", str(sheet), "--port", "0")):
            code, out, err = run(*command)
            assert code == 1 and "beyond the limit of the length of a rite" in err and "Traceback" not in err, err
    assert not (tmp_path / "x.mid").exists() and not (tmp_path / "x.html").exists()


def test_a_hold_beyond_the_limit_is_refused_by_the_build(repertoire):
    sheet = yuesheng.load(data_dir("cues") / "xiangshe.yaml", repertoire=repertoire)
    called = next(c for c in sheet.cues if c.music is MusicKind.CHANGSHENG)
    sheet = replace(sheet, cues=tuple(replace(c, hold=Fraction(49 * 3600), hold_until="") if c is called else c
                                      for c in sheet.cues))  # built in code: never validated
    with deadline(), pytest.raises(LimitError, match=rf"cue {called.id} hold 49h, beyond the limit of the length"):
        build(sheet)


def test_a_release_that_falls_after_every_cue_is_measured(repertoire, tmp_path):
    """A release inside the offset limit still counts to the rite's length: the build measures every release."""
    sheet = yuesheng.load(_write(tmp_path, MINI_SHE.replace("H+100ms", "H+169000s")), repertoire=repertoire)
    size = measure(sheet)
    assert size.end > 169000
    timeline = build(sheet)
    assert ticks(size.end) >= max(e.start_tick + e.length_ticks for e in timeline.events)


# -- the anchors under many variants: at most quadratic (issue 22 §5; benchmarks/variants.py) -----------------------

def _many_variants(count: int) -> str:
    """The mini sheet with *count* variants, each switching on one action under the held 陔 (so in the span where
    anchors could cycle), one after the other."""
    head, cues = MINI.split("cues:\n")
    variants = "".join(f"  v{n}:\n    name: 大師則爲之洗\n    cite: {{page: 4-22a, quote: 大師則爲之洗}}\n"
                       for n in range(count))
    actions = "".join(f"  - id: act-{n}\n    section: 賓出\n    action: 賓興\n    who: [bin]\n    duration: 10s\n"
                      f"    variant: v{n}\n    start: {{after: {f'act-{n - 1}' if n else 'bin-xing'}}}\n"
                      f"    cite: {{page: 4-45b, quote: 賓出至于階}}\n" for n in range(count))
    return head.replace("variants:\n", "variants:\n" + variants) + "cues:\n" + \
        cues.replace("  - id: bin-chu\n", actions + "  - id: bin-chu\n")


def test_many_variants_are_checked_each_alone_not_in_every_pair(run, repertoire, tmp_path):
    from yuesheng.cuesheet.references import MAX_PAIRED_VARIANTS, cycle_classes

    path = _write(tmp_path, _many_variants(200))
    with deadline(20):
        sheet = yuesheng.load(path, repertoire=repertoire)
        classes = list(cycle_classes(sheet))
    assert len(sheet.variants) > MAX_PAIRED_VARIANTS
    # none, then each of the 200 alone (da-shi switches no cue under the 陔; not 20,101 classes with every pair)
    assert len(classes) == 200 + 1
    with deadline(30):
        assert run("validate", str(path))[0] == 0


# --- docs/limits.md lists every bound with its figure (issue 35) ----------------------------------------------------

def _figure(value: object) -> str:
    """A bound as docs/limits.md writes it: 3,000,000; 48 h; 30 min; 0.05 s; 4 GiB; 2–60."""
    if isinstance(value, limits.Limit):
        return _figure(value.value)
    if isinstance(value, tuple):
        return "–".join(map(_figure, value))
    if isinstance(value, Fraction):  # seconds
        for unit, size in (("h", 3600), ("min", 60)):
            if value >= size and value % size == 0:
                return f"{value // size} {unit}"
        return f"{float(value):g} s"
    assert isinstance(value, int)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20)):
        if value >= size and value % size == 0:
            return f"{value // size} {unit}"
    return f"{value:,}"


_FILE_BOUNDS = ("MAX_BYTES", "MAX_NODES", "MAX_DEPTH", "MAX_NUMBER_CHARS")  # yamlload's, in the table of the file


def test_limits_md_names_every_bound_with_its_figure():
    from yuesheng import yamlload

    bounds = {name: value for name, value in vars(limits).items() if name.isupper() and not name.startswith("_")}
    bounds |= {name: getattr(yamlload, name) for name in _FILE_BOUNDS}
    lines = (Path(__file__).parent.parent / "docs" / "limits.md").read_text(encoding="utf-8").splitlines()
    missing = [f"{name} ({_figure(value)})" for name, value in bounds.items()
               if not any(f"`{name}`" in line and _figure(value) in line for line in lines)]
    assert not missing, f"docs/limits.md has no line naming these with their figure: {', '.join(missing)}"


def _module_bounds() -> list[tuple[str, str, int | float]]:
    """(file, name, value) of every module-level ``MAX_…``, ``…_ENTRIES`` and ``HELD`` of the package with a number
    for its value (beyond ``limits.py`` and the YAML file's own, above)."""
    import ast
    import importlib

    root = Path(limits.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "limits.py":
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) else []
            for target in targets:
                name = target.id if isinstance(target, ast.Name) else ""
                bound = name.startswith("MAX_") or name.endswith("_ENTRIES") or name == "HELD"
                if bound and not (path.name == "yamlload.py" and name in _FILE_BOUNDS):
                    module = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
                    value = getattr(importlib.import_module(module), name)
                    if isinstance(value, int | float) and not isinstance(value, bool):
                        found.append((path.relative_to(root.parent).as_posix(), name, value))
    return found


def test_limits_md_names_every_modules_bound_with_its_figure():
    bounds = _module_bounds()
    assert len(bounds) > 30
    lines = (Path(__file__).parent.parent / "docs" / "limits.md").read_text(encoding="utf-8").splitlines()
    missing = []
    for file, name, value in bounds:
        figures = {f"{value:,g}" if isinstance(value, float) else f"{value:,}"}
        if isinstance(value, int):
            figures.add(_figure(value))
        if not any(f"`{file}`" in line and f"`{name}`" in line and any(f"| {f} |" in line for f in figures)
                   for line in lines):
            missing.append(f"{file} {name} ({' or '.join(sorted(figures))})")
    assert not missing, f"docs/limits.md has no line naming these with their figure: {', '.join(missing)}"
