"""GO sources: one guard across sources, the terminal, a MIDI pedal (OSC: test_osc.py)."""

from __future__ import annotations

import mido
import pytest

from yuesheng.errors import InvalidValueError
from yuesheng.live.commands import Command
from yuesheng.live.control import Control, Pedal, read_keyboard


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def _drain(control: Control) -> list[tuple[Command, str, str]]:
    out = []
    while (press := control.wait_until(control.clock.now())) is not None:
        out.append((press.command, press.source, press.cue))
    return out


def test_one_guard_serves_every_source():
    clock = Clock()
    control = Control(clock, guard=0.5)
    assert control.submit(Command.GO, "page")
    clock.t = 0.3
    assert not control.submit(Command.GO, "pedal")  # a double GO from another source is still a double GO
    assert control.submit(Command.STOP, "osc")  # STOP is never guarded
    clock.t = 0.6
    assert control.submit(Command.GO, "key")
    assert [c for c, _, _ in _drain(control)] == [Command.GO, Command.STOP, Command.GO]


def test_a_flood_of_fades_or_jumps_is_at_most_two_a_second_and_stop_is_never_refused():
    """The hostile pass sent 20,000 FADEs in 2.4 s, all accepted; now FADE and GOTO have the GO guard, each its own."""
    clock = Clock()
    control = Control(clock, guard=0.5)
    accepted = {command: 0 for command in (Command.FADE, Command.GOTO, Command.STOP)}
    for n in range(20_000):
        clock.t = n * 0.00012  # 2.4 s
        for command in accepted:
            accepted[command] += control.submit(command, "page", "bin-ru" if command is Command.GOTO else "")
    assert accepted == {Command.FADE: 5, Command.GOTO: 5, Command.STOP: 20_000}
    assert control.submit(Command.GO, "page")  # a FADE or a jump does not hold back the next GO


def test_keyboard_lines_are_commands_and_the_end_of_input_closes_the_control():
    control = Control(Clock(), guard=0.0)
    notes: list[str] = []
    read_keyboard(control, ["\n", "s\n", "f\n", "g she-san\n", "what\n"], notify=notes.append).join(2)
    got = _drain(control)
    assert got[:4] == [(Command.GO, "key", ""), (Command.STOP, "key", ""), (Command.FADE, "key", ""),
                       (Command.GOTO, "key", "she-san")]
    assert got[4][0] is Command.QUIT and "input ended" in got[4][2]
    assert notes and "not 'what'" in notes[0]


def test_keyboard_end_of_input_keeps_the_control_open_when_other_sources_remain():
    control = Control(Clock(), guard=0.0)
    read_keyboard(control, [], close_at_end=False).join(2)
    assert _drain(control) == [] and control.ended == ""


@pytest.mark.parametrize("text, port, kind, number", [
    ("FootSwitch", "FootSwitch", "", None),
    ("FootSwitch:note60", "FootSwitch", "note", 60),
    ("Midi Through:Midi Through Port-0 14:0:cc64", "Midi Through:Midi Through Port-0 14:0", "cc", 64),
])
def test_pedal_names_a_port_and_optionally_a_note_or_controller(text, port, kind, number):
    assert Pedal.parse(text) == Pedal(port, kind, number)


@pytest.mark.parametrize("text", ["", ":cc64", "x:note128"])
def test_a_bad_pedal_is_a_clear_error(text):
    with pytest.raises(InvalidValueError, match="expected PORT"):
        Pedal.parse(text)


def test_pedal_presses_are_go_and_releases_are_not():
    clock = Clock()
    control = Control(clock, guard=0.0)
    on_message = Pedal("p", "cc", 64).listener(control)  # what mido's input callback would be given
    for message in (mido.Message("control_change", control=64, value=127),
                    mido.Message("control_change", control=64, value=0),
                    mido.Message("control_change", control=1, value=127),
                    mido.Message("note_on", note=60, velocity=90)):
        on_message(message)
    assert _drain(control) == [(Command.GO, "pedal", "")]
    any_note = Pedal("p")
    assert any_note.pressed(mido.Message("note_on", note=36, velocity=100))
    assert not any_note.pressed(mido.Message("note_on", note=36, velocity=0))  # a note-on of velocity 0 is a release
