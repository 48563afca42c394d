"""The cueing state machine without a clock, a thread or a port: every transition given its moment, the queue read
by taking its messages in order (the golden rite: bin-ru, then 肆夏 held on the bells until bai-zhi; 合樂 5 s after
bai-zhi's GO; zhengge-bei; 射節 5 s after its GO)."""

from __future__ import annotations

from pathlib import Path

import pytest

from yuesheng import build, load
from yuesheng.live.commands import Command
from yuesheng.live.control import Press
from yuesheng.live.cueing import FADE, Cueing, Item, Outcome, Playing
from yuesheng.outputs.midi import live_messages
from yuesheng.timeline import Timeline

DATA = Path(__file__).parent / "data"
BELLS, SUNG, DRUMS = 4, 0, 9


@pytest.fixture(scope="module")
def golden(repertoire) -> Timeline:
    return build(load(DATA / "golden.yaml", repertoire=repertoire))


def _machine(golden: Timeline, *, manual: bool = True, follow: bool = True, start: float = 0.0) -> Cueing:
    machine = Cueing(golden, live_messages(golden)[1], manual=manual, follow=follow)
    machine.start(start)
    return machine


def _press(machine: Cueing, at: float, command: Command = Command.GO, cue: str = "", *,
           silence: bool = False) -> Outcome:
    return machine.press(Press(command, at, "test", cue, silence))


def _take_until(machine: Cueing, until: float) -> list[Item]:
    """The messages the machine gives, in order, up to *until* (those it drops left out): what a pump would send."""
    taken = []
    while (due := machine.due()) is not None and due < until:
        if (item := machine.take()) is not None:
            taken.append(item)
    return taken


def _ons(items: list[Item], channel: int) -> list[float]:
    return [i.due for i in items if i.message.type == "note_on" and i.message.channel == channel]


def test_before_the_first_go_nothing_sounds_and_the_next_point_is_the_first_action(golden):
    machine = _machine(golden)
    status = machine.status(0.0)
    assert (status.current, status.next, status.playing, status.armed) == (None, "bin-ru", (), ())
    assert machine.actions == ("bin-ru", "bai-zhi", "ge", "zhengge-bei", "she")
    assert machine.due() is None and machine.auto_go(None) is None  # manual: nothing fires by itself


def test_go_starts_the_action_and_its_held_music_from_the_moment_pressed(golden):
    machine = _machine(golden)
    outcome = _press(machine, 2.0)
    assert outcome == Outcome(outcome.line, False, ("go", "bin-ru"))
    assert outcome.line.startswith("▶ bin-ru: 賓入  |  next GO 2/5")
    assert machine.due() == 2.0  # the first stroke of 肆夏, at the GO
    status = machine.status(2.0)
    assert status.current == "bin-ru" and status.current_started == 2.0 and status.first_started == 2.0
    assert Playing("sixia", "bai-zhi") in status.playing and status.next == "bai-zhi"


