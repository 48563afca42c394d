"""Resuming a show from its log: the player's state replayed, the music brought back, other shows refused; and a
console killed with SIGKILL and started again with --resume that continues at the right cue."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from yuesheng import build, load
from yuesheng.errors import InvalidInputError
from yuesheng.live.commands import Command
from yuesheng.live.control import Press
from yuesheng.live.player import Player
from yuesheng.live.resume import plan_digest, read_resume, session_fields
from yuesheng.timeline import Measurement, Options

from fakes import FakeClock
from served import post, start_console
from served import state as console_state

DATA = Path(__file__).parent / "data"
NOW = datetime(2026, 12, 1, 19, 30, tzinfo=UTC)
BELLS = 4


@pytest.fixture(scope="module")
def golden(repertoire):
    return build(load(DATA / "golden.yaml", repertoire=repertoire))


def _line(event: str, ago: float, **fields) -> str:
    wall = (NOW - timedelta(seconds=ago)).isoformat(timespec="milliseconds")
    return json.dumps({"event": event, **fields, "wall": wall, "mono": 1000.0 - ago}, ensure_ascii=False)


def _log(tmp_path: Path, golden, *lines: str, session: dict[str, Any] | None = None) -> Path:
    path = tmp_path / "show.jsonl"
    head = json.dumps({"event": "session", **(session or session_fields(golden, resumed=False)),
                       "wall": "2026-12-01T18:00:00.000+00:00", "mono": 1.0})
    path.write_text("\n".join([head, *lines]) + "\n", encoding="utf-8")
    return path


class Once:
    """No operator: the player's status is taken at its first wait, then the control closes."""

    def __init__(self, clock: FakeClock, player_box: list[Any]) -> None:
        self.states: list[Any] = []
        self.queued: list[Any] = []
        self.clock, self.box = clock, player_box

    def wait_until(self, deadline):
        self.states.append(self.box[0].status())
        self.queued = [(i.due, i.message) for i in self.box[0].cueing.heap]
        return Press(Command.QUIT, self.clock.t, "test", "over")


class Port:
    def send(self, message) -> None:
        pass


def _resumed(golden, path: Path):
    clock = FakeClock()
    clock.t = 500.0
    box: list[Any] = []
    control = Once(clock, box)
    port = Port()
    player = Player(golden, port, clock, control=control, show=lambda _: None,
                    resume=read_resume(path, golden, NOW).on_clock(clock.t))
    box.append(player)
    player.run()
    return control.states[0], control.queued


def test_the_resumed_player_stands_at_the_logged_cue_with_its_clock(tmp_path, golden):
    path = _log(tmp_path, golden, _line("go", 40.0, cue="bin-ru", source="page"),
                _line("go", 3.0, cue="bai-zhi", source="page"))
    state, _ = _resumed(golden, path)
    assert state.current == "bai-zhi" and state.next == "ge" and state.armed == ("ge",)
    assert state.current_started == pytest.approx(497.0) and state.first_started == pytest.approx(460.0)
    assert state.follow_at == pytest.approx(502.0)  # the pre-wait still running: 合樂 follows in 2 s
    assert state.resumed.startswith("resumed from the log at bai-zhi")


def test_held_music_restarts_from_its_beginning_and_the_page_is_told(tmp_path, golden):
    path = _log(tmp_path, golden, _line("go", 6.5, cue="bin-ru", source="page"))
    state, queued = _resumed(golden, path)
    assert state.current == "bin-ru" and "金奏 肆夏 restarted from its beginning" in state.resumed
    bells = sorted(t for t, m in queued if m.type == "note_on" and m.channel == BELLS)
    assert bells and bells[0] == pytest.approx(500.0)  # from the first stroke, now


def test_other_music_comes_back_from_its_position(tmp_path, golden):
    path = _log(tmp_path, golden, _line("go", 40.0, cue="bin-ru", source="page"),
                _line("go", 35.0, cue="bai-zhi", source="page"), _line("go", 30.0, cue="ge", source="auto"))
    state, queued = _resumed(golden, path)
    assert state.current == "ge" and "合樂 騶虞×3 from 0:30" in state.resumed
    sung = [t for t, m in queued if m.type == "note_on" and m.channel == 0]
    assert sung and min(sung) >= 500.0 and min(sung) < 502.0  # the song goes on from where it is, not its start


def test_a_jump_in_the_log_is_replayed(tmp_path, golden):
    path = _log(tmp_path, golden, _line("go", 40.0, cue="bin-ru", source="page"),
                _line("goto", 20.0, cue="zhengge-bei", source="page", silence=True))
    state, _ = _resumed(golden, path)
    assert state.next == "zhengge-bei" and state.current == "ge" and state.playing == ()


