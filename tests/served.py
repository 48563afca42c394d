"""A real console in a child process (``python -m yuesheng console``), for what needs one: SIGKILL, SIGSTOP."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent.parent
URL = re.compile(r"http://\S+:(\d+)/")
STARTED: list[subprocess.Popen[str]] = []  # the consoles started by the test running (``stop_started``)


def start_console(cue: Path, *args: str, with_line: bool = False) -> Any:
    """The child and a loopback URL to the port it printed (and, *with_line*, the line that printed it); it listens
    on a free port of 127.0.0.1 unless *args* say otherwise."""
    listen = () if "--listen" in args else ("--listen", "127.0.0.1:0")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "yuesheng", "console", str(cue), "--no-midi", *listen, *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    STARTED.append(proc)
    stdout = proc.stdout
    assert stdout is not None
    said: queue.Queue[str] = queue.Queue()

    def read() -> None:  # up to the line with the URL (the rest is the caller's to read), or to the end ('')
        for line in stdout:
            said.put(line)
            if URL.search(line):
                return
        said.put("")

    threading.Thread(target=read, daemon=True).start()
    deadline = time.monotonic() + 30  # a console that says nothing fails the test then, instead of hanging it
    lines = []
    with contextlib.suppress(queue.Empty):
        while line := said.get(timeout=max(0.0, deadline - time.monotonic())):
            lines.append(line)
            if match := URL.search(line):
                loopback = f"http://127.0.0.1:{match[1]}"  # whatever address it names, tests connect through loopback
                return (proc, loopback, line) if with_line else (proc, loopback)
    proc.kill()
    raise AssertionError(f"the console printed no URL: {lines} {proc.stderr.read() if proc.stderr else ''}")


def stop_started() -> None:
    """Kill every console the test started that still runs, and close its pipes: a pipe left to the garbage collector
    is a ResourceWarning in whichever test runs then (``conftest.py`` calls this after each test)."""
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError, ValueError):
                    pipe.close()


def post(url: str, command: str, cue: str = "") -> dict[str, Any]:
    """POST a command to the console at *url*, as the page does; its JSON answer."""
    body = json.dumps({"command": command, "cue": cue} if cue else {"command": command}).encode()
    request = urllib.request.Request(url + "/command", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        result: dict[str, Any] = json.loads(answer.read())
    return result


def state(url: str) -> dict[str, Any]:
    """The console's state at *url*."""
    with urllib.request.urlopen(url + "/state", timeout=5) as answer:
        result: dict[str, Any] = json.loads(answer.read())
    return result
