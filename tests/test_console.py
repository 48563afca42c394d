"""The console: its logic over HTTP and WebSocket through Starlette's TestClient, with a fake clock driving a real
Player; on a real port only what needs one: the page driven in headless Chromium."""

from __future__ import annotations

import json
import queue
import re
import shutil
import signal
import threading
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from yuesheng import build, load
from yuesheng.live.commands import Command, Spec
from yuesheng.live.control import Control, Press
from yuesheng.live.cueing import FADE
from yuesheng.live.player import Player, RealClock
from yuesheng.web.console import PUSH, Console

from fakes import FakeClock
from served import start_console

DATA = Path(__file__).parent / "data"
ROOT = DATA.parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WALL = 1_800_000_000.0  # the console's wall clock in these tests (for the projected end)
BELLS = 4  # the held 肆夏's channel


class Port:
    """A MIDI port that records what it is sent, from the player's thread."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, Any]] = []

    def send(self, message: object) -> None:
        self.sent.append((time.perf_counter(), message))

    def controls(self, number: int) -> list[Any]:
        return [m for _, m in list(self.sent) if getattr(m, "type", "") == "control_change" and m.control == number]


class Entries:
    """A log that keeps its lines (and is never in trouble)."""

    trouble = ""

    def __init__(self) -> None:
        self.lines: list[tuple[str, float, dict[str, Any]]] = []

    def write(self, event: str, mono: float, **fields) -> None:
        self.lines.append((event, mono, fields))


class Stepped:
    """The control's commands, for the player: a message's time comes only once the test's clock has reached it."""

    def __init__(self, control: Control, clock: FakeClock) -> None:
        self.control, self.clock = control, clock

    def wait_until(self, deadline: float | None) -> Press | None:
        while True:
            try:
                return self.control.presses.get(timeout=0.005)
            except queue.Empty:
                if deadline is not None and self.clock.t >= deadline:
                    return None


class Live:
    """A console for the golden rite behind a TestClient, its player in a thread on a fake clock."""

    def __init__(self, timeline, token: str | None = None, log: bool = False, **views: Any) -> None:
        self.clock, self.port = FakeClock(), Port()
        self.control = Control(self.clock, guard=0.5)
        self.player = Player(timeline, self.port, self.clock, control=Stepped(self.control, self.clock), stay=True,
                             show=lambda _: None)
        # "testserver": the Host the TestClient's WebSockets carry, as a tablet's would carry the laptop's name
        self.log = Entries() if log else None
        console = Console(timeline, self.player, self.control, token=token, hosts=("testserver",), wall=lambda: WALL,
                          log=self.log, **views)
        self.client = TestClient(console.app(), base_url="http://127.0.0.1")
        self.thread = threading.Thread(target=self.player.run, daemon=True)
        self.thread.start()

    def command(self, command: str, cue: str = "", **extra: Any) -> bool:
        return bool(self.client.post("/command", json={"command": command, "cue": cue, **extra}).json()["accepted"])

    def settle(self, predicate: Any) -> dict[str, Any]:
        """The state, once *predicate* holds of it (the player's thread has handled the command)."""
        deadline = time.monotonic() + 5
        state: dict[str, Any]
        while not predicate(state := self.client.get("/state").json()):
            assert time.monotonic() < deadline, f"the state never got there: {state}"
            time.sleep(0.005)
        return state

    def close(self) -> None:
        self.control.close("test over")
        self.thread.join(timeout=10)
        assert not self.thread.is_alive(), "the player outlived the test"


@pytest.fixture(scope="module")
def golden(repertoire):
    return build(load(DATA / "golden.yaml", repertoire=repertoire))


@pytest.fixture
def live(golden):
    console = Live(golden)
    yield console
    console.close()


@pytest.fixture
def guarded(golden):
    console = Live(golden, token="s3cret")
    yield console
    console.close()


def test_before_the_first_go_the_page_shows_the_next_action_and_no_clock(live):
    state = live.client.get("/state").json()
    assert state["current"] is None and state["next"]["id"] == "bin-ru" and state["next"]["cite"] == "儀禮集釋 5-4a"
    assert state["playing"] == [] and state["ended"] == "" and state["planned_total_s"] == 228.0
    assert [state[k] for k in ("elapsed_s", "in_cue_s", "overrun_s", "projected_end")] == [None] * 4


def test_go_starts_the_next_action_and_the_clock_follows_the_fake_time(live):
    assert live.command("go")
    state = live.settle(lambda s: s["current"] is not None)
    assert state["current"]["id"] == "bin-ru" and state["next"]["id"] == "bai-zhi"
    assert state["playing"] == [{"cue": "sixia", "what": "金奏 肆夏", "until": "bai-zhi: 主人再拜 賓荅再拜"}]
    assert (state["elapsed_s"], state["in_cue_s"], state["overrun_s"]) == (0.0, 0.0, 0.0)
    live.clock.t = 14.0  # 4 s longer than bin-ru's planned 10 s
    state = live.client.get("/state").json()
    assert (state["elapsed_s"], state["in_cue_s"], state["overrun_s"], state["position_s"]) == (14.0, 14.0, 4.0, 10.0)
    assert state["projected_total_s"] == 232.0
    assert state["projected_end"] == (datetime.fromtimestamp(WALL, UTC)
                                      + timedelta(seconds=232.0 - 14.0)).isoformat(timespec="seconds")


def test_the_guard_refuses_a_go_too_soon_after_the_last(live):
    assert live.command("go")
    refused = live.client.post("/command", json={"command": "go"}).json()  # the same moment: a double press
    assert refused == {"accepted": False, "why": "within the 0.5 s guard of the last GO (a double press?)"}
    live.clock.t = 0.4
    assert not live.command("go")
    live.clock.t = 0.6
    assert live.command("go")
    state = live.settle(lambda s: s["current"] is not None and s["current"]["id"] == "bai-zhi")
    assert state["next"]["id"] == "ge" and state["armed"]["cues"] == ["合樂 騶虞×3"]  # music on its own GO


def test_stop_all_silences_every_channel_and_nothing_plays(live):
    live.command("go")
    live.settle(lambda s: s["playing"])
    assert live.command("stop")
    live.settle(lambda s: not s["playing"])
    assert {m.channel for m in live.port.controls(120)} == set(live.player.channels)
    assert {m.channel for m in live.port.controls(123)} == set(live.player.channels)


def test_fade_steps_the_held_music_down_then_stops_it(live):
    live.command("go")
    live.settle(lambda s: s["playing"])
    assert live.command("fade")
    live.clock.t = FADE + 0.5  # the player plays the fade out at its own pace as the fake time passes
    assert _wait(lambda: [m.value for m in live.port.controls(7) if m.channel == BELLS][-2:] == [0, 100])
    steps = [m.value for m in live.port.controls(7) if m.channel == BELLS]  # silent, then restored for later music
    assert steps[-2:] == [0, 100] and steps[:-1] == sorted(steps[:-1], reverse=True) and len(steps) > 10
    assert live.client.get("/state").json()["playing"] == []


