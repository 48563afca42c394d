"""``yuesheng cache info|clear``: what yuesheng keeps between runs (``caches``), and removing it."""

from __future__ import annotations

import argparse
from typing import Any

from yuesheng import caches
from yuesheng.cli.parsing import dump_json, format_option


def cmd_cache(args: argparse.Namespace) -> str:
    return _clear() if args.action == "clear" else _info(args.format)


def _info(form: str) -> str:
    """Where the cache folders are, and each one's entries and bytes; whether caching is on."""
    where = caches.root()
    folders = [_folder(name) for name in caches.kept_folders()]
    safe = caches.root_safe()
    if form == "json":
        return dump_json({"root": str(where) if where else None, "enabled": caches.enabled(), "root_safe": safe,
                          "folders": folders})
    lines = [f"cache folder: {where if where else '(none: no home folder)'}"]
    if safe is False:
        lines.append("  not used: not a private folder of this user's (another's, or writable by others): "
                     "yuesheng runs without a cache until it is")
    if not caches.enabled():
        lines.append("caching is off (--no-cache or YUESHENG_NO_CACHE): nothing is read or written")
    for f in folders:
        lines.append(f"  {f['name']:<12} {f['entries']:>5} entries {f['bytes']:>12,} bytes" if f["safe"] else
                     f"  {f['name']:<12} not used: not a private folder of this user's")
    if not folders and safe is not False:
        lines.append("  (empty)")
    return "\n".join(lines) + "\n"


def _folder(name: str) -> dict[str, Any]:
    opened = caches.existing(name)
    if opened is None:
        return {"name": name, "safe": False, "entries": 0, "bytes": 0}
    try:
        entries = opened.entries()
    finally:
        opened.close()
    return {"name": name, "safe": True, "entries": len(entries), "bytes": sum(size for _, size, _ in entries)}


def _clear() -> str:
    """Remove every cache folder of yuesheng's (never following a symlink); say what was removed."""
    removed = {name: caches.remove(name) for name in caches.kept_folders()}
    cleared = {name: size for name, size in removed.items() if size is not None}
    lines = [f"removed {name} ({size:,} bytes)" for name, size in cleared.items()]
    lines += [f"left {name}: not a private folder of this user's" for name, size in removed.items() if size is None]
    return "\n".join(lines or ["nothing to remove"]) + "\n"


def _add_cache(p: argparse.ArgumentParser) -> None:
    p.description = ("What yuesheng keeps between runs in $XDG_CACHE_HOME/yuesheng (~/.cache/yuesheng): parsed "
                     "YAML, the texts' pages, the staged grounds and routes, plates, the director's pages and font "
                     "subsets.")
    p.add_argument("action", choices=("info", "clear"), help="info: each folder, its entries and bytes; clear: remove "
                   "them all")
    format_option(p)
    p.set_defaults(func=cmd_cache)


ARGUMENTS = {"cache": _add_cache}
