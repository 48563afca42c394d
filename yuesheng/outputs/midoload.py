"""mido, imported without reading its version through ``importlib.metadata`` (for ``midi``, which owns mido).

Every ``import mido`` runs ``mido/version.py``, which imports ``importlib.metadata`` (and with it ``email``,
``zipfile``, ``csv`` and more: about 25 ms, a tenth of a ``render``) to read one line, the ``Version:`` of mido's own
installed metadata, and makes ``version_info`` of it with ``packaging``. After ``install_version_finder``, the next
import of ``mido.version`` makes that module with the same two names from the same line of the same file, found as
``importlib.metadata`` finds it: ``mido-*.dist-info/METADATA`` in the folder that holds ``mido/``. Where there is no
one such file (mido not installed from a wheel), mido's own module runs.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # importlib.abc imports importlib.resources: a loader needs only the two methods
    from importlib.abc import Loader

NAME = "mido.version"


def installed_version(folder: Path) -> str | None:
    """The ``Version:`` of the one ``mido-*.dist-info/METADATA`` in *folder*, or None (none, several, unreadable)."""
    found = list(folder.glob("mido-*.dist-info/METADATA"))
    if len(found) != 1:
        return None
    try:
        with found[0].open(encoding="utf-8") as metadata:
            for line in metadata:
                if not line.strip():  # the end of the headers
                    return None
                if line.startswith("Version:"):
                    return line.partition(":")[2].strip()
    except (OSError, UnicodeDecodeError):
        return None
    return None


class _Version:
    """The loader of ``mido.version``: its ``__version__`` and ``version_info``, as mido's own module sets them."""

    def __init__(self, version: str) -> None:
        self.version = version

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the default module

    def exec_module(self, module: ModuleType) -> None:
        import packaging.version

        vars(module).update(__version__=self.version, version_info=packaging.version.Version(self.version))


class _Finder:
    """Finds ``mido.version`` once, in mido's folder (*path*, mido's ``__path__``), then leaves ``sys.meta_path``."""

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
                  ) -> ModuleSpec | None:
        if name != NAME:
            return None
        # a new list, not the one the import system is going through: removing from that one would skip the next finder
        sys.meta_path = [finder for finder in sys.meta_path if finder is not self]
        version = installed_version(Path(path[0]).parent) if path else None
        return None if version is None else ModuleSpec(NAME, cast("Loader", _Version(version)))


def install_version_finder() -> None:
    """Have mido's version read from its metadata file directly when mido is next imported (if it is not yet)."""
    if NAME not in sys.modules and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
