"""The data the package ships for its own rites (``caches.shipped``, made by setup.py's build step when the package is
built): read only for the very inputs it was made from, never for an edited hall, blocking or cue sheet."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from yuesheng import caches
from yuesheng.staging import rite as staging_rite

ROOT = Path(__file__).resolve().parent.parent
RITE = "xiangyinjiu"  # the shortest shipped rite


def _setup() -> ModuleType:
    """setup.py, imported without running ``setup()``."""
    spec = importlib.util.spec_from_file_location("yuesheng_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def staged(monkeypatch) -> list[str]:
    """The blockings staged from here on (each call of ``staged_rite``, or of ``cue_times``: a build's)."""
    calls: list[str] = []
    for name in ("staged_rite", "cue_times"):
        real = getattr(staging_rite, name)

        def counting(sheet, *args, real=real, **kwargs):
            calls.append(sheet.rite_id)
            return real(sheet, *args, **kwargs)

        monkeypatch.setattr(staging_rite, name, counting)
    return calls


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder, the shipped entries read."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("YUESHENG_NO_SHIPPED")
    return tmp_path / "cache" / "yuesheng"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped data of one rite, made as a build makes it (setup.py's ``build_data``) by the yuesheng these tests
    import, in a folder of the tests' own."""
    package = tmp_path_factory.mktemp("package")
    assert _setup().build_data(caches.PACKAGE.parent, package, [RITE]) > 0
    return package / caches.BUILT


@pytest.fixture
def shipped(built: Path, fresh: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(caches, "BUILT_DIR", built)
    return built


def _copy(tmp_path: Path) -> Path:
    """A copy of the rite's cue sheet, blocking and hall, to edit: its cue sheet."""
    for folder, names in (("cues", [f"{RITE}.yaml"]), ("blocking", [f"{RITE}.yaml", f"{RITE}.hall.yaml"])):
        (tmp_path / "rite" / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            shutil.copy(ROOT / folder / name, tmp_path / "rite" / folder / name)
    return tmp_path / "rite" / "cues" / f"{RITE}.yaml"


def _timeline(run, cue: str | Path, out: Path, *options: str) -> str:
    code, _, err = run("timeline", str(cue), "-o", str(out), *options)
    assert code == 0, err
    return out.read_text(encoding="utf-8")


def test_the_build_ships_the_rites_data_and_no_staged_rite_nor_path_of_the_build(built):
    folders = {p.name for p in built.iterdir()}
    assert {"staging", "routes", "yaml", "texts", "plates", "transport", "pages", "fonts", "checks"} <= folders
    for entry in built.glob("*/*"):
        assert not entry.name.endswith(".rite.json")
        assert str(caches.PACKAGE.parent).encode() not in entry.read_bytes()


def test_a_first_run_reads_the_shipped_staging_and_stages_nothing(shipped, staged, run, tmp_path):
    text = _timeline(run, RITE, tmp_path / "first.txt")
    assert staged == []
    for folder in ("staging", "checks"):  # nothing rebuilt or checked again, nothing kept
        assert not list((tmp_path / "cache" / "yuesheng" / folder).glob("*"))
    assert text == _timeline(run, RITE, tmp_path / "built.txt", "--no-cache")  # as if built here
    assert staged == [RITE]


@pytest.mark.parametrize("name", [f"{RITE}.yaml", f"{RITE}.hall.yaml"])
def test_an_edited_blocking_or_hall_is_staged_again_not_read_from_the_shipped_data(shipped, staged, run, tmp_path,
                                                                                   name):
    cue = _copy(tmp_path)
    _timeline(run, cue, tmp_path / "copy.txt")  # a copy is one's own: its entries are named apart from the shipped
    _timeline(run, cue, tmp_path / "again.txt")
    assert staged == [RITE]  # staged once, then read from what that run kept
    edited = tmp_path / "rite" / "blocking" / name
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    _timeline(run, cue, tmp_path / "edited.txt")
    assert staged == [RITE, RITE]
    assert list((tmp_path / "cache" / "yuesheng" / "staging").glob("*.json"))  # and kept in the user's cache


def test_a_first_sheet_reads_the_shipped_page_and_makes_none(shipped, run, tmp_path, monkeypatch):
    from yuesheng.web import sheet

    assert run("sheet", RITE, "-o", str(tmp_path / "built.html"), "--no-cache")[0] == 0

    def refused(*_: object) -> str:
        raise AssertionError("the page was made")

    monkeypatch.setattr(sheet, "_page", refused)
    code, _, err = run("sheet", RITE, "-o", str(tmp_path / "first.html"))
    assert code == 0, err
    assert (tmp_path / "first.html").read_bytes() == (tmp_path / "built.html").read_bytes()
    assert not list((tmp_path / "cache" / "yuesheng" / "pages").glob("*"))  # read from the package, nothing kept


def test_an_edited_cue_sheet_is_read_and_built_as_it_now_is(shipped, run, tmp_path):
    cue = _copy(tmp_path)
    text = cue.read_text(encoding="utf-8")
    first = text.index("name: ")
    cue.write_text(text[:first] + "name: 鄉飲酒禮 (edited) #" + text[first + len("name: "):], encoding="utf-8")
    edited = _timeline(run, cue, tmp_path / "edited.txt")
    assert "(edited)" in edited
    assert edited == _timeline(run, cue, tmp_path / "built.txt", "--no-cache")


def test_a_damaged_shipped_entry_is_a_miss(shipped, staged, run, tmp_path, monkeypatch):
    damaged = tmp_path / "damaged"
    shutil.copytree(shipped, damaged)
    for entry in (damaged / "staging").glob("*"):
        data = bytearray(entry.read_bytes())
        data[-2] ^= 1
        entry.write_bytes(bytes(data))
    monkeypatch.setattr(caches, "BUILT_DIR", damaged)
    _timeline(run, RITE, tmp_path / "first.txt")
    assert staged == [RITE]


def test_no_shipped_entry_is_read_with_the_caches_off_or_yuesheng_no_shipped(shipped, staged, run, tmp_path,
                                                                           monkeypatch):
    _timeline(run, RITE, tmp_path / "off.txt", "--no-cache")
    monkeypatch.setenv("YUESHENG_NO_SHIPPED", "1")
    _timeline(run, RITE, tmp_path / "unshipped.txt")
    assert staged == [RITE, RITE]


@pytest.mark.skipif((caches.PACKAGE.parent / "pyproject.toml").exists(),
                    reason="yuesheng imported from a checkout: its data is made by a build (pip install), not here")
def test_the_installed_package_carries_every_shipped_rites_data(fresh, staged, run, tmp_path):
    """Where the suite runs on the installed package (CI: ``pip install '.[test]'``), its first runs stage nothing."""
    for rite in ("xiangyinjiu", "xiangshe", "yanli", "dashe"):
        _timeline(run, rite, tmp_path / f"{rite}.txt")
    assert staged == []


def test_a_build_command_that_runs_too_long_is_stopped_and_named(tmp_path, monkeypatch):
    setup = _setup()
    monkeypatch.setattr(setup, "TIMEOUT", 0.01)  # less than Python takes to start
    with pytest.raises(SystemExit, match=r"yuesheng validate xiangshe: still running after 0.01 s, stopped"):
        setup.build_data(caches.PACKAGE.parent, tmp_path / "package", ["xiangshe"])
