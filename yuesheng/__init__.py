"""樂聲 yuesheng: the music of the 儀禮 rites — 律呂, scores from 瑟譜, cue sheets, sequencer.

The public API, each name imported on first use (PEP 562), so that ``import yuesheng`` (and
``python -m yuesheng``, whose commands import what they need) costs nearly nothing;
heavy libraries (music21) are imported only by the functions that need them::

    import yuesheng
    sheet = yuesheng.load("dashe")                                   # a shipped rite, or a cue-sheet file
    timeline = yuesheng.build(sheet, yuesheng.Options(seed=7))       # every event in exact time
    print(len(timeline.events), yuesheng.clock(timeline.duration_ticks))
    yuesheng.write_midi(timeline, "dashe.mid")                       # written whole or not at all

``produce`` gives the build with its staging (``Production.staged``: who stands where at every cue).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from yuesheng.cuesheet.model import CueSheet
    from yuesheng.errors import InvalidInputError, Problem, UnknownNameError, YueshengError
    from yuesheng.music.lulu import LU, Degree, Mode, Pitch, Realization, Register, Tuning, lu, parse_mode, resolve
    from yuesheng.music.repertoire import Repertoire, load_repertoire
    from yuesheng.music.score import Piece, Provenance, load_piece
    from yuesheng.outputs.midi import midi_bytes, write_midi
    from yuesheng.production import Production, build, load, produce
    from yuesheng.timeline.model import Event, EventKind, Timeline, clock, seconds
    from yuesheng.timeline.state import Options

_MODULES = {
    "yuesheng.errors": ("InvalidInputError", "Problem", "UnknownNameError", "YueshengError"),
    "yuesheng.music.lulu": ("LU", "Degree", "Mode", "Pitch", "Realization", "Register", "Tuning", "lu", "parse_mode",
                            "resolve"),
    "yuesheng.music.repertoire": ("Repertoire", "load_repertoire"),
    "yuesheng.music.score": ("Piece", "Provenance", "load_piece"),
    "yuesheng.cuesheet.model": ("CueSheet",),
    "yuesheng.production": ("Production", "build", "load", "produce"),
    "yuesheng.timeline.model": ("Event", "EventKind", "Timeline", "clock", "seconds"),
    "yuesheng.timeline.state": ("Options",),
    "yuesheng.outputs.midi": ("midi_bytes", "write_midi"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "LU", "CueSheet", "Degree", "Event", "EventKind", "InvalidInputError", "Mode", "Options", "Piece", "Pitch",
    "Problem", "Production", "Provenance", "Realization", "Register", "Repertoire", "Timeline", "Tuning",
    "UnknownNameError", "YueshengError", "build", "clock", "load", "load_piece", "load_repertoire", "lu",
    "midi_bytes", "parse_mode", "produce", "resolve", "seconds", "write_midi",
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
