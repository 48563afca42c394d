"""Instruments and parts: 瑟 笙 鐘 鑮 磬 鼓 鼙 管 歌 … → General MIDI program, channel, register.

Every cue-sheet instrument name maps to a *part*: the track a renderer writes.
The General MIDI choices are approximations — GM has no 瑟 or 笙 — chosen for
the nearest sound: a plucked zither (Koto) for the 瑟, a free-reed organ for
the 笙 and 和, tubular bells for the 鐘 and 鑮, marimba for the stone 磬, pan
flute for the pipes. A cue sheet can override a program with
``instruments: {ID: {program: N}}``. Drums are on channel 10 (index 9).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from yuesheng.text import normalize

PHRASE = 4  # notes: the four-syllable line of the 詩


class Pattern(Enum):
    """Which notes of a piece a part sounds, and whether half a step late; ``sounds`` and ``count`` side by side.

    The 金奏 pattern is a modern realization (the timeline's notice says so): the drums answer each stroke
    of the bells half a step later, and the 磬, closing each phrase, sound with them.
    """

    EVERY_NOTE = "every note"
    PHRASE_FIRST = "each phrase's first note"  # 鑮
    PHRASE_LAST = "each phrase's last note, and the piece's last note"  # 磬; half a step late in 金奏
    DRUM = "each phrase's first note; in 金奏 every note, half a step late"  # 鼓 鼙 鼗

    def sounds(self, n: int, length: int, *, jinzou: bool) -> bool:
        """Whether note *n* (0-based) of a piece of *length* notes sounds on this pattern."""
        if self is Pattern.EVERY_NOTE or (self is Pattern.DRUM and jinzou):
            return True
        if self is Pattern.PHRASE_LAST:
            return n % PHRASE == PHRASE - 1 or n == length - 1
        return n % PHRASE == 0

    def late(self, *, jinzou: bool) -> bool:
        """Whether the notes sound half a step after their place (金奏: the drums and 磬 answer the bells)."""
        return jinzou and self in (Pattern.DRUM, Pattern.PHRASE_LAST)

    def count(self, played: int, length: int, *, jinzou: bool) -> int:
        """How many of the first *played* notes (≤ *length*) of a piece of *length* notes ``sounds`` allows."""
        if self is Pattern.EVERY_NOTE or (self is Pattern.DRUM and jinzou):
            return played
        if self is Pattern.PHRASE_LAST:
            return played // PHRASE + (played == length and played % PHRASE != 0)
        return -(-played // PHRASE)


@dataclass(frozen=True, slots=True)
class Part:
    """A track of the rendering: its name, GM program (0-based), channel, register shift and playing pattern."""

    name: str
    program: int
    channel: int
    octave: int = 0  # octaves added to the melody's pitch
    velocity: int = 80
    drum_key: int | None = None  # percussion: the GM drum key (channel 9)
    pattern: Pattern = Pattern.EVERY_NOTE

    @property
    def is_drum(self) -> bool:
        return self.drum_key is not None


DRUM_CHANNEL = 9
PARTS: dict[str, Part] = {p.name: p for p in (
    Part("歌", 53, 0, velocity=90),  # Voice Oohs
    Part("瑟", 107, 1, velocity=75),  # Koto
    Part("笙", 20, 2, velocity=70),  # Reed Organ
    Part("和", 20, 3, octave=-1, velocity=60),  # the smaller mouth organ, an octave below
    Part("鐘", 14, 4, velocity=85),  # Tubular Bells
    Part("鑮", 14, 5, octave=-1, velocity=90, pattern=Pattern.PHRASE_FIRST),  # the large single bells, an octave below
    Part("磬", 12, 6, octave=-1, velocity=75, pattern=Pattern.PHRASE_LAST),  # Marimba for the stone chimes
    Part("管", 75, 7, velocity=75),  # Pan Flute for 簜 / 管
    Part("獲者", 52, 8, velocity=100),  # Choir Aahs: the hit-caller
    Part("負侯者", 52, 10, velocity=100),  # the target-bearers
    Part("許諾", 121, 11, velocity=90),  # Breath Noise: the 獲者's unbroken 許諾 on no 律 (鄭注 5-25a 不以宮商)
    Part("鼓", 0, DRUM_CHANNEL, velocity=110, drum_key=35, pattern=Pattern.DRUM),  # 建鼓: Acoustic Bass Drum
    Part("鼙", 0, DRUM_CHANNEL, velocity=90, drum_key=45, pattern=Pattern.DRUM),  # 應鼙 朔鼙: Low Tom
    Part("鼗", 0, DRUM_CHANNEL, velocity=70, drum_key=54, pattern=Pattern.DRUM),  # the rattle drum: Tambourine
)}

# Instrument names as the texts write them → part.
_NAMES: dict[str, str] = {
    "瑟": "瑟", "笙": "笙", "和": "和", "鐘": "鐘", "鍾": "鐘", "笙鐘": "鐘", "笙鍾": "鐘", "頌鐘": "鐘", "頌鍾": "鐘",
    "鑮": "鑮", "鎛": "鑮", "磬": "磬", "笙磬": "磬", "頌磬": "磬", "鼓": "鼓", "建鼓": "鼓", "應鼙": "鼙",
    "朔鼙": "鼙", "鼙": "鼙", "鼗": "鼗", "簜": "管", "管": "管", "簫": "管", "篴": "管",
}


def part_for(instrument_name: str) -> Part | None:
    """The part an instrument (瑟, 笙鐘, 頌磬, 建鼓…) plays, or None if it makes no sound of its own."""
    name = normalize(instrument_name)
    if name in _NAMES:
        return PARTS[_NAMES[name]]
    for key in sorted(_NAMES, key=len, reverse=True):  # e.g. 建鼓東 → 鼓
        if key in name:
            return PARTS[_NAMES[key]]
    return None


def find_part(name: str) -> Part | None:
    """A part by its own name (歌, 瑟, 鍾…) or by an instrument that plays it (笙鐘, 頌磬, 建鼓…), else None."""
    return PARTS.get(normalize(name)) or part_for(name)
