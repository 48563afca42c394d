"""The bounds on what one cue sheet and one set of options may ask of yuesheng, in one place.

A small input can ask for unbounded work (``zhong: 1000000``, a syllable of a
microsecond held under a six-hour action); these limits make such a request an
error that names the limit — in ``validate`` (rule ``limits``, with
``file:line:col``) and in the timeline build, before anything is allocated.
Each limit is far beyond anything the texts ask for (docs/limits.md):

- 終 of one piece in one cue ≤ 100: the texts ask for three, five, seven or nine;
- 節 of a round with music ≤ 12: 周禮 射人 gives the 天子 nine, 諸侯 seven, 大夫 five;
- a rite ≤ 48 hours, and so is any one duration: the longest shipped rite, 大射儀,
  runs about 13 hours; 48 h also keeps every MIDI delta under the Standard MIDI
  File's limit (0x0FFFFFFF ticks, about 77 hours at 960 ticks a second);
- a syllable ≥ 0.05 s: twenty syllables a second is beyond any singer or 瑟 player;
- events in a timeline ≤ 3,000,000: over 300 times the largest shipped rite
  (about 9,000); a timeline that size and its MIDI file need about 1.2 GB
  (benchmarks/render.py: 2 million events, 0.8 GB at the peak);
- notes in one engraving ≤ 20,000: twenty times a shipped songbook (about 1,000);
  LilyPond took 38 s and 2.5 GB for 30,000;
- corners of a hall's walls ≤ 100: the shipped halls have at most 25; a route is searched on a graph of every
  corner that sees every other, so the work grows with the cube of the corners (600 took minutes); and the points a
  route may turn at, 4 a wall corner, 2 a stair, 4 a set piece, ≤ 600 (the shipped halls: at most 184);
- places of a hall ≤ 2,000 (the shipped: at most 132), a chain of places each given from the next ≤ 32, places one
  walk passes (``via``) ≤ 16; every point of a hall within 1,000 步 of the 堂's south edge (the 大射's 侯 stand 98
  步 south), the 堂 2–60 步 wide and 2–40 步 deep (the shipped: 12–14 by 8–10);
- LilyPond's address space ≤ 4 GiB (``resource.RLIMIT_AS`` on the child): 鹿鳴
  engraves in 0.5 GiB; beyond, LilyPond stops with an error that says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


@dataclass(frozen=True, slots=True)
class Limit:
    """A bound: how a message names it, its value, and whether it bounds from above or below."""

    name: str
    value: int | Fraction
    seconds: bool = False  # a duration
    at_least: bool = False

    def __str__(self) -> str:
        bound = "at least" if self.at_least else "at most"
        return f"the limit of {self.name} ({bound} {self.show(self.value)})"

    def show(self, value: int | Fraction) -> str:
        """*value* as a message writes it: 3,000,000; 0.05s; 48h (huge values only by their size)."""
        if not self.seconds:
            return f"{value:,}" if value <= _HUGE else f"over {_HUGE:,}"
        if value >= 3600:
            return f"{float(value / 3600):.4g}h" if value <= _HUGE else f"over {_HUGE:,}h"
        return f"{float(value):.4g}s"

    def check(self, what: str, value: int | Fraction, detail: str = "") -> str | None:
        """A message if *value* (described by *what*, then *detail*) breaks the limit, else None."""
        broken = value < self.value if self.at_least else value > self.value
        return f"{what} {self.show(value)}{detail}, beyond {self}" if broken else None


_HUGE = 10**18  # beyond this a value is shown only as huge (a float cannot hold every Fraction)

ZHONG = Limit("終 of one piece in one cue", 100)
JIE = Limit("節 of a round with music", 12)
RITE_SECONDS = Limit("the length of a rite (and of any one duration in it)", Fraction(48 * 3600), seconds=True)
SYLLABLE = Limit("the shortest syllable", Fraction(1, 20), seconds=True, at_least=True)
EVENTS = Limit("events in a timeline", 3_000_000)
ENGRAVED_NOTES = Limit("notes in one engraving", 20_000)
WALL_CORNERS = Limit("corners of a hall's walls", 100)
ROUTE_NODES = Limit("points a route may turn at in a hall (4 a wall corner, 2 a stair, 4 a set piece)", 600)
PLACES = Limit("places of a hall", 2_000)
PLACE_CHAIN = Limit("places in a chain given each relative to the next (of:)", 32)
VIA = Limit("places one walk passes (via)", 16)
REACH = 1_000  # 步: no place, wall, stair, offset or file of a hall reaches further from the 堂's south edge
LONG_ACTION = Fraction(30 * 60)  # seconds: an action on the ground longer is warned of (the shipped: under 5 min)
LONG_GROUND = Fraction(12 * 3600)  # seconds: a blocking's actions together, warned of (大射's: about 4 h)
TANG_WIDTH = (2, 60)  # 步, east–west: the shipped halls' 堂 are 12 and 14; a 天子's is within this
TANG_DEPTH = (2, 40)  # 步, north–south: the shipped 8 and 10
LILYPOND_MEMORY = 4 * 2**30  # bytes of address space for one LilyPond run
