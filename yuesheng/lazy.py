"""A package namespace whose public names are each imported from their module on first use (PEP 562).

A command imports ``from yuesheng.timeline import Timeline``; with the package's ``__init__`` importing every module,
that name alone would import the whole builder. A package lists its names by module (``exports``) under ``if not
TYPE_CHECKING`` and imports them for the type checker under ``if TYPE_CHECKING``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def exports(package: str, modules: Mapping[str, tuple[str, ...]]) -> tuple[Callable[[str], Any],
                                                                           Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of *package*, whose names are those of *modules* (module → names)."""
    home = {name: module for module, names in modules.items() for name in names}
    namespace = vars(sys.modules[package])

    def __getattr__(name: str) -> Any:
        if name not in home:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(home[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *home})

    return __getattr__, __dir__
