"""The per-user cache folders: ``$XDG_CACHE_HOME/yuesheng/NAME`` (``~/.cache/yuesheng/NAME`` by default).

What is kept there is only ever a copy of what yuesheng can make again (compiled templates, a page's font); every
reader treats a missing, unreadable or foreign entry as a miss, so deleting a folder is always safe.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from contextlib import suppress
from dataclasses import fields, is_dataclass
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any


def cache_folder(name: str) -> Path | None:
    """The cache folder *name*, made private to this user; None where it cannot be made, is not a folder of this
    user's, or others could write in it (some of its files are run as code, others embedded in pages)."""
    base = os.environ.get("XDG_CACHE_HOME") or ""
    try:
        root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
        folder = root / "yuesheng" / name
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = folder.lstat()
    except (OSError, RuntimeError):  # RuntimeError: no home folder
        return None
    private = stat.S_ISDIR(st.st_mode) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    return folder if private and (not hasattr(os, "getuid") or st.st_uid == os.getuid()) else None


def keep(folder: Path, name: str, data: bytes, *, entries: int) -> None:
    """Write *data* as *name* in *folder* whole (a temporary file renamed), then keep only the *entries* newest files;
    any failure leaves the cache as it was (it is only a cache)."""
    temporary = folder / f".{name}.{os.getpid()}.tmp"
    with suppress(OSError):
        temporary.write_bytes(data)
        os.replace(temporary, folder / name)
        files = sorted((p for p in folder.iterdir() if not p.name.startswith(".")), key=_age)
        for old in files[:max(len(files) - entries, 0)]:  # not files[:-entries]: entries=0 would keep them all
            old.unlink(missing_ok=True)
    with suppress(OSError):
        temporary.unlink(missing_ok=True)


def _age(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def pickled(value: object) -> bytes:
    """*value* as a pickle that loads fast (``_reduce``), for ``unpickled`` to read from a cache folder."""
    import io
    import pickle
    from fractions import Fraction  # here, not at the top: it imports decimal, which most commands need not

    class Pickler(pickle.Pickler):
        def reducer_override(self, obj: Any) -> Any:
            return _reduce(obj, Fraction)

    out = io.BytesIO()
    Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return out.getvalue()


def unpickled(entry: Path) -> object:
    """What *entry* holds, or None if it cannot be read. Only for a file of ``cache_folder``'s (the user's alone):
    unpickling runs code."""
    import pickle

    try:
        with open(entry, "rb") as handle:
            return pickle.load(handle)
    except Exception:  # noqa: BLE001 - a damaged or foreign entry, whatever it raises, is a miss
        return None


def _reduce(obj: Any, fraction: type) -> Any:
    """How *obj* is pickled: a dataclass as its class and its fields, remade through its ``__init__`` (a slotted
    one's own reduction is restored through dataclasses' Python-level ``__setstate__``, which looks its fields up for
    each of thousands of instances: twice as slow); a Fraction as its two integers (its own goes through a string); a
    read-only mapping as the dict it copies, made read-only again. (*fraction*: the Fraction type.)"""
    kind: Callable[..., Any] = type(obj)
    if kind is fraction:
        return fraction, (obj.numerator, obj.denominator)
    if kind is MappingProxyType:
        return _proxy, (dict(obj),)
    if (names := _init_fields(kind)) is not None:
        positional, by_name = names
        if not by_name:
            return kind, tuple(getattr(obj, name) for name in positional)
        return partial(kind, **{name: getattr(obj, name) for name in by_name}), tuple(getattr(obj, name)
                                                                                    for name in positional)
    return NotImplemented


def _proxy(mapping: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(mapping)


def _init_fields(kind: Callable[..., Any]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The fields of the dataclass *kind* its ``__init__`` takes by position and by keyword; None if it is not one, or
    if its ``__init__`` does not take every field."""
    if not is_dataclass(kind):
        return None
    every = fields(kind)
    if not all(f.init for f in every):
        return None
    return tuple(f.name for f in every if not f.kw_only), tuple(f.name for f in every if f.kw_only)
