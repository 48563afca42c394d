"""Show control out and in (issue 31 §8): the state to OSC targets, read back on loopback with python-osc; MIDI
Show Control's bytes checked against MSC 1.0 (MMA RP-002); MSC in through the guard every GO passes."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import Any

import mido
import pytest
from pythonosc.osc_message import OscMessage

from yuesheng import build, load
from yuesheng.live.commands import Command
from yuesheng.live.control import Control
from yuesheng.live.osc import OscSender, check_targets
from yuesheng.live.player import Player, RealClock
from yuesheng.live.showcontrol import ALL_CALL, ShowOut, msc_data, msc_listener, parse_msc
from yuesheng.outputs.midi import sysex_message

from fakes import FakeClock

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def golden(repertoire):
    return build(load(DATA / "golden.yaml", repertoire=repertoire))


class Recorder:
    """A MIDI port that keeps what it is sent."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, message: Any) -> None:
        self.sent.append(message)


# -- MSC bytes, by the specification ------------------------------------------------------------------------------


def test_msc_go_and_stop_are_the_universal_real_time_sysex_of_msc_1_0():
    """MSC 1.0 §2, §4: F0 7F <device_ID> 02 <command_format> <command> <data> F7; GO is 01 with the Q_number in ASCII,
    STOP 02 (no Q_number: all); 7F is the all-call device; 10 the Sound (General) command format."""
    assert sysex_message(msc_data(Command.GO, 12)).bytes() == [0xF0, 0x7F, 0x7F, 0x02, 0x10, 0x01, 0x31, 0x32, 0xF7]
    assert sysex_message(msc_data(Command.STOP)).bytes() == [0xF0, 0x7F, 0x7F, 0x02, 0x10, 0x02, 0xF7]
    assert sysex_message(msc_data(Command.GO, 173, device=5)).hex() == "F0 7F 05 02 10 01 31 37 33 F7"
    with pytest.raises(ValueError):
        msc_data(Command.GO, 1, device=128)


@pytest.mark.parametrize("data, asked", [
    ((0x7F, 0x7F, 0x02, 0x10, 0x01, 0x31, 0x32), (Command.GO, "12")),
    ((0x7F, 0x05, 0x02, 0x7F, 0x01, 0x33, 0x2E, 0x35, 0x00, 0x31), (Command.GO, "3.5")),  # all types; Q_list after 00
    ((0x7F, 0x7F, 0x02, 0x10, 0x02), (Command.STOP, "")),
    ((0x7F, 0x06, 0x02, 0x10, 0x01, 0x31), None),  # another device
    ((0x7F, 0x7F, 0x02, 0x01, 0x01, 0x31), None),  # a lighting GO: not for a sound console
    ((0x7F, 0x7F, 0x02, 0x10, 0x03), None),  # RESUME: not taken
    ((0x7E, 0x7F, 0x02, 0x10, 0x01), None),  # non-real-time: not MSC
    ((0x7F, 0x7F, 0x06, 0x10, 0x01), None),  # MMC, not MSC
])
def test_msc_in_is_parsed_for_this_device_only(data, asked):
    assert parse_msc(data, device=5) == asked


def test_msc_in_goes_through_the_guard_every_go_passes():
    clock = FakeClock()
    control = Control(clock, guard=0.5)
    listen = msc_listener(control)
    go = mido.Message("sysex", data=msc_data(Command.GO, 3))
    stop = mido.Message("sysex", data=msc_data(Command.STOP))
    listen(go)
    clock.t += 0.2
    listen(go)  # within the guard: refused
    listen(stop)
    listen(stop)  # STOP is never refused
    listen(mido.Message("note_on", note=60))  # not MSC: nothing
    clock.t += 0.5
    listen(go)
    presses = []
    while (press := control.wait_until(clock.t)) is not None:
        presses.append((press.command, press.source))
    assert presses == [(Command.GO, "msc"), (Command.STOP, "msc"), (Command.STOP, "msc"), (Command.GO, "msc")]


# -- out: OSC state on loopback, MSC to a port ----------------------------------------------------------------------


