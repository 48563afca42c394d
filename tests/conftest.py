"""Shared fixtures: the shipped repertoire, a temporary score writer, the CLI runner."""

from __future__ import annotations

import pytest

from yuesheng.cli import main
from yuesheng.music.repertoire import Repertoire, data_dir, load_repertoire


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
