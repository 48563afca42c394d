"""The cache folders (``caches``): private at every level, opened once and never through a symlink, entries checked
before they are read, one key rule (the package by content), nothing read back that can run; ``--no-cache``,
``YUESHENG_NO_CACHE`` and ``yuesheng cache info|clear``; and the staged rite's codec (``datacodec``)."""

from __future__ import annotations

import json
import marshal
import os
import pickle
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yuesheng import caches
from yuesheng.datacodec import decode, encode
from yuesheng.errors import DecodeError

ROOT = Path(__file__).resolve().parent.parent
ROOT_USER = hasattr(os, "geteuid") and os.geteuid() == 0
OTHER_UID = 65534  # nobody


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$XDG_CACHE_HOME`` of this test's own (not yet made); caches on."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("YUESHENG_NO_CACHE", raising=False)
    return tmp_path / "cache"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


# --- the folders ----------------------------------------------------------------------------------------------------

def test_every_level_made_is_private_whatever_the_umask(tmp_path, monkeypatch):
    base = tmp_path / "a" / "b"
    monkeypatch.setenv("XDG_CACHE_HOME", str(base))
    old = os.umask(0)
    try:
        folder = caches.folder("yaml")
        assert folder is not None
        folder.write("x.json", b"{}", entries=4)
    finally:
        os.umask(old)
    for level in (tmp_path / "a", base, base / "yuesheng", base / "yuesheng" / "yaml"):
        assert _mode(level) == 0o700, level
    assert _mode(base / "yuesheng" / "yaml" / "x.json") == 0o600


@pytest.mark.parametrize("level", ["yuesheng", "yuesheng/yaml"])
@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777, 0o720])
def test_a_folder_others_can_write_is_not_used(home, level, mode):
    (home / "yuesheng" / "yaml").mkdir(parents=True, mode=0o700)
    (home / level).chmod(mode)
    assert caches.folder("yaml") is None
    assert _mode(home / level) == mode  # left as it is: not the user's to fix


@pytest.mark.skipif(not ROOT_USER, reason="giving a folder to another user needs root")
@pytest.mark.parametrize("level", ["yuesheng", "yuesheng/yaml"])
def test_a_folder_of_another_users_is_not_used(home, level):
    (home / "yuesheng" / "yaml").mkdir(parents=True, mode=0o700)
    os.chown(home / level, OTHER_UID, -1)
    assert caches.folder("yaml") is None


@pytest.mark.parametrize("level", ["yuesheng", "yuesheng/staging"])
def test_a_folder_swapped_for_a_symlink_is_not_followed(home, tmp_path, level):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "staging").mkdir(parents=True, mode=0o700)
    elsewhere.chmod(0o700)
    (home / "yuesheng").mkdir(parents=True, mode=0o700)
    target = elsewhere if level == "yuesheng" else elsewhere / "staging"
    if level == "yuesheng":
        (home / "yuesheng").rmdir()
    (home / level).symlink_to(target)
    assert caches.folder("staging") is None
    assert list((elsewhere / "staging").iterdir()) == []


def test_a_folder_opened_once_is_written_through_its_descriptor_not_its_path(home, tmp_path):
    folder = caches.folder("staging")
    assert folder is not None
    moved, elsewhere = tmp_path / "moved", tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (home / "yuesheng" / "staging").rename(moved)  # the race: the folder swapped after it was checked
    (home / "yuesheng" / "staging").symlink_to(elsewhere)
    folder.write("e.json", b"{}", entries=4)
    assert list(elsewhere.iterdir()) == [] and [p.name for p in moved.iterdir()] == ["e.json"]
    assert folder.read("e.json", limit=10) == b"{}"


def test_a_removed_folder_is_made_again_on_the_next_use(home):
    first = caches.folder("yaml")
    assert first is not None
    shutil.rmtree(home)
    again = caches.folder("yaml")
    assert again is not None and (home / "yuesheng" / "yaml").is_dir()
    again.write("e.json", b"1", entries=4)
    assert (home / "yuesheng" / "yaml" / "e.json").is_file()


# --- the entries ----------------------------------------------------------------------------------------------------

