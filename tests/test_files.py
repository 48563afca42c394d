"""Writing outputs: atomically for files, in place for devices and FIFOs, never destroying what is there."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from yuesheng.errors import OutputError
from yuesheng.files import check_output, write_atomic, writes_directly
from yuesheng.music.repertoire import data_dir

ROOT = Path(__file__).resolve().parent.parent
CUE = str(data_dir("cues") / "xiangyinjiu.yaml")


def _yuesheng(*argv: str, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess[str]:
    """The command line in its own process (for real streams and signals), time-limited."""
    return subprocess.run([sys.executable, "-m", "yuesheng", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, **kwargs)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_a_device_is_written_in_place_never_replaced(run, device):
    before = os.stat(device)
    code, out, err = run("timeline", "xiangyinjiu", "-o", device)
    after = os.stat(device)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    if device == "/dev/null":
        assert code == 0 and out == "" and f"wrote {device}: run sheet" in err
    else:
        assert code == 1 and err == "error: cannot write /dev/full: No space left on device\n"


def test_render_to_dev_null_keeps_the_device(run):
    code, _, err = run("render", "xiangyinjiu", "-o", "/dev/null")
    assert code == 0 and "wrote /dev/null" in err and stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_dev_stdout_receives_the_run_sheet(tmp_path):
    result = _yuesheng("timeline", "xiangyinjiu", "-o", "/dev/stdout")
    assert result.returncode == 0
    assert result.stdout.startswith("鄉飲酒禮 (xiangyinjiu) — run sheet")
    assert result.stderr.startswith("wrote /dev/stdout: run sheet of 鄉飲酒禮")


def test_a_fifo_receives_the_run_sheet(run, tmp_path):
    fifo = tmp_path / "sheet.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    signal.alarm(30)  # a hang fails the test (SIGALRM's default action ends the run) instead of blocking it
    try:
        code, _, err = run("timeline", "xiangyinjiu", "--format", "csv", "-o", str(fifo))
    finally:
        signal.alarm(0)
    reader.join(10)
    assert code == 0 and f"wrote {fifo}" in err
    assert got and got[0].decode("utf-8").startswith("start,")
    assert stat.S_ISFIFO(fifo.stat().st_mode) and _leftovers(tmp_path) == []


def test_a_socket_is_refused(run, tmp_path):
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        code, _, err = run("timeline", "xiangyinjiu", "-o", str(path))
        assert code == 1 and err == f"error: cannot write {path}: it is a socket, not a file\n"
        assert stat.S_ISSOCK(path.stat().st_mode)
    finally:
        server.close()


def test_a_directory_is_refused(run, tmp_path):
    code, _, err = run("timeline", "xiangyinjiu", "-o", str(tmp_path))
    assert code == 1 and err == f"error: cannot write {tmp_path}: it is a directory\n"


def test_a_symlink_is_written_through_and_stays_a_link(run, tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    code, _, _ = run("timeline", "xiangyinjiu", "-o", str(link))
    assert code == 0 and link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text(encoding="utf-8").startswith("鄉飲酒禮 (xiangyinjiu) — run sheet")
    assert _leftovers(tmp_path) == []


def test_output_naming_the_cue_sheet_is_refused_before_anything_is_written(run, tmp_path):
    cue = tmp_path / "rite.yaml"
    cue.write_bytes(Path(CUE).read_bytes())
    before = cue.read_bytes()
    code, out, err = run("timeline", str(cue), "-o", str(cue))
    assert code == 1 and out == ""
    assert err == f"error: cannot write {cue}: it is one of this command's inputs ({cue}); choose another name\n"
    assert cue.read_bytes() == before and _leftovers(tmp_path) == []


def test_output_naming_a_score_under_scores_is_refused(run, tmp_path):
    scores = tmp_path / "scores"
    scores.mkdir()
    mine = scores / "luming.yaml"
    mine.write_bytes((data_dir("scores") / "luming.yaml").read_bytes())
    before = mine.read_bytes()
    code, _, err = run("render", "xiangyinjiu", "--scores", str(scores), "-o", str(mine))
    assert code == 2 and "expected a .mid file" in err  # the suffix is checked first
    code, _, err = run("timeline", "xiangyinjiu", "--scores", str(scores), "-o", str(mine))
    assert code == 1 and "it is one of this command's inputs" in err
    assert mine.read_bytes() == before and _leftovers(scores) == []


def test_overwriting_keeps_the_mode(run, tmp_path):
    out = tmp_path / "run.txt"
    out.write_text("old\n")
    out.chmod(0o640)
    code, _, _ = run("timeline", "xiangyinjiu", "-o", str(out))
    assert code == 0 and stat.S_IMODE(out.stat().st_mode) == 0o640 and out.read_text(encoding="utf-8") != "old\n"


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file away")
def test_overwriting_as_root_keeps_the_owner(tmp_path):
    out = tmp_path / "run.txt"
    out.write_text("old\n")
    os.chown(out, 65534, 65534)
    write_atomic(out, "new\n")
    assert (out.stat().st_uid, out.stat().st_gid, out.read_text()) == (65534, 65534, "new\n")


def test_a_new_file_follows_the_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o640


def test_a_file_with_hard_links_is_refused_and_left_alone(run, tmp_path):
    out = tmp_path / "run.txt"
    out.write_text("old\n")
    os.link(out, tmp_path / "other-name.txt")
    code, _, err = run("timeline", "xiangyinjiu", "-o", str(out))
    assert code == 1 and "it has 2 hard links" in err
    assert out.read_text() == "old\n" and (tmp_path / "other-name.txt").read_text() == "old\n"


@pytest.mark.parametrize("sig, code, line", [(signal.SIGINT, 130, "interrupted (Ctrl-C)"),
                                             (signal.SIGTERM, 143, "terminated (SIGTERM)")])
def test_a_signal_while_writing_leaves_no_temporary_file(run, tmp_path, monkeypatch, sig, code, line):
    real_fsync = os.fsync

    def fsync_then_signal(fd: int) -> None:
        real_fsync(fd)
        os.kill(os.getpid(), sig)

    monkeypatch.setattr(os, "fsync", fsync_then_signal)
    out = tmp_path / "run.txt"
    got, stdout, err = run("timeline", "xiangyinjiu", "-o", str(out))
    assert got == code and stdout == "" and err.count("\n") == 1 and err.startswith(line)
    assert list(tmp_path.iterdir()) == []


def test_sigterm_to_a_real_process_exits_143_without_traceback(tmp_path):
    script = ("import os, signal, sys\n"
              "real = os.fsync\n"
              "def fsync(fd):\n"
              "    real(fd)\n"
              "    os.kill(os.getpid(), signal.SIGTERM)\n"
              "os.fsync = fsync\n"
              "from yuesheng.cli import main_exit\n"
              f"sys.argv = ['yuesheng', 'render', 'xiangyinjiu', '-o', {str(tmp_path / 'x.mid')!r}]\n"
              "main_exit()\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 143 and "Traceback" not in result.stderr
    assert result.stderr.startswith("terminated (SIGTERM)") and list(tmp_path.iterdir()) == []


def test_check_output_names_the_problem(tmp_path):
    with pytest.raises(OutputError, match="no such folder"):
        check_output(tmp_path / "none" / "x.mid")
    assert writes_directly("/dev/stdout") and writes_directly("/proc/self/fd/1")
    assert not writes_directly(tmp_path / "x.mid")


# -- issue 22 §6: SIGKILL leaves a temporary file; the next run removes it if its writer is gone --------------------

def _dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_temporary_file_names_its_writer(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace

    def spy(src, dst):
        seen.append(Path(src).name)
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    write_atomic(tmp_path / "out.mid", b"x")
    assert seen and seen[0].startswith(f".out.mid.{os.getpid()}.") and seen[0].endswith(".tmp")


def test_a_killed_writers_temporary_file_is_removed_on_the_next_run_with_a_note(run, tmp_path):
    dead, live = _dead_pid(), os.getppid()  # the parent of this test process runs for the whole test
    stale = tmp_path / f".out.mid.{dead}.k1ll3d00.tmp"
    running = tmp_path / f".out.mid.{live}.w0rk1ng0.tmp"
    other = tmp_path / f".other.mid.{dead}.abcdef12.tmp"  # another output's: its own next run sees to it
    theirs = tmp_path / f".out.mid.{dead}.tmp.bak"  # not of our naming
    for path in (stale, running, other, theirs):
        path.write_bytes(b"left behind")
    code, _, err = run("render", str(data_dir("cues") / "xiangyinjiu.yaml"), "-o", str(tmp_path / "out.mid"))
    assert code == 0
    assert not stale.exists() and running.exists() and other.exists() and theirs.exists()
    assert f"removed {stale}: a temporary file left by process {dead}, which no longer runs" in err
    assert (tmp_path / "out.mid").read_bytes().startswith(b"MThd")
