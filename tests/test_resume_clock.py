"""--resume does not trust a log's clock blindly: a log from the future or of another day is resumed with a warning,
its elapsed time counted from its own first and last lines (issue 34)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from yuesheng import build, load
from yuesheng.live.resume import read_resume, session_fields

DATA = Path(__file__).parent / "data"
NOW = datetime(2026, 12, 3, 19, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def golden(repertoire):
    return build(load(DATA / "golden.yaml", repertoire=repertoire))


def _log(tmp_path: Path, golden, start: datetime, *gos: tuple[str, float]) -> Path:
    """A log whose session began at *start*, with a GO of each (cue, seconds after the start)."""
    def line(fields: dict[str, object], at: datetime) -> str:
        return json.dumps({**fields, "wall": at.isoformat(timespec="milliseconds"), "mono": 1.0})
    lines = [line({"event": "session", **session_fields(golden, resumed=False)}, start)]
    lines += [line({"event": "go", "cue": cue, "source": "page"}, start + timedelta(seconds=s)) for cue, s in gos]
    path = tmp_path / "show.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_log_of_the_last_hour_keeps_todays_rule_the_downtime_counts(tmp_path, golden):
    path = _log(tmp_path, golden, NOW - timedelta(minutes=30), ("bin-ru", 60), ("bai-zhi", 100))
    resume = read_resume(path, golden, NOW)
    assert resume.clock == "" and not resume.warnings
    assert [p.at for p in resume.presses] == [pytest.approx(-1740), pytest.approx(-1700)]


@pytest.mark.parametrize(("start", "words"), [
    (datetime(1970, 1, 1, tzinfo=UTC), "its show began at 1970-01-01 00:00:00 UTC, 57 years ago"),
    (datetime(2099, 1, 1, tzinfo=UTC), "its lines run to 2099-01-01 00:01:40 UTC, 72 years ahead of this machine's"),
    (NOW - timedelta(days=3), "its show began at 2026-11-30 19:30:00 UTC, 3 days ago"),
    (NOW + timedelta(minutes=10), "ahead of this machine's clock"),
])
def test_a_log_from_the_future_or_of_another_day_counts_only_its_own_span(tmp_path, golden, start, words):
    path = _log(tmp_path, golden, start, ("bin-ru", 60), ("bai-zhi", 100))
    resume = read_resume(path, golden, NOW)
    assert words in resume.clock
    assert "its elapsed time is counted from its own first and last lines (1 min 40 s)" in resume.clock
    assert any(resume.clock in w for w in resume.warnings)
    assert [p.at for p in resume.presses] == [pytest.approx(-40), pytest.approx(0)]


def test_a_few_seconds_of_skew_are_not_another_clock(tmp_path, golden):
    path = _log(tmp_path, golden, NOW - timedelta(seconds=98), ("bin-ru", 60), ("bai-zhi", 100))
    resume = read_resume(path, golden, NOW)
    assert resume.clock == "" and [p.at for p in resume.presses] == [pytest.approx(-38), pytest.approx(0, abs=2.1)]


def test_the_warning_is_said_with_resumed_for_the_page_and_the_terminal(tmp_path, golden):
    from yuesheng.live.commands import Command
    from yuesheng.live.control import Press
    from yuesheng.live.player import Player

    from fakes import FakeClock

    path = _log(tmp_path, golden, datetime(1970, 1, 1, tzinfo=UTC), ("bin-ru", 60))
    resume = read_resume(path, golden, NOW)
    clock, said, states = FakeClock(), list[str](), list[object]()
    clock.t = 500.0

    class Once:  # no operator: the status is taken at the first wait, then the show ends
        def wait_until(self, deadline):
            states.append(player.status())
            return Press(Command.QUIT, clock.t, "test", "over")

    class Port:
        def send(self, message) -> None:
            pass

    player = Player(golden, Port(), clock, control=Once(), show=said.append, resume=resume.on_clock(clock.t),
                    resume_warning=resume.clock)
    player.run()
    line = states[0].resumed  # type: ignore[attr-defined]
    assert line.startswith("resumed from the log at bin-ru") and "WARNING: the log's clock cannot be trusted" in line
    assert said[0] == line