def test_jump_makes_a_cue_the_next_and_go_plays_it(live):
    assert live.command("goto", "zhengge-bei")
    state = live.settle(lambda s: s["next"] is not None and s["next"]["id"] == "zhengge-bei")
    assert state["current"]["id"] == "ge" and state["elapsed_s"] is None  # NOW moves; the clock waits for a GO
    assert live.command("go")
    state = live.settle(lambda s: s["current"] is not None)
    assert state["current"]["id"] == "zhengge-bei" and state["position_s"] == 93.0
    assert (state["elapsed_s"], state["overrun_s"]) == (93.0, 0.0)  # reckoned as if what was jumped over ran to plan
    assert state["armed"]["cues"] == ["唱聲", "射節 騶虞×5"] and state["armed"]["in_s"] == 5.0
    live.clock.t = 5.0  # the pre-wait over, the shooting's music follows by itself; the 獲 calls come with hits
    state = live.settle(lambda s: [p["cue"] for p in s["playing"]] == ["she"])
    assert state["current"]["id"] == "she" and (state["n"], state["count"]) == (5, 5)


def test_malformed_commands_are_refused(live):
    jump = "no such cue to jump to"
    for bad, why in (({"command": "launch"}, "not a command"), ({"command": "goto", "cue": "nosuch"}, jump),
                     ({"command": "goto", "cue": 3}, jump), ([1, 2], "not a command"),
                     ({"command": ["go"]}, "not a command"), ({"command": {"go": 1}}, "not a command"),
                     ({"command": "goto", "cue": ["bin-ru"]}, jump), ("go", "not a command"), (0, "not a command")):
        assert live.client.post("/command", json=bad).json() == {"accepted": False, "why": why}
    json_body = {"Content-Type": "application/json"}
    assert live.client.post("/command", content=b"{oops", headers=json_body).status_code == 400
    assert live.client.post("/command", content=b"[" * 100_000, headers=json_body).status_code == 413
    assert live.client.post("/command", content=b"[" * 5_000, headers=json_body).status_code == 400  # too deep
    assert live.client.post("/command", content=b'{"command": "go"}',
                            headers={"Content-Type": "text/plain"}).status_code == 415  # a form a page may post
    assert live.client.get("/state").json()["next"]["id"] == "bin-ru"


def test_another_site_cannot_drive_or_read_the_console(live):
    """Any page the operator has open could post to the console: its Origin is refused, and so is a Host name that
    points here only by DNS rebinding; the console's own origin and bare clients (curl, no Origin) are served."""
    evil = {"Origin": "http://evil.example"}
    assert live.client.post("/command", json={"command": "go"}, headers=evil).status_code == 403
    assert live.client.get("/state", headers={"Host": "attacker.example"}).status_code == 403
    assert "another site" in live.client.post("/command", json={"command": "go"}, headers=evil).text
    with pytest.raises(WebSocketDisconnect), live.client.websocket_connect("/ws", headers=evil) as socket:
        socket.receive_text()
    assert live.client.get("/state").json()["current"] is None  # nothing of that went through
    own = {"Origin": "http://127.0.0.1"}
    assert live.client.post("/command", json={"command": "go"}, headers=own).json() == {"accepted": True}
    assert live.client.get("/state", headers={"Host": "localhost"}).status_code == 200


def test_odd_websocket_frames_are_refused_not_fatal(live):
    with live.client.websocket_connect("/ws") as socket:
        socket.receive_text()  # the first state
        for frame in (b"\x00binary", "[" * 5_000, "x" * 20_000):
            socket.send_bytes(frame) if isinstance(frame, bytes) else socket.send_text(frame)
            reply = socket.receive_text()
            while '"accepted"' not in reply:  # states pushed meanwhile
                reply = socket.receive_text()
            assert reply == '{"accepted": false, "why": "not a command"}'


def test_the_cue_list_numbers_every_go_point_with_its_pre_wait_length_and_how_it_starts(live):
    page = live.client.get("/")
    assert page.status_code == 200 and "set-cookie" not in page.headers
    assert "<select" not in page.text  # an in-page list: no native control to take the keys
    rows = re.findall(r'data-cue="([^"]+)" data-n="(\d+)">.*?<span class="pre">([^<]*)</span>'
                      r'<span class="len">([^<]*)</span><span class="mode">([^<]*)</span>', page.text)
    assert [(cue, n) for cue, n, *_ in rows] == [("bin-ru", "1"), ("bai-zhi", "2"), ("ge", "3"),
                                                 ("zhengge-bei", "4"), ("she", "5")]
    assert rows[2][2:] == ("5 s", rows[2][3], "follows") and rows[1][2:] == ("—", "0:05", "on GO")


