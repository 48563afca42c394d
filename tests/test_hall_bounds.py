"""Hostile staging files: a hall file named by path or link shows nothing of another file, and every count that
drives the cost of staging is bounded, with its file:line:col (issue 34)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from yuesheng.errors import InvalidInputError
from yuesheng.staging.reader import load_hall

ROOT = Path(__file__).resolve().parent.parent
SECRET = "s3cr3t-hash-line"


def _rite(tmp_path: Path, rite: str = "xiangshe") -> Path:
    """A copy of *rite*'s cue sheet and blocking (cues/, blocking/) in *tmp_path*; the blocking's path."""
    (tmp_path / "cues").mkdir()
    (tmp_path / "blocking").mkdir()
    shutil.copy(ROOT / "cues" / f"{rite}.yaml", tmp_path / "cues")
    for name in (f"{rite}.yaml", f"{rite}.hall.yaml"):
        shutil.copy(ROOT / "blocking" / name, tmp_path / "blocking")
    return tmp_path / "blocking" / f"{rite}.yaml"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _validate(tmp_path: Path, rite: str = "xiangshe") -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "YUESHENG_NO_CACHE": "1", "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "yuesheng", "validate", str(tmp_path / "cues" / f"{rite}.yaml")],
                          env=env, capture_output=True, text=True, timeout=120)


def _secret_file(folder: Path, name: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"r00tuser:{SECRET}:19000:0:99999:7:::\n{SECRET}: x\nformat: 12\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["../private/shadow", "/etc/passwd", "private/shadow.yaml", "..", "shadow"])
def test_a_hall_named_by_a_path_is_refused_at_its_line_and_nothing_of_the_file_is_shown(tmp_path, name):
    blocking = _rite(tmp_path)
    _secret_file(tmp_path / "private", "shadow")
    _edit(blocking, "hall: xiangshe.hall.yaml", f"hall: {name}")
    checked = _validate(tmp_path)
    out = checked.stdout + checked.stderr
    assert checked.returncode == 1, out
    assert "xiangshe.yaml:6:7: hall: expected the name of a hall file beside the blocking" in out
    assert SECRET not in out and "r00tuser" not in out


def test_a_hall_that_is_a_link_out_of_the_folder_is_refused(tmp_path):
    blocking = _rite(tmp_path)
    os.symlink(_secret_file(tmp_path / "private", "shadow.yaml"), blocking.with_name("shadow.yaml"))
    _edit(blocking, "hall: xiangshe.hall.yaml", "hall: shadow.yaml")
    checked = _validate(tmp_path)
    out = checked.stdout + checked.stderr
    assert checked.returncode == 1 and "shadow.yaml is a link that leads out of the blocking's folder" in out
    assert SECRET not in out


def test_a_file_beside_the_blocking_that_is_no_hall_is_refused_without_a_word_of_it(tmp_path):
    blocking = _rite(tmp_path)
    _secret_file(blocking.parent, "notes.yaml")
    _edit(blocking, "hall: xiangshe.hall.yaml", "hall: notes.yaml")
    checked = _validate(tmp_path)
    out = checked.stdout + checked.stderr
    assert checked.returncode == 1, out
    assert "notes.yaml: not a yuesheng-hall/1 file: it has no line 'format: yuesheng-hall/1'" in out
    assert SECRET not in out and "unknown key" not in out


def _hall(tmp_path: Path, old: str, new: str) -> Path:
    blocking = _rite(tmp_path)
    hall = blocking.with_name("xiangshe.hall.yaml")
    _edit(hall, old, new)
    return hall


def _stairs(n: int) -> str:
    return "".join(f"  extra{i}: {{name: 階{i}, x: {-5.5 + i * 11 / n:.4f}, run: 1, estimate: e}}\n" for i in range(n))


def test_stairs_beyond_the_points_a_route_may_turn_at_are_refused_at_the_stairs(tmp_path):
    hall = _hall(tmp_path, "stairs:\n", "stairs:\n" + _stairs(300))
    with pytest.raises(InvalidInputError, match=r"xiangshe.hall.yaml:\d+:1: stairs: the hall has \d+ points a route "
                       r"may turn at \(\d+ at wall corners, 604 at stairs, \d+ round set pieces\), beyond the limit "
                       r"of points a route may turn at in a hall \(4 a wall corner, 2 a stair, 4 a set piece\) "
                       r"\(at most 600\)"):
        load_hall(hall)


def test_places_beyond_their_limit_are_refused_before_any_is_resolved(tmp_path):
    many = "".join(f"  p{i}: {{name: p{i}, of: p{i + 1}, dir: 南, dist: 0.001, estimate: e}}\n" for i in range(2000))
    hall = _hall(tmp_path, "places:\n", "places:\n" + many)
    with pytest.raises(InvalidInputError, match=r"places: the hall has 2,\d\d\d places, beyond the limit of places"):
        load_hall(hall)


def test_a_chain_of_relative_places_is_resolved_in_any_order_up_to_its_limit(tmp_path):
    chain = "".join(f"  c{i}: {{name: c{i}, of: c{i + 1}, dir: 南, dist: 0.01, estimate: e}}\n" for i in range(31))
    hall = _hall(tmp_path, "places:\n", "places:\n" + chain + "  c31: {name: c31, at: [50, 200], estimate: e}\n")
    places = load_hall(hall).places
    assert places["c0"].point.y == pytest.approx(200.31)


def test_a_chain_of_relative_places_longer_than_its_limit_is_refused_at_the_first_beyond(tmp_path):
    chain = "".join(f"  c{i}: {{name: c{i}, of: c{i + 1}, dir: 南, dist: 0.01, estimate: e}}\n" for i in range(40))
    hall = _hall(tmp_path, "places:\n", "places:\n" + chain + "  c40: {name: c40, at: [50, 200], estimate: e}\n")
    with pytest.raises(InvalidInputError) as caught:
        load_hall(hall)
    (problem,) = caught.value.problems
    assert "a chain of 33 places, beyond the limit of places in a chain" in problem.message
    assert problem.path == "places.c8.of" and problem.line is not None


def test_a_cycle_of_relative_places_is_named_once_per_place(tmp_path):
    cycle = ("  ca: {name: ca, of: cb, dir: 南, dist: 1, estimate: e}\n"
             "  cb: {name: cb, of: ca, dir: 南, dist: 1, estimate: e}\n")
    hall = _hall(tmp_path, "places:\n", "places:\n" + cycle)
    with pytest.raises(InvalidInputError) as caught:
        load_hall(hall)
    assert sorted(p.path for p in caught.value.problems) == ["places.ca.of", "places.cb.of"]


@pytest.mark.parametrize(("tang", "words"), [
    ("{x0: 6, y0: -8, x1: -6, y1: 0}", "a 堂 -12 步 wide"),
    ("{x0: -6, y0: 0, x1: 6, y1: 0}", "a 堂 0 步 deep"),
    ("{x0: -600, y0: -8, x1: 600, y1: 0}", "a 堂 1200 步 wide"),
    ("{x0: -6, y0: -8, x1: 6, y1: 20000}", "20000 步 is beyond any hall"),
])
def test_an_inverted_zero_or_huge_tang_is_refused(tmp_path, tang, words):
    hall = _hall(tmp_path, "tang: {x0: -6, y0: -8, x1: 6, y1: 0}", f"tang: {tang}")
    with pytest.raises(InvalidInputError, match=words):
        load_hall(hall)


def test_a_walk_through_too_many_places_is_refused_at_its_via(tmp_path):
    blocking = _rite(tmp_path)
    via = ", ".join(["tang-xi"] * 17)
    _edit(blocking, "{who: gong, to: gong-xi,", f"{{who: gong, to: gong-xi, via: [{via}],")
    checked = _validate(tmp_path)
    assert checked.returncode == 1
    assert "via: the walk passes 17 places, beyond the limit of places one walk passes (via) (at most 16)" in \
        checked.stdout + checked.stderr


def test_a_long_action_is_a_warning_naming_its_cause_and_a_file_beyond_the_hall_an_error(tmp_path):
    blocking = _rite(tmp_path)
    far = "places:\n  yuan: {name: 遠, at: [0, 990], estimate: e}\n"
    _edit(blocking.with_name("xiangshe.hall.yaml"), "places:\n", far)
    _edit(blocking, "to: tang-xi, spacing: 0.8,", "to: tang-xi, spacing: 100, via: [yuan, tang-xi, yuan],")
    checked = _validate(tmp_path)
    out = checked.stdout + checked.stderr
    assert checked.returncode == 0, out
    assert "warning: cue san-ou-si takes" in out
    assert "far longer than any action of the texts (warned beyond 30 min): its longest walk is" in out
    assert "its widest file is spaced 100 步" in out
    _edit(blocking, "spacing: 100,", "spacing: 900,")
    checked = _validate(tmp_path)
    assert checked.returncode == 1
    assert "beyond any hall (at most 1,000 步 either way): the file from 堂西 runs too far" in checked.stderr
