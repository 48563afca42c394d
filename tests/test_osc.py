"""OSC: exact addresses through a real UDP socket on loopback; patterns, oversize, deep and malformed datagrams
dropped with a notice, never raised; the token off loopback, else the console refuses to start; --osc-allow narrows
who may send, never replacing the token (a forged source address is not one)."""

from __future__ import annotations

import struct
import time
from pathlib import Path
from typing import Any

import pytest
from pythonosc.osc_bundle_builder import IMMEDIATELY, OscBundleBuilder
from pythonosc.osc_message_builder import OscMessageBuilder
from pythonosc.udp_client import SimpleUDPClient

from yuesheng.live.commands import Command
from yuesheng.live.control import Control
from yuesheng.live.osc import MAX_DATAGRAM, MAX_DEPTH, Gate, OscListener

DATA = Path(__file__).parent / "data"
TOKEN = "a-token-of-22-letters-"


class Clock:
    def now(self) -> float:
        return 0.0


def _message(address: str, *args: Any) -> bytes:
    builder = OscMessageBuilder(address)
    for arg in args:
        builder.add_arg(arg)
    return builder.build().dgram


def _bundle(inner: bytes) -> bytes:
    return b"#bundle\0" + b"\0" * 7 + b"\1" + struct.pack(">i", len(inner)) + inner


def _nested(inner: bytes, depth: int) -> bytes:
    for _ in range(depth):
        inner = _bundle(inner)
    return inner


def _pressed(control: Control) -> list[tuple[Command, str]]:
    out = []
    while not control.presses.empty():
        press = control.presses.get_nowait()
        out.append((press.command, press.cue))
    return out


class Heard:
    """A listener fed directly (the sender's address chosen by the test), its notices kept."""

    def __init__(self, gate: Gate | None = None) -> None:
        self.notices: list[str] = []
        self.control = Control(Clock(), guard=0.0)
        self.listener = OscListener(self.control, "127.0.0.1", 0, gate=gate, notify=self.notices.append)
        self.listener.notices.every = 0.0  # every notice shown: the test reads them

    def __call__(self, data: bytes, sender: str = "127.0.0.1") -> list[tuple[Command, str]]:
        self.listener.receive(data, sender)
        return _pressed(self.control)


@pytest.fixture
def heard():
    listener = Heard()
    yield listener
    listener.listener.close()


def test_osc_commands_arrive_through_a_real_udp_socket():
    control = Control(Clock(), guard=0.0)
    listener = OscListener(control, "127.0.0.1", 0, notify=lambda _: None)
    client = SimpleUDPClient(*listener.address)
    try:
        client.send_message("/yuesheng/go", [])
        client.send_message("/yuesheng/goto", "zhengge-bei")
        client.send_message("/yuesheng/fade", [])
        client.send_message("/yuesheng/stop", [])
        client.send_message("/yuesheng/goto", [])  # no cue: dropped
        got: list[Any] = []
        deadline = time.monotonic() + 5
        while len(got) < 4 and time.monotonic() < deadline:
            press = control.presses.get(timeout=5)
            got.append((press.command, press.source, press.cue))
    finally:
        client.close()
        listener.close()
    assert sorted(got, key=lambda g: g[0].value) == sorted(
        [(Command.GO, "osc", ""), (Command.GOTO, "osc", "zhengge-bei"), (Command.FADE, "osc", ""),
         (Command.STOP, "osc", "")], key=lambda g: g[0].value)
    assert not listener.thread.is_alive()


def test_a_pattern_never_fans_out_into_commands(heard):
    for pattern in ("/yuesheng/*", "/yuesheng/?o", "/yuesheng/{go,stop}", "/yuesheng/[gs]*", "/*/go"):
        assert heard(_message(pattern)) == []
    assert "is a pattern; send an exact address" in heard.notices[0]


def test_bundles_are_opened_to_a_bounded_depth_without_recursion(heard):
    assert heard(_nested(_message("/yuesheng/fade"), MAX_DEPTH)) == [(Command.FADE, "")]
    assert heard(_nested(_message("/yuesheng/fade"), MAX_DEPTH + 1)) == []
    assert heard.notices[-1].endswith(f"bundles nested over {MAX_DEPTH} deep")
    builder = OscBundleBuilder(IMMEDIATELY)
    builder.add_content(OscMessageBuilder("/yuesheng/go").build())
    builder.add_content(OscMessageBuilder("/yuesheng/stop").build())
    assert heard(builder.build().dgram) == [(Command.GO, ""), (Command.STOP, "")]  # in the bundle's order


def test_2000_nested_bundles_and_oversize_datagrams_are_dropped_not_raised(heard):
    """The hostile pass's RecursionError: a FADE inside 2,000 bundles (far over the datagram bound too)."""
    assert heard(_nested(_message("/yuesheng/fade"), 2000)) == []
    assert f"a datagram over {MAX_DATAGRAM} bytes" in heard.notices[-1]
    assert heard(_message("/yuesheng/goto", "x" * MAX_DATAGRAM)) == []
    many = b"".join(struct.pack(">i", 20) + _message("/yuesheng/stop").ljust(20, b"\0") for _ in range(40))
    assert heard(b"#bundle\0" + b"\0" * 8 + many) == []
    assert "over 16 messages" in heard.notices[-1]


