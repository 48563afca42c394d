"""The per-user cache folders: ``$XDG_CACHE_HOME/yuesheng/NAME`` (``~/.cache/yuesheng/NAME`` by default).

What is kept there is only ever a copy of what yuesheng can make again (compiled templates, a page's font); every
reader treats a missing, unreadable or foreign entry as a miss, so deleting a folder is always safe.
"""

from __future__ import annotations

import os
import stat
from contextlib import suppress
from pathlib import Path


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