def _entry_variants(folder: caches.Folder, tmp_path: Path) -> list[str]:
    """Entries of *folder* that must be misses, each by name: a symlink to a good entry, a FIFO, a folder, one others
    can write, one over the limit."""
    folder.write("good", b"{}", entries=100)
    (folder.path / "link").symlink_to(folder.path / "good")
    os.mkfifo(folder.path / "fifo", 0o600)
    (folder.path / "dir").mkdir()
    folder.write("shared", b"{}", entries=100)
    (folder.path / "shared").chmod(0o622)
    folder.write("big", b"x" * 100, entries=100)
    return ["link", "fifo", "dir", "shared", "big", "missing", "../yaml/good", ".hidden"]


def test_an_entry_that_is_not_a_private_regular_file_within_its_limit_is_a_miss(home, tmp_path):
    folder = caches.folder("yaml")
    assert folder is not None
    for name in _entry_variants(folder, tmp_path):
        assert folder.read(name, limit=10) is None, name  # a FIFO does not block
    assert folder.read("good", limit=10) == b"{}" and folder.read("big", limit=100) == b"x" * 100


@pytest.mark.skipif(not ROOT_USER, reason="giving a file to another user needs root")
def test_an_entry_of_another_users_is_a_miss(home):
    folder = caches.folder("yaml")
    assert folder is not None
    folder.write("theirs", b"{}", entries=4)
    os.chown(folder.path / "theirs", OTHER_UID, -1)
    assert folder.read("theirs", limit=10) is None


def test_an_entry_damaged_on_disk_is_a_miss(home):
    folder = caches.folder("yaml")
    assert folder is not None
    folder.write("e", b'{"a": 1}', entries=4)
    path = folder.path / "e"
    whole = path.read_bytes()
    for damaged in (whole[:-1], whole.replace(b"1", b"2"), whole[len(whole) - 8:], b"", whole + b" "):
        path.write_bytes(damaged)
        assert folder.read("e", limit=100) is None


def test_writing_keeps_the_newest_entries_and_leaves_no_temporary_file(home):
    folder = caches.folder("routes")
    assert folder is not None
    for n in range(5):
        folder.write(f"{n}", b"x", entries=2)
        os.utime(folder.path / f"{n}", (n, n))  # distinct, ordered times: the file system's may tie
    assert sorted(p.name for p in folder.path.iterdir()) == ["3", "4"]


def test_no_number_of_ones_own_entries_evicts_a_shipped_one(home):
    folder = caches.folder("staging")
    assert folder is not None
    for n in range(3):
        folder.write(f"{caches.SHIPPED}{n}", b"x", entries=2)
        os.utime(folder.path / f"{caches.SHIPPED}{n}", (n, n))
    for n in range(10, 30):
        folder.write(f"{n}", b"x", entries=2)
        os.utime(folder.path / f"{n}", (n, n))
    assert sorted(p.name for p in folder.path.iterdir()) == ["28", "29", f"{caches.SHIPPED}1", f"{caches.SHIPPED}2"]


def test_only_files_shipped_with_yuesheng_make_a_shipped_entry(tmp_path):
    home = caches.PACKAGE if (caches.PACKAGE / "cues").is_dir() else ROOT  # installed, or a checkout's
    copy = tmp_path / "dashe.yaml"
    shutil.copy(home / "cues" / "dashe.yaml", copy)
    assert caches.prefix(home / "cues" / "dashe.yaml", home / "blocking" / "dashe.yaml") == caches.SHIPPED
    assert caches.prefix(copy) == caches.prefix(home / "cues" / "dashe.yaml", copy) == caches.prefix() == ""


# --- the key --------------------------------------------------------------------------------------------------------

def test_the_key_holds_every_part_its_kind_and_the_package():
    assert caches.key("a", "x", b"y") == caches.key("a", "x", b"y")
    others = {caches.key("a", "x", b"y"), caches.key("b", "x", b"y"), caches.key("a", "xy"), caches.key("a", "x", "y"),
              caches.key("a", b"x", b"y"), caches.key("a", "x", b"y", b"")}
    assert len(others) == 6


