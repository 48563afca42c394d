"""Builds kept between runs (``check.builds``): read back only for the same files, options, ground and code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache(monkeypatch, tmp_path: Path) -> Path:
    """A cache folder of this test's own; its kept builds' folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "yuesheng" / "builds"


def _rite(tmp_path: Path, rite: str) -> Path:
    """The shipped cue sheet of *rite* with its blocking and hall, copied as ``cues/`` beside ``blocking/``."""
    (tmp_path / "cues").mkdir()
    (tmp_path / "blocking").mkdir()
    shutil.copy(ROOT / "cues" / f"{rite}.yaml", tmp_path / "cues")
    for name in (f"{rite}.yaml", f"{rite}.hall.yaml"):
        shutil.copy(ROOT / "blocking" / name, tmp_path / "blocking")
    return tmp_path / "cues" / f"{rite}.yaml"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _timeline(run, sheet: Path, *options: str) -> dict[str, Any]:
    code, out, err = run("timeline", str(sheet), "--format", "json", *options)
    assert code == 0, err
    timeline: dict[str, Any] = json.loads(out)
    return timeline


def test_a_second_run_reads_the_build_back_without_loading_or_building_and_gives_the_same_bytes(tmp_path):
    probe = ("import sys\n"
             "sys.argv = ['yuesheng'] + sys.argv[1:]\n"
             "from yuesheng.cli import main\n"
             "code = main()\n"
             "print(sorted(m for m in sys.modules if m in ('yuesheng.timeline.builder', 'yuesheng.cuesheet.reader', "
             "'yuesheng.check.rules', 'yuesheng.music.repertoire')), file=sys.stderr)\n"
             "sys.exit(code)\n")
    env = {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    seen = []
    for n in (1, 2):
        done = subprocess.run([sys.executable, "-c", probe, "render", "dashe", "-o", str(tmp_path / f"{n}.mid")],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        seen.append(done.stderr.splitlines()[-1])
    assert seen[0] == "['yuesheng.check.rules', 'yuesheng.cuesheet.reader', 'yuesheng.music.repertoire', " \
                      "'yuesheng.timeline.builder']"
    assert seen[1] == "['yuesheng.music.repertoire']"  # the command's own module imports it; nothing is loaded
    assert (tmp_path / "1.mid").read_bytes() == (tmp_path / "2.mid").read_bytes()
    assert len(list((tmp_path / "cache" / "yuesheng" / "builds").iterdir())) == 1


def test_a_changed_cue_sheet_option_or_score_is_built_again(run, cache, tmp_path):
    sheet = _rite(tmp_path, "xiangyinjiu")
    first = _timeline(run, sheet)
    assert _timeline(run, sheet) == first and len(list(cache.iterdir())) == 1
    _edit(sheet, "syllable: 1.5s", "syllable: 1.2s")
    assert _timeline(run, sheet)["duration_s"] < first["duration_s"]
    assert _timeline(run, sheet, "--syllable", "2s")["duration_s"] > first["duration_s"]
    scores = tmp_path / "scores"
    scores.mkdir()
    shutil.copy(ROOT / "scores" / "luming.yaml", scores)
    with_scores = _timeline(run, sheet, "--scores", str(scores))
    _edit(scores / "luming.yaml", "title: 鹿鳴", "title: 鹿鳴之什")
    markers = [e["text"] for e in _timeline(run, sheet, "--scores", str(scores))["events"] if e["kind"] == "marker"]
    assert any("鹿鳴之什" in m for m in markers)
    assert with_scores != _timeline(run, sheet, "--scores", str(scores))
    assert len(list(cache.iterdir())) == 5


def test_a_changed_blocking_is_staged_again_though_the_cue_sheet_is_the_same(run, cache, tmp_path):
    sheet = _rite(tmp_path, "xiangshe")
    first = {c["cue"]: c for c in _timeline(run, sheet)["cues"]}
    _edit(tmp_path / "blocking" / "xiangshe.yaml", "gestures: [再拜, 荅再拜, 揖]", "gestures: [再拜, 荅再拜]")
    again = {c["cue"]: c for c in _timeline(run, sheet)["cues"]}
    assert again["ying-bin"]["duration_s"] == pytest.approx(first["ying-bin"]["duration_s"] - 3)  # 揖 is 3 s
    (tmp_path / "blocking" / "xiangshe.yaml").unlink()
    (tmp_path / "blocking" / "xiangshe.hall.yaml").unlink()
    without = {c["cue"]: c for c in _timeline(run, sheet)["cues"]}
    assert without["ying-bin"]["duration_s"] != again["ying-bin"]["duration_s"]  # the cue sheet's estimate again
    assert not without["ying-bin"].get("blocking") and again["ying-bin"]["blocking"]


def test_a_damaged_entry_is_built_again_and_a_failed_build_is_not_kept(run, cache, tmp_path):
    sheet = _rite(tmp_path, "xiangyinjiu")
    first = _timeline(run, sheet)
    (entry,) = cache.iterdir()
    for damage in (b"", b"\x80\x05garbage", entry.read_bytes()[:1000]):
        entry.write_bytes(damage)
        assert _timeline(run, sheet) == first
    _edit(sheet, "syllable: 1.5s", "syllable: 1.5 s")
    code, _, err = run("timeline", str(sheet))
    assert code == 1 and "syllable" in err
    assert len(list(cache.iterdir())) == 1


def test_a_build_beyond_the_bounds_is_not_kept_and_a_fifo_is_refused_without_waiting(run, cache, tmp_path,
                                                                                        monkeypatch):
    import os

    from yuesheng.check import builds

    sheet = _rite(tmp_path, "xiangyinjiu")
    monkeypatch.setattr(builds, "MAX_KEPT_EVENTS", 100)
    _timeline(run, sheet)
    assert not cache.exists() or not list(cache.iterdir())
    monkeypatch.setattr(builds, "MAX_KEPT_EVENTS", 10**6)
    monkeypatch.setattr(builds, "MAX_KEPT_BYTES", 1000)
    _timeline(run, sheet)
    assert not cache.exists() or not list(cache.iterdir())
    monkeypatch.setattr(builds, "MAX_KEPT_BYTES", 10**9)
    _timeline(run, sheet)
    assert len(list(cache.iterdir())) == 1
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    code, _, err = run("timeline", str(sheet), "--timing", str(fifo))
    assert code == 1 and "a FIFO" in err
