"""樂聲 yuesheng: the music of the 儀禮 rites — 律呂, scores from 瑟譜, cue sheets, sequencer.

The public API; heavy libraries (music21) are imported only by the functions that need them.
"""

from yuesheng.errors import InvalidInputError, Problem, UnknownNameError, YueshengError
from yuesheng.music.lulu import LU, Degree, Mode, Pitch, Realization, Register, Tuning, lu, parse_mode, resolve
from yuesheng.music.repertoire import Repertoire, load_repertoire
from yuesheng.music.score import Piece, Provenance, load_piece

__all__ = [
    "LU", "Degree", "InvalidInputError", "Mode", "Piece", "Pitch", "Problem", "Provenance", "Realization",
    "Register", "Repertoire", "Tuning", "UnknownNameError", "YueshengError", "load_piece", "load_repertoire",
    "lu", "parse_mode", "resolve",
]
__version__ = "0.1.0"
