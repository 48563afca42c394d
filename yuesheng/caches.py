"""The per-user cache folders: ``$XDG_CACHE_HOME/yuesheng/NAME`` (``~/.cache/yuesheng/NAME`` by default).

What is kept there is only ever data that yuesheng can make again, read back with a check of its shape; nothing read
from a cache folder is ever run as code (no pickle, no marshalled code). Every reader treats a missing, unreadable,
foreign or malformed entry as a miss, so deleting a folder is always safe (``yuesheng cache clear``).

- ``folder(name)`` opens a folder once: every level yuesheng creates is made 0700 whatever the umask; a level that
  is not the user's, is writable by group or others, or is a symlink is not used (None). The folder is opened with
  ``O_DIRECTORY|O_NOFOLLOW`` level by level below the cache root, and each entry is opened relative to it and checked
  (``fstat``: a regular file of the user's, not writable by others, within the reader's limit) before it is read.
  Entries are written whole: a temporary file created exclusively, then renamed over the entry; each begins with a
  SHA-256 of the rest, so a damaged entry (cut short, a byte changed) is a miss before any reader parses it.
- ``key(kind, *parts)`` is the one rule that names an entry: a digest of the format, the kind, the installed package
  (every file by name and content: ``package_digest``) and the parts, which the caller makes of every input it reads
  (the bytes of each file) and its options.
- An entry made only of shipped files (a shipped rite's sheet, blocking and hall: ``shipped``) is named with the prefix
  ``SHIPPED``, and a folder keeps its newest ``entries`` of each kind apart: the entries of one's own sheets, however
  many edits make, never evict the shipped rites'.
- ``built(folder, name)``: the entries the package ships for its own rites (``yuesheng/built/FOLDER/NAME``, made
  when the package is built: ``setup.py``), read where the user's folder has no such entry. Each is named by the same
  ``key`` as the user's, so it is read only for the very inputs it was made from; it is checked as a kept entry is
  (its digest), and left out of ``package_digest`` (it is made from the package, not a part of it).
  ``YUESHENG_NO_SHIPPED=1`` leaves them unread (the test suite's default, so that it builds what it tests).
- ``digest(*values)``: a part of a key made of frozen values rather than of files (a SHA-256 of them written in a
  canonical form, sets sorted; never read back), for what is made from values, as the director's page
  (``web/pages.py``) from its Timeline.
- ``YUESHENG_NO_CACHE=1`` or ``disable()`` (the CLI's ``--no-cache``) turns every cache off: nothing read, nothing
  written.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import sys
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

FORMAT = "yuesheng-cache-2"
PACKAGE = Path(__file__).resolve().parent
BUILT = "built"  # the package's folder of the entries made when it is built (``built``), one folder per cache folder
BUILT_DIR = PACKAGE / BUILT
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")  # a folder's or an entry's name: never a path
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_ENTRY = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK  # a FIFO would block an open without O_NONBLOCK
_on = [True]


def disable() -> None:
    """Turn every cache off for this process (``--no-cache``)."""
    _on[0] = False


def enable() -> None:
    """Turn the caches on again (after a command run with ``--no-cache`` in a process that goes on)."""
    _on[0] = True


def enabled() -> bool:
    """Whether caches are used: not after ``disable()``, nor with ``YUESHENG_NO_CACHE`` set (to anything but 0)."""
    return _on[0] and os.environ.get("YUESHENG_NO_CACHE", "") in ("", "0")


def root() -> Path | None:
    """Where yuesheng's folders are: ``$XDG_CACHE_HOME/yuesheng`` (an absolute path only), else
    ``~/.cache/yuesheng``; None without a home folder."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    try:
        return (Path(base) if os.path.isabs(base) else Path.home() / ".cache") / "yuesheng"
    except RuntimeError:  # no home folder
        return None


