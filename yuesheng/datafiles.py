"""The shipped data tables (``yuesheng/data/NAME.json``), each read once, on first use.

``music.json``: the parts each kind of music sounds by default, the 金奏 onset, the 合 pairs, the notices;
``rites.json``: what the ritual rules know of each rite; ``cuesheet.schema.json``: the cue-sheet format.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "data"


@cache
def data_table(name: str) -> Any:
    """The parsed ``data/NAME.json`` (shared: callers must not change it)."""
    return json.loads((DATA_DIR / f"{name}.json").read_text(encoding="utf-8"))
