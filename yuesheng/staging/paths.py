"""Where a cue sheet's staging files are: ``../blocking/RITE.yaml`` and ``../blocking/RITE.hall.yaml`` beside the
sheet's folder (the shipped sheets': ``blocking/``). Nothing else is imported, so asking costs nothing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from yuesheng.cuesheet import CueSheet

HALL_FORMAT = "yuesheng-hall/1"
BLOCKING_FORMAT = "yuesheng-blocking/1"


def blocking_beside(sheet: CueSheet) -> Path | None:
    """The blocking file of *sheet*'s rite, ``../blocking/RITE.yaml`` beside its folder, or None."""
    return _beside(sheet, f"{sheet.rite_id}.yaml")


def hall_beside(sheet: CueSheet) -> Path | None:
    """The hall file of *sheet*'s rite, ``../blocking/RITE.hall.yaml`` beside its folder, or None."""
    return _beside(sheet, f"{sheet.rite_id}.hall.yaml")


def _beside(sheet: CueSheet, name: str) -> Path | None:
    path = Path(sheet.file).resolve().parent.parent / "blocking" / name
    return path if path.is_file() else None


def not_found(sheet: CueSheet) -> str:
    """Why *sheet* stages nothing although its rite ships a blocking: none beside it, and where it was looked for
    (a copy of a shipped sheet without its ``blocking/`` silently lost its staging); '' if one is there or the rite
    has none shipped."""
    from yuesheng.music.repertoire import data_dir

    if blocking_beside(sheet) is not None:
        return ""
    try:
        shipped = data_dir("blocking") / f"{sheet.rite_id}.yaml"
    except FileNotFoundError:
        return ""
    if not shipped.is_file():
        return ""
    looked = Path(sheet.file).resolve().parent.parent / "blocking" / f"{sheet.rite_id}.yaml"
    return (f"no blocking for {sheet.rite_id} beside {sheet.file}: looked for {looked}; the cue sheet's places and "
            f"estimated durations are used (the shipped blocking is {shipped}: copy its folder, blocking/, beside "
            "the sheet's folder to stage the rite)")


def hall_named(blocking: Path, name: object) -> Path | str:
    """The hall file a blocking's ``hall: NAME`` names, or why it names none: a plain name of a ``.yaml`` file in the
    blocking's own folder, never a folder, a path or a link that leads out of it (a cue sheet someone sends must not
    make yuesheng read another file)."""
    plain = isinstance(name, str) and name == Path(name).name and name.endswith(".yaml") and \
        not name.startswith(".") and "\\" not in name and name.isprintable()
    if not plain:
        return ("expected the name of a hall file beside the blocking, e.g. xiangshe.hall.yaml (a plain name ending "
                ".yaml: no folder, no path)")
    folder = blocking.resolve().parent
    path = folder / str(name)
    if path.resolve().parent != folder:
        return f"{name} is a link that leads out of the blocking's folder {folder}: the hall file must lie beside it"
    return path
