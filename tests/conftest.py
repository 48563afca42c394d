"""Shared fixtures: the shipped repertoire, a temporary score writer, the CLI runner.

The suite keeps its caches (parsed YAML, staged grounds, routes, fonts …) in a folder of its own, for every test and
every child process it starts, so that it neither reads nor fills the user's ``~/.cache/yuesheng``, and reads none of
the data an installed package ships for its rites (``caches.shipped``: tests/test_shipped.py turns it on).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from yuesheng.cli import main
from yuesheng.music.repertoire import Repertoire, data_dir, load_repertoire

# A test that uses one of these fixtures runs that program; it is marked so, for ``-m`` to choose or leave out.
KINDS = {"browser": "browser", "has_engraver": "engraver"}


@pytest.hookimpl(tryfirst=True)  # before -m chooses
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test that opens Chromium (fixture ``browser``) ``browser`` and each that runs LilyPond
    (``has_engraver``) ``engraver``; the FluidSynth tests are marked ``synth`` by their decorator."""
    for item in items:
        for fixture, marker in KINDS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(marker)


@pytest.fixture(scope="session", autouse=True)
def _caches_of_our_own(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("YUESHENG_NO_SHIPPED", "1")  # the package's built data unread: the suite builds what it tests
        yield


@pytest.fixture(autouse=True)
def _consoles_stopped() -> Iterator[None]:
    """After each test, the consoles it started in child processes (``served.start_console``) killed and their pipes
    closed."""
    yield
    if (served := sys.modules.get("served")) is not None:
        served.stop_started()


@pytest.fixture(scope="session")
def repertoire() -> Repertoire:
    return load_repertoire()


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]):
    """Run the CLI in-process: returns (exit code, stdout, stderr)."""

    def _run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return _run


@pytest.fixture
def shipped_score_text():
    """The text of a shipped score file by id."""

    def _text(pid: str) -> str:
        return (data_dir("scores") / f"{pid}.yaml").read_text(encoding="utf-8")

    return _text


@pytest.fixture(scope="module")
def has_engraver() -> None:
    """Skip, saying why, where LilyPond or a CJK font cannot be found (.ci/run installs both)."""
    from yuesheng.errors import EngraveError
    from yuesheng.outputs import engrave

    try:
        engrave.find_lilypond()
        engrave.find_cjk_font()
    except EngraveError as exc:
        pytest.skip(str(exc))
