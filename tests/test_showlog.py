"""The console's log during the rite: bursts merged, a full disk a warning (the show goes on, the log resumes),
and a log that cannot be written refused at start, in one line."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from yuesheng import build, load
from yuesheng.live import showlog
from yuesheng.live.rehearsal import read_log, retime
from yuesheng.live.showlog import Log

from served import post, start_console
from served import state as console_state

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_flood_of_stops_is_two_lines_that_count_it_all(tmp_path):
    """The hostile pass logged 20,000 FADEs at 1 MB/s; a burst is now its first line and one line of repeats."""
    log = Log(tmp_path / "flood.jsonl")
    log.start(0.0, rite="golden", variants=[], readings={})
    log.write("go", 1.0, cue="bin-ru", source="page")
    for n in range(20_000):
        log.write("stop", 2.0 + n * 0.0001, cue="bin-ru", source="page")
    log.write("go", 5.0, cue="bai-zhi", source="page")
    log.close()
    lines = _lines(tmp_path / "flood.jsonl")
    assert [(e["event"], e.get("repeats")) for e in lines] == [
        ("session", None), ("go", None), ("stop", None), ("stop", 19_999), ("go", None)]  # 1 + 19,999 STOPs
    assert lines[3]["mono"] == pytest.approx(2.0 + 19_999 * 0.0001)


def test_a_long_flood_is_a_line_every_span_and_other_commands_are_not_merged(tmp_path):
    log = Log(tmp_path / "long.jsonl")
    for n in range(600):  # a minute of STOP ten times a second
        log.write("stop", n / 10, cue="", source="osc")
    log.write("stop", 60.0, cue="", source="key")  # another source: its own line
    log.write("go", 61.0, cue="bin-ru", source="page")
    log.write("go", 61.1, cue="bin-ru", source="page")  # a GO is never merged
    log.close()
    lines = _lines(tmp_path / "long.jsonl")
    osc = [e for e in lines if e["source"] == "osc"]  # each line stands for itself, or for its repeats
    assert len(osc) <= 2 * (60 / showlog.SPAN + 1) and sum(e.get("repeats", 1) for e in osc) == 600
    assert [e["event"] for e in lines[-3:]] == ["stop", "go", "go"] and lines[-3]["source"] == "key"


def test_a_merged_log_still_retimes(tmp_path, repertoire):
    sheet = load(DATA / "golden.yaml", repertoire=repertoire)
    log = Log(tmp_path / "r.jsonl")
    log.start(0.0, rite="golden", variants=[], readings={})
    log.write("go", 10.0, cue="bin-ru", source="page")
    for n in range(100):
        log.write("fade", 11.0 + n / 100, cue="bin-ru", source="page")
    log.write("go", 30.0, cue="bai-zhi", source="page")
    log.close()
    entries, _ = read_log(tmp_path / "r.jsonl", sheet)
    assert retime(build(sheet), [entries])["bin-ru"].n == 1


class Disk:
    """An injected full disk: writes fail with ENOSPC while *full*."""

    def __init__(self) -> None:
        self.full = False
        self.real = showlog._write_line

    def __call__(self, fd: int, line: bytes) -> None:
        if self.full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.real(fd, line)


def test_a_full_disk_is_a_warning_and_the_log_resumes_saying_what_was_lost(tmp_path, monkeypatch, repertoire):
    disk = Disk()
    monkeypatch.setattr(showlog, "_write_line", disk)
    notices: list[str] = []
    log = Log(tmp_path / "full.jsonl", notify=notices.append)
    log.start(0.0, rite="golden", variants=[], readings={})
    log.write("go", 1.0, cue="bin-ru", source="page")
    disk.full = True
    log.write("go", 2.0, cue="bai-zhi", source="page")
    log.write("go", 3.0, cue="zhengge-bei", source="page")
    assert log.trouble == "the log cannot be written (No space left on device): 2 entries lost; the show goes on"
    assert notices == [f"warning: the log {tmp_path / 'full.jsonl'} cannot be written (No space left on device); "
                       "the show goes on, and the log resumes when it can"]
    disk.full = False
    log.write("stop", 4.0, cue="zhengge-bei", source="key")
    log.close()
    assert log.trouble == "" and "2 entries before this one were lost" in notices[-1]
    lines = _lines(tmp_path / "full.jsonl")
    assert [(e["event"], e.get("lost")) for e in lines] == [("session", None), ("go", None), ("stop", 2)]
    entries, _ = read_log(tmp_path / "full.jsonl", load(DATA / "golden.yaml", repertoire=repertoire))
    assert entries[-1].lost == 2


@contextlib.contextmanager
def _tmpfs(where: Path, size: str = "64k"):
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as f, contextlib.suppress(OSError):
        while True:
            f.write(b"\0" * 4096)
            f.flush()
    return filler


def test_a_line_the_disk_cuts_short_leaves_nothing_of_itself(tmp_path):
    with _tmpfs(tmp_path / "disk") as disk:
        log = Log(disk / "log.jsonl", notify=lambda _: None)
        for n in range(100):  # 100 kB into 64 kB: one line is cut short by the disk
            log.write("go", float(n), cue="bin-ru", source="page", pad="x" * 1000)
        log.close()
        text = (disk / "log.jsonl").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert text.endswith("\n") and all(json.loads(line)["pad"] for line in lines)
    assert 40 < len(lines) < 70 and len(lines) + log.lost == 100


def _console(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "yuesheng", "console", str(DATA / "golden.yaml"), "--no-midi",
                             "--listen", "127.0.0.1:0", "--guard", "0.05", *argv], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_the_rite_goes_on_when_the_log_fills_its_disk(tmp_path):
    """The hostile pass: filling --log's file system made the console exit 1, all sound off, blaming the MIDI port.

    The log's last page of the tmpfs has room left when the filler has taken the rest: jumps (each its own line)
    fill it, until the page shows the warning."""
    with _tmpfs(tmp_path / "disk") as disk:
        console, url = start_console(DATA / "golden.yaml", "--guard", "0.05", "--log", str(disk / "rite.jsonl"))
        try:
            assert post(url, "go")["accepted"]
            filler = _fill(disk)
            for n in range(200):
                time.sleep(0.06)  # past the guard
                assert post(url, "goto", ("bai-zhi", "zhengge-bei")[n % 2])["accepted"]
                if (state := console_state(url))["log_warning"]:
                    break
            # the jumps lost: one, or more where the state was read before the player had logged the jump before
            assert re.fullmatch(r"the log cannot be written \(No space left on device\): \d+ entr(y|ies) lost; "
                                r"the show goes on", state["log_warning"]), state["log_warning"]
            time.sleep(0.06)
            assert post(url, "go")["accepted"]
            deadline = time.monotonic() + 5
            while (state := console_state(url))["current"]["id"] == "bin-ru" and time.monotonic() < deadline:
                time.sleep(0.02)
            assert state["current"]["id"] in ("bai-zhi", "zhengge-bei") and console.poll() is None  # it went on
            filler.unlink()
            assert post(url, "stop")["accepted"]
            while console_state(url)["log_warning"] and time.monotonic() < deadline:
                time.sleep(0.02)
            assert console_state(url)["log_warning"] == ""
        finally:
            console.terminate()
            out, err = console.communicate(timeout=10)
        lines = _lines(disk / "rite.jsonl")
    assert console.returncode == 0 and "Traceback" not in err + out, err
    assert "cannot be written (No space left on device); the show goes on" in out
    assert "entries before this one were lost" in out
    assert [e["event"] for e in lines[:2]] == ["session", "go"] and lines[-1]["event"] == "stop"
    assert lines[-1]["lost"] >= 2 and all("lost" not in e for e in lines[:-1])  # the last GOTO and the GO at least


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("make, message", [
    (lambda tmp: Path("/dev/full"), "--log /dev/full: it is a device or socket, not a file"),
    (lambda tmp: _fifo(tmp / "fifo"), "it is a FIFO, not a file (a log is a regular file)"),
])
def test_a_log_that_cannot_be_a_log_is_refused_at_start_in_one_line(tmp_path, make, message):
    console = _console("--log", str(make(tmp_path)))
    out, err = console.communicate(timeout=30)  # a FIFO no longer blocks
    assert console.returncode == 1 and out == "" and err.count("\n") == 1 and message in err, err


def test_a_log_on_a_full_disk_is_refused_at_start(tmp_path):
    with _tmpfs(tmp_path / "disk") as disk:
        _fill(disk)
        console = _console("--log", str(disk / "log.jsonl"))
        out, err = console.communicate(timeout=30)
    assert console.returncode == 1 and out == "" and err.count("\n") == 1
    assert f"--log {disk / 'log.jsonl'}: cannot write it (No space left on device)" in err
