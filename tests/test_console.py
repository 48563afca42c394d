"""The console on a real port: HTTP, WebSocket and the token; the page driven in headless Chromium."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest
import uvicorn

from yuesheng.live.control import Control
from yuesheng.live.player import RealClock, Player
from yuesheng.timeline import build_timeline
from yuesheng.check.validate import load_cuesheet
from yuesheng.web.console import Console

DATA = Path(__file__).parent / "data"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Port:
    """A MIDI port that records what it is sent, from the player's thread."""

    def __init__(self) -> None:
        self.sent: list[tuple[float, object]] = []

    def send(self, message: object) -> None:
        self.sent.append((time.perf_counter(), message))

    def controls(self, number: int) -> list[object]:
        return [m for _, m in list(self.sent) if getattr(m, "type", "") == "control_change" and m.control == number]


class Served:
    """A console for the golden rite, served by uvicorn on a free port of 127.0.0.1, its player in a thread."""

    def __init__(self, timeline, token: str | None) -> None:
        self.port = Port()
        clock = RealClock()
        self.control = Control(clock, guard=0.3)
        self.player = Player(timeline, self.port, clock, control=self.control, stay=True, show=lambda _: None)
        self.server = uvicorn.Server(uvicorn.Config(Console(timeline, self.player, self.control, token=token).app(),
                                                    host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
        self.threads = [threading.Thread(target=self.server.run, daemon=True),
                        threading.Thread(target=self.player.run, daemon=True)]
        for thread in self.threads:
            thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        self.url = f"http://127.0.0.1:{self.server.servers[0].sockets[0].getsockname()[1]}"

    def close(self) -> None:
        self.control.close("test over")
        self.server.should_exit = True
        for thread in self.threads:
            thread.join(timeout=10)
        assert not any(thread.is_alive() for thread in self.threads), "the server or the player outlived the test"


@pytest.fixture(scope="module")
def golden(repertoire):
    return build_timeline(load_cuesheet(DATA / "golden.yaml", repertoire))


@pytest.fixture
def served(golden):
    console = Served(golden, token=None)
    yield console
    console.close()


@pytest.fixture
def guarded(golden):
    console = Served(golden, token="s3cret")
    yield console
    console.close()


def _wait(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_state_and_commands_over_http(served):
    state = httpx.get(served.url + "/state").json()
    assert state["current"] is None and state["next"]["id"] == "bin-ru" and state["next"]["cite"] == "儀禮集釋 5-4a"
    assert httpx.post(served.url + "/command", json={"command": "go"}).json() == {"accepted": True}
    assert httpx.post(served.url + "/command", json={"command": "go"}).json() == {"accepted": False}  # the guard
    assert _wait(lambda: httpx.get(served.url + "/state").json()["current"] is not None)
    state = httpx.get(served.url + "/state").json()
    assert state["current"]["id"] == "bin-ru" and state["next"]["id"] == "bai-zhi"
    assert {"cue": "sixia", "what": "金奏 肆夏", "until": "bai-zhi: 主人再拜 賓荅再拜"} in state["playing"]
    assert state["elapsed_s"] >= 0 and state["overrun_s"] is not None and state["projected_end"]
    for bad in ({"command": "launch"}, {"command": "goto", "cue": "nosuch"}, [1, 2]):
        assert httpx.post(served.url + "/command", json=bad).json() == {"accepted": False}
    assert httpx.post(served.url + "/command", content=b"{oops").status_code == 400


def test_the_token_is_required_on_every_request_and_socket(guarded):
    import websockets.sync.client as ws
    from websockets.exceptions import InvalidStatus

    for path in ("/", "/state"):
        assert httpx.get(guarded.url + path).status_code == 403
        assert httpx.get(guarded.url + path + "?token=wrong").status_code == 403
    assert httpx.post(guarded.url + "/command", json={"command": "go"}).status_code == 403
    with pytest.raises(InvalidStatus) as refused:
        ws.connect(guarded.url.replace("http", "ws") + "/ws")
    assert refused.value.response.status_code == 403
    page = httpx.get(guarded.url + "/?token=s3cret")
    assert page.status_code == 200 and "yuesheng-token" in page.headers["set-cookie"]
    assert httpx.get(guarded.url + "/state", cookies={"yuesheng-token": "s3cret"}).status_code == 200
    assert httpx.get(guarded.url + "/state", headers={"Authorization": "Bearer s3cret"}).status_code == 200
    with ws.connect(guarded.url.replace("http", "ws") + "/ws?token=s3cret") as socket:
        assert "state" in json.loads(socket.recv(timeout=5))
        socket.send(json.dumps({"command": "go"}))
        replies = [json.loads(socket.recv(timeout=5)) for _ in range(3)]
        assert {"accepted": True} in replies


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (.ci/run installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
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
    page.wait_for_function("document.getElementById('current').dataset.cue === 'bin-ru'")
    assert page.get_attribute("#next", "data-cue") == "bai-zhi"
    assert "金奏 肆夏" in page.text_content("#playing")
    page.click("#fade")  # the held 肆夏 fades: channel volume steps down, then all notes off
    assert _wait(lambda: len(served.port.controls(7)) >= 10)
    page.keyboard.press("Escape")  # STOP ALL
    assert _wait(lambda: {m.channel for m in served.port.controls(120)} >= set(served.player.channels))
    page.select_option("#goto", "zhengge-bei")
    page.click("#jump")
    page.wait_for_function("document.getElementById('next').dataset.cue === 'zhengge-bei'")
    time.sleep(0.4)  # past the guard
    page.keyboard.press("Space")  # GO
    page.wait_for_function("document.getElementById('current').dataset.cue === 'zhengge-bei'")
    now_x = float(page.get_attribute("#now", "x1"))
    cue_x = float(page.get_attribute('#timeline g.block[data-cue="zhengge-bei"] rect', "x"))
    assert cue_x <= now_x < cue_x + 15  # the now-line is at the jumped-to cue's place in the plan (seconds in)
    drawn = set(page.eval_on_selector_all("#timeline [data-cue]", "els => els.map(e => e.dataset.cue)"))
    assert drawn == {t.cue.id for t in served.player.timeline.cues}  # the director's timeline, every cue
    assert page.eval_on_selector_all("#timeline .selected", "els => els.map(e => e.dataset.cue)") == ["zhengge-bei"]
    assert not errors
    page.close()


def test_console_without_a_token_off_loopback_gets_one(monkeypatch, run):
    from yuesheng.cli import console as cli_console

    seen = {}

    def fake_serve(timeline, player, control, listener, token):
        seen.update(host=listener.getsockname()[0], token=token)
        return "served\n"

    monkeypatch.setattr(cli_console, "_serve", fake_serve)
    code, out, _ = run("console", str(DATA / "golden.yaml"), "--no-midi", "--listen", "0.0.0.0:0")
    assert code == 0 and seen["host"] == "0.0.0.0" and len(seen["token"]) >= 16
    code, _, _ = run("console", str(DATA / "golden.yaml"), "--no-midi", "--listen", "127.0.0.1:0")
    assert code == 0 and seen["token"] is None
    code, _, _ = run("console", str(DATA / "golden.yaml"), "--no-midi", "--token", "abc")
    assert code == 0 and seen["token"] == "abc"


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


def test_console_process_stops_cleanly_on_sigterm(tmp_path):
    import signal
    import subprocess
    import sys

    log = tmp_path / "c.jsonl"
    process = subprocess.Popen([sys.executable, "-m", "yuesheng", "console", str(DATA / "golden.yaml"), "--no-midi",
                                "--listen", "127.0.0.1:0", "--log", str(log)], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=Path(__file__).parent.parent)
    try:
        assert _wait(lambda: log.exists() and log.stat().st_size > 0, 20)
        time.sleep(1.0)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert "console closed: all notes off and all sound off" in out
    assert json.loads(log.read_text(encoding="utf-8").splitlines()[0])["event"] == "session"


def test_every_connected_page_gets_the_state_pushed(served):
    import websockets.sync.client as ws

    url = served.url.replace("http", "ws") + "/ws"
    with ws.connect(url) as first, ws.connect(url) as second:
        for socket in (first, second):
            states = [json.loads(socket.recv(timeout=5)) for _ in range(3)]
            assert all(s["state"]["next"]["id"] == "bin-ru" for s in states)


def test_a_busy_listen_port_is_a_clear_error_before_anything_is_shown(run):
    import socket

    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        code, out, err = run("console", str(DATA / "golden.yaml"), "--no-midi", "--listen", f"127.0.0.1:{port}")
    assert code == 1 and out == "" and f"--listen 127.0.0.1:{port}: cannot listen there" in err