def test_lost_lines_are_skipped_with_a_warning(tmp_path, golden):
    path = _log(tmp_path, golden, _line("go", 40.0, cue="bin-ru", source="page"), '{"event": "go", "cu',
                _line("go", 3.0, cue="bai-zhi", source="page"))
    resume = read_resume(path, golden, NOW)
    assert [p.cue for p in resume.presses] == ["bin-ru", "bai-zhi"]
    assert resume.warnings == (f"{path}:3: not a whole log line (lost in a crash?): skipped",)


@pytest.mark.parametrize("session, message", [
    ({"rite": "xiangyin"}, "a log of rite 'xiangyin', not of 'golden'"),
    ({"variants": ["lost-odes"]}, "played with variants ['lost-odes'], this console has []"),
    ({"readings": {"a": "b"}}, "played with readings {'a': 'b'}, this console has {}"),
    ({"plan": "0123456789abcdef"}, "played with other timing"),
])
def test_a_log_of_another_show_is_refused_with_the_difference_named(tmp_path, golden, session, message):
    fields = {**session_fields(golden, resumed=False), **session}
    path = _log(tmp_path, golden, _line("go", 3.0, cue="bin-ru", source="page"), session=fields)
    with pytest.raises(InvalidInputError) as refused:
        read_resume(path, golden, NOW)
    assert f"{path}:1: {message}" in str(refused.value)


def test_the_plan_digest_follows_the_timing(repertoire, golden):
    sheet = load(DATA / "golden.yaml", repertoire=repertoire)
    from fractions import Fraction

    retimed = build(sheet, Options(timing={"bin-ru": Measurement(Fraction(12))}))
    assert plan_digest(golden) == plan_digest(build(sheet)) != plan_digest(retimed)


# -- a real console, killed and resumed ----------------------------------------------------------------


def _start(args: list[str]) -> tuple[subprocess.Popen[str], str]:
    child, url = start_console(DATA / "golden.yaml", *args)
    return child, str(url)


def _until(condition, what: str) -> None:
    """Poll *condition* until it holds, for at most 10 s."""
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_killed_console_resumed_from_its_log_continues_at_the_right_cue(tmp_path):
    log = tmp_path / "show.jsonl"
    proc, url = _start(["--log", str(log)])
    try:
        assert post(url, "go")["accepted"]
        _until(lambda: post(url, "go")["accepted"], "the guard never took a second GO")  # refused within it
        _until(lambda: (console_state(url)["current"] or {}).get("id") == "bai-zhi", "bai-zhi never started")
        before = console_state(url)["elapsed_s"]
        measured = time.monotonic()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    proc, url = _start(["--resume", str(log)])
    try:
        state = console_state(url)
        down = time.monotonic() - measured  # the rite went on meanwhile: the console down, then starting again
        assert state["current"]["id"] == "bai-zhi" and state["resumed"].startswith("resumed from the log at bai-zhi")
        assert state["elapsed_s"] >= before + down - 0.2 and state["in_cue_s"] >= down - 0.2  # all of it counts
        assert post(url, "go")["accepted"]
        _until(lambda: (console_state(url)["current"] or {}).get("id") == "ge", "the GO after the resume never ran")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(e["event"], e.get("cue"), e.get("resumed")) for e in events] == [
        ("session", None, False), ("go", "bin-ru", None), ("go", "bai-zhi", None), ("session", None, True),
        ("go", "ge", None)]


def test_resume_with_from_or_another_log_is_a_usage_error(run, tmp_path):
    log = tmp_path / "show.jsonl"
    code, _, err = run("console", str(DATA / "golden.yaml"), "--no-midi", "--resume", str(log), "--from", "bai-zhi")
    assert code == 2 and "--resume and --from" in err
    code, _, err = run("console", str(DATA / "golden.yaml"), "--no-midi", "--resume", str(log),
                       "--log", str(tmp_path / "other.jsonl"))
    assert code == 2 and "--resume LOG goes on appending to LOG" in err


def test_resume_from_a_log_of_another_rite_exits_1_naming_the_line(run, tmp_path, golden):
    path = _log(tmp_path, golden, _line("go", 3.0, cue="bin-ru", source="page"),
                session={**session_fields(golden, resumed=False), "rite": "dashe"})
    code, out, err = run("console", str(DATA / "golden.yaml"), "--no-midi", "--resume", str(path))
    assert code == 1 and f"{path}:1: a log of rite 'dashe', not of 'golden'" in err and out == ""