def test_a_same_size_edit_of_a_package_file_with_its_time_restored_changes_every_key(tmp_path, monkeypatch):
    copy = tmp_path / "yuesheng"
    shutil.copytree(caches.PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(caches, "PACKAGE", copy)
    caches.package_digest.cache_clear()
    try:
        before = caches.key("ground", b"blocking")
        calls = copy / "timeline" / "calls.py"
        info = calls.stat()
        text = calls.read_bytes()
        index = text.index(b"=")
        calls.write_bytes(text[:index] + b"-" + text[index + 1:])  # the same size
        os.utime(calls, ns=(info.st_atime_ns, info.st_mtime_ns))
        assert calls.stat().st_size == info.st_size and calls.stat().st_mtime_ns == info.st_mtime_ns
        caches.package_digest.cache_clear()
        assert caches.key("ground", b"blocking") != before
    finally:
        caches.package_digest.cache_clear()


def test_the_ground_and_validates_clean_verdict_follow_every_file_of_yuesheng(home, monkeypatch, repertoire):
    """The stale-output bug: they once hashed only staging/*.py and staging.json, and missed a limit changed in
    another module."""
    from yuesheng import load
    from yuesheng.staging.ground import ground, keep_clean, kept_clean

    sheet = load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire)
    blocking = ROOT / "blocking" / "xiangshe.yaml"
    configurations: list[tuple[frozenset[str], dict[str, str]]] = [(frozenset(), {})]
    keep_clean(sheet, blocking, configurations)
    entry = ground(sheet, frozenset(), {}, blocking).entry
    assert kept_clean(sheet, blocking, configurations)
    monkeypatch.setattr(caches, "package_digest", lambda: b"yuesheng with timeline/calls.py changed")
    assert not kept_clean(sheet, blocking, configurations)
    assert ground(sheet, frozenset(), {}, blocking).entry != entry


def test_the_package_digest_reads_every_file_but_compiled_code_and_the_shipped_entries():
    """The shipped entries (``built/``) are made from the package when it is built: they cannot be a part of the key
    that names them."""
    names = [name for name, _ in caches._package_files(str(caches.PACKAGE))]
    assert "caches.py" in names and "data/staging.json" in names and "web/templates/sheet.html.j2" in names
    assert any(n.startswith("texts/") for n in names) and any(n.startswith("data/fonts/") for n in names)
    assert not any("__pycache__" in n or n.endswith(".pyc") or n.startswith(f"{caches.BUILT}/") for n in names)
    every = [p for p in caches.PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts
             and p.relative_to(caches.PACKAGE).parts[0] != caches.BUILT]
    assert sorted(names) == sorted(p.relative_to(caches.PACKAGE).as_posix() for p in every)


# --- nothing read back runs -----------------------------------------------------------------------------------------