def test_the_token_is_required_on_every_request_and_socket(guarded):
    client = guarded.client
    for path in ("/", "/state"):
        assert client.get(path).status_code == 403
        assert client.get(path + "?token=wrong").status_code == 403
    assert client.post("/command", json={"command": "go"}).status_code == 403
    with pytest.raises(WebSocketDisconnect) as refused, client.websocket_connect("/ws"):
        pass
    assert refused.value.code == 1008  # closed before it is accepted: a server answers the handshake 403
    page = client.get("/?token=s3cret")
    assert page.status_code == 200 and "yuesheng-token=s3cret" in page.headers["set-cookie"]
    client.cookies.clear()
    assert client.get("/state", headers={"Cookie": "yuesheng-token=s3cret"}).status_code == 200
    assert client.get("/state", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert client.post("/command?token=s3cret", json={"command": "go"}).json() == {"accepted": True}


def test_the_socket_takes_commands_and_pushes_the_state_after_a_go(live):
    with live.client.websocket_connect("/ws") as socket:
        assert socket.receive_json()["state"]["next"]["id"] == "bin-ru"
        socket.send_json({"command": "go"})
        assert _reply(socket) == {"accepted": True}
        pushed = socket.receive_json()["state"]
        while pushed["current"] is None:  # a push or two may leave before the player's thread has taken the GO
            pushed = socket.receive_json()["state"]
        assert pushed["current"]["id"] == "bin-ru" and pushed["next"]["id"] == "bai-zhi"
        socket.send_text("{oops")
        assert _reply(socket) == {"accepted": False, "why": "not a command"}


def _reply(socket: Any) -> dict[str, Any]:
    """The answer to a command sent on *socket*, past the state pushes."""
    while "state" in (frame := socket.receive_json()):
        pass
    return dict(frame)


def test_every_connected_page_gets_the_state_pushed(live):
    with live.client.websocket_connect("/ws") as first, live.client.websocket_connect("/ws") as second:
        for socket in (first, second):
            assert all(socket.receive_json()["state"]["next"]["id"] == "bin-ru" for _ in range(3))


# -- on a real port: the page in a browser ------------------------------------------------------------


class Served:
    """A console for the golden rite, served by uvicorn on a free port of 127.0.0.1, its player in a thread."""

    def __init__(self, timeline, guard: float = 0.3, **views: Any) -> None:
        self.port = Port()
        clock = RealClock()
        self.control = Control(clock, guard=guard)
        self.player = Player(timeline, self.port, clock, control=self.control, stay=True, show=lambda _: None)
        self.server = uvicorn.Server(uvicorn.Config(Console(timeline, self.player, self.control, **views).app(),
                                                    host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
        self.threads = [threading.Thread(target=self.server.run, daemon=True),
                        threading.Thread(target=self.player.run, daemon=True)]
        for thread in self.threads:
            thread.start()
        assert _wait(lambda: self.server.started, 10), "the server did not start"
        self.url = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def close(self) -> None:
        self.control.close("test over")
        self.server.should_exit = True
        for thread in self.threads:
            thread.join(timeout=10)
        assert not any(thread.is_alive() for thread in self.threads), "the server or the player outlived the test"


@pytest.fixture
def served(golden):
    console = Served(golden)
    yield console
    console.close()


def _wait(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def _past_guard(control: Control, command: Command = Command.GO) -> None:
    """Wait until the guard takes *command* again: its last accepted press is the guard's time ago."""
    assert _wait(lambda: command not in control.last or control.clock.now() - control.last[command] >= control.guard)


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # evil.test: another site's name, resolved to this machine (no traffic leaves loopback)
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--host-resolver-rules=MAP evil.test 127.0.0.1"])
        yield chromium
        chromium.close()


def test_the_page_drives_the_rite(served, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(served.url + "/")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('connected')")
    assert page.get_attribute("#next", "data-cue") == "bin-ru"
    page.click("#go")
    _shows(page, "current", "bin-ru")
    assert page.get_attribute("#next", "data-cue") == "bai-zhi"
    assert "金奏 肆夏" in page.text_content("#playing")
    page.click("#fade")  # the held 肆夏 fades: channel volume steps down, then all notes off
    assert _wait(lambda: len(served.port.controls(7)) >= 10)
    page.keyboard.press("Escape")  # STOP ALL
    assert _wait(lambda: {m.channel for m in served.port.controls(120)} >= set(served.player.channels))
    page.click("#cues .row[data-cue='zhengge-bei']")
    page.click("#jump")
    page.click("#confirm-jump")
    _shows(page, "next", "zhengge-bei")
    _past_guard(served.control)
    page.keyboard.press("Space")  # GO
    _shows(page, "current", "zhengge-bei")
    now_x = float(page.get_attribute("#now", "x1"))
    cue_x = float(page.get_attribute('#timeline g.block[data-cue="zhengge-bei"] rect', "x"))
    assert cue_x <= now_x < cue_x + 15  # the now-line is at the jumped-to cue's place in the plan (seconds in)
    drawn = set(page.eval_on_selector_all("#timeline [data-cue]", "els => els.map(e => e.dataset.cue)"))
    assert drawn == {t.cue.id for t in served.player.timeline.cues}  # the director's timeline, every cue
    assert page.eval_on_selector_all("#timeline .selected", "els => els.map(e => e.dataset.cue)") == ["zhengge-bei"]
    assert not errors
    page.close()


ATTACK = """<!doctype html><meta charset="utf-8"><title>another site</title>
<form id="form" method="post" action="@URL@/command" enctype="text/plain" target="sink">
<input name='{"command": "go", "x": "' value='"}'></form><iframe name="sink"></iframe>
<script>
const CONSOLE = "@URL@", results = window.results = {};
const note = (key) => (value) => { results[key] = String(value); };
async function attack() {
  await fetch(CONSOLE + "/command", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"},
                                     body: '{"command": "go"}'}).then(note("plain"), note("plain"));
  await fetch(CONSOLE + "/command", {method: "POST", headers: {"Content-Type": "application/json"},
                                     body: '{"command": "stop"}'}).then(note("json"), note("json"));
  await fetch(CONSOLE + "/state").then((r) => r.text()).then(note("state"), note("state"));
  await new Promise((done) => {  // the form's post answered (or refused) in the frame
    document.querySelector("iframe").onload = done;
    setTimeout(done, 3000);
    document.getElementById("form").submit();
  });
  await new Promise((done) => {
    const ws = new WebSocket(CONSOLE.replace("http", "ws") + "/ws");
    ws.onopen = () => { results.ws_open = "yes"; ws.send('{"command": "go"}'); ws.send('{"command": "fade"}'); };
    ws.onmessage = (event) => { results.ws_read = event.data; };
    ws.onclose = () => done();
    setTimeout(done, 3000);
  });
  results.done = "yes";
}
attack();
</script>"""


def test_a_page_of_another_origin_in_chromium_can_neither_drive_nor_read_the_console(served, browser):
    """The hostile pass's page opened the WebSocket, read the next cue and sent GO, FADE and STOP. Here a page of
    another origin (evil.test, which Chromium resolves to 127.0.0.1) tries every way a page has; then a DNS-rebound
    name is opened on the console's own port."""
    import http.server

    body = ATTACK.replace("@URL@", served.url).encode()

    class Attacker(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Attacker)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    console_port = served.url.rsplit(":", 1)[1]
    try:
        page = browser.new_page()
        page.goto(f"http://evil.test:{site.server_address[1]}/")
        page.wait_for_function("window.results && results.done === 'yes'", timeout=15_000)
        results = page.evaluate("results")
        rebound = page.goto(f"http://evil.test:{console_port}/state")
        assert rebound is not None and rebound.status == 403
        assert "answers to its address, not to the name 'evil.test'" in page.text_content("body")
        page.close()
    finally:
        site.shutdown()
    assert "ws_open" not in results and "ws_read" not in results  # the handshake was refused
    assert results["json"].startswith("TypeError") and results["state"].startswith("TypeError")  # nothing read
    assert served.control.submit(Command.GOTO, "test", "zhengge-bei")  # behind whatever might have got through
    assert _wait(lambda: served.player.status().next == "zhengge-bei")  # the player has taken all before it
    assert served.player.status().first_started is None  # no GO ran: the rite has not begun
    sent = [m for _, m in served.port.sent]
    assert not [m for m in sent if m.type == "note_on" or m.type == "control_change" and m.control in (7, 120, 123)]
    assert served.control.presses.empty()  # no sound, no STOP, no FADE, nothing queued


def test_console_without_a_token_off_loopback_gets_one(monkeypatch, run, tmp_path):
    from yuesheng.cli import console as cli_console

    seen: dict[str, Any] = {}

    def fake_serve(timeline, player, control, listener, token):
        seen.update(host=listener.getsockname()[0], token=token)
        return "served\n"

    monkeypatch.setattr(cli_console, "_serve", fake_serve)
    monkeypatch.delenv("YUESHENG_TOKEN", raising=False)
    code, out, _ = run("console", str(DATA / "golden.yaml"), "--no-midi", "--listen", "0.0.0.0:0")
    assert code == 0 and seen["host"] == "0.0.0.0" and len(seen["token"]) >= 16
    code, _, _ = run("console", str(DATA / "golden.yaml"), "--no-midi", "--listen", "127.0.0.1:0")
    assert code == 0 and seen.get("token") is None
    (tmp_path / "token").write_text("from-a-file-0123456789\n")
    code, _, _ = run("console", str(DATA / "golden.yaml"), "--no-midi", "--token-file", str(tmp_path / "token"))
    assert code == 0 and seen["token"] == "from-a-file-0123456789"
    monkeypatch.setenv("YUESHENG_TOKEN", "from-the-environment-42")
    code, _, _ = run("console", str(DATA / "golden.yaml"), "--no-midi")
    assert code == 0 and seen["token"] == "from-the-environment-42"


def test_a_token_is_never_on_the_command_line_and_never_short(monkeypatch, run, tmp_path):
    """--token VALUE shows in ps: refused; a token from the environment or a file has at least 22 characters."""
    golden = str(DATA / "golden.yaml")
    code, _, err = run("console", golden, "--no-midi", "--token", "abcdefghijklmnopqrstuvwxyz")
    assert code == 2 and "a token on the command line shows in ps" in err and "abcdefghij" not in err
    monkeypatch.setenv("YUESHENG_TOKEN", "abc")
    code, _, err = run("console", golden, "--no-midi")
    assert code == 2 and "YUESHENG_TOKEN: a token of 3 characters; at least 22 are needed" in err
    monkeypatch.delenv("YUESHENG_TOKEN")
    (tmp_path / "token").write_text("has spaces in it, and more\n")
    code, _, err = run("console", golden, "--no-midi", "--token-file", str(tmp_path / "token"))
    assert code == 2 and "a token is made of A-Z a-z 0-9 - _ . ~ only" in err
    code, _, err = run("console", golden, "--no-midi", "--token-file", str(tmp_path / "nosuch"))
    assert code == 2 and f"--token-file {tmp_path / 'nosuch'}: cannot read file" in err


@pytest.mark.parametrize("argv, message", [
    (("--listen", "nowhere"), "--listen 'nowhere': expected HOST:PORT"),
    (("--osc", "1.2.3.4:99999"), "--osc '1.2.3.4:99999': expected HOST:PORT"),
    (("--pedal", ":cc64"), "expected PORT"),
    (("--from", "nosuch"), "unknown cue 'nosuch'"),
])
def test_console_usage_errors(run, argv, message):
    code, _, err = run("console", str(DATA / "golden.yaml"), "--no-midi", *argv)
    assert code == 2 and message in err


def test_console_without_no_midi_names_the_ports_when_the_port_is_missing(run):
    code, _, err = run("console", str(DATA / "golden.yaml"), "--port", "no such port")
    assert code == 1 and "cannot open MIDI output no such port" in err


def test_a_busy_listen_port_is_a_clear_error_before_anything_is_shown(run):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        code, out, err = run("console", str(DATA / "golden.yaml"), "--no-midi", "--listen", f"127.0.0.1:{port}")
    assert code == 1 and out == "" and f"--listen 127.0.0.1:{port}: cannot listen there" in err


def test_a_go_that_reaches_the_console_late_is_refused_said_and_logged(golden):
    console = Live(golden, log=True)
    try:
        console.clock.t = 20.0
        reply = console.client.post("/command", json={"command": "go", "pressed": 18.5}).json()
        assert reply == {"accepted": False, "why": "it reached the console 1.5 s after it was pressed: not run late"}
        assert console.log is not None
        assert console.log.lines == [("refused", 20.0, {"cue": "bin-ru", "source": "page", "why": reply["why"]})]
        for never in ("NaN", "Infinity", "-Infinity", "1" + "0" * 400):  # JSON a page may send: no moment, no time
            body = f'{{"command": "go", "pressed": {never}}}'
            reply = console.client.post("/command", content=body, headers={"Content-Type": "application/json"}).json()
            assert reply["accepted"] is False and "is not a time" in reply["why"]
        assert console.command("go", pressed=19.6)  # 0.4 s on the way: in time
        assert console.settle(lambda s: s["current"] is not None)["current"]["id"] == "bin-ru"
    finally:
        console.close()


def test_a_go_pressed_in_the_future_is_refused_beyond_the_clocks_uncertainty_and_huge_times_shown_rounded(golden):
    console = Live(golden, log=True)
    try:
        console.clock.t = 20.0
        reply = console.client.post("/command", json={"command": "go", "pressed": 21.0}).json()
        assert reply == {"accepted": False, "why": "its press time lies 1.0 s in the console's future, beyond the "
                         "page's clock uncertainty (0.25 s): not run"}
        reply = console.client.post("/command", json={"command": "go", "pressed": 20.6, "uncertainty": 0.5}).json()
        assert reply["accepted"] is False and "(0.50 s)" in reply["why"]
        reply = console.client.post("/command", json={"command": "go", "pressed": -1e308}).json()
        assert reply == {"accepted": False, "why": "it reached the console more than a day after it was pressed: "
                         "not run late"}
        reply = console.client.post("/command", json={"command": "go", "pressed": 1e308, "uncertainty": 1e308}).json()
        assert reply["accepted"] is False and "more than a day in the console's future" in reply["why"]
        assert len(console.log.lines) == 4 if console.log is not None else False
        assert console.command("go", pressed=20.2)  # 0.2 s ahead: within the least uncertainty
    finally:
        console.close()


def test_a_page_whose_font_is_being_cut_does_not_hold_up_the_open_pages(served, monkeypatch):
    import yuesheng.web.console as console_module

    cutting, release, cut = threading.Event(), threading.Event(), threading.Event()

    def slow_cut(page: str, *, more: str = "") -> str:  # a cold font cache: the cut lasts until the test says
        cutting.set()
        release.wait(10)
        cut.set()
        return page

    monkeypatch.setattr(console_module, "with_fonts", slow_cut)
    opening = threading.Thread(target=lambda: urllib.request.urlopen(served.url + "/", timeout=20).read())
    opening.start()
    try:
        assert cutting.wait(10), "the page was never asked for"
        with urllib.request.urlopen(served.url + "/state", timeout=20) as answer:
            assert answer.status == 200
        assert not cut.is_set()  # answered while the page's font was being cut: the open pages are served meanwhile
    finally:
        release.set()
        opening.join()


def test_the_heartbeat_is_answered_with_the_servers_clock(live):
    live.clock.t = 12.5
    with live.client.websocket_connect("/ws") as socket:
        socket.send_json({"ping": 3.25})
        while "pong" not in (frame := socket.receive_json()):
            pass
        assert frame == {"pong": 3.25, "server": 12.5}


def test_a_change_is_pushed_at_once_not_at_the_next_tick(live):
    with live.client.websocket_connect("/ws") as socket:
        socket.receive_json()
        sent = time.monotonic()
        socket.send_json({"command": "go"})
        while socket.receive_json().get("state", {"current": None})["current"] is None:
            pass
        assert time.monotonic() - sent < PUSH / 2  # a push on change, long before the clock's tick


def _rss_kib(pid: int) -> int:
    """A process's resident memory (Linux: /proc/PID/status)."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="ascii")
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    assert found is not None
    return int(found[1])


def _sessions(url: str, count: int, deadline: float) -> None:
    """*count* pages, one after another, each opening the WebSocket, reading the state, a heartbeat, and leaving."""
    from websockets.sync.client import connect

    for _ in range(count):
        assert time.monotonic() < deadline, "the console answered too slowly"
        with connect(url.replace("http://", "ws://") + "/ws", open_timeout=5) as socket:
            assert "state" in json.loads(socket.recv(timeout=5))
            socket.send(json.dumps({"ping": 1.0}))
            while "pong" not in json.loads(socket.recv(timeout=5)):
                pass


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads resident memory from /proc")
def test_the_consoles_memory_after_1000_reconnecting_pages_is_within_10_percent_of_after_10():
    """The player paused the collector for the whole process, web server included, whose sessions leave cycles:
    500 sessions and 2,000 /state requests grew a console from 38.5 to 65.7 MB (1,000 sessions here: 40 to 90 MB)."""
    proc, url = start_console(DATA / "golden.yaml")
    try:
        deadline = time.monotonic() + 60
        _sessions(url, 10, deadline)
        after_10 = _rss_kib(proc.pid)
        _sessions(url, 990, deadline)
        after_1000 = _rss_kib(proc.pid)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert after_1000 <= after_10 * 1.10, (after_10, after_1000)


SIZES = {"laptop": (1366, 768), "tablet": (820, 1180), "phone": (390, 844)}


def _page(browser, url: str, size: str):
    width, height = SIZES[size]
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "/")
    page.wait_for_function("document.getElementById('status').textContent.startsWith('connected')")
    return page, errors


def _shows(page, box: str, cue: str) -> None:
    """Wait until the page's #current or #next box shows *cue*."""
    page.wait_for_function(f"document.getElementById('{box}').dataset.cue === '{cue}'")


def _box(page: Any, selector: str) -> dict[str, float]:
    box: dict[str, float] = page.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect(); "
                                                            "return {x: r.x, y: r.y, w: r.width, h: r.height}; }")
    return box


@pytest.mark.parametrize("size", SIZES)
def test_nothing_is_off_screen_and_go_is_large_and_fixed(served, browser, size):
    page, errors = _page(browser, served.url, size)
    width, height = SIZES[size]
    go_before = _box(page, "#go")
    page.click("#go")
    _shows(page, "current", "bin-ru")
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
    for selector in ("#go", "#band", "#stop", "#elapsed", "#overrun", "#projected", "#current", "#next", "#jump"):
        box = _box(page, selector) if selector in ("#go", "#band") else page.eval_on_selector(
            selector, "e => { e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
                      "return {x: r.x, y: r.y, w: r.width, h: r.height}; }")
        assert box["x"] >= 0 and box["x"] + box["w"] <= width and box["w"] > 0, (selector, box)
        assert box["y"] >= 0 and box["y"] + box["h"] <= height, (selector, box)
    go = _box(page, "#go")
    assert go == go_before and go["w"] >= 200 and go["h"] >= 80  # the text above it wrapping does not move it
    assert "guard 0.3 s" in page.text_content("#go")
    assert page.text_content("#current .where") == "1/5 · 迎賓" and page.text_content("#next .where") == "2/5 · 迎賓"
    assert not errors
    page.close()


@pytest.mark.parametrize("size", SIZES)
def test_armed_music_counts_down_and_an_early_go_brings_it_in(served, browser, size):
    page, errors = _page(browser, served.url, size)
    page.keyboard.press("Space")
    _shows(page, "current", "bin-ru")
    _past_guard(served.control)
    page.keyboard.press("Space")
    _shows(page, "current", "bai-zhi")
    armed = page.text_content("#armed")
    assert armed.startswith("ARMED ♪ 合樂 騶虞×3 — starts by itself in 0:0") and "GO brings it in now" in armed
    assert "合樂" not in page.text_content("#playing")  # armed is not sounding
    _past_guard(served.control)
    page.keyboard.press("Space")  # during the 5 s pre-wait
    _shows(page, "current", "ge")
    page.wait_for_function("document.getElementById('playing').textContent.includes('合樂')")
    assert page.text_content("#armed") == "" and page.text_content("#next .action") == "工告于樂正曰正歌備"
    assert not errors
    page.close()


@pytest.mark.parametrize("size", SIZES)
def test_keys_are_safe_whatever_has_focus(served, browser, size):
    page, errors = _page(browser, served.url, size)
    page.keyboard.down("Space")
    for _ in range(5):
        page.keyboard.down("Space")  # the key held: the browser repeats it
        time.sleep(0.15)
    page.keyboard.up("Space")
    _shows(page, "current", "bin-ru")
    first = served.control.last[Command.GO]
    page.wait_for_function("pending.size === 0")  # every command the page sent has been answered
    assert served.control.last[Command.GO] == first  # one GO for one press, however long
    assert page.get_attribute("#current", "data-cue") == "bin-ru"
    page.click("#cues .row[data-cue='zhengge-bei']")  # a tap moves the playhead, and fires nothing
    stops = len(served.port.controls(120))
    page.keyboard.press("Escape")  # STOP ALL, the cue list clicked and focused
    assert _wait(lambda: len(served.port.controls(120)) > stops)
    page.focus("#find")
    page.keyboard.type("zheng")  # Esc from the search field too
    stops = len(served.port.controls(120))
    page.keyboard.press("Escape")
    assert _wait(lambda: len(served.port.controls(120)) > stops)
    page.click("#cues .row[data-cue='bai-zhi']")
    page.keyboard.press("Space")  # GO, the cue list focused: it fires the playhead
    _shows(page, "current", "bai-zhi")
    page.click("#cues .row[data-cue='zhengge-bei']")
    page.focus("#jump")
    page.keyboard.press("Enter")  # asks; does not jump
    assert page.evaluate("document.getElementById('confirm').open")
    stops = len(served.port.controls(120))
    page.keyboard.press("Escape")  # STOP ALL in the dialog too; the dialog stays until its Cancel
    assert _wait(lambda: len(served.port.controls(120)) > stops)
    assert page.evaluate("document.getElementById('confirm').open")
    page.keyboard.press("Enter")  # Cancel has the focus
    assert not page.evaluate("document.getElementById('confirm').open")
    assert page.get_attribute("#next", "data-cue") == "ge"
    assert not errors
    page.close()


@pytest.mark.parametrize("size", SIZES)
def test_a_confirmed_jump_moves_now_and_next_and_keeps_the_music(served, browser, size):
    page, errors = _page(browser, served.url, size)
    page.click("#go")
    page.wait_for_function("document.getElementById('playing').textContent.includes('肆夏')")
    stops = len(served.port.controls(120))
    page.click("#cues .row[data-cue='zhengge-bei']")
    page.click("#jump")
    page.click("#confirm-jump")
    _shows(page, "next", "zhengge-bei")
    assert page.get_attribute("#current", "data-cue") == "ge" and "肆夏" in page.text_content("#playing")
    assert len(served.port.controls(120)) == stops  # nothing silenced
    assert not page.text_content("#elapsed").startswith("−")
    _past_guard(served.control)
    page.click("#go")
    assert _wait(lambda: page.text_content("#feedback").startswith("GO refused: within the 0.3 s guard")
                 or page.get_attribute("#current", "data-cue") == "zhengge-bei")
    _past_guard(served.control)
    page.evaluate("document.getElementById('go').click(); document.getElementById('go').click()")  # at once: the
    # second inside the guard, and said so (two page.click calls may be further apart than it on a loaded machine)
    page.wait_for_function("document.getElementById('feedback').textContent.startsWith('GO refused: within the')")
    assert page.get_attribute("#feedback", "class") == "refused"
    assert not errors
    page.close()


@pytest.mark.slow  # a console in a child process, frozen for 1.5 s, killed and resumed: 5 s a size
@pytest.mark.parametrize("size", SIZES)
def test_a_frozen_console_shows_stale_and_refuses_the_go_pressed_meanwhile(tmp_path, browser, size):
    log = tmp_path / "show.jsonl"
    proc, url = start_console(DATA / "golden.yaml", "--log", str(log))
    try:
        page, errors = _page(browser, url, size)
        proc.send_signal(signal.SIGSTOP)  # a frozen server: the socket stays open, nothing answers
        frozen = time.monotonic()
        page.wait_for_function("document.getElementById('band').dataset.link === 'stale'", timeout=3000)
        assert time.monotonic() - frozen < 1.6  # stale within about a second
        assert page.text_content("#status").startswith("STALE")
        rtt = page.evaluate("rtt")
        page.keyboard.press("Space")  # a GO pressed during the freeze: refused on the page at once, nothing sent
        assert page.text_content("#feedback").startswith("GO refused: the console is STALE (no word for ")
        assert page.text_content("#feedback").endswith(" s) — nothing was sent")
        assert page.evaluate("pending.size") == 0 and page.get_attribute("#feedback", "class") == "refused"
        proc.send_signal(signal.SIGCONT)  # the console logs it as refused once the page is heard again
        page.wait_for_function("document.getElementById('feedback').textContent.includes('while the page was stale')")
        page.wait_for_function("document.getElementById('band').dataset.link === 'ok'")
        assert rtt is not None
        assert page.get_attribute("#current", "data-cue") == ""  # it never ran
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        page.wait_for_function("document.getElementById('band').dataset.link === 'down'")
        page.keyboard.press("Space")  # a GO while disconnected
        assert page.text_content("#feedback") == "GO refused: not connected to the console — nothing was sent"
        port = url.rsplit(":", 1)[1]
        proc, _ = start_console(DATA / "golden.yaml", "--resume", str(log), "--listen", f"127.0.0.1:{port}")
        page.wait_for_function("document.getElementById('feedback').textContent.includes('while the page was stale')")
        assert page.evaluate("samples.length") <= 2  # the round trips of the connection before are forgotten
        assert page.text_content("#resumed").startswith("RESUMED — resumed from the log before the first GO")
        assert not errors
        page.close()
    finally:
        proc.kill()
        proc.wait(timeout=10)
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [e["event"] for e in events] == ["session", "refused", "session", "refused"]
    assert all(e["cue"] == "bin-ru" and e["source"] == "page" for e in events if e["event"] == "refused")


def test_a_console_on_every_interface_prints_an_address_a_tablet_can_open():
    """Bound to 0.0.0.0 it names a real interface address with the token; the test connects through loopback."""
    from yuesheng.cli.addresses import interface_addresses

    proc, url, line = start_console(DATA / "golden.yaml", "--listen", "0.0.0.0:0", with_line=True)
    try:
        printed = re.search(r"http://([\d.]+):(\d+)/\?token=(\S+)", line)
        assert printed is not None and printed[1] != "0.0.0.0", line
        assert printed[1] in (interface_addresses() or ["127.0.0.1"])
        with urllib.request.urlopen(f"{url}/state?token={printed[3]}", timeout=5) as answer:
            assert json.loads(answer.read())["next"]["id"] == "bin-ru"
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_a_row_added_to_the_table_of_commands_gets_its_button_and_key_on_the_page(served, browser, monkeypatch):
    """The page draws its buttons and keys from the table it is given: a second name for STOP ALL, added as a row,
    is a button and a key (acting from anywhere, as a command never refused does) with no change to the page."""
    from yuesheng.live import commands

    hush = Spec(Command.STOP, typed=("h",), key="h", osc="/yuesheng/hush", web="hush", event="hush",
                guarded=False, target=False, starts=False, said="HUSH")
    monkeypatch.setattr(commands, "COMMANDS", (*commands.COMMANDS, hush))
    page, errors = _page(browser, served.url, "laptop")
    assert page.text_content("#hush") == "HUSHh, from anywhere"
    assert page.get_attribute("#hush", "title") == "h, from anywhere"
    assert page.eval_on_selector("#hush", "e => e.parentElement.id") == "bar"  # in the fixed bar, as STOP ALL is
    for press in (lambda: page.click("#hush"), lambda: page.focus("#cues") or page.keyboard.press("h")):
        stops = len(served.port.controls(120))
        press()
        assert _wait(lambda stops=stops: len(served.port.controls(120)) > stops)  # STOP ALL, by its new name
    assert not errors
    page.close()


def test_a_console_without_midi_closes_without_claiming_to_have_silenced_a_port():
    proc, _ = start_console(DATA / "golden.yaml")
    try:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 0 and "console closed (no MIDI port: nothing was sounding to silence)" in out
    assert "sent on channels" not in out


@pytest.fixture(scope="module")
def xiangshe(repertoire):
    return build(load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire))


def _stop_reachable(page: Any) -> bool:
    """STOP ALL wholly on screen, and the topmost thing at its centre and near each corner (nothing covers it)."""
    return bool(page.evaluate("""() => {
        const stop = document.getElementById('stop'), r = stop.getBoundingClientRect();
        if (r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth || r.height < 52) return false;
        return [[.5, .5], [.08, .08], [.92, .08], [.08, .92], [.92, .92]].every(([fx, fy]) =>
            stop.contains(document.elementFromPoint(r.left + fx * r.width, r.top + fy * r.height)));
    }"""))


@pytest.mark.parametrize("size", SIZES)
def test_stop_all_is_never_covered_at_any_cue_of_xiangshe(xiangshe, browser, size):
    """Issue 31 §2: jumping through every GO point of 鄉射, with the page scrolled to each cue's row and the jump's
    dialog open at the last, STOP ALL is in the fixed bar, on screen and uncovered, beside GO, as tall as it."""
    served = Served(xiangshe, guard=0.001)
    try:
        page, errors = _page(browser, served.url, size)
        points = served.player.actions
        assert len(points) == 173
        for cue in points:
            _past_guard(served.control, Command.GOTO)
            assert served.control.submit(Command.GOTO, "test", cue)
            _shows(page, "next", cue)
            page.eval_on_selector(f"#cues .row[data-cue='{cue}']", "e => e.scrollIntoView({block: 'center'})")
            assert _stop_reachable(page), cue
        stop, go = _box(page, "#stop"), _box(page, "#go")
        assert stop["h"] == go["h"] >= 80 and abs(stop["y"] - go["y"]) < 1
        page.click("#jump")
        assert page.evaluate("document.getElementById('confirm').open") and _stop_reachable(page)
        stops = len(served.port.controls(120))
        page.click("#stop")  # a click, the dialog open: STOP ALL, acknowledged
        assert _wait(lambda: len(served.port.controls(120)) > stops)
        page.wait_for_function("document.getElementById('feedback').textContent.startsWith('STOP ALL ✓')")
        assert _stop_reachable(page)  # the acknowledgement sits above the bar, never over STOP
        assert not errors
        page.close()
    finally:
        served.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_playhead_moves_by_arrows_taps_and_search_without_firing_and_go_fires_it(served, browser, size):
    page, errors = _page(browser, served.url, size)
    page.wait_for_function("document.querySelector('#cues .row.playhead').dataset.cue === 'bin-ru'")  # follows NEXT
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.get_attribute("#cues .row.playhead", "data-cue") == "ge"
    assert page.get_attribute("#current", "data-cue") == "" and Command.GO not in served.control.last  # nothing fired
    assert page.text_content("#fires") == "▶ 3 ♪ 合樂 騶虞×3" and "not NEXT" in page.text_content("#playhead-says")
    page.click("#cues .row[data-cue='zhengge-bei']")  # a tap
    assert page.get_attribute("#cues .row.playhead", "data-cue") == "zhengge-bei"
    page.focus("#cues")
    page.keyboard.type("bai")  # type to search: the playhead goes to the first match
    assert page.evaluate("document.activeElement.id") == "find"
    assert page.get_attribute("#cues .row.playhead", "data-cue") == "bai-zhi"
    page.keyboard.press("ArrowUp")  # the arrows move it from the search field too
    assert page.get_attribute("#cues .row.playhead", "data-cue") == "bin-ru"
    page.fill("#find", "4")  # a number finds its row
    assert page.get_attribute("#cues .row.playhead", "data-cue") == "zhengge-bei"
    assert Command.GO not in served.control.last
    page.click("#go")  # GO fires the playhead
    _shows(page, "current", "zhengge-bei")
    page.wait_for_function("document.getElementById('feedback').textContent === 'GO ✓ 4 工告于樂正曰正歌備'")
    _shows(page, "next", "she")
    page.wait_for_function("document.querySelector('#cues .row.playhead').dataset.cue === 'she'")  # follows NEXT
    assert page.get_attribute("#cues .row.now", "data-cue") == "zhengge-bei"
    assert not errors
    page.close()


VIEW = "v13w-token-for-the-views"


@pytest.fixture(scope="module")
def golden_production(repertoire):
    from yuesheng import produce

    return produce(load(DATA / "golden.yaml", repertoire=repertoire))


def test_the_views_take_their_own_token_and_open_nothing_else(golden_production):
    """Issue 31 §7: the view token opens /observe, /cast/PERSON and their socket, never the console, its state or a
    command; the operator's token opens the views too; an unknown person is a 404 naming the nearest."""
    from yuesheng.web.views import Views

    live = Live(golden_production.timeline, token="s3cret", views=Views(golden_production), view_token=VIEW)
    try:
        client = live.client
        observe = client.get(f"/observe?token={VIEW}")
        assert observe.status_code == 200 and "data-command" not in observe.text and "<button" not in observe.text
        assert client.get("/cast/主人?token=" + VIEW).status_code == 200
        assert client.get("/cast/zhuren?token=s3cret").status_code == 200
        unknown = client.get("/cast/主任?token=" + VIEW)
        assert unknown.status_code == 404 and "unknown person" in unknown.text
        for path in ("/", "/state"):
            assert client.get(f"{path}?token={VIEW}").status_code == 403
        assert client.post(f"/command?token={VIEW}", json={"command": "stop"}).status_code == 403
        assert client.get("/observe").status_code == 403
        with pytest.raises(WebSocketDisconnect), client.websocket_connect(f"/ws?token={VIEW}"):
            pass
    finally:
        live.close()


def test_a_view_socket_follows_a_go_and_refuses_every_command(golden_production):
    from yuesheng.web.views import Views

    live = Live(golden_production.timeline, views=Views(golden_production), view_token=VIEW)
    try:
        with live.client.websocket_connect(f"/view/ws?token={VIEW}") as observe, \
                live.client.websocket_connect(f"/view/ws?token={VIEW}&person=主人") as cast:
            first = observe.receive_json()["state"]
            assert first["view"] == "observe" and first["current"] is None and first["next"]["id"] == "bin-ru"
            mine = cast.receive_json()["state"]
            assert mine["view"] == "cast" and mine["person"] == "主人" and mine["next"]["id"] == "bai-zhi"
            assert mine["warning"] == {"id": "bin-ru", "n": 1, "action": "賓入"}
            for frame in ({"command": "go"}, {"command": "stop"}, {"command": "goto", "cue": "she"}):
                observe.send_json(frame)
                cast.send_json(frame)
            for socket in (observe, cast):
                replies: list[dict[str, Any]] = []
                while len(replies) < 3:  # the state is pushed between them
                    if "accepted" in (frame := socket.receive_json()):
                        replies.append(frame)
                assert all(r["accepted"] is False and "cannot GO, STOP or jump" in r["why"] for r in replies)
            assert live.player.status().current is None and Command.GO not in live.control.last
            assert not [m for _, m in live.port.sent if getattr(m, "control", None) == 120]  # no STOP either
            assert live.command("go")
            while (state := observe.receive_json().get("state")) is None or state["current"] is None:
                pass
            assert state["current"]["id"] == "bin-ru" and state["next"]["id"] == "bai-zhi"
            while (mine := cast.receive_json().get("state")) is None or mine["current"] is None:
                pass
            assert mine["next"]["id"] == "bai-zhi" and mine["warning"]["id"] == "bin-ru"
            assert mine["warning_in_s"] == 0.0 and mine["in_s"] is not None
    finally:
        live.close()


@pytest.mark.parametrize("size", SIZES)
def test_the_observe_and_cast_views_follow_a_go_and_cannot_command(golden_production, browser, size):
    """Issue 31 §7 in Chromium: both views follow the operator's GO (waiting on it); neither has a control, and
    neither their socket nor the view token can drive the show."""
    from yuesheng.web.views import Views

    served = Served(golden_production.timeline, views=Views(golden_production), view_token=VIEW, token="op-s3cret")
    try:
        width, height = SIZES[size]
        observe = browser.new_page(viewport={"width": width, "height": height})
        cast = browser.new_page(viewport={"width": width, "height": height})
        observe.goto(f"{served.url}/observe?token={VIEW}")
        cast.goto(f"{served.url}/cast/主人?token={VIEW}")
        for page in (observe, cast):
            page.wait_for_function("document.getElementById('band').dataset.link === 'ok'")
            assert page.query_selector_all("button") == []
            assert page.evaluate("document.documentElement.scrollWidth") <= width
        cast.wait_for_function("document.getElementById('mine-next').dataset.cue === 'bai-zhi'")
        assert cast.text_content("#warn-what") == "stand by at cue 1"
        assert served.control.submit(Command.GO, "test")
        observe.wait_for_function("document.getElementById('now').dataset.cue === 'bin-ru'")
        assert observe.get_attribute("#next", "data-cue") == "bai-zhi"
        cast.wait_for_function("document.getElementById('warn-count').textContent === 'NOW'")  # stand by: bin-ru runs
        _past_guard(served.control)
        assert served.control.submit(Command.GO, "test")
        cast.wait_for_function("document.getElementById('mine-now').dataset.cue === 'bai-zhi'")
        assert cast.text_content("#where") == "no more cues for you"
        refused = observe.evaluate("""async (view) => {
            const command = await fetch('/command?token=' + view, {method: 'POST', body: '{"command": "stop"}',
                                                                   headers: {'Content-Type': 'application/json'}});
            const operator = await new Promise((done) => {
                const ws = new WebSocket('ws://' + location.host + '/ws?token=' + view);
                ws.onopen = () => done('open'); ws.onclose = () => done('closed'); });
            const own = await new Promise((done) => {
                const ws = new WebSocket('ws://' + location.host + '/view/ws?token=' + view);
                ws.onmessage = (e) => { const d = JSON.parse(e.data); if ('accepted' in d) done(d); };
                ws.onopen = () => ws.send(JSON.stringify({command: 'go'})); });
            return [command.status, operator, own.accepted];
        }""", VIEW)
        assert refused == [403, "closed", False]
        assert served.player.status().current == "bai-zhi" and not served.port.controls(120)
        for page in (observe, cast):
            page.close()
    finally:
        served.close()


@pytest.mark.parametrize("size", SIZES)
def test_one_sounding_cue_is_stopped_from_the_page_and_the_master_level_set(served, browser, size):
    """Issue 31 §6 on the page: the sounding cue chosen (a tap on it), STOP this stops it alone, acknowledged; the
    master level goes to every channel."""
    page, errors = _page(browser, served.url, size)
    page.click("#go")
    page.wait_for_function("document.querySelector('#playing .chip.chosen') !== null")
    assert page.get_attribute("#playing .chip.chosen", "data-cue") == "sixia"
    stops = len(served.port.controls(120))
    page.click("#stop-cue")
    page.wait_for_function("document.getElementById('feedback').textContent === 'STOP this ✓ 金奏 肆夏'")
    assert _wait(lambda: len(served.port.controls(120)) > stops)
    page.wait_for_function("!document.getElementById('playing').textContent.includes('肆夏')")
    page.fill("#value-level", "90")
    page.click("#level")
    page.wait_for_function("document.getElementById('feedback').textContent === 'master level ✓ 90'")
    assert _wait(lambda: {m.channel for m in served.port.controls(7) if m.value == 90} == set(served.player.channels))
    page.fill("#value-level", "300")
    page.click("#level")
    page.wait_for_function("document.getElementById('feedback').textContent.includes('expected 0 to 127')")
    assert _stop_reachable(page)
    assert not errors
    page.close()


def _reachable(page: Any, element: str) -> bool:
    """The element wholly on screen and the topmost thing at its centre (nothing covers it)."""
    return bool(page.evaluate("""(id) => {
        const el = document.getElementById(id), r = el.getBoundingClientRect();
        if (r.width === 0 || r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth) return false;
        return el.contains(document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2));
    }""", element))


def _bell_strokes(port: Port, since: float) -> int:
    return sum(1 for at, m in list(port.sent) if at > since and m.type == "note_on" and m.channel == BELLS
               and m.velocity > 0)


@pytest.mark.parametrize("size", SIZES)
def test_pause_and_resume_from_the_fixed_bar(served, browser, size):
    """Issue 31 §6 on the page: PAUSE, in the fixed bar beside STOP ALL and GO at every width, stops 肆夏's strokes
    (all notes off) and says PAUSED on NOW and the cue clock; RESUME, in its place, brings the strokes back."""
    page, errors = _page(browser, served.url, size)
    page.click("#go")
    page.wait_for_function("document.getElementById('playing').textContent.includes('肆夏')")
    assert _reachable(page, "pause") and page.is_hidden("#resume")
    offs = len(served.port.controls(123))
    page.click("#pause")
    page.wait_for_function("document.getElementById('feedback').textContent === "
                           "'PAUSE ✓ the music paused, its notes off'")
    page.wait_for_function("!document.getElementById('paused-tag').hidden")
    assert page.text_content("#in-cue") == "PAUSED" and page.is_hidden("#pause") and _reachable(page, "resume")
    assert _wait(lambda: {m.channel for m in served.port.controls(123)[offs:]} == set(served.player.channels))
    paused_at = time.perf_counter()
    time.sleep(1.5)  # 肆夏 strikes once a second: none while paused
    assert _bell_strokes(served.port, paused_at) == 0 and served.player.status().paused is not None
    page.click("#resume")
    page.wait_for_function("document.getElementById('feedback').textContent.startsWith('RESUME ✓')")
    page.wait_for_function("document.getElementById('paused-tag').hidden")
    assert _wait(lambda: _bell_strokes(served.port, paused_at) > 0, 3.0)
    assert _reachable(page, "pause") and _stop_reachable(page) and not errors
    page.close()


def test_the_cast_views_plate_is_cropped_to_his_move_in_chromium(repertoire, browser):
    """Issue 31 §7: a performer's plate shows his move (his walk and where he stands, with a margin, and at least
    ``AT_LEAST`` 步 each way), not the whole court: the panel's viewBox in Chromium, against the stage manager's."""
    from yuesheng import produce
    from yuesheng.outputs.plan import plan_data
    from yuesheng.web.views import AT_LEAST, MARGIN, Views

    production = produce(load(ROOT / "cues" / "xiangshe.yaml", repertoire=repertoire))  # staged
    views = Views(production)
    served = Served(production.timeline, views=views, view_token=VIEW)
    try:
        cast = browser.new_page(viewport={"width": 390, "height": 844})
        cast.goto(f"{served.url}/cast/主人?token={VIEW}")
        cast.wait_for_function("document.querySelector('#move svg.panel') !== null")
        cue = cast.get_attribute("#mine-next", "data-cue")
        mine = [float(v) for v in cast.get_attribute("#move svg.panel", "viewBox").split()]
        whole = cast.evaluate("""async ([cue, view]) => {
            const svg = await (await fetch('/view/plate/' + cue + '?token=' + view)).text();
            const box = new DOMParser().parseFromString(svg, 'image/svg+xml').querySelector('svg.panel');
            return box.getAttribute('viewBox').split(' ').map(Number); }""", [cue, VIEW])
        person = views.person("主人")
        staged = production.staged
        assert staged is not None
        data = plan_data(staged.hall, production.sheet, at=cue, staged=staged.cues[cue])
        points = [p["at"] for p in data["people"] if p["id"] in person.members]
        points += [xy for w in data["walks"] if w["who"] in person.members for xy in w["route"]]
        assert points, "主人 is on the ground at his next cue"
        x0, y0, width, height = mine
        assert width >= AT_LEAST and height >= AT_LEAST
        assert width * height < 0.8 * whole[2] * whole[3]  # not the whole court
        assert all(x0 + MARGIN <= x + 1e-6 and x <= x0 + width - MARGIN + 1e-6 and y0 + MARGIN <= y + 1e-6
                   and y <= y0 + height - MARGIN + 1e-6 for x, y in points)  # his whole move, with its margin
        drawn = cast.evaluate("""() => { const r = document.querySelector('#move svg').getBoundingClientRect();
            return [r.width, r.height]; }""")
        assert drawn[0] > 200 and drawn[1] > 100  # drawn at a size a phone shows
        cast.close()
    finally:
        served.close()


def test_pause_stops_the_notes_holds_the_clock_and_resume_goes_on_from_where_it_paused(live):
    """Issue 31 §6 with the player in process (a recording MIDI port, the fake clock): 肆夏 strikes once a second;
    PAUSE at 2.5 s silences every channel and nothing more sounds while paused; RESUME at 10 s strikes the stroke
    due at 3 s at 10.5 s, and the cue clock has stood still meanwhile."""
    def strokes() -> list[Any]:
        return [m for _, m in list(live.port.sent) if m.type == "note_on" and m.channel == BELLS and m.velocity]

    assert live.command("go")
    live.settle(lambda s: s["playing"])
    live.clock.t = 2.5
    assert _wait(lambda: len(strokes()) == 3)  # 0, 1 and 2 s
    assert live.command("pause")
    state = live.settle(lambda s: s["paused"])
    assert _wait(lambda: {m.channel for m in live.port.controls(123)} == set(live.player.channels))
    live.clock.t = 10.0
    time.sleep(0.2)
    state = live.client.get("/state").json()
    assert len(strokes()) == 3 and state["in_cue_s"] == 2.5 and state["paused"]  # held
    assert live.command("resume")
    live.settle(lambda s: not s["paused"])
    live.clock.t = 10.6
    assert _wait(lambda: len(strokes()) == 4)
    assert [due for due, _, m in list(live.player.sent) if m.type == "note_on" and m.channel == BELLS
            and m.velocity][3] == pytest.approx(10.5)  # the fourth stroke: due at 3 s, 7.5 s paused
    assert live.client.get("/state").json()["in_cue_s"] == pytest.approx(3.1)
