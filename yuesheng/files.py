"""Writing output files safely: a failed or interrupted run leaves no half-written file, and nothing is destroyed.

What ``-o FILE`` does, by what FILE is:

- a new name, or an existing regular file: the data is written to a temporary
  file beside it, flushed to disk, then renamed over it (atomic). An existing
  file keeps its permission bits (and, for root, its owner); a file with other
  hard links is refused, since renaming would leave the other names with the
  old content.
- a symbolic link: written through to the file it points to (atomically, as
  above); the link itself stays a link.
- a character device (``/dev/null``, ``/dev/full``, a terminal), a FIFO or
  ``/dev/stdout`` (anything that exists under ``/dev`` or ``/proc``): written
  directly, never replaced — a FIFO is a legitimate place for a run sheet.
- a directory, a block device or a socket: refused.

``check_output`` makes these checks up front, so that a command can refuse a
bad ``-o`` (or one naming its own input) before it does any work.

The temporary file is named ``.FILE.PID.XXXXXXXX.tmp``, PID being the writer's. A
writer killed with SIGKILL cannot remove it (nothing runs after SIGKILL): the next
run that writes FILE removes each such file whose writer no longer runs, with a
note on standard error. A running writer's file is never touched.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from yuesheng.errors import OutputError
from yuesheng.text import visible

_DIRECT_ROOTS = ("/dev/", "/proc/")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _error(target: str | Path, reason: str) -> OutputError:
    return OutputError(f"cannot write {target}: {reason}")


def _existing(path: Path) -> os.stat_result | None:
    try:
        return path.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _error(path, exc.strerror or str(exc)) from None


def writes_directly(path: str | Path) -> bool:
    """True if *path* is written in place: an existing character device, FIFO, or anything under /dev or /proc."""
    info = _existing(Path(path))
    return info is not None and (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)
                                 or os.path.abspath(path).startswith(_DIRECT_ROOTS))


def check_output(path: str | Path, inputs: Iterable[str | Path] = ()) -> None:
    """Raise OutputError unless *path* can be written without destroying anything, *inputs* included."""
    target = Path(path)
    info = _existing(target)
    if info is not None:
        for item in inputs:
            try:
                same = os.path.samefile(target, item)
            except OSError:
                continue
            if same:
                raise _error(target, f"it is one of this command's inputs ({item}); choose another name")
        if stat.S_ISDIR(info.st_mode):
            raise _error(target, "it is a directory")
        if stat.S_ISBLK(info.st_mode) or stat.S_ISSOCK(info.st_mode):
            kind = "a block device" if stat.S_ISBLK(info.st_mode) else "a socket"
            raise _error(target, f"it is {kind}, not a file")
    if writes_directly(target):
        return
    if info is not None and info.st_nlink > 1:
        raise _error(target, f"it has {info.st_nlink} hard links; replacing it would leave the other names with "
                     "the old content: remove it first or choose another name")
    folder = Path(os.path.realpath(target)).parent
    if not folder.is_dir():
        raise _error(target, f"no such folder {folder}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise _error(target, f"folder {folder} is not writable")


def _keep_owner_and_mode(tmp: str, info: os.stat_result | None) -> None:
    if info is None:
        os.chmod(tmp, 0o666 & ~_umask())  # as an ordinary open() would have made it
        return
    if os.geteuid() == 0:
        os.chown(tmp, info.st_uid, info.st_gid)
    os.chmod(tmp, stat.S_IMODE(info.st_mode))


def _running(pid: int) -> bool:
    """Whether process *pid* exists (one of another user's counts: it runs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it exists, and is not ours to signal
        return True
    return True


def remove_stale(target: Path) -> list[Path]:
    """Remove the temporary files of *target* (``.NAME.PID.XXXXXXXX.tmp`` beside it) whose writer no longer runs,
    each with a note on standard error; the files removed."""
    pattern = re.compile(rf"\.{re.escape(target.name)}\.([0-9]+)\.[A-Za-z0-9_]{{8}}\.tmp", re.ASCII)
    removed = []
    try:
        names = [n for n in os.listdir(target.parent) if n.startswith(f".{target.name}.") and n.endswith(".tmp")]
    except OSError:
        return []
    for name in names:
        if (match := pattern.fullmatch(name)) and int(match[1]) != os.getpid() and not _running(int(match[1])):
            path = target.parent / name
            try:
                path.unlink()
            except OSError:
                continue
            removed.append(path)
            _note(f"removed {path}: a temporary file left by process {match[1]}, which no longer runs")
    return removed


def _note(text: str) -> None:
    """*text* on standard error, if it can be written (a note must never stop the output)."""
    try:
        print(visible(text), file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A path to write the output to; on success it becomes *path*, on failure or interruption nothing is left.

    A device, FIFO or /dev path is yielded itself and written in place (see the module docstring).
    """
    check_output(path)
    if writes_directly(path):
        try:
            yield Path(path)
        except OSError as exc:
            raise _error(path, exc.strerror or str(exc)) from exc
        return
    target = Path(os.path.realpath(path))  # through a symbolic link to the file it names
    info = _existing(target)
    # imported here, not at the top: it pulls in shutil, bz2 and lzma, which a command writing to stdout never needs
    import tempfile

    remove_stale(target)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _error(path, exc.strerror or str(exc)) from None
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        _keep_owner_and_mode(tmp, info)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _error(path, exc.strerror or str(exc)) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | Path, data: bytes | str) -> None:
    """Write *data* to *path* safely (atomically for a file; in place for a device or FIFO)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