class _Touch:
    """Unpickled, it touches *path* (what an attacker's pickle would do: run a command)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Path.touch, (str(self.path),))


def _yuesheng(cache: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("YUESHENG_NO_CACHE", None)
    return subprocess.run([sys.executable, "-m", "yuesheng", *argv], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=False)


def _outputs(cache: Path, out: Path) -> list[bytes]:
    """What ``timeline``, ``sheet`` and ``plan`` of 鄉射禮 write, and what ``validate`` says, run with *cache*."""
    done = _yuesheng(cache, "validate", "xiangshe")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    written = [done.stdout.encode()]
    for command, name in (("timeline", "t.txt"), ("sheet", "s.html"), ("plan", "p.json")):
        done = _yuesheng(cache, command, "xiangshe", "-o", str(out / name))
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        written.append((out / name).read_bytes())
    return written


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "yuesheng").glob("*/*") if p.is_file())


def test_a_planted_pickle_or_marshalled_code_is_never_run_and_damaged_entries_are_rebuilt_the_same(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    out.mkdir()
    (cache / "yuesheng").mkdir(parents=True, mode=0o700)
    fresh = _outputs(cache, out)
    entries = _entries(cache)
    assert {p.parent.name for p in entries} >= {"yaml", "texts", "staging", "routes", "plates", "fonts"}
    marker = tmp_path / "ran"
    code = marshal.dumps(compile(f"open({str(marker)!r}, 'w')", "x", "exec"))
    for planted in (pickle.dumps(_Touch(marker)), code):
        for entry in entries:  # on disk, and written whole as an entry (only the user could)
            folder = caches.Folder(os.open(entry.parent, os.O_RDONLY | os.O_DIRECTORY), entry.parent)
            try:
                folder.write(entry.name, planted, entries=1000)
            finally:
                folder.close()
        for old in ("staging/x.rite", "texts/yili.marshal", "jinja/x-sheet.html.j2.cache", "builds/x.pickle"):
            (cache / "yuesheng" / old).parent.mkdir(mode=0o700, exist_ok=True)
            (cache / "yuesheng" / old).write_bytes(planted)
        assert _outputs(cache, out) == fresh
        assert not marker.exists()


def _mangled(value: object) -> object:
    """*value* (an entry's JSON) with every value of the wrong type but its format: a string a number, a number a
    string, a list reversed and mangled."""
    if isinstance(value, dict):
        return {k: v if k == "format" else _mangled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mangled(v) for v in reversed(value)]
    if isinstance(value, str):
        return len(value)
    if isinstance(value, bool) or value is None:
        return "x"
    return str(value)


@pytest.mark.slow
def test_entries_of_the_wrong_shape_are_rebuilt_with_the_same_output(tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    out.mkdir()
    (cache / "yuesheng").mkdir(parents=True, mode=0o700)
    fresh = _outputs(cache, out)
    for entry in _entries(cache):
        folder = caches.Folder(os.open(entry.parent, os.O_RDONLY | os.O_DIRECTORY), entry.parent)
        try:
            data = folder.read(entry.name, limit=1 << 26)
            assert data is not None
            try:
                mangled = json.dumps(_mangled(json.loads(data))).encode()
            except ValueError:  # not JSON (a font's rules, a name, a verdict): cut short
                mangled = data[: len(data) // 2]
            folder.write(entry.name, mangled, entries=1000)
        finally:
            folder.close()
    assert _outputs(cache, out) == fresh


# --- turned off, and the command ------------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["option", "option after the command", "environment"])
def test_no_cache_reads_and_writes_nothing(how, home, run, tmp_path, monkeypatch):
    if how == "environment":
        monkeypatch.setenv("YUESHENG_NO_CACHE", "1")
    before = [] if how == "environment" else ["--no-cache"]
    after = ["--no-cache"] if how == "option after the command" else []
    for argv in (["timeline", "xiangyinjiu", "-o", str(tmp_path / "t.txt")], ["validate", "xiangyinjiu"],
                 ["sheet", "xiangyinjiu", "-o", str(tmp_path / "s.html")], ["source", "4-1a"]):
        code, _, err = run(*before, *argv, *after)
        assert code == 0, err
    assert not home.exists()
    assert caches.enabled() is (how != "environment")  # the option is for the one command


def test_cache_info_says_where_what_and_how_much(home, run):
    folder = caches.folder("yaml")
    assert folder is not None
    folder.write("a.json", b"{}", entries=10)
    folder.write("b.json", b"[1]", entries=10)
    code, out, _ = run("cache", "info")
    assert code == 0 and str(home / "yuesheng") in out
    line = next(line for line in out.splitlines() if line.split()[0] == "yaml")
    assert line.split()[1] == "2" and line.split()[3] == str(2 * caches._HEAD + 5)
    code, out, _ = run("cache", "info", "--format", "json")
    report = json.loads(out)
    assert report["enabled"] is True and {"name": "yaml", "safe": True, "entries": 2,
                                          "bytes": 2 * caches._HEAD + 5} in report["folders"]


def test_cache_info_says_when_the_root_itself_is_not_used(home, run):
    (home / "yuesheng" / "yaml").mkdir(parents=True)
    (home / "yuesheng").chmod(0o777)  # others could plant entries: yuesheng runs without a cache
    code, out, _ = run("cache", "info")
    assert code == 0 and "not used: not a private folder of this user's" in out and "(empty)" not in out
    code, out, _ = run("cache", "info", "--format", "json")
    assert json.loads(out)["root_safe"] is False
    (home / "yuesheng").chmod(0o700)
    code, out, _ = run("cache", "info", "--format", "json")
    assert json.loads(out)["root_safe"] is True


def test_cache_info_says_when_caching_is_off(home, run, monkeypatch):
    monkeypatch.setenv("YUESHENG_NO_CACHE", "1")
    code, out, _ = run("cache", "info")
    assert code == 0 and "caching is off" in out
    code, out, _ = run("--no-cache", "cache", "info", "--format", "json")
    assert json.loads(out)["enabled"] is False


def test_cache_clear_removes_the_folders_and_follows_no_symlink(home, run, tmp_path):
    for name in ("yaml", "staging"):
        folder = caches.folder(name)
        assert folder is not None
        folder.write("e.json", b"{}", entries=10)
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    (home / "yuesheng" / "yaml" / "link").symlink_to(precious / "keep.txt")
    (home / "yuesheng" / "linked").symlink_to(precious)
    shared = home / "yuesheng" / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "x").write_text("")
    code, out, _ = run("cache", "clear")
    assert code == 0 and "removed yaml" in out and "removed staging" in out and "left shared" in out
    assert sorted(p.name for p in (home / "yuesheng").iterdir()) == ["linked", "shared"]
    assert (precious / "keep.txt").read_text() == "mine"
    code, out, _ = run("cache", "clear")
    assert "removed" not in out
    assert caches.folder("yaml") is not None  # made again when next needed


# --- the codec ------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def staged(repertoire):
    """鄉飲酒禮 staged, and encoded."""
    from yuesheng import load
    from yuesheng.staging.rite import StagedRite, staged_rite

    sheet = load(ROOT / "cues" / "xiangyinjiu.yaml", repertoire=repertoire)
    rite = staged_rite(sheet, frozenset(), {}, ROOT / "blocking" / "xiangyinjiu.yaml")
    return rite, json.loads(json.dumps(encode(rite, StagedRite)))


def test_the_codec_refuses_data_of_the_wrong_shape(staged):
    from yuesheng.staging.rite import StagedRite

    _, data = staged
    objects, root = data["objects"], data["root"]
    assert decode(data, StagedRite).file == staged[0].file
    cycle = [list(o) for o in objects]
    cycle[root][1] = root  # the rite's hall is the rite itself
    bad: object
    for bad in (None, [], {"root": root}, {"root": root, "objects": {}}, {"root": -1, "objects": objects},
                {"root": len(objects), "objects": objects}, {"root": True, "objects": objects},
                {"root": root, "objects": cycle}, {"root": str(root), "objects": objects},
                {"root": root, "objects": objects, "more": 1}):
        with pytest.raises(DecodeError):
            decode(bad, StagedRite)


def test_the_codec_checks_fractions_and_enums():
    from yuesheng.staging.model import Facing, Walk

    walk = Walk("a", (), 1.5, 2, Fraction(7, 3), False)
    data = json.loads(json.dumps(encode(walk, Walk)))
    assert decode(data, Walk) == walk
    for seconds in ([1, 0], [1, -3], [1.5, 2], [True, 1], "7/3", [1, 2, 3]):
        row = [*data["objects"][0][:4], seconds, False]
        with pytest.raises(DecodeError):
            decode({"root": 0, "objects": [row]}, Walk)
    assert decode(encode(Facing.DONG, Facing), Facing) is Facing.DONG
    for name in ("dong", "__class__", 0, None):
        with pytest.raises(DecodeError):
            decode({"root": name, "objects": []}, Facing)
    with pytest.raises(TypeError):
        encode(walk, Facing)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-3, 10**6) | st.floats(allow_nan=False)
                     | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=8)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.integers(0, 10**6), what=st.integers(0, 10**6), value=_JSON)
def test_a_corrupt_rite_decodes_as_a_rite_or_not_at_all(staged, where, what, value):
    """Any one value of the encoded rite replaced by any JSON value: a DecodeError, or a StagedRite; never another
    exception."""
    from yuesheng.staging.rite import StagedRite

    _, data = staged
    objects = [list(o) for o in data["objects"]]
    row = objects[where % len(objects)]
    row[what % len(row)] = value
    try:
        rite = decode({"root": data["root"], "objects": objects}, StagedRite)
    except DecodeError:
        return
    assert isinstance(rite, StagedRite)


# --- a key of values (``caches.digest``) ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Seat:
    name: str
    at: tuple[float, float]
    guests: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class _Mat:
    name: str
    at: tuple[float, float]
    guests: frozenset[str] = frozenset()


def test_a_digest_of_values_tells_every_value_apart_and_writes_a_set_in_order():
    values = [1, True, 1.0, Fraction(1), "1", b"1", ("1",), ["1"], {"1": 1}, None, -0.0, 0.0,
              _Seat("a", (0.0, 1.0)), _Seat("a", (1.0, 0.0)), _Mat("a", (0.0, 1.0)), _Seat("b", (0.0, 1.0)),
              _Seat("a", (0.0, 1.0), frozenset({"x"})), (_Seat("a", (0.0, 1.0)), _Seat("a", (0.0, 1.0)))]
    digests = [caches.digest(v) for v in values]
    assert None not in digests and len(set(digests)) == len(values)
    assert caches.digest("a", "b") != caches.digest("ab") != caches.digest(("a", "b"))
    assert caches.digest(_Seat("a", (0.0, 1.0))) == caches.digest(_Seat("a", (0.0, 1.0)))
    many = [f"guest {n}" for n in range(50)]
    guests = caches.digest(_Seat("a", (0, 0), frozenset(many)))
    assert guests == caches.digest(_Seat("a", (0, 0), frozenset(many[::-1])))
    script = ("import sys; sys.path.insert(0, 'tests'); from test_caches import _Seat; from yuesheng import caches; "
              "print(caches.digest(_Seat('a', (0, 0), frozenset(f'guest {n}' for n in range(50)))))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    printed = {subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env | {"PYTHONHASHSEED": str(seed)},
                              capture_output=True, text=True, check=True).stdout.strip() for seed in (1, 2, 3)}
    assert printed == {guests}  # whatever the strings' hashes


def test_a_value_the_digest_cannot_write_has_none():
    assert caches.digest(MappingProxyType({"a": 1})) is None
    assert caches.digest(lambda: 0) is None
    assert caches.digest(_Seat("a", (0.0, 1.0), frozenset({"x"}))) is not None


def test_a_digest_is_of_the_values_not_of_which_of_them_are_one_object():
    one, two = Fraction(3, 2), Fraction(3, 2)
    text = "".join(["gong", "-ru"])  # an equal string that is not the same object as the literal
    assert text is not "gong-ru"  # noqa: F632 (the point of the test)
    assert caches.digest([one, one], ["gong-ru", "gong-ru"]) == caches.digest([one, two], ["gong-ru", text])
    assert caches.digest([("a", "gong-ru", "gong-ru"), (1, None, 2)]) == caches.digest([("a", "gong-ru", text),
                                                                                          (1, None, 2)])
    assert caches.digest([("a", "b")]) != caches.digest([("ab",)]) != caches.digest([("a",)])
    assert caches.digest((("a",),)) != caches.digest(("a",)) != caches.digest(["a"]) != caches.digest("('a',)")
    seat = _Seat("a", (0.0, 1.0))
    pair = (_Seat("a", (0.0, 1.0)), _Seat("a", (0.0, 1.0)))
    assert caches.digest((seat, seat), apart=(_Seat,)) == caches.digest(pair, apart=(_Seat,))
    assert caches.digest((seat, seat)) == caches.digest(pair)
    assert caches.digest(seat, apart=(_Seat,)) != caches.digest(_Mat("a", (0.0, 1.0)), apart=(_Seat, _Mat))


def test_the_package_imports_no_pickle_nor_marshal_and_numpy_loads_refuse_pickles():
    """Nothing yuesheng keeps or reads can run code: no module of it imports pickle, marshal, shelve or dill, and
    every ``np.load`` passes ``allow_pickle=False``."""
    import ast

    for path in sorted(caches.PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not {n.split(".")[0] for n in names} & {"pickle", "_pickle", "marshal", "shelve", "dill"}, path
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load" \
                    and isinstance(node.func.value, ast.Name) and node.func.value.id in ("np", "numpy"):
                assert any(k.arg == "allow_pickle" and isinstance(k.value, ast.Constant) and k.value.value is False
                           for k in node.keywords), f"{path}:{node.lineno}"
