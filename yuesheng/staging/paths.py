"""Where a cue sheet's staging files are: ``../blocking/RITE.yaml`` and ``../blocking/RITE.hall.yaml`` beside the
sheet's folder (the shipped sheets': ``blocking/``). Nothing else is imported, so asking costs nothing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from yuesheng.cuesheet import CueSheet


def blocking_beside(sheet: CueSheet) -> Path | None:
    """The blocking file of *sheet*'s rite, ``../blocking/RITE.yaml`` beside its folder, or None."""
    return _beside(sheet, f"{sheet.rite_id}.yaml")


def hall_beside(sheet: CueSheet) -> Path | None:
    """The hall file of *sheet*'s rite, ``../blocking/RITE.hall.yaml`` beside its folder, or None."""
    return _beside(sheet, f"{sheet.rite_id}.hall.yaml")


def _beside(sheet: CueSheet, name: str) -> Path | None:
    path = Path(sheet.file).resolve().parent.parent / "blocking" / name
    return path if path.is_file() else None