class Playing:
    """The golden rite's player in a thread on the real clock, its control, and show control out of it."""

    def __init__(self, timeline, **out: Any) -> None:
        self.control = Control(RealClock(), guard=0.05)
        self.player = Player(timeline, Recorder(), RealClock(), control=self.control, stay=True, show=lambda _: None)
        self.out = ShowOut(self.player, **out)
        self.thread = threading.Thread(target=self.player.run, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.control.close("test over")
        self.thread.join(timeout=10)
        self.out.close()


def _messages(sock: socket.socket, until: Any, timeout: float = 5.0) -> list[OscMessage]:
    """The OSC messages received on *sock* until *until* holds of them (or the deadline)."""
    got: list[OscMessage] = []
    deadline = time.monotonic() + timeout
    while not until(got) and time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            got.append(OscMessage(sock.recvfrom(4096)[0]))
        except TimeoutError:
            break
    return got


def test_the_state_goes_out_on_every_change_to_the_osc_targets_named(golden):
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    sender = OscSender([receiver.getsockname()])
    playing = Playing(golden, osc=sender)
    try:
        assert playing.control.submit(Command.GO, "test")

        def shows(cue: str) -> Any:  # a whole state (its four messages, in order) naming *cue* has come
            return lambda got: any(m.address == "/yuesheng/cue" and m.params == [cue] for m in got[:-3]) \
                and got[-1].address == "/yuesheng/armed"

        got = _messages(receiver, shows("bin-ru"))
        last = {m.address: m.params for m in got}
        assert last["/yuesheng/cue"] == ["bin-ru"] and last["/yuesheng/number"] == [1]
        assert last["/yuesheng/armed"] == [""] and 0.0 <= last["/yuesheng/elapsed"][0] < 5
        time.sleep(0.06)
        assert playing.control.submit(Command.GO, "test")  # bai-zhi: 合樂 armed
        got = _messages(receiver, lambda got: shows("bai-zhi")(got) and any(
            m.address == "/yuesheng/armed" and m.params == ["ge"] for m in got))
        last = {m.address: m.params for m in got}
        assert last["/yuesheng/number"] == [2] and last["/yuesheng/armed"] == ["ge"]
    finally:
        playing.close()
        sender.close()
        receiver.close()


def test_state_goes_off_loopback_only_with_the_token_first():
    assert check_targets([("127.0.0.1", 9000), ("::1", 9000)], None) == ""
    why = check_targets([("192.0.2.10", 9000)], None)
    assert "--osc-out 192.0.2.10:9000" in why and "token" in why
    assert check_targets([("192.0.2.10", 9000)], "a-token-of-sixteen-chars") == ""
    sender = OscSender([("127.0.0.1", 9), ("192.0.2.10", 9000)], "a-token-of-sixteen-chars")  # nothing is sent here
    try:
        assert [t for _, _, t in sender.targets] == [None, "a-token-of-sixteen-chars"]
    finally:
        sender.close()


def test_the_token_is_the_first_argument_of_every_state_message(monkeypatch):
    """As a receiver off loopback would get it (the datagrams caught before they leave: network tests stay on
    127.0.0.1)."""
    sender = OscSender([("192.0.2.10", 9000)], "a-token-of-sixteen-chars")
    sent: list[tuple[bytes, Any]] = []
    sender.close()  # its own sockets, replaced by ones that keep what is sent
    monkeypatch.setattr(sender, "sockets", {family: type("S", (), {"sendto": lambda self, d, a: sent.append((d, a)),
                                                                   "close": lambda self: None})()
                                            for family in sender.sockets})
    sender.send_state("bin-ru", 1, 2.5, "")
    messages = [OscMessage(d) for d, _ in sent]
    assert [m.address for m in messages] == ["/yuesheng/cue", "/yuesheng/number", "/yuesheng/elapsed",
                                            "/yuesheng/armed"]
    assert all(m.params[0] == "a-token-of-sixteen-chars" for m in messages) and messages[0].params[1] == "bin-ru"
    assert {a for _, a in sent} == {("192.0.2.10", 9000)}


def test_msc_go_and_stop_go_out_to_the_port_whatever_the_source(golden):
    port = Recorder()
    playing = Playing(golden, msc=port)
    try:
        assert playing.control.submit(Command.GO, "page")
        time.sleep(0.06)
        assert playing.control.submit(Command.GO, "osc")
        assert playing.control.submit(Command.STOP, "key")
        deadline = time.monotonic() + 5
        while len(port.sent) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [m.bytes() for m in port.sent] == [[0xF0, 0x7F, ALL_CALL, 0x02, 0x10, 0x01, 0x31, 0xF7],
                                                  [0xF0, 0x7F, ALL_CALL, 0x02, 0x10, 0x01, 0x32, 0xF7],
                                                  [0xF0, 0x7F, ALL_CALL, 0x02, 0x10, 0x02, 0xF7]]
    finally:
        playing.close()


def test_msc_to_a_real_port_where_the_system_has_one(golden):
    try:
        port = mido.open_output("yuesheng-msc-test", virtual=True)
        listener = mido.open_input("yuesheng-msc-test")
    except Exception as exc:  # no ALSA sequencer or CoreMIDI on this machine
        pytest.skip(f"python-rtmidi cannot open a virtual port here: {exc}")
    with port, listener:
        playing = Playing(golden, msc=port)
        try:
            assert playing.control.submit(Command.GO, "test")
            deadline = time.monotonic() + 5
            received = None
            while received is None and time.monotonic() < deadline:
                received = listener.poll()
                time.sleep(0.01)
            assert received is not None and parse_msc(tuple(received.data)) == (Command.GO, "1")
        finally:
            playing.close()


def test_osc_out_off_loopback_without_a_token_is_a_usage_error(run):
    code, _, err = run("console", str(DATA / "golden.yaml"), "--no-midi", "--osc-out", "192.0.2.10:9000")
    assert code == 2 and "--osc-out 192.0.2.10:9000" in err and "token" in err
    code, _, err = run("console", str(DATA / "golden.yaml"), "--no-midi", "--msc-device", "200")
    assert code == 2 and "--msc-device 200" in err
