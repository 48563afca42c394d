"""Live playback with a fake clock and a capturing port: order and times, GO, held 金奏, panic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from yuesheng import build, load
from yuesheng.errors import UnknownNameError
from yuesheng.live.commands import Command
from yuesheng.live.control import Control, Press
from yuesheng.live.cueing import FADE, Playing
from yuesheng.live.player import Player
from yuesheng.outputs.midi import live_messages
from yuesheng.timeline import TICKS_PER_SECOND

from fakes import FakeClock

DATA = Path(__file__).parent / "data"


class FakeGo:
    """GO presses at given times; waiting moves the fake clock."""

    def __init__(self, clock: FakeClock, presses: list[float]) -> None:
        self.clock, self.presses = clock, list(presses)

    def wait_until(self, deadline: float | None) -> Press | None:
        if self.presses and (deadline is None or self.presses[0] <= deadline):
            self.clock.t = max(self.clock.t, self.presses.pop(0))
            return Press(Command.GO, self.clock.t, "test")
        if deadline is None:
            raise AssertionError("waiting for a GO that never comes")
        self.clock.t = max(self.clock.t, deadline)
        return None


class Capture:
    def __init__(self, clock: FakeClock, fail_after: int | None = None, error: BaseException | None = None) -> None:
        self.sent: list[Any] = []
        self.clock, self.fail_after, self.error = clock, fail_after, error

    def send(self, message) -> None:
        if self.fail_after is not None and len(self.sent) >= self.fail_after and self.error is not None:
            error, self.error = self.error, None
            raise error
        self.sent.append((self.clock.now(), message))


@pytest.fixture(scope="module")
def golden(repertoire):
    return build(load(DATA / "golden.yaml", repertoire=repertoire))


def _ons(port: Capture, cue_notes: set[int] | None = None):
    return [(t, m) for t, m in port.sent if m.type == "note_on" and (cue_notes is None or m.channel in cue_notes)]


def test_auto_mode_sends_every_message_at_its_time_in_order(golden):
    clock = FakeClock()
    port = Capture(clock)
    player = Player(golden, port, clock)
    player.run()
    setup, timed = live_messages(golden)
    assert [m for _, m in port.sent[: len(setup)]] == setup
    played = port.sent[len(setup):]
    assert [t for t, _ in played] == sorted(t for t, _ in played)
    assert sorted((round(t, 6), str(m)) for t, m in played) == sorted(
        (round(tick / TICKS_PER_SECOND, 6), str(m)) for tick, _, m in timed)
    for (t1, a), (t2, b) in zip(played, played[1:], strict=False):  # at one moment, note-offs first
        assert not (t1 == t2 and a.type == "note_on" and b.type == "note_off")


def test_manual_mode_follows_go_and_holds_the_jinzou_until_its_action(golden):
    clock = FakeClock()
    port = Capture(clock)
    shown: list[str] = []
    Player(golden, port, clock, control=FakeGo(clock, [0.0, 30.0, 70.0]), show=shown.append).run()
    bells = [(t, m) for t, m in port.sent if m.type == "note_on" and m.channel == 4]  # 鐘
    assert max(t for t, _ in bells) == pytest.approx(31.0)  # the phrase in progress ends at 32 s
    assert len(bells) == 32  # 8-stroke figure repeated: 0..31 s
    offs = [(t, m) for t, m in port.sent if m.type == "note_off" and m.channel == 4]
    assert max(t for t, _ in offs) == pytest.approx(32.0)
    sung = [t for t, m in port.sent if m.type == "note_on" and m.channel == 0]
    assert min(sung) == pytest.approx(35.0)  # 合樂 starts 5 s after the GO of bai-zhi
    drums = [t for t, m in port.sent if m.type == "note_on" and m.channel == 9 and t > 60]
    assert min(drums) == pytest.approx(75.0)  # 射節 starts 5 s after the GO of zhengge-bei
    assert shown[0].startswith("next GO 1/5") and "bai-zhi" in shown[1]  # 5 points: 3 actions, 2 of music
    assert any("♪ 合樂 騶虞×3 (armed: starts by itself in 5 s)" in line for line in shown)


def test_an_early_go_cuts_the_held_music_at_its_phrase(golden):
    clock = FakeClock()
    port = Capture(clock)
    Player(golden, port, clock, control=FakeGo(clock, [0.0, 5.0, 20.0])).run()
    bells = [t for t, m in port.sent if m.type == "note_on" and m.channel == 4]
    assert max(bells) == pytest.approx(7.0) and len(bells) == 8


def test_go_presses_inside_the_guard_are_ignored(golden):
    clock = FakeClock()
    control = Control(clock, guard=0.5)
    accepted = []
    for t in (0.0, 0.2, 30.0, 30.3, 70.0):
        clock.t = t
        if control.submit(Command.GO, "test"):
            accepted.append(t)
    assert accepted == [0.0, 30.0, 70.0]
    clock.t = 0.0
    port = Capture(clock)
    Player(golden, port, clock, control=FakeGo(clock, accepted)).run()
    sung = [t for t, m in port.sent if m.type == "note_on" and m.channel == 0]
    assert min(sung) == pytest.approx(35.0)


def test_no_drift_over_half_an_hour_of_actions(repertoire):
    timeline = build(load(DATA / "mini_xiangyin.yaml", repertoire=repertoire))
    clock = FakeClock()
    port = Capture(clock)
    player = Player(timeline, port, clock)
    player.run()
    _, timed = live_messages(timeline)
    planned = sorted(tick / TICKS_PER_SECOND for tick, _, _ in timed)
    assert planned[-1] > 1600  # nearly half an hour of actions, each re-anchored on its estimated start
    # each where the timeline puts it
    assert sorted(due for due, _, _ in player.sent) == pytest.approx(planned, abs=1e-9)
    assert all(sent == pytest.approx(due, abs=1e-9) for due, sent, _ in player.sent)


@pytest.mark.parametrize("error", [KeyboardInterrupt(), OSError("port went away")])
def test_interruption_sends_all_notes_off_on_every_channel(golden, error):
    clock = FakeClock()
    port = Capture(clock, fail_after=40, error=error)
    player = Player(golden, port, clock)
    with pytest.raises(type(error)):
        player.run()
    tail = [m for _, m in port.sent[40:]]
    assert {(m.channel, m.control) for m in tail} == {(c, cc) for c in player.channels for cc in (120, 123)}
    assert 9 in player.channels and 0 in player.channels


def test_start_from_a_cue(golden):
    clock = FakeClock()
    port = Capture(clock)
    Player(golden, port, clock, start="zhengge-bei").run()
    ons = [(t, m) for t, m in port.sent if m.type == "note_on"]
    assert min(t for t, _ in ons) == pytest.approx(5.0)  # 射節 5 s after zhengge-bei
    assert not [m for _, m in ons if m.channel == 4]  # no bells: they were before


def test_start_from_an_unknown_cue(golden):
    with pytest.raises(UnknownNameError, match="did you mean 'zhengge-bei'"):
        Player(golden, Capture(FakeClock()), FakeClock(), start="zhengge")


class _CapturePort(Capture):
    def close(self) -> None:
        self.closed = True


def _appended(ports: list[Any], port: Any) -> Any:
    ports.append(port)
    return port


def _patch(monkeypatch, port_factory):
    clock = FakeClock()
    monkeypatch.setattr("yuesheng.live.player.RealClock", lambda: clock)
    monkeypatch.setattr("yuesheng.outputs.midi.open_output", lambda name: port_factory(clock))
    return clock


def test_play_command_auto(run, monkeypatch):
    ports: list[Any] = []
    _patch(monkeypatch, lambda clock: _appended(ports, _CapturePort(clock)))
    code, out, _ = run("play", str(DATA / "golden.yaml"), "--auto")
    assert code == 0 and out.startswith("played 鄉射禮") and ports[0].closed
    assert len([m for _, m in ports[0].sent if m.type == "note_on"]) > 300


def test_play_command_interrupted_is_a_clean_stop(run, monkeypatch):
    ports: list[Any] = []
    _patch(monkeypatch, lambda clock: _appended(ports, _CapturePort(clock, 30, KeyboardInterrupt())))
    code, out, _ = run("play", str(DATA / "golden.yaml"))
    assert code == 0 and out.startswith("stopped: all notes off")
    assert {m.control for _, m in ports[0].sent[30:]} == {120, 123}


def test_play_command_port_failure_exits_1(run, monkeypatch):
    _patch(monkeypatch, lambda clock: _CapturePort(clock, 30, OSError("device unplugged")))
    code, _, err = run("play", str(DATA / "golden.yaml"))
    assert code == 1 and "device unplugged" in err and "all notes off" in err


def test_play_command_missing_port_is_a_clear_error(run):
    code, _, err = run("play", str(DATA / "golden.yaml"), "--port", "no such port")
    assert code == 1 and "cannot open MIDI output no such port" in err


def test_play_command_unknown_from_cue_is_a_usage_error(run, monkeypatch):
    _patch(monkeypatch, lambda clock: _CapturePort(clock))
    assert run("play", str(DATA / "golden.yaml"), "--from", "nosuch")[0] == 2


def test_a_real_virtual_port_when_the_system_has_one():
    mido = pytest.importorskip("mido")
    try:
        port = mido.open_output("yuesheng-test", virtual=True)
        listener = mido.open_input("yuesheng-test")
    except Exception as exc:  # no ALSA sequencer or CoreMIDI on this machine
        pytest.skip(f"python-rtmidi cannot open a virtual port here: {exc}")
    import time

    from yuesheng.live.player import RealClock
    from yuesheng.music.lulu import Realization
    from yuesheng.timeline import Event, EventKind, Timeline

    notes = tuple(Event(start_tick=n * 96, length_ticks=48, kind=EventKind.NOTE, cue="c", part="瑟", key=60 + n,
                        velocity=80) for n in range(5))
    timeline = Timeline(rite="t", rite_id="t", events=notes, realization=Realization())
    with port, listener:
        Player(timeline, port, RealClock()).run()
        received: list[Any] = []
        deadline = time.monotonic() + 5
        while len(received) < 10 and time.monotonic() < deadline:  # the port delivers in its own time
            received += [m for m in listener.iter_pending() if m.type in ("note_on", "note_off")]
            time.sleep(0.01)
    assert [(m.type, m.note) for m in received] == [(t, 60 + n) for n in range(5) for t in ("note_on", "note_off")]


def test_realtime_raises_priority_while_playing_and_restores_it():
    import os
    import sys

    from yuesheng.live.player import SWITCH_INTERVAL, realtime

    interval, policy = sys.getswitchinterval(), os.sched_getscheduler(0)
    with realtime() as in_effect:
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
        assert "switch interval" in in_effect
        if in_effect.startswith("SCHED_FIFO"):
            assert os.sched_getscheduler(0) == os.SCHED_FIFO
    assert sys.getswitchinterval() == interval and os.sched_getscheduler(0) == policy


def test_player_reports_the_priority_it_ran_at(golden):
    clock = FakeClock()
    player = Player(golden, Capture(clock), clock)
    player.run()
    assert "switch interval" in player.priority


class Script:
    """Commands at given times: (time, command, cue); waiting moves the fake clock; QUIT at *until*."""

    def __init__(self, clock: FakeClock, presses: list[tuple[float, Command, str]], until: float = 600.0) -> None:
        self.clock, self.presses, self.until = clock, list(presses), until

    def wait_until(self, deadline: float | None) -> Press | None:
        if self.presses and (deadline is None or self.presses[0][0] <= deadline):
            at, command, cue, *silence = self.presses.pop(0)  # type: ignore[var-annotated]
            self.clock.t = max(self.clock.t, at)
            return Press(command, self.clock.t, "test", cue, bool(silence))
        if deadline is None or (not self.presses and self.clock.t >= self.until):
            return Press(Command.QUIT, self.clock.t, "test", "script ended")
        self.clock.t = max(self.clock.t, deadline)
        return None


class Entries:
    def __init__(self) -> None:
        self.lines: list[tuple[str, float, dict[str, Any]]] = []

    def write(self, event: str, mono: float, **fields) -> None:
        self.lines.append((event, mono, fields))


BELLS, SUNG, DRUMS = 4, 0, 9


def _play(golden, presses):
    clock = FakeClock()
    port, log = Capture(clock), Entries()
    player = Player(golden, port, clock, control=Script(clock, presses), log=log, stay=True)
    player.run()
    return port.sent, log.lines, player


def _statuses(golden, presses):
    """The player after *presses*, and its status at every wait: what a reader of it saw, moment by moment."""
    clock = FakeClock()
    states = []

    class Probe(Script):
        def wait_until(self, deadline):
            states.append(player.status())
            return super().wait_until(deadline)

    player = Player(golden, Capture(clock), clock, control=Probe(clock, presses), stay=True)
    player.run()
    return player, states


def _ons_on(sent, channel):
    return [t for t, m in sent if m.type == "note_on" and m.channel == channel]


def test_stop_all_silences_every_channel_at_once_and_the_next_go_goes_on(golden):
    sent, log, player = _play(golden, [(0.0, Command.GO, ""), (10.0, Command.STOP, ""), (30.0, Command.GO, "")])
    panic = [(t, m.channel, m.control) for t, m in sent if m.type == "control_change" and m.control in (120, 123)]
    assert {(c, cc) for t, c, cc in panic if t == 10.0} == {(c, cc) for c in player.channels for cc in (120, 123)}
    assert max(_ons_on(sent, BELLS)) < 10.0  # the held 肆夏 stopped at once
    assert min(_ons_on(sent, SUNG)) == pytest.approx(35.0)  # the next GO plays the next action
    assert [(e, t, f["cue"]) for e, t, f in log] == [("go", 0.0, "bin-ru"), ("stop", 10.0, "bin-ru"),
                                                     ("go", 30.0, "bai-zhi"), ("go", 35.0, "ge")]
    assert log[-1][2]["source"] == "auto"  # 合樂 followed its action by itself


def test_fade_lowers_the_held_music_then_stops_it(golden):
    sent, log, _ = _play(golden, [(0.0, Command.GO, ""), (10.0, Command.FADE, "")])
    volume = [(t, m.value) for t, m in sent if m.type == "control_change" and m.control == 7 and m.channel == BELLS]
    steps = [v for t, v in volume if t < 10.0 + FADE]
    assert steps == sorted(steps, reverse=True) and steps[0] < 100 and len(steps) > 10
    assert volume[-2:] == [(10.0 + FADE, 0), (10.0 + FADE, 100)]  # silent, then the volume restored for later music
    bells = _ons_on(sent, BELLS)
    assert any(10.0 < t < 10.0 + FADE for t in bells) and max(bells) < 10.0 + FADE
    offs = [m for t, m in sent if t == 10.0 + FADE and m.type == "control_change" and m.control == 123]
    assert {m.channel for m in offs} >= {BELLS}
    assert log[-1][0] == "fade"


def test_goto_jumps_forward_and_the_next_go_plays_from_there(golden):
    sent, log, _ = _play(golden, [(0.0, Command.GO, ""), (5.0, Command.GOTO, "zhengge-bei", True),
                                  (20.0, Command.GO, "")])
    assert min(t for t in _ons_on(sent, SUNG)) == pytest.approx(25.0)  # 合樂 jumped over: the next song is 騶虞
    assert min(t for t in _ons_on(sent, DRUMS) if t > 5.0) == pytest.approx(25.0)  # 射節 5 s after the GO
    assert [(e, f["cue"]) for e, _, f in log] == [("go", "bin-ru"), ("goto", "zhengge-bei"), ("go", "zhengge-bei"),
                                                  ("go", "she")]


def test_goto_back_replays_a_cue(golden):
    sent, _, _ = _play(golden, [(0.0, Command.GO, ""), (3.0, Command.GO, ""), (40.0, Command.GOTO, "bai-zhi", True),
                                (50.0, Command.GO, "")])
    sung = _ons_on(sent, SUNG)
    assert min(sung) == pytest.approx(8.0) and min(t for t in sung if t > 40.0) == pytest.approx(55.0)


def test_goto_an_unknown_cue_is_reported_not_fatal(golden):
    clock = FakeClock()
    shown: list[str] = []
    player = Player(golden, Capture(clock), clock, control=Script(clock, [(1.0, Command.GOTO, "nosuch")]),
                    show=shown.append, stay=True)
    player.run()
    assert any("no cue 'nosuch'" in line for line in shown) and player.ended == "script ended"


def test_status_reports_the_current_and_next_cue_and_what_plays(golden):
    player, states = _statuses(golden, [(0.0, Command.GO, "")])
    before = states[0]
    assert before.current is None and before.next == "bin-ru" and before.playing == () and before.first_tick is None
    after_go = next(s for s in states if s.current == "bin-ru")
    assert after_go.next == "bai-zhi" and after_go.current_started == 0.0 and after_go.first_started == 0.0
    assert Playing("sixia", "bai-zhi") in after_go.playing and after_go.actions[:2] == ("bin-ru", "bai-zhi")
    with pytest.raises(AttributeError):
        after_go.current = "changed"  # a frozen snapshot: the player's later changes cannot reach it, nor the reader's


def test_when_no_command_can_come_the_queued_music_plays_out_and_held_music_ends_at_its_phrase(golden):
    clock = FakeClock()
    port = Capture(clock)
    player = Player(golden, port, clock, control=Script(clock, [(0.0, Command.GO, ""), (2.0, Command.QUIT, "closed")]))
    player.run()
    bells = _ons_on(port.sent, BELLS)
    assert player.ended == "closed" and max(bells) == pytest.approx(3.0)  # the phrase in progress at 2 s ends at 4 s
    assert not _ons_on(port.sent, SUNG)  # the next action never came


# -- music on its own GO -----------------------------------------------------------------------------


def test_music_after_an_action_is_armed_then_follows_its_pre_wait_and_is_not_shown_playing_before(golden):
    player, states = _statuses(golden, [(0.0, Command.GO, ""), (3.0, Command.GO, "")])
    assert player.actions == ("bin-ru", "bai-zhi", "ge", "zhengge-bei", "she")  # huo begins with she
    armed = next(s for s in states if s.current == "bai-zhi")
    assert armed.next == "ge" and armed.armed == ("ge",) and armed.follow_at == 8.0  # bai-zhi's 5 s pre-wait
    assert "ge" not in {p.cue for p in armed.playing}  # armed, not sounding
    sounding = next(s for s in states if s.current == "ge")
    assert "ge" in {p.cue for p in sounding.playing} and sounding.current_started == 8.0


def test_the_next_go_during_the_pre_wait_brings_the_music_in_at_once(golden):
    sent, log, _ = _play(golden, [(0.0, Command.GO, ""), (3.0, Command.GO, ""), (4.5, Command.GO, "")])
    assert min(_ons_on(sent, SUNG)) == pytest.approx(4.5)  # not at 8 s, the end of bai-zhi's estimate
    assert [(f["cue"], t, f["source"]) for _, t, f in log][-1] == ("ge", 4.5, "test")


def test_without_follow_music_waits_for_its_own_go(golden):
    clock = FakeClock()
    port = Capture(clock)
    presses = [(0.0, Command.GO, ""), (3.0, Command.GO, ""), (40.0, Command.GO, "")]
    Player(golden, port, clock, control=Script(clock, presses), stay=True, follow=False).run()
    assert min(_ons_on(port.sent, SUNG)) == pytest.approx(40.0)


def test_a_jump_keeps_the_music_sounding_and_makes_the_cue_before_it_current(golden):
    presses = [(0.0, Command.GO, ""), (3.0, Command.GO, ""), (20.0, Command.GOTO, "zhengge-bei")]
    player, states = _statuses(golden, presses)
    sent = player.port.sent
    assert any(20.0 < t < 60.0 for t in _ons_on(sent, SUNG))  # 合樂 sings on through the jump
    after = next(s for s in states if s.now >= 20.0)
    assert after.current == "ge" and after.current_started == 20.0 and after.follow_at is None


def test_while_playing_the_build_is_frozen_and_the_collector_stays_on(golden):
    """The collector is never off while a rite plays (a console's web server shares the process): what was built is
    frozen out of its reach, and it collects at Python's own thresholds; all is restored afterwards."""
    import gc

    from yuesheng.process import LIVE_THRESHOLDS

    clock = FakeClock()
    seen = []

    class Watching(Script):
        def wait_until(self, deadline):
            seen.append((gc.isenabled(), gc.get_freeze_count() > 0, gc.get_threshold()))
            return super().wait_until(deadline)

    thresholds, frozen = gc.get_threshold(), gc.get_freeze_count()
    Player(golden, Capture(clock), clock, control=Watching(clock, [(0.0, Command.GO, "")]), stay=True).run()
    assert seen and set(seen) == {(True, True, LIVE_THRESHOLDS)}
    assert (gc.get_threshold(), gc.get_freeze_count()) == (thresholds, frozen)