def test_the_held_music_repeats_until_its_action_then_ends_at_its_phrase(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    early = _take_until(machine, 30.0)
    assert len(_ons(early, BELLS)) == 30  # repeating, one stroke a second, until its action's GO
    _press(machine, 30.0)  # bai-zhi: the phrase in progress ends at 32 s
    bells = _ons(early + _take_until(machine, 40.0), BELLS)
    assert max(bells) == pytest.approx(31.0) and len(bells) == 32


def test_music_after_an_action_is_armed_and_follows_its_pre_wait_unless_a_message_comes_first(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    _press(machine, 3.0)  # bai-zhi: 合樂 follows 5 s after
    status = machine.status(3.0)
    assert status.armed == ("ge",) and status.follow_at == 8.0 and status.next == "ge"
    assert "ge" not in {p.cue for p in status.playing}
    assert machine.auto_go(None) == 8.0 and machine.auto_go(8.0) == 8.0
    assert machine.auto_go(7.0) is None  # a message due at 7 s is sent first


def test_the_next_go_during_the_pre_wait_brings_the_armed_music_in_at_once(golden):
    machine = _machine(golden)
    for at in (0.0, 3.0):
        _press(machine, at)
    assert _press(machine, 4.5).log == ("go", "ge")
    assert min(_ons(_take_until(machine, 20.0), SUNG)) == 4.5
    assert machine.status(4.5).follow_at is None  # zhengge-bei is an action: it waits for its GO


def test_without_follow_armed_music_waits_for_its_own_go(golden):
    machine = _machine(golden, follow=False)
    for at in (0.0, 3.0):
        _press(machine, at)
    assert machine.follow_at() is None and machine.auto_go(None) is None


def test_stop_silences_forgets_the_queue_and_keeps_held_music_silent_until_a_jump(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    _take_until(machine, 10.0)
    assert _press(machine, 10.0, Command.STOP) == Outcome("", True, ("stop", "bin-ru"))
    assert machine.due() is None and machine.status(10.0).playing == ()
    _press(machine, 30.0)  # bai-zhi: the next GO goes on, and the stopped 肆夏 does not come back
    assert _ons(_take_until(machine, 100.0), BELLS) == []
    assert machine.status(30.0).current == "bai-zhi"


def test_fade_steps_the_held_music_down_and_cuts_it_at_its_end(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    _take_until(machine, 10.0)
    assert _press(machine, 10.0, Command.FADE) == Outcome("", False, ("fade", "bin-ru"))
    assert Playing("sixia", "bai-zhi") in machine.status(10.0 + FADE - 0.1).playing
    assert machine.status(10.0 + FADE).playing == ()  # what remains queued of it is past its cut
    items = _take_until(machine, 30.0)
    volume = [(i.due, i.message.value) for i in items
              if i.message.type == "control_change" and i.message.control == 7 and i.message.channel == BELLS]
    assert [v for _, v in volume[:-2]] == sorted((v for _, v in volume[:-2]), reverse=True) and len(volume) > 10
    assert volume[-2:] == [(10.0 + FADE, 0), (10.0 + FADE, 100)]
    assert max(_ons(items, BELLS)) < 10.0 + FADE


def test_a_jump_makes_the_cue_before_current_and_the_next_go_plays_the_target(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    assert _press(machine, 5.0, Command.GOTO, "zhengge-bei") == Outcome("", False, ("goto", "zhengge-bei"))
    status = machine.status(5.0)
    assert (status.current, status.current_started, status.next, status.follow_at) == ("ge", 5.0, "zhengge-bei", None)
    bells = _ons(_take_until(machine, 20.0), BELLS)  # 肆夏's action was jumped over: it ends at its phrase
    assert max(bells) == pytest.approx(7.0)
    _press(machine, 20.0)
    assert machine.auto_go(None) == 25.0  # 射節 armed again after the target's own GO, and follows it
    assert _press(machine, 25.0).log == ("go", "she")
    assert min(_ons(_take_until(machine, 40.0), DRUMS)) == pytest.approx(25.0)


def test_a_silencing_jump_forgets_everything_and_says_so(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    assert _press(machine, 5.0, Command.GOTO, "bai-zhi", silence=True).silence
    assert machine.due() is None and machine.status(5.0).playing == ()


def test_a_jump_to_an_unknown_cue_is_a_line_and_nothing_else(golden):
    machine = _machine(golden)
    assert _press(machine, 1.0, Command.GOTO, "nosuch") == Outcome("no cue 'nosuch' to jump to")
    assert machine.status(1.0).next == "bin-ru"


def test_a_go_past_the_last_point_changes_nothing(golden):
    machine = _machine(golden)
    for at in (0.0, 1.0, 2.0, 3.0, 4.0):
        _press(machine, at)
    assert machine.finished and _press(machine, 5.0) == Outcome()


def test_auto_mode_gives_itself_each_action_at_its_planned_time_from_the_start(golden):
    machine = _machine(golden, manual=False, start=100.0)
    assert machine.actions == ("bin-ru", "bai-zhi", "zhengge-bei")  # music is no point of its own
    assert machine.auto_go(None) == 100.0
    _press(machine, 100.0)
    assert machine.auto_go(None) == 110.0 and machine.auto_go(105.0) is None
    assert _press(machine, 110.0).line == ""  # no prompts in auto mode


def test_when_no_command_can_come_held_music_ends_at_its_phrase(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    machine.play_out(2.0)
    bells = _ons(_take_until(machine, 60.0), BELLS)
    assert machine.closed and max(bells) == pytest.approx(3.0)


def test_the_prompt_is_given_once_for_each_next_point(golden):
    machine = _machine(golden)
    assert machine.prompt_once(0.0).startswith("next GO 1/5")
    assert machine.prompt_once(0.0) == ""
    _press(machine, 0.0)
    assert machine.prompt_once(1.0) == ""  # the GO's own line said it
    _press(machine, 3.0)
    _press(machine, 4.0, Command.GOTO, "bai-zhi")
    assert "next GO 2/5" in machine.prompt_once(4.0)


def test_a_restore_replays_the_logged_commands_relative_to_now(golden):
    machine = Cueing(golden, live_messages(golden)[1], manual=True)
    line = machine.restore([Press(Command.GO, 460.0, "page", "bin-ru"), Press(Command.GO, 497.0, "page", "bai-zhi")],
                           500.0)
    status = machine.status(500.0)
    assert line.startswith("resumed from the log at bai-zhi") and status.resumed == line
    assert (status.current, status.current_started, status.first_started) == ("bai-zhi", 497.0, 460.0)
    assert status.follow_at == 502.0 and machine.due() is None  # nothing sounds: 合樂 is armed, 肆夏 has ended


def test_a_restore_says_held_music_restarted_once_and_never_also_from_a_position(golden):
    machine = Cueing(golden, live_messages(golden)[1], manual=True)
    line = machine.restore([Press(Command.GO, 494.0, "page", "bin-ru")], 500.0)
    assert line == "resumed from the log at bin-ru; ♪ 金奏 肆夏 restarted from its beginning"


def test_the_go_points_and_their_numbers_are_the_same_when_an_action_is_timed_to_last_no_time(repertoire, golden):
    """A fast rehearsal may time bai-zhi at 0 s, so that 合樂 begins on its tick: the music is still its own GO
    point, armed, and following at once; the count of points does not change."""
    from fractions import Fraction

    from yuesheng.timeline import Measurement, Options

    quick = build(load(DATA / "golden.yaml", repertoire=repertoire),
                  Options(timing={"bai-zhi": Measurement(Fraction(0))}))
    assert {t.cue.id: t.start_tick for t in quick.cues}["ge"] == {t.cue.id: t.start_tick for t in quick.cues}["bai-zhi"]
    machine = _machine(quick)
    assert machine.actions == _machine(golden).actions == ("bin-ru", "bai-zhi", "ge", "zhengge-bei", "she")
    _press(machine, 0.0)
    _press(machine, 3.0)  # bai-zhi: 合樂 is armed, with no pre-wait
    status = machine.status(3.0)
    assert status.next == "ge" and status.armed == ("ge",) and status.follow_at == 3.0
    assert "ge" not in {p.cue for p in status.playing}
    assert machine.queued["ge"] == 0  # its messages wait for its own GO, not bai-zhi's
    _press(machine, 3.5)
    assert machine.queued["ge"] > 0 and machine.status(3.5).current == "ge"


def test_a_go_naming_a_point_plays_that_point_and_what_sounds_plays_on(golden):
    """The page's playhead moved off NEXT: its GO names the point; the machine jumps there and plays it."""
    machine = _machine(golden)
    _press(machine, 0.0)  # bin-ru, with 肆夏 held
    assert _press(machine, 2.0, cue="zhengge-bei").log == ("go", "zhengge-bei")
    status = machine.status(2.0)
    assert (status.current, status.next, status.current_started) == ("zhengge-bei", "she", 2.0)
    assert "sixia" in machine.looping and machine.looping["sixia"].cut is not None  # its action was passed: it ends
    assert _press(machine, 3.0, cue="she").log == ("go", "she")  # naming the next point is a plain GO
    assert machine.status(3.0).current == "she"


def _press_value(machine: Cueing, at: float, command: Command, cue: str = "", value: float | None = None) -> Outcome:
    return machine.press(Press(command, at, "test", cue, False, value))


def _volumes(items: list[Item], channel: int) -> list[tuple[float, int]]:
    return [(i.due, i.message.value) for i in items
            if i.message.type == "control_change" and i.message.control == 7 and i.message.channel == channel]


def test_one_sounding_cue_stops_at_once_and_the_rest_plays_on(golden):
    """Issue 31 §6: STOP this — 肆夏 (on the bells) stopped alone at 4 s; nothing else is forgotten."""
    machine = _machine(golden)
    _press(machine, 0.0)
    _take_until(machine, 4.0)
    assert _press_value(machine, 4.0, Command.STOP_CUE, "sixia") == Outcome("", False, ("stop-cue", "sixia"))
    assert "sixia" not in {p.cue for p in machine.status(4.0).playing}
    items = _take_until(machine, 60.0)
    assert not [i for i in items if i.cue == "sixia" and i.message.type == "note_on"]
    assert {i.message.control for i in items if i.due == 4.0 and i.message.type == "control_change"
            and i.message.channel == BELLS} >= {120, 123}  # its channels' notes off at once
    _press(machine, 10.0)  # bai-zhi's GO goes on as planned; 肆夏 does not come back
    assert _ons(_take_until(machine, 100.0), BELLS) == []
    assert _press_value(machine, 100.0, Command.STOP_CUE, "ge").line == "ge: nothing of it sounds"  # said


def test_one_sounding_cue_fades_over_the_seconds_chosen(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    _take_until(machine, 4.0)
    assert _press_value(machine, 4.0, Command.FADE_CUE, "sixia", 1.5).log == ("fade-cue", "sixia")
    assert "sixia" in {p.cue for p in machine.status(5.4).playing}
    assert "sixia" not in {p.cue for p in machine.status(5.5).playing}
    volume = _volumes(_take_until(machine, 30.0), BELLS)
    assert volume[-2:] == [(5.5, 0), (5.5, 100)] and volume[0][0] > 4.0 and len(volume) > 10


def test_the_master_level_sets_every_channel_and_a_fade_ends_back_at_it(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    assert _press_value(machine, 1.0, Command.LEVEL, value=80).line == "master level 80"
    items = _take_until(machine, 2.0)
    assert {(c, v) for c in machine.channels for _, v in _volumes(items, c)} == {(c, 80) for c in machine.channels}
    _press(machine, 2.0, Command.FADE)
    volume = _volumes(_take_until(machine, 30.0), BELLS)
    assert volume[0][1] < 80 and volume[-1] == (2.0 + FADE, 80)  # down from the level, and back to it


def test_a_restore_sets_the_master_level_the_show_had(golden):
    machine = Cueing(golden, live_messages(golden)[1], manual=True)
    machine.restore([Press(Command.GO, 490.0, "page", "bin-ru"), Press(Command.LEVEL, 495.0, "page", "", False, 64)],
                    500.0)
    assert machine.level == 64
    items = _take_until(machine, 500.5)
    assert {(c, v) for c in machine.channels for _, v in _volumes(items, c)} == {(c, 64) for c in machine.channels}


def test_pause_silences_and_holds_everything_and_resume_goes_on_from_where_it_paused(golden):
    """Issue 31 §6: 肆夏 (one stroke a second from 0 s) paused at 4.5 s and resumed at 14.5 s: every channel's notes
    off at the pause, nothing due while paused, then the strokes go on from the fifth, ten seconds later."""
    machine = _machine(golden)
    _press(machine, 0.0)
    before = _take_until(machine, 4.5)
    paused = _press(machine, 4.5, Command.PAUSE)
    assert paused == Outcome("paused: RESUME goes on from here", True, ("pause", "bin-ru"))  # silence: notes off
    assert machine.due() is None and machine.status(9.0).paused == 4.5
    assert _press(machine, 5.0, Command.PAUSE) == Outcome("already paused: RESUME goes on")  # not logged again
    assert _press(machine, 14.5, Command.RESUME) == Outcome("resumed", False, ("resume", "bin-ru"))
    after = _take_until(machine, 30.0)
    assert _ons(before, BELLS) == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert _ons(after, BELLS)[:3] == [15.0, 16.0, 17.0] and machine.status(15.0).paused is None
    assert machine.status(15.0).current_started == 10.0  # the cue's clock held for the time paused


def test_music_resumed_continues_from_its_position_and_armed_music_waits_out_the_pause(golden):
    plain, paused = _machine(golden), _machine(golden)
    for machine in (plain, paused):
        _press(machine, 0.0)
        _take_until(machine, 30.0)
        _press(machine, 30.0)  # bai-zhi: 合樂 armed, following by itself after its pre-wait
    follow = paused.status(31.0).follow_at
    assert follow is not None and follow > 31.0
    _press(paused, 31.0, Command.PAUSE)
    assert paused.auto_go(None) is None and paused.status(35.0).follow_at is None  # no music starts while paused
    _press(paused, 41.0, Command.RESUME)
    assert paused.status(41.0).follow_at == pytest.approx(follow + 10.0)
    for machine, at in ((plain, follow), (paused, follow + 10.0)):
        _press(machine, at)  # 合樂 comes in
    sung = _ons(_take_until(plain, follow + 20.0), SUNG)
    first = _take_until(paused, follow + 12.0)
    _press(paused, follow + 12.0, Command.PAUSE)  # 2 s into 合樂, 5 s paused
    _press(paused, follow + 17.0, Command.RESUME)
    later = _ons(first + _take_until(paused, follow + 35.0), SUNG)
    shifted = [t + 10.0 + (5.0 if t >= follow + 2.0 else 0.0) for t in sung if t + 10 < follow + 30]
    assert later == pytest.approx(shifted)


def test_a_go_while_paused_resumes_then_goes_on_and_stop_forgets_what_was_paused(golden):
    machine = _machine(golden)
    _press(machine, 0.0)
    _take_until(machine, 2.5)
    _press(machine, 2.5, Command.PAUSE)
    outcome = _press(machine, 8.0)  # bai-zhi's GO: the show goes on, 肆夏 to the end of its phrase
    assert outcome.log == ("go", "bai-zhi") and machine.paused is None and machine.status(8.0).current == "bai-zhi"
    _press(machine, 9.0, Command.PAUSE)
    _press(machine, 10.0, Command.STOP)
    assert machine.paused is None and machine.due() is None and not machine.status(10.0).playing


def test_a_restore_of_a_paused_show_stays_paused_and_resume_goes_on_from_the_pause(golden):
    machine = Cueing(golden, live_messages(golden)[1], manual=True)
    line = machine.restore([Press(Command.GO, 490.0, "page", "bin-ru"), Press(Command.PAUSE, 494.5, "page")], 500.0)
    assert line == "resumed from the log at bin-ru; PAUSED (♪ 金奏 肆夏): RESUME goes on from where it paused"
    assert machine.status(500.0).paused == 494.5 and machine.due() is None
    _press(machine, 600.0, Command.RESUME)
    assert _ons(_take_until(machine, 603.0), BELLS) == [600.5, 601.5, 602.5]  # the stroke due at 495 s, and on