@pytest.mark.parametrize("data, why", [
    (b"", "not an OSC message"),
    (b"yuesheng/go\0", "does not start with '/'"),
    (b"/yuesheng/go\0\0\0\0,b\0\0\0\0\0\1x\0\0\0", "argument types ',b'"),
    (b"/yuesheng/go\0\0\0\0,i\0\0\0\1", "not an OSC message"),
    (b"/yuesheng/goto\0\0,s\0\0\xff\xfe\0\0", "not an OSC message"),
    (b"#bundle\0\0\0\0\0\0\0\0\1\xff\xff\xff\xf0", "a bundle element of size -16"),
    (b"#bundle\0\0\0\0\0\0\0\0\1\0\0", "size runs past the end"),
    (_message("/yuesheng/launch"), "unknown address '/yuesheng/launch'"),
    (_message("/yuesheng/goto", 3), "needs a cue id"),
])
def test_malformed_datagrams_are_dropped_with_a_notice(heard, data, why):
    assert heard(data) == []
    assert why in heard.notices[-1]


def test_notices_of_a_flood_are_one_a_second_counting_the_rest():
    control, notices = Control(Clock(), guard=0.0), list[str]()
    listener = OscListener(control, "127.0.0.1", 0, notify=notices.append)
    try:
        for _ in range(1000):
            listener.receive(_message("/yuesheng/*"), "127.0.0.1")
        listener.notices.last -= 1.0  # a second later
        listener.receive(b"", "127.0.0.1")
    finally:
        listener.close()
    assert len(notices) == 2 and "(and 999 more dropped since the last notice)" in notices[1]


def test_with_a_token_a_sender_puts_it_first():
    heard = Heard(Gate(TOKEN))
    try:
        assert heard(_message("/yuesheng/go")) == []
        assert heard(_message("/yuesheng/go", "wrong-token-of-22-lett")) == []
        assert "no token first" in heard.notices[-1]
        assert heard(_message("/yuesheng/go", TOKEN)) == [(Command.GO, "")]
        assert heard(_message("/yuesheng/goto", TOKEN, "zhengge-bei")) == [(Command.GOTO, "zhengge-bei")]
        assert heard(_message("/yuesheng/goto", "zhengge-bei")) == []
    finally:
        heard.listener.close()


def test_the_allow_list_narrows_who_may_send_and_never_replaces_the_token():
    """A UDP source address is forged in one line: with the token set, an allowed sender without it is refused."""
    heard = Heard(Gate(TOKEN, ["10.9.8.7"]))
    try:
        assert heard(_message("/yuesheng/stop"), "10.9.8.7") == []  # the forged source of issue 34: not obeyed
        assert heard(_message("/yuesheng/go", TOKEN), "10.9.8.7") == [(Command.GO, "")]
        assert heard(_message("/yuesheng/go", TOKEN), "::ffff:10.9.8.7") == [(Command.GO, "")]
        assert heard(_message("/yuesheng/go", TOKEN), "192.168.1.99") == []  # the token, but not from the list
    finally:
        heard.listener.close()


def test_on_loopback_without_a_token_the_allow_list_still_narrows():
    heard = Heard(Gate(None, ["127.0.0.1"]))
    try:
        assert heard(_message("/yuesheng/go"), "127.0.0.1") == [(Command.GO, "")]
        assert heard(_message("/yuesheng/go"), "127.0.0.2") == []
    finally:
        heard.listener.close()


def test_bound_to_every_interface_a_datagram_without_the_token_is_refused():
    """0.0.0.0 is off loopback; the test's datagrams still go only through 127.0.0.1."""
    control, notices = Control(Clock(), guard=0.0), list[str]()
    listener = OscListener(control, "0.0.0.0", 0, gate=Gate(TOKEN), notify=notices.append)
    client = SimpleUDPClient("127.0.0.1", listener.address[1])
    try:
        client.send_message("/yuesheng/go", [])
        client.send_message("/yuesheng/stop", [TOKEN])
        press = control.presses.get(timeout=5)
    finally:
        client.close()
        listener.close()
    assert (press.command, press.source) == (Command.STOP, "osc") and control.presses.empty()
    assert notices and "no token first" in notices[0]


@pytest.fixture
def served(monkeypatch):
    """The console's command line up to serving: what it would serve with (the token, the OSC listener)."""
    from yuesheng.cli import console as cli_console

    seen: dict[str, object] = {}

    def fake_serve(timeline, player, control, listener, token):
        seen.update(token=token)
        return "served\n"

    monkeypatch.setattr(cli_console, "_serve", fake_serve)
    monkeypatch.delenv("YUESHENG_TOKEN", raising=False)
    return seen


def test_osc_off_loopback_without_the_token_refuses_to_start_even_with_an_allow_list(run, served, monkeypatch):
    golden = str(DATA / "golden.yaml")
    code, out, err = run("console", golden, "--no-midi", "--osc", "0.0.0.0:0")
    assert code == 2 and out == "" and "--osc 0.0.0.0: OSC off loopback would take GO and STOP from anyone" in err
    assert "give the console a token: YUESHENG_TOKEN=" in err
    assert served == {}
    code, _, err = run("console", golden, "--no-midi", "--osc", "0.0.0.0:0", "--osc-allow", "192.168.1.20")
    assert code == 2 and "--osc-allow narrows who may send" in err and "never replaces the token" in err
    assert served == {}
    code, _, err = run("console", golden, "--no-midi", "--osc", "0.0.0.0:0", "--osc-allow", "tablet")
    assert code == 2 and "--osc-allow 'tablet': expected an IP address" in err
    monkeypatch.setenv("YUESHENG_TOKEN", TOKEN)
    code, _, err = run("console", golden, "--no-midi", "--osc", "0.0.0.0:0")
    assert code == 0 and served["token"] == TOKEN, err
    code, _, err = run("console", golden, "--no-midi", "--osc", "127.0.0.1:0")  # loopback: no token needed
    assert code == 0, err
