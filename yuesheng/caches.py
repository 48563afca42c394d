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
from enum import Enum
from functools import cache, partial
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



def newest(used: dict[str, Any], kept: dict[str, Any], most: int) -> dict[str, Any]:
    """The parts of an entry to write back: those *used* now, then those *kept* before, up to *most* in all (an entry
    kept per file: each piece, cue or derivation under its own digest)."""
    out = dict(used)
    for name, value in kept.items():
        if len(out) >= most:
            break
        out.setdefault(name, value)
    return out


def digest(*values: Any, apart: tuple[type, ...] = ()) -> str | None:
    """A SHA-256 of *values* (frozen values: dataclasses, named tuples, tuples, lists, dicts, sets, strings, numbers,
    fractions, enums), a part of a key for what is made of them rather than of files (``key``); None for a value of
    another kind.

    Each value is written as bytes that say what it is (``_Writer``): an atom by its ``repr``, a dataclass by its class
    and the fields its equality compares, a set with its members in order (a set's own order follows its strings'
    hashes, which differ between processes). Only the values are written, never which of them are one object: equal
    values give the same digest, unequal values never. An instance of a class in *apart* (a large value that many
    others hold: a piece) is written as its own digest, made once for each such object. Nothing is kept or read back:
    the bytes are hashed as they are written."""
    writer = _Writer(apart)
    try:
        writer.write(values)
    except (TypeError, RecursionError):
        return None
    return writer.hexdigest()


_ATOMS = frozenset({str, int, float, bool, bytes, type(None)})  # written by ``repr``, each unlike every other


class _Writer:
    """``digest``'s bytes of a value, each form tagged so that no two values give the same bytes: an atom by its
    ``repr``; a sequence of atoms of one kind at C speed (``_atoms``); ``T``/``L`` another tuple or list, ``D`` a dict,
    ``S`` a set (its members' digests in order), ``E`` an enum member, ``F`` a fraction, ``N`` a named tuple, ``C`` a
    dataclass (the fields its equality compares), ``A`` a value written apart (its own digest)."""

    def __init__(self, apart: tuple[type, ...], made: dict[int, tuple[Any, str]] | None = None) -> None:
        self.sha = hashlib.sha256()
        self.parts: list[str] = []  # text not yet hashed: many small pieces, hashed at once
        self.put = self.parts.append
        self.apart = apart
        self.made = {} if made is None else made  # id → (the object, held so that its id is not reused; its digest)
        self.writers: dict[type, Callable[[Any], None]] = {}

    def hexdigest(self) -> str:
        """The SHA-256 of what was written."""
        self._flush()
        return self.sha.hexdigest()

    def _flush(self) -> None:
        self.sha.update("".join(self.parts).encode("utf-8", "surrogatepass"))
        self.parts.clear()

    def _bytes(self, data: bytes) -> None:
        """*data* hashed after the text before it."""
        self._flush()
        self.sha.update(data)

    def write(self, value: Any) -> None:
        cls = type(value)
        if cls in _ATOMS:
            self.put(repr(value))
            return
        write = self.writers.get(cls)
        if write is None:
            write = self.writers[cls] = self._writer(cls)
        write(value)

    def _writer(self, cls: type) -> Callable[[Any], None]:
        """How an instance of *cls* is written (TypeError for a class ``digest`` does not write)."""
        name = f"{cls.__module__}.{cls.__qualname__}"
        fractions = sys.modules.get("fractions")  # no Fraction without its module (not imported here)
        if cls is tuple or cls is list:
            return partial(self._sequence, "T" if cls is tuple else "L")
        if issubclass(cls, Enum):
            return lambda v: self.put(f"E{name}.{v._name_};")
        if issubclass(cls, dict):  # a frozen dict of the model is a dict underneath
            return lambda v: self._sequence("D", [x for item in v.items() for x in item])
        if issubclass(cls, set | frozenset):
            return lambda v: self._sequence("S", sorted(self._own_digest(x, self.apart) for x in v))
        if fractions is not None and issubclass(cls, fractions.Fraction):
            return lambda v: self.put(f"F{v.numerator}/{v.denominator};")
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):
            return partial(self._instance, f"N{name};", tuple)
        if cls in self.apart:
            others = tuple(c for c in self.apart if c is not cls)  # the value itself written whole
            return lambda v: self.put(f"A{self._own_digest(v, others)}")
        return partial(self._instance, f"C{name};", _compared(cls))

    def _instance(self, tag: str, fields: Callable[[Any], tuple[Any, ...]], value: Any) -> None:
        """A named tuple or a dataclass: its class, then its fields."""
        self.put(tag)
        self._sequence("T", fields(value))

    def _sequence(self, tag: str, value: tuple[Any, ...] | list[Any]) -> None:
        """A sequence: its tag, its length, its items (those of one kind of atom or of one enum at C speed)."""
        self.put(f"{tag}{len(value)}")
        kinds = set(map(type, value))
        kind = next(iter(kinds)) if len(kinds) == 1 else None
        if kind is not None and kind in _ATOMS:
            self._bytes(_atoms(kind, value))
        elif kind is not None and issubclass(kind, Enum):  # a column of an enum: each member by name
            self.put(f"e{kind.__module__}.{kind.__qualname__};")
            self._bytes(_atoms(str, [v._name_ for v in value]))
        elif kinds <= _ATOMS:
            self.put(f"a{value!r}")
        else:
            self.put("(")
            for item in value:
                if type(item) in _ATOMS:
                    self.put(f"{item!r},")
                else:
                    self.write(item)
                    self.put(",")

    def _own_digest(self, value: Any, apart: tuple[type, ...]) -> str:
        """*value*'s own digest, made once for each object (a set's member, a value written apart)."""
        if id(value) not in self.made:
            writer = _Writer(apart, self.made)
            writer.write(value)
            self.made[id(value)] = (value, writer.hexdigest())
        return self.made[id(value)][1]


def _atoms(kind: type, value: tuple[Any, ...] | list[Any]) -> bytes:
    """A sequence of atoms all of *kind*, at C speed: strings by their lengths and then their text, numbers by their
    bytes (a float's exact bits), any other kind by ``repr``."""
    from array import array

    try:
        if kind is str:
            return b"s" + array("q", map(len, value)).tobytes() + "".join(value).encode("utf-8", "surrogatepass")
        if kind is int:
            return b"i" + array("q", value).tobytes()
        if kind is float:
            return b"f" + array("d", value).tobytes()
    except OverflowError:  # an integer past 64 bits: written as it is
        pass
    return b"r" + repr(value).encode("utf-8", "surrogatepass")


def _compared(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """The fields of dataclass *cls* that its equality compares, in order, as a tuple of an instance's values;
    TypeError for a class that is not a dataclass (``digest`` writes no other)."""
    from dataclasses import fields, is_dataclass
    from operator import attrgetter

    if not is_dataclass(cls):
        raise TypeError(f"digest cannot write a {cls.__qualname__}")
    names = [f.name for f in fields(cls) if f.compare]  # what its equality reads: not a field derived from others
    if len(names) > 1:
        return attrgetter(*names)
    return lambda obj: tuple(getattr(obj, n) for n in names)