@dataclass(frozen=True, slots=True)
class Folder:
    """A cache folder opened once (*fd*); every entry is opened, written and removed relative to it."""

    fd: int
    path: Path

    def read(self, name: str, *, limit: int) -> bytes | None:
        """The bytes of entry *name*, or None: no such entry, or not a regular file of the user's that others cannot
        write, or larger than *limit*, or unreadable, or not what the digest written with it says (damaged). Where
        the user's folder has none, the package's own (``built``)."""
        if not _NAME.fullmatch(name):
            return None
        kept = self._read(name, limit)
        return kept if kept is not None else built(self.path.name, name, limit=limit)

    def _read(self, name: str, limit: int) -> bytes | None:
        try:
            fd = os.open(name, _ENTRY, dir_fd=self.fd)
        except OSError:
            return None
        try:
            if not _private(os.fstat(fd), stat.S_ISREG, limit + _HEAD):
                return None
            with open(fd, "rb", closefd=False) as handle:
                kept = handle.read(limit + _HEAD + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        return _checked(kept, limit)

    def write(self, name: str, data: bytes, *, entries: int) -> None:
        """Write *data* as entry *name* whole (after a digest of it: a temporary file, created exclusively, renamed over
        it), then keep only the *entries* newest entries; any failure leaves the folder as it was (it is only a
        cache)."""
        if not _NAME.fullmatch(name):
            return
        temporary = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=self.fd)
        except OSError:
            return
        try:
            with open(fd, "wb") as handle:
                handle.write(_head(data) + data)
            os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except OSError:
            with suppress(OSError):
                os.unlink(temporary, dir_fd=self.fd)
            return
        self.prune(entries)

    def prune(self, entries: int) -> None:
        """Remove all but the *entries* newest entries (by time of writing) of each kind: those of shipped files only
        (named ``SHIPPED``…) and the others, so that no number of one's own evicts a shipped one."""
        newest = sorted(self.entries(), key=lambda e: e[2], reverse=True)
        for kind in (True, False):
            for name, _, _ in [e for e in newest if e[0].startswith(SHIPPED) == kind][max(entries, 0):]:
                with suppress(OSError):
                    os.unlink(name, dir_fd=self.fd)

    def entries(self) -> list[tuple[str, int, int]]:
        """Each entry (not the temporary files being written): its name, size in bytes and time of writing (ns)."""
        found = []
        with suppress(OSError), os.scandir(self.fd) as listing:
            for item in listing:
                if not item.name.startswith("."):
                    with suppress(OSError):
                        info = item.stat(follow_symlinks=False)
                        found.append((item.name, info.st_size, info.st_mtime_ns))
        return found

    def clear(self) -> int:
        """Remove every file of the folder (symlinks themselves, never what they point to); how many bytes."""
        removed = 0
        with suppress(OSError), os.scandir(self.fd) as listing:
            for item in listing:
                with suppress(OSError):
                    info = item.stat(follow_symlinks=False)
                    if not stat.S_ISDIR(info.st_mode):
                        os.unlink(item.name, dir_fd=self.fd)
                        removed += info.st_size
        return removed

    def close(self) -> None:
        """Close a folder from ``existing`` (one from ``folder`` stays open for the process)."""
        os.close(self.fd)

    def read_json(self, name: str, *, limit: int) -> Any:
        """The JSON value of entry *name*, or None (no entry, or not JSON)."""
        data = self.read(name, limit=limit)
        try:
            return json.loads(data) if data is not None else None
        except (ValueError, RecursionError):
            return None

    def write_json(self, name: str, value: Any, *, entries: int) -> None:
        """Keep *value* as JSON in entry *name*; a value JSON cannot hold (NaN, infinity) is not kept."""
        try:
            data = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        except (ValueError, TypeError, RecursionError):
            return
        self.write(name, data, entries=entries)


_HEAD = len(FORMAT) + 1 + 64 + 1  # each entry begins with a line of the format and the SHA-256 of the rest


def _head(data: bytes) -> bytes:
    return f"{FORMAT} {hashlib.sha256(data).hexdigest()}\n".encode("ascii")


def _checked(kept: bytes, limit: int) -> bytes | None:
    """An entry's data after its head, if the head's digest is of it and it is within *limit*; else None."""
    data = kept[_HEAD:]
    return data if len(data) <= limit and kept[:_HEAD] == _head(data) else None


