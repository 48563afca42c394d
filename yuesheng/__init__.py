"""樂聲 yuesheng: the music of the 儀禮 rites — 律呂, scores from 瑟譜, cue sheets, sequencer.

The public API, each name imported on first use (PEP 562), so that ``import yuesheng`` (and
``python -m yuesheng``, whose commands import what they need) costs nearly nothing;
heavy libraries (music21) are imported only by the functions that need them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yuesheng.errors import InvalidInputError, Problem, UnknownNameError, YueshengError
    from yuesheng.music.lulu import LU, Degree, Mode, Pitch, Realization, Register, Tuning, lu, parse_mode, resolve
    from yuesheng.music.repertoire import Repertoire, load_repertoire
    from yuesheng.music.score import Piece, Provenance, load_piece

_MODULES = {
    "yuesheng.errors": ("InvalidInputError", "Problem", "UnknownNameError", "YueshengError"),
    "yuesheng.music.lulu": ("LU", "Degree", "Mode", "Pitch", "Realization", "Register", "Tuning", "lu", "parse_mode",
                            "resolve"),
    "yuesheng.music.repertoire": ("Repertoire", "load_repertoire"),
    "yuesheng.music.score": ("Piece", "Provenance", "load_piece"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "LU", "Degree", "InvalidInputError", "Mode", "Piece", "Pitch", "Problem", "Provenance", "Realization",
    "Register", "Repertoire", "Tuning", "UnknownNameError", "YueshengError", "load_piece", "load_repertoire",
    "lu", "parse_mode", "resolve",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    if name not in _HOME:
        raise AttributeError(f"module 'yuesheng' has no attribute {name!r}")
    value = getattr(import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