def built(folder: str, name: str, *, limit: int) -> bytes | None:
    """The entry *name* of cache *folder* as the package ships it (``yuesheng/built/FOLDER/NAME``: the shipped rites'
    staging, routes, pages' fonts, parsed YAML and texts, made when the package was built), checked as a kept entry
    is; None where there is none (a checkout never built, a rite not shipped) or it is damaged. Package data, as
    trusted as the package's code (not the user's own files): a regular file, never followed through a symlink."""
    if not (_NAME.fullmatch(folder) and _NAME.fullmatch(name)) or \
            os.environ.get("YUESHENG_NO_SHIPPED", "") not in ("", "0"):
        return None
    try:
        fd = os.open(BUILT_DIR / folder / name, _ENTRY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with open(fd, "rb", closefd=False) as handle:
            return _checked(handle.read(limit + _HEAD + 1), limit)
    except OSError:
        return None
    finally:
        os.close(fd)


_OPEN: dict[tuple[Path, str], Folder] = {}


def folder(name: str) -> Folder | None:
    """The cache folder *name*, opened once a process; None where caching is off or the folder
    cannot be made or is not safe to use (not the user's, writable by others, a symlink)."""
    where = root()
    if not enabled() or where is None or not _NAME.fullmatch(name) or os.open not in os.supports_dir_fd:
        return None
    opened = _OPEN.get((where, name))
    if opened is not None:
        with suppress(OSError):
            if os.fstat(opened.fd).st_nlink:  # not removed since (``cache clear``, a test's temporary folder)
                return opened
        _OPEN.pop((where, name))
        with suppress(OSError):
            os.close(opened.fd)
    try:
        fd = _open_levels(where, (name,), create=True)
    except OSError:
        return None
    _OPEN[where, name] = Folder(fd, where / name)
    return _OPEN[where, name]


def existing(name: str) -> Folder | None:
    """The cache folder *name* if it is there and safe, neither made nor counted as off (``cache info``)."""
    where = root()
    try:
        return Folder(_open_levels(where, (name,), create=False), where / name) if where is not None else None
    except OSError:
        return None


def root_safe() -> bool | None:
    """Whether yuesheng's cache root may be used (the user's, a folder, not writable by others); None if it is not
    there (``cache info``)."""
    where = root()
    if where is None or not os.path.lexists(where):
        return None
    try:
        os.close(_open_levels(where, (), create=False))
    except OSError:
        return False
    return True


def kept_folders() -> list[str]:
    """The names of the folders in yuesheng's cache root now (those of older versions too), for ``cache info|clear``."""
    where = root()
    try:
        fd = _open_levels(where, (), create=False) if where is not None else None
    except OSError:
        return []
    if fd is None:
        return []
    try:
        with os.scandir(fd) as listing:
            return sorted(item.name for item in listing if item.is_dir(follow_symlinks=False)
                          and _NAME.fullmatch(item.name))
    finally:
        os.close(fd)


def remove(name: str) -> int | None:
    """Empty the cache folder *name* and remove it, never following a symlink; the bytes removed, or None if it was not
    there or not safe to touch."""
    where, opened = root(), existing(name)
    if opened is None or where is None:
        return None
    try:
        removed = opened.clear()
        parent = _open_levels(where, (), create=False)
        try:
            with suppress(OSError):
                os.rmdir(name, dir_fd=parent)
        finally:
            os.close(parent)
    finally:
        opened.close()
    return removed


def _open_levels(where: Path, names: tuple[str, ...], *, create: bool) -> int:
    """The fd of the folder *where*/NAMES…, each level below the cache root opened with O_NOFOLLOW and checked (the
    user's, not writable by group or others), and made 0700 where *create* and missing; OSError where it cannot be."""
    fd = _open_base(where.parent, create=create)
    try:
        for level in (where.name, *names):
            made = False
            if create:
                with suppress(FileExistsError):
                    os.mkdir(level, 0o700, dir_fd=fd)
                    made = True
            below = os.open(level, _DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = below
            if made:
                os.fchmod(fd, 0o700)
            if not _private(os.fstat(fd), stat.S_ISDIR, None):
                raise PermissionError(f"{level}: not a private folder of this user's")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_base(base: Path, *, create: bool) -> int:
    """The fd of the cache root *base* (``$XDG_CACHE_HOME``, which may be a symlink of the user's choosing), its
    missing levels made 0700."""
    if create and not base.is_dir():
        missing = [level for level in (base, *base.parents) if not level.exists()]
        for level in reversed(missing):
            with suppress(FileExistsError):
                os.mkdir(level, 0o700)
                made = os.open(level, _DIRECTORY | os.O_NOFOLLOW)
                try:
                    os.fchmod(made, 0o700)
                finally:
                    os.close(made)
    return os.open(base, _DIRECTORY)


def _private(info: os.stat_result, kind: Callable[[int], bool], limit: int | None) -> bool:
    """Whether *info* is of a *kind* (regular file, folder) owned by this user, that group and others cannot write,
    and not over *limit* bytes."""
    return (kind(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            and (limit is None or info.st_size <= limit))


# --- the one key rule ------------------------------------------------------------------------------------------------

SHIPPED = "shipped-"  # the prefix of an entry made only of shipped files (``prefix``)
_SHIPPED_FOLDERS = ("cues", "scores", "blocking")  # in the package when installed, beside it in a checkout


def shipped(path: str | Path) -> bool:
    """Whether *path* is a file shipped with yuesheng: in the package, or in a checkout's ``cues/``, ``scores/`` or
    ``blocking/`` beside it (by its absolute path, links not followed: a link to a shipped file is one's own)."""
    return os.path.abspath(path).startswith(_shipped_folders())


@cache
def _shipped_folders() -> tuple[str, ...]:
    return tuple(os.path.join(folder, "") for folder in (str(PACKAGE), *(str(PACKAGE.parent / name)
                                                                          for name in _SHIPPED_FOLDERS)))


def prefix(*paths: str | Path) -> str:
    """``SHIPPED`` if every one of *paths* is shipped (``shipped``), else '': the start of the name of an entry made
    of them, kept apart from the others when a folder is pruned."""
    return SHIPPED if paths and all(map(shipped, paths)) else ""


def prefix_of(entry: str) -> str:
    """The prefix of *entry* (an entry made from it is shipped, or not, as it is)."""
    return SHIPPED if entry.startswith(SHIPPED) else ""


def key(kind: str, *parts: bytes | str) -> str:
    """The name of an entry of *kind* made from *parts* (the bytes of every file it reads, its options): a digest of
    them with the format, the Python that runs and the installed package (``package_digest``)."""
    digest = hashlib.sha256(f"{FORMAT}\0{sys.version}\0{kind}\0".encode())
    digest.update(package_digest())
    for part in parts:
        data = part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass")
        digest.update(b"b" if isinstance(part, bytes) else b"s")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()[:40]


@cache
def package_digest() -> bytes:
    """A digest of every file of the installed package (code, data, templates, fonts, texts) by its name and its
    content, not its size or time: a change to any file of yuesheng changes every key. Once a process (about 4 ms).
    The entries made when it is built (``BUILT``) are not in it: they are made from it."""
    digest = hashlib.sha256()
    for name, path in _package_files(str(PACKAGE)):
        with open(path, "rb") as handle:
            data = handle.read()
        digest.update(f"{name}\0{len(data)}\0".encode("utf-8", "surrogateescape"))
        digest.update(data)
    return digest.digest()


def _package_files(top: str, prefix: str = "") -> list[tuple[str, str]]:
    """Every file below *top* but compiled byte-code: its name relative to *top* and its path, in order."""
    found = []
    with os.scandir(top) as listing:
        for item in sorted(listing, key=lambda item: item.name):
            if item.is_dir(follow_symlinks=False):
                if item.name != "__pycache__" and (prefix or item.name != BUILT):
                    found += _package_files(item.path, f"{prefix}{item.name}/")
            elif not item.name.endswith((".pyc", ".pyo")):
                found.append((prefix + item.name, item.path))
    return found


@cache
def library(name: str) -> bytes:
    """The ``__init__.py`` of the installed library *name* (which names its version), found without importing it: a
    part of the key of what the library makes (b'' if it is not installed). Once a process."""
    from importlib.util import find_spec

    try:
        spec = find_spec(name)
        return Path(spec.origin).read_bytes() if spec is not None and spec.origin else b""
    except (OSError, ValueError, ImportError):
        return b""



def digest(*values: Any, apart: tuple[type, ...] = ()) -> str | None:
    """A SHA-256 of *values* (frozen values: dataclasses, named tuples, tuples, dicts, strings, numbers, enums), a part
    of a key for what is made of them rather than of files (``key``); None for a value it cannot write.

    Written by the standard library's pickle writer, in C, with each dataclass written as its class and the fields its
    equality compares, in order (not through its ``__getstate__``, in Python), and a field declared a set sorted
    (a set's order follows its strings' hashes, which differ between processes). Only written, never read back:
    nothing is unpickled. Written without pickle's memo, so what is written is the values alone, never which of them
    are one object (a cue sheet's cues read, or made again from what was kept, share other objects): equal values give
    the same digest, unequal values never. An instance of a class in *apart* (a large value many others hold: a
    piece) is written as its own digest, made once for each such object."""
    import pickle

    sink = _Digest()
    try:
        _pickler(sink, apart).dump(values)
    except (pickle.PicklingError, TypeError, AttributeError, ValueError, RecursionError):
        return None
    return sink.sha.hexdigest()


def column_digest(columns: list[tuple[Any, ...]]) -> str | None:
    """``digest`` of columns of plain values (strings, numbers, true/false, None, enum members: thousands of events'
    fields, one column each), faster: each string interned first, so that pickle's memo, which writes an object met
    again as a reference to its first writing, sees every equal string as one object, wherever it came from (the other
    values are written in place, or are one object each): the same values give the same digest."""
    import pickle

    def interned(column: tuple[Any, ...]) -> tuple[Any, ...]:
        try:
            return tuple(map(sys.intern, column))
        except TypeError:  # not all strings
            return tuple(sys.intern(v) if type(v) is str else v for v in column)

    sink = _Digest()
    pickler = _pickler(sink, ())
    pickler.fast = False  # the memo on: every string interned, each column a tuple of its own
    try:
        pickler.dump([interned(c) for c in columns])
    except (pickle.PicklingError, TypeError, AttributeError, ValueError, RecursionError):
        return None
    return sink.sha.hexdigest()


def _pickler(sink: Any, apart: tuple[type, ...], made: dict[int, tuple[Any, str]] | None = None) -> Any:
    """``digest``'s writer into *sink*: no memo; each instance of *apart* as its digest (kept in *made* by object)."""
    pickler = _canonical()(sink, protocol=5)
    pickler.fast = True  # no memo: the values, not their sharing
    pickler.apart, pickler.made = apart, {} if made is None else made
    return pickler


class _Digest:
    """A file that hashes what is written to it."""

    def __init__(self) -> None:
        self.sha = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.sha.update(data)
        return len(data)


@cache
def _canonical() -> type:
    """The pickle writer of ``digest``, made on first use (pickle is imported only for a key of values)."""
    import pickle

    readers: dict[type, Callable[[Any], tuple[Any, ...]] | None] = {}

    class Canonical(pickle.Pickler):
        apart: tuple[type, ...]
        made: dict[int, tuple[Any, str]]

        def reducer_override(self, obj: Any) -> Any:
            cls = type(obj)
            if cls in self.apart:
                if id(obj) not in self.made:
                    sink = _Digest()
                    _pickler(sink, (), self.made).dump(obj)
                    self.made[id(obj)] = (obj, sink.sha.hexdigest())  # the object held: its id is not reused
                return (str, (self.made[id(obj)][1],))
            if cls not in readers:
                readers[cls] = _fields(cls)
            read = readers[cls]
            return NotImplemented if read is None else (cls, read(obj))

    return Canonical


def _fields(cls: type) -> Callable[[Any], tuple[Any, ...]] | None:
    """How ``digest`` reads an instance of *cls*: a dataclass's fields that its equality compares, in order, a field
    declared a set sorted; None for any other class (written as pickle writes it)."""
    from dataclasses import fields, is_dataclass
    from operator import attrgetter

    if not is_dataclass(cls):
        return None
    compared = [f for f in fields(cls) if f.compare]  # what its equality reads: not a field derived from others
    names = [f.name for f in compared]
    get: Callable[[Any], tuple[Any, ...]] = attrgetter(*names) if len(names) > 1 else \
        lambda obj: tuple(getattr(obj, n) for n in names)
    sets = {n for n, f in enumerate(compared) if "set" in str(f.type).lower()}  # its declared type, as written
    if not sets:
        return get

    def read(obj: Any) -> tuple[Any, ...]:
        return tuple(tuple(sorted(v, key=repr)) if n in sets and isinstance(v, set | frozenset) else v
                     for n, v in enumerate(get(obj)))

    return read
